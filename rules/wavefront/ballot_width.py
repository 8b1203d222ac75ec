"""WAV003: 64-bit lane masks (ballots) narrowed to 32 bits or counted with 32-bit builtins."""

from __future__ import annotations

import re

from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Rule, RuleContext

from .common import MASK_RESULTS, builtin_names, call_arguments

_COUNTERS = {"__popc": "__popcll", "__ffs": "__ffsll", "__clz": "__clzll"}
_NAMES = frozenset(name.encode() for name in MASK_RESULTS)
# "unsigned x = " / "const unsigned int x = " right before the call: a 32-bit variable
_NARROW_DECLARATION = re.compile(
    rb"(?:^|[;{}(,]\s*|\n\s*)((?:const\s+)?(?:unsigned(?:\s+int)?|uint32_t|int|int32_t))\s+"
    rb"(\w+)\s*=\s*$")


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
        data = ctx.data
        for name, start, end in builtin_names(ctx, _NAMES):
            builtin = name.decode()
            spans = call_arguments(ctx, end)
            if spans is None:
                continue
            close = _closing_paren(data, end, spans)
            counter = _counter_before(data, start)
            if counter and close is not None and data[close + 1 : close + 32].lstrip()[:1] == b")":
                wide = _COUNTERS[counter]
                at = data.rindex(counter.encode(), max(0, start - 32), start)
                if ctx.in_directive(start):
                    yield Diagnostic(
                        "WAV003", f"{counter} of a {builtin} result inside a macro counts lanes "
                        f"0-31 only; use {wide} (not fixed inside macros)",
                        start, end, library="device", symbol=builtin)
                    continue
                yield Diagnostic(
                    "WAV003", f"{counter} of a {builtin} result counts lanes 0-31 only; use {wide}",
                    at, at + len(counter),
                    Fix(f"use {wide}", (Edit(at, at + len(counter), wide.encode()),)),
                    library="device", symbol=builtin)
                continue
            declared = _NARROW_DECLARATION.search(data[max(0, start - 120) : start])
            if declared:
                variable = f"'{declared.group(1).decode()} {declared.group(2).decode()}'"
                yield Diagnostic(
                    "WAV003", f"{builtin} returns a 64-bit lane mask; {variable} keeps lanes 0-31 "
                    "only (use unsigned long long / uint64_t)", start, end,
                    library="device", symbol=builtin)


def _counter_before(data: bytes, start: int) -> str:
    """``__popc(`` (or another 32-bit counter) written right before ``start``, or ''."""
    match = re.search(rb"\b(__popc|__ffs|__clz)\s*\(\s*$", data[max(0, start - 32) : start])
    return match.group(1).decode() if match else ""


def _closing_paren(data: bytes, name_end: int, spans: list[tuple[int, int]]) -> int | None:
    """Offset of the ``)`` closing the call whose name ends at ``name_end`` (its argument
    ``spans``)."""
    pos = spans[-1][1] if spans else data.index(b"(", name_end) + 1
    close = data.find(b")", pos)
    return None if close == -1 else close
