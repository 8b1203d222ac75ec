"""A lossless lexical view of C/C++/CUDA source.

The tree-sitter tree cannot see inside ``#define`` bodies (one opaque ``preproc_arg`` node) and
may mis-group code under ``#if`` branches or in error recovery. Comments and literals are what a
converter must never rewrite, so they are found here, lexically, over the whole file: the result
is exact whatever the preprocessor does.
"""

from __future__ import annotations

import bisect
import re

# Order matters only within one start position; the scan goes left to right, so a quote inside a
# comment is consumed by the comment and a comment marker inside a string by the string. Raw
# strings and strings are only opened here: their ends are found by _LiteralScanner, which
# remembers what it learnt so that unterminated ones cost no rescans (see there).
_LITERAL = re.compile(
    rb"""
    (?=[/"'\#uULR]|^[ \t])  # every alternative starts so: a cheap first-byte filter
    (?:
      (?P<comment>//(?:\\\r?\n|[^\n])*|/\*[\s\S]*?(?:\*/|\Z))
    | (?P<raw>\b(?:u8|u|U|L)?R"(?P<delim>[^()\\\s"]{0,16})\()
    | (?P<string>")
    | (?P<char>(?<![0-9])'(?:\\[\s\S]|[^'\\\n]){1,8}')
    | (?P<include>^[ \t]*\#[ \t]*(?:include|include_next|import)[ \t]*(?:<[^>\n]*>|"[^"\n]*"))
    )
    """,
    re.VERBOSE | re.MULTILINE,
)
_STRING_BODY = re.compile(rb'(?:\\[\s\S]|[^"\\\n])*')  # after the opening quote
# ")delim\"": the bytes between ")" and the quote are delimiter bytes, which hold no ")" or
# quote, so two of these never overlap and finditer sees every one
_RAW_CLOSE = re.compile(rb'\)([^()\\\s"]{0,16})"')


class _LiteralScanner:
    """Finds the literal that starts at a position of ``data[:end]`` (C++ lexing rules: a raw
    string runs to the first ``)delim"``, a string to its unescaped closing quote on the same
    logical line; either one unterminated is no literal, and scanning goes on one byte later).

    Two memories keep every scan linear, however many literals are left open:

    * the closing ``)delim"`` sequences are indexed once (by delimiter, in order), so an
      unclosed ``R"x(`` is a lookup instead of a search to the end of the file;
    * a string that does not close stops at a newline; every quote it passed over is then
      inside an escape (an unescaped one would have closed it), and a string opened there
      reaches the same state at the next byte and fails at the same newline: those quotes
      are skipped without a scan.
    """

    __slots__ = ("data", "start", "end", "_closers", "_dead_until")

    def __init__(self, data: bytes, start: int, end: int) -> None:
        self.data = data
        self.start = start
        self.end = end
        self._closers: dict[bytes, list[int]] | None = None
        self._dead_until = -1  # quotes before this offset open no string

    def resolve(self, match: re.Match) -> tuple[str, int] | None:
        """(kind, end) of the literal ``match`` (from ``_LITERAL``) starts, None if unterminated."""
        kind = match.lastgroup
        if kind == "string":
            opening = match.start()
            if opening < self._dead_until:
                return None
            stop = _STRING_BODY.match(self.data, opening + 1, self.end).end()
            if stop < self.end and self.data[stop] == 34:  # '"'
                return kind, stop + 1
            self._dead_until = stop
            return None
        if kind in ("raw", "delim"):
            delimiter = match.group("delim")
            closers = self._raw_closers().get(delimiter)
            if not closers:
                return None
            index = bisect.bisect_left(closers, match.end())
            if index == len(closers):
                return None
            return "raw", closers[index] + len(delimiter) + 2
        return kind, match.end()

    def _raw_closers(self) -> dict[bytes, list[int]]:
        if self._closers is None:
            closers: dict[bytes, list[int]] = {}
            for close in _RAW_CLOSE.finditer(self.data, self.start, self.end):
                closers.setdefault(close.group(1), []).append(close.start())
            self._closers = closers
        return self._closers


