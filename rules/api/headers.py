"""HDR001-HDR004: rewrite CUDA #include directives to their HIP headers, once, and the tests of
CUDA headers' include guards to the HIP headers' guards."""

from __future__ import annotations

import functools
import re

from migrator.apitables import ApiTables, HeaderEntry
from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Marker, Rule, RuleContext
from migrator.semantic.directives import directive_lines
from migrator.versions import format_version

from ..cuda_context import CUDA_SOURCE_SUFFIXES
from ..markers import marker_fix

# directives from their '#': directive_lines keeps those with only blanks before on their line
_INCLUDE = re.compile(rb'#[ \t]*include[ \t]*([<"])([^>"\n]*)[>"][^\n]*(?:\n|\Z)')
_HAS_INCLUDE = re.compile(rb'\b__has_include(?:_next)?\s*\(\s*([<"])([^>"\n]*)[>"]\s*\)')
_CONDITIONAL = re.compile(rb"#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b")
_DEVICE_CODE = re.compile(rb"__global__|<<<|__device__|__shared__|threadIdx|blockIdx")
# a conditional directive from its '#' (its first line): where a guard macro is tested
_GUARD_TEST_LINE = re.compile(rb"#[ \t]*(ifdef|ifndef|if|elif)\b[^\n]*")
# what comes before a tested macro on its directive line: '#ifdef ' or '... defined(' / 'defined '
_IFDEF_BEFORE = re.compile(rb"[ \t]*#[ \t]*ifn?def[ \t]+\Z")
_DEFINED_BEFORE = re.compile(rb"\bdefined[ \t]*(?:\([ \t]*)?\Z")
RUNTIME_HEADER = "hip/hip_runtime.h"


def lookup_header(headers: dict[str, HeaderEntry], name: str) -> HeaderEntry | None:
    """Exact entry, else the longest prefix entry written as ``dir/*``."""
    entry = headers.get(name)
    if entry is not None:
        return entry
    best = None
    for key, candidate in headers.items():
        if key.endswith("/*") and name.startswith(key[:-1]):
            if best is None or len(key) > len(best.cuda_header):
                best = candidate
    return best


def _includes(ctx: RuleContext) -> list[tuple[int, re.Match]]:
    """The file's ``#include`` lines (see directive_lines), read once for check and
    _has_runtime."""
    found = ctx.cache.get("hdr_includes")
    if found is None:
        found = ctx.cache["hdr_includes"] = list(directive_lines(_INCLUDE, ctx.data))
    return found


@functools.lru_cache(maxsize=8)
def _guard_names(tables: ApiTables) -> re.Pattern | None:
    """The CUDA guard macros of header_guards.tsv as one word pattern."""
    names = sorted(tables.header_guards, key=len, reverse=True)
    return re.compile(rb"\b(?:" + b"|".join(re.escape(n.encode()) for n in names) + rb")\b") \
        if names else None


def _blocks(ctx: RuleContext) -> list[tuple[int, int]]:
    """(offset, block id) at each conditional directive: includes in the same block can be
    deduplicated; includes in different #if branches cannot."""
    marks = [(0, 0)]
    stack = [0]
    next_id = 1
    for start, match in directive_lines(_CONDITIONAL, ctx.data):
        if ctx.literals.covering(start) is not None:
            continue
        directive = match.group(1)
        if directive in (b"if", b"ifdef", b"ifndef"):
            stack.append(next_id)
        elif directive in (b"elif", b"else"):
            stack[-1] = next_id
        elif len(stack) > 1:
            stack.pop()
        next_id += 1
        marks.append((start, stack[-1]))
    return marks


def _block_at(marks: list[tuple[int, int]], offset: int) -> int:
    block = 0
    for start, ident in marks:
        if start > offset:
            break
        block = ident
    return block


