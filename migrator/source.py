"""A source file held as bytes, with a line index for byte offset <-> line/column."""

from __future__ import annotations

import bisect
import re
from itertools import accumulate
from dataclasses import dataclass, field

_CONTINUATION = re.compile(rb"[\x80-\xbf]")


class SourceError(Exception):
    """A file that cannot be processed (binary, not UTF-8, too large...)."""


@dataclass
class Source:
    """Bytes of one file plus what is needed to report positions in it."""

    path: str
    data: bytes
    _line_starts: list[int] | None = field(default=None, repr=False, compare=False)
    # offsets of UTF-8 continuation bytes (None: not indexed yet; False: not valid UTF-8)
    _continuations: list[int] | bool | None = field(default=None, repr=False, compare=False)

    @classmethod
    def checked(cls, path: str, data: bytes, max_bytes: int) -> "Source":
        """Build a Source, rejecting input the converter must not touch."""
        if len(data) > max_bytes:
            raise SourceError(f"file is {len(data)} bytes, over the {max_bytes}-byte limit")
        if b"\x00" in data[:8192]:
            raise SourceError("binary file (contains NUL bytes)")
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as err:
            line = data.count(b"\n", 0, err.start) + 1
            raise SourceError(
                f"not valid UTF-8 (byte 0x{data[err.start]:02x} at line {line}); "
                "re-encode the file as UTF-8"
            ) from None
        return cls(path, data)

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
        """1-based (line, column) of a byte offset; the column counts characters."""
        return self.positions((offset,))[0]

    def positions(self, offsets) -> list[tuple[int, int]]:
        """``position`` of each of ``offsets`` (the engine places every finding of a round)."""
        data = self.data
        starts = self.line_starts
        line_of = bisect.bisect_right
        before = bisect.bisect_left
        continuations = self._continuation_offsets()
        found = []
        for offset in offsets:
            index = line_of(starts, offset) - 1
            line_start = starts[index]
            if continuations is False:  # not UTF-8: decode what precedes on the line
                column = len(data[line_start:offset].decode("utf-8", "replace")) + 1
            elif continuations:  # a character is its first byte: count those that continue one
                continued = before(continuations, offset) - before(continuations, line_start)
                column = offset - line_start - continued + 1
            else:  # ASCII
                column = offset - line_start + 1
            found.append((index + 1, column))
        return found

    def _continuation_offsets(self) -> list[int] | bool:
        """Where UTF-8 continuation bytes are (indexed once: positions on a long line would
        otherwise decode the line up to each one); False when the data is not UTF-8."""
        if self._continuations is None and self.data.isascii():
            self._continuations = []
        if self._continuations is None:
            try:
                self.data.decode("utf-8")
            except UnicodeDecodeError:
                self._continuations = False
            else:
                self._continuations = [m.start() for m in _CONTINUATION.finditer(self.data)]
        return self._continuations

    def line_start(self, offset: int) -> int:
        starts = self.line_starts
        return starts[bisect.bisect_right(starts, offset) - 1]

    def line_text(self, offset: int) -> bytes:
        start = self.line_start(offset)
        end = self.data.find(b"\n", start)
        return self.data[start : len(self.data) if end == -1 else end].rstrip(b"\r")
