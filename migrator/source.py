"""A source file held as bytes, with a line index for byte offset <-> line/column."""

from __future__ import annotations

import bisect
import re
from itertools import accumulate
from dataclasses import dataclass, field

_CONTINUATION = re.compile(rb"[\x80-\xbf]")


class SourceError(Exception):
    """A file that cannot be processed (binary, too large...)."""


@dataclass
class Source:
    """Bytes of one file plus what is needed to report positions in it."""

    path: str
    data: bytes
    _line_starts: list[int] | None = field(default=None, repr=False, compare=False)
    # offsets of UTF-8 continuation bytes (None: not indexed yet; empty when the data is
    # ASCII or not UTF-8, whose columns count bytes)
    _continuations: list[int] | None = field(default=None, repr=False, compare=False)
    # (bytes that are not UTF-8, offset of the first) (None: not counted yet)
    _not_utf8: tuple[int, int] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def checked(cls, path: str, data: bytes, max_bytes: int) -> "Source":
        """Build a Source, rejecting input the converter must not touch. Text that is not
        UTF-8 (Latin-1, cp1252... in comments and literals) is taken: the conversion works on
        bytes, and identifiers are ASCII."""
        if len(data) > max_bytes:
            raise SourceError(f"file is {len(data)} bytes, over the {max_bytes}-byte limit")
        if b"\x00" in data[:8192]:
            raise SourceError("binary file (contains NUL bytes)")
        return cls(path, data)

    @property
    def not_utf8(self) -> tuple[int, int]:
        """How many bytes are not part of valid UTF-8, and the offset of the first (0, -1 for
        ASCII and UTF-8 data)."""
        if self._not_utf8 is None:
            self._not_utf8 = (0, -1)
            if not self.data.isascii():
                try:
                    self.data.decode("utf-8")
                except UnicodeDecodeError as err:
                    valid = len(self.data.decode("utf-8", "ignore").encode())
                    self._not_utf8 = (len(self.data) - valid, err.start)
        return self._not_utf8

    def encoding_note(self) -> str:
        """What a file that is not UTF-8 tells its reader ("" for ASCII and UTF-8)."""
        count, first = self.not_utf8
        if not count:
            return ""
        line, _ = self.position(first)
        return (f"not UTF-8 (Latin-1/cp1252?): {count} such byte{'s' if count != 1 else ''} kept "
                f"as {'they are' if count != 1 else 'it is'}, first at line {line}; columns count "
                "bytes")

    @property
    def newline(self) -> bytes:
        """The file's newline style, used for inserted lines."""
        first = self.data.find(b"\n")
        return b"\r\n" if first > 0 and self.data[first - 1 : first] == b"\r" else b"\n"

    @property
    def line_starts(self) -> list[int]:
        if self._line_starts is None:
            # line k starts after the k lines before it, newlines included (summed without a
            # Python step per line); bytes split lines at '\n', '\r\n' and '\r': a '\r' is
            # blanked first, only '\n' ends a line
            data = self.data
            lines = (data.replace(b"\r", b" ") if b"\r" in data else data).splitlines(True)
            starts = list(accumulate(map(len, lines), initial=0))
            if data and not data.endswith(b"\n"):
                starts.pop()  # the start after an unterminated last line
            self._line_starts = starts
        return self._line_starts

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of a byte offset; the column counts characters in UTF-8
        data and bytes in data that is not UTF-8 (each a character in Latin-1 or cp1252, the
        usual other encodings)."""
        return self.positions((offset,))[0]

    def positions(self, offsets) -> list[tuple[int, int]]:
        """``position`` of each of ``offsets`` (the engine places every finding of a round)."""
        starts = self.line_starts
        line_of = bisect.bisect_right
        before = bisect.bisect_left
        continuations = self._continuation_offsets()
        found = []
        for offset in offsets:
            index = line_of(starts, offset) - 1
            line_start = starts[index]
            if continuations:  # a character is its first byte: count those that continue one
                continued = before(continuations, offset) - before(continuations, line_start)
                column = offset - line_start - continued + 1
            else:  # ASCII, or not UTF-8
                column = offset - line_start + 1
            found.append((index + 1, column))
        return found

    def _continuation_offsets(self) -> list[int]:
        """Where UTF-8 continuation bytes are (indexed once: positions on a long line would
        otherwise decode the line up to each one); none when the data is not UTF-8."""
        if self._continuations is None:
            data = self.data
            self._continuations = ([] if data.isascii() or self.not_utf8[0] else
                                   [m.start() for m in _CONTINUATION.finditer(data)])
        return self._continuations

    def line_start(self, offset: int) -> int:
        starts = self.line_starts
        return starts[bisect.bisect_right(starts, offset) - 1]

    def line_text(self, offset: int) -> bytes:
        start = self.line_start(offset)
        end = self.data.find(b"\n", start)
        return self.data[start : len(self.data) if end == -1 else end].rstrip(b"\r")


def raw_text(data: bytes) -> str:
    """Source bytes as text that a fix writes back: bytes that are not UTF-8 (a Latin-1 comment)
    become surrogates, which ``raw_bytes`` turns back into the same bytes. Not for messages."""
    return data.decode("utf-8", "surrogateescape")


def raw_bytes(text: str) -> bytes:
    """``raw_text``'s inverse: the fix's text as the bytes to write."""
    return text.encode("utf-8", "surrogateescape")
