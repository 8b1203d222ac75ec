"""Text meant for a terminal: file names and messages with their control characters escaped, as
git quotes file names, so that a name cannot move the cursor, set the window title, clear the
screen or fake a line of output. Text without control characters is returned as it is."""

from __future__ import annotations

import re

# C0 controls (a tab only in names), DEL and C1 controls (0x9b is a CSI on 8-bit terminals),
# and lone surrogates: the bytes of a name that is not UTF-8 (surrogateescape) or worse
_IN_NAMES = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
_IN_TEXT = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\ud800-\udfff]")
_NAMED = {"\a": "\\a", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\v": "\\v", "\f": "\\f",
          "\r": "\\r"}


def quoted(name) -> str:
    """``name`` (a path or str) as it is when it holds no control character; else in double
    quotes with C-style escapes (``"a\\033]0;x\\a.cu"``), as ``git`` shows such names."""
    name = str(name)
    if not _IN_NAMES.search(name):
        return name
    escaped_name = name.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + _IN_NAMES.sub(_escape, escaped_name) + '"'


def escaped(text) -> str:
    """``text`` (a message, a line) with its control characters written as escapes (a tab
    stays); one line of output stays one line."""
    text = str(text)
    return _IN_TEXT.sub(_escape, text) if _IN_TEXT.search(text) else text


def escaped_lines(text: str) -> str:
    """Each line of ``text`` escaped (``escaped``); the line ends stay."""
    if not _IN_TEXT.search(text.replace("\n", "")):
        return text
    return "\n".join(escaped(line) for line in text.split("\n"))


def _escape(match: re.Match) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8, as surrogateescape carries it
        return f"\\{code - 0xDC00:03o}"
    if 0xD800 <= code <= 0xDFFF:
        return f"\\u{code:04x}"
    return "".join(f"\\{byte:03o}" for byte in char.encode("utf-8"))
