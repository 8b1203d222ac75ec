"""The per-file indexes and short cuts of migrator.semantic.scopes answer as the scans they
replace (random texts of the pieces these scans care about)."""

from __future__ import annotations

import random
import re

import pytest

from conftest import rule_context
from migrator.rule import RuleContext
from migrator.semantic import scopes
from strategies import STATEMENT_PIECES, random_ranges, random_texts


def _walked_enclosing_call(ctx: RuleContext, offset: int, limit: int):
    """enclosing_call as a walk back over every byte."""
    data, code = ctx.data, ctx.code
    depth = 0
    pos = offset - 1
    while pos >= limit:
        byte = code[pos : pos + 1]
        if byte in b")]":
            depth += 1
        elif byte in b"([":
            if depth == 0:
                if byte == b"[":
                    return None
                name_end = pos
                while name_end > limit and data[name_end - 1 : name_end] in b" \t":
                    name_end -= 1
                name = re.search(rb"[A-Za-z_][A-Za-z0-9_:]*$", data[max(limit, name_end - 128) : name_end])
                if name is None or name.group() in (b"for", b"if", b"sizeof"):
                    return None
                return name.group(), name_end - len(name.group())
            depth -= 1
        elif byte in b";{}":
            return None
        pos -= 1
    return None


def test_enclosing_call_agrees_with_a_walk_over_every_byte():
    # long texts too: the short cut reads back a window of 64 bytes, the walk the rest
    texts = [*random_ranges(STATEMENT_PIECES, seed=3, count=3000),
             *random_ranges(STATEMENT_PIECES, seed=4, count=1000, length=150)]
    for data, limit, offset in texts:
        ctx = rule_context(data)
        for at in (offset, offset + 2):  # past the end too
            assert scopes.enclosing_call(ctx, at, limit) == _walked_enclosing_call(ctx, at, limit), (
                data, at, limit)


def test_loop_heads_agree_with_one_scan():
    pattern = re.compile(rb"\b(?:for|while)\s*\(")
    pieces = [b"for", b"while", b"fo", b"r", b"whil", b"e", b"x", b"_", b"9", b" ", b"\n", b"(",
              b"//", b"\n", b'"', b"/*", b"*/"]
    for data in random_texts(pieces, seed=11, count=3000, length=30):
        ctx = rule_context(data)
        expected = [m.span() for m in scopes.code_matches(ctx, pattern, 0, len(data))]
        assert [m.span() for m in scopes._loop_heads(ctx)] == expected, data


def test_last_of_finds_the_last_stop_byte():
    rng = random.Random(5)
    for _ in range(500):
        data = bytes(rng.choice(b"ab;{") for _ in range(rng.randint(0, 2000)))
        start = rng.randint(0, len(data))
        end = rng.randint(start, len(data))
        expected = max(data.rfind(b";", start, end), data.rfind(b"{", start, end))
        assert scopes.last_of(data, (b";", b"{"), start, end) == expected


def _blocks_by_every_boundary(ctx: RuleContext) -> list[scopes.Block]:
    """scopes.blocks as a visit of every ``{};`` outside directives."""
    opened, found, boundary = [], [], 0
    for match in re.finditer(rb"[{};]", ctx.code):
        at = match.start()
        if ctx.in_directive(at):
            continue
        if ctx.code[at] == 123:
            opened.append((boundary, at))
        elif ctx.code[at] == 125 and opened:
            head, open_at = opened.pop()
            found.append(scopes.Block(head, open_at, at))
        boundary = at + 1
    return sorted(found, key=lambda block: block.open)


def test_blocks_read_back_to_the_head_as_a_visit_of_every_boundary():
    pieces = [b"{", b"}", b";", b"f()", b" ", b"\n", b"#define M {;", b"#if x;", b"\\\n", b"\\",
              b"//", b"/*", b"*/", b'"', b"'", b"a;b", b"#"]
    for data in random_texts(pieces, seed=17, count=4000):
        expected = _blocks_by_every_boundary(rule_context(data))
        assert scopes.blocks(rule_context(data)) == expected, data


@pytest.mark.parametrize("text", [
    b"", b"cudaMalloc(&p, n); dim3 g; xcuFoo CUresult r;", b"__global__ void k() { threadIdx.x; }",
    b"k<<<1, 1>>>(); acudaX cudacudaY", b"CUDA_VERSION cu_ cuZ", b"dim3x dim3 __shared__",
])
def test_name_matches_finds_what_finditer_finds(text):
    from migrator.semantic.scopes import name_matches, whole_word_starts
    from rules.api.headers import _RUNTIME_USE, _RUNTIME_USE_STARTS

    for end in range(len(text) + 1):
        assert ([m.span() for m in name_matches(_RUNTIME_USE, _RUNTIME_USE_STARTS, text, end)]
                == [m.span() for m in _RUNTIME_USE.finditer(text, 0, end)])
    assert whole_word_starts(text, b"cu") == [m.start() for m in re.finditer(rb"\bcu\b", text)]
    assert whole_word_starts(text, b"dim3") == [m.start() for m in re.finditer(rb"\bdim3\b", text)]
