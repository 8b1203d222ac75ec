"""WAV003: 64-bit lane masks (ballots) narrowed to 32 bits or counted with 32-bit builtins."""

from __future__ import annotations

import re
from typing import NamedTuple

from migrator.diagnostics import Applicability, Diagnostic, Edit, Fix
from migrator.rule import Rule, RuleContext

from ..markers import unproven_fix
from .common import (MASK_RESULTS, SYNC_MASK_BUILTINS, block_end, builtin_names,
                     call_arguments, marker_site, stable_symbol, words_in)

_COUNTERS = {"__popc": "__popcll", "__ffs": "__ffsll", "__clz": "__clzll"}
# counted from the top bit: the 64-bit form gives 32 more for the same lanes 0-31 (reported)
_FROM_THE_TOP = "__clz"
# 32-bit bit builtins on a variable holding a narrowed mask: the 64-bit form once it is widened
# (None: the 64-bit result means something else, __clzll counts from bit 63: a person rewrites)
_VARIABLE_COUNTERS = {"__popc": "__popcll", "__ffs": "__ffsll", "__clz": None, "__brev": None}
_COUNTER_BEFORE = re.compile(rb"\b(__popc|__ffs|__clz)\s*\(\s*$")
# a bit builtin whose ``(`` ends the text searched: the call that holds a use
_COUNTER_NAME = re.compile(rb"\b(__popc|__ffs|__clz|__brev)\s*\($")
# a use read whole: right after an assignment's ``=``, ``return``, or a ``(``/``,`` of a call,
# and right before the end of that expression
_READ_BEFORE = re.compile(rb"(?:(?<![=!<>+\-*/%&|^])=|\breturn|[(,])\s*$")
_READ_AFTER = re.compile(rb"\s*[;,)]")
# the opening of an if/while condition, right before the text searched ends
_CONDITION = re.compile(rb"\b(?:if|while)\s*\($")
# a 32-bit one shifted to a lane (``1 << lane``, ``1u << lane_id()``): ``1ull`` in a 64-bit flow
_LANE_BIT = re.compile(rb"(?<![\w.])(1[uU]?)\s*<<\s*(?:[\w.]+(?:\s*\([^()]*\))?|\([^()]*\))")
# the complement of an unsigned 32-bit literal (``~1u``, ``~0u``): zero-extended, it clears lanes
# 32-63 of a 64-bit mask (``~1ull``); a signed ``~1`` sign-extends and keeps them
_UNSIGNED_COMPLEMENT = re.compile(rb"~\s*(?:\d+|0[xX][0-9a-fA-F]+)([uU])(?![\w.])")
_WIDE_LITERAL = {_LANE_BIT: b"1ull", _UNSIGNED_COMPLEMENT: b"ull"}
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
    """Report ballot results narrowed to 32 bits; widen them with their whole flow.

    ## What it does
    ``__ballot``, ``__ballot_sync``, ``__activemask`` and ``__match_*_sync`` return a 64-bit
    lane mask in HIP. When such a result is passed straight to ``__popc`` or ``__ffs``, the
    call is replaced by ``__popcll`` / ``__ffsll``; passed to ``__clz``, it is reported. When it
    initialises a 32-bit variable (``unsigned``, ``int``, ``uint32_t``), the narrowing is
    reported, and so is each 32-bit use of the mask's flow later in its block: a
    ``__popc``/``__ffs``/``__clz``/``__brev`` whose argument reads it (``__popc(mask)``,
    ``__popc(mask & ((1 << lane) - 1))``), a 32-bit lane bit combined with it (``mask & (1 <<
    lane)``, ``mask ^= 1u << lane``; an unsigned complement ``mask &= ~1u``), a copy into
    another 32-bit variable (``int m = mask;``), whose own uses follow, and the mask read
    whole (stored, returned, passed on: what takes it may keep 32 bits). Reported sites get a
    ``// rocmigrate WAV003:`` marker; the rewrite widens the variable, its copies, counts
    (``__popcll``/``__ffsll``), lane bits (``1ull << lane``) and complements (``~1ull``)
    together, and marks the reads.

    ## Why is this bad on AMD
    On a 64-lane wavefront the upper 32 bits carry lanes 32-63: a 32-bit count or variable drops
    half the wavefront silently (``__popc`` of a ballot counts at most 32 lanes, and ``1 <<
    lane`` is undefined from lane 32 on). An aggregated atomic that ranks lanes with ``__popc(mask
    & ((1 << lane) - 1))`` hands lanes 32-63 the slots of lanes 0-31.

    ## Example
    ```cpp
    int voters = __popc(__ballot_sync(mask, vote));
    int active = __ballot(1);
    int rank = __popc(active & ((1 << lane) - 1));
    ```

    ## Use instead
    ```cpp
    int voters = __popcll(__ballot_sync(mask, vote));
    unsigned long long active = __ballot(1);
    int rank = __popcll(active & ((1ull << lane) - 1));
    ```

    ## Fix safety
    The ``__popc``/``__ffs`` rewrite of a ballot passed straight to it is safe: the 64-bit
    builtin gives the same result for lanes 0-31 and counts the others too; so is widening a
    narrowed variable whose every later use in its block is a warp-sync builtin's mask, read
    inside a ``__popc``/``__ffs`` (rewritten with it, a lane bit in its argument as ``1ull``),
    or a lane test that is a whole ``if``/``while`` condition (``if (mask & (1u << lane))``):
    those calls then count the lanes the ballot found, all of them, and the tests ask of each
    lane what they asked of lanes 0-31. ``__clzll`` counts from
    bit 63, 32 more than ``__clz`` for the same lanes: what uses the count changes with it, so
    ``__clz`` of a ballot is reported only. A narrowed variable with other uses (lane tests,
    compound updates, copies, plain reads) is widened only with ``--unsafe-fixes`` (widening
    changes the type of every later use), together with its whole flow in one fix; where the
    flow also meets ``__clz`` or ``__brev``, whose 64-bit forms mean something else, it is
    never rewritten.
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
    that ``declared`` (searched from ``base``) declares, and one for each 32-bit use of the
    mask's flow later in its block (``_flow``). Widening the variable with its whole flow is
    the rewrite (safe where every use is a warp-sync mask or a ``__popc``/``__ffs`` of it); a
    use with no 64-bit twin of the same meaning (``__clz``, ``__brev``) leaves the whole of it
    to a person."""
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
    offsets = words_in(ctx, variable, call_end, block_end(ctx, call_end))
    uses = _flow(ctx, variable, offsets)
    title = f"widen '{variable.decode()}' to 64 bits"
    if only_masks(ctx, variable, offsets, uses):
        # every later use is a warp-sync builtin's mask or counted by a __popc/__ffs (widened
        # with it): the widened variable keeps the lanes those calls name, and no 32-bit use
        # is left
        yield Diagnostic("WAV003", message, start, name_end,
                         Fix(title, _widening(ctx, _type_edit(declared, base), uses)),
                         library="device", symbol=symbol)
        return
    notes = [_note(data, builtin, variable, use) for use in uses]
    rewrite = None
    if all(use.wide is not None for use in uses) and not (
            ctx.settings.unsafe_fixes or not ctx.settings.write_markers):
        rewrite = _NAMED_ONLY  # unproven_fix writes the marker, which only names the rewrite
    elif all(use.wide is not None for use in uses):
        # a read's marker is one of the rewrite's edits: alone it would wait for a later round
        # (the rewrite's span holds it), where the widened variable is found no more
        reads = [unproven_fix(ctx, marker_site(ctx, use.start), "WAV003", note)
                 for use, note in zip(uses, notes) if use.operation == "read"]
        rewrite = Fix(title, _widening(ctx, _type_edit(declared, base), uses,
                                       [edit for read in reads if read for edit in read.edits]),
                      Applicability.UNSAFE)
    fix = unproven_fix(ctx, marker_site(ctx, start), "WAV003", message, rewrite)
    yield Diagnostic("WAV003", message, start, name_end, fix,
                     library="device", symbol=symbol)
    # with the rewrite applied (--unsafe-fixes), the widened declaration settles each use
    widened = rewrite is not None and fix is rewrite
    for use, note in zip(uses, notes):
        marker = None if widened else unproven_fix(ctx, marker_site(ctx, use.start), "WAV003", note)
        yield Diagnostic("WAV003", note, use.start, use.end, marker, library="device",
                         symbol=symbol)


