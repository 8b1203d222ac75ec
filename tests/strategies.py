"""Hypothesis strategies: CUDA-like text for property tests of the converter.

The text is a soup of tokens that matter to the rules: CUDA and HIP API names sampled from the
API tables (runtime, driver, device functions, every library, unsupported and report-only names),
includes of CUDA and HIP headers from the header table, kernel qualifiers and launches, comments,
literals, preprocessor lines, punctuation, small statements the optimisation rules look for, lines
of the rule fixtures and kernels/, and rocmigrate's own marker and suppression comments. It need
not be valid C++: the converter must behave on anything a person may feed it.

Beside them, seeded random texts of a few pieces (random_texts, random_ranges): the inputs of
the tests that check a short cut against the scan it replaces, the same texts on every run.
"""

from __future__ import annotations

import random
from pathlib import Path

from hypothesis import strategies as st

from migrator import apitables

_TABLES = apitables.load()
_ROOT = Path(__file__).resolve().parent.parent


def _names(predicate) -> list[str]:
    return sorted(e.cuda for e in _TABLES.names.values() if predicate(e))


CUDA_RUNTIME = _names(lambda e: e.library in ("runtime", "driver") and e.status == "supported")
CUDA_DEVICE = _names(lambda e: e.library == "device")
CUDA_LIBRARIES = _names(lambda e: e.library not in ("runtime", "driver", "device")
                        and e.status == "supported")
CUDA_UNSUPPORTED = _names(lambda e: e.status != "supported")
HIP_NAMES = sorted({e.hip for e in _TABLES.names.values() if e.hip and e.hip != e.cuda})
LOWERED = sorted(_TABLES.lowerings)
CUDA_HEADERS = sorted(h.replace("*", "x.h") for h in _TABLES.headers)
HIP_HEADERS = sorted({e.hip_header for e in _TABLES.headers.values()
                      if e.hip_header not in ("", "-")} | {"hip/hip_runtime.h"})
# names the stream rules look for, so that streams, libraries and the null stream meet often
STREAM_NAMES = sorted(n for n in _TABLES.names if "Stream" in n or "Handle" in n
                      or n.endswith("Create"))

_CUDA_CODE = [
    "__global__", "__device__", "__host__", "__shared__", "__constant__", "extern", "static",
    "threadIdx.x", "blockIdx.x", "blockDim.x", "void", "int", "float", "double", "__half",
    "auto", "return", "if", "for", "while", "sizeof", "template <typename T>", "T",
    "k<<<g, b>>>(x);", "k<<<g, b, 0, s>>>(d);", "k<<<1, 32, 0, 0>>>(p);", "<<<", ">>>",
    "hipLaunchKernelGGL(k, g, b, 0, 0, x);", "hipLaunchKernelGGL(k, g, b, 0, s, x);",
    "cudaStream_t s;", "cudaStreamCreate(&s);", "hipStream_t s;", "hipStreamCreate(&s);",
    "cudaMemcpy(d, h, n, cudaMemcpyHostToDevice);", "hipMemcpy(d, h, n, hipMemcpyDefault);",
    "cudaMemcpyAsync(d, h, n, cudaMemcpyHostToDevice, s);", "cudaStreamSynchronize(s);",
    "cudaDeviceSynchronize();", "cudaEventRecord(e);", "cudaEventRecord(e, s);",
    "float* h = (float*)malloc(n);", "free(h);", "for (int i = 0; i < n; i++) {",
    "cudaMemcpy(d + i, h + i, 4, cudaMemcpyHostToDevice);", "cudaMallocHost(&h, n);",
    "cudaSetDevice(0);", "cudaSetDevice(1);", "cudaMalloc(&d, n);", "cudaFree(d);",
    "extern __shared__ float smem[];", "__shared__ float tile[32][32];", "tile[threadIdx.x][i]",
    "atomicAdd(&h, v);", "atomicAdd(p, 1.0f);", "*p = __hadd(*p, v);", "__half h;",
    "__shfl_down_sync(0xffffffff, v, 1)", "__ballot_sync(0xffffffff, p)", "warpSize",
    "cublasHandle_t hd; cublasCreate(&hd);", "cublasSetStream(hd, s);", "cusparseSetStream(sp, s);",
    "hipblasSetStream(hd, s);", "hipsparseSetStream(sp, s);", "cufftSetStream(plan, s);",
    "curandSetStream(gen, s);", "cusolverSpSetStream(sh, s);", "hipsolverSpSetStream(sh, s);",
    "cusolverDnSetStream(dh, s);", "cudnnSetStream(dn, s);", "use(s);",
    "cudaMemcpyToSymbol(sym, h, n);", "cudaFuncSetCacheConfig(k, c);",
    "asm volatile(\"mov.u32 %0, %%laneid;\" : \"=r\"(x));",
    "__isnan(x)", "__finite(x)", "__signbit(x)", "__isinf(x)", "umin(a, b)", "umax(a, b)",
    "extern int __isnan (double __value) __THROW __attribute__ ((__const__));",
    "__nv_bfloat16 b;", "__float2bfloat16(f)", "__CUDA_ARCH__", "__CUDACC__", "cub::", "cub",
]
_PUNCTUATION = ["{", "}", "(", ")", ";", ",", "&", "*", "=", "[", "]", "::", ".", "->", "<", ">",
                "0", "1", "x", "s", "d", "h", "n", "f()", "int f() {", "void g(float* p) {"]
