"""Library functions HIPIFY's tables call unsupported, renamed because ROCm 6.4 declares a HIP
function with the same parameters (docs/api_signature_evidence.tsv): a CUDA file calling one of
each library's converts with no marker at the default target and parses against the ROCm 6.4
headers; below 6.4 they are marked as newer than the target."""

from __future__ import annotations

from pathlib import Path

from conftest import ROOT, require, require_path
from migrator.clang import check_hip, find_resource_dir
from migrator.convert import convert_bytes
from migrator.settings import Settings
from migrator.versions import parse_version

HIP_64 = ROOT.parent / "shared" / "data" / "hip-6.4" / "include"

PROGRAM = b"""#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <cufftXt.h>
#include <cusolverSp.h>

void run(cublasHandle_t h, cuComplex* A, cuComplex* x, cuComplex* C, double* D, double* y,
         cufftHandle plan, cudaEvent_t e, cudaStream_t s, cusolverSpHandle_t sp,
         cusparseMatDescr_t descr, const double* val, const int* row, const int* col,
         const double* b, double* out) {
  cublasCdgmm_64(h, CUBLAS_SIDE_LEFT, 4, 4, A, 4, x, 1, C, 4);
  cublasDdgmm_64(h, CUBLAS_SIDE_LEFT, 4, 4, D, 4, y, 1, D, 4);
  long long n[1] = {64};
  size_t work = 0;
  cufftXtMakePlanMany(plan, 1, n, nullptr, 1, 1, CUDA_C_32F, nullptr, 1, 1, CUDA_C_32F, 1,
                      &work, CUDA_C_32F);
  cudaEventRecordWithFlags(e, s, 0);
  int singularity = 0;
  cusolverSpDcsrlsvqr(sp, 4, 4, descr, val, row, col, b, 1e-12, 0, out, &singularity);
}
"""
CALLS = ("hipblasCdgmm_v2_64(", "hipblasDdgmm_64(", "hipfftXtMakePlanMany(",
         "hipEventRecordWithFlags(", "hipsolverSpDcsrlsvqr(")


def test_promoted_functions_convert_and_parse_against_rocm_6_4(tmp_path: Path):
    converted = convert_bytes("promoted.cu", PROGRAM, Settings())
    assert converted.status != "failed", converted.message
    output = converted.output.decode()
    assert all(call in output for call in CALLS)
    assert "rocmigrate" not in output
    require_path(HIP_64 / "hipblas" / "hipblas.h", "ROCm 6.4's library headers (../shared/data)")
    require(find_resource_dir() is not None, "clang's builtin headers (Debian: hipcc)")
    path = tmp_path / "promoted.hip"
    path.write_text(output)
    assert [str(m) for m in check_hip(path, HIP_64) if m.is_error] == []


def test_below_6_4_they_are_marked_as_newer_than_the_target():
    output = convert_bytes("promoted.cu", PROGRAM,
                           Settings(rocm=parse_version("6.2"))).output.decode()
    assert "cublasCdgmm_64 has no HIP equivalent in ROCm 6.2 (hipblasCdgmm_v2_64 exists from " \
           "ROCm 6.4)" in output
