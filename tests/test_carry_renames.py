"""A fix whose edits cover renames carries them (engine._carry_renames): it applies in the
round that found it, its text renamed by the renamer (ApiRename.rename_text), instead of
waiting a round for the renames to be made first. Outputs are what the rounds made."""

from __future__ import annotations

import pytest

from repo_sources import cuda_sources

from migrator import apitables, engine
from migrator.convert import convert_bytes, rules_for
from migrator.rule import RuleContext
from migrator.settings import Settings
from migrator.source import Source

from rules.api.rename import ApiRename


def _renamed(data: bytes, old: bytes, new: bytes, settings: Settings = Settings()):
    """ApiRename.rename_text for ``new`` written over the first ``old`` in ``data``."""
    ctx = RuleContext(Source("t.cu", data), settings, apitables.load())
    start = data.index(old)
    return ApiRename().rename_text(ctx, start, start + len(old), new)


def test_rename_text_renames_plain_names_in_code_only():
    data = b"void f(cudaStream_t s) {\n  cudaStreamCreate(&s);\n}\n"
    assert _renamed(data, b"cudaStreamCreate", b"cudaStreamCreateWithFlags") == (
        b"hipStreamCreateWithFlags")
    assert _renamed(data, b"(&s)", b"(&s, cudaStreamNonBlocking)") == (
        b"(&s, hipStreamNonBlocking)")
    # names in the text's comments and literals stay, as the next round leaves them
    text = b'/* cudaMemcpy */ cudaMemcpy(a, b, n, cudaMemcpyDefault); puts("cudaMemcpy");'
    assert _renamed(data, b"cudaStreamCreate(&s);", text) == (
        b'/* cudaMemcpy */ hipMemcpy(a, b, n, hipMemcpyDefault); puts("cudaMemcpy");')
    # a text with no API name at all comes back as it is
    assert _renamed(data, b"(&s)", b"(&s, 0)") == b"(&s, 0)"


def test_rename_text_leaves_members_and_refuses_what_it_cannot_tell():
    data = b"void f(T x, T* p) {\n  g(x);\n}\n"
    assert _renamed(data, b"g(x)", b"x.cudaMalloc(0)") == b"x.cudaMalloc(0)"  # a member
    assert _renamed(data, b"g(x)", b"p->cudaMalloc(0)") is None  # a member or a return type
    # cudaMallocHost is ARG001's (it gets an argument): more than a rename
    assert _renamed(data, b"g(x)", b"cudaMallocHost(&p, 4)") is None
    # a name that may be a declared member (`int cudaMalloc;`): only a parse tells
    assert _renamed(data, b"g(x);", b"int cudaMalloc;") is None
    # the text continues a word of the file: the word is judged whole
    assert _renamed(b"void f() {\n  gx(1);\n}\n", b"g", b"cudaFree") is None
    # a name the text's own code before makes plain code, after a keyword
    assert _renamed(data, b"g(x);", b"return cudaGetLastError();") == (
        b"return hipGetLastError();")


def test_rename_text_is_none_where_the_target_lacks_the_name():
    # ROCm 5.2 has no hipStreamCreateWithFlags counterpart issue, but lacks __hip_bfloat16:
    # a name that is no plain rename at the target is left to the next round
    data = b"void f() {\n  g();\n}\n"
    assert _renamed(data, b"g()", b"__nv_bfloat16 h", Settings(rocm=(5, 2, 0))) is None


STREAMS = (b"#include <cuda_runtime.h>\n"
           b"__global__ void k(float* x) { x[threadIdx.x] = 1.0f; }\n"
           b"int main() {\n"
           b"  float* d; cudaMalloc(&d, 256);\n"
           b"  cudaStream_t s;\n"
           b"  cudaStreamCreate(&s);\n"
           b"  k<<<1, 64, 0, s>>>(d);\n"
           b"  cudaStreamSynchronize(s);\n"
           b"  cudaStreamDestroy(s);\n"
           b"  return 0;\n"
           b"}\n")


def _fix(data: bytes, settings: Settings = Settings()):
    rules = [cls() for cls in rules_for(settings)]
    return engine.fix_source(Source("t.cu", data), rules, settings, apitables.load())


