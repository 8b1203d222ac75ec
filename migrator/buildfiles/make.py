"""A lossless reader of Makefiles and shell build scripts: logical lines and shell-like words,
in byte offsets.

A logical line runs over backslash-newline continuations. Makefile lines are variable
assignments (``CC = nvcc``, ``FLAGS += -O3``, ``export X := y``), rule lines (``%.o: %.cu``),
recipe lines (starting with a tab: shell commands), directives (``ifeq``, ``include``...),
comments and blanks. A shell script's lines are commands (or comments). ``words`` splits a
command or a value as the shell would, keeping quotes and make's ``$(...)`` / ``${...}``
inside one word, so that a rule can rewrite one flag without re-printing the line.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

_ASSIGNMENT = re.compile(
    rb"[ \t]*((?:(?:export|override|private)[ \t]+)*)([A-Za-z0-9_.\-/]+)[ \t]*"
    rb"(\+=|\?=|::=|:::=|:=|!=|=)")
_DIRECTIVES = frozenset({b"ifeq", b"ifneq", b"ifdef", b"ifndef", b"else", b"endif", b"include",
                         b"-include", b"sinclude", b"define", b"endef", b"export", b"unexport",
                         b"override", b"vpath", b"undefine"})
_FIRST_WORD = re.compile(rb"[ \t]*([^\s:=]+)")


@dataclass(frozen=True)
class Line:
    """One logical line, ``start`` to ``end`` (without its newline). ``kind``: assignment, rule,
    recipe, directive, comment, blank, command (a shell script's) or other. An assignment has
    ``name``, ``op`` and its value's span ``value_start``..``value_end`` (without a trailing
    comment). A recipe's or command's text is ``value_start``..``value_end`` too."""

    start: int
    end: int
    kind: str
    name: str = ""
    op: str = ""
    value_start: int = 0
    value_end: int = 0


@dataclass(frozen=True)
class Word:
    """A shell-like word: ``text`` from ``start`` to ``end``."""

    text: bytes
    start: int
    end: int

    @property
    def value(self) -> str:
        return self.text.decode("utf-8", "replace")


def _continued(data: bytes, start: int, end: int) -> bool:
    """Does the line data[start:end] (its newline at ``end``) end in an odd number of
    backslashes, before a carriage return if any? (Read from the end: a pattern searched
    for it tries every byte of the line.)"""
    if end > start and data[end - 1] == 0x0D:
        end -= 1
    run = end
    while run > start and data[run - 1] == 0x5C:
        run -= 1
    return (end - run) % 2 == 1


def logical_lines(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of each logical line (without its newline): physical lines joined where one
    ends in an odd number of backslashes."""
    spans = []
    at = 0
    size = len(data)
    while at < size:
        start = at
        while True:
            newline = data.find(b"\n", at)
            if newline < 0:
                end = at = size
                break
            if _continued(data, at, newline):
                at = newline + 1
                continue
            end, at = newline, newline + 1
            break
        spans.append((start, end))
    return spans


def read_makefile(data: bytes) -> list[Line]:
    """The logical lines of a Makefile, classified."""
    lines = []
    in_define = False
    for start, end in logical_lines(data):
        text = data[start:end]
        stripped = text.strip()
        first = _FIRST_WORD.match(text)
        word = first.group(1) if first else b""
        if in_define:
            lines.append(Line(start, end, "other"))
            if word == b"endef":
                in_define = False
            continue
        if text.startswith(b"\t"):
            lines.append(Line(start, end, "recipe", value_start=start + 1, value_end=end))
        elif not stripped:
            lines.append(Line(start, end, "blank"))
        elif stripped.startswith(b"#"):
            lines.append(Line(start, end, "comment"))
        elif (assignment := _ASSIGNMENT.match(text)) is not None and b":" not in text[
                : assignment.start(3)].replace(b"::=", b""):
            value_start = start + assignment.end()
            while value_start < end and data[value_start] in b" \t":
                value_start += 1
            lines.append(Line(start, end, "assignment", assignment.group(2).decode(),
                              assignment.group(3).decode(), value_start,
                              _before_comment(data, value_start, end)))
        elif word in _DIRECTIVES:
            if word == b"define":
                in_define = True
            lines.append(Line(start, end, "directive", value_start=start + first.end(),
                              value_end=_before_comment(data, start + first.end(), end)))
        elif b":" in text:
            lines.append(Line(start, end, "rule", value_start=start,
                              value_end=_before_comment(data, start, end)))
        else:
            lines.append(Line(start, end, "other"))
    return lines


def read_script(data: bytes) -> list[Line]:
    """The logical lines of a shell script: commands, comments and blanks."""
    lines = []
    for start, end in logical_lines(data):
        stripped = data[start:end].strip()
        if not stripped:
            lines.append(Line(start, end, "blank"))
        elif stripped.startswith(b"#"):
            lines.append(Line(start, end, "comment"))
        else:
            lines.append(Line(start, end, "command", value_start=start, value_end=end))
    return lines


def _before_comment(data: bytes, start: int, end: int) -> int:
    """Where a make comment ('#' not escaped by a backslash) ends the text, else ``end``,
    trailing space excluded."""
    at = start
    while True:
        hash_at = data.find(b"#", at, end)
        if hash_at < 0:
            break
        if hash_at > start and data[hash_at - 1 : hash_at] == b"\\":
            at = hash_at + 1
            continue
        end = hash_at
        break
    while end > start and data[end - 1] in b" \t\r":
        end -= 1
    return end


