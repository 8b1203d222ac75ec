"""Inline marker comments: what a converted file says, at the site, about what needs a person."""

from __future__ import annotations

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
