"""rocmigrate's own NVIDIA headers: HIP output builds with plain nvcc (no HIP install)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import ROOT, convert_program, nvcc_compile, require, require_tool
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


# --- names that a C++ library may use (issue 12) ------------------------------------------------

# The three names the shim must keep as macros (CUDA's own `extern "C" int __any(int)`, declared
# by nvcc before any include, cannot be displaced by a C++ function); the header parses CCCL's
# one use of them first.
_MACROS_OUTSIDE_HIP = {"__any", "__all", "__ballot"}


def _macro_names(headers: dict[str, str]) -> set[str]:
    import re

    return {m[1] for text in headers.values()
            for m in re.finditer(r"^\s*#\s*define\s+(\w+)", text, re.M)}


def test_no_macro_on_a_name_a_cuda_library_may_use():
    """Every macro of the tree is spelled as HIP's (a CUDA or C++ library never uses such a
    name), except the three warp votes nvcc makes impossible to map otherwise."""
    headers = nvidia_headers(apitables.load())
    foreign = {name for name in _macro_names(headers) - _MACROS_OUTSIDE_HIP
               if "hip" not in name.lower() and name not in ("ROCMIGRATE_NVIDIA_H",)}
    assert not foreign, sorted(foreign)
    shim = headers["hip/rocmigrate_nvidia.h"]
    assert "__device__ inline T __shfl(T var" in shim  # a function, not a macro
    # no wrapper shadows a C library header (cuda_stdint.h -> stdint.h is the system's own)
    assert all("/" in path for path in headers), sorted(p for p in headers if "/" not in p)


def test_types_map_to_the_cuda_type_every_library_declares():
    """hipDataType is cuSPARSE's and cuFFT's type too: cudaDataType (library_types.h, which
    every CUDA library includes), never cublasDataType_t (cuBLAS's own header)."""
    from migrator.nvidia import _foreign_library

    names = dict(reverse_names(apitables.load()))
    assert names["hipDataType"] == "cudaDataType" and names["HIP_R_32F"] == "CUDA_R_32F"
    assert names["hipsparseIndexType_t"] == "cusparseIndexType_t"
    assert not [(h, c) for h, c in names.items() if _foreign_library(h, c)]
    assert _foreign_library("hipDataType", "cublasDataType_t")
    assert not _foreign_library("hipblasOperation_t", "cublasOperation_t")
    # HIP's runtime header declares the driver API too (hipDeviceptr_t is CUdeviceptr)
    assert names["hipDeviceptr_t"] == "CUdeviceptr"
    assert "#include <cuda.h>" in nvidia_headers(apitables.load())["hip/hip_runtime.h"]


_VOTES = r"""
__global__ void votes(const int *in, unsigned long long *out) {
  int p = in[threadIdx.x] > 0;
  static_assert(sizeof(__ballot(p)) == 8, "HIP's ballot is 64 bits wide");
  out[0] = __ballot(p);
  out[1] = __any(p);
  out[2] = __all(p);
  unsigned long long mask = 0xffffffffffffffffull;  // a 64-bit HIP mask
  static_assert(sizeof(__ballot_sync(mask, p)) == 8, "HIP's ballot is 64 bits wide");
  out[3] = __ballot_sync(mask, p) + __any_sync(mask, p) + __all_sync(mask, p);
  out[4] = __shfl_sync(mask, in[threadIdx.x], 0) + __shfl_up_sync(mask, 2.0, 1u)
           + __shfl_xor(in[threadIdx.x], 1) + __shfl_down(1.5f, 1u) + __shfl(p, 3)
           + __shfl_up(p, 1u);
  __builtin_amdgcn_wave_barrier();
}
"""


@pytest.mark.slow
@pytest.mark.parametrize("hip_first", [True, False], ids=["hip-first", "library-first"])
@pytest.mark.parametrize("library", ["cuda/std/functional", "cub/cub.cuh", "thrust/sort.h",
                                     "cooperative_groups.h"])
def test_warp_votes_build_beside_the_cuda_cxx_libraries(library: str, hip_first: bool,
                                                        include_dir: Path, tmp_path: Path):
    """CCCL's `struct __any { __any(...); }` (reached through CUB, Thrust and cooperative
    groups) and its `__all<...>` survive the header, in either include order."""
    includes = ["<hip/hip_runtime.h>", f"<{library}>"]
    if not hip_first:
        includes.reverse()
    source = tmp_path / "votes.cu"
    source.write_text("".join(f"#include {name}\n" for name in includes) + _VOTES)
    compiled = nvcc_compile(source, tmp_path, ("-I", str(include_dir), "-Werror", "all-warnings"))
    assert compiled.returncode == 0, compiled.stderr[-3000:]


@pytest.mark.slow
def test_warp_votes_are_full_warp_sync_votes(include_dir: Path, tmp_path: Path):
    """The mapped votes and shuffles are CUDA's sync forms over all 32 lanes (the PTX)."""
    import re

    nvcc = require_tool("nvcc", "/usr/local/cuda/bin/nvcc")
    source = tmp_path / "votes.cu"
    source.write_text("#include <hip/hip_runtime.h>\n" + _VOTES)
    ptx = tmp_path / "votes.ptx"
    compiled = subprocess.run([nvcc, "-std=c++17", "-arch=sm_90", "-ptx", str(source), "-o",
                               str(ptx), "-I", str(include_dir)], capture_output=True, text=True,
                              timeout=300)
    assert compiled.returncode == 0, compiled.stderr[-3000:]
    text = ptx.read_text()
    full = set(re.findall(r"mov\.(?:u|b)32\s+(%r\d+),\s*-1;", text))
    votes = re.findall(r"vote\.(\w+)\.(\w+)\.\w+\s+[^;]*,\s*(\S+);", text)
    assert sorted(kind for _, kind, _ in votes) == ["all", "all", "any", "any", "ballot", "ballot"]
    assert all(sync == "sync" and mask in full for sync, _, mask in votes), votes
    shuffles = re.findall(r"shfl\.sync\.(\w+)\.b32\s+[^;]*,\s*(\S+);", text)
    assert len(shuffles) >= 6 and all(mask in full for _, mask in shuffles), shuffles
    assert "bar.warp.sync" in text


_CUSPARSE_ONLY = r"""#include <cuda_runtime.h>
#include <cusparse.h>

int main() {
  cusparseHandle_t handle;
  if (cusparseCreate(&handle) != CUSPARSE_STATUS_SUCCESS) return 1;
  float *values;
  cudaMalloc(&values, 16 * sizeof(float));
  cudaDataType type = CUDA_R_32F;
  cusparseDnVecDescr_t vector;
  cusparseCreateDnVec(&vector, 16, values, type);
  cusparseDestroyDnVec(vector);
  cusparseDestroy(handle);
  cudaFree(values);
  return 0;
}
"""


@pytest.mark.slow
def test_library_types_need_no_cublas(include_dir: Path, tmp_path: Path):
    """hipDataType through <hip/library_types.h> alone (what hipSPARSE and hipFFT code has)."""
    source = tmp_path / "types.cu"
    source.write_text("#include <hip/library_types.h>\n"
                      "hipDataType pick(int wide) { return wide ? HIP_R_64F : HIP_R_32F; }\n")
    compiled = nvcc_compile(source, tmp_path, ("-I", str(include_dir)))
    assert compiled.returncode == 0, compiled.stderr[-3000:]


@pytest.mark.slow
def test_driver_types_through_the_runtime_header(include_dir: Path, tmp_path: Path):
    """HIP's runtime header declares the driver API: hipDeviceptr_t (CUdeviceptr) needs cuda.h,
    which code converted from `#include <cuda.h>` no longer names."""
    source = tmp_path / "driver.cu"
    source.write_text("#include <hip/hip_runtime.h>\n"
                      "hipDeviceptr_t advance(hipDeviceptr_t p, size_t n) { return p + n; }\n")
    compiled = nvcc_compile(source, tmp_path, ("-I", str(include_dir)))
    assert compiled.returncode == 0, compiled.stderr[-3000:]


@pytest.mark.slow
def test_cusparse_only_conversion_builds_with_nvcc(include_dir: Path, tmp_path: Path):
    """Converted cuSPARSE code (hipsparse calls given a hipDataType) never includes cuBLAS."""
    from migrator.nvidia import header_search_path
    from migrator.toolchain.compilers import find_nvcc

    found = [f for f in header_search_path((), find_nvcc()) if (f / "cusparse.h").is_file()]
    require(bool(found), "cusparse.h (the nvidia-cusparse wheel, or CPATH)")
    (tmp_path / "src").mkdir()
    original = tmp_path / "src" / "sparse.cu"
    original.write_text(_CUSPARSE_ONLY)
    out, result = convert_program(original, tmp_path, Settings())
    assert not result.failed
    text = out.read_text()
    assert "hipsparseCreateDnVec" in text and "hipDataType" in text and "hipblas" not in text
    compiled = nvcc_compile(out, tmp_path, ("-I", str(include_dir), "-I", str(found[0])))
    assert compiled.returncode == 0, compiled.stderr[-3000:]
