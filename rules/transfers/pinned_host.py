"""XFR001: copies in a loop to or from pageable host memory."""

from __future__ import annotations

import bisect
import functools
import re

from migrator.apitables import ApiTables
from migrator.diagnostics import Applicability, Diagnostic, Edit, Fix
from migrator.rule import Rule, RuleContext
from migrator.semantic.calls import arguments, is_member
from migrator.semantic.scopes import (Block, block_opened_at, enclosing_call, statement_end,
                                      statement_start, word_matches, word_offsets)
from migrator.semantic.spellings import alternation, api_call, api_name, cuda_and_hip, is_hip
from migrator.source import raw_bytes, raw_text

from ..markers import unproven_fix
from .common import Copy, base_identifier, loop_copies

# functions that read or write a buffer but never free or keep it
_HARMLESS_CALLEES = {b"memcpy", b"memset", b"memcmp", b"memmove", b"printf", b"fprintf",
                     b"fwrite", b"fread", b"std::fill", b"std::copy", b"std::memcpy",
                     b"std::memset", b"std::fill_n", b"std::copy_n", b"std::equal", b"sizeof"}


class PinnedHostBuffer(Rule):
    """Allocate a host buffer pinned when a loop copies to or from it.

    ## What it does
    Finds ``hipMemcpy``/``hipMemcpyAsync`` calls in a loop whose host side (from the copy kind)
    is a buffer the same function allocates with ``malloc`` and releases with ``free``, and
    allocates it pinned instead: ``hipHostMalloc`` (the allocator the target ROCm's API table
    maps ``cudaMallocHost`` to) and ``hipHostFree``. A failed allocation still leaves the
    pointer null, as ``malloc`` did.

    ## Why is this bad on AMD
    AMD's HIP runtime API reference (``hipHostMalloc``): pinned host memory "can be accessed
    directly by the GPU device, and can be read or written with much higher bandwidth than
    pageable memory obtained with functions such as malloc()", and the runtime "can avoid some
    of the setup required for regular unpinned memory". A copy from pageable memory is staged
    by the runtime through its own pinned buffer, chunk by chunk, and a copy of memory that is
    not pinned is synchronous even through ``hipMemcpyAsync`` (the API reference's warning on
    that function), so it cannot overlap anything. On an NVIDIA H200 (CUDA 13.0, medians of 9,
    2026-11-30; docs/benchmarks.md), per-tensor copies of BERT-large's 391 gradient tensors
    (1.34 GB) device to host took 115.49 ms into ``malloc``'d memory and 25.00 ms once XFR001
    had pinned the buffer (and XFR003 queued the copies). No AMD GPU has measured it.

    ## Example
    ```cpp
    float* host = (float*)malloc(total * sizeof(float));
    for (int i = 0; i < n; ++i) {
      hipMemcpy(host + offset[i], grads[i], bytes[i], hipMemcpyDeviceToHost);
    }
    free(host);
    ```

    ## Use instead
    ```cpp
    float* host = nullptr;
    if (hipHostMalloc((void**)&host, total * sizeof(float), hipHostMallocDefault) != hipSuccess) host = nullptr;
    for (int i = 0; i < n; ++i) {
      hipMemcpy(host + offset[i], grads[i], bytes[i], hipMemcpyDeviceToHost);
    }
    (void)hipHostFree(host);
    ```

    ## Fix safety
    Safe when the buffer's only uses in the function are the allocation, the copies, indexing,
    runtime calls, functions of this file that free nothing, and one ``free``. Unsafe when it
    is reassigned, returned, stored, or handed to other code (which might ``free`` or
    ``realloc`` it): the finding says which. Pinned memory is a limited resource: very large
    buffers pinned for long can starve the system.
    """

    code = "XFR001"
    name = "pinned-host-buffer"
    summary = "loop copies to or from pageable host memory"
    family = "transfers"
    fix = "sometimes"
    optimization = True
    chains = True  # the CUDA allocator it writes is renamed by API001/ARG001
    # and the buffer it pins is what the copy rules read (XFR003 makes its copies async)
    chains_into = ("API001", "ARG001", "XFR002", "XFR003", "XFR005")

    def check(self, ctx: RuleContext):
        if b"malloc" not in ctx.data:
            return
        seen: set[tuple[int, str]] = set()
        for copy in loop_copies(ctx):
            if copy.body is None:
                continue
            index = copy.host_argument(ctx)
            if index is None:
                continue
            name = base_identifier(copy.text(ctx, index))
            if name is None or (copy.body.open, name) in seen:
                continue
            seen.add((copy.body.open, name))
            diagnostic = _pin(ctx, copy, name)
            if diagnostic is not None:
                yield diagnostic


