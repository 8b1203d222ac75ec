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
    ("d", False), ("x * 2.0", False), ("n", False),  # a double, an int: CUDA rounds once
])
def test_conversions_to_the_type_are_fixed_only_where_exact(value: str, exact: bool):
    text = (f"__device__ float f(float x, double d, int n) {{ return __nv_bfloat16({value}); }}"
            "\n").encode()
    result = _lower(text, write_markers=False)
    assert [(f.code, f.fix_applicability) for f in result.findings] == [
        ("LOW001", "safe" if exact else "unsafe")]
    assert (b"hip_bfloat16(" in result.output) == exact


@pytest.mark.parametrize("conversion, lowered", [
    ("bf16(x)", "rocmigrate_float2bfloat16(x)"),
    ("bf16(x * 2)", "rocmigrate_float2bfloat16(x * 2)"),
    ("bf16(0.5f)", "bf16(0.5f)"), ("bf16(b)", "bf16(b)"),  # exact
    ("bf16(UNKNOWN)", "bf16(UNKNOWN)"),  # unread: it builds, not judged
])
def test_a_floats_conversion_through_an_alias_rounds_as_cuda(conversion: str, lowered: str):
    """bf16(x) of a float through an alias of the type: rocmigrate_float2bfloat16(x), exact
    for every float (hip_bfloat16's constructor keeps a NaN's payload)."""
    text = (b"typedef __nv_bfloat16 bf16;\n__device__ float f(float x, bf16 b) {\n  return "
            + conversion.encode() + b";\n}\n")
    result = _lower(text)
    assert b"  return " + lowered.encode() + b";\n" in result.output
    assert b"// rocmigrate LOW001: " not in result.output
    assert (b'#include "rocmigrate_bf16.h"' in result.output) == (lowered != conversion)


@pytest.mark.parametrize("conversion", ["bf16(d)", "bf16(n * 3)", "bf16(x * 2.0)"])
def test_an_aliases_conversion_of_a_double_or_an_int_is_marked(conversion: str):
    text = (b"typedef __nv_bfloat16 bf16;\n__device__ float f(float x, double d, int n) {\n"
            b"  return " + conversion.encode() + b";\n}\n")
    result = _lower(text)
    assert b"  return " + conversion.encode() + b";\n" in result.output
    assert b"// rocmigrate LOW001: " + conversion.encode() + b": CUDA rounds" in result.output


@pytest.mark.parametrize("argument, lowered", [
    # proven bf16: HIP's own conversion operator, exact
    ("v", "static_cast<float>"), ("*p", "static_cast<float>"), ("p[i]", "static_cast<float>"),
    ("(p[i + 1])", "static_cast<float>"), ("raw[i]", "static_cast<float>"),
    ("__float2bfloat16(x)", "static_cast<float>"),
    ("static_cast<__nv_bfloat16>(x)", "static_cast<float>"),
    ("(__nv_bfloat16)x", "static_cast<float>"),
    # unproven: rocmigrate_bf16.h's function, which takes a bf16 only (exact where it builds)
    ("s.v", "rocmigrate_bfloat162float"), ("__float2bfloat16(x) + v", "rocmigrate_bfloat162float"),
    ("__float22bfloat162_rn(x)", "rocmigrate_bfloat162float"),
    # declared with another type, which CUDA rounds to bf16 first: marked (unsafe fix)
    ("x", None), ("p", None),
])
def test_bfloat162float_is_lowered_exactly_or_marked(argument: str, lowered: str | None):
    text = (b"#include <vector>\nstruct S { float v; };\n"
            b"float f(const __nv_bfloat16* p, __nv_bfloat16 v, float x, S s, int i) {\n"
            b"  std::vector<__nv_bfloat16> raw(i);\n"
            b"  return __bfloat162float(" + argument.encode() + b");\n}\n")
    result = _lower(text, write_markers=False)
    found = [f for f in result.findings if f.symbol == "__bfloat162float"]
    assert [f.fix_applicability for f in found] == ["safe" if lowered else "unsafe"]
    if lowered:
        assert f"return {lowered}(".encode() in result.output
        if lowered.startswith("rocmigrate_"):
            assert b'#include "rocmigrate_bf16.h"' in result.output


