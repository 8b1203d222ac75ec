"""WAV002: 32-bit lane masks passed to warp-sync builtins."""

from __future__ import annotations

import re

from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Rule, RuleContext
from migrator.semantic.constants import integer_literal
from migrator.semantic.scopes import blocks

from ..markers import unproven_fix
from .common import (SYNC_MASK_BUILTINS, all_ones, builtin_names, call_arguments, literal_of,
                     marker_site, stable_symbol)

_NAMES = frozenset(name.encode() for name in SYNC_MASK_BUILTINS)
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
# a 32-bit mask constant: ``#define FULL_MASK 0xffffffff``; ``const unsigned int m = ~0u;``
_MACRO = r"^[ \t]*#[ \t]*define[ \t]+{name}[ \t]+\(?([^\s()][^\n()]*?)\)?[ \t]*$"
_DECLARATION = (r"(?:\b(?:static|const|constexpr|__device__|__constant__)\s+)*"
                r"(?P<type>\b(?:unsigned(?:\s+int)?|uint32_t))\s+(?:const\s+)?{name}\s*=\s*"
                r"(?P<value>[^;,{{}}\n]+?)\s*;")
# a parameter whose default is the mask: ``unsigned int mask = 0xffffffff)`` (HeCBench
# rowwiseMoments' WARP_SHFL_DOWN): callers' own masks still convert to the wider type
_PARAMETER = (r"(?P<type>\b(?:unsigned(?:\s+int)?|uint32_t))\s+(?:const\s+)?{name}\s*=\s*"
              r"(?P<value>[^,()\n]+?)\s*(?=[,)])")
# HIP releases whose warp-sync builtins static_assert a 64-bit mask (HIP 6.4.3's
# amd_warp_sync_functions.h): a 32-bit mask variable no longer compiles there
_REJECTS_NARROW = (6, 2, 0)
_NARROW_DECL = r"\b(?:unsigned(?:\s+int)?|uint32_t|int)\s+(?:const\s+)?{name}\b"


class MaskWidth(Rule):
    """Report 32-bit masks passed to the warp-sync builtins; widen all-ones masks.

    ## What it does
    Checks the mask argument of ``__shfl*_sync``, ``__ballot_sync``, ``__any_sync``,
    ``__all_sync``, ``__match_*_sync``, ``__reduce_*_sync`` and ``__syncwarp``. A 32-bit
    all-ones constant (``0xffffffff``, ``~0u``, ``uint32_t(-1)``, ``(unsigned)-1``) meant
    "every lane of the warp": it is replaced by the all-lanes mask of the configured wavefront
    in HIP's 64-bit mask type (``0xffffffffffffffffull`` for 64 lanes), in a ``#define`` body
    too. The same constant kept in a ``#define FULL_MASK 0xffffffff`` or in a 32-bit variable
    declared with it (``const unsigned all = 0xffffffff;``, a parameter's default ``unsigned
    mask = 0xffffffff``) is widened where it is defined (the
    type becomes ``unsigned long long``) when nothing assigns it again and every use in its
    block (the file, for a macro) is a warp-sync builtin's mask. Other literals that leave
    lanes out of a 64-lane wavefront, and other masks held in 32-bit variables, are reported
    with a ``// rocmigrate WAV002:`` marker, as errors where HIP's builtins reject them (from
    ROCm 6.2).

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
    Safe for all-ones literals and the constants holding them: the widened mask names every
    lane, as the 32-bit one did on a 32-lane warp, and nothing else reads the constant. Partial
    masks and other variables are reported, never rewritten.
    """

    code = "WAV002"
    name = "warp-mask-width"
    summary = "32-bit lane mask passed to a warp-sync builtin"
    family = "wavefront"
    fix = "sometimes"

    def check(self, ctx: RuleContext):
        lanes = ctx.settings.wavefront_size
        data = ctx.data
        done: set[int] = set()
        for name, start, end in builtin_names(ctx, _NAMES):
            builtin = name.decode()
            symbol = stable_symbol(ctx, builtin)
            spans = call_arguments(ctx, end)
            index = SYNC_MASK_BUILTINS[builtin]
            if not spans or index >= len(spans):
                continue
            begin, finish = _without_comments(ctx, *spans[index])
            text = data[begin:finish].decode("utf-8", "replace")
            literal = literal_of(text)
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
            if not _IDENTIFIER.fullmatch(text):
                continue
            widened = _widened_constant(ctx, text, begin, lanes)
            if widened is not None:
                if widened[0] not in done:  # a constant read by several calls: fixed once
                    done.add(widened[0])
                    yield Diagnostic(
                        "WAV002", f"{builtin}: mask '{text}' holds the 32-bit all-lanes mask; "
                        f"HIP masks are 64-bit ({all_ones(lanes)} names all {lanes} lanes)",
                        begin, finish, Fix(f"widen {text}", widened[1]), library="device",
                        symbol=symbol)
                continue
            if _declared_narrow(ctx, text, begin):
                message = (f"{builtin}: mask '{text}' is a 32-bit variable; HIP masks are 64-bit "
                           "(declare it unsigned long long / uint64_t)")
                yield Diagnostic("WAV002", message, begin, finish,
                                 unproven_fix(ctx, marker_site(ctx, start), "WAV002", message),
                                 library="device", symbol=symbol,
                                 severity="error" if ctx.settings.rocm >= _REJECTS_NARROW
                                 else "warning")