# the rewrite where unproven_fix cannot apply it (markers are written, unsafe fixes are off): it
# gives the marker its "(rewrite with --unsafe-fixes)" alone, so its edits are not made
_NAMED_ONLY = Fix("widen to 64 bits", (), Applicability.UNSAFE)


def _note(data: bytes, builtin: str, variable: bytes, use: _Use) -> str:
    """The message of a finding at ``use``, in the flow of ``variable`` (a ``builtin``
    result narrowed to 32 bits)."""
    text = " ".join(data[use.start : use.end].decode("utf-8", "replace").split())
    holder = (f"'{use.variable.decode()}' holds a {builtin} result narrowed to 32 bits")
    if use.operation == "read":
        note = (f"'{text}' reads '{use.variable.decode()}', a {builtin} result: check "
                "that what takes it holds 64 bits (lanes 32-63)")
    elif use.operation == "copy":
        note = (f"'{text}' copies a {builtin} result into 32 bits (widen it with "
                f"'{variable.decode()}')")
    elif use.operation == "<<":
        note = (f"'{text}' combines '{use.variable.decode()}', a {builtin} result narrowed "
                "to 32 bits, with a 32-bit lane bit or mask: lanes 32-63 are lost (widen "
                "it and use 1ull)")
    elif use.operation == "&":
        note = (f"'{text}' tests a lane of '{use.variable.decode()}', a {builtin} result "
                "narrowed to 32 bits: lanes 32-63 are lost (widen it and shift 1ull)")
    elif use.wide is not None:
        note = f"{text} sees lanes 0-31 only: {holder} (widen it and use {use.wide})"
    else:
        note = (f"{text} works on 32 bits: {holder} (widen it; the 64-bit "
                f"{use.operation}ll counts from bit 63: review what the result means)")
    return note


