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


def test_bytes_not_utf8_are_counted_as_the_decoder_rejects_them():
    """``not_utf8``: the bytes a strict UTF-8 decoder rejects, and where the first is; each
    rejected byte counted once (a truncated sequence is all its bytes)."""
    cases = {b"": (0, -1), b"cudaFree(p);": (0, -1), "// café €\n".encode(): (0, -1),
             b"// caf\xe9\n": (1, 6), b"\xe9t\xe9": (2, 0), b"// \x93x\x94 \xb5s": (3, 3),
             b"a\xe2\x82": (2, 1), "é".encode() + b"\xff": (1, 2)}
    for data, expected in cases.items():
        assert Source("x.cu", data).not_utf8 == expected, data
    for data in random_texts([b"a", b"\n", "é".encode(), b"\xe9", b"\xc3", b"\x80"], seed=14,
                             count=2000, length=12):
        count, first = Source("x.cu", data).not_utf8
        assert count == len(data) - len(data.decode("utf-8", "ignore").encode()), data
        assert (first == -1) == (count == 0), data


def test_encoding_note_says_how_a_file_was_read():
    assert Source("x.cu", "// café\n".encode()).encoding_note() == ""
    note = Source("x.cu", b"int a;\n// caf\xe9 \xb5s\n").encoding_note()
    assert note == ("not UTF-8 (Latin-1/cp1252?): 2 such bytes kept as they are, first at "
                    "line 2; columns count bytes")
