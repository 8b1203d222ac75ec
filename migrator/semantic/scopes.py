"""Lexical scopes for the optimisation rules: brace blocks, function bodies, statements, loops,
and the calls inside them. Comments and literals are skipped; nothing here needs the tree, so
it works on the real CUDA that tree-sitter cannot parse. Results are cached per file."""

from __future__ import annotations

import bisect
import heapq
import operator
import re
from dataclasses import dataclass

from ..parsing.tokens import code_braces, last_code_semicolon
from ..rule import RuleContext
from .calls import WORD_BYTES, close_of

IDENTIFIER = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
_CONTROL = {b"if", b"for", b"while", b"switch", b"catch", b"do", b"else", b"return"}
_NOT_FUNCTION = re.compile(rb"\b(?:namespace|class|struct|union|enum)\b|\bextern\s*\"C")


@dataclass(frozen=True)
class Block:
    """A ``{ ... }`` block: offsets of its braces and where its head (the text before ``{``)
    starts."""

    head: int
    open: int
    close: int

    def contains(self, offset: int) -> bool:
        return self.open < offset < self.close


_HEAD_NOISE = re.compile(rb"/\*[\s\S]*?\*/|//[^\n]*|^\s*#[^\n]*", re.MULTILINE)
_STATEMENT_PUNCTUATION = re.compile(rb"[()\[\]{};]")
_BRACKET = re.compile(rb"[()\[\]]")
_CALLEE_NAME = re.compile(rb"[A-Za-z_][A-Za-z0-9_:]*$")  # a (qualified) name ending there
_NAME_BYTES = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_:"


def blocks(ctx: RuleContext) -> list[Block]:
    """Every brace block of the file, in order of their opening brace (``#define`` bodies and
    literals skipped)."""
    found = ctx.cache.get("scopes.blocks")
    if found is not None:
        return found
    code = ctx.code
    directives = ctx.directives
    opened: list[tuple[int, int, int]] = []  # (head, open, index in found)
    found = []
    after_brace = 0  # just past the last brace outside directives
    # braces alone are visited (a file has ten times more ``;``); a head starts after the last
    # ``{};`` outside directives, found by reading back from its ``{``
    for at in code_braces(code, directives):
        if code[at] == 123:  # '{'
            semicolon = last_code_semicolon(code, directives, after_brace, at)
            head = semicolon + 1 if semicolon != -1 else after_brace
            opened.append((head, at, len(found)))
            found.append(None)  # filled in at its '}', so the list keeps the opening order
        elif opened:  # '}'
            head, open_at, index = opened.pop()
            found[index] = Block(head, open_at, at)
        after_brace = at + 1
    if opened:  # braces never closed make no block
        found = [block for block in found if block is not None]
    ctx.cache["scopes.blocks"] = found
    return found


def block_opens(ctx: RuleContext) -> list[int]:
    """Where each block of ``blocks`` opens, in the same order (for bisect)."""
    opens = ctx.cache.get("scopes.block_opens")
    if opens is None:
        opens = ctx.cache["scopes.block_opens"] = [block.open for block in blocks(ctx)]
    return opens


def _is_function_head(head: bytes) -> bool:
    if b"(" not in head:
        return False  # nothing removed below can add one
    if b"/" in head or b"#" in head:
        head = _HEAD_NOISE.sub(b"", head)
    head = head.strip()
    if not head.endswith((b")", b"const", b"noexcept", b"override", b"final")) and b")" not in head:
        return False
    if _NOT_FUNCTION.search(head) or b"=" in head.split(b"(", 1)[0]:
        return False
    first = IDENTIFIER.match(head)
    return b"(" in head and not (first and first.group() in _CONTROL)


def block_opened_at(ctx: RuleContext, open_at: int) -> Block | None:
    """The block whose ``{`` is at ``open_at``."""
    by_open = ctx.cache.get("scopes.by_open")
    if by_open is None:
        by_open = ctx.cache["scopes.by_open"] = {block.open: block for block in blocks(ctx)}
    return by_open.get(open_at)


