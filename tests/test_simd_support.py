"""CUDA's SIMD video intrinsics: the generated rocmigrate_simd.h defines exactly the intrinsics of
rules/api/simd.tsv (CUDA's own list), each computes what CUDA documents (compared on the host
with a reference written here from the CUDA Math API's "SIMD Intrinsics" and the PTX video
instructions), and a converted file keeps the names and includes the header (SIM001)."""

from __future__ import annotations

import random
import re
import subprocess
from pathlib import Path

import pytest

from conftest import nvcc_compile, require_path, require_tool
from migrator import apitables, support
from migrator.convert import convert_bytes
from migrator.nvidia import write_nvidia_headers
from migrator.settings import Settings
from rules.api.simd_intrinsics import intrinsics

HEADER = "rocmigrate_simd.h"
CUDA_DECLARATIONS = Path("/usr/local/cuda/include/crt/device_functions.h")
_DEFINED = re.compile(r"ROCMIGRATE_SIMD_FN unsigned int (__v\w+)\(([^)]*)\)")


def _rendered() -> str:
    return support.render(HEADER, Settings()).decode()


def _defined() -> dict[str, int]:
    """Each function the header defines, with its number of operands."""
    return {name: params.count(",") + 1 for name, params in _DEFINED.findall(_rendered())}


# ---- the reference: each element as CUDA documents it ----

