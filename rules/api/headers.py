"""HDR001-HDR004: rewrite CUDA #include directives to their HIP headers, once, and the tests of
CUDA headers' include guards to the HIP headers' guards."""

from __future__ import annotations

import bisect
import functools
import re

from migrator.apitables import ApiTables, HeaderEntry
from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.engine import include_insertion_point
from migrator.rule import Marker, Rule, RuleContext
from migrator.semantic.calls import close_of
from migrator.parsing.includes import INCLUDE
from migrator.semantic.directives import directive_lines
from migrator.semantic.scopes import name_matches
from migrator.versions import format_version

from ..cuda_context import CUDA_SOURCE_SUFFIXES, in_cuda_context
from ..markers import marker_fix
from ..target_names import renamable

# directives from their '#': directive_lines keeps those with only blanks before on their line
_INCLUDE = re.compile(INCLUDE.pattern + rb"[^\n]*(?:\n|\Z)")  # with the rest of its line
_HAS_INCLUDE = re.compile(rb'\b__has_include(?:_next)?\s*\(\s*([<"])([^>"\n]*)[>"]\s*\)')
_CONDITIONAL = re.compile(rb"#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b")
# a test of one macro being defined: #ifdef M, #ifndef M, #if defined(M) / defined M
_DEFINED_TEST = re.compile(rb"#[ \t]*(?:ifn?def[ \t]+(\w+)|if[ \t]+defined[ \t]*\(?[ \t]*(\w+)"
                           rb"[ \t]*\)?[ \t]*(?:$|//|/\*))", re.M)
# what needs hip/hip_runtime.h: device code, a launch, or a name of the runtime or driver API
# (those spelled cuda*/cu*/CU*, checked in the tables)
_RUNTIME_USE = re.compile(rb"__global__|<<<|__device__|__shared__|threadIdx|blockIdx|\bdim3\b|"
                          rb"\b(?:cuda|cu|CU)[A-Z]\w*")
# what each of its matches starts with (it is tried at those bytes alone: name_matches)
_RUNTIME_USE_STARTS = (b"__global__", b"<<<", b"__device__", b"__shared__", b"threadIdx",
                       b"blockIdx", b"dim3", b"cu", b"CU")
_RUNTIME_LIBRARIES = ("runtime", "driver")
# a headers.tsv note saying a HIP header must come after the runtime header
_RUNTIME_FIRST = "compiles only after hip/hip_runtime.h"
# the macros a header tests to keep device code from host compilers
_COMPILER_MACRO = re.compile(rb"\b(?:__CUDACC__|__CUDA_ARCH__|__NVCC__|__HIPCC__|__HIP__|"
                             rb"__HIP_DEVICE_COMPILE__)\b")
# headers that hold device code or API calls as often as .cu files do
HEADER_SUFFIXES = (".h", ".hpp", ".hh", ".hxx")
_RUNTIME_SUFFIXES = CUDA_SOURCE_SUFFIXES + HEADER_SUFFIXES
# files another includes in its middle (template bodies, tables): an include there can land
# inside a namespace or a function; their includer gets the runtime
_FRAGMENT_SUFFIXES = (".inl", ".inc", ".tpp", ".ipp")
_EXTERN_C = re.compile(rb'\bextern[ \t]*"C"\s*\{')
# (possessive: a file that is not guarded fails at once, whatever its leading comments)
_INCLUDE_GUARD = re.compile(rb"(?:\s++|//[^\n]*+|/\*(?:[^*]|\*(?!/))*+\*/)*+#[ \t]*ifndef[ \t]+(\w+)[^\n]*\n"
                            rb"[ \t]*#[ \t]*define[ \t]+\1\b")
# what comes before a tested macro on its directive line: '#ifdef ' or '... defined(' / 'defined '
_IFDEF_BEFORE = re.compile(rb"[ \t]*#[ \t]*ifn?def[ \t]+\Z")
_DEFINED_BEFORE = re.compile(rb"\bdefined[ \t]*(?:\([ \t]*)?\Z")
RUNTIME_HEADER = "hip/hip_runtime.h"
RUNTIME_API_HEADER = "hip/hip_runtime_api.h"


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


@functools.lru_cache(maxsize=4096)
def _header_entry(tables: ApiTables, name: str) -> HeaderEntry | None:
    """lookup_header in ``tables``, once per name: most includes name headers the table lacks
    (<vector>, a project's own), each tried against every ``dir/*`` entry."""
    return lookup_header(tables.headers, name)


