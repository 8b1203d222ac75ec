"""WAV005: warpSize used where a compile-time constant is required."""

from __future__ import annotations

import re

from migrator.diagnostics import Diagnostic
from migrator.rule import Rule, RuleContext

from ..markers import unproven_fix
from .common import marker_site

_WARPSIZE = re.compile(rb"\bwarpSize\b")
_CONSTANT_CONTEXTS = {
    "array_declarator": "an array bound",
    "template_argument_list": "a template argument",
    "static_assert_declaration": "a static_assert",
    "case_statement": "a case label",
    "enumerator": "an enumerator",
    "bitfield_clause": "a bit-field width",
}


class WarpSizeConstexpr(Rule):
    """Report ``warpSize`` where C++ requires a compile-time constant.

    ## What it does
    Finds ``warpSize`` in array bounds (``__shared__ float buf[warpSize]``), template arguments,
    ``static_assert``, ``case`` labels, enumerators, bit-field widths and ``constexpr``
    initialisers, each with a ``// rocmigrate WAV005:`` marker.

    ## Why is this bad on AMD
    ``warpSize`` is a run-time value in CUDA, and in HIP from ROCm 7.0 on (one binary may run on
    32- and 64-lane GPUs); HIP up to 6.x defined it ``constexpr`` (``__AMDGCN_WAVEFRONT_SIZE``).
    Code that uses it as a constant stops compiling with current ROCm, and the obvious
    replacement, a literal 32, reintroduces the 32-lane assumption.

    ## Example
    ```cpp
    __shared__ float partial[warpSize];
    ```

    ## Use instead
    ```cpp
    constexpr int kMaxWavefront = 64;  // the largest wavefront the code supports
    __shared__ float partial[kMaxWavefront];
    ```

    ## Fix safety
    No fix: the right constant (the largest supported wavefront, a template parameter, or a
    per-target macro) depends on the code.
    """

    code = "WAV005"
    name = "warpsize-not-constexpr"
    summary = "warpSize used as a compile-time constant"
    family = "wavefront"
    fix = "never"

    def check(self, ctx: RuleContext):
        data = ctx.data
        if b"warpSize" not in data:
            return
        for match in _WARPSIZE.finditer(data):
            start, end = match.span()
            if not ctx.in_code(start):
                continue
            where = constant_context(ctx, start, end)
            if where:
                when = ("in the target ROCm" if ctx.settings.rocm >= (7, 0, 0) else
                        "from ROCm 7.0 on (and in CUDA)")
                message = f"warpSize in {where}: it is not a compile-time constant {when}"
                yield Diagnostic("WAV005", message, start, end,
                                 unproven_fix(ctx, marker_site(ctx, start), "WAV005", message),
                                 library="device", symbol="warpSize")


_MACRO_CONSTANT = re.compile(rb"\[\s*warpSize\s*\]|<\s*warpSize\s*>|static_assert\s*\([^;]*warpSize")


def constant_context(ctx: RuleContext, start: int, end: int) -> str:
    """Where the name at [start, end) stands in a context C++ requires a compile-time constant
    in (an array bound, a template argument, ...: its words), or ''."""
    if ctx.in_directive(start):  # a #define body: the tree cannot see in; look lexically
        line_start = ctx.data.rfind(b"\n", 0, start) + 1
        window = ctx.data[max(line_start, start - 40) : end + 4]
        return "a constant expression inside a macro" if _MACRO_CONSTANT.search(window) else ""
    node = ctx.tree.root_node.descendant_for_byte_range(start, end)
    if node is None or node.type == "preproc_arg":
        return ""
    parent = node.parent
    while parent is not None:
        kind = parent.type
        if kind == "array_declarator" and parent.child_by_field_name("size") is not None:
            size = parent.child_by_field_name("size")
            if size.start_byte <= start < size.end_byte:
                return _CONSTANT_CONTEXTS[kind]
        elif kind in _CONSTANT_CONTEXTS and kind != "array_declarator":
            return _CONSTANT_CONTEXTS[kind]
        elif kind == "init_declarator":
            declaration = parent.parent
            if declaration is not None and b"constexpr" in ctx.data[declaration.start_byte:parent.start_byte]:
                return "a constexpr initialiser"
        if kind in ("compound_statement", "function_definition", "translation_unit",
                    "parameter_list", "argument_list"):
            break
        parent = parent.parent
    return ""