@pytest.mark.parametrize("declaration, lowered, marked", [
    ("__nv_bfloat16 v = 0.5f;", "hip_bfloat16 v = hip_bfloat16(0.5f);", False),
    ("__nv_bfloat16 v = 0.1;", "hip_bfloat16 v = 0.1;", True),  # a double float does not hold
    ("__nv_bfloat16 v = f;", "hip_bfloat16 v = rocmigrate_float2bfloat16(f);", False),
    ("__nv_bfloat16 v = b * -b;", "hip_bfloat16 v = b * -b;", False),  # bf16 arithmetic
    ("__nv_bfloat16 v[2] = {0, f};",
     "hip_bfloat16 v[2] = {hip_bfloat16(0), rocmigrate_float2bfloat16(f)};", False),
    ("__nv_bfloat16 v = d;", "hip_bfloat16 v = d;", True),
    ("__nv_bfloat16* v = nullptr;", "hip_bfloat16* v = nullptr;", False),
    ("std::vector<__nv_bfloat16> v = raw;", "std::vector<hip_bfloat16> v = raw;", False),
])
def test_copy_initialisations_get_their_conversion_written(declaration: str, lowered: str,
                                                           marked: bool):
    text = (b"#include <vector>\n__device__ void f(float f, double d, __nv_bfloat16 b, "
            b"std::vector<__nv_bfloat16> raw) {\n  " + declaration.encode() + b"\n}\n")
    result = _lower(text)
    assert lowered.encode() in result.output
    assert (b"// rocmigrate LOW001: " in result.output) == marked


@pytest.mark.parametrize("value, lowered, marked", [
    ("x * 2", "rocmigrate_float2bfloat16(x * 2)", False),  # float * int: a float
    ("-(x / p[1])", "rocmigrate_float2bfloat16(-(x / p[1]))", False),
    ("sqrtf(x) + (float)i", "rocmigrate_float2bfloat16(sqrtf(x) + (float)i)", False),
    ("i > 0 ? x : 1.0f", "rocmigrate_float2bfloat16(i > 0 ? x : 1.0f)", False),
    ("s.weight", "rocmigrate_float2bfloat16(s.weight)", False),  # a member of a struct here
    ("half(x)", "rocmigrate_float2bfloat16(half(x))", False),  # a function declared here
    ("2", "hip_bfloat16(2)", False),
    ("b * b", "b * b", False), ("s.bias", "s.bias", False), ("half(b)", "half(b)", False),
    ("twice<__nv_bfloat16>(b)", "twice<hip_bfloat16>(b)", False),  # returns its T
    ("x * 2.0", "x * 2.0", True),  # a double: CUDA rounds it once
    ("d", "d", True), ("i + 1", "i + 1", True), ("s.count", "s.count", True),
    ("b * x", "b * x", False),  # bf16 and float: ambiguous in CUDA, not judged
    ("s.get()", "rocmigrate_float2bfloat16(s.get())", False),  # a member function's
    ("fn(x)", "fn(x)", True),  # a call through a pointer: not read
])
def test_returned_values_are_converted_when_read_as_float(value: str, lowered: str,
                                                          marked: bool):
    text = (b"struct S { float weight; __nv_bfloat16 bias; int count;\n"
            b"  __device__ float get() const { return weight; } };\n"
            b"__device__ float half(float v) { return v / 2; }\n"
            b"__device__ __nv_bfloat16 half(__nv_bfloat16 v) { return v; }\n"
            b"template <typename T> __device__ T twice(T v) { return v + v; }\n"
            b"__device__ __nv_bfloat16 f(float x, double d, int i, __nv_bfloat16 b, "
            b"const float* p, S s, float (*fn)(float)) {\n  return " + value.encode()
            + b";\n}\n")
    result = _lower(text)
    assert b"  return " + lowered.encode() + b";\n" in result.output
    assert (b"// rocmigrate LOW001: " in result.output) == marked