class IncludeRewrite(Rule):
    """Rewrite CUDA ``#include`` directives to HIP headers.

    ## What it does
    Replaces each CUDA header with its HIP counterpart (``cuda_runtime.h`` ->
    ``hip/hip_runtime.h``, ``curand_kernel.h`` -> ``hiprand/hiprand_kernel.h``, ``cublas_v2.h``
    -> ``hipblas/hipblas.h``...), keeping the bracket style. Where several CUDA headers map to the
    same HIP header in the same ``#if`` branch, the HIP header is included once and the duplicate
    lines are removed; headers HIP needs no counterpart for (``device_launch_parameters.h``) are
    removed. Where the target ROCm is older than the HIP header, a header row of
    ``rules/api/lowerings.tsv`` names the older HIP header whose API LOW001 lowers the names onto
    (``cuda_bf16.h`` -> ``hip/hip_bfloat16.h`` before ROCm 6.0). HDR002 marks headers with no HIP
    counterpart in the target ROCm. HDR003 adds ``hip/hip_runtime.h`` to CUDA sources that relied
    on nvcc including the runtime implicitly.

    ## Why is this bad on AMD
    hipcc does not know CUDA headers, and unlike nvcc it does not include the runtime header on
    its own: kernels, ``threadIdx`` and the ``hip*`` API need ``hip/hip_runtime.h``.

    ## Example
    ```cpp
    #include <cuda.h>
    #include <cuda_runtime.h>
    #include <curand_kernel.h>
    #ifdef __DRIVER_TYPES_H__
    ```

    ## Use instead
    ```cpp
    #include <hip/hip_runtime.h>
    #include <hiprand/hiprand_kernel.h>
    #ifdef HIP_INCLUDE_HIP_DRIVER_TYPES_H
    ```

    ## Fix safety
    Safe: each HIP header declares the HIP names the converted code uses. Duplicates are only
    removed within one preprocessor branch. A guard test asks for the HIP header the CUDA one
    becomes at the target (HIP's runtime and driver APIs share one header: ``__cuda_cuda_h__``
    and ``__CUDA_RUNTIME_H__`` both become ``hip_runtime.h``'s guard).
    """

    code = "HDR001"
    extra_codes = ("HDR002", "HDR003", "HDR004")
    category = "conversion"
    attention_codes = ("HDR002", "HDR004")
    name = "cuda-include-rewrite"
    summary = "CUDA header has a HIP counterpart"
    family = "api"
    fix = "sometimes"

    def check(self, ctx: RuleContext):
        data = ctx.data
        if b"include" not in data and not ctx.path.endswith(CUDA_SOURCE_SUFFIXES):
            return
        headers = ctx.tables.headers
        marks = None
        seen: set[tuple[int, str]] = set()
        for line, match in _includes(ctx):
            if ctx.literals.covering(line) not in ("include", None):
                continue
            if marks is None:
                marks = _blocks(ctx)
            block = _block_at(marks, line)
            name = match.group(2).decode("utf-8", "replace").strip()
            entry = lookup_header(headers, name)
            target, lowered, problem = _hip_header(ctx, name, entry)
            if problem:
                yield self._mark(ctx, match, problem, name, entry)
                continue
            if entry is None and ctx.settings.rename_ext and match.group(1) == b'"' and name.endswith(".cu"):
                target = name[:-3] + ".hip"
            key = (block, target)
            if target == name:
                seen.add(key)  # not a CUDA header: never touched, but a later duplicate of it is
                continue
            if target and key not in seen:
                seen.add(key)
                start, end = match.span(2)
                fix = Fix(f"include <{target}>", (Edit(start, end, target.encode()),))
                yield Diagnostic("HDR001", f"<{name}> -> <{target}>{lowered}", start, end, fix,
                                 library=entry.library if entry else "", symbol=name,
                                 severity="info")
            else:
                start, end = line, match.end()
                why = "duplicate of an earlier include" if target else "not needed with HIP"
                fix = Fix(f"remove #include <{name}>", (Edit(start, end, b""),))
                yield Diagnostic("HDR001", f"<{name}> removed: {why}", start, end, fix,
                                 library=entry.library if entry else "", symbol=name,
                                 severity="info")
        if b"__has_include" in data:
            yield from _has_include_tests(ctx)
        yield from _guard_tests(ctx)
        if ctx.path.endswith(CUDA_SOURCE_SUFFIXES) and not _has_runtime(ctx):
            first = _first_device_code(ctx)
            if first is not None:
                fix = Fix(f"include <{RUNTIME_HEADER}>", (), includes=(RUNTIME_HEADER,))
                yield Diagnostic("HDR003", f"<{RUNTIME_HEADER}> added: nvcc included the CUDA "
                                 "runtime implicitly, hipcc does not", first, first, fix,
                                 library="runtime", symbol=RUNTIME_HEADER, severity="info")

    def _mark(self, ctx, match, text, name, entry):
        start = match.start(2)
        return Diagnostic("HDR002", text, start, match.end(2),
                          marker_fix(ctx, start, Marker("HDR002", text)),
                          library=entry.library, symbol=name)


def _hip_header(ctx: RuleContext, name: str, entry) -> tuple[str, str, str]:
    """(the HIP header for CUDA header ``name`` at the target: ``name`` itself when it is not a
    CUDA header, "" when HIP needs none; a note when it is a lowering; why it has none)."""
    rocm = ctx.settings.rocm
    if entry is None:
        return name, "", ""
    if entry.library in ctx.tables.report_only_libraries:
        return name, "", (f"<{name}> is kept: {entry.library} is reported, not converted"
                          + (f" (counterpart: <{entry.hip_header}>)"
                             if entry.hip_header not in ("", "-") else ""))
    if entry.hip_header == "-":
        return name, "", f"<{name}> has no HIP counterpart" + (f": {entry.note}" if entry.note else "")
    if entry.hip_added is not None and entry.hip_added > rocm:
        low = ctx.tables.lowerings.get(name)
        if low is not None and low.kind == "header" and low.applies(rocm):
            return low.replacement, (f" (<{entry.hip_header}> exists from ROCm "
                                     f"{format_version(entry.hip_added)}; {low.rule} lowers its "
                                     "names)"), ""  # an older HIP header (lowerings.tsv)
        return name, "", (f"<{name}> has no HIP counterpart in ROCm {format_version(rocm)} "
                          f"(<{entry.hip_header}> exists from ROCm "
                          f"{format_version(entry.hip_added)})")
    return entry.hip_header or "", "", ""