class _Use(NamedTuple):
    """A use in the flow of a narrowed mask: what a finding underlines ([start, end)), the
    variable it reads (the ballot's, or a 32-bit copy of it), the operation (a bit builtin's
    name, '&' for a lane test, '<<' for another 32-bit lane bit, 'copy' for a narrowed copy),
    its 64-bit form (None: none of the same meaning), the point edits that widen it (each
    a 32-bit ``1`` shifted to a lane, a copy's type), the counter call it is (rewritten whole),
    and the span whose meaning the widening provably keeps (a __popc/__ffs call: a count of
    the lanes; the condition of an ``if``/``while`` that tests lanes), if any."""

    start: int
    end: int
    variable: bytes
    operation: str
    wide: str | None
    edits: tuple[Edit, ...] = ()
    call: tuple[int, int] | None = None
    proven: tuple[int, int] | None = None


def _type_edit(declared: re.Match, base: int) -> Edit:
    """The edit that widens the type ``declared`` (searched from ``base``) names."""
    type_start = base + declared.start(1)
    type_text = declared.group(1)
    if type_text.startswith(b"const"):
        type_start += len(type_text) - len(type_text[5:].lstrip())
        type_text = type_text[5:].lstrip()
    return Edit(type_start, type_start + len(type_text),
                _WIDE_TYPE.get(type_text, b"unsigned long long"))