def test_a_template_called_with_bf16_is_marked_for_conversions_in_included_files(
        tmp_path: Path):
    """The template that converts is in a header the call's file includes: the call is marked,
    naming it; a call with float, and a template that converts nothing, are left."""
    tree = tmp_path / "src"
    tree.mkdir()
    (tree / "reference.h").write_bytes(
        b"template <typename T>\nvoid scale(T* out, const T* in, float by, int n) {\n"
        b"  for (int i = 0; i < n; ++i) out[i] = (float)in[i] * by;\n}\n"
        b"template <typename T>\nvoid copy(T* out, const T* in) { out[0] = in[0]; }\n")
    (tree / "main.cu").write_bytes(
        b'#include <cuda_bf16.h>\n#include "reference.h"\n'
        b"template <typename T>\nvoid run(T* a, int n) { scale<T>(a, a, 2.0f, n); }\n"
        b"int main() {\n  __nv_bfloat16 h[4];\n  float f[4];\n"
        b"  run<__nv_bfloat16>(h, 4);\n  run<float>(f, 4);\n  copy<__nv_bfloat16>(h, h);\n}\n")
    settings = Settings(rocm=parse_version("5.2"))
    out = tmp_path / "out"
    runner.run(runner.RunOptions(tree, out), settings)
    lines = (out / "main.cu").read_bytes().decode().splitlines()
    marker = lines.index("  run<hip_bfloat16>(h, 4);") - 1
    assert lines[marker].startswith("  // rocmigrate LOW001: run<hip_bfloat16>(h, 4) makes scale "
                                    "(reference.h) convert to hip_bfloat16 implicitly "
                                    "(out[i] = (float)in[i] * by)")
    assert sum("rocmigrate LOW001" in line for line in lines) == 1
    again = tmp_path / "again"
    runner.run(runner.RunOptions(out, again), settings)  # the marker is not written twice
    assert (again / "main.cu").read_bytes() == (out / "main.cu").read_bytes()


@pytest.mark.parametrize("declaration, lowered, marked", [
    ("bf16 v = f;", "bf16 v = rocmigrate_float2bfloat16(f);", False),
    ("const bf16_t v = 0.5f;", "const bf16_t v = hip_bfloat16(0.5f);", False),
    ("bf16 v[2] = {f, b};", "bf16 v[2] = {rocmigrate_float2bfloat16(f), b};", False),
    ("bf16 v = b;", "bf16 v = b;", False),
    ("bf16 v = d;", "bf16 v = d;", True),  # a double: CUDA rounds it once
    ("bf16* v = nullptr;", "bf16* v = nullptr;", False),
    ("store(f);", "store(rocmigrate_float2bfloat16(f));", False),  # a bf16_t parameter
    ("out[0] = f;", "out[0] = rocmigrate_float2bfloat16(f);", False),
])
def test_an_alias_of_the_type_is_the_type(declaration: str, lowered: str, marked: bool):
    """typedef and using aliases of bf16 convert what the type converts: copy-initialisations,
    arguments of parameters declared with them, assignments to them, returns."""
    text = (b"typedef __nv_bfloat16 bf16;\nusing bf16_t = __nv_bfloat16;\n"
            b"__device__ void store(bf16_t v);\n"
            b"__device__ bf16 half(float x) { return x / 2; }\n"
            b"__device__ void f(float f, double d, bf16 b, bf16* out) {\n  "
            + declaration.encode() + b"\n}\n")
    result = _lower(text)
    assert b"typedef hip_bfloat16 bf16;" in result.output
    assert b"return rocmigrate_float2bfloat16(x / 2);" in result.output
    assert b"  " + lowered.encode() + b"\n" in result.output
    assert (b"// rocmigrate LOW001: " in result.output) == marked


@pytest.mark.parametrize("lambda_, lowered, marked", [
    ("[](float x) -> __nv_bfloat16 { return x; }",
     "[](float x) -> hip_bfloat16 { return rocmigrate_float2bfloat16(x); }", False),
    ("[](float x) -> bf16 { return 1; }", "[](float x) -> bf16 { return hip_bfloat16(1); }",
     False),
    ("[](double x) -> bf16 { return x; }", "[](double x) -> bf16 { return x; }", True),
    ("[](bf16 x) -> bf16 { return x; }", "[](bf16 x) -> bf16 { return x; }", False),
    ("[](float x) { return x; }", "[](float x) { return x; }", False),  # returns a float
])
def test_a_lambdas_bf16_return_type_converts_its_returns(lambda_: str, lowered: str,
                                                         marked: bool):
    text = (b"typedef __nv_bfloat16 bf16;\n__device__ void f() {\n  auto g = "
            + lambda_.encode() + b";\n}\n")
    result = _lower(text)
    assert b"  auto g = " + lowered.encode() + b";\n" in result.output
    assert (b"// rocmigrate LOW001: " in result.output) == marked


