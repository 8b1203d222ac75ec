"""HDR003 decides from what a file uses, not from its extension: a ``.cpp`` (``.cc``, ``.c``...)
with kernels, launches or runtime calls and no CUDA include gets ``hip/hip_runtime.h`` as a
``.cu`` does (nvcc -x cu compiled it as CUDA); fragments included in the middle of a file and
files with no CUDA in them get none. A converted program of such files compiles with hipcc."""

from __future__ import annotations

import pytest

from conftest import convert_program, hipcc_compile, rule_context
from migrator.settings import Settings
from migrator.versions import parse_version
from rules.api.headers import IncludeRewrite

KERNEL = b"#include <cstdio>\n__global__ void k(float* p) { p[threadIdx.x] = 1; }\n"
HOST = b"#include <stdlib.h>\nint run(void) { void* p; return cudaMalloc(&p, 4) == cudaSuccess; }\n"
LAUNCH = b'#include "kernels.h"\nvoid run(float* p) { k<<<1, 64>>>(p); }\n'


def _added(data: bytes, name: str) -> bool:
    return any(d.code == "HDR003" for d in IncludeRewrite().check(rule_context(data, name)))


@pytest.mark.parametrize("name", ["a.cu", "a.cpp", "a.cc", "a.cxx", "a.C", "a.h", "a.hpp"])
def test_a_file_with_device_code_gets_the_runtime_whatever_its_extension(name):
    assert _added(KERNEL, name)


@pytest.mark.parametrize("name", ["a.cpp", "a.c"])
def test_runtime_calls_alone_get_it_too(name):
    assert _added(HOST, name)


def test_a_launch_alone_gets_it_too():
    assert _added(LAUNCH, "a.cpp")


@pytest.mark.parametrize("name", ["a.inl", "a.inc", "a.tpp"])
def test_fragments_get_none(name):
    """Included mid-file (inside a namespace, say): their includer gets the runtime."""
    assert not _added(KERNEL, name)


def test_a_file_with_no_cuda_gets_none():
    plain = b"struct dim3 { int x, y, z; };\nint volume(dim3 d) { return d.x * d.y * d.z; }\n"
    assert not _added(plain, "a.cpp")
    assert not _added(b"// cudaMalloc, __global__ and k<<<1, 1>>>(p) in a comment\n", "a.cpp")


def test_a_file_that_includes_the_runtime_gets_no_second_one():
    assert not _added(b"#include <cuda_runtime.h>\n" + KERNEL, "a.cpp")


PROGRAM = {
    # a header of device code with no CUDA include: it gets its own (simple and safe)
    "kernels.h": "#pragma once\n__device__ inline float twice(float x) { return 2 * x; }\n"
                 "__global__ void scale(float* p) { p[threadIdx.x] = twice(p[threadIdx.x]); }\n",
    "main.cpp": '#include <cstdio>\n#include "kernels.h"\n\nint main() {\n  float* p = nullptr;\n'
                "  cudaMalloc(&p, 64 * sizeof(float));\n  scale<<<1, 64>>>(p);\n"
                "  cudaDeviceSynchronize();\n  cudaFree(p);\n  std::printf(\"done\\n\");\n"
                "  return 0;\n}\n",
}


@pytest.mark.slow
def test_a_converted_cpp_program_compiles(tmp_path):
    source = tmp_path / "cuda"
    source.mkdir()
    for name, text in PROGRAM.items():
        (source / name).write_text(text)
    out, result = convert_program(source / "main.cpp", tmp_path / "hip",
                                  Settings(rocm=parse_version("5.2")))
    assert not result.failed
    converted = out.read_text()
    assert converted.startswith("#include <hip/hip_runtime.h>\n#include <cstdio>\n")
    assert "hip/hip_runtime.h" in (tmp_path / "hip" / "kernels.h").read_text()  # it has kernels
    compiled = hipcc_compile(out, tmp_path, ("-I", str(out.parent)))
    assert compiled.returncode == 0, compiled.stderr[-3000:]
