"""Converting the output again changes nothing (README): a property over generated CUDA-like
text and over every fixture input and kernels/ program under every settings combination, and a
regression test for each cause found.

``ROCMIGRATE_HYPOTHESIS_EXAMPLES`` raises the number of generated examples (default 250) for a
longer local search; the examples are derandomised, so CI runs the same ones every time.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings as hypothesis_settings
from hypothesis import strategies as st

from conftest import ROOT
from migrator import apitables
from migrator.convert import convert_bytes
from migrator.rule import Marker, RuleContext
from migrator.settings import Settings
from migrator.source import Source
from migrator.versions import parse_version
from rules.markers import marker_fix, unproven_fix
from rules.target_names import renamable
from strategies import cuda_text, file_names

ROCM_52 = parse_version("5.2")
VARIANTS = {
    "default": Settings(),
    "rocm52-ggl-noopt": Settings(rocm=ROCM_52, launch_syntax="ggl", optimize=False),
}
# every combination of the settings that change what convert writes
COMBINATIONS = [Settings(rocm=rocm, launch_syntax=launch, optimize=optimize, rename_ext=rename)
                for rocm, launch, optimize, rename in itertools.product(
                    (Settings().rocm, ROCM_52), ("chevron", "ggl"), (True, False), (False, True))
                ] + [Settings(unsafe_fixes=True)]
EXAMPLES = int(os.environ.get("ROCMIGRATE_HYPOTHESIS_EXAMPLES", "250"))


def converted(text: str | bytes, name: str = "app.cu", settings: Settings = Settings()) -> bytes:
    data = text.encode() if isinstance(text, str) else text
    result = convert_bytes(name, data, settings)
    assert result.status != "failed", result.message
    return result.output


def assert_idempotent(text: str | bytes, name: str = "app.cu",
                      settings: Settings = Settings()) -> bytes:
    """Convert ``text``, convert the output again, and check that nothing changed; returns the
    output of the first conversion."""
    once = converted(text, name, settings)
    twice = converted(once, name, settings)
    assert twice == once, (f"second pass changed {name}:\n--- first\n{once.decode()}\n"
                           f"--- second\n{twice.decode()}")
    return once


# --- the property ---------------------------------------------------------------------------


@hypothesis_settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(text=cuda_text(), name=file_names(), variant=st.sampled_from(sorted(VARIANTS)))
def test_converting_the_output_again_changes_nothing(text, name, variant):
    settings = VARIANTS[variant]
    once = convert_bytes(name, text.encode(), settings)
    if once.status == "failed":
        return  # refused input (not C/C++, or a fix that would break the parse): nothing written
    twice = convert_bytes(name, once.output, settings)
    assert twice.status != "failed", twice.message
    assert twice.output == once.output


def _corpus() -> list[Path]:
    fixtures = ROOT / "fixtures"
    inputs = [p for p in sorted((fixtures / "rules").glob("*/*"))
              if p.is_file() and ".fixed." not in p.name and p.suffix != ".snapshot"
              and p.parent.name != "_shims"]
    inputs += [p for p in sorted((fixtures / "convert").glob("*/input/**/*")) if p.is_file()]
    return inputs + sorted((ROOT / "kernels").glob("*.*"))


@pytest.mark.parametrize("path", _corpus(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_fixtures_and_kernels_convert_idempotently(path: Path):
    data = path.read_bytes()
    for settings in COMBINATIONS:
        once = convert_bytes(path.name, data, settings)
        if once.status == "failed":
            continue
        twice = convert_bytes(path.name, once.output, settings)
        assert twice.status != "failed", (settings, twice.message)
        assert twice.output == once.output, settings


def test_corpus_is_found():
    names = {p.name for p in _corpus()}
    assert {"reduction.cu", "stream_pipeline.cu"} <= names and len(names) > 60


# --- markers --------------------------------------------------------------------------------


def test_marker_goes_above_the_suppression_of_its_line():
    """A marker written between ``// rocmigrate: ignore[...]`` and its line would take the
    suppression's place: the second pass renamed what the first had been told to leave."""
    text = "// rocmigrate: ignore[API001]\nint x = CUDART_2_OVER_PI + _Pow_int(2, 3);\n"
    once = assert_idempotent(text, "app.cpp").decode()
    lines = once.splitlines()
    assert lines[-2:] == ["// rocmigrate: ignore[API001]",
                          "int x = CUDART_2_OVER_PI + _Pow_int(2, 3);"]
    assert lines[-3].startswith("// rocmigrate API003: _Pow_int")  # after the added includes