@pytest.mark.parametrize("value, lowered, marked", [
    ("to_bf16(x)", "to_bf16(x)", False),  # its trailing return type: a bf16
    ("to_float(x)", "rocmigrate_float2bfloat16(to_float(x))", False),
    ("deduced(x)", "deduced(x)", True),  # no return type written: not read
    ("later(x)", "later(x)", True),  # declared after the call: not this lambda
])
def test_a_lambdas_value_has_its_trailing_return_type(value: str, lowered: str, marked: bool):
    text = (b"typedef __nv_bfloat16 bf16;\n"
            b"__device__ auto to_bf16 = [](float x) -> bf16 { return __float2bfloat16(x); };\n"
            b"__device__ void f(float x, bf16* out) {\n"
            b"  auto to_float = [](float x) -> float { return x; };\n"
            b"  auto deduced = [](float x) { return __float2bfloat16(x); };\n"
            b"  out[0] = " + value.encode() + b";\n"
            b"  auto later = [](float x) -> bf16 { return __float2bfloat16(x); };\n}\n")
    result = _lower(text)
    assert b"  out[0] = " + lowered.encode() + b";\n" in result.output
    assert (b"// rocmigrate LOW001: " in result.output) == marked


@pytest.mark.parametrize("declaration, lowered, marked", [
    ("S s = {f, 1, 0.5f};", "S s = {rocmigrate_float2bfloat16(f), 1, hip_bfloat16(0.5f)};",
     False),
    ("S s{f};", "S s{rocmigrate_float2bfloat16(f)};", False),
    ("S s[2] = {{f}, {b, 0, f}};",
     "S s[2] = {{rocmigrate_float2bfloat16(f)}, {b, 0, rocmigrate_float2bfloat16(f)}};", False),
    ("S s = {.v = 1, .w = f};", "S s = {.v = hip_bfloat16(1), .w = rocmigrate_float2bfloat16(f)};",
     False),
    ("S s = {d};", "S s = {d};", True),
    ("S s = {{f}, 1};", "S s = {{f}, 1};", False),  # a braced member: not read
    # after a member that is not a scalar, a brace may be elided: positions are not read
    ("E e = {1, 2, f};", "E e = {1, 2, f};", False),
    ("E e = {{1, 2}, f};", "E e = {{1, 2}, rocmigrate_float2bfloat16(f)};", False),
    ("C c{f};", "C c{f};", False),  # a constructor's arguments
    ("D d = {f};", "D d = {f};", False),  # a base class: not read
    ("T t = {f, 2};", "T t = {rocmigrate_float2bfloat16(f), 2};", False),  # typedef struct {...}
    # an aggregate member's own braced list, by position or designator
    ("O o = {{f, 1}, 2, f};",
     "O o = {{rocmigrate_float2bfloat16(f), 1}, 2, rocmigrate_float2bfloat16(f)};", False),
    ("O o = {.t = {b, 0}, .w = 0.5f};", "O o = {.t = {b, 0}, .w = hip_bfloat16(0.5f)};", False),
    ("O o = {{d}, 2, f};", "O o = {{d}, 2, rocmigrate_float2bfloat16(f)};", True),
    ("O o = {f, 1, 2, f};", "O o = {f, 1, 2, f};", False),  # the inner braces elided
])
def test_aggregate_members_of_bf16_are_converted(declaration: str, lowered: str, marked: bool):
    """A brace list initialising an aggregate copy-initialises its bf16 members."""
    text = (b"typedef __nv_bfloat16 bf16;\n"
            b"struct S { bf16 v; int n; __nv_bfloat16 w; static int count; };\n"
            b"struct E { int a[2]; bf16 v; };\n"
            b"struct C { __device__ C(float x) : v(x) {} bf16 v; };\n"
            b"struct B { int n; };\nstruct D : B { bf16 v; };\n"
            b"typedef struct { bf16 v; int n; } T;\n"
            b"struct O { T t; int n; bf16 w; };\n"
            b"__device__ void f(float f, double d, bf16 b) {\n  " + declaration.encode()
            + b"\n}\n")
    result = _lower(text)
    assert b"  " + lowered.encode() + b"\n" in result.output
    assert (b"// rocmigrate LOW001: " in result.output) == marked


