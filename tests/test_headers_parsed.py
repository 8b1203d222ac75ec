"""HDR003's 'does the parser read this offset' test (rules/api/headers._parsed) answers as a walk
up from the offset's node through its ancestors, on texts with and without syntax errors."""

from __future__ import annotations

from conftest import rule_context
from rules.api import headers
from strategies import random_texts

PIECES = [b"{", b"}", b"(", b")", b";", b" ", b"\n", b"int x", b"cudaMalloc(&p, 4)", b"if (a)",
          b"void f() ", b"#define M 1\n", b"@", b"struct S ", b",", b"=", b"return"]


def _walk_up(ctx, offset: int) -> bool:
    node = ctx.tree.root_node.descendant_for_byte_range(offset, offset + 1)
    while node is not None:
        if node.type == "ERROR" or node.is_missing:
            return False
        node = node.parent
    return True


def test_parsed_agrees_with_the_walk_up_the_tree():
    checked = errors = 0
    for data in random_texts(PIECES, seed=11, count=600, length=30):
        ctx = rule_context(data)
        errors += ctx.tree.root_node.has_error
        for offset in range(len(data)):
            assert headers._parsed(ctx, offset) == _walk_up(ctx, offset), (data, offset)
            checked += 1
    assert checked > 10_000 and errors > 100  # both kinds of text were seen
