"""LCH001: kernel launches as hipLaunchKernelGGL (only with --launch-syntax ggl)."""

from __future__ import annotations

import bisect
import re

from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.parsing import treesitter
from migrator.parsing.tokens import blank_spans
from migrator.rule import Marker, Rule, RuleContext
from migrator.semantic.directives import TooManyBranches, branch_layout, conditional_items

from ..markers import marker_fix

_LAUNCHES = "(call_expression (kernel_call_syntax) @config) @call"
_DEFINE = re.compile(rb"[ \t]*define[ \t]+[A-Za-z_]\w*(?:\([^)]*\))?")  # after the '#'
_CONTINUATION = re.compile(rb"\\\r?\n")
_FRAGMENT_HEAD = b"void rocmigrate_macro_body() {\n"
_FRAGMENT_TAIL = b"\n;}\n"


class LaunchKernelGGL(Rule):
    """Rewrite ``kernel<<<grid, block, shmem, stream>>>(args)`` as ``hipLaunchKernelGGL``.

    ## What it does
    Active only with ``--launch-syntax ggl``; by default launches keep the ``<<<…>>>`` syntax,
    which hipcc compiles. Emits ``hipLaunchKernelGGL(kernel, dim3(grid), dim3(block), shmem,
    stream, args…)`` with ``0`` for an omitted shared-memory size or stream, and wraps a kernel
    named with template arguments (``k<float, 4>``, ``ns::k<T, N + 1>``) in
    ``HIP_KERNEL_NAME(…)`` so the commas between them do not split the macro's arguments.

    A launch whose configuration or arguments hold preprocessor conditionals (``#if``,
    ``#ifdef``, ``#ifndef``, ``#elif``, ``#else``, ``#endif`` lines, as in HeCBench's pad) is
    written as one complete ``hipLaunchKernelGGL`` statement per combination of branches,
    between the original directive lines: each branch's text is kept in its own launch, with
    ``0`` for the shared-memory size or stream where that branch leaves them out, and an
    ``#else`` is added where a group has none. Groups with the same condition (the same
    ``#ifdef X`` in ``<<<…>>>`` and in the arguments) take the same branch, so pad's launch
    becomes one ``#ifdef``/``#else``/``#endif`` with two launches.

    ## Why is this bad on AMD
    Nothing is wrong with ``<<<…>>>`` on AMD; some teams want the macro form to build the same
    sources with a plain C++ compiler front end or to match existing HIP code style (HIP's CPU
    runtime, ``--runtime hip-cpu``, needs it). ``hipLaunchKernelGGL`` is a macro in AMD's HIP
    runtime headers (and in HIP-CPU's): directive lines left inside its arguments would be
    undefined behaviour (C++ [cpp.replace]: "sequences of preprocessing tokens within the list
    of arguments that would otherwise act as preprocessing directives"), which is why a launch
    with ``#if`` lines inside is split into whole launches rather than rewritten in place.

    ## Example
    ```cpp
    scale<float><<<blocks, 256, 0, stream>>>(d, 2.0f, n);

    Padding_kernel<<<dimGrid, dimBlock
    #ifdef DYNAMIC_PARTITION
        , l_mem_size
    #endif
        >>>(n, matrix, flags
    #ifdef DYNAMIC_PARTITION
        , worklist
    #endif
        );
    ```

    ## Use instead
    ```cpp
    hipLaunchKernelGGL(HIP_KERNEL_NAME(scale<float>), dim3(blocks), dim3(256), 0, stream, d, 2.0f, n);

    #ifdef DYNAMIC_PARTITION
    hipLaunchKernelGGL(Padding_kernel, dim3(dimGrid), dim3(dimBlock), l_mem_size, 0, n, matrix, flags, worklist);
    #else
    hipLaunchKernelGGL(Padding_kernel, dim3(dimGrid), dim3(dimBlock), 0, 0, n, matrix, flags);
    #endif
    ```

    ## Fix safety
    Safe: the macro expands to the same launch. Launches inside ``#define`` bodies are rewritten
    too (each body parsed on its own; a launch that spans a line continuation becomes one line);
    a body that does not parse as code (token pasting) is left as it is.

    A launch with ``#if`` lines inside is split per branch only where every combination of
    branches reads as one launch statement with 2 to 4 configuration values, the launch is a
    statement of its own (after ``;``, a brace, a condition's ``)``, ``else`` or ``do``; code
    before it on its line keeps that line and the directives start on the next), every ``#if``
    inside it is closed inside it, no other directive (``#define``, ``#pragma``...) lies inside
    it, and there are at most 16 combinations. Under any macro setting the preprocessor then
    keeps exactly the launch that the original's branches made, as one statement, so the split
    is correct C++ in every configuration. Any other such launch is left as ``<<<…>>>`` (which
    hipcc compiles) with a marker saying why, never skipped in silence.
    """

    code = "LCH001"
    category = "conversion"
    name = "launch-kernel-ggl"
    summary = "kernel launch written with <<<…>>>"
    family = "launch"
    fix = "sometimes"  # a launch with #if lines that cannot be split is marked

    def check(self, ctx: RuleContext):
        if ctx.settings.launch_syntax != "ggl" or b"<<" not in ctx.data:
            return  # (a launch's brackets may hold blanks: k << < g, b >> > (p), LCH002)
        converted = []
        for call in treesitter.captures(_LAUNCHES, ctx.tree.root_node).get("call", ()):
            if call.has_error or not ctx.in_code(call.start_byte):
                continue  # tree-sitter reads code after an unterminated /* that is comment
            if _directive_within(ctx, call.start_byte, call.end_byte):
                continue  # #if lines in the launch: _conditional_launches
            for found in _launch(call, ctx.text, call.start_byte):
                converted.append((found.start, found.end))
                yield found
        yield from self._in_macros(ctx)
        yield from _conditional_launches(ctx, converted)

    def _in_macros(self, ctx: RuleContext):
        """Launches in ``#define`` bodies, which tree-sitter leaves unparsed (and cuts at a
        comment): each body with a launch is parsed on its own, as a function's body, from the
        file with comments and literals blanked and line continuations read as blanks of the
        same length (so that offsets carry over); the launch is rewritten from the file's own
        text."""
        if b"define" not in ctx.data or b"<<<" not in ctx.data:
            return
        directives = ctx.directives
        for begin, end in zip(directives.starts, directives.ends):
            head = _DEFINE.match(ctx.code, begin, end)
            if head is None or b"<<<" not in ctx.code[head.end():end]:
                continue
            body = slice(head.end(), end)
            shift = head.end() - len(_FRAGMENT_HEAD)
            flat_code = _CONTINUATION.sub(_blanks, ctx.code[body])
            flat_data = _FRAGMENT_HEAD + _CONTINUATION.sub(_blanks, ctx.data[body])
            tree = treesitter.parse(_FRAGMENT_HEAD + flat_code + _FRAGMENT_TAIL)

            def text(node, flat=flat_data) -> str:
                return flat[node.start_byte:node.end_byte].decode("utf-8", "replace")

            for call in treesitter.captures(_LAUNCHES, tree.root_node).get("call", ()):
                if not call.has_error and call.start_byte >= len(_FRAGMENT_HEAD):
                    yield from _launch(call, text, call.start_byte + shift)