def test_marker_goes_above_a_suppression_written_after_another_comment():
    text = ("// rocmigrate API002: cudaFoo has no HIP equivalent // rocmigrate: ignore[API001]\n"
            "int x = CUDART_2_OVER_PI + _Pow_int(2, 3);\n")
    once = assert_idempotent(text, "app.cpp").decode()
    assert "CUDART_2_OVER_PI" in once and once.index("API003") < once.index("ignore[API001]")


@pytest.mark.parametrize("text", [
    "int y = x.\nCUDART_2_OVER_PI + _Pow_int(2, 3);\n",
    "int y = p ->\n  CUDART_2_OVER_PI + _Pow_int(2, 3);\n",
])
def test_member_name_stays_a_member_after_a_marker_line(text):
    """``x.\\nname`` is a member access; a marker written above ``name``'s line must not turn
    it into code that the second pass renames."""
    once = assert_idempotent(text).decode()
    assert "CUDART_2_OVER_PI" in once and "_Pow_int" in once


def test_comment_ending_with_a_dot_does_not_make_the_next_name_a_member():
    once = converted("// allocate the buffer, e.g.\ncudaMalloc(&p, n);\n// or.\ncudaFree(p);\n")
    assert b"hipMalloc(&p, n)" in once and b"hipFree(p)" in once


def test_name_after_a_comment_ending_with_a_dot_is_found_by_every_rule():
    """Rules that look names up with calls.find_name took a name after '// ... .' for a member;
    once a marker line stood between, the second pass found it (LOW002 here)."""
    text = "// x.\n__bfloat162float CUDART_2_OVER_PI\n"
    once = assert_idempotent(text, settings=Settings(rocm=ROCM_52)).decode()
    assert "// rocmigrate LOW002: __bfloat162float" in once


def _context(text: str, settings: Settings = Settings()) -> RuleContext:
    return RuleContext(Source("app.cu", text.encode()), settings, apitables.load())


def test_unproven_marker_names_apis_in_hip_spelling():
    """The marker quotes the converted code: a library call in it is named as the output names
    it (a re-run reads the HIP name and must find the same marker), and a name without a HIP
    equivalent in the target is kept, not erased."""
    ctx = _context("void f() {}\n")
    message = ("'s' is passed to cusparseSetStream() at line 3; cudaMemcpy; cudaErrorLossyQuery; "
               "cuStreamSynchronize on the null stream")
    fix = unproven_fix(ctx, 0, "STM001", message)
    text = fix.edits[0].text.decode()
    assert ("'s' is passed to hipsparseSetStream(); hipMemcpy; cudaErrorLossyQuery; "
            "hipStreamSynchronize on the null stream") in text
    old = unproven_fix(_context("void f() {}\n", Settings(rocm=ROCM_52)), 0, "STM001",
                       "__nv_bfloat16 at line 2")
    assert "__nv_bfloat16" in old.edits[0].text.decode()  # not renamed before ROCm 6.0


def _marker_fix_at(text: str, site: str, marker_text: str, name: str = "app.cu"):
    ctx = RuleContext(Source(name, text.encode()), Settings(), apitables.load())
    return marker_fix(ctx, text.index(site), Marker("API003", marker_text))


def test_an_inline_marker_counts_where_a_marker_line_would_be_written():
    """Whether a marker goes inline or on a line of its own can change between passes (another
    rule's edit changes how the line starts): either form already there is the marker."""
    text = "f(/* rocmigrate API003: __isnan is CUDA's */ __isnan(x));\n"
    assert _marker_fix_at(text, "__isnan(x)", "__isnan is CUDA's") is None


def test_every_inline_marker_before_the_site_counts():
    text = ("#define M(x) \\\n  /* rocmigrate API003: first */ /* rocmigrate API003: second */ "
            "__isnan(x) \\\n  + 1\n")
    assert _marker_fix_at(text, "__isnan(x)", "first") is None
    assert _marker_fix_at(text, "__isnan(x)", "second") is None
    fix = _marker_fix_at(text, "__isnan(x)", "third")
    assert fix.edits[0].text == b"/* rocmigrate API003: third */ "


def test_a_line_that_starts_with_a_literal_gets_a_marker_line():
    """Only a line that starts inside a comment or literal needs an inline marker."""
    fix = _marker_fix_at('"%d\\n", __isnan(x));\n', "__isnan", "m")
    assert fix.edits[0].text == b"// rocmigrate API003: m\n" and fix.edits[0].start == 0
    fix = _marker_fix_at("/* a comment\n */ __isnan(x);\n", "__isnan", "m")
    assert fix.edits[0].text == b"/* rocmigrate API003: m */ "


