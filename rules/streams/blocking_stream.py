"""STM001: streams created blocking (synchronising with the null stream)."""

from __future__ import annotations

import bisect
import functools
import re

from migrator.apitables import ApiTables
from migrator.diagnostics import Applicability, Diagnostic, Edit, Fix
from migrator.rule import Rule, RuleContext
from migrator.semantic.calls import WORD_BYTES, find_name, lexical_call
from migrator.semantic.scopes import (IDENTIFIER, Block, enclosing_call, function_at, last_of,
                                      word_offsets)
from migrator.semantic.spellings import api_name, hip_name, is_hip, spellings

from ..markers import unproven_fix
from .null_stream import null_stream_uses, stream_apis


class BlockingStream(Rule):
    """Make streams non-blocking where nothing relies on the legacy null stream.

    ## What it does
    Finds ``cudaStreamCreate(&s)`` / ``hipStreamCreate(&s)`` and rewrites it to
    ``hipStreamCreateWithFlags(&s, hipStreamNonBlocking)`` when the function that creates the
    stream does not rely on the null stream's implicit ordering with it: the stream is a local
    of that function, is handed to no function other than runtime APIs and launches (a
    library's ``SetStream``, in CUDA or HIP spelling, is other code), and the function issues
    no work to the null stream (launches without a stream or on stream 0,
    ``hipMemcpy``/``hipMemset`` and other calls without a stream, events or waits on stream 0,
    library calls without a stream set). Otherwise it reports what relies on the null stream,
    with the line, and offers the rewrite as an unsafe fix.

    ## Why is this bad on AMD
    The null stream is the legacy blocking stream in HIP as in CUDA: a stream made by
    ``hipStreamCreate`` waits for work on the null stream and the null stream waits for it
    (AMD's HIP runtime API reference: ``hipStreamSynchronize`` on the null stream "will cause
    the command to wait for other streams on the same device"). Every ``hipMemcpy`` or launch
    without a stream then serialises with this stream, and independent work that should
    overlap does not. A stream created with ``hipStreamNonBlocking`` "does not implicitly
    synchronize with null stream" (the same reference, on that flag); dependencies between
    streams are then stated with events (``hipEventRecord`` + ``hipStreamWaitEvent``).

    ## Example
    ```cpp
    hipStream_t s;
    hipStreamCreate(&s);
    kernel<<<grid, block, 0, s>>>(d);
    hipStreamSynchronize(s);
    ```

    ## Use instead
    ```cpp
    hipStream_t s;
    hipStreamCreateWithFlags(&s, hipStreamNonBlocking);
    kernel<<<grid, block, 0, s>>>(d);
    hipStreamSynchronize(s);
    ```

    ## Fix safety
    Safe when the function shows no reliance on the null stream (as above). Unsafe otherwise:
    a ``hipMemcpy`` after work on the stream, for example, would no longer wait for it. Calls
    inside macros are reported only.
    """

    code = "STM001"
    name = "blocking-stream"
    summary = "stream created blocking (synchronises with the null stream)"
    family = "streams"
    fix = "sometimes"
    optimization = True

    def check(self, ctx: RuleContext):
        names = {n.encode() for n in spellings(ctx.tables, "hipStreamCreate")}
        names = {n for n in names if n in ctx.data}
        spelled = {}  # in HIP code or not -> (flags call, flag) as that code writes them
        for name, start, end in find_name(ctx, names):
            call = lexical_call(ctx, start, end)
            if call is None:
                continue
            api = name.decode()
            hip = is_hip(api)
            if hip not in spelled:
                spelled[hip] = (api_name(ctx, "cudaStreamCreateWithFlags", hip),
                                api_name(ctx, "cudaStreamNonBlocking", hip))
            flags_call, flag = spelled[hip]
            if call == "macro" or len(call.arguments) != 1:
                message = (f"{api} makes a blocking stream: it synchronises with the null stream "
                           f"({flags_call}(&s, {flag}) where nothing relies on that)")
                yield Diagnostic("STM001", message, start, end,
                                 unproven_fix(ctx, start, "STM001", message),
                                 library="runtime", symbol="StreamCreate")
                continue
            arg_start, arg_end = call.arguments[0]
            argument = ctx.data[arg_start:arg_end].decode("utf-8", "replace")
            reasons = _reliance(ctx, start, argument)
            fix = Fix(f"create the stream with {flag}",
                      (Edit(start, end, flags_call.encode()),
                       Edit(arg_end, arg_end, f", {flag}".encode())),
                      Applicability.UNSAFE if reasons else Applicability.SAFE)
            if reasons:
                said = "; ".join(what if line is None else f"{what} at line {line}"
                                 for what, line in reasons)
                message = _RELIED_ON.format(api=api, reasons=said)
                # the marker leaves the line numbers out: said so here unless a reason's own
                # text (code it quotes) holds what unproven_fix would read as one
                bare = None
                if not any("line" in what for what, _ in reasons):
                    bare = _RELIED_ON.format(api=api, reasons="; ".join(w for w, _ in reasons))
                # the reasons quote calls other rules rewrite (a hipMemcpy made asynchronous):
                # the marker is known again by what comes before them
                key = _RELIED_ON.format(api=api, reasons="\0").partition("\0")[0]
                fix = unproven_fix(ctx, start, "STM001", message, fix, bare, key)
            else:
                message = (f"{api} makes a blocking stream; nothing here relies on the null "
                           f"stream: {flags_call}(..., {flag})")
            yield Diagnostic("STM001", message, start, end, fix, library="runtime", symbol="StreamCreate")


