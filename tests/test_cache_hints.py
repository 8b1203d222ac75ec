"""CUDA's cache-hint loads and stores: the generated rocmigrate_cache_hints.h defines exactly the
functions of rules/api/cache_hints.tsv, each reads or writes exactly the object CUDA's does (on
the host, through both of its paths: plain words under g++, nontemporal builtins under clang;
and in kernels on HIP's CPU runtime with 64-lane wavefronts), and a converted file keeps the
names and includes the header (CHN001)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from conftest import require_tool
from hip_cpu import build_for_hip_cpu, run_on_hip_cpu
from migrator import apitables, support
from migrator.convert import convert_bytes
from migrator.settings import Settings
from rules.api.support_functions import table_names

HEADER = "rocmigrate_cache_hints.h"
_DEFINED = re.compile(r"ROCMIGRATE_CACHE_HINTS_FN (?:T|void) (__\w+)\(")


def _write_header(folder: Path) -> None:
    (folder / HEADER).write_bytes(support.render(HEADER, Settings()))


def test_header_defines_every_function_of_the_table_and_nothing_else():
    rendered = support.render(HEADER, Settings()).decode()
    names = table_names(apitables.load().api_dir, "cache_hints.tsv")
    assert sorted(_DEFINED.findall(rendered)) == sorted(n.decode() for n in names)
    assert len(names) == 9


def test_table_names_are_cudas_and_override_hipifys_rows():
    tables = apitables.load()
    for name in ("__ldcs", "__ldlu", "__stcs", "__stwt"):
        entry = tables.names[name]
        assert (entry.hip, entry.status) == (name, "supported")
    cuda = Path("/usr/local/cuda/include/sm_32_intrinsics.h")
    if cuda.exists():  # CUDA declares each of them (for its scalar and vector types)
        text = cuda.read_text(encoding="utf-8", errors="replace")
        for name in table_names(tables.api_dir, "cache_hints.tsv"):
            assert re.search(rf"\b{name.decode()}\s*\(", text), name


def test_a_converted_file_keeps_the_names_and_includes_the_header_once():
    source = (b"__global__ void k(const float* a, float* b) {\n"
              b"  __stcs(b + threadIdx.x, __ldcs(a + threadIdx.x) + __ldlu(a));\n}\n")
    result = convert_bytes("k.cu", source, Settings())
    assert result.output.count(b'#include "rocmigrate_cache_hints.h"') == 1
    assert b"__stcs(b + threadIdx.x, __ldcs(a + threadIdx.x) + __ldlu(a));" in result.output
    assert b"rocmigrate API" not in result.output
    assert [f.code for f in result.findings if f.symbol.startswith("__")] == ["CHN001"] * 3
    assert support.referenced(result.output) == (HEADER,)


@pytest.mark.parametrize("rocm", ["5.2", "6.4"])
def test_converting_the_header_again_changes_nothing(rocm: str):
    """A converted tree converted again converts the header too: it declares the functions
    itself, so no rule includes it in itself or marks it."""
    settings = Settings(rocm=tuple(int(part) for part in rocm.split(".")) + (0,))
    rendered = support.render(HEADER, settings)
    result = convert_bytes(HEADER, rendered, settings)
    assert result.output == rendered and not result.findings


# Every load returns the object stored, every store writes exactly the object given (and converts
# the value to the pointer's type, as CUDA's overloads do), for a scalar, a pointer, structs of
# 16, 8, 3 and 12 bytes, and a type that is not trivially copyable.
_HOST_PROGRAM = r"""
#include <cstdio>
#include <cstring>
#define ROCMIGRATE_CACHE_HINTS_FN static inline
#include "rocmigrate_cache_hints.h"

struct alignas(16) quad { float x, y, z, w; };
struct sample { float value; int count; };
struct rgb { unsigned char r, g, b; };
struct triple { float a, b, c; };
struct counted {  // not trivially copyable: accessed as itself
  int value;
  counted() : value(0) {}
  counted(const counted& other) : value(other.value) {}
  counted& operator=(const counted& other) { value = other.value; return *this; }
};

static int failures = 0;
#define CHECK(what) do { if (!(what)) { std::printf("FAIL %s\n", #what); ++failures; } } while (0)

