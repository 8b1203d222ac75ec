"""STM001: streams created blocking (synchronising with the null stream)."""

from __future__ import annotations

from migrator.diagnostics import Diagnostic
from migrator.rule import Rule, RuleContext

from ..calls import find_name

_NAMES = {b"hipStreamCreate", b"cudaStreamCreate"}


class BlockingStream(Rule):
    """Report streams created with ``hipStreamCreate`` (blocking streams).

    ## What it does
    Finds ``hipStreamCreate(&s)`` (and ``cudaStreamCreate`` before conversion). Detection only:
    the rewrite to ``hipStreamCreateWithFlags(&s, hipStreamNonBlocking)``, with the analysis of
    what relies on the implicit ordering, belongs to the stream optimisation rules.

    ## Why is this bad on AMD
    The null stream is the legacy blocking stream in HIP as in CUDA: a stream made by
    ``hipStreamCreate`` waits for work on the null stream and the null stream waits for it.
    Every ``hipMemcpy`` or launch without a stream then serialises with this stream, and
    independent work that should overlap does not. Non-blocking streams avoid this, where the
    code does not rely on that implicit ordering.

    ## Example
    ```cpp
    hipStream_t s;
    hipStreamCreate(&s);
    ```

    ## Use instead
    ```cpp
    hipStream_t s;
    hipStreamCreateWithFlags(&s, hipStreamNonBlocking);  // if nothing relies on the null stream
    ```

    ## Fix safety
    No fix here: making a stream non-blocking is only safe when no code relies on its implicit
    synchronisation with the null stream.
    """

    code = "STM001"
    name = "blocking-stream"
    summary = "stream created blocking (synchronises with the null stream)"
    family = "streams"
    fix = "never"

    def check(self, ctx: RuleContext):
        names = {n for n in _NAMES if n in ctx.data}
        for name, start, end in find_name(ctx, names):
            if ctx.data[end : end + 16].lstrip()[:1] != b"(":
                continue
            yield Diagnostic("STM001", f"{name.decode()} makes a blocking stream: it synchronises "
                             "with the null stream (hipStreamCreateWithFlags(&s, "
                             "hipStreamNonBlocking) where nothing relies on that)", start, end,
                             library="runtime", symbol=name.decode())
