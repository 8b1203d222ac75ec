"""cuBLASLt's descriptor attributes that hipBLASLt takes at creation only
(CUBLASLT_MATMUL_DESC_SCALE_TYPE, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE): a CUDA file converted at
the default target has them folded into hipblasLtMatmulDescCreate, and parses against ROCm 6.4's
hipblaslt.h."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ROOT, require, require_path
from migrator.clang import check_hip, find_resource_dir
from migrator.convert import convert_bytes
from migrator.settings import Settings

HIP_64 = ROOT.parent / "shared" / "data" / "hip-6.4" / "include"

PROGRAM = b"""#include <cublasLt.h>
#include <cstdio>

#define CHECK_CUBLAS(call) do { cublasStatus_t s = (call); \\
  if (s != CUBLAS_STATUS_SUCCESS) printf("error %d\\n", (int)s); } while (0)

void describe(cublasLtMatmulDesc_t* out, cublasOperation_t transa) {
  cublasLtMatmulDesc_t desc;
  cudaDataType_t scaleType = CUDA_R_32F;
  cublasComputeType_t computeType = CUBLAS_COMPUTE_32F;
  CHECK_CUBLAS(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_16F));
  CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_SCALE_TYPE,
                                              &scaleType, sizeof(scaleType)));
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &computeType,
                                 sizeof(computeType));
  CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &transa,
                                              sizeof(transa)));
  *out = desc;
}
"""


def test_the_attributes_fold_into_the_creation_and_the_port_parses(tmp_path: Path):
    converted = convert_bytes("lt.cu", PROGRAM, Settings())
    assert converted.status != "failed", converted.message
    output = converted.output.decode()
    assert "hipblasLtMatmulDescCreate(&desc, computeType, scaleType)" in output
    assert "CUBLASLT" not in output and "rocmigrate" not in output  # nothing left, no marker
    assert output.count("hipblasLtMatmulDescSetAttribute") == 1  # the TRANSA call alone
    require_path(HIP_64 / "hipblaslt" / "hipblaslt.h", "ROCm 6.4's hipBLASLt headers")
    require(find_resource_dir() is not None, "clang's builtin headers (Debian: hipcc)")
    path = tmp_path / "lt.cu"
    path.write_text(output)
    assert [str(m) for m in check_hip(path, HIP_64) if m.is_error] == []


@pytest.mark.parametrize("attribute, parameter", [
    ("CUBLASLT_MATMUL_DESC_SCALE_TYPE", "scaleType"),
    ("CUBLASLT_MATMUL_DESC_COMPUTE_TYPE", "computeType")])
def test_an_attribute_set_elsewhere_is_marked_with_what_to_do(attribute: str, parameter: str):
    source = (b"#include <cublasLt.h>\nvoid f(cublasLtMatmulDesc_t desc, int v) {\n"
              b"  cublasLtMatmulDescSetAttribute(desc, " + attribute.encode()
              + b", &v, sizeof(v));\n}\n")
    output = convert_bytes("lt.cu", source, Settings()).output.decode()
    assert output.count("// rocmigrate") == 1  # ARG002's marker only, none of API003's
    assert f"pass the value as hipblasLtMatmulDescCreate's {parameter}" in output