def test_a_class_template_used_with_bf16_is_marked_where_it_converts():
    """The first use of a class template with bf16 (an alias of it too) is marked where a
    default member initialiser or a member function defined in its body converts an arithmetic
    value to the parameter; with float, or where it converts nothing, it is left."""
    text = (b"typedef __nv_bfloat16 bf16;\n"
            b"template <class T> struct Acc {\n  T v = 0;\n"
            b"  __device__ void add(float x) { v += x; }\n};\n"
            b"template <class T, int N> struct Buf {\n  T data[N];\n"
            b"  __device__ T first() const { return data[0]; }\n};\n"
            b"template <class T> struct Sum {\n  T v;\n"
            b"  __device__ void add(float x) { v += x; }\n};\n"
            b"__global__ void k() {\n  Acc<float> f;\n  Buf<bf16, 4> b;\n"
            b"  Sum<__nv_bfloat16> s;\n  Acc<bf16> a;\n  Acc<__nv_bfloat16> again;\n}\n")
    result = _lower(text)
    lines = result.output.decode().splitlines()
    markers = [i for i, line in enumerate(lines) if "// rocmigrate LOW001: " in line]
    assert [lines[i + 1] for i in markers] == ["  Sum<hip_bfloat16> s;", "  Acc<bf16> a;"]
    assert "Sum<hip_bfloat16> makes Sum convert to hip_bfloat16 implicitly (v += x)" in \
        lines[markers[0]]
    assert "Acc<bf16> makes Acc convert to hip_bfloat16 implicitly (T v = 0; and 1 more)" in \
        lines[markers[1]]


def test_member_functions_defined_outside_the_body_are_read():
    """A class template's member function defined outside its body, with its own name for the
    parameter, counts for the marker; a struct's bf16 member assigned in one is converted."""
    text = (b"template <class T> struct Acc {\n  T v;\n  __device__ void add(float x);\n};\n"
            b"template <class U> __device__ void Acc<U>::add(float x) { v += x; }\n"
            b"template <class T> struct Same {\n  T v;\n  __device__ void set(T x);\n};\n"
            b"template <class T> __device__ void Same<T>::set(T x) { v = x; }\n"
            b"struct Plain {\n  __nv_bfloat16 v;\n  __device__ void set(float x);\n};\n"
            b"__device__ void Plain::set(float x) { v = x; }\n"
            b"__global__ void k() {\n  Same<__nv_bfloat16> s;\n  Acc<__nv_bfloat16> a;\n}\n")
    result = _lower(text)
    lines = result.output.decode().splitlines()
    markers = [i for i, line in enumerate(lines) if "// rocmigrate LOW001: " in line]
    assert [lines[i + 1] for i in markers] == ["  Acc<hip_bfloat16> a;"]
    assert "implicitly (v += x)" in lines[markers[0]]
    assert "__device__ void Plain::set(float x) { v = rocmigrate_float2bfloat16(x); }" in lines


def test_nothing_is_lowered_from_rocm_6():
    text = b"__global__ void k(__nv_bfloat16* p) { p[0] = __float2bfloat16(1.0f); }\n"
    result = _lower(text, "6.0")
    assert not result.findings and result.output == text


