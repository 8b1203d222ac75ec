"""WMMA -> rocWMMA (WMM001-WMM003, rules/portability/wmma.py): the blocks of
rules/portability/wmma.tsv are exactly those rocWMMA 1.6 builds for each CDNA architecture
(checked with libclang against the HIP 6.4.3 + rocWMMA 1.6 headers beside the checkout: each row's
fragment multiplies, and the K below a row's step does not), and the converted fixtures build
with nvcc through rocmigrate's NVIDIA headers (rocwmma:: is nvcuda::wmma there)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ROOT, nvcc_compile, require, require_path
from migrator import apitables
from migrator.clang import check_hip, find_resource_dir
from migrator.nvidia import write_nvidia_headers
from rules.portability._tables import table

HIP_64 = ROOT.parent / "shared" / "data" / "hip-6.4" / "include"
# wmma.tsv's type names as C++ spells them (f16: __half, rocWMMA's hfloat16_t)
_TYPES = {"f16": "__half", "f32": "float", "f64": "double", "i8": "signed char", "i32": "int"}
# gfx940 and gfx941 take gfx942's paths in rocWMMA (ROCWMMA_ARCH_GFX94X)
_ARCHS = ("gfx908", "gfx90a", "gfx942")


@pytest.fixture(scope="module")
def hip64() -> Path:
    require_path(HIP_64 / "rocwmma" / "rocwmma.hpp", "the rocWMMA 1.6 headers (../shared/data)")
    require(find_resource_dir() is not None, "clang's builtin headers (Debian: hipcc)")
    return HIP_64


def _kernel(name: str, input_kind: str, accumulator: str, block: int, k: int) -> str:
    a, c = _TYPES[input_kind], _TYPES[accumulator]
    return (f"__global__ void {name}(const {a}* a, {c}* c) {{\n"
            f"  rocwmma::fragment<rocwmma::matrix_a, {block}, {block}, {k}, {a}, "
            "rocwmma::row_major> fa;\n"
            f"  rocwmma::fragment<rocwmma::matrix_b, {block}, {block}, {k}, {a}, "
            "rocwmma::col_major> fb;\n"
            f"  rocwmma::fragment<rocwmma::accumulator, {block}, {block}, {k}, {c}> acc;\n"
            f"  rocwmma::fill_fragment(acc, static_cast<{c}>(0));\n"
            f"  rocwmma::load_matrix_sync(fa, a, {k});\n"
            f"  rocwmma::load_matrix_sync(fb, a, {k});\n"
            "  rocwmma::mma_sync(acc, fa, fb, acc);\n"
            f"  rocwmma::store_matrix_sync(c, acc, {block}, rocwmma::mem_row_major);\n}}\n")


def _errors(path: Path, text: str, include: Path, arch: str) -> list[str]:
    path.write_text("#include <hip/hip_runtime.h>\n#include <rocwmma/rocwmma.hpp>\n" + text)
    return [str(m) for m in check_hip(path, include, sides=("device",), arch=arch)
            if m.is_error]


@pytest.mark.slow
@pytest.mark.parametrize("arch", _ARCHS)
def test_the_table_holds_the_blocks_rocwmma_builds(hip64: Path, tmp_path: Path, arch: str):
    rows = [row for row in table("wmma.tsv") if arch in row["archs"].split(",")]
    kernels = "".join(_kernel(f"k{n}", row["input"], row["accumulator"], int(row["block"]),
                              int(row["k"])) for n, row in enumerate(rows))
    assert _errors(tmp_path / "has.hip", kernels, hip64, arch) == []
    # below the smallest K the table gives the block on this architecture, none builds
    smallest: dict[tuple[str, str, int], int] = {}
    for row in rows:
        key = (row["input"], row["accumulator"], int(row["block"]))
        smallest[key] = min(smallest.get(key, 1 << 10), int(row["k"]))
    for (input_kind, accumulator, block), k in sorted(smallest.items()):
        if k > 1:
            kernel = _kernel("below", input_kind, accumulator, block, k // 2)
            assert _errors(tmp_path / "below.hip", kernel, hip64, arch), (input_kind, block, k)


@pytest.mark.slow
def test_a_block_cdna_lacks_does_not_build(hip64: Path, tmp_path: Path):
    """What WMM002 marks: CUDA's 32x8x16 half; and gfx908's double block, which builds (so
    no parse can tell) but is a stub, in rocWMMA's own words."""
    assert _errors(tmp_path / "tall.hip", _kernel("tall", "f16", "f32", 16, 16).replace(
        "16, 16, 16", "32, 8, 16"), hip64, "gfx90a")
    mfma = (hip64 / "rocwmma" / "internal" / "mfma_impl.hpp").read_text()
    assert 'ROCWMMA_UNSUPPORTED_IMPL("fp64 mfma not supported on gfx908")' in mfma


@pytest.mark.slow
@pytest.mark.parametrize("name", ["gemm", "forms"])
def test_converted_fixtures_build_with_nvcc(name: str, tmp_path: Path):
    include = tmp_path / "nvidia"
    write_nvidia_headers(apitables.load(), include)
    assert (include / "rocwmma" / "rocwmma.hpp").read_text().endswith(
        "namespace rocwmma = nvcuda::wmma;\n")
    fixed = ROOT / "fixtures" / "rules" / "WMM001" / f"{name}.fixed.cu"
    compiled = nvcc_compile(fixed, tmp_path, ("-I", str(include), "-arch=sm_80"))
    assert compiled.returncode == 0, compiled.stderr[-3000:]