def _pin(ctx: RuleContext, copy: Copy, name: str) -> Diagnostic | None:
    data = ctx.data
    body = copy.body
    allocations = list(word_matches(ctx, name.encode(), _ALLOCATION, body.head, body.close))
    if len(allocations) != 1:
        return None  # not a malloc'd buffer of this function: nothing to say
    frees = _frees(ctx, name.encode(), body)
    hip = is_hip(copy.name)
    line, _ = ctx.source.position(copy.start)
    allocation = allocations[0]
    malloc_open = data.index(b"malloc", allocation.start()) + len(b"malloc")
    size_spans = arguments(ctx, malloc_open)
    statement_from = statement_start(ctx, allocation.start(), body.open)
    statement_to = statement_end(ctx, allocation.start(), body.close)
    problems = _escapes(ctx, body, name, allocation.start(), statement_to or allocation.end())
    if len(frees) != 1:
        problems.append(f"it is freed {len(frees)} times in this function (expected once)")
    if size_spans is None or len(size_spans) != 1 or statement_to is None:
        problems.append("its allocation is not a plain malloc(bytes) statement")
    subject = (f"copies in a loop (line {line}) move data to or from '{name}', pageable memory "
               "from malloc, which HIP's runtime stages through pinned buffers of its own "
               "(`rocmigrate rule XFR001`)")
    if size_spans is None or statement_to is None or len(frees) != 1:
        return _unproven(ctx, allocation, subject, problems, name)
    size = raw_text(_without_line_comments(ctx, *size_spans[0]))
    statement = raw_text(data[statement_from:statement_to])
    declaration = re.match(r"(?P<type>[\w:<>\s]+?\*+)\s*" + re.escape(name) + r"\s*=", statement)
    success = api_name(ctx, "cudaSuccess", hip)
    allocate = api_call(ctx, "cudaMallocHost", [f"(void**)&{name}", size], hip)
    pinned = f"if ({allocate} != {success}) {name} = nullptr;"
    if declaration is not None:
        if "," in statement[: declaration.end()] or declaration.group("type").strip() in ("", "auto"):
            problems.append("its declaration declares more than one name")
        replacement = f"{declaration.group('type').strip()} {name} = nullptr;"
        before = data[ctx.source.line_start(statement_from) : statement_from]
        # the allocation on a line of its own, at the declaration's indent; after the code
        # before the declaration on its line (``{ float *h = ...``), on that line
        replacement += " " + pinned if before.strip() else "\n" + raw_text(before) + pinned
    elif re.fullmatch(re.escape(name) + r"\s*=\s*[^;]*;", statement):
        replacement = pinned
    else:
        replacement = None
        problems.append("its allocation is not a plain malloc(bytes) statement")
    if replacement is None:
        return _unproven(ctx, allocation, subject, problems, name)
    free_match = frees[0]
    free_text = "(void)" + api_call(ctx, "cudaFreeHost", [name], hip) + ";"
    fix = Fix(f"allocate '{name}' pinned", (
        Edit(statement_from, statement_to, raw_bytes(replacement)),
        Edit(free_match.start(), free_match.end(), raw_bytes(free_text))),
        Applicability.UNSAFE if problems else Applicability.SAFE)
    if problems:
        return _unproven(ctx, allocation, subject, problems, name, fix)
    return Diagnostic("XFR001", subject, allocation.start(), allocation.end(), fix,
                      library="runtime", symbol=name)


def _without_line_comments(ctx: RuleContext, begin: int, end: int) -> bytes:
    """data[begin:end] without its // comments: written into a statement that goes on after
    it on the same line, such a comment would hide the rest."""
    data = ctx.data
    if b"//" not in data[begin:end]:
        return data[begin:end]
    literals = ctx.literals
    parts = []
    pos = begin
    index = bisect.bisect_left(literals.starts, begin)
    while index < len(literals.starts) and literals.starts[index] < end:
        start = literals.starts[index]
        if literals.kinds[index] == "comment" and data.startswith(b"//", start):
            parts.append(data[pos:start])
            pos = min(literals.ends[index], end)
        index += 1
    parts.append(data[pos:end])
    return b"".join(parts).rstrip()