_DIRECTIVES = ["#define M(x) ", "#define N 4", "#if 1", "#if 0", "#ifdef X", "#ifndef G",
               "#define G", "#else", "#elif 1", "#endif", "#pragma once", "\\\n",
               "#if defined(__CUDACC__)",
               "#if __has_include(<nccl.h>)", "#if __has_include(<cuda_runtime.h>)"]
_COMMENTS = ["// note cudaMalloc", "/* cudaFree(d) */", "/* block\n comment */", "// ", "/*", "*/",
             "// rocmigrate: ignore[API001]", "// rocmigrate: off", "// rocmigrate: on",
             "// rocmigrate: ignore-file[STM001]"]
_LITERALS = ['"cudaMalloc"', '"s"', "'c'", "'\\''", 'R"(cudaFree)"', '"unterminated']
_SEPARATORS = [" ", " ", " ", "\n", "\n", "\t", "", "\r\n"]


def _source_lines() -> list[str]:
    """The lines of the rule fixtures' inputs and of kernels/: real statements every rule
    looks for, to mix into the soup."""
    paths = [p for p in (_ROOT / "fixtures" / "rules").glob("*/*.cu") if ".fixed." not in p.name]
    paths += (_ROOT / "kernels").glob("*.cu")
    lines = {line.strip() for path in paths
             for line in path.read_text(encoding="utf-8").splitlines()}
    return sorted(line for line in lines if line and not line.startswith("// expect:"))


SOURCE_LINES = _source_lines()


@st.composite
def _marker(draw) -> str:
    """A rocmigrate marker comment, as a converted file carries them."""
    code = draw(st.sampled_from(["API002", "API003", "API004", "STM001", "STM002", "STM003",
                                 "XFR001", "XFR002", "HDR002", "ATM001", "ATM002", "SHM002"]))
    name = draw(st.sampled_from(CUDA_UNSUPPORTED + CUDA_RUNTIME[:50]))
    return f"// rocmigrate {code}: {name} has no HIP equivalent in ROCm 6.4"


@st.composite
def _include(draw) -> str:
    header = draw(st.sampled_from(CUDA_HEADERS + HIP_HEADERS + ["stdio.h", "math.h", "local.h"]))
    quote = draw(st.sampled_from(['<>', '""']))
    return f"#include {quote[0]}{header}{quote[1]}\n"


def tokens() -> st.SearchStrategy[str]:
    """One token of CUDA-like text (a name, a snippet, a directive, a comment, a literal...)."""
    return st.one_of(
        st.sampled_from(CUDA_RUNTIME), st.sampled_from(CUDA_DEVICE),
        st.sampled_from(CUDA_LIBRARIES), st.sampled_from(CUDA_UNSUPPORTED),
        st.sampled_from(HIP_NAMES), st.sampled_from(LOWERED), st.sampled_from(STREAM_NAMES),
        st.sampled_from(_CUDA_CODE), st.sampled_from(_CUDA_CODE),
        st.sampled_from(_PUNCTUATION), st.sampled_from(_PUNCTUATION),
        st.sampled_from(_DIRECTIVES), st.sampled_from(_COMMENTS), st.sampled_from(_LITERALS),
        _include(), _marker(), st.sampled_from(SOURCE_LINES), st.sampled_from(SOURCE_LINES),
    )


@st.composite
def cuda_text(draw, max_tokens: int = 60) -> str:
    """A soup of tokens joined by spaces, tabs and line breaks (LF or CRLF)."""
    parts = draw(st.lists(st.tuples(tokens(), st.sampled_from(_SEPARATORS)), max_size=max_tokens))
    return "".join(token + separator for token, separator in parts)


def file_names() -> st.SearchStrategy[str]:
    """The name the text is converted under (the suffix changes what some rules do)."""
    return st.sampled_from(["soup.cu", "soup.cuh", "soup.h", "soup.cpp", "soup.c", "soup.hip"])


# calls (API, library, launch) in statements: their brackets, names enclosing_call leaves out,
# what ends a statement or a block, and literals and comments that hide them
STATEMENT_PIECES = [b"s", b"f", b"for", b"if", b"sizeof", b"cudaMemcpy", b"hipStreamSynchronize",
                    b"cublasSgemm", b"cudaMemsetAsync", b"hipLaunchKernelGGL",
                    b"cudaDeviceSynchronize", b"cudaMalloc", b" ", b"\t", b"\n", b",", b";", b"(",
                    b")", b"[", b"]", b"{", b"}", b"<<<", b">>>", b"<", b">", b"/*", b"*/", b"//",
                    b'"', b"0", b"x::y", b"9"]


def random_texts(pieces: list[bytes], seed: int, count: int, length: int = 40):
    """``count`` texts of up to ``length`` pieces drawn from ``pieces`` (seeded: a failing
    text comes back on the next run)."""
    rng = random.Random(seed)
    for _ in range(count):
        yield _joined(rng, pieces, length)


def random_ranges(pieces: list[bytes], seed: int, count: int, length: int = 40):
    """(text, start, end): texts as random_texts draws them, each with a random range in it."""
    rng = random.Random(seed)
    for _ in range(count):
        data = _joined(rng, pieces, length)
        start = rng.randint(0, len(data))
        yield data, start, rng.randint(start, len(data))


def _joined(rng: random.Random, pieces: list[bytes], length: int) -> bytes:
    return b"".join(rng.choice(pieces) for _ in range(rng.randint(0, length)))
