"""WRP001/WRP002: lower warp-sync builtins for ROCm releases that lack them."""

from __future__ import annotations

import bisect
import re

from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Marker, Rule, RuleContext
from migrator.semantic.calls import find_name, lexical_call, macro_arguments
from migrator.versions import format_version

from ..markers import marker_fix

# the argument counts CUDA's builtins take, mask included: a call in a macro body with another
# count has an argument that a macro parameter (or __VA_ARGS__) stands for several of, or none
_ARITY = {"__shfl_sync": (3, 4), "__shfl_up_sync": (3, 4), "__shfl_down_sync": (3, 4),
          "__shfl_xor_sync": (3, 4), "__ballot_sync": (2, 2), "__any_sync": (2, 2),
          "__all_sync": (2, 2), "__syncwarp": (0, 1)}
# the line splices of a #define body (with the indent of the line each continues on): an edit
# that drops text keeps them, so the body keeps its lines
_SPLICE = re.compile(rb"\\\r?\n[ \t]*")
_BLANKS_AND_SPLICES = re.compile(rb"(?:[ \t]|\\\r?\n)*")
# a #define's head, read from just after its '#': the macro's name and parameters (the body
# starts where it ends)
_DEFINE_HEAD = re.compile(rb"[ \t]*define(?:[ \t]|\\\r?\n)+\w+(?:\([^)]*\))?")
# a word ending where the code before a name ends: a call follows only these words
_WORD_BEFORE = re.compile(rb"\w+\Z")
_CALL_AFTER = frozenset({b"return", b"else", b"do", b"case", b"co_return", b"throw"})
_VARIADIC = re.compile(rb"\b__VA_(?:ARGS|OPT)__\b")


class WarpSyncLowering(Rule):
    """Lower ``__shfl_*_sync``, ``__ballot_sync``, ``__any_sync``, ``__all_sync`` and
    ``__syncwarp`` to the forms older ROCm releases have.

    ## What it does
    HIP has the ``*_sync`` warp builtins only from ROCm 6.2. For an older target (``--rocm``),
    each call is rewritten to the non-sync builtin without its mask argument
    (``__shfl_down_sync(mask, v, 1)`` -> ``__shfl_down(v, 1)``, ``__ballot_sync(mask, p)`` ->
    ``__ballot(p)``) and ``__syncwarp()`` to a wavefront barrier. The lowering table is
    ``rules/api/lowerings.tsv`` (its ``WRP001`` rows). Calls inside ``#define`` bodies are
    lowered the same way, their line continuations kept, where the call is read whole in the
    body: its argument list closes inside the macro, the mask is written there (not
    ``__VA_ARGS__``) and the builtin gets as many arguments as it takes. Other uses in a macro
    (``#define SHFL __shfl_sync``, ``__shfl_sync(__VA_ARGS__)``) are reported (WRP002) with a
    marker; a macro that defines the builtin's name itself is left alone.

    ## Why is this bad on AMD
    The sync forms do not exist before ROCm 6.2, so the code does not build. The non-sync forms
    act on all active lanes of the 64-lane wavefront; they equal the sync form when the mask names
    every active lane (the usual ``0xffffffff`` in full-warp code), not for partial masks. Check
    the message for each site: a mask narrower than the wavefront needs a person (see WAV rules).

    ## Example
    ```cpp
    v += __shfl_down_sync(0xffffffff, v, offset);
    #define SHFL_XOR(v, m) \\
      __shfl_xor_sync(0xffffffff, v, m)
    ```

    ## Use instead
    ```cpp
    v += __shfl_down(v, offset);
    #define SHFL_XOR(v, m) \\
      __shfl_xor(v, m)
    ```

    ## Fix safety
    Safe for full masks, which is what the rewrite assumes; the diagnostic names the dropped mask
    so that partial masks can be reviewed. In a macro body the mask may be a macro parameter:
    the message names it as written, and what each use of the macro passes needs the same
    review. A macro whose call cannot be read whole is left to a person (WRP002).
    """

    code = "WRP001"
    extra_codes = ("WRP002",)
    category = "conversion"
    attention_codes = ("WRP002",)
    name = "warp-sync-lowering"
    summary = "warp-sync builtin missing in the target ROCm"
    family = "wavefront"
    fix = "sometimes"

    def check(self, ctx: RuleContext):
        rocm = ctx.settings.rocm
        data = ctx.data
        lowerings = {encoded: low for _, encoded, low in ctx.tables.lowerings_of(self.code, rocm)
                     if encoded in data}
        target = format_version(rocm)
        for name, start, end in find_name(ctx, lowerings):
            low = lowerings[name]
            if ctx.in_directive(start):
                body = _define_body(ctx, start)
                if body is None or start < body:
                    continue  # no #define body (#ifdef NAME), or the macro's own name
                # (the list may open on the next line of the body: a name, a splice, a list)
                args = macro_arguments(ctx, _BLANKS_AND_SPLICES.match(ctx.code, end).end())
                unread = _unread(ctx, low, body, start, args)
                if unread:
                    text = (f"{low.cuda} {low.lacking()} (target {target}): use "
                            f"{low.replacement} in this macro by hand ({unread})")
                    yield Diagnostic("WRP002", text, start, end,
                                     marker_fix(ctx, start, Marker("WRP002", text)),
                                     symbol=low.cuda, library="device")
                    continue
            else:
                call = lexical_call(ctx, start, end)
                if call is None:
                    continue
                args = call.arguments
            yield _lowered(ctx, low, start, end, args, target)


