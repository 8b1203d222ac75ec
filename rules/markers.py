"""Inline marker comments: what a converted file says, at the site, about what needs a person."""

from __future__ import annotations

import re

from migrator.diagnostics import Edit, Fix
from migrator.rule import Marker, RuleContext


def marker_fix(ctx: RuleContext, offset: int, marker: Marker) -> Fix | None:
    """A fix that writes ``marker`` on its own line above the line of ``offset`` (same indent),
    or inline as a block comment where a line comment would break the code (inside a multi-line
    macro or a block comment). None when the marker is already there (idempotence), and when
    markers are off (lint reports these findings; it does not write comments into the code)."""
    if not ctx.settings.write_markers:
        return None
    data = ctx.data
    source = ctx.source
    line_start = source.line_start(offset)
    text = marker.render()
    previous_line_end = line_start - 1
    continued = previous_line_end > 0 and data[:previous_line_end].rstrip(b"\r").endswith(b"\\")
    if continued or ctx.literals.covering(line_start) not in (None, "include"):
        inline = b"/* " + text[3:] + b" */ "
        if data[max(0, offset - len(inline)) : offset] == inline:
            return None
        return Fix(f"mark {marker.code}", (Edit(offset, offset, inline),))
    # already marked: the marker stands in the run of marker lines right above this line
    scan = line_start
    while scan > 0:
        above_start = source.line_start(scan - 1)
        above = data[above_start : scan].strip()
        if not above.startswith(b"// rocmigrate "):
            break
        if above == text:
            return None
        scan = above_start
    indent_end = line_start
    while indent_end < len(data) and data[indent_end : indent_end + 1] in (b" ", b"\t"):
        indent_end += 1
    line = data[line_start:indent_end] + text + source.newline
    return Fix(f"mark {marker.code}", (Edit(line_start, line_start, line),))


def unproven_fix(ctx: RuleContext, offset: int, code: str, message: str,
                 rewrite: Fix | None = None) -> Fix | None:
    """The fix to attach to an optimisation a rule could not prove safe: the unsafe ``rewrite``
    itself where it may apply (``--unsafe-fixes``) or where nothing writes markers (lint shows
    it as an unsafe fix); otherwise a marker at the site that says what was left alone and why.
    Line numbers are left out of the marker so that re-running on the output finds it again."""
    if rewrite is not None and (ctx.settings.unsafe_fixes or not ctx.settings.write_markers):
        return rewrite
    text = re.sub(r"\s*\((?:at )?line \d+\)|\s+at line \d+", "", message)
    # in HIP spelling, whatever round of the conversion wrote it, so a re-run finds it again
    names = ctx.tables.names
    text = re.sub(r"\bcuda\w+", lambda m: names[m.group()].hip if m.group() in names
                  else m.group(), text)
    if rewrite is not None:
        text += " (rewrite with --unsafe-fixes)"
    return marker_fix(ctx, offset, Marker(code, text))
