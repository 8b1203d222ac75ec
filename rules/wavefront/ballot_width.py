"""WAV003: 64-bit lane masks (ballots) narrowed to 32 bits or counted with 32-bit builtins."""

from __future__ import annotations

import bisect
import re

from migrator.diagnostics import Applicability, Diagnostic, Edit, Fix
from migrator.rule import Rule, RuleContext
from migrator.semantic.scopes import blocks, word_offsets

from ..markers import unproven_fix
from .common import (MASK_RESULTS, SYNC_MASK_BUILTINS, builtin_names, call_arguments,
                     marker_site, stable_symbol)

_COUNTERS = {"__popc": "__popcll", "__ffs": "__ffsll", "__clz": "__clzll"}
# counted from the top bit: the 64-bit form gives 32 more for the same lanes 0-31 (reported)
_FROM_THE_TOP = "__clz"
# 32-bit bit builtins on a variable holding a narrowed mask: the 64-bit form once it is widened
# (None: the 64-bit result means something else, __clzll counts from bit 63: a person rewrites)
_VARIABLE_COUNTERS = {"__popc": "__popcll", "__ffs": "__ffsll", "__clz": None, "__brev": None}
_COUNTER_BEFORE = re.compile(rb"\b(__popc|__ffs|__clz)\s*\(\s*$")
_COUNTER_CALL = re.compile(rb"\b(__popc|__ffs|__clz|__brev)\s*\(\s*$")
_CALL_CLOSE = re.compile(rb"\s*\)")
# `mask & (1 << lane)` / `(1u << lane) & mask`: a lane tested with a 32-bit shift
_BIT_TEST_AFTER = re.compile(rb"\s*&\s*\(\s*1[uU]?\s*<<\s*[^()]*\)")
_BIT_TEST_BEFORE = re.compile(rb"\(\s*1[uU]?\s*<<\s*[^()]*\)\s*&\s*$")
_WIDE_TYPE = {b"uint32_t": b"uint64_t", b"int32_t": b"uint64_t"}
_NAMES = frozenset(name.encode() for name in MASK_RESULTS)
# "unsigned x = " / "const unsigned int x = " right before the call: a 32-bit variable
_NARROW_DECLARATION = re.compile(
    rb"(?:^|[;{}(,]\s*|\n\s*)((?:const\s+)?(?:unsigned(?:\s+int)?|uint32_t|int|int32_t))\s+"
    rb"(\w+)\s*=\s*$")


