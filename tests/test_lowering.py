"""LOW001: CUDA's bf16 API lowered onto HIP 5.x's hip_bfloat16 below ROCm 6.0 (what is exact,
what is marked), the summary of a run, and the NVIDIA headers for the lowered output."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from conftest import hipcc_compile, nvcc_compile
from migrator import apitables, registry, runner
from migrator.engine import fix_source
from migrator.nvidia import nvidia_headers
from migrator.settings import Settings
from migrator.source import Source
from migrator.summary import summarize
from migrator.versions import parse_version


def _lower(text: bytes, rocm: str = "5.2", **changes):
    settings = dataclasses.replace(Settings(rocm=parse_version(rocm)), select=("LOW",),
                                   **changes)
    return fix_source(Source("t.cu", text), [registry.find("LOW001")()], settings,
                      apitables.load())


@pytest.mark.parametrize("value, exact", [
    ("1.0f", True), ("0.1f", True), ("0.5", True), ("-2", True), ("16777216", True),
    ("0x1p-3", True), ("0x10", True), ("1'000", True), ("(3)", True),
    ("0.1", False),        # a double float does not hold: CUDA rounds it to bf16 once
    ("16777217", False),   # an int float does not hold
    ("1e39", False),       # beyond float
    ("1.0L", False),       # long double: not checked
    ("x", False), ("1.0f + x", False),
])
def test_conversions_to_the_type_are_fixed_only_where_exact(value: str, exact: bool):
    text = f"__device__ float f(float x) {{ return __nv_bfloat16({value}); }}\n".encode()
    result = _lower(text, write_markers=False)
    assert [(f.code, f.fix_applicability) for f in result.findings] == [
        ("LOW001", "safe" if exact else "unsafe")]
    assert (b"hip_bfloat16(" in result.output) == exact


@pytest.mark.parametrize("argument, exact", [
    ("v", True), ("*p", True), ("p[i]", True), ("(p[i + 1])", True), ("raw[i]", True),
    ("__float2bfloat16(x)", True), ("static_cast<__nv_bfloat16>(x)", True),
    ("x", False), ("s.v", False), ("p", False), ("__float2bfloat16(x) + v", False),
    ("__float22bfloat162_rn(x)", False),
])
def test_bfloat162float_is_fixed_only_for_a_proven_bf16(argument: str, exact: bool):
    text = (b"#include <vector>\nstruct S { float v; };\n"
            b"float f(const __nv_bfloat16* p, __nv_bfloat16 v, float x, S s, int i) {\n"
            b"  std::vector<__nv_bfloat16> raw(i);\n"
            b"  return __bfloat162float(" + argument.encode() + b");\n}\n")
    result = _lower(text, write_markers=False)
    found = [f for f in result.findings if f.symbol == "__bfloat162float"]
    assert [f.fix_applicability for f in found] == ["safe" if exact else "unsafe"]


def test_nothing_is_lowered_from_rocm_6():
    text = b"__global__ void k(__nv_bfloat16* p) { p[0] = __float2bfloat16(1.0f); }\n"
    result = _lower(text, "6.0")
    assert not result.findings and result.output == text


def test_the_summary_lists_marked_lowerings_and_counts_the_applied(tmp_path: Path):
    source = tmp_path / "bf.cu"
    source.write_bytes(b"#include <cuda_bf16.h>\n"
                       b"__global__ void k(__nv_bfloat16* p, const float* x) {\n"
                       b"  p[0] = __float2bfloat16(1.0f);\n"
                       b"  p[1] = __float2bfloat16(x[1]);\n}\n")
    settings = Settings(rocm=parse_version("5.2"))
    summary = summarize(runner.run(runner.RunOptions(source, tmp_path / "out" / "bf.cu"),
                                   settings))
    attention = {(e["code"], e["symbol"]) for e in summary["attention"]}
    assert attention == {("LOW001", "__float2bfloat16")}
    # the header, the type and the literal's conversion (not the marked one)
    assert summary["converted_references"]["device"] == 3


def test_nvidia_headers_map_the_lowered_names_back():
    headers = nvidia_headers(apitables.load())
    assert "#include <cuda_bf16.h>" in headers["hip/hip_bfloat16.h"]
    assert "typedef __nv_bfloat16 hip_bfloat16;" in headers["hip/rocmigrate_nvidia.h"]


LOWERED = b"""#include <hip/hip_runtime.h>
#include <hip/hip_bfloat16.h>
#include <cstdio>

__global__ void k(hip_bfloat16* out, float* back) {
  out[0] = hip_bfloat16(1.0f) + hip_bfloat16(0.5f);
  back[0] = static_cast<float>(out[0]);
}

int main() {
  hip_bfloat16 host = hip_bfloat16(3.0f);
  std::printf("%g\\n", static_cast<float>(host));
  return sizeof(hip_bfloat16) == 2 ? 0 : 1;
}
"""


@pytest.mark.slow
def test_lowered_code_builds_for_amd_and_through_the_nvidia_headers(tmp_path: Path):
    from migrator.nvidia import write_nvidia_headers

    source = tmp_path / "lowered.cu"
    source.write_bytes(LOWERED)
    compiled = hipcc_compile(source, tmp_path)
    assert compiled.returncode == 0, compiled.stderr[-3000:]
    write_nvidia_headers(apitables.load(), tmp_path / "nvh")
    compiled = nvcc_compile(source, tmp_path, ("-I", str(tmp_path / "nvh")))
    assert compiled.returncode == 0, compiled.stderr[-3000:]