# a kernel launch's opening bracket as nvcc reads it (a pattern, to search or to join in an
# alternation): '<<<', or '<<' and '<' with blanks between, on one line or a continued one
# (``k << < g, b >> > (p)``, which hipcc does not read: LCH002 writes '<<<')
LAUNCH_OPENING = rb"(?<!<)<<(?:[ \t]|\\\r?\n)*<(?![<=])"

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
    """Sorted byte ranges of comments, string/char literals and include directives; with
    ``stop``, only those that start at or before it (what a scan of the whole file finds
    there: answers for offsets up to ``stop`` are the same)."""

    __slots__ = ("starts", "ends", "kinds")

    def __init__(self, data: bytes, stop: int | None = None) -> None:
        starts: list[int] = []
        ends: list[int] = []
        kinds: list[str] = []
        scanner = _LiteralScanner(data, 0, len(data))
        search = _LITERAL_HINT.search  # finds what _LITERAL.search would (see there)
        pos = 0
        while True:
            match = search(data, pos)
            if match is None:
                break
            if match.lastgroup is None:  # an R" or a #: the literal, if any, starts near it
                near = _literal_near(data, pos, match.start())
                if near is None:
                    pos = match.start() + 1
                    continue
                match = near
            if stop is not None and match.start() > stop:
                break
            found = scanner.resolve(match)
            if found is None:  # unterminated: no literal starts here
                pos = match.start() + 1
                continue
            kind, end = found
            starts.append(match.start())
            ends.append(end)
            kinds.append(kind)
            pos = end
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


# _LITERAL for a search: its first-byte filter lets the regex engine try a match at every u, U,
# L and R (common in names) and at every indented line. This one starts each alternative with
# its first byte, which the engine skips to in a fast scan. It matches what _LITERAL matches
# there (same group names) where only that can start: a comment, string or character at its
# / " or ', an include at a # that starts its line, a raw string at an R" with no name before;
# else a bare # or R", near which _literal_near looks for the rest (an indented include, a
# raw string with an encoding prefix).
_LITERAL_HINT = re.compile(
    rb"""
      /(?P<comment>/(?:\\\r?\n|[^\n])*|\*[\s\S]*?(?:\*/|\Z))
    | "(?P<string>)
    | '(?<![0-9]')(?P<char>(?:\\[\s\S]|[^'\\\n]){1,8}')
    | \#(?<![^\n]\#)(?P<include>[ \t]*(?:include|include_next|import)[ \t]*(?:<[^>\n]*>|"[^"\n]*"))
    | R(?<!\wR)(?P<raw>"(?P<delim>[^()\\\s"]{0,16})\()
    | \#
    | R"
    """,
    re.VERBOSE,
)
_BLANK_BYTES = re.compile(rb"[ \t]*")


def _literal_near(data: bytes, pos: int, at: int) -> re.Match | None:
    """The _LITERAL match that ``_LITERAL_HINT``'s ``R"`` or ``#`` at ``at`` belongs to (none
    starting before ``pos``): an include starts at the start of the line of its ``#``, with
    only blanks between; a raw string at its ``R"`` or its encoding prefix (``u8R"``...)."""
    if data[at] == 35:  # '#' (one starting its line was tried in full)
        line = data.rfind(b"\n", 0, at) + 1
        if line < pos or line == at or _BLANK_BYTES.match(data, line).end() != at:
            return None
        return _LITERAL.match(data, line)
    if at - 2 >= pos and data[at - 2 : at] == b"u8":
        start = at - 2
    elif at - 1 >= pos and data[at - 1] in b"uUL":
        start = at - 1
    else:
        start = at
    return _LITERAL.match(data, start) or (_LITERAL.match(data, at) if start < at else None)


def tokenize(data: bytes, start: int = 0, end: int | None = None):
    """Yield (kind, start, end) for every token of data[start:end], whitespace included.

    Lossless: the tokens' ranges tile the input exactly. Kinds are ``comment``, ``string``,
    ``raw``, ``char``, ``include``, ``ws``, ``ident``, ``number`` and ``punct``.
    """
    end = len(data) if end is None else end
    pos = start
    literal = _LITERAL
    scanner = _LiteralScanner(data, start, end)
    token = _TOKEN
    while pos < end:
        lit = literal.match(data, pos, end)
        found = None if lit is None else scanner.resolve(lit)
        if found is not None:
            kind, lit_end = found
            yield kind, pos, lit_end
            pos = lit_end
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
    return blank_spans(data, zip(literals.starts, literals.ends))


def blank_spans(data: bytes, spans) -> bytes:
    """``data`` with each (start, end) of ``spans`` (in order, not overlapping) replaced by as
    many spaces."""
    parts = []
    previous = 0
    for start, end in spans:
        parts.append(data[previous:start])
        parts.append(b" " * (end - start))
        previous = end
    parts.append(data[previous:])
    return b"".join(parts)


def directive_hashes(data: bytes) -> list[tuple[int, int]]:
    """(line start, offset of the ``#``) of each line whose first byte other than spaces and
    tabs is ``#``, in order: what ``^[ \t]*#`` finds in MULTILINE mode, found from the file's
    few ``#`` bytes instead of a try at every offset (ten times faster)."""
    found = []
    find, rfind = data.find, data.rfind
    at = find(b"#")
    while at != -1:
        line = rfind(b"\n", 0, at) + 1
        if line == at or not data[line:at].translate(None, b" \t"):
            found.append((line, at))
        at = find(b"#", at + 1)
    return found