def _lowered(ctx: RuleContext, low, start: int, end: int, args: list[tuple[int, int]],
             target: str) -> Diagnostic:
    """The finding that lowers the call of ``low.cuda`` at [start, end) with argument spans
    ``args``: the name replaced, the mask argument dropped with its comma."""
    cuda = low.cuda
    data = ctx.data
    edits = [Edit(start, end, low.replacement.encode())]
    message = f"{cuda} -> {low.replacement} (ROCm {target} lacks {cuda})"
    drop = low.drop_argument
    if drop is not None and drop < len(args):
        begin, finish = args[drop]
        mask = data[begin:finish].decode("utf-8", "replace")
        if len(args) > drop + 1:
            # drop "mask," and the blanks after the comma; comments after it stay
            finish = ctx.code.index(b",", finish) + 1
            while data[finish : finish + 1] in (b" ", b"\t"):
                finish += 1
        # the line splices of a macro body in what is dropped stay, so its lines stay
        kept = b"".join(_SPLICE.findall(data, begin, finish))
        edits.append(Edit(begin, finish, kept))
        message += f"; mask {mask} dropped: correct only if it names every active lane"
    return Diagnostic("WRP001", message, start, end,
                      Fix(f"lower to {low.replacement}", tuple(edits)), symbol=cuda,
                      library="device", severity="warning")


def _define_body(ctx: RuleContext, offset: int) -> int | None:
    """Where the body of the ``#define`` holding ``offset`` starts (after the macro's name and
    parameters); None when the directive there is no ``#define``."""
    directives = ctx.directives
    index = bisect.bisect_right(directives.starts, offset) - 1
    head = _DEFINE_HEAD.match(ctx.data, directives.starts[index], directives.ends[index])
    return None if head is None else head.end()


def _unread(ctx: RuleContext, low, body: int, start: int,
            args: list[tuple[int, int]] | None) -> str:
    """Why the use of ``low.cuda`` at ``start`` in the macro body from ``body`` cannot be
    lowered as a call read whole ('' when it can): ``args`` are its argument spans (None: no
    argument list closes inside the macro)."""
    if args is None:
        return "no argument list follows it inside the macro"
    code = ctx.code
    pos = start  # back over blanks, splices and comments (a marker written there)
    while pos > body and code[pos - 1] in b" \t\r\n\\":
        pos -= 1
    before = _WORD_BEFORE.search(code, max(body, pos - 64), pos)
    if before is not None and before.group() not in _CALL_AFTER:
        return f"'{before.group().decode()}' before it: not read as a call"
    variadic = [_VARIADIC.search(code, begin, finish) is not None for begin, finish in args]
    drop = low.drop_argument
    if drop is not None and drop < len(args) and variadic[drop]:
        return "its mask is part of the macro's variable arguments"
    fewest, most = _ARITY.get(low.cuda, (0, len(args)))
    if not any(variadic) and not fewest <= len(args) <= most:
        takes = f"{fewest}" if fewest == most else f"{fewest} or {most}"
        return (f"{len(args)} argument{'s' * (len(args) != 1)} where {low.cuda} takes {takes}: "
                "a macro argument may stand for several")
    return ""