_RELIED_ON = ("{api} makes a blocking stream, and this code relies on the null stream's "
              "implicit ordering: {reasons}. Order work with events (hipEventRecord + "
              "hipStreamWaitEvent) and make the stream non-blocking")


def _reliance(ctx: RuleContext, offset: int, argument: str) -> list[tuple[str, int | None]]:
    """Why making this stream non-blocking could change the program (empty: nothing), each
    reason with the line it is at (None: none)."""
    body = function_at(ctx, offset)
    if body is None:
        return [("the stream is not created inside a function body", None)]
    variable = IDENTIFIER.search(argument.lstrip("&( ").encode())
    if variable is None or not argument.lstrip().startswith("&"):
        return [(f"the stream {argument} is reached through a pointer: code elsewhere may use it",
                 None)]
    name = variable.group()
    # once per function and name, from per-file indexes instead of scans of the body for each
    # creation: a function may create hundreds of streams, or one stream hundreds of times
    key = ("STM001.reliance", body.open, name)
    escapes = ctx.cache.get(key)
    if escapes is None:
        escapes = ctx.cache[key] = _escapes(ctx, body, name)
    null_uses = ctx.cache.get(("STM001.null_stream_uses", body.open))
    if null_uses is None:
        line_starts = ctx.source.line_starts  # a line is the count of lines starting at or before
        line = functools.partial(bisect.bisect_right, line_starts)
        null_uses = ctx.cache[("STM001.null_stream_uses", body.open)] = [
            (what, line(at)) for at, what in null_stream_uses(ctx, body)]
    return escapes + null_uses


def _escapes(ctx: RuleContext, body: Block, name: bytes) -> list[tuple[str, int | None]]:
    """How code other than this function may use the stream ``name``: it is not a local of
    ``body``, or ``body`` hands it to a function that is not a runtime API (the first such)."""
    found = []
    types, type_words = _stream_types(ctx.tables)
    # where the name stands in the body, in code or not (what declares reads), once
    uses = word_offsets(ctx, name, body.open, body.close, code_only=False)
    if not _declared(ctx, _declaration_head(types), type_words, name, uses, body.open,
                     body.close):
        found.append((f"'{name.decode()}' is not a local of this function: other code may use it",
                      None))
    runtime = stream_apis(ctx.tables).runtime  # runtime APIs and launches, in either spelling
    in_runtime = ctx.cache.setdefault("STM001.in_runtime", {})  # callee -> a runtime API?
    code, data = ctx.code, ctx.data
    limit = body.open
    for use in uses:
        if code[use] == 32:
            continue  # not in code (as word_offsets reads a blank there)
        # _callee_name, inline: most uses are one lookup of the text before them
        window = use - _LAST_OPEN_WINDOW if use - _LAST_OPEN_WINDOW > limit else limit
        boundary = max(code.rfind(b";", window, use), code.rfind(b"{", window, use),
                       code.rfind(b"}", window, use))
        callee = False
        if boundary != -1:
            text = data[boundary:use]
            if code.startswith(text, boundary):
                callee = _CALLEES.get(text, False)
        if callee is False:
            callee = _callee_name(ctx, use, limit)
        if callee is None:
            continue
        runtime_api = in_runtime.get(callee)
        if runtime_api is None:
            runtime_api = in_runtime[callee] = hip_name(ctx.tables, callee.decode()) in runtime
        if not runtime_api:
            found.append((f"'{name.decode()}' is passed to {callee.decode()}()",
                          ctx.source.position(use)[0]))
            break
    return found


