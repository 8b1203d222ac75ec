"""WAV002: 32-bit lane masks passed to warp-sync builtins."""

from __future__ import annotations

import re

from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Rule, RuleContext
from migrator.semantic.constants import integer_literal

from ..markers import unproven_fix
from .common import (SYNC_MASK_BUILTINS, all_ones, builtin_names, call_arguments, marker_site,
                     stable_symbol)

_NAMES = frozenset(name.encode() for name in SYNC_MASK_BUILTINS)
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_NARROW_DECL = r"\b(?:unsigned(?:\s+int)?|uint32_t|int)\s+(?:const\s+)?{name}\b"


class MaskWidth(Rule):
    """Report 32-bit masks passed to the warp-sync builtins; widen all-ones masks.

    ## What it does
    Checks the mask argument of ``__shfl*_sync``, ``__ballot_sync``, ``__any_sync``,
    ``__all_sync``, ``__match_*_sync``, ``__reduce_*_sync`` and ``__syncwarp``. A 32-bit
    all-ones constant (``0xffffffff``, ``~0u``, ``uint32_t(-1)``, ``(unsigned)-1``) meant
    "every lane of the warp": it is replaced by the all-lanes mask of the configured wavefront
    in HIP's 64-bit mask type (``0xffffffffffffffffull`` for 64 lanes), in a ``#define`` body
    too. Other literals that leave lanes out of a 64-lane
    wavefront, and masks held in 32-bit variables, are reported with a
    ``// rocmigrate WAV002:`` marker.

    ## Why is this bad on AMD
    HIP's sync builtins take a 64-bit mask: AMD Instinct wavefronts have 64 lanes (AMD's HIP
    programming guide, on the hardware implementation). A 32-bit mask names lanes 0-31 only,
    so lanes 32-63 are left out of the exchange; recent ROCm releases reject 32-bit masks at
    compile time.

    ## Example
    ```cpp
    v += __shfl_down_sync(0xffffffff, v, offset);
    ```

    ## Use instead
    ```cpp
    v += __shfl_down_sync(0xffffffffffffffffull, v, offset);
    ```

    ## Fix safety
    Safe for all-ones literals: the widened mask names every lane, as the 32-bit one did on a
    32-lane warp. Partial masks and variables are reported, never rewritten.
    """

    code = "WAV002"
    name = "warp-mask-width"
    summary = "32-bit lane mask passed to a warp-sync builtin"
    family = "wavefront"
    fix = "sometimes"

    def check(self, ctx: RuleContext):
        lanes = ctx.settings.wavefront_size
        data = ctx.data
        for name, start, end in builtin_names(ctx, _NAMES):
            builtin = name.decode()
            symbol = stable_symbol(ctx, builtin)
            spans = call_arguments(ctx, end)
            index = SYNC_MASK_BUILTINS[builtin]
            if not spans or index >= len(spans):
                continue
            begin, finish = _without_comments(ctx, *spans[index])
            text = data[begin:finish].decode("utf-8", "replace")
            literal = integer_literal(text)
            if literal is not None:
                value, bits = literal
                full = (1 << lanes) - 1
                if value == 0xFFFFFFFF and bits == 32:
                    # one constant for another: the same tokens' worth of text, in a macro body
                    # too (HeCBench attention-paged: __shfl_xor_sync(uint32_t(-1), ...) in a
                    # #define), where HIP 6.4's static_assert rejects the 32-bit one at each use
                    fixed = all_ones(lanes)
                    yield Diagnostic(
                        "WAV002", f"{builtin}: 32-bit mask {text} names lanes 0-31 only; HIP masks "
                        f"are 64-bit ({fixed} names all {lanes} lanes)", begin, finish,
                        Fix(f"use {fixed}", (Edit(begin, finish, fixed.encode()),),
                            keeps_syntax=True),
                        library="device", symbol=symbol)
                elif value & full != full and bits == 32 and lanes == 64:
                    message = (f"{builtin}: mask {text} is 32-bit and leaves lanes 32-63 of a "
                               "64-lane wavefront out; write the 64-bit mask this code needs")
                    yield Diagnostic("WAV002", message, begin, finish,
                                     unproven_fix(ctx, marker_site(ctx, start), "WAV002", message),
                                     library="device", symbol=symbol)
                continue
            if _IDENTIFIER.fullmatch(text) and _declared_narrow(ctx, text, begin):
                message = (f"{builtin}: mask '{text}' is a 32-bit variable; HIP masks are 64-bit "
                           "(declare it unsigned long long / uint64_t)")
                yield Diagnostic("WAV002", message, begin, finish,
                                 unproven_fix(ctx, marker_site(ctx, start), "WAV002", message),
                                 library="device", symbol=symbol)


def _without_comments(ctx: RuleContext, begin: int, finish: int) -> tuple[int, int]:
    """The argument at [begin, finish) without the comments (and blanks) around it: the mask
    in ``__shfl_sync(0xffffffff /* all lanes */, v, 0)`` is the literal alone."""
    code = ctx.code
    while begin < finish and code[begin] in b" \t\r\n\\":
        begin += 1
    while finish > begin and code[finish - 1] in b" \t\r\n\\":
        finish -= 1
    return begin, finish


def _declared_narrow(ctx: RuleContext, name: str, before: int) -> bool:
    """Is ``name`` declared with a 32-bit integer type earlier in the file?"""
    pattern = re.compile(_NARROW_DECL.format(name=re.escape(name)).encode())
    return any(ctx.in_code(m.start()) for m in pattern.finditer(ctx.data, 0, before))