def _blanks(match: re.Match) -> bytes:
    return b" " * len(match.group())


def _launch(call, text, start: int):
    """The LCH001 finding of one launch (``text`` reads a node; ``start`` is where the call
    begins in the file)."""
    replacement = _replacement(call, text)
    if replacement is None:
        return
    end = start + call.end_byte - call.start_byte
    name = text(call.child_by_field_name("function"))
    yield Diagnostic("LCH001", f"launch of {name} -> hipLaunchKernelGGL", start, end,
                     Fix("use hipLaunchKernelGGL", (Edit(start, end, replacement.encode()),)),
                     library="runtime", symbol="<<<>>>", severity="info")


def _replacement(call, text) -> str | None:
    """The ``hipLaunchKernelGGL(...)`` call of one launch (``text`` reads a node); None where
    it has no kernel, configuration or arguments, or other than 2 to 4 configuration values."""
    function = call.child_by_field_name("function")
    config = next((c for c in call.children if c.type == "kernel_call_syntax"), None)
    arguments = call.child_by_field_name("arguments")
    if function is None or config is None or arguments is None:
        return None
    params = [text(c) for c in config.named_children if c.type != "comment"]
    if not 2 <= len(params) <= 4:
        return None
    grid, block = params[0], params[1]
    shmem = params[2] if len(params) > 2 else "0"
    stream = params[3] if len(params) > 3 else "0"
    name = text(function)
    if _has_template_arguments(function):
        name = f"HIP_KERNEL_NAME({name})"
    args = [text(a) for a in arguments.named_children if a.type != "comment"]
    launch = ", ".join([name, _dim3(grid), _dim3(block), shmem, stream, *args])
    return f"hipLaunchKernelGGL({launch})"