def test_a_fix_over_a_rename_applies_in_the_round_that_found_it(monkeypatch):
    carried = _fix(STREAMS)
    assert b"hipStreamCreateWithFlags(&s, hipStreamNonBlocking);" in carried.output
    assert carried.rounds == 1
    stm = [f for f in carried.findings if f.code == "STM001"]
    assert [(f.line, f.fixed) for f in stm] == [(6, True)]
    assert stm[0].message.startswith("cudaStreamCreate ")  # the input's words, as found
    # the same output as the rounds make without carrying, in one round instead of two
    monkeypatch.setattr(engine, "_carry_renames", lambda found, fixable: None)
    waited = _fix(STREAMS)
    assert waited.output == carried.output and waited.rounds == 2
    # the rename under the fix is reported as before (it took its place first); the fix's
    # finding moved from the second round's text to the input's
    key = lambda f: (f.code, f.symbol, f.fixed)  # noqa: E731
    assert sorted(map(key, carried.findings)) == sorted(map(key, waited.findings))


def test_a_rename_the_fix_replaces_is_superseded_not_reported(monkeypatch):
    # ARG001 rewrites cublasGemmEx's whole call, its pre-11 compute type CUDA_R_32F becoming
    # HIPBLAS_COMPUTE_32F: no API001 rename of CUDA_R_32F is reported, carried or not
    data = (b"#include <cublas_v2.h>\n"
            b"void gemm(cublasHandle_t h, const void* a, void* c, const float* s, int n) {\n"
            b"  cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, s, a, CUDA_R_16F, n, a,\n"
            b"               CUDA_R_16F, n, s, c, CUDA_R_32F, n, CUDA_R_32F,\n"
            b"               CUBLAS_GEMM_DEFAULT);\n}\n")
    carried = _fix(data)
    assert b"HIPBLAS_COMPUTE_32F" in carried.output
    renamed = sorted(f.symbol for f in carried.findings if f.code == "API001")
    assert renamed.count("CUDA_R_32F") == 1 and renamed.count("CUDA_R_16F") == 2
    monkeypatch.setattr(engine, "_carry_renames", lambda found, fixable: None)
    waited = _fix(data)
    assert waited.output == carried.output
    assert sorted(f.symbol for f in waited.findings if f.code == "API001") == renamed


def test_a_refused_fix_makes_its_renames_itself(monkeypatch):
    """Where the guard refuses a fix that carried renames, its marker stands in its place and
    the renames are made as renames: none is lost and none is reported twice."""
    real = engine._FixLoop._guard
    refused = []

    def refusing(self, found, edits, new_data, extra, guarded, settled):
        mine = [d for d in found.chosen if d.code == "STM001"]
        if mine and not refused:
            refused.append(mine[0])
            raise engine._SyntaxLost("test", [(0, len(new_data))])
        return real(self, found, edits, new_data, extra, guarded, settled)

    monkeypatch.setattr(engine._FixLoop, "_guard", refusing)
    monkeypatch.setattr(engine, "_guarded", lambda chosen, source, literals: [
        edit for diag in chosen if diag.code == "STM001" for edit in diag.fix.edits])
    result = _fix(STREAMS)
    assert refused
    code = [line for line in result.output.splitlines() if not line.lstrip().startswith(b"//")]
    assert b"  hipStreamCreate(&s);" in code and not any(b"cudaStream" in line for line in code)
    assert b"// rocmigrate STM001:" in result.output  # the refused fix's marker
    creates = [f for f in result.findings if f.symbol == "cudaStreamCreate"]
    assert [(f.code, f.line, f.fixed) for f in creates] == [("API001", 6, True)]


@pytest.mark.parametrize("settings", [Settings(), Settings(rocm=(5, 2, 0))],
                         ids=["rocm6.4", "rocm5.2"])
def test_carrying_and_waiting_agree_on_kernels_and_fixtures(monkeypatch, settings):
    """Every CUDA source in kernels/ and fixtures/ converts to the same output with the same
    findings (by code, name and whether fixed) whether fixes carry renames or wait for them,
    and carrying is taken on some of them."""
    paths = cuda_sources()
    assert len(paths) > 300
    taken = []
    real = engine._carry_renames

    def recording(found, fixable):
        carriers = real(found, fixable)
        taken.append(bool(carriers))
        return carriers

    monkeypatch.setattr(engine, "_carry_renames", recording)
    carried = [convert_bytes(path.name, path.read_bytes(), settings) for path in paths]
    assert taken.count(True) >= 5
    monkeypatch.setattr(engine, "_carry_renames", lambda found, fixable: None)
    key = lambda f: (f.code, f.symbol, f.fixed, f.kind)  # noqa: E731
    for path, first in zip(paths, carried):
        waited = convert_bytes(path.name, path.read_bytes(), settings)
        assert (first.status, first.output) == (waited.status, waited.output), path
        assert sorted(map(key, first.findings)) == sorted(map(key, waited.findings)), path
