"""Issue 26 item 1: a CUDA Makefile whose host side is built by g++ (a .cpp calling the
runtime, objects linked by g++ with -l$(CUDARTLIB)) converts into one that make builds with
g++ and Debian's hipcc (fixtures/build_projects/make_host_compiler; MKF006, MKF012)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import ROOT, require_tool
from migrator.cli import _register, app

PROJECT = ROOT / "fixtures" / "build_projects" / "make_host_compiler"


def _convert(out: Path, *extra: str) -> str:
    _register()
    args = ["convert", str(PROJECT), "-o", str(out), "--rocm", "5.2", "--offload-arch",
            "gfx90a", *extra]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    return (out / "Makefile").read_text()


def test_the_host_compile_gets_the_platform_and_the_link_the_hip_runtime(tmp_path: Path):
    makefile = _convert(tmp_path / "out")
    assert "$(CXX) -D__HIP_PLATFORM_AMD__ -O2" in makefile
    assert "CUDARTLIB ?= amdhip64" in makefile and "cudart" not in makefile
    assert "nvcc" not in makefile


def _make(out: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    hipcc = require_tool("hipcc")
    make = require_tool("make")
    require_tool("g++")
    rocm = str(Path(hipcc).resolve().parent.parent)
    env = dict(os.environ, HIP_PLATFORM="amd", TMPDIR=str(tmp_path))
    return subprocess.run([make, "-C", str(out), f"ROCM_PATH={rocm}"], env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_converted_host_compiler_project_builds_with_make_gxx_and_hipcc(tmp_path: Path):
    out = tmp_path / "out"
    _convert(out)
    built = _make(out, tmp_path)
    assert built.returncode == 0, built.stdout + built.stderr
    assert (out / "app").is_file()


@pytest.mark.slow
def test_without_the_platform_define_the_host_compile_fails(tmp_path: Path):
    out = tmp_path / "out"
    _convert(out, "--ignore", "MKF012")
    built = _make(out, tmp_path)
    assert built.returncode != 0
    assert "__HIP_PLATFORM_AMD__" in built.stdout + built.stderr


@pytest.mark.slow
def test_host_instrumentation_stays_on_the_host_side(tmp_path: Path):
    """-Xcompiler -finstrument-functions: hipcc compiles both sides, and instrumented device
    code calls __cyg_profile_func_enter, which the GPU has not (the device link fails); it is
    passed with -Xarch_host, and gcc's -export-dynamic (an entry point to clang) as -rdynamic
    (fixtures/build_projects/make_instrumented, NVIDIA's nvtx sample)."""
    project = ROOT / "fixtures" / "build_projects" / "make_instrumented"
    _register()
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["convert", str(project), "-o", str(out), "--rocm", "5.2",
                                      "--offload-arch", "gfx90a"])
    assert result.exit_code == 0, result.output
    makefile = (out / "Makefile").read_text()
    assert "-rdynamic -fPIC -Xarch_host -finstrument-functions" in makefile
    built = _make(out, tmp_path)
    assert built.returncode == 0, built.stdout + built.stderr
    assert (out / "app").is_file()
