"""SHM002's short cuts answer as the scans they replace (random texts of the pieces those scans
care about)."""

from __future__ import annotations

from conftest import rule_context
from rules.shared_memory.padded_tile import _template_uses
from strategies import random_texts

_TEMPLATE_PIECES = [b"k", b"kk", b"k\xc3\xa4", b"\xc3\xa4k", b"ns::", b"x.", b"p->", b"<", b">",
                    b"<32>", b"<16, T>", b"<N + 1>", b"(", b")", b"<<<g, b>>>", b";", b" ", b"\n",
                    b"template void ", b"template <int N> __global__ void ", b"{", b"}", b"&",
                    b"// k<3>\n", b"\"k<4>\"", b"#define K k<5>\n", b"1", b"_k", b"k_", b"=",
                    b"auto f = ", b"operator"]


def _walked_uses(ctx, name: str):
    """_template_uses as a walk of the whole tree finds them."""
    uses, stack = [], [ctx.tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "template_function":
            node_name, arguments = (node.child_by_field_name("name"),
                                    node.child_by_field_name("arguments"))
            if node_name is not None and arguments is not None and ctx.text(node_name) == name:
                uses.append((node.start_byte, ctx.text(node),
                             [ctx.text(a) for a in arguments.named_children]))
        stack.extend(node.children)
    return list({text: (text, arguments)
                 for _, text, arguments in sorted(uses, reverse=True)}.values())[::-1]


def test_template_uses_are_the_tree_walks():
    met = 0
    for data in random_texts(_TEMPLATE_PIECES, seed=5, count=3000):
        for name in ("k", "k\u00e4", "kk"):
            wanted = _walked_uses(rule_context(data), name)
            assert _template_uses(rule_context(data), name) == wanted, (data, name)
            met += bool(wanted)
    assert met > 200  # the texts hold template uses, not only misses