def _elements(word: int, bits: int, signed: bool) -> list[int]:
    values = []
    for index in range(32 // bits):
        value = (word >> (index * bits)) & ((1 << bits) - 1)
        if signed and value >> (bits - 1):
            value -= 1 << bits
        values.append(value)
    return values


def _saturated(value: int, bits: int, signed: bool) -> int:
    low, high = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    return min(max(value, low), high)


def _average_away_from_zero(total: int) -> int:
    """total / 2 rounded half away from zero (PTX vavrg on signed elements)."""
    half = (abs(total) + 1) // 2
    return half if total >= 0 else -half


_COMPARE = {"eq": (None, lambda x, y: x == y), "ne": (None, lambda x, y: x != y),
            "ges": (True, lambda x, y: x >= y), "geu": (False, lambda x, y: x >= y),
            "gts": (True, lambda x, y: x > y), "gtu": (False, lambda x, y: x > y),
            "les": (True, lambda x, y: x <= y), "leu": (False, lambda x, y: x <= y),
            "lts": (True, lambda x, y: x < y), "ltu": (False, lambda x, y: x < y)}
# operation -> (signed elements, element result from x, y and the width)
_ELEMENTWISE = {
    "abs": (True, lambda x, y, bits: abs(x)),
    "absss": (True, lambda x, y, bits: _saturated(abs(x), bits, True)),
    "neg": (True, lambda x, y, bits: -x),
    "negss": (True, lambda x, y, bits: _saturated(-x, bits, True)),
    "add": (False, lambda x, y, bits: x + y),
    "addss": (True, lambda x, y, bits: _saturated(x + y, bits, True)),
    "addus": (False, lambda x, y, bits: _saturated(x + y, bits, False)),
    "sub": (False, lambda x, y, bits: x - y),
    "subss": (True, lambda x, y, bits: _saturated(x - y, bits, True)),
    "subus": (False, lambda x, y, bits: _saturated(x - y, bits, False)),
    "avgs": (True, lambda x, y, bits: _average_away_from_zero(x + y)),
    "avgu": (False, lambda x, y, bits: -(-(x + y) // 2)),  # rounded half up
    "haddu": (False, lambda x, y, bits: (x + y) // 2),
    "absdiffs": (True, lambda x, y, bits: abs(x - y)),
    "absdiffu": (False, lambda x, y, bits: abs(x - y)),
    "maxs": (True, lambda x, y, bits: max(x, y)),
    "maxu": (False, lambda x, y, bits: max(x, y)),
    "mins": (True, lambda x, y, bits: min(x, y)),
    "minu": (False, lambda x, y, bits: min(x, y)),
}
for _name, (_signed, _test) in _COMPARE.items():
    _ELEMENTWISE["cmp" + _name] = (bool(_signed), lambda x, y, bits, t=_test: (1 << bits) - 1
                                   if t(x, y) else 0)
    _ELEMENTWISE["set" + _name] = (bool(_signed), lambda x, y, bits, t=_test: int(t(x, y)))


def reference(name: str, a: int, b: int) -> int:
    operation, count = name[3:-1], int(name[-1])
    bits = 32 // count
    if operation in ("sads", "sadu"):
        signed = operation == "sads"
        return sum(abs(x - y) for x, y in zip(_elements(a, bits, signed),
                                               _elements(b, bits, signed)))
    signed, element = _ELEMENTWISE[operation]
    result = 0
    for index, (x, y) in enumerate(zip(_elements(a, bits, signed), _elements(b, bits, signed))):
        result |= (element(x, y, bits) & ((1 << bits) - 1)) << (index * bits)
    return result


def test_reference_matches_cuda_documented_examples():
    """The examples of CUDA's header comments, and a few worked by hand."""
    assert reference("__vcmpeq2", 0x1234ABA5, 0x1234ABA6) == 0xFFFF0000
    assert reference("__vcmplts2", 0x1234ABA5, 0x1234ABA6) == 0x0000FFFF
    assert reference("__vcmpeq4", 0x1234ABA5, 0x1234ABA6) == 0xFFFFFF00
    assert reference("__vcmpgts4", 0x1234ABA5, 0x1234ABA6) == 0
    assert reference("__vcmpleu4", 0x1234ABA5, 0x1234ABA6) == 0xFFFFFFFF
    assert reference("__vseteq2", 0x1234ABA5, 0x1234ABA6) == 0x00010000
    assert reference("__vmaxs4", 0x80FF7F01, 0) == 0x00007F01
    assert reference("__vaddss4", 0x7F807F80, 0x01FF0101) == 0x7F807F81
    assert reference("__vabsss2", 0x80008001, 0) == 0x7FFF7FFF
    assert reference("__vabs2", 0x80008001, 0) == 0x80007FFF
    assert reference("__vavgs4", 0xFD030000, 0x00000000) == 0xFE020000  # -1.5 -> -2, 1.5 -> 2
    assert reference("__vhaddu4", 0x03, 0x00) == 0x01
    assert reference("__vsads2", 0x7FFF8000, 0x80007FFF) == 2 * 0xFFFF
    assert reference("__vsubus4", 0x01020304, 0x02020202) == 0x00000102


# ---- the header, the table and CUDA name the same intrinsics ----

DOT_PRODUCTS = {"__dp4a", "__dp2a_lo", "__dp2a_hi"}  # sm_61_intrinsics.h, in the same header
_DOT_DEFINED = re.compile(r"ROCMIGRATE_SIMD_FN (?:unsigned )?int (__dp\w+)\(([^)]*)\)")


def test_header_defines_every_intrinsic_of_the_table_and_nothing_else():
    table = {name.decode() for name in intrinsics(apitables.load().api_dir)}
    defined = _defined()
    assert len(table) == 82 + len(DOT_PRODUCTS) and set(defined) == table - DOT_PRODUCTS
    assert {name for name, _ in _DOT_DEFINED.findall(_rendered())} == DOT_PRODUCTS
    assert all(count == (1 if name[3:-1] in ("abs", "absss", "neg", "negss") else 2)
               for name, count in defined.items())


def test_table_names_cudas_simd_intrinsics():
    text = require_path(CUDA_DECLARATIONS, "CUDA 13's headers").read_text(encoding="utf-8")
    declared = set(re.findall(r"unsigned int (__v[a-z]+[24])\s*\(", text))
    assert declared == set(_defined())


def test_api001_leaves_the_intrinsics_to_sim001():
    tables = apitables.load()
    for name in intrinsics(tables.api_dir):
        entry = tables.names[name.decode()]
        assert (entry.status, entry.hip, entry.hip_added) == ("supported", entry.cuda, None)
    source = (b"__global__ void k(const int* in, int* out) {\n"
              b"  out[threadIdx.x] = __vmaxs4(in[threadIdx.x], 0) + __vcmpleu2(1, 2);\n}\n")
    result = convert_bytes("relu.cu", source, Settings())
    assert b'#include "rocmigrate_simd.h"' in result.output
    assert b"__vmaxs4(in[threadIdx.x], 0) + __vcmpleu2(1, 2)" in result.output
    assert b"rocmigrate API" not in result.output
    assert [f.code for f in result.findings if f.symbol.startswith("__v")] == ["SIM001", "SIM001"]


@pytest.mark.parametrize("rocm", ["5.2", "6.4"])
def test_converting_the_header_again_changes_nothing(rocm: str):
    """Converting a converted tree converts the header too (a runner writes the fresh one
    first): it names nothing a rule rewrites, such as __CUDACC__ (API001 renames it __HIPCC__)."""
    settings = Settings(rocm=tuple(int(part) for part in rocm.split(".")) + (0,))
    rendered = support.render(HEADER, settings)
    result = convert_bytes(HEADER, rendered, settings)
    assert result.output == rendered and not result.findings


# ---- every function against the reference, on the host ----

def _inputs() -> list[tuple[int, int]]:
    """Every pair of edge elements in every position, edge elements mixed, and random words."""
    generator = random.Random(20261201)
    edge_bytes = (0x00, 0x01, 0x7E, 0x7F, 0x80, 0x81, 0xFE, 0xFF)
    edge_halves = (0x0000, 0x0001, 0x007F, 0x0080, 0x00FF, 0x7FFE, 0x7FFF, 0x8000, 0x8001,
                   0xFFFE, 0xFFFF)
    pairs = [(x * 0x01010101, y * 0x01010101) for x in edge_bytes for y in edge_bytes]
    pairs += [(x * 0x00010001, y * 0x00010001) for x in edge_halves for y in edge_halves]

    def mixed(edges, count):
        return sum(generator.choice(edges) << (i * (32 // count)) for i in range(count))

    pairs += [(mixed(edge_bytes, 4), mixed(edge_bytes, 4)) for _ in range(1500)]
    pairs += [(mixed(edge_halves, 2), mixed(edge_halves, 2)) for _ in range(1500)]
    pairs += [(generator.getrandbits(32), generator.getrandbits(32)) for _ in range(4000)]
    return pairs


@pytest.mark.slow
def test_every_intrinsic_matches_the_reference_on_the_host(tmp_path: Path):
    compiler = require_tool("g++")
    defined = _defined()
    names = sorted(defined)
    (tmp_path / HEADER).write_text(_rendered(), encoding="utf-8")
    calls = "\n".join(
        f'    std::printf("%x ", {name}(a{", b" if defined[name] == 2 else ""}));'
        for name in names)
    (tmp_path / "check.cpp").write_text(f"""\
#define ROCMIGRATE_SIMD_FN static inline
#include "{HEADER}"
#include <cstdio>
int main() {{
  unsigned int a, b;
  while (std::scanf("%x %x", &a, &b) == 2) {{
{calls}
    std::printf("\\n");
  }}
  return 0;
}}
""", encoding="utf-8")
    built = subprocess.run([compiler, "-std=c++11", "-O1", "-Wall", "-Werror", "-I", str(tmp_path),
                            str(tmp_path / "check.cpp"), "-o", str(tmp_path / "check")],
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr[-3000:]
    pairs = _inputs()
    ran = subprocess.run([str(tmp_path / "check")], capture_output=True, text=True, timeout=120,
                         input="".join(f"{a:x} {b:x}\n" for a, b in pairs))
    assert ran.returncode == 0, ran.stderr
    lines = ran.stdout.splitlines()
    assert len(lines) == len(pairs)
    wrong: dict[str, tuple[int, int, int, int]] = {}
    for (a, b), line in zip(pairs, lines):
        for name, got in zip(names, line.split()):
            want = reference(name, a, b)
            if int(got, 16) != want and name not in wrong:
                wrong[name] = (a, b, int(got, 16), want)
    assert not wrong, {name: tuple(map(hex, case)) for name, case in wrong.items()}


@pytest.mark.slow
def test_header_defines_nothing_on_nvidia_where_cuda_has_the_intrinsics(tmp_path: Path):
    """Through rocmigrate's NVIDIA headers, the converted code calls CUDA's own intrinsics."""
    include = tmp_path / "nvh"
    write_nvidia_headers(apitables.load(), include)
    (tmp_path / HEADER).write_text(_rendered(), encoding="utf-8")
    source = tmp_path / "relu.cu"
    source.write_bytes(convert_bytes("relu.cu", b"""\
__global__ void relu(const int* in, unsigned int* out) {
  out[threadIdx.x] = __vmaxs4(in[threadIdx.x], 0) ^ __vsads2(in[threadIdx.x], 7u);
}
""", Settings()).output)
    compiled = nvcc_compile(source, tmp_path, ("-I", str(include), "-I", str(tmp_path)))
    assert compiled.returncode == 0, compiled.stderr[-3000:]



def _dot_reference(name: str, a: int, b: int, c: int, signed: bool) -> int:
    """CUDA's integer dot products as its Math API documents them, the sum wrapping at 32 bits."""
    if name == "__dp4a":
        pairs = [(_elements(a, 8, signed)[i], _elements(b, 8, signed)[i]) for i in range(4)]
    else:
        first = 0 if name == "__dp2a_lo" else 2
        pairs = [(_elements(a, 16, signed)[i], _elements(b, 8, signed)[first + i])
                 for i in range(2)]
    return (c + sum(x * y for x, y in pairs)) & 0xFFFFFFFF


@pytest.mark.slow
def test_dot_products_match_the_reference_on_the_host(tmp_path: Path):
    compiler = require_tool("g++")
    (tmp_path / HEADER).write_text(_rendered(), encoding="utf-8")
    names = sorted(DOT_PRODUCTS)
    calls = "\n".join(
        f'    std::printf("%x %x ", (unsigned){name}((int)a, (int)b, (int)c), {name}(a, b, c));'
        for name in names)
    (tmp_path / "dot.cpp").write_text(f"""\
#define ROCMIGRATE_SIMD_FN static inline
#include "{HEADER}"
#include <cstdio>
int main() {{
  unsigned int a, b, c;
  while (std::scanf("%x %x %x", &a, &b, &c) == 3) {{
{calls}
    std::printf("\\n");
  }}
  return 0;
}}
""", encoding="utf-8")
    built = subprocess.run([compiler, "-std=c++11", "-O1", "-Wall", "-Werror", "-I", str(tmp_path),
                            str(tmp_path / "dot.cpp"), "-o", str(tmp_path / "dot")],
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr[-3000:]
    generator = random.Random(61)
    cases = [(a, b, c) for a, b in _inputs()[:600] for c in (0, 0x7FFFFFFF)]
    cases += [(generator.getrandbits(32), generator.getrandbits(32), generator.getrandbits(32))
              for _ in range(2000)]
    ran = subprocess.run([str(tmp_path / "dot")], capture_output=True, text=True, timeout=120,
                         input="".join(f"{a:x} {b:x} {c:x}\n" for a, b, c in cases))
    assert ran.returncode == 0, ran.stderr
    lines = ran.stdout.splitlines()
    assert len(lines) == len(cases)
    for (a, b, c), line in zip(cases, lines):
        got = [int(word, 16) for word in line.split()]
        want = [value for name in names for value in (_dot_reference(name, a, b, c, True),
                                                       _dot_reference(name, a, b, c, False))]
        assert got == want, (hex(a), hex(b), hex(c), [hex(v) for v in got], [hex(v) for v in want])