template <typename T> static bool same(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

template <typename T> static void round_trips(const T& value) {
  T in[2] = {value, value};
  T out[5];
  std::memset(out, 0x5a, sizeof out);
  CHECK(same(__ldca(in), value) && same(__ldcg(in), value) && same(__ldcs(in + 1), value));
  CHECK(same(__ldlu(in), value) && same(__ldcv(in + 1), value));
  __stwb(out, value); __stcg(out + 1, value); __stcs(out + 2, value); __stwt(out + 3, value);
  for (int i = 0; i < 4; ++i) CHECK(same(out[i], value));
  T untouched;
  std::memset(&untouched, 0x5a, sizeof untouched);
  CHECK(same(out[4], untouched));  // nothing written past the object
}

int main() {
  round_trips(3.25f);
  round_trips(-7);
  round_trips(0x123456789abcdefLL);
  round_trips(2.5);
  round_trips((unsigned char)200);
  round_trips(static_cast<const float*>(nullptr) + 3);
  round_trips(quad{1.f, 2.f, 3.f, 4.f});
  round_trips(sample{0.5f, 9});
  round_trips(rgb{1, 2, 250});
  round_trips(triple{1.f, -2.f, 3.f});
  float f = 0;
  __stcs(&f, 1.5);  // a double converted to the pointer's float, as CUDA's overload does
  CHECK(f == 1.5f);
  counted c[2];
  c[0].value = 41;
  __stcs(c + 1, __ldcs(c));
  CHECK(c[1].value == 41);
  std::printf(failures ? "FAILED %d\n" : "PASS\n", failures);
  return failures != 0;
}
"""


@pytest.mark.slow
@pytest.mark.parametrize("compiler", ["g++", "clang++-15"])
def test_every_function_reads_and_writes_exactly_the_object(compiler, tmp_path):
    """g++ has no nontemporal builtins (plain words); clang has them: both paths are run."""
    tool = require_tool(compiler)
    _write_header(tmp_path)
    source = tmp_path / "hints.cpp"
    source.write_text(_HOST_PROGRAM)
    program = tmp_path / "hints"
    built = subprocess.run([tool, "-std=c++11", "-O2", "-Wall", "-Werror", "-I", str(tmp_path),
                            str(source), "-o", str(program)], capture_output=True, text=True,
                           check=False)
    assert built.returncode == 0, built.stderr[-3000:]
    ran = subprocess.run([str(program)], capture_output=True, text=True, check=False)
    assert ran.returncode == 0 and ran.stdout.strip() == "PASS", ran.stdout


# A converted kernel on HIP's CPU runtime (64-lane wavefronts): each of 256 threads streams its
# element of a float4 array, a struct array and a float array through all nine functions.
_KERNEL_PROGRAM = r"""
#include "rocmigrate_cache_hints.h"
#include <hip/hip_runtime.h>
#include <cstdio>

struct sample { float value; int count; };

__global__ void stream(const float4* vin, float4* vout, const sample* sin, sample* sout,
                       const float* in, float* out, int* flag, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float4 v = __ldcs(vin + i);
  v.x += 1.0f;
  __stcs(vout + i, v);
  sample s = __ldlu(sin + i);
  s.count += 1;
  __stcg(sout + i, s);
  float x = __ldca(in + i) + __ldcg(in + i) + __ldcv(in + i);
  __stwb(out + i, x);
  if (i == 0) __stwt(flag, warpSize);
}

int main() {
  const int n = 256;
  float4 *vin, *vout; sample *sin, *sout; float *in, *out; int* flag;
  hipMallocManaged(&vin, n * sizeof(float4)); hipMallocManaged(&vout, n * sizeof(float4));
  hipMallocManaged(&sin, n * sizeof(sample)); hipMallocManaged(&sout, n * sizeof(sample));
  hipMallocManaged(&in, n * sizeof(float)); hipMallocManaged(&out, n * sizeof(float));
  hipMallocManaged(&flag, sizeof(int));
  for (int i = 0; i < n; ++i) {
    vin[i] = make_float4(i, 2 * i, 3 * i, 4 * i);
    sin[i] = sample{0.5f * i, i};
    in[i] = i;
  }
  hipLaunchKernelGGL(stream, dim3(n / 128), dim3(128), 0, 0, vin, vout, sin, sout, in, out, flag, n);
  hipDeviceSynchronize();
  int errors = 0;
  for (int i = 0; i < n; ++i) {
    errors += vout[i].x != i + 1.0f || vout[i].y != 2 * i || vout[i].w != 4 * i;
    errors += sout[i].value != 0.5f * i || sout[i].count != i + 1;
    errors += out[i] != 3.0f * i;
  }
  std::printf("warpSize %d errors %d\n", *flag, errors);
  return errors != 0;
}
"""


@pytest.mark.slow
def test_a_kernel_runs_them_on_hips_cpu_runtime_with_64_lane_wavefronts(tmp_path):
    _write_header(tmp_path)
    source = tmp_path / "stream.cpp"
    source.write_text(_KERNEL_PROGRAM)
    output = run_on_hip_cpu(build_for_hip_cpu(source, tmp_path, (tmp_path,)))
    assert output.strip() == "warpSize 64 errors 0"