class BallotWidth(Rule):
    """Report ballot results narrowed to 32 bits; count them with the 64-bit builtins.

    ## What it does
    ``__ballot``, ``__ballot_sync``, ``__activemask`` and ``__match_*_sync`` return a 64-bit
    lane mask in HIP. When such a result is passed straight to ``__popc`` or ``__ffs``, the
    call is replaced by ``__popcll`` / ``__ffsll``; passed to ``__clz``, it is reported. When it
    initialises a 32-bit variable (``unsigned``, ``int``, ``uint32_t``), the narrowing is
    reported, and so is each 32-bit bit operation on that variable later in its block:
    ``__popc(mask)``, ``__ffs(mask)``, ``__clz(mask)``, ``__brev(mask)`` and lane tests
    ``mask & (1 << lane)``. Reported sites get a ``// rocmigrate WAV003:`` marker.

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
    The ``__popc``/``__ffs`` rewrite of a ballot passed straight to it is safe: the 64-bit
    builtin gives the same result for lanes 0-31 and counts the others too; so is widening a
    narrowed variable whose every later use in its block is a warp-sync builtin's mask or a
    ``__popc``/``__ffs`` of it (rewritten with it): those calls then name the lanes the ballot
    found, all of them. ``__clzll``
    counts from bit 63, 32 more than ``__clz`` for the same lanes: what uses the count changes
    with it, so ``__clz`` of a ballot is reported only. A narrowed variable is widened only
    with ``--unsafe-fixes`` (widening changes the type of every later use), together with its
    ``__popc``/``__ffs`` (to ``__popcll``/``__ffsll``) in the same fix; where the variable also
    meets ``__clz``, ``__brev`` or a 32-bit lane test, whose 64-bit forms mean something else,
    it is never rewritten.
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
            symbol = stable_symbol(ctx, builtin)
            spans = call_arguments(ctx, end)
            if spans is None:
                continue
            close = _closing_paren(data, end, spans)
            # read on the code view: a comment inside __ffs( /* ... */ __ballot(v)) is a blank
            counter = _counter_before(ctx.code, start)
            if counter and close is not None and ctx.code[close + 1 : close + 32].lstrip()[:1] == b")":
                wide = _COUNTERS[counter]
                at = data.rindex(counter.encode(), max(0, start - 32), start)
                if counter == _FROM_THE_TOP:
                    message = (f"__clz of a {builtin} result counts from bit 31 of a 64-bit lane "
                               "mask; __clzll counts from bit 63 (32 more for the same lanes): "
                               "rewrite what uses it, e.g. 31 - __clz(m) as 63 - __clzll(m)")
                    yield Diagnostic("WAV003", message, at, at + len(counter),
                                     unproven_fix(ctx, marker_site(ctx, at), "WAV003", message),
                                     library="device", symbol=symbol)
                    continue
                if ctx.in_directive(start):
                    message = (f"{counter} of a {builtin} result inside a macro counts lanes "
                               f"0-31 only; use {wide} (not fixed inside macros)")
                    yield Diagnostic("WAV003", message, start, end,
                                     unproven_fix(ctx, marker_site(ctx, start), "WAV003", message),
                                     library="device", symbol=symbol)
                    continue
                # the edit runs up to the ballot: a fix of the argument (ARG001 casts what
                # __ffs takes to int) touches it and waits for the next round, where it sees
                # __ffsll, instead of narrowing the mask in this one
                opening = data[at + len(counter) : start]
                yield Diagnostic(
                    "WAV003", f"{counter} of a {builtin} result counts lanes 0-31 only; use {wide}",
                    at, at + len(counter),
                    Fix(f"use {wide}", (Edit(at, start, wide.encode() + opening),)),
                    library="device", symbol=symbol)
                continue
            declared = _NARROW_DECLARATION.search(data[max(0, start - 120) : start])
            if declared:
                yield from _narrowed(ctx, builtin, symbol, declared, max(0, start - 120),
                                     (start, end), end if close is None else close + 1)


def _counter_before(data: bytes, start: int) -> str:
    """``__popc(`` (or another 32-bit counter) written right before ``start``, or ''."""
    match = _COUNTER_BEFORE.search(data[max(0, start - 32) : start])
    return match.group(1).decode() if match else ""


def _closing_paren(data: bytes, name_end: int, spans: list[tuple[int, int]]) -> int | None:
    """Offset of the ``)`` closing the call whose name ends at ``name_end`` (its argument
    ``spans``)."""
    pos = spans[-1][1] if spans else data.index(b"(", name_end) + 1
    close = data.find(b")", pos)
    return None if close == -1 else close


def _narrowed(ctx: RuleContext, builtin: str, symbol: str, declared: re.Match, base: int,
              name: tuple[int, int], call_end: int):
    """The finding of a ``builtin`` result (its name at ``name``) held in the 32-bit variable
    that ``declared`` (searched from ``base``) declares, and one for each 32-bit bit operation
    on that variable later in its block. Widening the variable and its ``__popc``/``__ffs``
    together is the unsafe rewrite; a use with no 64-bit twin of the same meaning (``__clz``,
    ``__brev``, a lane tested with ``1 << lane``) leaves the whole of it to a person."""
    data = ctx.data
    start, name_end = name
    written = declared.group(1).decode()
    variable = declared.group(2)
    message = (f"{builtin} returns a 64-bit lane mask; '{written} {variable.decode()}' keeps "
               "lanes 0-31 only (use unsigned long long / uint64_t)")
    if ctx.in_directive(start):
        yield Diagnostic("WAV003", message, start, name_end,
                         unproven_fix(ctx, marker_site(ctx, start), "WAV003", message),
                         library="device", symbol=symbol)
        return
    # the variable's uses in its block, read once for both questions below
    offsets = word_offsets(ctx, variable, call_end, _scope_end(ctx, call_end))
    uses = list(_bit_operations(ctx, variable, offsets))
    if only_masks(ctx, variable, offsets):
        # every later use is a warp-sync builtin's mask (or a __popc/__ffs of it, widened with
        # it): the widened variable keeps the lanes those calls name, and no 32-bit use is left
        yield Diagnostic("WAV003", message, start, name_end,
                         Fix(f"widen '{variable.decode()}' to 64 bits", _widening(
                             ctx, declared, base, uses)), library="device", symbol=symbol)
        return
    rewrite = None
    if all(wide is not None for _, _, _, wide in uses):
        rewrite = Fix(f"widen '{variable.decode()}' to 64 bits",
                      _widening(ctx, declared, base, uses), Applicability.UNSAFE)
    fix = unproven_fix(ctx, marker_site(ctx, start), "WAV003", message, rewrite)
    yield Diagnostic("WAV003", message, start, name_end, fix,
                     library="device", symbol=symbol)
    for at, end, counter, wide in uses:
        text = data[at:end].decode("utf-8", "replace")
        if wide is not None:
            use = (f"{counter}({variable.decode()}) sees lanes 0-31 only: "
                   f"'{variable.decode()}' holds a {builtin} result narrowed to 32 bits "
                   f"(widen it and use {wide})")
        elif counter.startswith("__"):
            use = (f"{counter}({variable.decode()}) works on 32 bits: '{variable.decode()}' "
                   f"holds a {builtin} result narrowed to 32 bits (widen it; the 64-bit "
                   f"{counter}ll counts from bit 63: review what the result means)")
        else:
            use = (f"'{text}' tests a lane of '{variable.decode()}', a {builtin} result "
                   "narrowed to 32 bits: lanes 32-63 are lost (widen it and shift 1ull)")
        # with the rewrite applied (--unsafe-fixes), the widened declaration settles this use
        widened = rewrite is not None and fix is rewrite
        marker = None if widened else unproven_fix(ctx, marker_site(ctx, at), "WAV003", use)
        yield Diagnostic("WAV003", use, at, end, marker, library="device", symbol=symbol)


def _widening(ctx: RuleContext, declared: re.Match, base: int, uses) -> tuple[Edit, ...]:
    """The edits that widen the declared variable and turn its __popc/__ffs into the 64-bit
    forms."""
    type_start = base + declared.start(1)
    type_text = declared.group(1)
    if type_text.startswith(b"const"):
        type_start += len(type_text) - len(type_text[5:].lstrip())
        type_text = type_text[5:].lstrip()
    edits = [Edit(type_start, type_start + len(type_text),
                  _WIDE_TYPE.get(type_text, b"unsigned long long"))]
    # each use's edit spans its whole call (``__ffs(m)`` -> ``__ffsll(m)``): a fix of the
    # argument in the same round (ARG001's ``(int)`` cast for the 32-bit __ffs) overlaps it and
    # waits for the next round, where it sees __ffsll of the widened variable
    data = ctx.data
    return tuple(edits + [Edit(at, end, wide.encode() + data[at + len(counter) : end])
                          for at, end, counter, wide in uses])


# a type word right before a use of the name: a declaration of it again (a loop body's)
_REDECLARED = re.compile(rb"\b(?:unsigned|signed|int|long|short|char|auto|bool|u?int(?:32|64)_t|"
                         rb"size_t)\s*[*&]?\s*$")
_MASK_ARGUMENT_BEFORE = re.compile(rb"\b(" + b"|".join(
    name.encode() for name, index in sorted(SYNC_MASK_BUILTINS.items()) if index == 0)
    + rb")\s*\(\s*$")
_WIDENED_USE_BEFORE = re.compile(rb"\b(?:__popc|__ffs)\s*\(\s*$")
_ARGUMENT_END = re.compile(rb"\s*[,)]")


def only_masks(ctx: RuleContext, variable: bytes, offsets: list[int]) -> bool:
    """Is every use of ``variable`` at ``offsets`` (its uses in code to the end of its block)
    up to a declaration of it again, and at least one, the mask argument of a warp-sync
    builtin, or the operand of a __popc/__ffs (which widen with it)? Read on the code view."""
    code = ctx.code
    seen = False
    for at in offsets:
        before = code[max(0, at - 40) : at]
        if _REDECLARED.search(before):
            break  # declared again: another variable from here on
        if _ARGUMENT_END.match(code, at + len(variable)) is None:
            return False
        if _MASK_ARGUMENT_BEFORE.search(before) is None and (
                _WIDENED_USE_BEFORE.search(before) is None
                or code[at + len(variable) :].lstrip()[:1] != b")"):
            return False
        seen = True
    return seen


def _scope_end(ctx: RuleContext, after: int) -> int:
    """The end of the innermost block holding ``after`` (the file's end outside any): the
    block opened last before ``after`` that still holds it (blocks nest, in order of their
    opening), read back from ``after`` by bisection instead of from the file's first block."""
    found = blocks(ctx)
    opens = ctx.cache.get("WAV003.block_opens")
    if opens is None:
        opens = ctx.cache["WAV003.block_opens"] = [block.open for block in found]
    for index in range(bisect.bisect_left(opens, after) - 1, -1, -1):
        if found[index].contains(after):
            return found[index].close
    return len(ctx.data)


def _bit_operations(ctx: RuleContext, variable: bytes, offsets: list[int]):
    """(start, end, operation, 64-bit form or None) of each 32-bit bit operation on
    ``variable`` at ``offsets`` (its uses in code to the end of its block), up to a
    declaration of it again: a ``__popc``/``__ffs``/``__clz``/``__brev`` call on it alone (at
    the builtin's name), or a lane test ``variable & (1 << lane)`` (operation '&')."""
    data = ctx.data
    for at in offsets:
        if _REDECLARED.search(data, max(0, at - 40), at):
            break  # declared again: another variable from here on
        end = at + len(variable)
        call = _COUNTER_CALL.search(data, max(0, at - 32), at)
        closing = _CALL_CLOSE.match(data, end)
        if call is not None and closing is not None:
            counter = call.group(1).decode()
            yield call.start(1), closing.end(), counter, _VARIABLE_COUNTERS[counter]
            continue
        test = _BIT_TEST_AFTER.match(data, end)
        if test is not None:
            yield at, test.end(), "&", None
            continue
        test = _BIT_TEST_BEFORE.search(data, max(0, at - 64), at)
        if test is not None:
            yield test.start(), end, "&", None
