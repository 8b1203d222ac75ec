"""WAV001: code that hard-codes the 32-lane warp in lane arithmetic, constants and reductions."""

from __future__ import annotations

import bisect
import re

from migrator.diagnostics import Applicability, Diagnostic, Edit, Fix
from migrator.rule import Rule, RuleContext
from migrator.semantic.calls import WORD_BYTES
from migrator.semantic.constants import integer_literal
from migrator.semantic.scopes import blocks

# only the literals that can mean a warp: % / 32|64, & 31|63, >> 5|6 (cheap to scan for)
OPERATORS = (b"%", b"/", b"&", b">>")
OPERAND = rb"\s*(32|64|31|63|0[xX][13][fF]|[56])[uU]?\b"
# one pattern per operator: each starts with a literal, which the regex engine jumps to; one
# pattern for all four would test every byte against the set of their first bytes
_OPERATIONS = tuple(re.compile(b"(" + re.escape(written) + b")" + OPERAND)
                    for written in OPERATORS)
_LANE_OPERAND = re.compile(r"threadIdx|lane|tid\b|tid_|thread_?id|\btid", re.IGNORECASE)
_CONSTANT = re.compile(
    rb"(?:#[ \t]*define[ \t]+(\w*(?i:warp)\w*)[ \t]+\(?(\d+)\)?[ \t]*(?:$|//|/\*)"
    rb"|\b(\w*(?i:warp)\w*)\s*=\s*(\d+)\s*[;,}])", re.MULTILINE)
_REDUCTION = re.compile(
    rb"for\s*\(\s*(?:(?:unsigned|int|auto|uint32_t|const)\s+)*(\w+)\s*=\s*(\d+)\s*;\s*\1\s*(?:>|>=|!=)"
    rb"\s*0\s*;[^)]*\)")
_DEVICE_QUALIFIER = re.compile(rb"__global__|__device__")


def _assumed_lanes(operator: bytes, value: int) -> int | None:
    lanes = {b"%": value, b"/": value, b"&": value + 1, b">>": 1 << value if value < 16 else 0}
    found = lanes[operator]
    return found if found in (32, 64) else None


class LaneMath(Rule):
    """Report literal warp sizes in lane arithmetic, warp-size constants and fixed reductions.

    ## What it does
    Finds code that hard-codes the lane count of a warp where it differs from the configured
    wavefront size (64 by default, 32 for RDNA): lane arithmetic on thread indices
    (``threadIdx.x % 32``, ``tid & 31``, ``lane / 32``, ``tid >> 5``), constants such as
    ``#define WARP_SIZE 32``, and shuffle reductions whose loop starts at offset 16
    (``for (int offset = 16; offset > 0; offset /= 2)``). Each is reported; an unsafe fix
    rewrites the literal in terms of ``warpSize`` inside ``__device__``/``__global__`` code.

    ## Why is this bad on AMD
    AMD Instinct (CDNA) GPUs run 64-lane wavefronts. ``threadIdx.x % 32`` is no longer the lane,
    ``/ 32`` no longer the warp index, and a reduction that starts at offset 16 combines lanes
    within halves of the wavefront only: lanes 32-63 never reach lane 0. The code runs and gives
    wrong answers.

    ## Example
    ```cpp
    int lane = threadIdx.x % 32;
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down(v, offset);
    ```

    ## Use instead
    ```cpp
    int lane = threadIdx.x % warpSize;
    for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_down(v, offset);
    ```

    ## Fix safety
    Unsafe: the rest of the kernel (shared arrays sized per warp, block sizes, host code) may
    rely on the same 32, and ``warpSize`` is not a compile-time constant on HIP. Review each
    site; constants and code inside macros are reported only.
    """

    code = "WAV001"
    name = "warp-size-literal"
    summary = "lane arithmetic or reduction hard-codes a 32-lane warp"
    family = "wavefront"
    fix = "sometimes"

    def check(self, ctx: RuleContext):
        data = ctx.data
        lanes = ctx.settings.wavefront_size
        yield from self._lane_operations(ctx, lanes)
        for match in _constants(data):
            if not ctx.in_code(match.start()):
                continue
            name = (match.group(1) or match.group(3)).decode()
            value = int(match.group(2) or match.group(4))
            if value in (32, 64) and value != lanes:
                at = match.start(2) if match.group(2) else match.start(4)
                yield Diagnostic("WAV001", f"{name} = {value} hard-codes the warp size; the "
                                 f"wavefront has {lanes} lanes (use warpSize in device code, "
                                 "or a constant per target)", at, at + len(str(value)),
                                 library="device", symbol=name)
        for match in _REDUCTION.finditer(data):
            start_value = int(match.group(2))
            if start_value * 2 not in (32, 64) or start_value * 2 == lanes:
                continue
            if not ctx.in_code(match.start()) or b"__shfl" not in data[match.end() : match.end() + 400]:
                continue
            at, end = match.span(2)
            fix = None
            if _in_device_code(ctx, at):
                fix = Fix("start at warpSize / 2", (Edit(at, end, b"warpSize / 2"),),
                          Applicability.UNSAFE)
            yield Diagnostic("WAV001", f"shuffle reduction starts at offset {start_value}: it "
                             f"assumes {start_value * 2} lanes and never combines lanes "
                             f"{start_value * 2}-{lanes - 1} of a {lanes}-lane wavefront",
                             at, end, fix, library="device", symbol="reduction")

    def _lane_operations(self, ctx: RuleContext, lanes: int):
        data = ctx.data
        if b"threadIdx" not in data and b"lane" not in data and b"tid" not in data:
            return
        for match in operations(data):
            literal = integer_literal(match.group(2).decode())
            if literal is None:
                continue
            assumed = _assumed_lanes(match.group(1), literal[0])
            if assumed is None or assumed == lanes or not ctx.in_code(match.start()):
                continue
            if match.group(1) == b"/" and data[match.start() + 1 : match.start() + 2] in (b"/", b"*"):
                continue
            left_start = _left_operand_start(ctx.code, match.start())
            if not _LANE_OPERAND.search(data[left_start : match.start()].decode("utf-8", "replace")):
                continue  # the left operand is no thread or lane index: not lane math
            operator = match.group(1).decode()
            expression = data[left_start : match.end()].decode("utf-8", "replace")
            if ctx.in_directive(match.start()):
                yield Diagnostic("WAV001", f"lane arithmetic '{expression}' inside a macro "
                                 f"assumes {assumed}-lane warps (not fixed inside macros)",
                                 left_start, match.end(), library="device", symbol=operator)
                continue
            at, end = match.span(2)
            if data[end : end + 1] in (b"u", b"U"):
                end += 1
            replacement = _WARPSIZE_FORMS[operator]
            fix = None
            if _in_device_code(ctx, match.start()):
                fix = Fix(f"use {replacement}", (Edit(at, end, replacement.encode()),),
                          Applicability.UNSAFE)
            yield Diagnostic("WAV001", f"'{expression}' assumes {assumed}-lane warps; AMD "
                             f"wavefronts have {lanes} lanes", left_start, match.end(), fix,
                             library="device", symbol=operator)


