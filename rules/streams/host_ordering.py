"""STM003: the host waits for one stream before issuing work on another."""

from __future__ import annotations

from migrator.diagnostics import Diagnostic
from migrator.rule import Rule, RuleContext
from migrator.semantic.calls import arguments
from migrator.semantic.scopes import function_at

from ..markers import unproven_fix
from .null_stream import api_calls, is_null_stream, launches

# HIP names; api_calls finds their CUDA spellings too
_SYNC = "hipStreamSynchronize"
_STREAM_INDEX = {"hipMemcpyAsync": 4, "hipMemsetAsync": 3, "hipMemcpy2DAsync": 7,
                 "hipMemcpyPeerAsync": 5}
_WAITS = {"hipStreamSynchronize", "hipDeviceSynchronize", "hipEventSynchronize"}
_READ = frozenset({_SYNC, *_STREAM_INDEX, *_WAITS})  # the calls this rule looks at


class HostOrdering(Rule):
    """Suggest events where the host waits for one stream only to start work on another.

    ## What it does
    Finds ``hipStreamSynchronize(a)`` followed, in the same function, by a launch or an async
    copy on a different stream ``b``, with no other wait in between. Report only.

    ## Why is this bad on AMD
    The host blocks until stream ``a`` is empty (``hipStreamSynchronize`` is host-synchronous:
    AMD's HIP runtime API reference), and only then submits ``b``'s work: the GPU idles for a
    round trip through the host, and the host cannot queue anything meanwhile. An event states
    the same dependency on the GPU: ``hipEventRecord(e, a)``, then
    ``hipStreamWaitEvent(b, e, 0)``, after which all work submitted to ``b`` "will wait until
    event reports completion before beginning execution" (the same reference): ``b`` starts as
    soon as ``a`` reaches the event, and the host never waits.

    ## Example
    ```cpp
    produce<<<g, b, 0, a>>>(buf);
    hipStreamSynchronize(a);
    consume<<<g, b, 0, s2>>>(buf);
    ```

    ## Use instead
    ```cpp
    produce<<<g, b, 0, a>>>(buf);
    hipEventRecord(ready, a);
    hipStreamWaitEvent(s2, ready, 0);
    consume<<<g, b, 0, s2>>>(buf);
    ```

    ## Fix safety
    No fix: the host may also need the results (then the wait stays), which only the author
    knows.
    """

    code = "STM003"
    name = "host-ordering"
    summary = "host waits for one stream before issuing work on another"
    family = "streams"
    fix = "never"
    optimization = True

    def check(self, ctx: RuleContext):
        data = ctx.data
        if b"StreamSynchronize" not in data:
            return
        for sync, name in api_calls(ctx, 0, len(data), _READ):
            if name != _SYNC:
                continue
            spans = arguments(ctx, sync.end() - 1)
            body = function_at(ctx, sync.start())
            if not spans or body is None:
                continue
            waited = data[spans[0][0] : spans[0][1]].decode("utf-8", "replace").strip()
            if is_null_stream(waited, ctx.tables):
                continue
            other = _next_stream_work(ctx, spans[-1][1], body.close)
            if other is None or other == waited:
                continue
            message = (f"the host waits for stream '{waited}' and then issues work on "
                       f"'{other}': if '{other}' only needs '{waited}' to finish first, record "
                       f"an event on '{waited}' and make '{other}' wait for it "
                       "(hipEventRecord + hipStreamWaitEvent) instead of blocking the host")
            yield Diagnostic("STM003", message, sync.start(), sync.end() - 1,
                             unproven_fix(ctx, sync.start(), "STM003", message),
                             library="runtime", symbol=waited, severity="info")


def _next_stream_work(ctx: RuleContext, start: int, end: int) -> str | None:
    """The stream of the first launch or async copy after ``start``; None if another wait, or
    nothing, comes first. Reads only up to the first of them: the next wait ends the search,
    so every wait of a function does not read the rest of it."""
    data = ctx.data
    first = None  # (offset, stream; None for a wait)
    for match, name in api_calls(ctx, start, end, _READ):
        if name in _WAITS:
            first = (match.start(), None)
            break
        if name in _STREAM_INDEX:
            spans = arguments(ctx, match.end() - 1)
            index = _STREAM_INDEX[name]
            stream = (data[spans[index][0] : spans[index][1]].decode("utf-8", "replace").strip()
                      if spans and len(spans) > index else "0")
            first = (match.start(), stream)
            break
    limit = first[0] if first is not None else end
    if data.find(b"<<", start, limit + 1) != -1:  # a launch ('<<<', '<< <') may come first
        for launch in launches(ctx, start, end):
            if launch.start < limit:
                first = (launch.start, launch.stream)
            break
    if first is None:
        return None
    stream = first[1]
    return None if stream is None or is_null_stream(stream, ctx.tables) else stream