def function_at(ctx: RuleContext, offset: int) -> Block | None:
    """The outermost function body around ``offset`` (lambdas belong to their function)."""
    bodies = ctx.cache.get("scopes.functions")
    if bodies is None:  # outermost function bodies, in order: they do not overlap
        bodies = []
        found, opens = blocks(ctx), block_opens(ctx)
        data = ctx.data
        index, count = 0, len(found)
        while index < count:
            block = found[index]
            if _is_function_head(data[block.head : block.open]):
                bodies.append(block)
                # the blocks inside it follow it in the list: skipped at once
                index = bisect.bisect_right(opens, block.close, index + 1)
            else:
                index += 1
        ctx.cache["scopes.functions"] = bodies
        ctx.cache["scopes.function_opens"] = [body.open for body in bodies]
    index = bisect.bisect_left(ctx.cache["scopes.function_opens"], offset) - 1
    return bodies[index] if index >= 0 and bodies[index].contains(offset) else None


def code_matches(ctx: RuleContext, pattern: re.Pattern, start: int, end: int):
    """Matches of ``pattern`` in [start, end) that begin in code (not comments or literals)."""
    for match in pattern.finditer(ctx.data, start, end):
        if ctx.literals.covering(match.start()) is None:
            yield match


_WORD = re.compile(rb"[A-Za-z0-9_]+")  # what ``\\b`` bounds in a bytes pattern
_SEGMENT_ENDS = (b";", b"(", b")", b"{", b"}")
_SEARCHED_WORDS = 16  # words looked up one search each; past that, one index of every word
_start = operator.methodcaller("start")


def _whole_word_offsets(ctx: RuleContext, word: bytes) -> list[int]:
    """The offsets where ``word`` stands as a whole word in the file (comments and literals
    included), in order. Rules usually ask for a few names per file: the first few are found
    by one search each, which costs far less than indexing every word of the file; a file
    whose rules ask for many names (hundreds of streams) gets that index once."""
    words = ctx.cache.setdefault("scopes.words", {})
    offsets = words.get(word)
    if offsets is not None:
        return offsets
    if ctx.cache.get("scopes.words_complete"):
        return ()
    if len(words) < _SEARCHED_WORDS:
        offsets = words[word] = whole_word_starts(ctx.data, word)
        return offsets
    words.clear()
    for match in _WORD.finditer(ctx.data):
        words.setdefault(match.group(), []).append(match.start())
    ctx.cache["scopes.words_complete"] = True
    return words.get(word, ())


def whole_word_starts(data: bytes, word: bytes) -> list[int]:
    """Where the identifier ``word`` stands in ``data`` as a whole word (regex ``\\bword\\b``),
    in order: byte searches, no pattern to compile (the names asked for differ file by file)."""
    find, size, starts = data.find, len(word), []
    at = find(word) if word else -1
    while at >= 0:
        after = at + size
        if ((at == 0 or data[at - 1] not in WORD_BYTES)
                and (after == len(data) or data[after] not in WORD_BYTES)):
            starts.append(at)
            at = find(word, after)
        else:
            at = find(word, at + 1)
    return starts


def word_offsets(ctx: RuleContext, word: bytes, start: int, end: int,
                 code_only: bool = True) -> list[int]:
    """Offsets in [start, end) where ``word`` (an identifier) stands as a whole word, in code
    (or anywhere with ``code_only=False``): the starts of what
    ``code_matches(ctx, re.compile(rb"\\b" + word + rb"\\b"), start, end)`` finds, read from a
    per-file index instead of a scan of the range (rules look names up once per finding)."""
    data = ctx.data
    offsets = _whole_word_offsets(ctx, word)
    found = offsets[bisect.bisect_left(offsets, start) : bisect.bisect_right(offsets, end - len(word))]
    # a longer word cut by ``end`` matches there, as for a pattern searched up to ``end``
    cut = end - len(word)
    if (start <= cut and end < len(data) and data[end] in WORD_BYTES
            and data.startswith(word, cut) and (cut == 0 or data[cut - 1] not in WORD_BYTES)):
        found = [*found, cut]
    if not code_only:
        return list(found)
    code = ctx.code  # in code where not blanked (ctx.in_code): a word starts with no blank
    return [at for at in found if code[at] != 32]