# what the literal becomes with --unsafe-fixes (the operator and its precedence stay)
_WARPSIZE_FORMS = {"%": "warpSize", "/": "warpSize", "&": "(warpSize - 1)",
                   ">>": "__builtin_ctz(warpSize)"}


def operations(data: bytes) -> list[re.Match]:
    """The matches of ``(%|/|&|>>)`` + OPERAND in ``data``, in order: each operator's pattern
    searched alone, the matches merged by their start. No match holds another's operator
    (blanks and the literal follow its own), so none hides another."""
    found = [match for pattern in _OPERATIONS for match in pattern.finditer(data)]
    found.sort(key=re.Match.start)
    return found


def _left_operand_start(code: bytes, operator_start: int) -> int:
    """Start of the postfix expression left of an operator: names joined by ``.``/``->``/``::``,
    calls and subscripts, or one parenthesised expression (lexically, backwards, in the code
    view ``code``: no bracket or dot of a comment or literal counts). A token walk: it joins
    only what touches (``threadIdx.x``, ``ns::lane``), where ``calls.is_member`` asks whether a
    name is a member at all, across blanks and comments."""
    pos = operator_start
    while pos > 0 and code[pos - 1] in b" \t":
        pos -= 1
    while pos > 0:
        byte = code[pos - 1]
        if byte in b")]":
            depth = 0
            while pos > 0:
                pos -= 1
                if code[pos] in b")]":
                    depth += 1
                elif code[pos] in b"([":
                    depth -= 1
                    if depth == 0:
                        break
            continue
        if byte in WORD_BYTES:
            while pos > 0 and code[pos - 1] in WORD_BYTES:
                pos -= 1
            if code[max(0, pos - 1) : pos] == b"." or code[max(0, pos - 2) : pos] in (b"->", b"::"):
                pos -= 1 if code[pos - 1 : pos] == b"." else 2
                continue
            break
        break
    return pos


def _constants(data: bytes):
    """What ``_CONSTANT.finditer(data)`` finds, tried only where a match can start: at a word
    holding 'warp' (any case) and at the ``#`` of its line. Every match names such a word; a
    scan that tries each word boundary for a 'warp' inside costs 30 times more."""
    starts = set()
    previous = word = -1  # the last 'warp' found and the start of its word
    for found in re.finditer(b"warp", data.lower()):  # bytes patterns ignore ASCII case alone
        at = found.start()
        pos = at
        while pos > 0 and data[pos - 1] in WORD_BYTES:
            pos -= 1
            if pos == previous:  # the same word as the last one: its start is known
                pos = word
                break
        previous, word = at, pos
        starts.add(pos)
        hash_at = data.rfind(b"#", data.rfind(b"\n", 0, pos) + 1, pos)
        if hash_at != -1:
            starts.add(hash_at)
    covered = 0
    for at in sorted(starts):
        if at < covered:
            continue
        match = _CONSTANT.match(data, at)
        if match is not None:
            covered = match.end()
            yield match


def _in_device_code(ctx: RuleContext, offset: int) -> bool:
    """Is ``offset`` inside a block (``scopes.blocks``) whose head holds ``__global__`` or
    ``__device__`` and a ``(``: the body of a device function, or a block within one?"""
    device = ctx.cache.get("WAV001.device_blocks")
    if device is None:
        data = ctx.data
        device = []  # the outermost such blocks: blocks nest, so they hold every other
        for block in blocks(ctx):
            if device and device[-1].contains(block.open):
                continue
            if data.find(b"(", block.head, block.open) != -1 \
                    and _DEVICE_QUALIFIER.search(data, block.head, block.open) is not None:
                device.append(block)
        ctx.cache["WAV001.device_blocks"] = device
        ctx.cache["WAV001.device_opens"] = [block.open for block in device]
    index = bisect.bisect_left(ctx.cache["WAV001.device_opens"], offset) - 1
    return index >= 0 and device[index].contains(offset)