class DirectiveSpans:
    """The offsets ``in_directive`` is true at, found once per file: for each directive, from
    just after its ``#`` through the newline ending its last (continued) line."""

    __slots__ = ("starts", "ends")

    def __init__(self, data: bytes) -> None:
        starts: list[int] = []
        ends: list[int] = []  # inclusive
        for line, hash_at in directive_hashes(data):
            if (ends and line <= ends[-1]) or (line > 1 and continued_line(data, line - 1)):
                continue  # a continuation line: part of the logical line before it
            end = data.find(b"\n", hash_at + 1)
            while end != -1 and continued_line(data, end):
                end = data.find(b"\n", end + 1)
            starts.append(hash_at + 1)
            ends.append(len(data) if end == -1 else end)
        self.starts = starts
        self.ends = ends

    def contains(self, offset: int) -> bool:
        index = bisect.bisect_right(self.starts, offset) - 1
        return index >= 0 and offset <= self.ends[index]


_SPACES = re.compile(rb"[ \t\r\n\f\v]*")


def code_braces(code: bytes, directives: DirectiveSpans):
    """The offsets of the braces of ``code`` (a code view: comments and literals blanked)
    outside directive bodies, in order. Each is found by a ``find`` (a regex search for either
    reads every byte in Python's engine), the directives passed in step."""
    directive_starts, directive_ends = directives.starts, directives.ends
    directive, last_directive = 0, len(directive_starts)  # the first not wholly before a brace
    next_open, next_close = code.find(b"{"), code.find(b"}")
    while next_open != -1 or next_close != -1:
        if next_close == -1 or next_open != -1 and next_open < next_close:
            at = next_open
            next_open = code.find(b"{", at + 1)
        else:
            at = next_close
            next_close = code.find(b"}", at + 1)
        while directive < last_directive and directive_ends[directive] < at:
            directive += 1
        if directive < last_directive and directive_starts[directive] <= at:
            continue  # inside a directive (as in_directive)
        yield at


def last_code_semicolon(code: bytes, directives: DirectiveSpans, start: int, end: int) -> int:
    """The offset of the last ``;`` of ``code[start:end]`` outside directive bodies, or -1:
    read back from ``end``, past each directive a ``;`` is found in."""
    directive_starts, directive_ends = directives.starts, directives.ends
    semicolon = code.rfind(b";", start, end)
    while semicolon != -1:
        index = bisect.bisect_right(directive_starts, semicolon) - 1
        if index < 0 or semicolon > directive_ends[index]:
            return semicolon
        semicolon = code.rfind(b";", start, directive_starts[index])
    return -1


def top_level_items(code: bytes, directives: DirectiveSpans) -> list[tuple[int, int]] | None:
    """(start, end) of each top-level item that holds braces (a function, class, namespace or
    extern block), from just after the ``;`` or ``}`` that ends what comes before it (or the
    file's start) through its closing brace, and the ``;`` right after it if there is one:
    read from ``code``, the code view (comments and literals blanked), braces in directive
    bodies left out. None where the braces do not balance (branches of an #if that each open
    or close a block). A complete item parses the same alone as between complete items.

    Braces alone are visited, each found by a ``find`` (a file has many more ``;``, of which
    only the last before an item's ``{`` matters: found by reading back from it)."""
    items: list[tuple[int, int]] = []
    depth = start = 0
    contains = directives.contains
    for at in code_braces(code, directives):
        if code[at] == 123:  # {
            if depth == 0:  # an item starts after the last top-level ``;`` before it
                semicolon = last_code_semicolon(code, directives, start, at)
                if semicolon != -1:
                    start = semicolon + 1
            depth += 1
        else:  # }
            depth -= 1
            if depth < 0:
                return None
            if depth == 0:
                end = _SPACES.match(code, at + 1).end()
                # a class, struct or enum definition ends at its `;` (the next item starts
                # after it, where this one ends)
                end = end + 1 if code[end : end + 1] == b";" and not contains(end) else at + 1
                items.append((start, end))
                start = end
    return items if depth == 0 else None


def in_directive(data: bytes, offset: int) -> bool:
    """Is ``offset`` inside a preprocessor directive (a ``#define`` body, continuation lines
    included)? Lexical and cheap: the tree sees a directive body as one opaque node anyway."""
    start = data.rfind(b"\n", 0, offset) + 1
    while start > 1 and continued_line(data, start - 1):
        start = data.rfind(b"\n", 0, start - 1) + 1
    return data[start:offset].lstrip(b" \t").startswith(b"#")


def continued_line(data: bytes, newline: int) -> bool:
    """Does the line ending at ``newline`` end with a backslash (carriage returns aside)? Reads
    those few bytes, not a copy of the whole file before them."""
    end = newline
    while end > 0 and data[end - 1] == 13:  # \r
        end -= 1
    return end > 0 and data[end - 1] == 92  # backslash