def test_the_summary_lists_marked_lowerings_and_counts_the_applied(tmp_path: Path):
    source = tmp_path / "bf.cu"
    source.write_bytes(b"#include <cuda_bf16.h>\n"
                       b"__global__ void k(__nv_bfloat16* p, const float* x, double d) {\n"
                       b"  p[0] = __float2bfloat16(1.0f);\n"
                       b"  p[1] = __float2bfloat16(x[1]);\n"
                       b"  p[2] = __nv_bfloat16(d);\n}\n")
    settings = Settings(rocm=parse_version("5.2"))
    out = tmp_path / "out"
    summary = summarize(runner.run(runner.RunOptions(source, out / "bf.cu"), settings))
    attention = {(e["code"], e["symbol"]) for e in summary["attention"]}
    assert attention == {("LOW001", "__nv_bfloat16")}
    # the header, the parameter's type and both conversions to bf16 (not the marked one)
    assert summary["converted_references"]["device"] == 4
    assert b"p[1] = rocmigrate_float2bfloat16(x[1]);" in (out / "bf.cu").read_bytes()
    assert (out / "rocmigrate_bf16.h").is_file()  # written beside the output that includes it


def test_nvidia_headers_map_the_lowered_names_back():
    headers = nvidia_headers(apitables.load())
    assert "#include <cuda_bf16.h>" in headers["hip/hip_bfloat16.h"]
    assert "typedef __nv_bfloat16 hip_bfloat16;" in headers["hip/rocmigrate_nvidia.h"]


LOWERED = b"""#include <hip/hip_runtime.h>
#include "rocmigrate_bf16.h"
#include <hip/hip_bfloat16.h>
#include <cstdio>

__global__ void k(hip_bfloat16* out, float* back, rocmigrate_bfloat162* pairs) {
  out[0] = hip_bfloat16(1.0f) + hip_bfloat16(0.5f);
  out[1] = rocmigrate_hfma(out[0], rocmigrate_float2bfloat16(back[1]), out[0]);
  pairs[0] = rocmigrate_hadd2(pairs[0], rocmigrate_float2bfloat162_rn(back[2]));
  back[0] = static_cast<float>(out[0]) + rocmigrate_low2float(pairs[0]);
}

int main() {
  hip_bfloat16 host = hip_bfloat16(3.0f);
  std::printf("%g\\n", static_cast<float>(host));
  return sizeof(hip_bfloat16) == 2 && sizeof(rocmigrate_bfloat162) == 4 ? 0 : 1;
}
"""


@pytest.mark.slow
def test_lowered_code_builds_for_amd_and_through_the_nvidia_headers(tmp_path: Path):
    """hip_bfloat16 and rocmigrate_bf16.h (rendered for ROCm 5.2): hipcc 5.2 builds them, and
    nvcc through rocmigrate's NVIDIA headers, where hip_bfloat16 is CUDA's __nv_bfloat16."""
    from migrator.nvidia import write_nvidia_headers

    source = tmp_path / "lowered.cu"
    source.write_bytes(LOWERED)
    (tmp_path / "rocmigrate_bf16.h").write_text(_support_header("5.2"))
    compiled = hipcc_compile(source, tmp_path, ("-I", str(tmp_path)))
    assert compiled.returncode == 0, compiled.stderr[-3000:]
    write_nvidia_headers(apitables.load(), tmp_path / "nvh")
    compiled = nvcc_compile(source, tmp_path, ("-I", str(tmp_path / "nvh"), "-I", str(tmp_path)))
    assert compiled.returncode == 0, compiled.stderr[-3000:]


# ---- rocmigrate_bf16.h: what the lowering calls, and CUDA's rounding ----

def _support_header(rocm: str) -> str:
    from migrator import support

    return support.render("rocmigrate_bf16.h", Settings(rocm=parse_version(rocm))).decode()


def test_every_support_lowering_names_what_the_header_declares():
    """Each row lowered onto rocmigrate_bf16.h (empty replacement), each bf16 overload and each
    exact fallback names a function or type the header, as rendered for the targets the row
    applies to, declares (HIP 5.2 below 6.0; HIP 6.4 too for rows of every target)."""
    import re

    from rules.api.lowering import EXACT_FOR_ALL, PAIR_ARITHMETIC, SCALAR_ARITHMETIC
    from rules.target_names import replacement_of

    declared = {rocm: set(re.findall(r"\b(rocmigrate_\w+)\s*[({]", _support_header(rocm)))
                for rocm in ("5.2", "6.0", "6.4")}
    rows = [low for low in apitables.load().lowerings.values()
            if low.rule == "LOW001" and not low.replacement]
    assert {low.cuda for low in rows if low.below is None} == {
        "__float2bfloat162_rn", "__floats2bfloat162_rn"}
    for low in rows:
        for rocm in ("5.2", "6.0", "6.4"):
            if low.applies(parse_version(rocm)):
                assert replacement_of(low) in declared[rocm], (low.cuda, rocm)
    for name in [*SCALAR_ARITHMETIC.values(), *PAIR_ARITHMETIC.values(), *EXACT_FOR_ALL.values()]:
        assert name in declared["5.2"], name