def _includes(ctx: RuleContext) -> list[tuple[int, re.Match]]:
    """The file's ``#include`` lines (see directive_lines), read once for check and
    _runtime_include."""
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
    return _conditionals(ctx)[0]


def _conditionals(ctx: RuleContext) -> tuple[list[tuple[int, int]], frozenset[int],
                                             list[tuple[int, bytes, int]],
                                             list[tuple[int, frozenset[bytes]]]]:
    """_blocks' marks; the ids of the blocks under a test of the compiler (``#ifdef
    __CUDACC__``...: code a header keeps from host compilers); (line start, directive, line
    end) of each ``#if``/``#ifdef``/``#ifndef``/``#elif`` (what _guard_tests reads); (offset,
    macros M) at each conditional directive, from where the code is compiled only where every
    M is defined (``#ifdef M``, ``#if defined(M)``, the ``#else`` of ``#ifndef M``; other tests
    and ``#elif`` add nothing): read once per file."""
    found = ctx.cache.get("hdr_conditionals")
    if found is not None:
        return found
    data = ctx.data
    marks = [(0, 0)]
    stack = [0]
    compiler_stack = [False]
    compiler = set()
    tests = []
    defined_marks = [(0, frozenset())]
    # (macro, True while the branch needs it, the macros every enclosing branch needs): the
    # set kept per level, so that a directive costs no walk of the stack (deep nesting)
    defined_stack: list[tuple[bytes | None, bool, frozenset[bytes]]] = []
    next_id = 1
    for start, match in directive_lines(_CONDITIONAL, data):
        if ctx.literals.covering(start) is not None:
            continue
        directive = match.group(1)
        if directive in (b"if", b"ifdef", b"ifndef", b"elif"):
            end = data.find(b"\n", start)
            tests.append((start, directive, len(data) if end < 0 else end))
        if directive in (b"if", b"ifdef", b"ifndef"):
            stack.append(next_id)
            compiler_stack.append(compiler_stack[-1] or _COMPILER_MACRO.search(
                data, start, tests[-1][2]) is not None)
            test = _DEFINED_TEST.match(data, match.start())
            macro = (test.group(1) or test.group(2)) if test else None
            needed = directive != b"ifndef"
            enclosing = defined_stack[-1][2] if defined_stack else frozenset()
            defined_stack.append((macro, needed, _needing(enclosing, macro, needed)))
        elif directive in (b"elif", b"else"):
            stack[-1] = next_id
            if defined_stack:
                macro, needed, _ = defined_stack[-1]
                macro, needed = (None, False) if directive == b"elif" else (macro, not needed)
                enclosing = defined_stack[-2][2] if len(defined_stack) > 1 else frozenset()
                defined_stack[-1] = (macro, needed, _needing(enclosing, macro, needed))
        elif len(stack) > 1:
            stack.pop()
            compiler_stack.pop()
            defined_stack.pop()
        if compiler_stack[-1]:
            compiler.add(stack[-1])
        next_id += 1
        marks.append((start, stack[-1]))
        defined_marks.append((start, defined_stack[-1][2] if defined_stack else frozenset()))
    found = ctx.cache["hdr_conditionals"] = (marks, frozenset(compiler), tests, defined_marks)
    return found


def _needing(enclosing: frozenset[bytes], macro: bytes | None,
             needed: bool) -> frozenset[bytes]:
    """The macros a branch needs defined: its enclosing branches', and its own test's."""
    return enclosing | {macro} if macro is not None and needed else enclosing


