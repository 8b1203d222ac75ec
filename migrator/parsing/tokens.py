"""A lossless lexical view of C/C++/CUDA source.

The tree-sitter tree cannot see inside ``#define`` bodies (one opaque ``preproc_arg`` node) and
may mis-group code under ``#if`` branches or in error recovery. Comments and literals are what a
converter must never rewrite, so they are found here, lexically, over the whole file: the result
is exact whatever the preprocessor does.
"""

from __future__ import annotations

import bisect
import re

# Order matters only within one start position; finditer scans left to right, so a quote inside a
# comment is consumed by the comment and a comment marker inside a string by the string.
_LITERAL = re.compile(
    rb"""
    (?=[/"'\#uULR]|^[ \t])  # every alternative starts so: a cheap first-byte filter
    (?:
      (?P<comment>//(?:\\\r?\n|[^\n])*|/\*[\s\S]*?(?:\*/|\Z))
    | (?P<raw>\b(?:u8|u|U|L)?R"(?P<delim>[^()\\\s"]{0,16})\([\s\S]*?\)(?P=delim)")
    | (?P<string>"(?:\\[\s\S]|[^"\\\n])*")
    | (?P<char>(?<![0-9])'(?:\\[\s\S]|[^'\\\n]){1,8}')
    | (?P<include>^[ \t]*\#[ \t]*(?:include|include_next|import)[ \t]*(?:<[^>\n]*>|"[^"\n]*"))
    )
    """,
    re.VERBOSE | re.MULTILINE,
)

_TOKEN = re.compile(
    rb"""
      (?P<ws>[ \t\r\n\f\v]+|\\\r?\n)
    | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
    | (?P<number>\.?[0-9](?:[eEpP][+-]|[A-Za-z0-9_.']|)*)
    | (?P<punct><<<|>>>|<<=|>>=|->\*|\.\.\.|::|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^!=<>]=|\#\#|[^\sA-Za-z0-9_])
    """,
    re.VERBOSE,
)


class LiteralSpans:
    """Sorted byte ranges of comments, string/char literals and include directives."""

    __slots__ = ("starts", "ends", "kinds")

    def __init__(self, data: bytes) -> None:
        starts: list[int] = []
        ends: list[int] = []
        kinds: list[str] = []
        for match in _LITERAL.finditer(data):
            starts.append(match.start())
            ends.append(match.end())
            kinds.append(match.lastgroup if match.lastgroup != "delim" else "raw")
        self.starts = starts
        self.ends = ends
        self.kinds = kinds

    def covering(self, offset: int) -> str | None:
        """The kind of literal that contains ``offset``, or None when it is code."""
        index = bisect.bisect_right(self.starts, offset) - 1
        if index >= 0 and offset < self.ends[index]:
            return self.kinds[index]
        return None

    def comments(self):
        """(start, end) of every comment."""
        for start, end, kind in zip(self.starts, self.ends, self.kinds):
            if kind == "comment":
                yield start, end


def tokenize(data: bytes, start: int = 0, end: int | None = None):
    """Yield (kind, start, end) for every token of data[start:end], whitespace included.

    Lossless: the tokens' ranges tile the input exactly. Kinds are ``comment``, ``string``,
    ``raw``, ``char``, ``include``, ``ws``, ``ident``, ``number`` and ``punct``.
    """
    end = len(data) if end is None else end
    pos = start
    literal = _LITERAL
    token = _TOKEN
    while pos < end:
        lit = literal.match(data, pos, end)
        if lit is not None and lit.end() > pos:
            kind = lit.lastgroup if lit.lastgroup != "delim" else "raw"
            yield kind, pos, lit.end()
            pos = lit.end()
            continue
        tok = token.match(data, pos, end)
        if tok is None or tok.end() == pos:  # a lone byte no pattern takes
            yield "punct", pos, pos + 1
            pos += 1
            continue
        yield tok.lastgroup, pos, tok.end()
        pos = tok.end()


def blank_literals(data: bytes, literals: LiteralSpans) -> bytes:
    """``data`` with every comment, literal and include directive replaced by as many spaces:
    same length and offsets, so scans for brackets and semicolons need no per-byte checks."""
    parts = []
    previous = 0
    for start, end in zip(literals.starts, literals.ends):
        parts.append(data[previous:start])
        parts.append(b" " * (end - start))
        previous = end
    parts.append(data[previous:])
    return b"".join(parts)


_DIRECTIVE_LINE = re.compile(rb"^[ \t]*#", re.MULTILINE)


class DirectiveSpans:
    """The offsets ``in_directive`` is true at, found once per file: for each directive, from
    just after its ``#`` through the newline ending its last (continued) line."""

    __slots__ = ("starts", "ends")

    def __init__(self, data: bytes) -> None:
        starts: list[int] = []
        ends: list[int] = []  # inclusive
        for match in _DIRECTIVE_LINE.finditer(data):
            line = match.start()
            if (ends and line <= ends[-1]) or (line > 1 and _continued(data, line - 1)):
                continue  # a continuation line: part of the logical line before it
            end = data.find(b"\n", match.end())
            while end != -1 and _continued(data, end):
                end = data.find(b"\n", end + 1)
            starts.append(match.end())
            ends.append(len(data) if end == -1 else end)
        self.starts = starts
        self.ends = ends

    def contains(self, offset: int) -> bool:
        index = bisect.bisect_right(self.starts, offset) - 1
        return index >= 0 and offset <= self.ends[index]


def in_directive(data: bytes, offset: int) -> bool:
    """Is ``offset`` inside a preprocessor directive (a ``#define`` body, continuation lines
    included)? Lexical and cheap: the tree sees a directive body as one opaque node anyway."""
    start = data.rfind(b"\n", 0, offset) + 1
    while start > 1 and _continued(data, start - 1):
        start = data.rfind(b"\n", 0, start - 1) + 1
    return data[start:offset].lstrip(b" \t").startswith(b"#")


def _continued(data: bytes, newline: int) -> bool:
    """Does the line ending at ``newline`` end with a backslash (carriage returns aside)? Reads
    those few bytes, not a copy of the whole file before them."""
    end = newline
    while end > 0 and data[end - 1] == 13:  # \r
        end -= 1
    return end > 0 and data[end - 1] == 92  # backslash