def name_matches(pattern: re.Pattern, names: tuple[bytes, ...], data: bytes,
                 end: int | None = None):
    """What ``pattern.finditer(data, 0, end)`` finds, for a pattern that matches only where one
    of ``names`` starts: tried at their occurrences alone (found by byte searches, lazily: a
    caller that stops at the first match searches no further), skipping the ones a previous
    match covers, as finditer does. (A pattern that starts with ``\b`` and an alternation of
    names is tried at every byte.)"""
    end = len(data) if end is None else end
    find = data.find
    pending = [(at, name) for name in names if (at := find(name, 0, end)) >= 0]
    heapq.heapify(pending)
    covered, tried = 0, -1
    while pending:
        at, name = pending[0]
        following = find(name, at + 1, end)
        if following >= 0:
            heapq.heapreplace(pending, (following, name))
        else:
            heapq.heappop(pending)
        if at < covered or at == tried:  # (two names may start at one offset)
            continue
        tried = at
        match = pattern.match(data, at, end)
        if match is not None:
            yield match
            covered = match.end()


def word_matches(ctx: RuleContext, word: bytes, pattern: re.Pattern, start: int, end: int):
    """What ``code_matches(ctx, pattern, start, end)`` yields, for a pattern that can only
    match where the whole word ``word`` starts: tried at those offsets alone (from the
    per-file index), skipping the ones a previous match covers, as ``finditer`` does."""
    covered = start
    for at in word_offsets(ctx, word, start, end, code_only=False):
        if at < covered:
            continue
        match = pattern.match(ctx.data, at, end)
        if match is None:
            continue
        covered = max(match.end(), at + 1)
        if ctx.in_code(at):
            yield match


def declares(ctx: RuleContext, pattern: re.Pattern, types: tuple[bytes, ...], word: bytes,
             start: int, end: int) -> bool:
    """Does ``pattern`` match in code in [start, end) (``any(code_matches(...))``), for a
    pattern that begins with one of the whole words ``types`` and reaches the whole word
    ``word`` with no ``;(){}`` in between (a declaration of ``word``)? Only the type words
    before each occurrence of ``word`` in its statement are tried, so asking for every
    declared name costs no scan of the range per name."""
    data = ctx.data
    type_offsets = ctx.cache.get(("scopes.type_offsets", types))
    if type_offsets is None:  # in code, merged: a whole word ends before the next one starts
        type_offsets = ctx.cache[("scopes.type_offsets", types)] = sorted(
            offset for name in types for offset in word_offsets(ctx, name, 0, len(data)))
    for at in word_offsets(ctx, word, start, end, code_only=False):
        stop = last_of(data, _SEGMENT_ENDS, start, at)
        segment = stop + 1 if stop != -1 else start
        first = bisect.bisect_left(type_offsets, segment)
        for candidate in type_offsets[first : bisect.bisect_left(type_offsets, at, first)]:
            if pattern.match(data, candidate, end):
                return True
    return False


def code_text(ctx: RuleContext, start: int, end: int) -> bytes:
    """The bytes of [start, end) with comments and literals blanked to spaces."""
    return ctx.code[start:end]


def last_of(data: bytes, stops: tuple[bytes, ...], start: int, end: int) -> int:
    """The last offset in [start, end) holding one of the single bytes ``stops``; -1 if none.
    Reads back in growing windows, as far as the nearest of them: an ``rfind`` of each would
    read back to that byte's own last occurrence, however near the others are."""
    window = 256
    while end > start:
        low = max(start, end - window)
        found = max([data.rfind(stop, low, end) for stop in stops])
        if found != -1:
            return found
        end, window = low, window * 2
    return -1