def _widening(ctx: RuleContext, declaration: Edit, uses: list[_Use],
              markers: list[Edit] = ()) -> tuple[Edit, ...]:
    """The edits that widen the declared variable and its flow: copies' types, ``1 << lane``
    as ``1ull << lane``, and each counter call whole (``__popc(m & ((1 << l) - 1))`` ->
    ``__popcll(m & ((1ull << l) - 1))``): a fix of the argument in the same round (ARG001's
    ``(int)`` cast for the 32-bit __ffs) overlaps it and waits for the next round, where it
    sees __ffsll of the widened variable. ``markers``: marker lines written with them (those
    at another edit's start left out)."""
    data = ctx.data
    points = {edit.start: edit for use in uses for edit in use.edits}
    calls = []
    for use in sorted((use for use in uses if use.call is not None), key=lambda use: use.call):
        if calls and use.call[0] < calls[-1][1]:
            continue  # the same call again, or one inside it
        calls.append((*use.call, use.operation, use.wide))
    edits = [declaration]
    for at, end, counter, wide in calls:
        inside = sorted((edit for edit in points.values() if at <= edit.start < end),
                        key=lambda edit: edit.start)
        text, cursor = wide.encode(), at + len(counter)
        for edit in inside:
            text += data[cursor : edit.start] + edit.text
            cursor = edit.end
        edits.append(Edit(at, end, text + data[cursor:end]))
    edits += [edit for edit in points.values()
              if not any(at <= edit.start < end for at, end, _, _ in calls)]
    starts = {edit.start for edit in edits}
    edits += [edit for edit in markers if edit.start not in starts]
    return tuple(sorted(edits, key=lambda edit: (edit.start, edit.end)))


# a type word right before a use of the name: a declaration of it again (a loop body's)
_REDECLARED = re.compile(rb"\b(?:unsigned|signed|int|long|short|char|auto|bool|u?int(?:32|64)_t|"
                         rb"size_t)\s*[*&]?\s*$")
_MASK_ARGUMENT_BEFORE = re.compile(rb"\b(" + b"|".join(
    name.encode() for name, index in sorted(SYNC_MASK_BUILTINS.items()) if index == 0)
    + rb")\s*\(\s*$")
_ARGUMENT_END = re.compile(rb"\s*[,)]")


def only_masks(ctx: RuleContext, variable: bytes, offsets: list[int],
               uses: list[_Use]) -> bool:
    """Is every use of ``variable`` at ``offsets`` (its uses in code to the end of its block)
    up to a declaration of it again, and at least one, the mask argument of a warp-sync
    builtin, or inside a __popc/__ffs or an ``if``/``while`` condition that tests lanes (which
    widen with it and keep their meaning: ``uses``, its flow)? Read on the code view."""
    code = ctx.code
    if any(use.proven is None for use in uses):
        return False
    counted = [use.proven for use in uses]
    seen = False
    for at in offsets:
        before = code[max(0, at - 40) : at]
        if _REDECLARED.search(before):
            break  # declared again: another variable from here on
        seen = True
        if any(start <= at < end for start, end in counted):
            continue
        if _ARGUMENT_END.match(code, at + len(variable)) is None \
                or _MASK_ARGUMENT_BEFORE.search(before) is None:
            return False
    return seen


