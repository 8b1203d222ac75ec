"""directive_lines finds what a multiline ``^[ \\t]*`` search finds (cuda_context reads includes
and conditionals so), on random texts of directive pieces."""

from __future__ import annotations

import random
import re

from rules import cuda_context
from migrator.semantic.directives import directive_lines

_PIECES = [b"#", b" ", b"\t", b"\n", b"include", b"if", b"ifdef", b"undef", b"elif", b"x", b"<",
           b">", b'"', b"cuda.h", b"/*", b"*/", b"\\\n", b"# include <a>", b"#if X\n", b"\r\n"]


def test_directive_lines_find_the_matches_of_a_multiline_search():
    rng = random.Random(23)
    for _ in range(5000):
        data = b"".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 30)))
        for pattern in (cuda_context._INCLUDE, cuda_context._CONDITIONAL):
            anchored = re.compile(rb"^[ \t]*" + pattern.pattern, re.MULTILINE)
            expected = [(m.start(), m.end(), m.groups()) for m in anchored.finditer(data)]
            found = [(line, m.end(), m.groups()) for line, m in directive_lines(pattern, data)]
            assert found == expected, (data, pattern)
