"""Inline marker comments: what a converted file says, at the site, about what needs a person."""

from __future__ import annotations

import bisect
import functools
import re

from migrator.diagnostics import Edit, Fix
from migrator.parsing.tokens import continued_line
from migrator.rule import LINE_NUMBER, Marker, RuleContext
from migrator.suppression import parse_suppressions

from .target_names import renamable, replacement_of

_MARKER_LINE = re.compile(rb"//[ \t]*rocmigrate [A-Z]{3}[0-9]{3}: ")
_IDENTIFIER = re.compile(r"(\b[A-Za-z_]\w*)")  # captured: split keeps the names
# the lookahead: every match starts so, and a position that does not is passed at once
_INDENT = re.compile(rb"[ \t]*")
_INLINE_MARKER = re.compile(rb"/\* rocmigrate [A-Z]{3}[0-9]{3}: [\s\S]* \*/\Z")


def marker_fix(ctx: RuleContext, offset: int, marker: Marker) -> Fix | None:
    """A fix that writes ``marker`` on its own line above the line of ``offset`` (same indent;
    above a suppression comment standing alone there), or inline as a block comment where a
    line comment would break the code (inside a multi-line macro, or where the line starts
    inside a block comment or a raw string). None when the marker is already there in either
    form (idempotence), and when markers are off (lint reports these findings; it does not
    write comments into the code)."""
    if not ctx.settings.write_markers:
        return None
    data = ctx.data
    source = ctx.source
    line_start = source.line_start(offset)
    text = marker.render()
    # already marked, in either form, maybe quoting code that this conversion has rewritten
    # since (so compared as converted): in the run of inline markers right before the site...
    # (the converted text is made only where a marker is there to compare)
    converted = None
    for found in _inline_markers_before(ctx, offset) if data[offset - 1 : offset] == b" " else ():
        if converted is None:
            converted = _as_converted(ctx, text)
        if _as_converted(ctx, b"// " + found[3:-3]) == converted or \
                marker.is_rendered_as(b"// " + found[3:-3]):
            return None
    # ... or in the run of marker (and suppression) lines above its line
    at = line_start
    scan = line_start
    suppressing = _suppressions_of_next_line(ctx)
    while scan > 0:
        above_start = source.line_start(scan - 1)
        above = data[above_start:scan].strip()
        if suppressing and source.position(above_start)[0] in suppressing:
            if at == scan:
                at = above_start  # the marker goes above the suppression of this line
        elif not _MARKER_LINE.match(above):
            break
        elif above == text or marker.is_rendered_as(above):
            return None
        else:
            if converted is None:
                converted = _as_converted(ctx, text)
            if _as_converted(ctx, above) == converted:
                return None
        scan = above_start
    previous_line_end = line_start - 1
    continued = previous_line_end > 0 and continued_line(data, previous_line_end)
    if continued or _inside_literal(ctx, line_start):
        inline = b"/* " + text[3:] + b" */ "
        return Fix(f"mark {marker.code}", (Edit(offset, offset, inline),), marker=True)
    indent_end = _INDENT.match(data, line_start).end()
    line = data[line_start:indent_end] + text + source.newline
    return Fix(f"mark {marker.code}", (Edit(at, at, line),), marker=True)


def _inline_markers_before(ctx: RuleContext, offset: int):
    """The inline markers (``/* rocmigrate CODE: ... */``) written one after another right
    before ``offset``, nearest first, each without its trailing blank (none unless a blank
    precedes ``offset``: callers skip the call then)."""
    literals = ctx.literals
    data = ctx.data
    pos = offset
    while data[pos - 1 : pos] == b" ":
        index = bisect.bisect_right(literals.starts, pos - 2) - 1
        if index < 0 or literals.ends[index] != pos - 1 or literals.kinds[index] != "comment":
            return
        comment = data[literals.starts[index] : pos - 1]
        if not _INLINE_MARKER.match(comment):
            return
        yield comment
        pos = literals.starts[index]


def _inside_literal(ctx: RuleContext, offset: int) -> bool:
    """Does a comment or literal that starts before ``offset`` run on past it? (A line that
    merely starts with a literal can have a marker line above it.)"""
    literals = ctx.literals
    index = bisect.bisect_right(literals.starts, offset) - 1
    return index >= 0 and literals.starts[index] < offset < literals.ends[index]


