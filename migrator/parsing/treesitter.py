"""tree-sitter-cuda front end: parse bytes into a tree with byte offsets, and run queries."""

from __future__ import annotations

import bisect
import functools

import tree_sitter
import tree_sitter_cuda


@functools.lru_cache(maxsize=1)
def language() -> tree_sitter.Language:
    return tree_sitter.Language(tree_sitter_cuda.language())


@functools.lru_cache(maxsize=1)
def _parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(language())


def parse(data: bytes, old_tree: tree_sitter.Tree | None = None) -> tree_sitter.Tree:
    """Parse ``data``; with ``old_tree`` (already told of the edits) the parse is incremental."""
    if old_tree is None:
        return _parser().parse(data)
    return _parser().parse(data, old_tree)


def edit_tree(tree: tree_sitter.Tree, before, edits) -> None:
    """Tell ``tree`` about ``edits`` (byte offsets into ``before``, a Source), last first so that
    every offset stays valid in the text it refers to."""
    starts = before.line_starts
    for edit in sorted(edits, reverse=True):
        start_point = _point(starts, edit.start)
        old_end_point = _point(starts, edit.end)
        text = edit.text
        newlines = text.count(b"\n")
        if newlines:
            new_end_point = (start_point[0] + newlines, len(text) - text.rfind(b"\n") - 1)
        else:
            new_end_point = (start_point[0], start_point[1] + len(text))
        tree.edit(start_byte=edit.start, old_end_byte=edit.end,
                  new_end_byte=edit.start + len(text), start_point=start_point,
                  old_end_point=old_end_point, new_end_point=new_end_point)


def _point(line_starts: list[int], offset: int) -> tuple[int, int]:
    row = bisect.bisect_right(line_starts, offset) - 1
    return row, offset - line_starts[row]


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
    stack = [root]
    while stack:
        node = stack.pop()
        if not node.has_error:
            continue
        if node.is_error or node.is_missing:
            count += 1
        stack.extend(node.children)
    return count