def _value(bits: int) -> float:
    import struct

    return struct.unpack("<f", struct.pack("<I", bits << 16))[0]


def _bits(value: float) -> int:
    import struct

    return struct.unpack("<I", struct.pack("<f", value))[0] >> 16


def _nearest_bf16(exact) -> int:
    """The bits of the bf16 nearest the nonzero rational ``exact``, ties to even (subnormals
    and overflow to infinity as IEEE has them): the reference, independent of any float
    hardware."""
    from fractions import Fraction

    magnitude = abs(exact)
    exponent = magnitude.numerator.bit_length() - magnitude.denominator.bit_length()
    if Fraction(2) ** exponent > magnitude:
        exponent -= 1
    quantum = Fraction(2) ** (max(exponent, -126) - 7)
    steps, rest = divmod(magnitude / quantum, 1)
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and steps % 2 == 1):
        steps += 1
    rounded = float(steps * quantum) if steps * quantum < 2 ** 128 else float("inf")
    return _bits(-rounded if exact < 0 else rounded)


def _cuda_result(op: str, a: int, b: int, c: int) -> int:
    """CUDA's result of a bf16 operation: rounded once to nearest even, any NaN 0x7fff."""
    import math
    import struct
    from fractions import Fraction

    if op == "convert":  # a float's bits, upper and lower halves
        value = struct.unpack("<f", struct.pack("<I", (a << 16) | b))[0]
        if math.isnan(value):
            return 0x7FFF
        return _nearest_bf16(Fraction(value)) if value and math.isfinite(value) else _bits(value)
    x, y, z = _value(a), _value(b), _value(c) if op == "fma" else 0.0
    if any(math.isnan(v) for v in (x, y, z)):
        return 0x7FFF
    if op == "div" and y == 0:
        result = math.nan if x == 0 else math.copysign(math.inf, x) * math.copysign(1, y)
    else:  # exact in double (sum or product of bf16 values), or infinite: IEEE's signs
        result = {"add": lambda: x + y, "sub": lambda: x - y, "mul": lambda: x * y,
                  "div": lambda: x / y, "fma": lambda: x * y + z}[op]()
    if math.isnan(result):
        return 0x7FFF
    if math.isinf(result) or any(math.isinf(v) for v in (x, y, z)) or result == 0:
        return _bits(result)
    X, Y, Z = Fraction(x), Fraction(y), Fraction(z)
    exact = {"add": lambda: X + Y, "sub": lambda: X - Y, "mul": lambda: X * Y,
             "div": lambda: X / Y, "fma": lambda: X * Y + Z}[op]()
    return _nearest_bf16(exact) if exact else _bits(result)


