"""Preprocessor directive lines found without a multiline ``^`` search (which tries a match at
every line start of a file)."""

from __future__ import annotations

import re


def directive_lines(pattern: re.Pattern, data: bytes):
    """(line start, match) for each match of ``pattern`` (a directive from its ``#``) with only
    blanks before it on its line: the matches of ``^[ \\t]*`` + ``pattern`` (multiline),
    found by a search that jumps from ``#`` to ``#`` instead of trying every byte. A match
    rejected here ends on its line (or just after its newline), so it hides no line start."""
    for match in pattern.finditer(data):
        line = data.rfind(b"\n", 0, match.start()) + 1
        if not data[line : match.start()].strip(b" \t"):
            yield line, match
