"""SHM002's short cuts answer as the scans they replace (random texts of the pieces those scans
care about)."""

from __future__ import annotations

import re

from conftest import rule_context
from rules.shared_memory.padded_tile import (_LANE_ALIAS, _column_access, _lane_aliases,
                                             _template_uses)
from strategies import random_ranges, random_texts

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


_LANE_PIECES = [b"int t = threadIdx.x;", b"const unsigned int x2 = (int) threadIdx.x ;",
                b"auto t=threadIdx.x;", b"int ", b"unsigned ", b"const ", b"size_t ", b"t",
                b"x2", b" = ", b"(int)", b"threadIdx.x", b"threadIdx.y", b";", b"{", b"}",
                b",", b"\n", b" ", b"my", b"_"]


def test_lane_aliases_are_the_pattern_findall():
    met = 0
    for data in random_texts(_LANE_PIECES, seed=7, count=5000):
        text = data.decode()
        wanted = _LANE_ALIAS.findall(text)
        assert _lane_aliases(text) == wanted, text
        met += bool(wanted)
    assert met > 500  # the texts hold aliases, not only misses


_ACCESS_PIECES = [b"tile[threadIdx.x][k]", b"t [lx] [0]", b"tile", b"t", b"xtile", b"tile2", b"\xc3\xa4", b"[threadIdx.x]", b"[k]", b"[",
                  b"]", b"[i]", b" ", b"\n", b"int lx = threadIdx.x;", b"[lx]", b"[lx + 1]",
                  b"// tile[threadIdx.x][k]\n", b"a[", b"][", b"1", b";", b"threadIdx.x"]


def _scanned_column_access(ctx, name: str, start: int, end: int):
    """_column_access as one scan of every name's two-subscript accesses found them."""
    text = ctx.data[start:end].decode("utf-8", "replace")
    lanes = ["threadIdx.x", *_LANE_ALIAS.findall(text)]
    lane = re.compile(r"(?:" + "|".join(re.escape(l) + (r"\b" if l[-1].isalnum() else "")
                                         for l in lanes) + r")")
    for access in re.finditer(r"\b([A-Za-z_]\w*)\s*\[([^\[\]]+)\]\s*\[([^\[\]]+)\]", text):
        at = start + len(text[: access.start()].encode())
        if (access.group(1) == name and lane.search(access.group(2))
                and not lane.search(access.group(3)) and ctx.in_code(at)):
            return ctx.source.position(at)[0]
    return None


def test_column_access_is_the_scan_of_all_accesses():
    met = 0
    for data, start, end in random_ranges(_ACCESS_PIECES, seed=9, count=4000):
        ctx = rule_context(data)
        for name in ("tile", "t"):
            wanted = _scanned_column_access(ctx, name, start, end)
            assert _column_access(rule_context(data), name, start, end) == wanted, (data, name)
            met += wanted is not None
    assert met > 300  # the texts hold column reads, not only misses