def _without_comments(ctx: RuleContext, begin: int, finish: int) -> tuple[int, int]:
    """The argument at [begin, finish) without the comments (and blanks) around it: the mask
    in ``__shfl_sync(0xffffffff /* all lanes */, v, 0)`` is the literal alone."""
    code = ctx.code
    while begin < finish and code[begin] in b" \t\r\n\\":
        begin += 1
    while finish > begin and code[finish - 1] in b" \t\r\n\\":
        finish -= 1
    return begin, finish


def _widened_constant(ctx: RuleContext, name: str, before: int,
                      lanes: int) -> tuple[int, tuple[Edit, ...]] | None:
    """Where ``name`` is provably the 32-bit all-lanes mask, (where it is defined, the edits
    that widen it): a ``#define NAME 0xffffffff`` or a variable declared once with it
    (``const unsigned FULL = 0xffffffff;``, ``unsigned m = ~0u;``) and never assigned again,
    whose every use in the file is a warp-sync builtin's mask (nothing else reads a value
    that changes type). None otherwise."""
    data = ctx.data
    wide = all_ones(lanes).encode()
    macro = re.compile(_MACRO.format(name=re.escape(name)).encode(), re.MULTILINE)
    for found in macro.finditer(data, 0, before):
        literal = integer_literal(found.group(1).decode("utf-8", "replace"))
        if literal == (0xFFFFFFFF, 32) and _only_masks(ctx, name, found.end()):
            return found.start(1), (Edit(found.start(1), found.end(1), wide),)
        return None
    declaration = re.compile(_DECLARATION.format(name=re.escape(name)).encode())
    parameter = re.compile(_PARAMETER.format(name=re.escape(name)).encode())
    declarations = sorted((m for pattern in (declaration, parameter)
                           for m in pattern.finditer(data, 0, before) if ctx.in_code(m.start())),
                          key=lambda m: m.start())
    if not declarations:
        return None
    found = declarations[-1]  # the nearest: its block holds the use
    if found.re is parameter:  # a default argument: the function's body is its block
        body = ctx.code.find(b"{", found.end(), before)
        scope = _block_end(ctx, body + 1) if body >= 0 else -1
    else:
        scope = _block_end(ctx, found.end())
    if scope <= before:
        return None
    literal = integer_literal(found.group("value").decode("utf-8", "replace"))
    assigned = re.compile(rb"(?<![\w.>])" + re.escape(name.encode()) + rb"\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)|"
                          rb"(?:\+\+|--)\s*" + re.escape(name.encode()) + rb"\b|\b"
                          + re.escape(name.encode()) + rb"\s*(?:\+\+|--)|&\s*" + re.escape(name.encode()) + rb"\b")
    if literal != (0xFFFFFFFF, 32) or any(
            ctx.in_code(m.start()) for m in assigned.finditer(data, found.end(), scope)):
        return None
    if not _only_masks(ctx, name, found.end(), scope):
        return None
    return found.start("type"), (Edit(found.start("type"), found.end("type"),
                                      b"unsigned long long"),
                                 Edit(found.start("value"), found.end("value"), wide))


def _block_end(ctx: RuleContext, at: int) -> int:
    """Where the innermost block holding ``at`` ends (its closing brace; the file's end at file
    scope), from the shared reading of the file's blocks."""
    holding = [block for block in blocks(ctx) if block.contains(at)]
    return max(holding, key=lambda block: block.open).close if holding else len(ctx.data)


def _only_masks(ctx: RuleContext, name: str, after: int, until: int | None = None) -> bool:
    """Is every use of ``name`` in code from ``after`` to ``until`` a warp-sync builtin's mask
    argument?"""
    masks = set()
    for builtin, _, end in builtin_names(ctx, _NAMES):
        spans = call_arguments(ctx, end)
        index = SYNC_MASK_BUILTINS[builtin.decode()]
        if spans and index < len(spans):
            begin, finish = _without_comments(ctx, *spans[index])
            masks.add(begin)
    word = re.compile(rb"\b" + re.escape(name.encode()) + rb"\b")
    uses = [m.start() for m in word.finditer(ctx.data, after, until or len(ctx.data))
            if ctx.in_code(m.start())]
    return bool(uses) and all(use in masks for use in uses)


def _declared_narrow(ctx: RuleContext, name: str, before: int) -> bool:
    """Is ``name`` declared with a 32-bit integer type earlier in the file?"""
    pattern = re.compile(_NARROW_DECL.format(name=re.escape(name)).encode())
    return any(ctx.in_code(m.start()) for m in pattern.finditer(ctx.data, 0, before))
