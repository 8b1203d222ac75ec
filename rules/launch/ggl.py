"""LCH001: kernel launches as hipLaunchKernelGGL (only with --launch-syntax ggl)."""

from __future__ import annotations

import re

from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.parsing import treesitter
from migrator.rule import Rule, RuleContext

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

    ## Why is this bad on AMD
    Nothing is wrong with ``<<<…>>>`` on AMD; some teams want the macro form to build the same
    sources with a plain C++ compiler front end or to match existing HIP code style.

    ## Example
    ```cpp
    scale<float><<<blocks, 256, 0, stream>>>(d, 2.0f, n);
    ```

    ## Use instead
    ```cpp
    hipLaunchKernelGGL(HIP_KERNEL_NAME(scale<float>), dim3(blocks), dim3(256), 0, stream, d, 2.0f, n);
    ```

    ## Fix safety
    Safe: the macro expands to the same launch. Launches inside ``#define`` bodies are rewritten
    too (each body parsed on its own; a launch that spans a line continuation becomes one line);
    a body that does not parse as code (token pasting) is left as it is.
    """

    code = "LCH001"
    category = "conversion"
    name = "launch-kernel-ggl"
    summary = "kernel launch written with <<<…>>>"
    family = "launch"
    fix = "always"

    def check(self, ctx: RuleContext):
        if ctx.settings.launch_syntax != "ggl" or b"<<" not in ctx.data:
            return  # (a launch's brackets may hold blanks: k << < g, b >> > (p), LCH002)
        for call in treesitter.captures(_LAUNCHES, ctx.tree.root_node).get("call", ()):
            if call.has_error or not ctx.in_code(call.start_byte):
                continue  # tree-sitter reads code after an unterminated /* that is comment
            yield from _launch(call, ctx.text, call.start_byte)
        yield from self._in_macros(ctx)

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
    function = call.child_by_field_name("function")
    config = next((c for c in call.children if c.type == "kernel_call_syntax"), None)
    arguments = call.child_by_field_name("arguments")
    if function is None or config is None or arguments is None:
        return
    params = [text(c) for c in config.named_children if c.type != "comment"]
    if not 2 <= len(params) <= 4:
        return
    grid, block = params[0], params[1]
    shmem = params[2] if len(params) > 2 else "0"
    stream = params[3] if len(params) > 3 else "0"
    name = text(function)
    if _has_template_arguments(function):
        name = f"HIP_KERNEL_NAME({name})"
    args = [text(a) for a in arguments.named_children if a.type != "comment"]
    launch = ", ".join([name, _dim3(grid), _dim3(block), shmem, stream, *args])
    replacement = f"hipLaunchKernelGGL({launch})"
    end = start + call.end_byte - call.start_byte
    yield Diagnostic("LCH001", f"launch of {text(function)} -> hipLaunchKernelGGL", start, end,
                     Fix("use hipLaunchKernelGGL", (Edit(start, end, replacement.encode()),)),
                     library="runtime", symbol="<<<>>>", severity="info")


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