# what the walk back from the end of a short text reads: an unclosed ``(`` followed by
# balanced (...) and [...] and no other bracket or ``;{}`` (the innermost open bracket: a
# call's), or the last ``;{}`` followed by those alone (no call: a launch's ``<<<(n + 255) /
# 256, 256, 0, s``). Two patterns: the first skips to each ``(``
_BALANCED = rb"(?:[^()\[\];{}]++|\([^()\[\];{}]*+\)|\[[^()\[\];{}]*+\])*+\Z"
_LAST_OPEN_CALL = re.compile(rb"\(" + _BALANCED)
_LAST_BOUNDARY = re.compile(rb"[;{}]" + _BALANCED)
_LAST_OPEN_WINDOW = 64


def enclosing_call(ctx: RuleContext, offset: int, limit: int) -> tuple[bytes, int] | None:
    """(callee name, name offset) of the innermost call whose argument list holds ``offset``,
    looking back no further than ``limit``; None outside any call. A ``;``, ``{`` or ``}``
    ends the search whatever the depth, so only the brackets after the last of them are read."""
    code = ctx.code  # literals read as blanks
    if offset <= len(code):  # most uses sit in a call's list a few bytes after its ``(``
        window = max(limit, offset - _LAST_OPEN_WINDOW)
        call = _LAST_OPEN_CALL.search(code, window, offset)
        if call is not None:
            return _callee_before(ctx.data, call.start(), limit)
        if _LAST_BOUNDARY.search(code, window, offset):
            return None
    # offsets past the end read as closing brackets, as a byte-by-byte walk reads them
    depth = max(0, offset - max(limit, len(code)))
    end = min(offset, len(code))
    boundary = last_of(code, (b";", b"{", b"}"), limit, end)
    brackets = [match.start() for match in _BRACKET.finditer(code, max(limit, boundary + 1), end)]
    for pos in reversed(brackets):
        byte = code[pos]
        if byte in b")]":
            depth += 1
        elif depth > 0:
            depth -= 1
        elif byte == 91:  # '['
            return None
        else:
            return _callee_before(ctx.data, pos, limit)
    return None


def _callee_before(data: bytes, paren: int, limit: int) -> tuple[bytes, int] | None:
    """(name, offset) of the callee whose ``(`` is at ``paren``; None for a parenthesised
    expression or a condition."""
    name_end = paren
    while name_end > limit and data[name_end - 1 : name_end] in b" \t":
        name_end -= 1
    before = data[max(limit, name_end - 128) : name_end]
    if before.endswith(b"\n"):  # ``$`` also matches before a last newline
        found = _CALLEE_NAME.search(before)
        name = found.group() if found is not None else b""
    else:  # the run of name bytes at the end, from its first letter (what the search finds)
        name = before[len(before.rstrip(_NAME_BYTES)) :].lstrip(b"0123456789:")
    if not name or name in _CONTROL or name == b"sizeof":
        return None
    return name, name_end - len(name)


def statement_start(ctx: RuleContext, offset: int, limit: int) -> int:
    """Start of the statement holding ``offset``: just after the previous ``;``, ``{`` or ``}``
    in code (at most back to ``limit``), blanks skipped."""
    data = ctx.data
    code = ctx.code
    pos = offset
    if offset > limit:
        boundary = max(code.rfind(b";", limit, offset), code.rfind(b"{", limit, offset),
                       code.rfind(b"}", limit, offset))
        pos = boundary + 1 if boundary >= 0 else limit
    while pos < offset:  # blanks and comments before the statement are not part of it
        if data[pos : pos + 1] in b" \t\r\n":
            pos += 1
        elif ctx.literals.covering(pos) == "comment":
            pos = _literal_end(ctx, pos)
        else:
            break
    return pos


def _literal_end(ctx: RuleContext, pos: int) -> int:
    index = bisect.bisect_right(ctx.literals.starts, pos) - 1
    return ctx.literals.ends[index]


def statement_end(ctx: RuleContext, offset: int, limit: int) -> int | None:
    """Offset just past the ``;`` that ends the statement holding ``offset`` (brackets balanced,
    literals skipped), or None before ``limit``."""
    code = ctx.code
    depth = 0
    for match in _STATEMENT_PUNCTUATION.finditer(code, offset, max(offset, limit)):
        byte = code[match.start()]
        if byte in b"([{":
            depth += 1
        elif byte in b")]}":
            depth -= 1
            if depth < 0:
                return None
        elif depth == 0:  # ';'
            return match.start() + 1
    return None


