"""A lossless reader of CMake scripts: command invocations and their arguments, in byte offsets.

CMake's grammar is small (cmake-language(7)): a file is command invocations ``name(args)``,
comments (``# ...`` to the end of the line, ``#[[ ... ]]`` bracket comments) and space.
Arguments are bracket arguments (``[==[ ... ]==]``), quoted arguments (``"..."`` with ``\\``
escapes) or unquoted arguments; parentheses inside the argument list nest (``if((A) AND B)``)
and are not arguments. Rules read this view and edit the bytes; nothing is re-printed.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

_SPACE = re.compile(rb"[ \t\r\n]+")
_IDENTIFIER = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
_BRACKET_OPEN = re.compile(rb"\[(=*)\[")
# an unquoted argument: anything but space, parentheses, '#', '"' and '\\'; an escape; or a
# quoted part inside it (legacy unquoted arguments such as -DX="a b")
_UNQUOTED = re.compile(rb'(?:[^\s()#"\\]|\\[\s\S]|"(?:[^"\\]|\\[\s\S])*")+')
_QUOTED = re.compile(rb'"(?:[^"\\]|\\[\s\S])*"?')


@dataclass(frozen=True)
class Argument:
    """One argument as written: ``text`` from ``start`` to ``end``; ``kind`` is unquoted,
    quoted or bracket."""

    text: bytes
    start: int
    end: int
    kind: str

    @property
    def value(self) -> str:
        """The argument's text without its quotes or brackets (escapes kept as written)."""
        text = self.text.decode("utf-8", "replace")
        if self.kind == "quoted":
            return text[1:-1] if len(text) > 1 and text.endswith('"') else text[1:]
        if self.kind == "bracket":
            opening = text.index("[", 1) + 1
            return text[opening : len(text) - opening]
        return text


@dataclass(frozen=True)
class Command:
    """A command invocation: ``name`` as written, from ``start`` (the name) to ``end`` (after
    its closing parenthesis, or the end of the file when it has none); ``open`` is the offset
    of its opening parenthesis; ``args`` in order."""

    name: str
    start: int
    end: int
    open: int
    args: tuple[Argument, ...]
    closed: bool = True  # False: the file ends before its closing parenthesis

    @property
    def lower(self) -> str:
        """The name as CMake compares it (command names are case-insensitive)."""
        return self.name.lower()

    def values(self) -> list[str]:
        return [arg.value for arg in self.args]


@dataclass(frozen=True)
class Script:
    """A CMake file read once: its commands and the byte spans of its comments."""

    commands: tuple[Command, ...]
    comments: tuple[tuple[int, int], ...]

    @functools.cached_property
    def starts(self) -> list[int]:
        """Each command's start, in order (commands never overlap): for bisecting."""
        return [command.start for command in self.commands]

    def in_comment(self, offset: int) -> bool:
        return any(start <= offset < end for start, end in self.comments)


def read(data: bytes) -> Script:
    """Every command invocation and comment of ``data``. Never raises: text that is no command
    (a stray word, an unclosed parenthesis) is skipped up to the next line."""
    commands: list[Command] = []
    comments: list[tuple[int, int]] = []
    at = 0
    size = len(data)
    while at < size:
        space = _SPACE.match(data, at)
        if space:
            at = space.end()
            continue
        if data[at : at + 1] == b"#":
            at = _comment(data, at, comments)
            continue
        name = _IDENTIFIER.match(data, at)
        if name:
            after = _SPACE.match(data, name.end())
            open_at = after.end() if after else name.end()
            if data[open_at : open_at + 1] == b"(":
                args, end, closed = _arguments(data, open_at + 1, comments)
                commands.append(Command(name.group().decode(), name.start(), end, open_at,
                                        tuple(args), closed))
                at = end
                continue
        newline = data.find(b"\n", at)
        at = size if newline < 0 else newline + 1
    return Script(tuple(commands), tuple(comments))


def _comment(data: bytes, at: int, comments: list[tuple[int, int]]) -> int:
    """Record the comment starting at ``at`` ('#'); returns where it ends."""
    bracket = _BRACKET_OPEN.match(data, at + 1)
    if bracket:
        close = data.find(b"]" + bracket.group(1) + b"]", bracket.end())
        end = len(data) if close < 0 else close + len(bracket.group(1)) + 2
    else:
        newline = data.find(b"\n", at)
        end = len(data) if newline < 0 else newline
    comments.append((at, end))
    return end


def _arguments(data: bytes, at: int,
               comments: list[tuple[int, int]]) -> tuple[list[Argument], int, bool]:
    """The arguments from ``at`` (just after the opening parenthesis) to the matching closing
    one; returns them, the offset after it and whether there was one."""
    args: list[Argument] = []
    depth = 0
    size = len(data)
    while at < size:
        char = data[at : at + 1]
        space = _SPACE.match(data, at)
        if space:
            at = space.end()
        elif char == b"#":
            at = _comment(data, at, comments)
        elif char == b"(":
            depth += 1
            at += 1
        elif char == b")":
            if depth == 0:
                return args, at + 1, True
            depth -= 1
            at += 1
        elif char == b'"':
            match = _QUOTED.match(data, at)
            args.append(Argument(match.group(), at, match.end(), "quoted"))
            at = match.end()
        elif (bracket := _BRACKET_OPEN.match(data, at)) is not None:
            close = data.find(b"]" + bracket.group(1) + b"]", bracket.end())
            end = size if close < 0 else close + len(bracket.group(1)) + 2
            args.append(Argument(data[at:end], at, end, "bracket"))
            at = end
        else:
            match = _UNQUOTED.match(data, at)
            if match is None:  # a lone backslash at the end of the file
                return args, size, False
            args.append(Argument(match.group(), at, match.end(), "unquoted"))
            at = match.end()
    return args, size, False
