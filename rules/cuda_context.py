"""CUDA context: is a file CUDA (or HIP) code at all?

Some names in the API tables are CUDA's only in CUDA code: device functions such as ``__isnan``,
``__finite`` or ``umin`` are also declared by glibc, libstdc++ and LLVM, and types such as
``memoryBarrier`` or ``cl_event_flags`` belong to other APIs too. A rule acts on such a name only
in a file with CUDA context:

- a ``.cu``, ``.cuh`` or ``.hip`` file;
- device code: a CUDA keyword (``__global__``, ``__device__``, ``threadIdx``...) or a launch;
- an ``#include`` of a CUDA header, or of the HIP header the conversion writes for one;
- a use of a CUDA API name whose spelling is CUDA's own (``cudaMalloc``, ``CUstream``,
  ``curandState``, ``__nv_bfloat16``), or of the HIP name the conversion writes for one.

The macros nvcc defines (``__CUDACC__``, ``__CUDA_ARCH__``...) are acted on in CUDA context only
too: glibc and libstdc++ test them to keep code from nvcc (``!defined(__CUDACC__)``), and a test
in a preprocessor condition is no use of CUDA. A project header that tests ``__CUDACC__`` to
write ``__host__ __device__`` has device code, so its test is still renamed.

A C library header has none of these. Converting a file never creates context it did not have,
so the output of a conversion is judged as its input was (idempotence).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from migrator.apitables import ApiEntry, ApiTables
from migrator.parsing.includes import INCLUDE
from migrator.parsing.tokens import LAUNCH_OPENING, blank_spans
from migrator.rule import RuleContext
from migrator.semantic.directives import directive_lines

CUDA_SOURCE_SUFFIXES = (".cu", ".cuh")
GPU_SOURCE_SUFFIXES = CUDA_SOURCE_SUFFIXES + (".hip",)
# A name is spelled as CUDA's own when a word of it starts with cu/CU/nv/NV (cudaMalloc,
# CUstream, make_cuComplex, __nv_bfloat16, CUDART_PI); HIP's, with hip/HIP or miopen/MIOPEN.
_CUDA_SPELLING = re.compile(r"(?:^|_)(?:cu|CU|Cu|nv|NV|Nv)")
_HIP_SPELLING = re.compile(r"(?:^|_)(?:hip|HIP|Hip|miopen|MIOPEN)")
_DEVICE_CODE = re.compile(rb"\b(?:__global__|__device__|__host__|__shared__|__constant__|"
                          rb"__managed__|threadIdx|blockIdx|blockDim|gridDim|"
                          rb"hipLaunchKernelGGL)\b|" + LAUNCH_OPENING)
# conditionals only test for CUDA (glibc: `#if defined __CUDACC__`); they are not a use (read
# from their '#', as directive_lines gives them), with the lines a backslash continues
_CONDITIONAL = re.compile(rb"#[ \t]*(?:if|ifdef|ifndef|elif|undef)\b[^\n]*")
_LOGICAL_LINE = re.compile(rb"(?:[^\n]*\\\r?\n)*[^\n]*")
_WORD = re.compile(rb"[A-Za-z_]\w*+")
# the macros nvcc defines while it compiles (__CUDACC__, __CUDACC_VER_MAJOR__, __CUDA_ARCH__,
# __CUDA_ARCH_LIST__, __NVCC__)
_COMPILER_MACRO = re.compile(r"__(?:CUDACC|CUDA_ARCH|NVCC)\w*")


def cuda_spelled(name: str) -> bool:
    """Is ``name`` spelled as CUDA's own (it cannot be another library's by accident)?"""
    return _CUDA_SPELLING.search(name) is not None


def compiler_macro(name: str) -> bool:
    """Is ``name`` a macro nvcc defines while it compiles (``__CUDACC__``, ``__CUDA_ARCH__``)?"""
    return _COMPILER_MACRO.fullmatch(name) is not None


def needs_cuda_context(entry: ApiEntry) -> bool:
    """Does a rule act on this table name only in a file with CUDA context? True for names that
    are not spelled as CUDA's own (``__isnan``, ``umin``, ``memoryBarrier``) and for the macros
    nvcc defines (``__CUDACC__``), which C and C++ library headers test."""
    return not cuda_spelled(entry.cuda) or compiler_macro(entry.cuda)


@dataclass(frozen=True)
class _Evidence:
    names: frozenset[bytes]  # CUDA-spelled API names and the HIP names they convert to
    headers: frozenset[str]  # CUDA headers of the header table and their HIP headers
    folders: tuple[str, ...]  # CUDA header folders of the table (``cub/``, ``cuda/``)


@functools.lru_cache(maxsize=8)
def _evidence(tables: ApiTables) -> _Evidence:
    names = set()
    for entry in tables.names.values():
        if entry.kind == "namespace" or not cuda_spelled(entry.cuda):
            continue
        names.add(entry.cuda.encode())
        if entry.hip and _HIP_SPELLING.search(entry.hip):
            names.add(entry.hip.encode())
    headers = {h for h in tables.headers if not h.endswith("/*")}
    headers |= {e.hip_header for e in tables.headers.values() if e.hip_header not in ("", "-")}
    headers |= {low.replacement for low in tables.lowerings.values() if low.kind == "header"}
    folders = tuple(h[:-1] for h in tables.headers if h.endswith("/*"))
    return _Evidence(frozenset(names), frozenset(headers), folders)


def in_cuda_context(ctx: RuleContext) -> bool:
    """Is this file CUDA (or HIP) code? Computed once per file, on first use."""
    found = ctx.cache.get("cuda_context")
    if found is None:
        found = ctx.cache["cuda_context"] = _has_cuda_context(ctx)
    return found


def _has_cuda_context(ctx: RuleContext) -> bool:
    if ctx.path.endswith(GPU_SOURCE_SUFFIXES):
        return True
    code = ctx.code  # comments, literals and includes blanked
    if _DEVICE_CODE.search(code):
        return True
    evidence = _evidence(ctx.tables)
    for line, match in directive_lines(INCLUDE, ctx.data):
        if ctx.literals.covering(line) != "include":
            continue
        header = match.group(2).decode("utf-8", "replace").strip()
        if header in evidence.headers or header.startswith(evidence.folders):
            return True
    code = blank_spans(code, _conditional_spans(code))
    # every word of the text at once (findall and the set test run in C: a plain C++ file has
    # tens of thousands of words and no CUDA name)
    return not evidence.names.isdisjoint(_WORD.findall(code))


def _conditional_spans(code: bytes):
    """(start, end) of each conditional directive, its continued lines included, in order."""
    end = 0
    for line, _ in directive_lines(_CONDITIONAL, code):
        if line >= end:  # not on a line a conditional above continues
            end = _LOGICAL_LINE.match(code, line).end()
            yield line, end