_SEGMENT_ENDS = (b";", b"(", b")", b"{", b"}")  # what ends the text a declaration is read in


def _declared(ctx: RuleContext, head: re.Pattern, types: tuple[bytes, ...], name: bytes,
              uses: list[int], start: int, end: int) -> bool:
    """Is ``name`` declared in [start, end) as one of the stream types: ``head`` (a type word
    up to where a declarator's name stands) spans the text from a type word to a use of the
    name, which ``;``, ``=``, ``,``, ``)`` or ``[`` follows? ``uses`` are
    ``word_offsets(ctx, name, start, end, code_only=False)``; the type words before each use in
    its statement (whole words, in code) are found by byte searches of that text alone."""
    data, code = ctx.data, ctx.code
    size = len(data)
    after_name = len(name)
    for at in uses:
        if not _AFTER_DECLARATOR.match(data, at + after_name, end):
            continue
        stop = last_of(data, _SEGMENT_ENDS, start, at)
        segment = stop + 1 if stop != -1 else start
        for word in types:
            after = len(word)
            candidate = data.find(word, segment, at)
            while candidate != -1:
                if ((candidate == 0 or data[candidate - 1] not in WORD_BYTES)
                        and (candidate + after == size or data[candidate + after] not in WORD_BYTES)
                        and code[candidate] != 32 and head.fullmatch(data, candidate, at)):
                    return True
                candidate = data.find(word, candidate + 1, at)
    return False


_AFTER_DECLARATOR = re.compile(rb"\s*[\[;=,)]")


@functools.lru_cache(maxsize=8)
def _declaration_head(types: bytes) -> re.Pattern:
    """A declaration as one of the stream ``types`` (an alternation), from its type word to
    where the declared name starts (the name differs from file to file, the head not)."""
    return re.compile(rb"\b(?:" + types + rb")\s+(?:[^;(){}]*[\s,*&])?")


# text from the last ';', '{' or '}' before a use to the use -> the callee enclosing_call finds
# there (None: none). enclosing_call reads no bracket before the last of those (its search ends
# there whatever the depth), nor a callee's name across it (no name byte, no blank): the text
# decides where it holds no comment or literal (the code as read is the bytes). Generated and
# repetitive code repeats its calls: most uses are one lookup
_CALLEES: dict[bytes, bytes | None] = {}
_LAST_OPEN_WINDOW = 64  # as far back as enclosing_call first looks


def _callee_name(ctx: RuleContext, use: int, limit: int) -> bytes | None:
    """The callee of ``enclosing_call(ctx, use, limit)`` (None: none), kept per text before
    ``use`` (``_CALLEES``)."""
    code = ctx.code
    window = max(limit, use - _LAST_OPEN_WINDOW)
    boundary = max(code.rfind(b";", window, use), code.rfind(b"{", window, use),
                   code.rfind(b"}", window, use))
    callee = enclosing_call(ctx, use, limit)
    name = None if callee is None else callee[0]
    if boundary != -1:
        text = ctx.data[boundary:use]
        if code.startswith(text, boundary):  # no comment or literal there: read as bytes
            if len(_CALLEES) >= 8192:
                _CALLEES.clear()
            _CALLEES[text] = name
    return name


@functools.lru_cache(maxsize=8)
def _stream_types(tables: ApiTables) -> tuple[bytes, tuple[bytes, ...]]:
    """The stream type's spellings (hipStream_t, cudaStream_t, CUstream), as a regex
    alternation and as words."""
    types = b"|".join(sorted(t.encode() for t in spellings(tables, "hipStream_t")))
    return types, tuple(types.split(b"|"))
