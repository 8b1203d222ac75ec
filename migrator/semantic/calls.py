"""Helpers for rules that rewrite calls: find the call around a name and its arguments."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from ..parsing.tokens import LiteralSpans, blank_literals, continued_line, in_directive
from ..rule import RuleContext


# the bytes before a name that may make it a member (``x.name``, ``p -> name``): when the byte
# right before it is none of these, it is not one
BLANK_OR_MEMBER_END = b" \t\n\r\f\v.>"
# the bytes of C identifiers and numbers (what ``\b`` bounds), for every lexical test
WORD_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def find_name(ctx: RuleContext, names: set[bytes] | dict):
    """Yield (name, start, end) for each occurrence of one of ``names`` as code (not in comments,
    literals or member access)."""
    if not names:
        return
    pattern, check_start = _pattern(tuple(sorted(names)))
    data = ctx.data
    for match in pattern.finditer(data):
        start = match.start()
        if check_start and start and data[start - 1] in WORD_BYTES:
            continue  # the end of a longer name
        if ctx.literals.covering(start) is not None:
            continue
        if start and ctx.code[start - 1] in BLANK_OR_MEMBER_END and is_member(ctx, start):
            continue
        yield match.group(), start, match.end()


def code_end_before(ctx: RuleContext, start: int) -> int:
    """Where the code before ``start`` ends: just past its last byte that is neither blank, nor
    in a comment or literal (``ctx.code`` blanks them), nor in a preprocessor directive that
    ends before ``start`` (``#define EPS 1.`` or ``#pragma unroll`` on the line above a name
    is no code of the name's statement). A long run of blanks, such as a marker comment, is
    passed over a window at a time."""
    code = ctx.code
    directives = ctx.directives
    pos = start
    while pos > 0:
        window = max(0, pos - 64)
        pos = window + len(code[window:pos].rstrip())
        if pos == window:
            continue  # only blanks in this window
        index = bisect.bisect_right(directives.starts, pos - 1) - 1
        if index >= 0 and pos - 1 <= directives.ends[index] < start:
            pos = directives.starts[index] - 1  # before the directive's '#'
            continue
        return pos
    return 0


def is_member(ctx: RuleContext, start: int) -> bool:
    """Is the name at ``start`` a member: ``obj.name`` or ``ptr->name``, with blanks, line breaks
    or comments between? Read in the code view, so a comment, literal or directive ending in
    '.' does not count. Every rule asks this question here (hot loops may first test the byte
    before the name against ``BLANK_OR_MEMBER_END``, as this does)."""
    code = ctx.code
    if not start or code[start - 1] not in BLANK_OR_MEMBER_END:
        return False  # `(name`, `*name`: no member
    end = code_end_before(ctx, start)
    if code[end - 1 : end] == b".":
        return True
    return code[max(0, end - 2) : end] == b"->" and not trailing_return_type(ctx, start, end - 2)


# what may stand between a parameter list and the '->' of a trailing return type
_BEFORE_TRAILING_RETURN = re.compile(
    rb"(?:\)|\b(?:const|volatile|noexcept|mutable|override|final|constexpr|consteval|"
    rb"__device__|__host__|__forceinline__))[ \t\r\n]*\Z")


def trailing_return_type(ctx: RuleContext, start: int, arrow: int | None = None) -> bool:
    """Is the name at ``start`` in a trailing return type (``auto f(float x) ->
    __nv_bfloat16``, ``[](float x) -> cudaError_t``): a type, not a member, and no conversion
    ``T{...}`` of the function body that follows? ``arrow``: the offset of the '->' before it,
    when known. Only an arrow after ``)`` or a function qualifier can start one; the tree
    decides those."""
    if arrow is None:
        arrow = code_end_before(ctx, start) - 2
        if arrow < 0 or ctx.code[arrow : arrow + 2] != b"->":
            return False
    if not _BEFORE_TRAILING_RETURN.search(ctx.code, max(0, arrow - 24), arrow):
        return False
    node = ctx.tree.root_node.descendant_for_byte_range(start, start + 1)
    while node is not None and node.type in ("type_identifier", "type_descriptor",
                                             "qualified_identifier", "template_type"):
        node = node.parent
    return node is not None and node.type == "trailing_return_type"


_PATTERNS: dict[tuple, tuple[re.Pattern, bool]] = {}
_WORD = re.compile(rb"\w+")


def _pattern(names: tuple[bytes, ...]) -> tuple[re.Pattern, bool]:
    """The regex that finds ``names`` as whole words, and whether a match's start is still to
    be checked for one. When every name is a word the leading ``\\b`` is left out: with it the
    regex engine tries a match at every byte, without it it jumps to the names' first bytes.
    A match that starts inside a longer word then runs to that word's end (the trailing
    ``\\b``), so it hides no whole-word match after it."""
    found = _PATTERNS.get(names)
    if found is None:
        alternation = b"(?:" + b"|".join(re.escape(n) for n in names) + rb")\b"
        words = all(_WORD.fullmatch(n) for n in names)
        found = _PATTERNS[names] = (re.compile(alternation if words else rb"\b" + alternation),
                                    words)
    return found


_KEYWORDS_BEFORE_CALLS = {b"return", b"case", b"throw", b"co_return", b"else", b"do", b"sizeof",
                          b"new", b"delete", b"co_await", b"decltype", b"typeof"}


@dataclass
class LexicalCall:
    """A call found lexically: argument spans and the offset of its closing parenthesis."""

    arguments: list[tuple[int, int]]
    close: int


def lexical_call(ctx: RuleContext, start: int, end: int) -> LexicalCall | str | None:
    """The call whose callee is the name at [start, end), found without the tree: ``"macro"``
    inside a ``#define`` body, None when the name is not called here (no argument list, or a
    declaration such as ``cudaError_t cudaMalloc(void**, size_t);``)."""
    if ctx.in_directive(start):
        return "macro"
    spans = arguments(ctx, end)
    if spans is None:
        return None
    before = _code_before(ctx, start)
    if before[-1:] in (b"*", b"&"):
        if not _binary_operator(before):
            return None  # a pointer or reference declarator: a declaration, not a call
    elif before[-1:].isalnum() or before[-1:] == b"_":
        word = re.search(rb"[A-Za-z_][A-Za-z0-9_]*$", before)
        if word is None or word.group() not in _KEYWORDS_BEFORE_CALLS:
            return None  # a type before the name: a declaration, not a call
    close = close_of(ctx, ctx.data.index(b"(", end))
    if close is None:
        return None
    return LexicalCall(spans, close)


# what ends an operand: a '*' or '&' after it multiplies or ands (``v[i] * f(x)``, ``2 * f(x)``);
# after a name, what comes before the name tells (``y = a * f(x)``, not ``float * f(x);``)
_OPERAND_END = re.compile(rb"(?:[)\]]|\b[0-9][\w.]*|\b[A-Za-z_]\w*)\s*[*&]{1,2}\s*\Z")
_EXPRESSION_BEFORE = re.compile(rb"(?:[=(,+\-*/%<>?!~^|&\[]|(?<!:):|\breturn)\s*\Z")
# the same before a unary '*' or '&', where '<' and '>' may close a template (``vector<T> *f()``)
_UNARY_BEFORE = re.compile(rb"(?:[=(,+\-*/%?!~^|&\[]|(?<!:):|\breturn)\s*\Z")


def _binary_operator(before: bytes) -> bool:
    """Is the ``*`` or ``&`` that ``before`` ends with an operator (``a * f(x)``, ``= *f(x)``,
    ``return &f(x)``) rather than a declarator (``T *f(...)``)?"""
    operand = _OPERAND_END.search(before)
    if operand is None:  # no operand before it: unary after an operator or a bracket
        return _UNARY_BEFORE.search(before.rstrip(b"*& \t\n")) is not None
    if operand.group()[:1] in (b")", b"]") or operand.group()[:1].isdigit():
        return True
    word = re.match(rb"[A-Za-z_]\w*", operand.group()).group()
    if word in _KEYWORDS_BEFORE_CALLS:
        return True  # return *f(x)
    return _EXPRESSION_BEFORE.search(before, 0, operand.start()) is not None


def _code_before(ctx: RuleContext, start: int) -> bytes:
    """Up to 64 bytes of code before ``start``, ending where that code ends (comments, blanks
    and directives before the name's line skipped: ``code_end_before``)."""
    end = code_end_before(ctx, start)
    return ctx.data[max(0, end - 64) : end]


class _Views:
    """The code view of one text (its comments and literals blanked, as ``RuleContext.code``:
    every literal the token view knows, raw strings included, holds no bracket or comma of the
    code) and the brackets of that view known to stay open to its end.

    A scan from a bracket that reaches the end of the code view has seen every bracket it
    passed as a scan from that bracket would see them; the ones still open at the end cannot
    close either. Remembering them turns thousands of unclosed calls (``f(f(f(...``) from one
    scan each to the end into one scan."""

    __slots__ = ("text", "code", "unclosed")

    def __init__(self, text: bytes, code: bytes) -> None:
        self.text = text
        self.code = code
        self.unclosed: set[int] = set()


_RECENT_VIEWS: dict[int, _Views] = {}  # by identity: the files' bytes and the short texts
_LAST_VIEWS = [_Views(b"", b"")]  # some rules scan in between


def _views(source) -> _Views:
    """The views of ``source``: a rule context (its ``data`` and ``code``) or bytes (their code
    view made here, or a context's already known for the same bytes), kept for the last few
    texts."""
    text = source if type(source) is bytes else source.data
    views = _LAST_VIEWS[0]
    if views.text is not text:
        views = _RECENT_VIEWS.get(id(text))
        if views is None or views.text is not text:
            if len(_RECENT_VIEWS) >= 8:
                del _RECENT_VIEWS[next(iter(_RECENT_VIEWS))]
            code = (blank_literals(text, LiteralSpans(text)) if type(source) is bytes
                    else source.code)
            views = _RECENT_VIEWS[id(text)] = _Views(text, code)
        _LAST_VIEWS[0] = views
    return views


_BRACKETS = re.compile(rb"[()\[\]{}]")


def close_of(source, open_paren: int) -> int | None:
    """The bracket closing the one at ``open_paren``, or None: brackets read in the code view of
    ``source`` (a rule context, or bytes), so none inside a comment or literal counts."""
    views = _views(source)
    code = views.code
    if code[open_paren : open_paren + 1] not in (b"(", b"[", b"{"):
        return None  # no bracket there: nothing closes it
    unclosed = views.unclosed
    if open_paren in unclosed:
        return None
    opened: list[int] = []
    for match in _BRACKETS.finditer(code, open_paren):
        index = match.start()
        if code[index] in b"([{":
            opened.append(index)
        else:
            opened.pop()
            if not opened:
                return index
    unclosed.update(opened)
    return None




def arguments(source, name_end: int) -> list[tuple[int, int]] | None:
    """Argument spans of the call whose name ends at ``name_end``, found lexically (code or
    macro body alike): the parenthesised list, split at top-level commas (a template-id's are
    none: ``template_ids_whole``), spans trimmed.
    ``source``: the rule context, or bytes (read through their own code view). Comments and
    literals inside arguments are skipped as units. None when no complete list follows."""
    return macro_arguments(source, name_end, within_directive=None)


_ARGUMENT_SCAN = re.compile(rb"[()\[\]{},\n]")
# blanks between a called name and its list: a backslash-newline is a line splice (a
# continued #define body may break a call between its name and its list)
_SPACES = re.compile(rb"(?:[ \t]|\\\r?\n)*")
_ARGUMENT_BLANKS = re.compile(rb"[ \t\\\r\n]*")


def macro_arguments(source, name_end: int,
                    within_directive: bool | None = True) -> list[tuple[int, int]] | None:
    """Argument spans of a call written inside a ``#define`` body (where the tree cannot see),
    found lexically: the parenthesised list after ``name_end``, split at top-level commas,
    spans trimmed. None when no complete argument list follows. ``within_directive=None``:
    find out whether the call is in a directive only if a line ends inside its list (the
    check walks back over the whole directive: once per call in a long ``#define`` adds up)."""
    found = _relative_spans(source, name_end, within_directive)
    if found is None:
        return None
    base, spans = found
    return [(base + begin, base + end) for begin, end in spans]


def argument_text(source, name_end: int, index: int) -> bytes | None:
    """The text of argument ``index`` of the call whose name ends at ``name_end`` (as
    ``arguments`` finds them); b"" where the list has no such argument, None where no complete
    list follows. Builds none of the other arguments' spans."""
    found = _relative_spans(source, name_end, None)
    if found is None:
        return None
    base, spans = found
    if len(spans) <= index:
        return b""
    begin, end = spans[index]
    data = source if type(source) is bytes else source.data
    return data[base + begin : base + end]


def _relative_spans(source, name_end: int, within_directive: bool | None):
    """(base, argument spans relative to base) of ``macro_arguments``; None where it finds
    none. Lists found again by their text give the spans kept for it, relative to its start."""
    views = _views(source)
    data, code = views.text, views.code
    plain = _PLAIN_LIST.match(data, name_end)
    if plain is not None:  # most lists: no bracket, literal, comment or line end inside
        if code[plain.start(1) - 1] != 40:  # '(': the list is inside a comment or literal
            return None
        return plain.start(1), _plain_spans(plain.group(1))
    pos = _SPACES.match(data, name_end).end()
    newline = data.find(b"\n", pos, pos + _WINDOW)
    window = data[pos : newline if newline != -1 else pos + _WINDOW]
    kept = _WINDOW_SPANS.get(window)
    if kept is not None and code.startswith(kept[0], pos):
        return pos, kept[1]
    scanned = _scan(views, name_end, pos, within_directive)
    if scanned is None:
        return None
    spans, close = scanned
    if close < pos + len(window):  # the scan read the window alone: its text decides
        if len(_WINDOW_SPANS) >= 8192:
            _WINDOW_SPANS.clear()
        _WINDOW_SPANS[window] = (code[pos : pos + len(window)],
                                 tuple((begin - pos, end - pos) for begin, end in spans))
    return 0, spans


# A list that closes before its line ends and within _WINDOW bytes is split by those bytes
# alone (no directive or unclosed-bracket question arises): its spans are kept per text of the
# window (from its "(" to the line's end, at most _WINDOW bytes), relative to its "(", across
# files, with the window's code view they were found in. The same text is read with other
# literals where one of them ends beyond the window (a raw string's closing ")x\"" further on,
# a string past a window cut short): kept spans are used where the code view is the same.
# Bounded, so a long line costs no copy of the rest of it per call.
_WINDOW = 256
_WINDOW_SPANS: dict[bytes, tuple[bytes, tuple[tuple[int, int], ...]]] = {}


def _scanned_arguments(source, name_end: int,
                       within_directive: bool | None) -> list[tuple[int, int]] | None:
    """``macro_arguments`` found by scanning the list bracket by bracket (any list, no
    shortcut)."""
    views = _views(source)
    scanned = _scan(views, name_end, _SPACES.match(views.text, name_end).end(), within_directive)
    return scanned[0] if scanned is not None else None


def _scan(views: _Views, name_end: int, pos: int, within_directive: bool | None):
    """(argument spans, offset of the closing bracket) of the list opening at ``pos``, found
    from bracket to bracket in the code view; None when no complete list follows."""
    data, code = views.text, views.code
    if code[pos : pos + 1] != b"(":
        return None
    unclosed = views.unclosed
    if pos in unclosed:
        return None
    opened: list[int] = []
    spans = []
    start = pos + 1
    for match in _ARGUMENT_SCAN.finditer(code, pos):  # brackets, commas and line ends
        index = match.start()
        byte = code[index]
        if byte in b"([{":
            opened.append(index)
        elif byte in b")]}":
            opened.pop()
            if not opened:
                spans.append((start, index))
                break
        elif byte == 44:  # ','
            if len(opened) == 1:
                spans.append((start, index))
                start = index + 1
        elif not continued_line(data, index):
            if within_directive is None:
                within_directive = in_directive(data, name_end)
            if within_directive:
                return None  # the directive ended before the list closed
    else:
        unclosed.update(opened)
        return None
    trimmed = []
    blank = _ARGUMENT_BLANKS.match
    for begin, end in spans:
        while True:  # leading blanks and comments are not part of the argument
            begin = blank(data, begin, end).end()
            if data.startswith(b"/*", begin) and data.find(b"*/", begin, end) != -1:
                begin = data.find(b"*/", begin, end) + 2
            elif data.startswith(b"//", begin) and data.find(b"\n", begin, end) != -1:
                begin = data.find(b"\n", begin, end) + 1
            else:
                break
        end = begin + len(data[begin:end].rstrip(b" \t\\\r\n"))
        if end > begin:
            trimmed.append((begin, end))
    if len(trimmed) > 1 and code.find(b"<", pos, index) != -1:
        trimmed = template_ids_whole(code, trimmed)
    return trimmed, index


# an argument list holding no bracket, literal, comment or line end: split by its own bytes
# alone (no directive or unclosed-bracket question arises), so its spans are kept per text,
# relative to the list's start, across files
_PLAIN_LIST = re.compile(rb"[ \t]*\(([^()\[\]{}\"'/\n]*)\)")
_PLAIN_SPANS: dict[bytes, tuple[tuple[int, int], ...]] = {}
_BLANKS = b" \t\\\r\n"  # what trimming an argument removes (as _ARGUMENT_BLANKS and rstrip)


def _plain_spans(inner: bytes) -> tuple[tuple[int, int], ...]:
    """The argument spans of the plain list ``inner`` (the text between its parentheses),
    relative to its start: split at every comma, each part trimmed, empty parts left out."""
    relative = _PLAIN_SPANS.get(inner)
    if relative is None:
        spans, offset = [], 0
        for part in inner.split(b","):
            body = part.strip(_BLANKS)
            if body:
                begin = offset + len(part) - len(part.lstrip(_BLANKS))
                spans.append((begin, begin + len(body)))
            offset += len(part) + 1
        if len(spans) > 1 and b"<" in inner:
            spans = template_ids_whole(inner, spans)
        if len(_PLAIN_SPANS) >= 8192:
            _PLAIN_SPANS.clear()
        relative = _PLAIN_SPANS[inner] = tuple(spans)
    return relative


def template_ids_whole(code: bytes, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` (argument spans of one list, split at its top-level commas, in ``code``: the
    code view) with the arguments that a template-id's commas split joined again:
    ``cudaFuncGetAttributes(&fa, k<int, float>)`` has two arguments, not three, and so have
    ``f(a, (void*)k<T, (N > 2)>)`` and ``f(a, ns::k<T, v<U, 2>>)``. A '<' after a name opens a
    template argument list where later arguments close it and what follows its '>' is no
    operand: ``f(i < n, m > k)`` keeps its two comparisons."""
    joined = []
    index = 0
    while index < len(spans):
        begin, end = spans[index]
        last, depth = index, _angles_open(code, begin, end, 0)
        while depth and last + 1 < len(spans):
            last += 1
            depth = _angles_open(code, *spans[last], depth)
        if last > index and depth == 0:
            joined.append((begin, spans[last][1]))
            index = last + 1
        else:
            joined.append((begin, end))
            index += 1
    return joined


# the tokens that open, close or follow a template argument list (shifts, comparisons with '='
# and '->' are none of its brackets)
_ANGLE_TOKENS = re.compile(rb"->|<<=?|>>=|[<>]=|>>|[A-Za-z_]\w*|[0-9][\w.']*|\S")


def _angles_open(code: bytes, begin: int, end: int, depth: int) -> int | None:
    """How many template argument lists are open at ``end`` of the argument [begin, end) of a
    list, ``depth`` being open at ``begin``: a '<' right after a name opens one, a '>' (or
    '>>') closes one or two, outside parentheses; None where a list closed to ``depth`` 0 is
    followed by an operand (a comparison, ``m > k``), or closes more than are open."""
    brackets = 0
    after_name = closed = False
    for match in _ANGLE_TOKENS.finditer(code, begin, end):
        token = match.group()
        first = token[0]
        if closed and first in WORD_BYTES:
            return None  # ``m > k``: no template-id closed there
        closed = False
        if first in b"([{":
            brackets += 1
        elif first in b")]}":
            brackets -= 1
        elif brackets:
            pass
        elif token == b"<":
            if after_name:
                depth += 1
        elif token in (b">", b">>") and depth:
            if len(token) > depth:
                return None
            depth -= len(token)
            closed = depth == 0
        after_name = first in WORD_BYTES and first not in b"0123456789"
    return depth