def _cases(count: int) -> list[tuple[str, int, int, int]]:
    """Random operands (any bits, near 1, subnormal, special), and fma cases whose product lies
    exactly halfway between two bf16 values with a tiny addend: where rounding the sum to float
    first, then to bf16, goes wrong."""
    import random
    from fractions import Fraction

    rng = random.Random(12)
    special = (0, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0xFFC1, 0x7F81, 0x7F7F, 0xFF7F, 1, 0x8001)

    def operand() -> int:
        kind = rng.random()
        sign = rng.getrandbits(1) << 15
        if kind < 0.5:
            return rng.getrandbits(16)
        if kind < 0.75:
            return sign | (rng.randint(124, 130) << 7) | rng.getrandbits(7)
        if kind < 0.9:
            return sign | (rng.randint(0, 2) << 7) | rng.getrandbits(7)
        return rng.choice(special)

    cases = [(rng.choice(("add", "sub", "mul", "div", "fma")), operand(), operand(), operand())
             for _ in range(count)]
    cases += [("convert", rng.getrandbits(16), rng.choice((0, 0x8000, rng.getrandbits(16))), 0)
              for _ in range(count // 5)]
    ties = 0
    while ties < count // 10:
        a, b = ((rng.randint(125, 129) << 7) | rng.getrandbits(7) for _ in range(2))
        product = Fraction(_value(a)) * Fraction(_value(b))
        exponent = product.numerator.bit_length() - product.denominator.bit_length()
        scaled = product / Fraction(2) ** (exponent - 8)
        if scaled.denominator == 1 and scaled.numerator % 2 == 1:  # halfway
            tiny = (rng.getrandbits(1) << 15) | (rng.randint(10, 100) << 7) | rng.getrandbits(7)
            cases.append(("fma", a, b, tiny))
            ties += 1
    return cases


SUPPORT_PROBE = r"""
#include "rocmigrate_bf16.h"
#include <cstdio>
#include <cstring>
int main() {
  char op[8];
  unsigned a, b, c;
  while (std::scanf("%7s %x %x %x", op, &a, &b, &c) == 4) {
    hip_bfloat16 x = rocmigrate_ushort_as_bfloat16(a), y = rocmigrate_ushort_as_bfloat16(b);
    hip_bfloat16 z = rocmigrate_ushort_as_bfloat16(c), r;
    if (!std::strcmp(op, "add")) r = rocmigrate_hadd(x, y);
    else if (!std::strcmp(op, "sub")) r = rocmigrate_hsub(x, y);
    else if (!std::strcmp(op, "mul")) r = rocmigrate_hmul(x, y);
    else if (!std::strcmp(op, "div")) r = rocmigrate_hdiv(x, y);
    else if (!std::strcmp(op, "fma")) r = rocmigrate_hfma(x, y, z);
    else {
      unsigned bits = (a << 16) | b;
      float f;
      std::memcpy(&f, &bits, sizeof f);
      r = rocmigrate_float2bfloat16(f);
    }
    std::printf("%04x\n", rocmigrate_bfloat16_as_ushort(r));
  }
}
"""


@pytest.mark.slow
def test_the_support_header_rounds_as_cuda(tmp_path: Path):
    """rocmigrate_bf16.h's arithmetic and conversion, built by hipcc (HIP 5.2, host side: the
    same code as the device's), against an exact rational reference on random operands and on
    the fma cases that rounding through float gets wrong: every result bit for bit. (Against
    CUDA 13's own intrinsics on an H200 they agree on all 2^32 operand pairs of add, sub, mul,
    div and fma, and on every float converted.)"""
    import os
    import subprocess

    from conftest import require_tool

    (tmp_path / "rocmigrate_bf16.h").write_text(_support_header("5.2"))
    probe = tmp_path / "probe.cpp"
    probe.write_text(SUPPORT_PROBE)
    env = dict(os.environ, HIP_PLATFORM="amd", TMPDIR=str(tmp_path))
    built = subprocess.run([require_tool("hipcc"), "--offload-arch=gfx90a", "-std=c++17", "-O1",
                            str(probe), "-o", str(tmp_path / "probe")],
                           capture_output=True, text=True, env=env, timeout=300)
    assert built.returncode == 0, built.stderr[-3000:]
    cases = _cases(6000)
    ran = subprocess.run([str(tmp_path / "probe")], capture_output=True, text=True, check=True,
                         input="".join(f"{op} {a:x} {b:x} {c:x}\n" for op, a, b, c in cases))
    results = [int(word, 16) for word in ran.stdout.split()]
    assert len(results) == len(cases)
    wrong = [(case, hex(got)) for case, got in zip(cases, results) if got != _cuda_result(*case)]
    assert wrong == []


def test_markers_quote_lowered_names_as_the_conversion_writes_them():
    """A marker quoting code in HIP spelling writes a lowered name as its lowering does: a row
    whose replacement is the support header's function (empty in the table) is quoted by that
    name, not dropped (``__ushort_as_bfloat16(x)`` was quoted as ``(x)``)."""
    from rules.markers import _output_spelling

    spelling = _output_spelling(apitables.load(), parse_version("5.2"), True)
    assert spelling["__ushort_as_bfloat16"] == "rocmigrate_ushort_as_bfloat16"
    assert all(spelling.values())