def _suppressions_of_next_line(ctx: RuleContext) -> set[int]:
    """Lines (1-based) of the suppression comments written alone on the line above the line
    they silence: a marker written between them would take the suppression's place."""
    lines = ctx.cache.get("suppressions_of_next_line")
    if lines is None:
        suppressions = parse_suppressions(ctx.source, ctx.literals).all
        lines = ctx.cache["suppressions_of_next_line"] = {
            s.line for s in suppressions if s.kind == "ignore" and len(s.applies_to) == 2}
    return lines


def as_converted(ctx: RuleContext, text: str) -> str:
    """``text`` with every API name as the conversion writes it for the target: renamed to HIP
    (API001) or lowered (WRP001, LOW001). Code quoted so in a marker reads the same on any
    pass; a rule that shortens a quote must shorten the converted text."""
    return _respelled(ctx.tables, ctx.settings.rocm, True, text)


def _as_converted(ctx: RuleContext, marker_line: bytes) -> str:
    return as_converted(ctx, marker_line.decode("utf-8", "replace"))


def hip_spelling(ctx: RuleContext, text: str) -> str:
    """``text`` with each CUDA API name that API001 renames for the target written as its HIP
    name: what the same message says when a later round (or a re-run on the output) reads the
    converted code."""
    return _respelled(ctx.tables, ctx.settings.rocm, False, text)


@functools.lru_cache(maxsize=4096)
def _respelled(tables, rocm, lowered: bool, text: str) -> str:
    """``text`` with each name written as ``_output_spelling`` says, part by part (a name holds
    no ``; ``): the same messages and marker lines come back for every site or function of a
    file, and a message that lists sites repeats the same few parts, so each text and each
    part is respelled once."""
    return "; ".join([_respelled_part(tables, rocm, lowered, part) for part in text.split("; ")])


@functools.lru_cache(maxsize=4096)
def _respelled_part(tables, rocm, lowered: bool, text: str) -> str:
    spelling = _output_spelling(tables, rocm, lowered)
    # split at the names (every odd piece is one): a quote of code holds dozens, few of them
    # CUDA's, and a lookup of each in one pass costs less than a callback per name
    pieces = _IDENTIFIER.split(text)
    names = pieces[1::2]
    if spelling.keys().isdisjoint(names):
        return text
    pieces[1::2] = [spelling.get(name, name) for name in names]
    return "".join(pieces)


@functools.lru_cache(maxsize=16)
def _output_spelling(tables, rocm, lowered: bool) -> dict[str, str]:
    """CUDA name -> the name the conversion writes for it at ``rocm``: API001's renames, and
    with ``lowered`` the replacements of the lowerings that apply there."""
    spelling = {e.cuda: e.hip for e in tables.names.values() if renamable(e, rocm)}
    if lowered:
        spelling.update((low.cuda, replacement_of(low)) for low in tables.lowerings.values()
                        if low.kind != "header" and low.applies(rocm))
    return spelling


def unproven_fix(ctx: RuleContext, offset: int, code: str, message: str,
                 rewrite: Fix | None = None, without_lines: str | None = None,
                 key: str = "") -> Fix | None:
    """The fix to attach to an optimisation a rule could not prove safe: the unsafe ``rewrite``
    itself where it may apply (``--unsafe-fixes``) or where nothing writes markers (lint shows
    it as an unsafe fix); otherwise a marker at the site that says what was left alone and why.
    Line numbers are left out of the marker, and names are in HIP spelling, so that re-running
    on the output finds it again. ``without_lines``: the message with them left out, where the
    rule writes it so (a long message is then not searched for them). ``key``: the start of
    the message that identifies the marker where the rest quotes code other fixes rewrite
    (``Marker.key``)."""
    if rewrite is not None and (ctx.settings.unsafe_fixes or not ctx.settings.write_markers):
        return rewrite
    if without_lines is not None:
        message = without_lines
    elif "line " in message:  # what LINE_NUMBER finds has it (the scan is slow in a long text)
        message = LINE_NUMBER.sub("", message)
    text = hip_spelling(ctx, message)
    if rewrite is not None:
        text += " (rewrite with --unsafe-fixes)"
    return marker_fix(ctx, offset, Marker(code, text, hip_spelling(ctx, key) if key else ""))
