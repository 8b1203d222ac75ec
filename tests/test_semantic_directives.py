"""directive_lines finds what a multiline ``^[ \\t]*`` search finds, for the directives the
header rules and cuda_context read so, on random texts of directive pieces."""

from __future__ import annotations

import re

from migrator.semantic.directives import directive_lines
from migrator.parsing.includes import INCLUDE
from rules import cuda_context
from rules.api import headers
from strategies import random_texts

_PATTERNS = (headers._INCLUDE, headers._CONDITIONAL,
             INCLUDE, cuda_context._CONDITIONAL)
_PIECES = [b"#", b"# ", b"include", b"if", b"ifdef", b"endif", b"else", b"elif", b"x", b" ", b"\t",
           b"\n", b"\r", b"<a.h>", b'"b.h"', b"<", b">", b'"', b"\\"]
_MORE_PIECES = [b"#", b" ", b"\t", b"\n", b"include", b"if", b"ifdef", b"undef", b"elif", b"x",
                b"<", b">", b'"', b"cuda.h", b"/*", b"*/", b"\\\n", b"# include <a>", b"#if X\n",
                b"\r\n"]


def test_directive_lines_find_the_matches_of_a_multiline_search():
    anchored = [(pattern, re.compile(rb"^[ \t]*" + pattern.pattern, re.MULTILINE))
                for pattern in _PATTERNS]
    texts = [*random_texts(_PIECES, seed=21, count=4000),
             *random_texts(_MORE_PIECES, seed=23, count=5000, length=30)]
    for data in texts:
        for pattern, search in anchored:
            expected = [(m.start(), m.end(), m.regs[1:]) for m in search.finditer(data)]
            found = [(line, m.end(), m.regs[1:]) for line, m in directive_lines(pattern, data)]
            assert found == expected, (data, pattern)