# a word with nothing the loop in ``words`` reads specially: no blank, quote, backslash, $( or ${
_PLAIN_WORD = re.compile(rb"(?:[^ \t\r\n'\"`\\$]|\$(?![({]))+")


def words(data: bytes, start: int, end: int, shell_comments: bool = True) -> list[Word]:
    """The words of ``data[start:end]`` split at unquoted blanks (a backslash-newline is a
    blank), keeping quotes, escapes and ``$(...)``/``${...}``/`` `...` `` in one word. With
    ``shell_comments``, a '#' starting a word ends the text (a shell comment)."""
    found = []
    at = start
    while at < end:
        char = data[at]
        if char in b" \t\r\n":
            at += 1
            continue
        if char == 0x5C and data[at + 1 : at + 2] in (b"\n", b"\r"):  # continuation
            at += 2
            continue
        if shell_comments and char == 0x23:  # '#'
            break
        word_start = at
        plain = _PLAIN_WORD.match(data, at, end)  # most words: no quote, escape or $( in them
        if plain is not None and (plain.end() == end or data[plain.end()] in b" \t\r\n"):
            at = plain.end()
            found.append(Word(data[word_start:at], word_start, at))
            continue
        depth = 0
        while at < end:
            char = data[at]
            if depth == 0 and char in b" \t\r\n":
                break
            if char == 0x5C:  # backslash: escapes the next byte
                if depth == 0 and data[at + 1 : at + 2] in (b"\n", b"\r"):
                    break
                at += 2
                continue
            if char in b"'\"`" and depth == 0:
                close = data.find(bytes([char]), at + 1, end)
                at = end if close < 0 else close + 1
                continue
            if char == 0x24 and data[at + 1 : at + 2] in (b"(", b"{"):  # $( or ${
                depth += 1
                at += 2
                continue
            if char in b")}" and depth:
                depth -= 1
            at += 1
        at = min(at, end)
        found.append(Word(data[word_start:at], word_start, at))
    return found


_INCLUDE_WORDS = frozenset({b"include", b"-include", b"sinclude"})
# a line that may start with one of them: a file with none has no include line (most have none)
_MAY_INCLUDE = re.compile(rb"^[ \t]*(?:-|s)?include\b", re.MULTILINE)
_MAKE_REFERENCE = re.compile(rb"\$[({]")


def included_names(data: bytes) -> list[str]:
    """The files a Makefile's ``include`` / ``-include`` / ``sinclude`` lines name, as written
    (a name made from a variable, ``$(TOP)/common.mk``, is left out: only make knows it)."""
    found = []
    if _MAY_INCLUDE.search(data) is None:
        return found
    for line in read_makefile(data):
        if line.kind != "directive":
            continue
        first = _FIRST_WORD.match(data, line.start, line.end)
        if first is None or first.group(1) not in _INCLUDE_WORDS:
            continue
        for word in words(data, line.value_start, line.value_end):
            if not _MAKE_REFERENCE.search(word.text) and b"*" not in word.text:
                found.append(word.text.decode("utf-8", "surrogateescape"))
    return found


class MakeIncludes:
    """What the make files of one tree include, read once for the tree: each file's
    ``included_names`` and, per make file, those that include it (with the include line's
    name), so that asking for every make file's relations reads no file twice."""

    def __init__(self, makefiles: dict[str, bytes]) -> None:
        self.makefiles = makefiles  # every make file of the tree by posix path
        self._names: dict[str, list[str]] = {}
        self._includers: dict[str, list[tuple[str, str]]] | None = None

    def names(self, path: str, text: bytes) -> list[str]:
        if path not in self._names:
            self._names[path] = included_names(text)
        return self._names[path]

    def includers(self, rel: str) -> list[tuple[str, str]]:
        """(make file, the name its first include of ``rel`` writes), in the tree's order."""
        if self._includers is None:
            self._includers = {}
            for other, text in self.makefiles.items():
                if b"include" not in text:
                    continue
                named: set[str] = set()
                for name in self.names(other, text):
                    target = _resolve(other, name)
                    if target not in named:
                        named.add(target)
                        self._includers.setdefault(target, []).append((other, name))
        return self._includers.get(rel, [])


def _resolve(including: str, name: str) -> str:
    """The make file an include line of ``including`` names: from make's folder, which is the
    includer's (make runs where its Makefile is)."""
    return posixpath.normpath(posixpath.join(posixpath.dirname(including), name))


def related_makefiles(rel: str, data: bytes, makefiles: dict[str, bytes],
                      shared: MakeIncludes | None = None) -> list[tuple[str, str]]:
    """The make files of a tree that ``rel`` includes, that include it, and that those
    include (a sibling fragment: common.mk sets the NVCC that verifiable.mk's recipe runs):
    (path, the include line's name). ``makefiles``: every make file of the tree by posix
    path. ``shared``: the tree's MakeIncludes, shared by the calls for one tree."""
    shared = MakeIncludes(makefiles) if shared is None else shared
    found: dict[str, str] = {}
    for name in shared.names(rel, data):
        target = _resolve(rel, name)
        if target != rel and target in makefiles:
            found.setdefault(target, name)
    includers = [(other, name) for other, name in shared.includers(rel) if other != rel]
    for other, name in includers:
        found.setdefault(other, name)
    for other, _ in includers:
        for name in shared.names(other, makefiles[other]):
            target = _resolve(other, name)
            if target != rel and target in makefiles:
                found.setdefault(target, name)
    return sorted(found.items())