def test_marker_quoting_code_that_a_lowering_rewrote_is_found_again():
    """LOW001's marker quotes the argument it could not prove exact; LOW001 lowered the
    ``__bfloat162float`` inside that argument in the same pass, so the second pass quotes
    ``static_cast<float>(...)``: the same marker, read as converted."""
    text = ("#include <cuda_bf16.h>\n__global__ void k(nv_bfloat16* out) {\n"
            "  out[1] = nv_bfloat16(__bfloat162float(out[threadIdx.x]));\n}\n")
    once = assert_idempotent(text, settings=Settings(rocm=ROCM_52)).decode()
    assert once.count("// rocmigrate LOW001") == 1 and "static_cast<float>(out" in once


def test_shortened_quote_is_taken_from_the_converted_code():
    """A quote shortened with '...' is cut from the code as converted: cut from the input, it
    ended elsewhere once ``__bfloat162float`` had become ``static_cast<float>``, and the second
    pass wrote a second marker (cuda/std/__cmath/lerp.h in CUDA 13's headers)."""
    text = ("#include <cuda_bf16.h>\n__device__ __nv_bfloat16 mix(__nv_bfloat16 a, __nv_bfloat16 b,"
            " __nv_bfloat16 t) {\n  return __nv_bfloat16(blend_values(__bfloat162float(a), "
            "__bfloat162float(b), __bfloat162float(t)));\n}\n")
    once = assert_idempotent(text, settings=Settings(rocm=ROCM_52)).decode()
    assert "the conversion of blend_values(static_cast<float>(a), s... to it" in once


def test_include_is_not_inserted_between_a_marker_and_its_line():
    once = assert_idempotent("x _Pow_int __global__\n").decode()
    assert once.splitlines()[-2:] == [
        "// rocmigrate API003: _Pow_int has no HIP equivalent in ROCm 6.4", "x _Pow_int __global__"]


# --- streams handed to libraries, in either spelling ------------------------------------------


def _set_stream_calls() -> list[tuple[str, str]]:
    """(CUDA name, HIP name) of every library's call that gives it a stream, from the tables."""
    names = apitables.load().names.values()
    return sorted((e.cuda, e.hip) for e in names if e.kind == "function" and e.hip
                  and e.cuda.endswith(("SetStream", "SetStream_v2")) and e.library
                  not in ("runtime", "driver"))


def test_set_stream_calls_are_found_in_the_tables():
    found = dict(_set_stream_calls())
    assert found["cusparseSetStream"] == "hipsparseSetStream"
    assert found["cusolverSpSetStream"] == "hipsolverSpSetStream"
    assert {"cublasSetStream", "cufftSetStream", "curandSetStream"} <= set(found)


@pytest.mark.parametrize("cuda, hip", _set_stream_calls())
@pytest.mark.parametrize("written", ["cuda", "hip"])
def test_stream_handed_to_a_library_is_judged_alike_in_both_spellings(cuda, hip, written):
    """STM001 keeps a stream blocking when it is handed to a library (other code may rely on the
    null stream's ordering). HIP spellings of these calls used to pass as runtime APIs, so the
    second pass rewrote the stream the first pass had judged unsafe."""
    call = cuda if written == "cuda" else hip
    text = (f"__global__ void k(float* d) {{}}\n"
            f"void f(float* d, void* handle) {{\n  cudaStream_t s;\n  cudaStreamCreate(&s);\n"
            f"  {call}(handle, s);\n  k<<<1, 1, 0, s>>>(d);\n}}\n")
    once = assert_idempotent(text).decode()
    assert "hipStreamCreate(&s);" in once and "hipStreamNonBlocking" not in once
    # named as the output calls it (cuDNN is reported, not converted)
    renamed = renamable(apitables.load().names[cuda], Settings().rocm)
    shown = hip if written == "hip" or renamed else cuda
    assert f"'s' is passed to {shown}()" in once


