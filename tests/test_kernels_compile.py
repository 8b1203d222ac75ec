"""Every program in kernels/ compiles as CUDA with nvcc and, converted (--rocm 5.2, Debian's
HIP), for AMD MI250 with hipcc. Real compilers, no mocks."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ROOT, convert_program, hipcc_compile, nvcc_compile
from migrator.settings import Settings
from migrator.versions import parse_version

KERNELS = sorted((ROOT / "kernels").glob("*.cu"))


def test_kernels_exist():
    assert len(KERNELS) >= 4


@pytest.mark.slow
@pytest.mark.parametrize("path", KERNELS, ids=lambda p: p.name)
def test_kernel_compiles_with_nvcc(path: Path, tmp_path: Path):
    compiled = nvcc_compile(path, tmp_path)
    assert compiled.returncode == 0, compiled.stderr[-3000:]


@pytest.mark.slow
@pytest.mark.parametrize("launch", ["chevron", "ggl"])
@pytest.mark.parametrize("path", KERNELS, ids=lambda p: p.name)
def test_converted_kernel_compiles_with_hipcc(path: Path, launch: str, tmp_path: Path):
    settings = Settings(rocm=parse_version("5.2"), launch_syntax=launch)
    out, result = convert_program(path, tmp_path, settings)
    assert [r.status for r in result.results] == ["converted"], result.results[0].message
    text = out.read_text()
    assert "cuda_runtime" not in text
    assert "rocmigrate API00" not in text, "a kernel uses an API with no HIP equivalent"
    compiled = hipcc_compile(out, tmp_path)
    assert compiled.returncode == 0, compiled.stderr[-3000:]
