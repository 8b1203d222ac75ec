"""tree-sitter-cuda front end: parse bytes into a tree with byte offsets, and run queries."""

from __future__ import annotations

import functools

import tree_sitter
import tree_sitter_cuda


@functools.lru_cache(maxsize=1)
def language() -> tree_sitter.Language:
    return tree_sitter.Language(tree_sitter_cuda.language())


@functools.lru_cache(maxsize=1)
def _parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(language())


def parse(data: bytes) -> tree_sitter.Tree:
    return _parser().parse(data)


@functools.lru_cache(maxsize=None)
def query(source: str) -> tree_sitter.Query:
    """A compiled query, cached by its text (rules declare queries as strings)."""
    return tree_sitter.Query(language(), source)


def captures(query_text: str, node: tree_sitter.Node) -> dict[str, list[tree_sitter.Node]]:
    return tree_sitter.QueryCursor(query(query_text)).captures(node)


def error_count(tree: tree_sitter.Tree) -> int:
    """Number of ERROR/MISSING nodes: the parse guard compares it before and after fixing."""
    root = tree.root_node
    if not root.has_error:
        return 0
    count = 0
    cursor = root.walk()
    stack = [root]
    while stack:
        node = stack.pop()
        if not node.has_error:
            continue
        if node.is_error or node.is_missing:
            count += 1
        stack.extend(node.children)
    del cursor
    return count
