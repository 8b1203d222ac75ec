"""Preprocessor directive lines found without a multiline ``^`` search (which tries a match at
every line start of a file)."""

from __future__ import annotations

import re


def directive_lines(pattern: re.Pattern, data: bytes):
    """(line start, match) for each match of ``pattern`` (a directive from its ``#``) with only
    blanks before it on its line: the matches of ``^[ \\t]*`` + ``pattern`` (multiline),
    found by a search that jumps from ``#`` to ``#`` instead of trying every byte. A match
    rejected here ends on its line (or just after its newline), so it hides no line start."""
    for match in pattern.finditer(data):
        line = data.rfind(b"\n", 0, match.start()) + 1
        if not data[line : match.start()].strip(b" \t"):
            yield line, match


# after a directive's '#': the conditionals (C++23's #elifdef/#elifndef too)
_HASH = re.compile(rb"[ \t]*#[ \t]*")
_CONDITIONAL = re.compile(rb"[ \t]*(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)\b")


class Conditional:
    """One ``#if`` group inside a span: the directive line of each branch as written (``#if``,
    ``#elif``..., ``#else``) with the branch's items, and the ``#endif`` line. ``conditions``
    names the group by its ``#if``/``#elif`` lines (blanks and comments aside): two groups of a
    span with the same conditions take the same branch, as nothing between them can define a
    macro (a span with another directive is refused)."""

    __slots__ = ("lines", "bodies", "endif", "conditions", "has_else")

    def __init__(self, line: bytes, condition: bytes) -> None:
        self.lines: list[bytes] = [line]
        self.bodies: list[list] = [[]]
        self.endif = b""
        self.conditions: tuple[bytes, ...] = (condition,)
        self.has_else = False

    def body(self, branch: int) -> list:
        """The items of ``branch``; the index after the last ``#elif`` is the ``#else``
        branch, empty where the group has none."""
        return self.bodies[branch] if branch < len(self.bodies) else []


def conditional_items(data: bytes, code: bytes, literals, directives, start: int,
                      end: int) -> list | str:
    """The span ``start:end`` of code (a statement) as items: ``(begin, end)`` ranges of the
    text outside directive lines and a ``Conditional`` for each ``#if`` group, its branches'
    items nested. ``code`` is the file with comments and literals blanked, ``literals`` and
    ``directives`` the file's LiteralSpans and DirectiveSpans. A string says why the span
    cannot be read so: a directive other than a conditional, or a group that opens or closes
    outside the span."""
    from bisect import bisect_left

    items: list = []
    stack: list[tuple[list, Conditional]] = []
    position = start
    index = bisect_left(directives.starts, start)
    while index < len(directives.starts) and directives.starts[index] < end:
        hash_at = directives.starts[index] - 1
        line_end = directives.ends[index]  # the newline ending the directive
        index += 1
        if literals.covering(hash_at) not in (None, "include"):
            continue  # a '#' line in a comment or a raw string
        line_start = data.rfind(b"\n", 0, hash_at) + 1
        if line_start < start or line_end >= end:
            return "a directive line inside it shares its line with code"
        kind = _CONDITIONAL.match(code, hash_at + 1)
        if kind is None:
            name = re.match(rb"[ \t]*(\w*)", data[hash_at + 1:line_end]).group(1)
            return f"a #{name.decode('ascii', 'replace')} line inside it"
        if position < line_start:
            items.append((position, line_start))
        position = line_end + 1
        line = data[line_start:line_end].rstrip(b"\r")
        condition = b" ".join(code[hash_at:line_end].split())
        word = kind.group(1)
        if word.startswith(b"if"):
            group = Conditional(line, condition)
            items.append(group)
            stack.append((items, group))
            items = group.bodies[0]
            continue
        if not stack:
            return f"an #{word.decode()} of an #if before it"
        group = stack[-1][1]
        if word == b"endif":
            group.endif = line
            items = stack.pop()[0]
            continue
        if group.has_else:
            return f"an #{word.decode()} after #else"
        group.lines.append(line)
        group.bodies.append([])
        items = group.bodies[-1]
        if word == b"else":
            group.has_else = True
        else:
            group.conditions += (condition,)
    if stack:
        return "an #if that it does not close"
    if position < end:
        items.append((position, end))
    return items


class TooManyBranches(Exception):
    """More combinations of branches than the caller allows."""


def branch_layout(items: list, limit: int) -> list:
    """The span of ``conditional_items`` written once per combination of its branches: a list
    of directive lines (bytes, as written; ``#else`` added where a group has none) and, between
    them, the text of one combination as a tuple of ranges. Groups with the same conditions
    take the same branch (they are not nested again). Raises TooManyBranches past ``limit``
    combinations."""
    layout: list = []
    count = 0

    def walk(pending: list, ranges: tuple, decided: dict) -> None:
        nonlocal count
        at = 0
        while at < len(pending) and not isinstance(pending[at], Conditional):
            at += 1
        ranges += tuple(pending[:at])
        if at == len(pending):
            count += 1
            if count > limit:
                raise TooManyBranches
            layout.append(ranges)
            return
        group, rest = pending[at], pending[at + 1:]
        if group.conditions in decided:
            walk(group.body(decided[group.conditions]) + rest, ranges, decided)
            return
        branches = len(group.conditions) + 1  # the last: #else, written or not
        for branch in range(branches):
            if branch < len(group.lines):
                layout.append(group.lines[branch])
            else:
                layout.append(_HASH.match(group.lines[0]).group() + b"else")  # as #if is
            walk(group.body(branch) + rest, ranges, {**decided, group.conditions: branch})
        layout.append(group.endif)

    walk(items, (), {})
    return layout