_LOOP_HEADS = (re.compile(rb"for\s*\("), re.compile(rb"while\s*\("))


def _loop_heads(ctx: RuleContext) -> list[re.Match]:
    """What ``code_matches(ctx, re.compile(rb"\\b(?:for|while)\\s*\\("), 0, len(ctx.data))``
    finds, by one search per keyword (led by its letters, which a search skips ahead to) and
    a test of the byte before. No match starts inside another: the two lists merge into the
    one scan's order, and one that fails the test hides none."""
    data = ctx.data
    heads = [match for pattern in _LOOP_HEADS for match in pattern.finditer(data)
             if (match.start() == 0 or data[match.start() - 1] not in WORD_BYTES)
             and ctx.in_code(match.start())]
    heads.sort(key=_start)
    return heads


@dataclass(frozen=True)
class Loop:
    """A ``for``/``while``/``do`` loop: where it starts, its header's parenthesised part, and its
    body's span (a block or a single statement)."""

    start: int
    header: tuple[int, int]
    body: tuple[int, int]
    braced: bool
    end: int  # just past the body


def loops(ctx: RuleContext) -> list[Loop]:
    """Every ``for``/``while`` loop in code (``do`` loops are left out: their condition follows
    the body)."""
    found = ctx.cache.get("scopes.loops")
    if found is not None:
        return found
    found = []
    data = ctx.data
    for match in _loop_heads(ctx):
        if ctx.in_directive(match.start()):
            continue
        open_paren = match.end() - 1
        close = close_of(ctx, open_paren)
        if close is None:
            continue
        pos = close + 1
        while pos < len(data) and data[pos : pos + 1] in b" \t\r\n":
            pos += 1
        if data[pos : pos + 1] == b";":
            continue  # the while of a do loop, or an empty loop
        if data[pos : pos + 1] == b"{":
            block = block_opened_at(ctx, pos)
            if block is None:
                continue
            found.append(Loop(match.start(), (open_paren + 1, close), (pos + 1, block.close), True,
                              block.close + 1))
        else:
            end = statement_end(ctx, pos, len(data))
            if end is None:
                continue
            found.append(Loop(match.start(), (open_paren + 1, close), (pos, end), False, end))
    ctx.cache["scopes.loops"] = found
    return found


def loop_around(ctx: RuleContext, offset: int) -> Loop | None:
    """The innermost loop whose body holds ``offset``."""
    index = ctx.cache.get("scopes.loop_index")
    if index is None:
        index = ctx.cache["scopes.loop_index"] = _loop_index(loops(ctx))
    by_start, starts, parents = index
    if parents is None:  # bodies that overlap without nesting: look at every loop
        best = None
        for loop in loops(ctx):
            if loop.body[0] <= offset < loop.body[1] and (best is None or loop.body[0] > best.body[0]):
                best = loop
        return best
    # the last body starting at or before offset, then the bodies around it, inner to outer
    position = bisect.bisect_right(starts, offset) - 1
    while position >= 0 and offset >= by_start[position].body[1]:
        position = parents[position]
    return by_start[position] if position >= 0 else None


def _loop_index(found: list[Loop]):
    """Loops sorted by where their bodies start, and for each the one whose body holds its
    body (-1: none); parents None when two bodies overlap without one holding the other."""
    by_start = sorted(found, key=lambda loop: loop.body[0])
    starts = [loop.body[0] for loop in by_start]
    parents: list[int] | None = []
    open_bodies: list[int] = []
    for position, loop in enumerate(by_start):
        if position and starts[position - 1] == loop.body[0]:
            return by_start, starts, None
        while open_bodies and by_start[open_bodies[-1]].body[1] <= loop.body[0]:
            open_bodies.pop()
        if open_bodies and by_start[open_bodies[-1]].body[1] < loop.body[1]:
            return by_start, starts, None
        parents.append(open_bodies[-1] if open_bodies else -1)
        open_bodies.append(position)
    return by_start, starts, parents