@pytest.mark.parametrize("written", ["cuda", "hip"])
def test_library_work_without_a_set_stream_relies_on_the_null_stream(written):
    create, generate = (("curandCreateGenerator", "curandGenerateUniform") if written == "cuda"
                        else ("hiprandCreateGenerator", "hiprandGenerateUniform"))
    text = (f"__global__ void k(float* d) {{}}\n"
            f"void f(float* d, void* gen) {{\n  cudaStream_t s;\n  cudaStreamCreate(&s);\n"
            f"  {create}(&gen, 0);\n  {generate}(gen, d, 10);\n  k<<<1, 1, 0, s>>>(d);\n}}\n")
    once = assert_idempotent(text).decode()
    assert "hipStreamNonBlocking" not in once
    assert "hiprandCreateGenerator (library work runs on the null stream" in once


def test_driver_spellings_of_streams_are_the_runtime_ones():
    """``CUstream`` declares a local stream and ``cuStreamSynchronize((CUstream)0)`` waits on the
    null stream, exactly as their HIP names do after conversion."""
    local = ("__global__ void k(float* d) {}\n"
             "void f(float* d) {\n  CUstream s;\n  cudaStreamCreate(&s);\n"
             "  k<<<1, 1, 0, s>>>(d);\n  cuStreamSynchronize(s);\n}\n")
    once = assert_idempotent(local).decode()
    assert "hipStreamCreateWithFlags(&s, hipStreamNonBlocking)" in once
    null = local.replace("cuStreamSynchronize(s)", "cuStreamSynchronize((CUstream)0)")
    once = assert_idempotent(null).decode()
    assert "hipStreamSynchronize on the null stream" in once and "hipStreamNonBlocking" not in once


# --- includes ---------------------------------------------------------------------------------


def test_runtime_api_header_gets_the_runtime_in_the_first_pass():
    """``cuda_runtime_api.h`` becomes ``hip/hip_runtime_api.h``, which does not provide the
    runtime (kernels, threadIdx): the first pass adds ``hip/hip_runtime.h`` as the second did."""
    once = assert_idempotent("#include <cuda_runtime_api.h>\n__global__ void k() {}\n").decode()
    assert "#include <hip/hip_runtime.h>" in once and "#include <hip/hip_runtime_api.h>" in once
    for provider in ("cuda.h", "cuda_runtime.h", "hip/hip_runtime.h"):
        once = converted(f"#include <{provider}>\n__global__ void k() {{}}\n").decode()
        assert once.count("#include <hip/hip_runtime.h>") == 1, provider


# --- CUDA context -----------------------------------------------------------------------------

# Short excerpts of glibc's and libstdc++'s headers (Debian 12), which declare and use the same
# names as CUDA's device functions.
GLIBC_MATHCALLS = """\
/* Return nonzero value if X is a NaN.  */
__MATHDECL_1 (int,__isnan,, (_Mdouble_ __value)) __attribute__ ((__const__));
extern int __isnan (double __value) __THROW __attribute__ ((__const__));
extern int __finite (double __value) __THROW __attribute__ ((__const__));
extern int __signbit (double __value) __THROW __attribute__ ((__const__));
extern int __isinf (double __value) __THROW __attribute__ ((__const__));
extern int __isnanl (long double __value) __THROW __attribute__ ((__const__));
extern int __finitel (long double __value) __THROW __attribute__ ((__const__));
extern int __isinfl (long double __value) __THROW __attribute__ ((__const__));
"""
GLIBC_MATH_H = """\
# if __GNUC_PREREQ (4,4) && !defined __SUPPORT_SNAN__
#  define isnan(x) __builtin_isnan (x)
# else
#  define isnan(x) __MATH_TG ((x), __isnan, (x))
# endif
#  define signbit(x) __MATH_TG ((x), __signbit, (x))
#  define isfinite(x) __MATH_TG ((x), __finite, (x))
"""
LIBSTDCXX_SPECIAL = """\
    template<typename _Tp>
    inline bool __isnan(_Tp __x)
    { return std::isnan(__x); }
    template<>
    inline bool __isnan<float>(float __x)
    { return __builtin_isnanf(__x); }
"""
LLVM_APINT = "  APInt umin(const APInt &RHS) const { return ult(RHS) ? *this : RHS; }\n"
C_LIBRARY_HEADERS = {"mathcalls-helper-functions.h": GLIBC_MATHCALLS, "math.h": GLIBC_MATH_H,
                     "special_function_util.h": LIBSTDCXX_SPECIAL, "APInt.h": LLVM_APINT}


@pytest.mark.parametrize("name", sorted(C_LIBRARY_HEADERS))
def test_c_library_headers_are_not_cuda(name):
    """``__isnan``, ``__finite``, ``umin``... in a file with no CUDA at all are the C library's."""
    result = convert_bytes(name, C_LIBRARY_HEADERS[name].encode(), Settings())
    assert result.status == "unchanged", result.output.decode()
    assert not result.findings