def _has_include_tests(ctx: RuleContext):
    """HDR001 for ``__has_include(<cuda header>)`` in ``#if``/``#elif``: the test must ask for
    the header the converted ``#include`` names, or a guard such as
    ``#if __has_include(<nccl.h>)`` turns itself off once RCCL replaces NCCL."""
    data = ctx.data
    for match in _HAS_INCLUDE.finditer(data):
        if not ctx.in_directive(match.start()):
            continue
        name = match.group(2).decode("utf-8", "replace").strip()
        entry = lookup_header(ctx.tables.headers, name)
        target, lowered, problem = _hip_header(ctx, name, entry)
        if problem or not target or target == name:
            continue
        start, end = match.span(2)
        yield Diagnostic("HDR001", f"__has_include(<{name}>) -> __has_include(<{target}>)"
                         f"{lowered}", start, end,
                         Fix(f"test for <{target}>", (Edit(start, end, target.encode()),)),
                         library=entry.library, symbol=name, severity="info")


def _guard_tests(ctx: RuleContext):
    """HDR001 for a CUDA header's guard macro tested in ``#ifdef``/``#ifndef``/``defined``: the
    guard of the HIP header the CUDA one becomes (header_guards.tsv); HDR004 where there is
    none to test."""
    names = _guard_names(ctx.tables)
    if names is None:
        return
    data = ctx.data
    for line, directive in directive_lines(_GUARD_TEST_LINE, data):
        if ctx.literals.covering(line) is not None:
            continue
        for found in names.finditer(data, directive.start(), directive.end()):
            start, end = found.span()
            before = data[line:start]
            if not (_DEFINED_BEFORE.search(before) if directive.group(1) in (b"if", b"elif")
                    else _IFDEF_BEFORE.match(before)) or not ctx.in_code(start):
                continue
            macro = found.group().decode()
            if re.search(rb"#[ \t]*define[ \t]+" + found.group() + rb"\b", data):
                continue  # the file defines it: a copy of the CUDA header, its own guard
            yield _guard_test(ctx, macro, start, end)


def _guard_test(ctx: RuleContext, macro: str, start: int, end: int) -> Diagnostic:
    guards = ctx.tables.header_guards[macro]
    header = guards[0].cuda_header
    entry = lookup_header(ctx.tables.headers, header)
    target, _, problem = _hip_header(ctx, header, entry)
    guard = next((g for g in guards if g.hip_header == target), None)
    library = entry.library if entry else ""
    if not problem and guard is not None and guard.hip_macro != "-":
        shown = f"<{target}>" if target else f"<{RUNTIME_HEADER}> (<{header}> is dropped)"
        return Diagnostic("HDR001", f"{macro} -> {guard.hip_macro}: the guard of {shown}",
                          start, end, Fix(f"test {guard.hip_macro}",
                                          (Edit(start, end, guard.hip_macro.encode()),)),
                          library=library, symbol=macro, severity="info")
    why = problem or (guard.note if guard is not None else
                      f"no HIP macro is known for <{target}>")
    text = f"{macro} (defined by <{header}>) is not defined after conversion: {why}"
    return Diagnostic("HDR004", text, start, end, marker_fix(ctx, start, Marker("HDR004", text)),
                      library=library, symbol=macro)


def _has_runtime(ctx: RuleContext) -> bool:
    """Will the converted file include ``hip/hip_runtime.h``? Judged by what each include
    becomes at the target (``cuda.h`` does, ``cuda_runtime_api.h``, which becomes
    ``hip/hip_runtime_api.h``, does not), so the file and its output get the same answer."""
    for line, match in _includes(ctx):
        if ctx.literals.covering(line) != "include":
            continue
        name = match.group(2).decode("utf-8", "replace").strip()
        target, _, problem = _hip_header(ctx, name, lookup_header(ctx.tables.headers, name))
        if not problem and target == RUNTIME_HEADER:
            return True
    return False


def _first_device_code(ctx: RuleContext) -> int | None:
    """Offset of the first CUDA keyword in code (the site HDR003 is reported at)."""
    return next((m.start() for m in _DEVICE_CODE.finditer(ctx.data) if ctx.in_code(m.start())),
                None)