def _flow(ctx: RuleContext, variable: bytes, offsets: list[int], depth: int = 0) -> list[_Use]:
    """The 32-bit uses in the flow of ``variable`` (a narrowed mask) at ``offsets`` (its uses
    in code to the end of its block), up to a declaration of it again: a
    ``__popc``/``__ffs``/``__clz``/``__brev`` call whose argument reads it (``__popc(m)``,
    ``__popc(m & ((1 << lane) - 1))``), a 32-bit ``1`` shifted to a lane in the expression
    that reads it (``m & (1 << lane)``, ``m ^= 1u << lane``), and a copy into another 32-bit
    variable (``int m2 = m;``), whose own flow follows."""
    data, code = ctx.data, ctx.code
    found: list[_Use] = []
    for at in offsets:
        if _REDECLARED.search(data, max(0, at - 40), at):
            break  # declared again: another variable from here on
        end = at + len(variable)
        first, last = _operand(code, at, end)
        shifts = sorted([*_LANE_BIT.finditer(code, first, last),
                         *_UNSIGNED_COMPLEMENT.finditer(code, first, last)], key=re.Match.start)
        points = tuple(Edit(match.start(1), match.end(1), _WIDE_LITERAL[match.re])
                       for match in shifts)
        call = _COUNTER_NAME.search(code, max(0, first - 40), first) if first and \
            code[first - 1 : first] == b"(" else None
        if call is not None and code[last : last + 1] == b")":
            counter = call.group(1).decode()
            wide = _VARIABLE_COUNTERS[counter]
            span = (call.start(1), last + 1)
            found.append(_Use(*span, variable, counter, wide, points, span,
                              span if wide is not None else None))
            continue
        # a lane test that is a whole if/while condition means the same in 64 bits
        condition = (first, last) if code[last : last + 1] == b")" and _CONDITION.search(
            code, max(0, first - 12), first) else None
        test = _BIT_TEST_AFTER.match(data, end)
        if test is not None:
            found.append(_Use(at, test.end(), variable, "&", "1ull", points, None, condition))
            continue
        test = _BIT_TEST_BEFORE.search(data, max(0, at - 64), at)
        if test is not None:
            found.append(_Use(test.start(), end, variable, "&", "1ull", points, None, condition))
            continue
        if shifts:
            found.append(_Use(shifts[0].start(), shifts[-1].end(), variable, "<<", "1ull",
                              points, None, condition))
            continue
        copy = _NARROW_DECLARATION.search(data, max(0, at - 120), at)
        if copy is not None and depth < 3 and code[end : end + 40].lstrip()[:1] in (b";", b","):
            found.append(_Use(copy.start(1), end, variable, "copy", "unsigned long long",
                              (_type_edit(copy, 0),)))
            name = copy.group(2)
            after = code.find(b";", end)
            found += _flow(ctx, name, words_in(ctx, name, after, block_end(ctx, after)),
                           depth + 1)
            continue
        before = code[max(0, at - 40) : at]
        if _READ_BEFORE.search(before) and _READ_AFTER.match(code, end) \
                and _MASK_ARGUMENT_BEFORE.search(before) is None \
                and not _CONDITION.search(before):
            # the mask read whole: returned, stored or passed on, where the type that takes it
            # may keep 32 bits (a warp-sync builtin's mask argument and a condition excepted)
            found.append(_Use(_statement_start(code, at), end, variable, "read", ""))
    return found


def _operand(code: bytes, start: int, end: int) -> tuple[int, int]:
    """[first, last) of the expression around the name at [start, end): out to the brackets
    that hold it or to the statement's (or argument's) end, read on the code view
    (``m & ((1 << l) - 1)`` of ``__popc(m & ((1 << l) - 1))``; ``m ^= 1 << l`` of a
    statement)."""
    first, depth = start, 0
    while first > 0:
        byte = code[first - 1]
        if byte in b")]":
            depth += 1
        elif byte in b"([":
            if depth == 0:
                break
            depth -= 1
        elif byte in b";{},?:" and depth == 0:
            break
        first -= 1
    last, depth = end, 0
    while last < len(code):
        byte = code[last]
        if byte in b"([":
            depth += 1
        elif byte in b")]":
            if depth == 0:
                break
            depth -= 1
        elif byte in b";{},?:" and depth == 0:
            break
        last += 1
    while first < start and code[first] in b" \t\r\n":
        first += 1
    return first, last


def _statement_start(code: bytes, at: int) -> int:
    """Where the statement holding ``at`` starts in the code view: past the last ``;``, ``{``
    or ``}`` before it (comments, markers too, are blanks there) and the blanks after it."""
    low = max(0, at - 4000)
    start = max(code.rfind(b";", low, at), code.rfind(b"{", low, at), code.rfind(b"}", low, at)) + 1
    while start < at and code[start] in b" \t\r\n\\":
        start += 1
    return start
