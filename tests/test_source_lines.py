"""Source's line index agrees with the splitting it replaces."""

from __future__ import annotations

import operator
from itertools import accumulate, count

from migrator.source import Source
from strategies import random_texts


def _starts_split_at_newlines(data: bytes) -> list[int]:
    """Line starts as split(b"\\n") gave them (only '\\n' ends a line)."""
    lines = data.split(b"\n")[:-1]
    return list(map(operator.add, accumulate(map(len, lines), initial=0), count()))


def test_line_starts_agree_with_splitting_at_newlines():
    pieces = [b"a", b"\n", b"\r", b"\r\n", b"\n\r", b"\x0b", b"\x0c", b"\x1c", b"\x85", b" ",
              "é".encode(), b"\xff"]
    texts = [b"", b"\n", b"\r", b"a", b"a\n", b"a\r", b"a\nb", b"\r\n\r\n"]
    texts += random_texts(pieces, seed=13, count=3000, length=16)
    for data in texts:
        assert Source("x.cu", data).line_starts == _starts_split_at_newlines(data), data
