"""STM002: independent work issued from a loop onto one stream."""

from __future__ import annotations

import functools
import re

from migrator.diagnostics import Diagnostic
from migrator.rule import Rule, RuleContext
from migrator.semantic.scopes import loops

from ..markers import unproven_fix
from .null_stream import has_launches, is_null_stream, launches

_LOOP_VARIABLE = re.compile(r"^\s*(?:[\w:]+\s+)*(?P<var>[A-Za-z_]\w*)\s*=")


@functools.lru_cache(maxsize=256)
def _word_pattern(name: str) -> re.Pattern:
    """``name`` as a whole word (a file's loops use a few names: i, t, r)."""
    return re.compile(r"\b" + re.escape(name) + r"\b")


class SerializedWork(Rule):
    """Report loops that launch per-iteration kernels onto one stream.

    ## What it does
    Finds ``for`` loops whose body launches a kernel (``<<<...>>>``) on the null stream or on
    one stream that does not change with the loop variable, with arguments that do (each
    iteration works on its own data). Report only.

    ## Why is this bad on AMD
    A HIP stream runs its work in order (AMD's HIP programming guide, on streams): iterations
    that do not depend on each other still wait for each other, and small kernels leave most
    of the GPU idle. Work on different streams may run concurrently, and a stream created with
    ``hipStreamNonBlocking`` "does not implicitly synchronize with null stream" (AMD's HIP
    runtime API reference, ``hipStreamCreateWithFlags``). Spread independent work over several
    such streams and state the real dependencies with events (``hipEventRecord`` on the
    producer's stream, ``hipStreamWaitEvent`` on the consumer's: the API reference says all
    later work of that stream waits for the event). On an NVIDIA H200 (driver 580.159.04, nvcc
    13.0; kernels/README.md), ``kernels/stream_tasks.cu``'s 100 independent ~1 ms tasks took
    100.2 ms on the default stream and 13.1 ms on 8 streams. No AMD GPU has measured it.

    ## Example
    ```cpp
    for (int t = 0; t < tasks; ++t) work<<<1, 256>>>(out + t * n, t);
    ```

    ## Use instead
    ```cpp
    for (int t = 0; t < tasks; ++t) work<<<1, 256, 0, streams[t % NUM_STREAMS]>>>(out + t * n, t);
    ```

    ## Fix safety
    No fix: whether the iterations are independent is the author's knowledge.
    """

    code = "STM002"
    name = "serialized-work"
    summary = "loop launches independent work onto one stream"
    family = "streams"
    fix = "never"
    optimization = True

    def check(self, ctx: RuleContext):
        data = ctx.data
        if b"<<" not in data or not has_launches(ctx):
            return  # no launch ('<<<', or '<< <' as nvcc reads it)
        for loop in loops(ctx):
            if data[loop.start : loop.start + 3] != b"for":
                continue
            found = list(launches(ctx, loop.body[0], loop.body[1]))
            if not found:
                continue  # most loops: nothing more to read
            header = data[loop.header[0] : loop.header[1]].decode("utf-8", "replace")
            variable = _LOOP_VARIABLE.match(header)
            if variable is None:
                continue
            var = _word_pattern(variable.group("var"))
            for launch in found:
                close, stream = launch.close, launch.stream
                arguments_end = data.find(b";", close, loop.body[1])
                if arguments_end == -1:
                    continue
                if var.search(stream) or not var.search(
                        data[close:arguments_end].decode("utf-8", "replace")):
                    continue
                line, _ = ctx.source.position(loop.start)
                where = ("the null stream" if is_null_stream(stream, ctx.tables)
                         else f"the one stream '{stream}'")
                message = (f"the loop at line {line} launches one kernel per iteration on "
                           f"{where}: if the iterations are independent, spread them over "
                           "several non-blocking streams and order what depends with events "
                           "(a stream runs its work in order: `rocmigrate rule STM002`)")
                yield Diagnostic("STM002", message, launch.start, close + 3,
                                 unproven_fix(ctx, loop.start, "STM002", message),
                                 library="runtime", symbol="launch", severity="info")
                break