def _block_at(marks: list[tuple[int, object]], offset: int):
    """What ``marks`` (offset, value) from (0, ...) on, sorted, say at ``offset``: the value of
    the last mark at or before it (a block id, the macros a block needs)."""
    return marks[bisect.bisect_right(marks, offset, key=lambda mark: mark[0]) - 1][1]


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
    (``cuda_bf16.h`` -> ``hip/hip_bfloat16.h`` before ROCm 6.0), or a support header rocmigrate
    writes beside the output, included with quotes (``math_constants.h`` ->
    ``"rocmigrate_math_constants.h"`` before ROCm 5.3, see MTH001). NVTX's C and C++ API
    headers (``nvtx3/nvToolsExt.h``, ``nvToolsExt.h``, their ``Cuda``/``CudaRt`` naming headers,
    ``nvtx3/nvtx3.hpp``) become the support header ``"rocmigrate_nvtx.h"`` at every target:
    NVTX's functions and classes as no-ops that record nothing at all (no profiler sees the
    ranges and marks), returning what NVTX returns with no tool attached; built with
    ``-DROCMIGRATE_NVTX_ROCTX`` and linked with ``roctx64`` where ROCm's roctracer is
    installed, the C API's ranges and marks go to roctx, which ROCm's profilers show. HDR002
    marks headers with no HIP counterpart in the target ROCm (every header of CUDA's include folder, those of older
    toolkits too, has a row). HDR003 adds ``hip/hip_runtime.h`` to files that relied on nvcc
    including the runtime implicitly, whatever their extension (``.cu``, ``.cuh``, headers, and
    a ``.cpp``, ``.cc`` or ``.c`` with CUDA code, which ``nvcc -x cu`` compiled): those with
    device code or launches, or host code calling the runtime or driver API (unless it includes
    ``cuda_runtime_api.h``), or that include the runtime only under ``#if``; device code a
    header keeps from host compilers (``#ifdef __CUDACC__``) does not count. A header that uses
    the runtime gets its own include, even where its includers have one; fragments included in
    the middle of a file (``.inl``, ``.inc``) get none: their includer does. The runtime header
    must come first: an unconditional include of it that comes after code using it, after a
    HIP header that compiles only after it (``hip/hip_cooperative_groups.h``), or inside
    ``extern "C" {`` is moved up to where the engine inserts includes (before the first
    include or code, outside any ``extern "C"`` block). In a header whose uses all sit under one
    ``#ifdef M`` (a "GPU compiler" switch of the project), the runtime is included under that
    test; under a test of a CUDA header's guard (``#ifdef __DRIVER_TYPES_H__``: did the
    includer include the runtime?) nothing is added: HDR001 turns the test into the HIP
    header's guard, which HIP's headers define (header_guards.tsv), so the code still compiles
    exactly where the includer included the runtime.

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
        if b"include" in ctx.data or _may_add_runtime(ctx):
            yield from self._includes(ctx)
        yield from _guard_tests(ctx)

    def _includes(self, ctx: RuleContext):
        data = ctx.data
        marks = None
        seen: set[tuple[int, str]] = set()
        runtime, moved = _runtime_include(ctx)
        for line, match in _includes(ctx):
            if ctx.literals.covering(line) not in ("include", None):
                continue
            if marks is None:
                marks = _blocks(ctx)
            block = _block_at(marks, line)
            name = match.group(2).decode("utf-8", "replace").strip()
            entry, target, lowered, problem = _converted(ctx, name)
            if problem:
                yield self._mark(ctx, match, problem, name, entry)
                continue
            if entry is None and ctx.settings.rename_ext and match.group(1) == b'"' and name.endswith(".cu"):
                target = name[:-3] + ".hip"
            key = (block, target)
            if line == runtime and moved:
                seen.add(key)  # inserted where the engine puts includes; later ones are duplicates
                start, end = match.span(2)
                fix = Fix(f"move #include <{RUNTIME_HEADER}> up", (Edit(line, match.end(), b""),),
                          includes=(RUNTIME_HEADER,))
                shown = f"<{name}> -> <{target}>" if target != name else f"<{name}>"
                yield Diagnostic("HDR001", f"{shown} moved up: {moved}", start, end, fix,
                                 library=entry.library if entry else "runtime", symbol=name,
                                 severity="info")
                continue
            if target == name:
                seen.add(key)  # not a CUDA header: never touched, but a later duplicate of it is
                continue
            if target and key not in seen:
                seen.add(key)
                start, end = match.span(2)
                shown = _shown(target)
                fix = Fix(f"include {shown}", (_path_edit(match, target),))
                yield Diagnostic("HDR001", f"<{name}> -> {shown}{lowered}", start, end, fix,
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
        if runtime is None and _may_add_runtime(ctx):
            api = not _includes_runtime_api(ctx)
            first = _first_use(ctx, len(data), api=api)
            macro = _shared_condition(ctx, api) if first is not None else None
            if macro is not None:
                if _included_under(ctx, macro) or macro in _guard_macros(ctx.tables):
                    return
                at = include_insertion_point(data, ctx.literals)
                newline = ctx.source.newline
                text = (b"#ifdef " + macro + newline + b"#include <" + RUNTIME_HEADER.encode()
                        + b">" + newline + b"#endif" + newline)
                if at > 0 and data[at - 1 : at] != b"\n":
                    text = newline + text
                fix = Fix(f"include <{RUNTIME_HEADER}> under #ifdef {macro.decode()}",
                          (Edit(at, at, text),))
                yield Diagnostic("HDR003", f"<{RUNTIME_HEADER}> added under #ifdef "
                                 f"{macro.decode()}, the test around all of the header's device "
                                 "code: nvcc included the CUDA runtime implicitly, hipcc does not",
                                 first, first, fix, library="runtime", symbol=RUNTIME_HEADER,
                                 severity="info")
            elif first is not None:
                fix = Fix(f"include <{RUNTIME_HEADER}>", (), includes=(RUNTIME_HEADER,))
                yield Diagnostic("HDR003", f"<{RUNTIME_HEADER}> added: nvcc included the CUDA "
                                 "runtime implicitly, hipcc does not", first, first, fix,
                                 library="runtime", symbol=RUNTIME_HEADER, severity="info")

    def _mark(self, ctx, match, text, name, entry):
        start = match.start(2)
        return Diagnostic("HDR002", text, start, match.end(2),
                          marker_fix(ctx, start, Marker("HDR002", text)),
                          library=entry.library, symbol=name)


def _converted(ctx: RuleContext, name: str) -> tuple[HeaderEntry | None, str, str, str]:
    """(the header table's entry for ``name``, and _hip_header's answer), once per file."""
    found = ctx.cache.setdefault("hdr_converted", {})
    answer = found.get(name)
    if answer is None:
        entry = _header_entry(ctx.tables, name)
        answer = found[name] = (entry, *_hip_header(ctx, name, entry))
    return answer


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
        entry = _header_entry(ctx.tables, name)
        target, lowered, problem = _hip_header(ctx, name, entry)
        if problem or not target or target == name:
            continue
        start, end = match.span(2)
        shown = _shown(target)
        yield Diagnostic("HDR001", f"__has_include(<{name}>) -> __has_include({shown})"
                         f"{lowered}", start, end,
                         Fix(f"test for {shown}", (_path_edit(match, target),)),
                         library=entry.library, symbol=name, severity="info")


def _shown(target: str) -> str:
    """A HIP header as messages show it: ``<hip/hip_fp16.h>``; a support header (a lowering
    to ``"rocmigrate_math_constants.h"``) in its quotes."""
    return target if target.startswith('"') else f"<{target}>"


def _path_edit(match: re.Match, target: str) -> Edit:
    """The edit that makes the path of an include (or ``__has_include``) ``match`` (group 1
    its opening delimiter, group 2 the path) name ``target``: the path only, in its delimiters,
    or for a support header, written beside the output, the path and its delimiters."""
    if target.startswith('"'):
        return Edit(match.start(1), match.end(2) + 1, target.encode())
    return Edit(*match.span(2), target.encode())


def _guard_tests(ctx: RuleContext):
    """HDR001 for a CUDA header's guard macro tested in ``#ifdef``/``#ifndef``/``defined``: the
    guard of the HIP header the CUDA one becomes (header_guards.tsv); HDR004 where there is
    none to test."""
    names = _guard_names(ctx.tables)
    if names is None:
        return
    data = ctx.data
    for line, directive, line_end in _conditionals(ctx)[2]:
        for found in names.finditer(data, line, line_end):
            start, end = found.span()
            before = data[line:start]
            if not (_DEFINED_BEFORE.search(before) if directive in (b"if", b"elif")
                    else _IFDEF_BEFORE.match(before)) or not ctx.in_code(start):
                continue
            macro = found.group().decode()
            if re.search(rb"#[ \t]*define[ \t]+" + found.group() + rb"\b", data):
                continue  # the file defines it: a copy of the CUDA header, its own guard
            yield _guard_test(ctx, macro, start, end)


def _guard_test(ctx: RuleContext, macro: str, start: int, end: int) -> Diagnostic:
    guards = ctx.tables.header_guards[macro]
    header = guards[0].cuda_header
    entry = _header_entry(ctx.tables, header)
    target, _, problem = _hip_header(ctx, header, entry)
    guard = next((g for g in guards if g.hip_header == target), None)
    library = entry.library if entry else ""
    if not problem and guard is not None and guard.hip_macro != "-":
        shown = _shown(target) if target else f"<{RUNTIME_HEADER}> (<{header}> is dropped)"
        return Diagnostic("HDR001", f"{macro} -> {guard.hip_macro}: the guard of {shown}",
                          start, end, Fix(f"test {guard.hip_macro}",
                                          (Edit(start, end, guard.hip_macro.encode()),)),
                          library=library, symbol=macro, severity="info")
    why = problem or (guard.note if guard is not None else
                      f"no HIP macro is known for <{target}>")
    text = f"{macro} (defined by <{header}>) is not defined after conversion: {why}"
    return Diagnostic("HDR004", text, start, end, marker_fix(ctx, start, Marker("HDR004", text)),
                      library=library, symbol=macro)


def _runtime_include(ctx: RuleContext) -> tuple[int | None, str]:
    """(line of the first unconditional ``#include`` that is or becomes ``hip/hip_runtime.h``,
    or None; why it must move up, or ""). Judged by what each include becomes at the target
    (``cuda.h`` does, ``cuda_runtime_api.h`` does not), so the file and its output get the same
    answer. An include under ``#if`` does not count: the engine adds one for the file. It must
    move when it comes after code that uses it (a kernel above it), after a HIP header that
    compiles only after it (``hip/hip_cooperative_groups.h``: headers.tsv's note says so), or
    inside ``extern "C" {``."""
    marks = None
    hip_before = ""
    for line, match in _includes(ctx):
        if ctx.literals.covering(line) != "include":
            continue
        name = match.group(2).decode("utf-8", "replace").strip()
        entry, target, _, problem = _converted(ctx, name)
        if problem or target != RUNTIME_HEADER:
            if not hip_before and entry is not None and _RUNTIME_FIRST in entry.note:
                hip_before = target
            continue
        if marks is None:
            marks = _blocks(ctx)
        if _block_at(marks, line) not in (0, _guard_block(ctx)):
            continue
        if _first_use(ctx, line) is not None:
            return line, "code above it uses the runtime"
        if hip_before:
            return line, f"<{hip_before}>, included before it, needs it first"
        if _in_extern_c(ctx, line):
            return line, 'it declares C++ and must not be inside extern "C"'
        return line, ""
    return None, ""


def _may_add_runtime(ctx: RuleContext) -> bool:
    """May HDR003 add the runtime to this file? CUDA sources and headers, and any other C or
    C++ file that holds CUDA code (a ``.cpp`` with kernels and launches that ``nvcc -x cu`` or
    CMake's CUDA language compiled, a ``.c`` calling the runtime): what it uses decides, not its
    extension. Not fragments (``.inl``), nor files with no CUDA context (a ``.cpp`` with a
    ``dim3`` of its own)."""
    path = ctx.path
    if path.endswith(_RUNTIME_SUFFIXES):
        return True
    return not path.endswith(_FRAGMENT_SUFFIXES) and in_cuda_context(ctx)


def _includes_runtime_api(ctx: RuleContext) -> bool:
    """Does the file include what becomes ``hip/hip_runtime_api.h`` (``cuda_runtime_api.h``),
    which declares the host API, unconditionally?"""
    marks = _blocks(ctx)
    top = (0, _guard_block(ctx))
    for line, match in _includes(ctx):
        if ctx.literals.covering(line) != "include" or _block_at(marks, line) not in top:
            continue
        name = match.group(2).decode("utf-8", "replace").strip()
        _, target, _, problem = _converted(ctx, name)
        if not problem and target == RUNTIME_API_HEADER:
            return True
    return False


def _guard_block(ctx: RuleContext) -> int | None:
    """The block id (see _blocks) of the file's include guard, the first conditional: its body
    is the file's top level."""
    return 1 if _INCLUDE_GUARD.match(ctx.data) else None


def _in_extern_c(ctx: RuleContext, offset: int) -> bool:
    data = ctx.data
    for match in _EXTERN_C.finditer(data, 0, offset):
        if ctx.in_code(match.start()):
            close = close_of(ctx, match.end() - 1)
            if close is None or close > offset:
                return True
    return False


def _parsed(ctx: RuleContext, offset: int) -> bool:
    """Is ``offset`` in code the parser read (no syntax error node around it)? The file's
    error nodes are collected once, descending only into subtrees that hold one (a walk up from
    each offset costs the nesting depth per step: quadratic in 8,000 nested braces). Where
    no rule parsed the file, an offset in a top-level item that parses alone is told so
    without parsing the file (RuleContext.parses_clean_at)."""
    if ctx.parses_clean_at(offset):
        return True
    root = ctx.tree.root_node
    if not root.has_error:
        return True
    spans = ctx.cache.get("headers.error_spans")
    if spans is None:
        spans = ctx.cache["headers.error_spans"] = []
        pending = [root]
        while pending:
            node = pending.pop()
            if node.type == "ERROR" or node.is_missing:
                spans.append((node.start_byte, node.end_byte))
            else:
                pending.extend(child for child in node.children if child.has_error)
    return not any(start <= offset < end for start, end in spans)  # missing nodes: width 0


def _first_use(ctx: RuleContext, end: int, api: bool = True) -> int | None:
    """Offset of the first use of the runtime before ``end``: device code, a launch, or (with
    ``api``) a name of the runtime or driver API (not one a directive tests, nor one in text
    that does not parse as C++: no program to include anything for). In a header, not
    what it keeps from host compilers (``#ifdef __CUDACC__``): a host compiler includes it too,
    and its .cu includers include the runtime for it."""
    return next(_uses(ctx, end, api), None)


def _shared_condition(ctx: RuleContext, api: bool) -> bytes | None:
    """In a header, the macro M whose ``#ifdef M`` (or ``#if defined(M)``, or the ``#else`` of
    ``#ifndef M``) encloses every use of the runtime, when there is one: the project's own "GPU
    compiler" switch (HeCBench pad's ``_GPU_COMPILER_``, which its .cu files define before
    including the header). The runtime is then included under that test: a host-only includer
    gets no HIP header, which could otherwise land after its own macros (pad's host .cpp
    defines ``T``, which breaks HIP's templates)."""
    if not ctx.path.endswith(HEADER_SUFFIXES):
        return None
    marks = _conditionals(ctx)[3]
    shared = None
    for use in _uses(ctx, len(ctx.data), api):
        macros = _block_at(marks, use)
        shared = macros if shared is None else shared & macros
        if not shared:
            return None
    if not shared:
        return None
    macro = min(shared)
    defined = re.compile(rb"#[ \t]*define[ \t]+" + re.escape(macro) + rb"\b")
    return None if defined.search(ctx.code) else macro


@functools.lru_cache(maxsize=8)
def _guard_macros(tables: ApiTables) -> frozenset[bytes]:
    """The CUDA headers' guard macros of header_guards.tsv and the HIP guards they become. A
    header whose runtime uses all sit under a test of one (helper_cuda.h's ``#ifdef
    __DRIVER_TYPES_H__``: did my includer include the runtime?) needs no include of its own:
    under that test the runtime is there already, and HIP builds define only the HIP guards
    (HDR001 rewrites the test to one), so an include under the CUDA guard would never apply and
    would itself be rewritten by the next pass."""
    names = {macro.encode() for macro in tables.header_guards}
    names.update(guard.hip_macro.encode() for guards in tables.header_guards.values()
                 for guard in guards if guard.hip_macro != "-")
    return frozenset(names)


def _included_under(ctx: RuleContext, macro: bytes) -> bool:
    """Does the header include the runtime (as it is or as it becomes) under ``macro``'s test
    already (this rule's own fix, on a second pass)?"""
    marks = _conditionals(ctx)[3]
    for line, match in _includes(ctx):
        if ctx.literals.covering(line) != "include":
            continue
        name = match.group(2).decode("utf-8", "replace").strip()
        if _converted(ctx, name)[1] == RUNTIME_HEADER and macro in _block_at(marks, line):
            return True
    return False


def _ported(ctx: RuleContext, entry) -> bool:
    """Does the conversion give ``entry`` a HIP counterpart at the target (renamed, kept, or
    lowered)? A name the target lacks is marked, not ported: the runtime header declares
    nothing for it, so it asks for no include (the file's next pass, reading the marker
    comments, must decide the same)."""
    lowering = ctx.tables.lowerings.get(entry.cuda)
    return renamable(entry, ctx.settings.rocm) or (
        lowering is not None and lowering.applies(ctx.settings.rocm))


def _uses(ctx: RuleContext, end: int, api: bool):
    """The offsets _first_use reads, in order."""
    names = ctx.tables.names
    header = ctx.path.endswith(HEADER_SUFFIXES)
    for match in name_matches(_RUNTIME_USE, _RUNTIME_USE_STARTS, ctx.code, end):
        word = match.group()
        if word[:2] in (b"cu", b"CU"):
            entry = names.get(word.decode())
            if (not api or entry is None or entry.library not in _RUNTIME_LIBRARIES
                    or not _ported(ctx, entry) or ctx.in_directive(match.start())
                    or not _parsed(ctx, match.start())):
                continue
        if header:
            marks, compiler = _conditionals(ctx)[:2]
            if compiler and _block_at(marks, match.start()) in compiler:
                continue
        yield match.start()
