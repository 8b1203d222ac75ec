"""VER001: CUDA toolkit version macros in #if conditions, which HIP leaves undefined."""

from __future__ import annotations

import functools
import re

from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Rule, RuleContext

from ..cuda_context import in_cuda_context
from ._tables import table

# a conditional directive and its condition (continued lines included, comments blanked in
# the code view): #if / #elif / #ifdef / #ifndef
_CONDITIONAL = re.compile(rb"^[ \t]*#[ \t]*(if|elif|ifdef|ifndef)\b((?:[^\n\\]|\\.|\\\n)*)",
                          re.MULTILINE)


@functools.lru_cache(maxsize=1)
@functools.lru_cache(maxsize=1)
def version_macros() -> dict[str, str]:
    """The version macros and the value the port takes for each (CUDA 13.0's). (Callers only
    read it.)"""
    return {row["name"]: row["value"] for row in table("cuda_version_macros.tsv")}


@functools.lru_cache(maxsize=1)
def _macro_names() -> tuple[bytes, ...]:
    """The version macros' names as bytes (what a file is searched for)."""
    return tuple(name.encode() for name in version_macros())


@functools.lru_cache(maxsize=1)
def _names() -> re.Pattern[bytes]:
    alternatives = b"|".join(re.escape(name.encode()) for name in version_macros())
    return re.compile(rb"\bdefined\s*\(\s*(" + alternatives + rb")\s*\)|\bdefined\s+("
                      + alternatives + rb")\b|\b(" + alternatives + rb")\b")


def folded(ctx: RuleContext, name: str, offset: int) -> bool:
    """Is ``name`` at ``offset`` a version macro that VER001 folds (in a conditional
    directive's condition)? The renames then leave it to VER001."""
    if name not in version_macros():
        return False
    spans = ctx.cache.get("version_conditions")
    if spans is None:
        spans = ctx.cache["version_conditions"] = [
            found.span(2) for found in _CONDITIONAL.finditer(ctx.code)]
    return any(begin <= offset < end for begin, end in spans)


class CudaVersionGuards(Rule):
    """Fold CUDA version macros in ``#if`` conditions to modern CUDA's values.

    ## What it does
    In ``#if`` / ``#elif`` conditions, ``CUDART_VERSION``, ``CUDA_VERSION``,
    ``__CUDACC_VER_MAJOR__`` / ``_MINOR__`` / ``_BUILD__`` and ``__CUDA_API_VER_MAJOR__`` /
    ``_MINOR__`` become CUDA 13.0's values (13000, 13, 0...), ``defined(CUDART_VERSION)``
    becomes ``1``; ``#ifdef CUDART_VERSION`` becomes ``#if 1`` and ``#ifndef`` ``#if 0``, each
    with the macro's name in a comment beside the value. The rest of the condition is kept, so the branch the code takes on current CUDA is the one it
    takes under HIP, and both branches stay in the file. Uses outside conditions (printing the
    version) are API003 findings.

    ## Why is this bad on AMD
    HIP defines none of these macros (hip-clang's predefined macros and HIP's headers have no
    CUDA version), and an undefined name is 0 in an ``#if``: ``#if CUDART_VERSION >= 11000``
    silently takes the legacy branch, often code written for CUDA 8 (``__shfl`` without
    ``_sync``, deprecated APIs, workarounds), while HIP follows current CUDA's API.

    ## Example
    ```cpp
    #if CUDART_VERSION >= 11000
      cub_like_sort_v2(...);
    #else
      legacy_sort(...);
    #endif
    ```

    ## Use instead
    ```cpp
    #if 13000 /* CUDART_VERSION */ >= 11000
      cub_like_sort_v2(...);
    #else
      legacy_sort(...);
    #endif
    ```

    ## Fix safety
    Safe as a conversion: the port is the program as current CUDA builds it, which is what HIP's
    API follows. A branch that needs a feature HIP lacks is then reported by the other rules
    as on any modern CUDA code.
    """

    code = "VER001"
    name = "cuda-version-guard"
    summary = "CUDA version macro in an #if (undefined under HIP: the legacy branch)"
    family = "portability"
    fix = "always"

    def check(self, ctx: RuleContext):
        code = ctx.code
        macros = version_macros()
        if not any(name in code for name in _macro_names()) or not in_cuda_context(ctx):
            return  # a C++ library header's test of nvcc is no CUDA code
        for directive in _CONDITIONAL.finditer(code):
            kind = directive.group(1)
            begin, end = directive.span(2)
            if kind in (b"ifdef", b"ifndef"):
                name = code[begin:end].strip().decode("utf-8", "replace")
                if name in macros:
                    value = b"1" if kind == b"ifdef" else b"0"
                    yield self._finding(name, f"#{kind.decode()} {name}",
                                        directive.start(1), end, b"if " + value)
                continue
            for found in _names().finditer(code, begin, end):
                name = next(group for group in found.groups() if group).decode()
                whole = found.group(3) is None  # defined(NAME): the test, not the value
                value = "1" if whole else macros[name]
                yield self._finding(name, f"{name} in #{kind.decode()}", found.start(),
                                    found.end(), value.encode())

    @staticmethod
    def _finding(name: str, where: str, start: int, end: int, value: bytes) -> Diagnostic:
        message = (f"{where}: HIP does not define {name}, so the condition would take CUDA's "
                   f"legacy branch; the port follows CUDA 13.0 ({value.decode()})")
        written = value + f" /* {name} */".encode()  # what was tested stays readable
        return Diagnostic("VER001", message, start, end,
                          Fix(f"{name} as CUDA 13.0", (Edit(start, end, written),)),
                          library="runtime", symbol=name, severity="info")
