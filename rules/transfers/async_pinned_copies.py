"""XFR003: a loop of synchronous copies to or from a pinned buffer."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from migrator.apitables import ApiTables
from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Rule, RuleContext
from migrator.semantic.scopes import (code_text, name_matches, statement_end, statement_start,
                                      whole_word_starts)
from migrator.semantic.spellings import alternation, api_name, cuda_and_hip, is_hip
from migrator.source import raw_bytes, raw_text

from .common import Copy, base_identifier, loop_copies

_PINNED = ("cudaMallocHost", "cudaHostAlloc")  # and their HIP names
_HIP_PINNED = ("hipExtHostAlloc", "hipMallocHost")  # HIP's own pinned allocators


class AsyncPinnedCopies(Rule):
    """Issue a loop's copies of a pinned buffer asynchronously, and wait once after the loop.

    ## What it does
    Finds loops whose body is ``hipMemcpy`` calls between device memory and a host buffer that
    the same function allocates pinned (``hipHostMalloc`` and its relatives), plus bookkeeping
    that does not touch the buffer (``offset += count[i]``), and rewrites each copy to
    ``hipMemcpyAsync(..., 0)`` on the null stream, with one ``hipStreamSynchronize(0)`` right
    after the loop (in the same error-checking macro as the copy, if any).

    ## Why is this bad on AMD
    A synchronous copy returns only when its data has arrived: the host waits out every copy's
    latency, and the copy engine idles between them. Queued asynchronously, the copies of a
    pinned buffer run back to back; AMD's HIP runtime API reference (``hipMemcpyAsync``) makes
    pinned memory the condition: a copy of memory that is not pinned "will be performed
    synchronously", and it advises ``hipHostMalloc`` for "host memory that is transferred
    asynchronously". On an NVIDIA H200 (CUDA 13.0, medians of 9, 2026-11-30;
    docs/benchmarks.md), the converted ``kernels/gradient_transfer.cu``, whose per-tensor copies
    of BERT-large's 391 gradient tensors (1.34 GB) XFR001 pinned and XFR003 queued, took 25.00
    ms, within 3.1% of one copy of a contiguous pinned buffer (24.26 ms). No AMD GPU has
    measured it.

    ## Example
    ```cpp
    for (int i = 0; i < n; ++i) {
      hipMemcpy(host + offset, grads[i], bytes[i], hipMemcpyDeviceToHost);  // host: pinned
      offset += count[i];
    }
    use(host);
    ```

    ## Use instead
    ```cpp
    for (int i = 0; i < n; ++i) {
      hipMemcpyAsync(host + offset, grads[i], bytes[i], hipMemcpyDeviceToHost, 0);
      offset += count[i];
    }
    hipStreamSynchronize(0);
    use(host);
    ```

    ## Fix safety
    Safe when nothing in the loop reads or writes the host buffer or calls other code: the
    copies stay in order on the null stream (and so still wait for the work that produced their
    data), and the host sees the buffer only after the one synchronisation. An error of one copy
    is reported by the synchronisation instead of the copy.
    """

    code = "XFR003"
    name = "async-pinned-copies"
    summary = "loop of synchronous copies of a pinned buffer"
    family = "transfers"
    fix = "always"
    optimization = True

    def check(self, ctx: RuleContext):
        by_loop: dict[int, list[Copy]] = {}
        for copy in loop_copies(ctx):
            if copy.body is not None:
                by_loop.setdefault(copy.loop.start, []).append(copy)
        for group in by_loop.values():
            diagnostic = _rewrite(ctx, group)
            if diagnostic is not None:
                yield diagnostic


def _rewrite(ctx: RuleContext, group: list[Copy]) -> Diagnostic | None:
    data = ctx.data
    loop, body = group[0].loop, group[0].body
    calls = _calls(ctx.tables)
    if any(copy.name not in calls.sync_copy or len(copy.arguments) != 4 for copy in group):
        return None
    names = set()
    for copy in group:
        index = copy.host_argument(ctx)
        name = base_identifier(copy.text(ctx, index)) if index is not None else None
        if name is None or not _pinned_here(ctx, body, name):
            return None
        names.add(name)
    # nothing else in the loop may call code or touch the buffers
    starts = [statement_start(ctx, c.start, loop.body[0]) for c in group]  # source order
    spans = [(start, statement_end(ctx, start, loop.body[1])) for start in starts]
    if any(end is None for _, end in spans):
        return None
    # the loop body without the copy statements: as written, and with comments/literals blanked
    rest_text = bytearray(data[loop.body[0] : loop.body[1]])
    rest_code = bytearray(code_text(ctx, loop.body[0], loop.body[1]))
    for start, end in spans:
        for view in (rest_text, rest_code):
            view[start - loop.body[0] : end - loop.body[0]] = b" " * (end - start)
    if re.search(rb"\b[A-Za-z_]\w*\s*\(", rest_code) or any(
            whole_word_starts(rest_text, n.encode()) for n in names):
        return None
    hip = is_hip(group[0].name)
    stream_sync = api_name(ctx, "cudaStreamSynchronize", hip) + "(0)"
    after = data[loop.end : loop.end + 200]
    if calls.waited.match(after):
        return None  # already waited for
    edits = []
    for copy in group:
        edits.append(Edit(copy.end, copy.end, b"Async"))
        edits.append(Edit(copy.close, copy.close, b", 0"))
    first = group[0]
    start, end = spans[0]
    prefix = raw_text(data[start : first.start]).strip()
    suffix = raw_text(data[first.close + 1 : end]).strip()
    wait = f"{prefix}{stream_sync}{suffix}" if prefix else f"(void){stream_sync};"
    indent = raw_text(data[ctx.source.line_start(loop.start) : loop.start])
    edits.append(Edit(loop.end, loop.end,
                      raw_bytes(f"{ctx.source.newline.decode()}{indent}{wait}")))
    line, _ = ctx.source.position(loop.start)
    fix = Fix("issue the copies asynchronously and wait once after the loop", tuple(edits))
    return Diagnostic("XFR003", f"the loop at line {line} copies to or from the pinned buffer "
                      f"'{sorted(names)[0]}' one synchronous copy at a time: queue them "
                      "asynchronously and wait once, so that they run back to back "
                      "(`rocmigrate rule XFR003`)", first.start, first.end, fix,
                      library="runtime", symbol="Memcpy")


@dataclass(frozen=True)
class _Calls:
    """The calls this rule reads, in both spellings (from the tables)."""

    sync_copy: frozenset[bytes]  # cudaMemcpy
    waited: re.Pattern  # a wait for the null stream or the device, at the start of a text
    pinned_allocation: re.Pattern  # of ``&name``: the name is the whole word after the ``&``
    pinned_allocators: tuple[bytes, ...]  # the names that pattern starts with


@functools.lru_cache(maxsize=8)
def _calls(tables: ApiTables) -> _Calls:
    allocators = cuda_and_hip(tables, *_PINNED) | set(_HIP_PINNED)
    return _Calls(
        sync_copy=frozenset(name.encode() for name in cuda_and_hip(tables, "cudaMemcpy")),
        waited=re.compile(
            rb"\s*(?:\w+\s*\()?\s*(?:" + alternation(cuda_and_hip(tables, "cudaStreamSynchronize"))
            + rb"\s*\(\s*0\s*\)|" + alternation(cuda_and_hip(tables, "cudaDeviceSynchronize"))
            + rb"\s*\(\s*\))"),
        pinned_allocation=re.compile(
            rb"\b" + alternation(allocators)
            + rb"\s*\(\s*(?:\(\s*void\s*\*\*\s*\)"
            rb"\s*|reinterpret_cast\s*<\s*void\s*\*\*\s*>\s*\(\s*)?&\s*([A-Za-z0-9_]+)"),
        pinned_allocators=tuple(sorted(name.encode() for name in allocators)))


def _pinned_here(ctx: RuleContext, body, name: str) -> bool:
    """Is ``name`` allocated pinned in code in ``body``? The file's pinned allocations are
    found in one pass and kept by name, not searched for again for each loop."""
    by_name = ctx.cache.get("XFR003.pinned")
    if by_name is None:
        by_name = ctx.cache["XFR003.pinned"] = {}
        calls = _calls(ctx.tables)
        # tried where an allocator's name stands (a leading \b is tried at every byte)
        for match in name_matches(calls.pinned_allocation, calls.pinned_allocators, ctx.data):
            by_name.setdefault(match.group(1), []).append((match.start(), match.end()))
    return any(body.open <= start and end <= body.close and ctx.in_code(start)
               for start, end in by_name.get(name.encode(), ()))
