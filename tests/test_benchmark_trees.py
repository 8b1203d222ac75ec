"""The speed benchmarks' replicated trees are the code they copy, with other names: a copy must
parse exactly as its original does (a keyword renamed, ``unsigned long_c1 long``, made most of
the API-dense tree fail to parse, and the benchmark then timed error recovery)."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from corpus.replicated import declared_names, generate_probe_corpus  # noqa: E402
from migrator.parsing import treesitter  # noqa: E402


def _errors(data: bytes) -> list[tuple[str, int]]:
    """The tree's ERROR and MISSING nodes, as (kind, row)."""
    found, stack = [], [treesitter.parse(data).root_node]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            found.append(("missing" if node.is_missing else "error", node.start_point[0]))
        elif node.has_error:
            stack.extend(node.children)
    return sorted(found)


def test_keywords_are_never_renamed():
    names = declared_names([b"unsigned long long total; unsigned int count; "
                            b"const char *label; unsigned char flags; long double mean;"])
    assert b"long" not in names and b"int" not in names and b"char" not in names
    assert {b"total", b"label"} <= set(names)


def test_probe_copies_parse_as_the_kernels_do(tmp_path):
    generate_probe_corpus(tmp_path, 6_000)  # kernels/ and a copy with varied names, at least
    copies = sorted(tmp_path.iterdir())
    assert len(copies) >= 2
    checked = 0
    for path in sorted(copies[-1].rglob("*")):
        original = REPO / "kernels" / path.relative_to(copies[-1])
        copy = path.read_bytes()
        assert copy != original.read_bytes()
        assert _errors(copy) == _errors(original.read_bytes()), path.name
        checked += 1
    assert checked == sum(1 for p in (REPO / "kernels").rglob("*")
                          if p.is_file() and p.name.endswith((".cu", ".cuh", ".h")))