@pytest.mark.parametrize("name, context", [
    ("math_kernels.cu", ""),
    ("math.h", "__device__ inline float twice(float v) { return 2 * v; }\n"),
    ("math.h", "#include <cuda_runtime.h>\n"),
    ("math.h", "#include <hip/hip_runtime.h>\n"),
    ("math.h", "inline void release(void* p) { cudaFree(p); }\n"),
    ("math.h", "inline void release(void* p) { hipFree(p); }\n"),
    ("math.cpp", "#define LAUNCH k<<<1, 1>>>()\n"),
])
def test_the_same_names_are_cuda_in_cuda_context(name, context):
    text = context + GLIBC_MATHCALLS
    once = assert_idempotent(text, name).decode()
    for device_function in ("__isnanl", "__finitel", "__isinfl"):  # CUDA's; HIP has none
        assert f"// rocmigrate API003: {device_function} has no HIP equivalent" in once
    for kept in ("__isnan", "__finite", "__signbit", "__isinf"):  # clang's HIP headers have them
        assert f"API003: {kept} " not in once


@pytest.mark.parametrize("context", [
    "#if defined(__CUDACC__)\n#endif\n", "// see cudaMalloc\n", 'const char* s = "__global__";\n',
    "#include <cuda_runtime_helper.h>\n",
])
def test_what_is_not_cuda_context(context):
    """A test for the CUDA compiler, a CUDA name in a comment or a string, an unknown header."""
    result = convert_bytes("math.h", (context + GLIBC_MATHCALLS).encode(), Settings())
    assert not [f for f in result.findings if f.code == "API003"]


@pytest.mark.parametrize("directive", ["#pragma once", "#pragma unroll", "#endif", "#define EPS 1."])
def test_a_directive_above_a_call_is_not_code_of_its_statement(directive):
    # found by the property: the include the first pass inserts above the call changed what
    # the look-back before 'cudaStreamCreate' read ('once', a type to it), so only the second
    # pass saw a call and marked it
    text = f"__global__\n{directive}\ncudaStreamCreate(&s); "
    assert_idempotent(text, "soup.cu", Settings(launch_syntax="ggl"))
    inside = f"#include <cuda_runtime.h>\nvoid f(cudaStream_t* s) {{\n{directive}\n" \
             "cudaStreamCreate(s);\n}\n"
    once = assert_idempotent(inside)
    assert b"// rocmigrate STM001" in once  # the call is seen (reached through a pointer)


def test_names_the_target_lacks_ask_for_no_runtime_include():
    """CUDA names ROCm 5.2 lacks are marked, not ported: they ask for no hip_runtime.h, on the
    first pass (where the broken text hid them from the parse) or the second (where the marker
    lines let it read them)."""
    text = ("CUDART_INF #include <Openacc/cupti_openacc.h>\n"
            " CUDART_2_OVER_PI CUDART_2_OVER_PI_F ")
    once = assert_idempotent(text, settings=VARIANTS["rocm52-ggl-noopt"])
    assert b"hip_runtime" not in once
    # at a target that has them, they are renamed and do ask for the runtime
    assert b"HIP_2_OVER_PI_F" in converted("float f() { return CUDART_2_OVER_PI_F; }\n")


def test_a_support_header_in_a_converted_tree_teaches_the_rules_nothing(tmp_path: Path):
    """Converting an output tree again: the rocmigrate_bf16.h written beside it is no project
    file the rules read (its rocmigrate_bfloat162float takes a bf16: LOW001 would mark values
    passed to it on the second pass only, CCCL's nvbf16.h at ROCm 5.2)."""
    from migrator import runner

    source = tmp_path / "src"
    source.mkdir()
    (source / "k.cu").write_bytes(
        b"#include <cuda_bf16.h>\n"
        b"template <class T> struct Wrap { T x; __device__ T get() const { return x; } };\n"
        b"__device__ float first(Wrap<__nv_bfloat16> w) { return __bfloat162float(w.get()); }\n")
    settings = Settings(rocm=ROCM_52)
    runner.run(runner.RunOptions(source, tmp_path / "once"), settings)
    assert (tmp_path / "once" / "rocmigrate_bf16.h").is_file()
    runner.run(runner.RunOptions(tmp_path / "once", tmp_path / "twice"), settings)
    assert (tmp_path / "twice" / "k.cu").read_bytes() == (tmp_path / "once" / "k.cu").read_bytes()