def _has_template_arguments(function) -> bool:
    """Whether the kernel expression names template arguments outside parentheses.

    ``k<T, 4>`` and ``ns::k<T, 4>`` do: their commas would split the macro's argument.
    ``(k<T, 4>)`` is already one argument.
    """
    if function.type == "parenthesized_expression":
        return False
    pending = [function]
    while pending:
        node = pending.pop()
        if node.type == "template_argument_list":
            return True
        pending.extend(node.named_children)
    return False


def _dim3(expression: str) -> str:
    return expression if expression.startswith(("dim3(", "dim3{")) else f"dim3({expression})"


# --- launches with #if lines inside ----------------------------------------------------------

_OPENING = re.compile(rb"<<<")
_CONFIGURATION_SCAN = re.compile(rb">>>|[()\[\]{};]")
_ARGUMENT_SCAN = re.compile(rb"[()\[\]{};]")
_OPENER = {b")": b"(", b"]": b"[", b"}": b"{"}
_BLANKS = b" \t\r\n\f\v"
_IDENTIFIER_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_BRANCH_LIMIT = 16  # launches written for one site, at most
_ANGLE_LIMIT = 4096  # bytes read back through a kernel's template arguments
_FRAGMENT_END = b"\n}\n"
_INDENT = re.compile(rb"[ \t]*")


def _directive_within(ctx: RuleContext, start: int, end: int) -> bool:
    """Does a directive line begin inside ``start:end``?"""
    starts = ctx.directives.starts
    index = bisect.bisect_left(starts, start)
    return index < len(starts) and starts[index] < end


def _conditional_launches(ctx: RuleContext, converted: list[tuple[int, int]]):
    """Launches whose configuration or arguments hold ``#if`` lines (HeCBench's pad:
    ``k<<<grid, block\\n#ifdef D\\n, shmem\\n#endif\\n>>>(...)``), which tree-sitter cannot
    read: read lexically from the code with directive lines blanked, then written as one
    complete ``hipLaunchKernelGGL`` statement per combination of branches, between the
    directive lines (a directive inside a macro's arguments is undefined behaviour). A site
    that cannot be written so is marked."""
    if not ctx.directives.starts:
        return
    flat = None
    converted.sort()
    for opening in _OPENING.finditer(ctx.code):
        at = opening.start()
        index = bisect.bisect_right(converted, (at, len(ctx.data))) - 1
        if index >= 0 and converted[index][0] <= at < converted[index][1]:
            continue
        if ctx.in_directive(at):
            continue  # a #define body: _in_macros
        if flat is None:
            flat = _without_directives(ctx)
        yield from _conditional_launch(ctx, flat, at)


