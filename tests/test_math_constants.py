"""CUDA's math constants below ROCm 5.7: the generated rocmigrate_math_constants.h defines exactly
the constants of CUDA's math_constants.h (and of the API tables), each with CUDA's value and type
bit for bit, compiles with hipcc for the host and the device, and MTH001 keeps the names where
HIP lacks them (API001 renames the others)."""

from __future__ import annotations

import dataclasses
import re
import subprocess
from pathlib import Path

import pytest

from conftest import hipcc_compile, require_path, require_tool
from migrator import apitables, support
from migrator.convert import convert_bytes
from migrator.settings import Settings
from rules.api.math_constants import constants, lacking

HEADER = "rocmigrate_math_constants.h"
CUDA_HEADER = Path("/usr/local/cuda/include/math_constants.h")
_DEFINED = re.compile(r"^#define (CUDART_\w+)\s", re.M)


def _settings(rocm: tuple[int, int, int]) -> Settings:
    return dataclasses.replace(Settings(), rocm=rocm)


def _rendered(rocm=(5, 2, 0)) -> str:
    return support.render(HEADER, _settings(rocm)).decode()


def test_header_defines_the_constants_of_the_tables():
    assert set(_DEFINED.findall(_rendered())) == constants(apitables.load())
    assert len(constants(apitables.load())) == 95


def test_header_defines_the_constants_of_cudas_header():
    text = require_path(CUDA_HEADER, "CUDA 13's headers").read_text(encoding="utf-8")
    assert set(_DEFINED.findall(_rendered())) == set(_DEFINED.findall(text))


def test_what_the_target_lacks():
    """All constants before ROCm 5.3, the double ones before 5.7 (HIPIFY's tables), none from
    5.7."""
    tables = apitables.load()
    every = constants(tables)
    assert lacking(tables, (5, 2, 0)) == every
    at_53 = lacking(tables, (5, 3, 0))
    assert "CUDART_PI" in at_53 and "CUDART_PI_F" not in at_53 and "CUDART_NAN" in at_53
    assert all(not name.endswith("_F") for name in at_53)
    assert lacking(tables, (5, 7, 0)) == lacking(tables, (6, 4, 0)) == frozenset()


def test_conversion_keeps_the_names_and_includes_the_header():
    source = (b"#include <math_constants.h>\n"
              b"__global__ void k(float* f, double* d) { f[0] = CUDART_PI_F; d[0] = CUDART_NAN; }\n")
    at_52 = convert_bytes("k.cu", source, _settings((5, 2, 0)))
    assert b'#include "rocmigrate_math_constants.h"\n' in at_52.output
    assert b"math_constants.h>" not in at_52.output
    assert b"f[0] = CUDART_PI_F; d[0] = CUDART_NAN;" in at_52.output
    assert b"rocmigrate API" not in at_52.output and b"rocmigrate HDR" not in at_52.output
    at_53 = convert_bytes("k.cu", source, _settings((5, 3, 0)))
    assert b"#include <hip/hip_math_constants.h>" in at_53.output
    assert b'#include "rocmigrate_math_constants.h"' in at_53.output
    assert b"f[0] = HIP_PI_F; d[0] = CUDART_NAN;" in at_53.output
    at_64 = convert_bytes("k.cu", source, Settings())
    assert b"f[0] = HIP_PI_F; d[0] = HIP_NAN;" in at_64.output
    assert b"rocmigrate_math_constants" not in at_64.output


def _printer(include: str, names: list[str], prelude: str = "") -> str:
    """A host program printing each constant's type and bits, one line each."""
    shown = "\n".join(f'  show("{name}", {name});' for name in names)
    return f"""\
#include <cstdio>
#include <cstring>
{prelude}
#include {include}
static void show(const char* name, float v) {{
  unsigned int bits; std::memcpy(&bits, &v, sizeof bits); std::printf("%s float %08x\\n", name, bits);
}}
static void show(const char* name, double v) {{
  unsigned long long bits; std::memcpy(&bits, &v, sizeof bits);
  std::printf("%s double %016llx\\n", name, bits);
}}
static void show(const char* name, unsigned int v) {{ std::printf("%s unsigned %x\\n", name, v); }}
int main() {{
{shown}
  return 0;
}}
"""


def _run(compiler: str, tmp_path: Path, name: str, program: str) -> str:
    (tmp_path / f"{name}.cpp").write_text(program, encoding="utf-8")
    built = subprocess.run([compiler, "-std=c++17", "-Wall", "-Werror", "-I", str(tmp_path),
                            str(tmp_path / f"{name}.cpp"), "-o", str(tmp_path / name)],
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr[-3000:]
    ran = subprocess.run([str(tmp_path / name)], capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    return ran.stdout


@pytest.mark.slow
def test_every_value_and_type_is_cudas(tmp_path: Path):
    """CUDA's header itself, compiled on the host with its two device functions written as the
    bit casts they are, against the generated header: the same type and bits for each."""
    compiler = require_tool("g++")
    cuda_header = require_path(CUDA_HEADER, "CUDA 13's headers")
    names = sorted(_DEFINED.findall(_rendered()))
    (tmp_path / HEADER).write_text(_rendered(), encoding="utf-8")
    cudas_bit_casts = """\
static inline float __int_as_float(int x) { float f; std::memcpy(&f, &x, sizeof f); return f; }
static inline double __longlong_as_double(long long x) {
  double d; std::memcpy(&d, &x, sizeof d); return d;
}"""
    ours = _run(compiler, tmp_path, "ours", _printer(f'"{HEADER}"', names))
    cudas = _run(compiler, tmp_path, "cudas",
                 _printer(f'"{cuda_header}"', names, cudas_bit_casts))
    assert len(ours.splitlines()) == len(names)
    assert ours == cudas


@pytest.mark.slow
def test_header_compiles_with_hipcc_for_host_and_device(tmp_path: Path):
    """Every constant in a kernel and in host code (a constant expression there too), with
    Debian's hipcc (HIP 5.2), which has no hip_math_constants.h."""
    names = sorted(_DEFINED.findall(_rendered()))
    (tmp_path / HEADER).write_text(_rendered(), encoding="utf-8")
    device = "\n".join(f"  out[{i}] = (double)({name});" for i, name in enumerate(names))
    host = "\n".join(f"  constexpr double c{i} = (double)({name}); sum += c{i};"
                     for i, name in enumerate(names))
    program = tmp_path / "constants.hip"
    program.write_text(f"""\
#include <hip/hip_runtime.h>
#include "{HEADER}"
__global__ void device_constants(double* out) {{
{device}
}}
double host_constants() {{
  double sum = 0;
{host}
  return sum;
}}
""", encoding="utf-8")
    compiled = hipcc_compile(program, tmp_path, ("-I", str(tmp_path)))
    assert compiled.returncode == 0, compiled.stderr[-3000:]
