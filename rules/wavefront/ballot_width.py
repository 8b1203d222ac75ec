"""WAV003: 64-bit lane masks (ballots) narrowed to 32 bits or counted with 32-bit builtins."""

from __future__ import annotations

import re

from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Rule, RuleContext

from ..calls import call_at, find_name
from .common import MASK_RESULTS

_COUNTERS = {"__popc": "__popcll", "__ffs": "__ffsll", "__clz": "__clzll"}
_NAMES = {name.encode() for name in MASK_RESULTS}
_NARROW_TYPES = re.compile(rb"^(?:const\s+)?(?:unsigned(?:\s+int)?|uint32_t|int|int32_t)$")


class BallotWidth(Rule):
    """Report ballot results narrowed to 32 bits; count them with the 64-bit builtins.

    ## What it does
    ``__ballot``, ``__ballot_sync``, ``__activemask`` and ``__match_*_sync`` return a 64-bit
    lane mask in HIP. When such a result is passed straight to ``__popc``, ``__ffs`` or
    ``__clz``, the call is replaced by ``__popcll`` / ``__ffsll`` / ``__clzll``. When it
    initialises or is assigned to a 32-bit variable (``unsigned``, ``int``, ``uint32_t``), the
    narrowing is reported.

    ## Why is this bad on AMD
    On a 64-lane wavefront the upper 32 bits carry lanes 32-63: a 32-bit count or variable drops
    half the wavefront silently (``__popc`` of a ballot counts at most 32 lanes).

    ## Example
    ```cpp
    int voters = __popc(__ballot_sync(mask, vote));
    unsigned active = __activemask();
    ```

    ## Use instead
    ```cpp
    int voters = __popcll(__ballot_sync(mask, vote));
    unsigned long long active = __activemask();
    ```

    ## Fix safety
    The counter rewrite is safe: the 64-bit builtin gives the same result for lanes 0-31 and
    counts the others too. Narrowed variables are reported only: widening a variable changes the
    type of every later use.
    """

    code = "WAV003"
    name = "ballot-width"
    summary = "64-bit lane mask narrowed or counted as 32 bits"
    family = "wavefront"
    fix = "sometimes"

    def check(self, ctx: RuleContext):
        names = {n for n in _NAMES if n in ctx.data}
        for name, start, end in find_name(ctx, names):
            builtin = name.decode()
            call = call_at(ctx, start, end)
            if call is None:
                continue
            if call == "macro":
                counter = _counter_before(ctx.data, start)
                if counter:
                    yield Diagnostic(
                        "WAV003", f"{counter} of a {builtin} result inside a macro counts lanes "
                        f"0-31 only; use {_COUNTERS[counter]} (not fixed inside macros)",
                        start, end, library="device", symbol=builtin)
                continue
            node = call.node
            parent = node.parent
            # __popc(__ballot(...)): the call is the only argument of a 32-bit counter
            if parent is not None and parent.type == "argument_list":
                outer = parent.parent
                function = outer.child_by_field_name("function") if outer is not None else None
                counter = ctx.text(function) if function is not None else ""
                if counter in _COUNTERS and len(parent.named_children) == 1:
                    wide = _COUNTERS[counter]
                    yield Diagnostic(
                        "WAV003", f"{counter} of a {builtin} result counts lanes 0-31 only; "
                        f"use {wide}", function.start_byte, function.end_byte,
                        Fix(f"use {wide}", (Edit(function.start_byte, function.end_byte,
                                                 wide.encode()),)),
                        library="device", symbol=builtin)
                continue
            declared = _narrow_target(ctx, node)
            if declared:
                yield Diagnostic(
                    "WAV003", f"{builtin} returns a 64-bit lane mask; {declared} keeps lanes 0-31 "
                    "only (use unsigned long long / uint64_t)", start, end,
                    library="device", symbol=builtin)


def _counter_before(data: bytes, start: int) -> str:
    """``__popc(`` (or another 32-bit counter) written right before ``start``, or ''."""
    match = re.search(rb"(__popc|__ffs|__clz)\s*\(\s*$", data[max(0, start - 32) : start])
    return match.group(1).decode() if match else ""


def _narrow_target(ctx: RuleContext, call) -> str:
    """Describe the 32-bit variable a mask lands in, or ''."""
    parent = call.parent
    if parent is None:
        return ""
    if parent.type == "init_declarator" and parent.child_by_field_name("value") == call:
        declaration = parent.parent
        kind = declaration.child_by_field_name("type") if declaration is not None else None
        if kind is not None:
            prefix = ctx.data[declaration.start_byte : kind.end_byte]
            type_text = re.sub(rb"\s+", b" ", prefix).strip()
            if _NARROW_TYPES.match(type_text):
                variable = ctx.text(parent.child_by_field_name("declarator"))
                return f"'{type_text.decode()} {variable}'"
    return ""