def _without_directives(ctx: RuleContext) -> bytes:
    """``ctx.code`` with every directive line blanked (same offsets)."""
    directives = ctx.directives
    spans = [(start - 1, end) for start, end in zip(directives.starts, directives.ends)]
    return blank_spans(ctx.code, spans)


def _conditional_launch(ctx: RuleContext, flat: bytes, at: int):
    """The finding of the launch whose ``<<<`` is at ``at`` where directive lines lie inside
    it: its conversion, or a marker saying why it is left alone (nothing where none do)."""
    start = _kernel_start(flat, at)
    end, problem = _launch_end(flat, at + 3)
    if not _directive_within(ctx, at if start is None else start, end):
        return  # no #if inside: tree-sitter's reading stands
    if start is None:
        problem = problem or "no kernel name before <<<"
        start = at
    name = b" ".join(ctx.data[start:at].split()).decode("utf-8", "replace") or "a kernel"
    if problem is None and not _statement_starts(flat, start):
        problem = "the launch is not a statement of its own"
    if problem is None:
        items = conditional_items(ctx.data, ctx.code, ctx.literals, ctx.directives, start, end)
        if isinstance(items, str):
            problem = items
        else:
            try:
                layout = branch_layout(items, _BRANCH_LIMIT)
            except TooManyBranches:
                problem = f"more than {_BRANCH_LIMIT} combinations of its #if branches"
            else:
                written = _written(ctx, layout)
                if isinstance(written, str):
                    problem = written
    if problem is not None:
        text = (f"launch of {name} with #if lines inside left as <<<...>>>: {problem}; write "
                "one complete launch per branch (`rocmigrate rule LCH001`)")
        yield Diagnostic("LCH001", text, start, end,
                         marker_fix(ctx, start, Marker("LCH001", text)),
                         library="runtime", symbol="<<<>>>")
        return
    # the directive lines stand alone: code before the launch on its line keeps the line, code
    # after it moves to a line of its own
    data, newline = ctx.data, ctx.source.newline
    line_start = data.rfind(b"\n", 0, start) + 1
    indent = _INDENT.match(data, line_start).group()
    edit_start = line_start + len(data[line_start:start].rstrip())
    lines = [entry if directive else indent + entry + b";"
             for entry, directive in zip(written, (isinstance(e, bytes) for e in layout))]
    replacement = (newline if edit_start > line_start else b"") + newline.join(lines)
    line_end = data.find(b"\n", end)
    rest = data[end:len(data) if line_end == -1 else line_end]
    edit_end = end
    if rest.strip():
        edit_end += len(rest) - len(rest.lstrip(b" \t"))
        replacement += newline + indent
    yield Diagnostic("LCH001", f"launch of {name} -> hipLaunchKernelGGL, one per #if branch",
                     start, end,
                     Fix("use hipLaunchKernelGGL, a complete launch per #if branch",
                         (Edit(edit_start, edit_end, replacement),)),
                     library="runtime", symbol="<<<>>>", severity="info")


def _written(ctx: RuleContext, layout: list) -> list | str:
    """``layout`` with each combination's text (ranges) replaced by its hipLaunchKernelGGL
    call, or why one of them does not read as one launch statement."""
    written = []
    for entry in layout:
        if isinstance(entry, bytes):
            written.append(entry)
            continue
        code = b"".join(ctx.code[begin:end] for begin, end in entry)
        flat_data = _FRAGMENT_HEAD + b"".join(ctx.data[begin:end] for begin, end in entry)
        tree = treesitter.parse(_FRAGMENT_HEAD + code + _FRAGMENT_END)
        calls = treesitter.captures(_LAUNCHES, tree.root_node).get("call", ())
        body = tree.root_node.named_children[0].child_by_field_name("body") \
            if tree.root_node.named_child_count == 1 else None
        statements = [] if body is None else [c for c in body.named_children
                                              if c.type != "comment"]
        if tree.root_node.has_error or len(calls) != 1 or len(statements) != 1 \
                or statements[0].type != "expression_statement" \
                or calls[0].parent != statements[0]:
            return "a combination of its branches does not read as one launch statement"

        def text(node, flat=flat_data) -> str:
            return flat[node.start_byte:node.end_byte].decode("utf-8", "replace")

        replacement = _replacement(calls[0], text)
        if replacement is None:
            return "a combination of its branches gives other than 2 to 4 values in <<<...>>>"
        written.append(replacement.encode())
    return written