# ``name = malloc(``, with an optional cast: tried where the name stands (scopes.word_matches)
_ALLOCATION = re.compile(
    rb"[A-Za-z_][A-Za-z0-9_]*\s*=\s*(?:\([^();]*\)|static_cast\s*<[^<>;]*>)?\s*\(?\s*malloc\s*\(")
_FREE = re.compile(rb"\bfree\s*\(\s*([A-Za-z0-9_]+)\s*\)\s*;")


def _frees(ctx: RuleContext, name: bytes, body: Block) -> list[re.Match]:
    """The ``free(name);`` statements in code in ``body``, from one pass over the file (the
    freed name is the whole word in the parentheses, so each statement is found once)."""
    by_name = ctx.cache.get("XFR001.frees")
    if by_name is None:
        by_name = ctx.cache["XFR001.frees"] = {}
        for match in _FREE.finditer(ctx.data):
            by_name.setdefault(match.group(1), []).append(match)
    return [match for match in by_name.get(name, ())
            if body.open <= match.start() and match.end() <= body.close and ctx.in_code(match.start())]


def _unproven(ctx: RuleContext, allocation: re.Match, subject: str, problems: list[str],
              name: str, rewrite: Fix | None = None) -> Diagnostic:
    message = subject + "; left pageable: " + "; ".join(problems)
    return Diagnostic("XFR001", message, allocation.start(), allocation.end(),
                      unproven_fix(ctx, allocation.start(), "XFR001", message, rewrite),
                      library="runtime", symbol=name)


def _escapes(ctx: RuleContext, body: Block, name: str, allocation: int,
             allocation_end: int) -> list[str]:
    """Uses of the buffer that could free, resize or keep it beyond the function."""
    data = ctx.data
    problems = []
    for at in word_offsets(ctx, name.encode(), body.head, body.close):
        if allocation <= at < allocation_end:
            continue
        line, _ = ctx.source.position(at)
        before = data[max(body.head, at - 64) : at].rstrip()
        after = data[at + len(name) : at + len(name) + 16].lstrip()
        if is_member(ctx, at):
            continue  # a member of something else
        callee = enclosing_call(ctx, at, body.head)
        if callee is not None:
            function = callee[0]
            if function == b"free" or function.startswith((b"cuda", b"hip")):
                continue
            if function in _HARMLESS_CALLEES or _frees_nothing(ctx, function):
                continue
            problems.append(f"it is passed to {function.decode()}() at line {line}")
            continue
        if at < body.open:  # a parameter: the caller owns it
            problems.append("it is a parameter")
            continue
        if after.startswith(b"[") or re.search(rb"(?:^|[=(,;{}]\s*)\*$", before):
            continue  # an element: host[i], *host
        if re.search(rb"\breturn$", before):
            problems.append(f"it is returned at line {line}")
        elif after.startswith(b"=") and not after.startswith(b"=="):
            problems.append(f"it is reassigned at line {line}")
        elif re.search(rb"(?<![=!<>])=$", before) or before.endswith(b"("):
            problems.append(f"it is stored or aliased at line {line}")
        elif after.startswith((b";", b")", b",", b"==", b"!=")) or before.endswith(b"!"):
            continue  # a null test or a plain expression
        elif after.startswith((b"+", b"-")):
            problems.append(f"a pointer into it is taken at line {line}")
    return problems


def _frees_nothing(ctx: RuleContext, function: bytes) -> bool:
    """Is ``function`` defined in this file, with a body that frees or reallocates nothing?"""
    definition = re.search(rb"\b" + re.escape(function) + rb"\s*\([^;{}]*\)\s*(?:const\s*)?\{",
                           ctx.data)
    if definition is None:
        return False
    block = block_opened_at(ctx, definition.end() - 1)
    return block is not None and not _frees_pattern(ctx.tables).search(ctx.data, block.open,
                                                                      block.close)


@functools.lru_cache(maxsize=8)
def _frees_pattern(tables: ApiTables) -> re.Pattern:
    """A call that frees or reallocates: C's and C++'s, and cudaFreeHost in either spelling
    (with HIP's deprecated hipFreeHost)."""
    frees = cuda_and_hip(tables, "cudaFreeHost") | {"free", "realloc", "delete", "hipFreeHost"}
    return re.compile(rb"\b" + alternation(frees) + rb"\b")
