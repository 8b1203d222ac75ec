"""rocmigrate's own NVIDIA headers: HIP output builds with plain nvcc (no HIP install)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import ROOT, convert_program, nvcc_compile
from migrator import apitables
from migrator.cli import _register, app
from migrator.nvidia import nvidia_headers, reverse_names
from migrator.settings import Settings
from migrator.versions import parse_version

_register()
KERNELS = sorted((ROOT / "kernels").glob("*.cu"))


@pytest.fixture(scope="module")
def include_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("nvidia")
    result = CliRunner().invoke(app, ["nvidia-headers", str(out)])
    assert result.exit_code == 0, result.output
    return out


def test_reverse_names_are_safe_macros():
    names = dict(reverse_names(apitables.load()))
    assert names["hipMalloc"] == "cudaMalloc" and names["hipError_t"] == "cudaError_t"
    assert names["hipcub"] == "cub"
    # a plain C type substituted by the tables must never become a macro
    assert all("hip" in hip.lower() for hip in names)
    headers = nvidia_headers(apitables.load())
    assert "#include <cuda_runtime.h>" in headers["hip/hip_runtime.h"]
    assert "#include <curand_kernel.h>" in headers["hiprand/hiprand_kernel.h"]


@pytest.mark.slow
@pytest.mark.parametrize("rocm, launch", [("6.4", "chevron"), ("5.2", "ggl")])
@pytest.mark.parametrize("path", KERNELS, ids=lambda p: p.name)
def test_converted_kernels_build_with_nvcc(path: Path, rocm: str, launch: str, include_dir: Path,
                                           tmp_path: Path):
    settings = Settings(rocm=parse_version(rocm), launch_syntax=launch)
    out, _ = convert_program(path, tmp_path, settings)
    text = out.read_text()
    assert "#include <hip/hip_runtime.h>" in text and "cuda_runtime.h" not in text
    compiled = nvcc_compile(out, tmp_path, ("-I", str(include_dir), "-Werror", "all-warnings"))
    assert compiled.returncode == 0, compiled.stderr[-3000:]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["main.cu", "random.cu", "kernels_only.cu"])
def test_converted_fixture_builds_with_nvcc(name: str, include_dir: Path, tmp_path: Path):
    path = ROOT / "fixtures" / "convert" / "project" / "expected" / name
    compiled = nvcc_compile(path, tmp_path, ("-I", str(include_dir)))
    assert compiled.returncode == 0, compiled.stderr[-3000:]


def test_optional_library_wrappers_follow_the_headers_found(tmp_path: Path):
    """rccl/rccl.h (-> nccl.h) exists in the tree only where nccl.h does, so that a converted
    `#if __has_include(<rccl/rccl.h>)` guard is true exactly when NCCL is there."""
    tables = apitables.load()
    assert "rccl/rccl.h" in nvidia_headers(tables)  # no search given: every wrapper
    assert "rccl/rccl.h" not in nvidia_headers(tables, [tmp_path])
    (tmp_path / "nccl.h").write_text("// stand-in\n")
    assert "#include <nccl.h>" in nvidia_headers(tables, [tmp_path])["rccl/rccl.h"]
    assert "hip/hip_runtime.h" in nvidia_headers(tables, [])  # toolkit wrappers stay
    out = tmp_path / "tree"
    result = CliRunner().invoke(app, ["nvidia-headers", str(out), "-I", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert (out / "rccl" / "rccl.h").is_file()
