"""Helpers for rules that rewrite calls: find the call around a name and its arguments."""

from __future__ import annotations

import re
from dataclasses import dataclass

from migrator.rule import RuleContext


@dataclass
class Call:
    """A call ``name(args)`` found in the tree (never inside a macro body)."""

    node: object
    name_node: object
    arguments: list  # argument nodes, comments excluded
    args_node: object


def find_name(ctx: RuleContext, names: set[bytes] | dict):
    """Yield (name, start, end) for each occurrence of one of ``names`` as code (not in comments,
    literals or member access)."""
    if not names:
        return
    pattern = _pattern(tuple(sorted(names)))
    data = ctx.data
    for match in pattern.finditer(data):
        start = match.start()
        if ctx.literals.covering(start) is not None:
            continue
        before = data[max(0, start - 64) : start].rstrip()[-2:]
        if before.endswith(b".") or before.endswith(b"->"):
            continue
        yield match.group(), start, match.end()


_PATTERNS: dict[tuple, re.Pattern] = {}


def _pattern(names: tuple[bytes, ...]) -> re.Pattern:
    pattern = _PATTERNS.get(names)
    if pattern is None:
        pattern = re.compile(rb"\b(?:" + b"|".join(re.escape(n) for n in names) + rb")\b")
        _PATTERNS[names] = pattern
    return pattern


def call_at(ctx: RuleContext, start: int, end: int) -> Call | str | None:
    """The call whose callee is the identifier at [start, end); ``"macro"`` when the name is
    inside a ``#define`` body (the tree cannot see there); None when it is not a call."""
    node = ctx.tree.root_node.descendant_for_byte_range(start, end)
    if node is None:
        return None
    if node.type == "preproc_arg":
        return "macro"
    if node.type != "identifier":
        return None
    parent = node.parent
    if parent is not None and parent.type == "template_function":
        parent = parent.parent
        callee = node.parent
    else:
        callee = node
    if parent is None or parent.type != "call_expression":
        return None
    if parent.child_by_field_name("function") != callee:
        return None
    args = parent.child_by_field_name("arguments")
    if args is None or args.type != "argument_list":
        return None
    arguments = [c for c in args.named_children if c.type != "comment"]
    return Call(parent, node, arguments, args)


def macro_arguments(data: bytes, name_end: int) -> list[tuple[int, int]] | None:
    """Argument spans of a call written inside a ``#define`` body (where the tree cannot see),
    found lexically: the parenthesised list after ``name_end``, split at top-level commas,
    spans trimmed. None when no complete argument list follows."""
    pos = name_end
    while pos < len(data) and data[pos : pos + 1] in b" \t":
        pos += 1
    if data[pos : pos + 1] != b"(":
        return None
    depth = 0
    spans = []
    start = pos + 1
    index = pos
    while index < len(data):
        byte = data[index : index + 1]
        if byte in b"([{":
            depth += 1
        elif byte in b")]}":
            depth -= 1
            if depth == 0:
                spans.append((start, index))
                break
        elif byte == b"," and depth == 1:
            spans.append((start, index))
            start = index + 1
        elif byte == b"\n" and data[index - 1 : index] != b"\\" and data[index - 2 : index] != b"\\\r":
            return None  # the directive ended before the list closed
        index += 1
    else:
        return None
    trimmed = []
    for begin, end in spans:
        text = data[begin:end]
        left = len(text) - len(text.lstrip(b" \t\\\r\n"))
        right = len(text.rstrip(b" \t\\\r\n"))
        trimmed.append((begin + left, begin + max(left, right)))
    return [span for span in trimmed if span[1] > span[0]]