def _kernel_start(flat: bytes, at: int) -> int | None:
    """Where the kernel named before the ``<<<`` at ``at`` begins: a name, maybe qualified
    (``ns::k``, ``::k``) and with template arguments (``k<T, 4>``); None where none is."""
    position = at
    start = None
    while True:
        position = _blank_before(flat, position)
        if position and flat[position - 1] == 0x3E:  # '>': template arguments
            opening = _angle_opening(flat, position - 1)
            if opening is None:
                return start
            position = _blank_before(flat, opening)
        name = position
        while name and flat[name - 1] in _IDENTIFIER_BYTES:
            name -= 1
        if name == position or flat[name] in b"0123456789":
            return start
        start = name
        before = _blank_before(flat, name)
        if flat[before - 2:before] != b"::" or before < 2:
            return start
        start = position = before - 2  # '::k' until a name before it says otherwise


def _angle_opening(flat: bytes, closing: int) -> int | None:
    """The '<' that the '>' at ``closing`` closes (read backwards, brackets counted)."""
    depth = 0
    for index in range(closing, max(-1, closing - _ANGLE_LIMIT), -1):
        byte = flat[index]
        if byte in b">)]":
            depth += 1
        elif byte in b"<([":
            depth -= 1
            if depth == 0:
                return index if byte == 0x3C else None
        elif byte in b";{}":
            return None
    return None


def _blank_before(flat: bytes, position: int) -> int:
    while position and flat[position - 1] in _BLANKS:
        position -= 1
    return position


def _blank_after(flat: bytes, position: int) -> int:
    while position < len(flat) and flat[position] in _BLANKS:
        position += 1
    return position


def _launch_end(flat: bytes, position: int) -> tuple[int, str | None]:
    """Where the launch whose configuration starts at ``position`` ends (after its ';'), or
    where the scan stopped and why: within one statement."""
    depth = 0
    for match in _CONFIGURATION_SCAN.finditer(flat, position):
        token = match.group()
        if token in (b"(", b"[", b"{"):
            depth += 1
        elif token in (b")", b"]", b"}"):
            depth -= 1
            if depth < 0:
                return match.start(), "no >>> after <<<"
        elif token == b";" and not depth:
            return match.start(), "no >>> after <<<"
        elif token == b">>>" and not depth:
            break
    else:
        return len(flat), "no >>> after <<<"
    opening = _blank_after(flat, match.end())
    if flat[opening:opening + 1] != b"(":
        return opening, "no argument list after >>>"
    stack = []
    for match in _ARGUMENT_SCAN.finditer(flat, opening):
        token = match.group()
        if token in b"([{":
            stack.append(token)
        elif token == b";":
            if b"{" not in stack:
                return match.start(), "no ) closing its arguments"
        elif not stack or stack.pop() != _OPENER[token]:
            return match.start(), "no ) closing its arguments"
        elif not stack:
            semicolon = _blank_after(flat, match.end())
            if flat[semicolon:semicolon + 1] != b";":
                return semicolon, "the launch is not a statement of its own"
            return semicolon + 1, None
    return len(flat), "no ) closing its arguments"


def _statement_starts(flat: bytes, start: int) -> bool:
    """Does a statement begin at ``start`` (after ';', a brace, a condition's ')', else, do,
    or at the start of the file)?"""
    before = _blank_before(flat, start)
    if not before or flat[before - 1] in b";{})":
        return True
    word = before
    while word and flat[word - 1] in _IDENTIFIER_BYTES:
        word -= 1
    return flat[word:before] in (b"else", b"do")
