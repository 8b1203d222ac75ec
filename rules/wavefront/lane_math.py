"""WAV001: code that hard-codes the 32-lane warp in lane arithmetic, constants and reductions."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from migrator.diagnostics import Applicability, Diagnostic, Edit, Fix
from migrator.rule import Rule, RuleContext
from migrator.semantic.calls import WORD_BYTES
from migrator.semantic.constants import integer_literal
from migrator.semantic.scopes import blocks

from ..markers import unproven_fix
from . import per_warp_shared
from ..portability.device_prop_fields import SUPPORT_HEADER
from .common import (SHUFFLE_WIDTH, block_end, builtin_names, call_arguments, marker_site,
                     words_in)
from .warpsize_constexpr import constant_context

# only the literals that can mean a warp: % / 32|64, & 31|63, >> 5|6 (cheap to scan for)
OPERATORS = (b"%", b"/", b"&", b">>")
OPERAND = rb"\s*(32|64|31|63|0[xX][13][fF]|[56])[uU]?\b"
# one pattern per operator: each starts with a literal, which the regex engine jumps to; one
# pattern for all four would test every byte against the set of their first bytes
_OPERATIONS = tuple(re.compile(b"(" + re.escape(written) + b")" + OPERAND)
                    for written in OPERATORS)
_LANE_OPERAND = re.compile(r"threadIdx|lane|tid\b|tid_|thread_?id|\btid", re.IGNORECASE)
# a count of threads in a block (``blockDim.x``, ``nthreads``, ``BLOCK_SIZE``): divided by 32
# (or shifted by 5) it counts warps
_BLOCK_COUNT = re.compile(rb"(?i:blockDim|threads|block_?size)")
_CONSTANT = re.compile(
    rb"(?:#[ \t]*define[ \t]+(\w*(?i:warp)\w*)[ \t]+\(?(\d+)\)?[ \t]*(?:$|//|/\*)"
    rb"|\b(\w*(?i:warp)\w*)\s*=\s*(\d+)\s*[;,}])", re.MULTILINE)
_REDUCTION = re.compile(
    rb"for\s*\(\s*(?:(?:unsigned|int|auto|uint32_t|const)\s+)*(\w+)\s*=\s*(\d+)\s*;\s*\1\s*(?:>|>=|!=)"
    rb"\s*0\s*;[^)]*\)")
_DEVICE_QUALIFIER = re.compile(rb"__global__|__device__")
_SHUFFLES = frozenset(name.encode() for name in SHUFFLE_WIDTH)
# the xor shuffles -> the index of their lane mask (the offset of a butterfly)
_XOR_OFFSET = {"__shfl_xor": 1, "__shfl_xor_sync": 2}
# a counted loop's header: its variable, start, comparison and bound
_COUNTED_LOOP = re.compile(
    rb"for\s*\(\s*(?:(?:unsigned|int|auto|uint32_t|const)\s+)*(\w+)\s*=\s*(\d+)[uU]?\s*;\s*\1\s*"
    rb"(<=|<|>=|>|!=)\s*(\d+)[uU]?\s*;")
# a function's name in its head: the first called word that is no __qualifier__(...)
_FUNCTION_NAME = re.compile(rb"\b(?!__)([A-Za-z_]\w*)\s*\(")
# the 32-lane subgroup a function emulates, kept on a 64-lane wavefront
_SUBGROUP = 32
_COMMENT = re.compile(rb"/\*[\s\S]*?\*/|//[^\n]*")


def _assumed_lanes(operator: bytes, value: int) -> int | None:
    lanes = {b"%": value, b"/": value, b"&": value + 1, b">>": 1 << value if value < 16 else 0}
    found = lanes[operator]
    return found if found in (32, 64) else None


# (operator, operand as written) -> the lanes it assumes (None: none, or no literal): the
# operands are a few spellings, read once each instead of once per site
_ASSUMED: dict[tuple[bytes, bytes], int | None] = {}


def _assumed_by(operator: bytes, operand: bytes) -> int | None:
    key = (operator, operand)
    found = _ASSUMED.get(key, _ASSUMED)
    if found is _ASSUMED:
        literal = integer_literal(operand.decode())
        found = None if literal is None else _assumed_lanes(operator, literal[0])
        if len(_ASSUMED) < 4096:
            _ASSUMED[key] = found
    return found


class LaneMath(Rule):
    """Report literal warp sizes in lane arithmetic, warp-size constants and fixed reductions.

    ## What it does
    Finds code that hard-codes the lane count of a warp where it differs from the configured
    wavefront size (64 by default, 32 for RDNA): lane arithmetic on thread indices
    (``threadIdx.x % 32``, ``tid & 31``, ``lane / 32``, ``tid >> 5``), counts of warps in a
    block (``blockDim.x / 32``, ``(blockDim.x + 31) / 32``, ``nthreads >> 5``: a count of
    threads divided by 32), constants such as ``#define WARP_SIZE 32``, and shuffle reductions
    whose loop starts at offset 16 (``for (int offset = 16; offset > 0; offset /= 2)``). Each
    is reported with a ``// rocmigrate WAV001:`` marker in the converted code; an unsafe fix
    rewrites lane arithmetic and reductions in terms of ``warpSize`` inside
    ``__device__``/``__global__`` code. A device function that emulates 32-lane subgroups on
    purpose (a shuffle of width 32, or a ``__shfl_xor`` butterfly whose offsets are all below
    32: ``for (int o = 16; o > 0; o >>= 1) v += __shfl_xor(v, o);``) keeps its 32s, each with
    an info note saying why. A host variable (``const int warp_size = 32;`` in a host
    function) or a ``#define WARP_SIZE 32`` of a source file that only host code reads at run
    time (no array bound, template argument, case label, static_assert or constexpr) is
    initialised from the device with unsafe fixes: ``rocmigrate_warp_size()``, which asks
    ``hipDeviceGetAttribute(&size, hipDeviceAttributeWarpSize, device)`` (the generated
    ``rocmigrate_runtime.h``), as HIP ports of such programs do. A host literal that a comment
    on its line names the warp size is such a constant whatever its name (``int thread_x = 32;
    //warpSize;``, ``/* WARP_SIZE */ 32``, ``#define ROWS 32 // warp size``: a comment that
    starts with "warp size", "warpSize", "WARP_SIZE", "warp width" or "threads per warp"), and
    so is a count divided by one (``int thread_y = MAX_THREADS_PER_BLOCK / 32; //warpSize;``,
    HeCBench scatterAdd, whose kernels index ``threadIdx.y * warpSize + threadIdx.x``): its 32
    becomes ``rocmigrate_warp_size()`` where the same holds. A 32 with no warp-like name and no
    such comment is left alone, and device code keeps its findings as they were.

    ## Why is this bad on AMD
    AMD Instinct (CDNA) GPUs run 64-lane wavefronts (AMD's HIP programming guide, on the
    hardware implementation; HIP's ``warpSize`` is 64 there). ``threadIdx.x % 32`` is no
    longer the lane, ``/ 32`` no longer the warp index, ``blockDim.x / 32`` counts twice the
    wavefronts a block has (per-wavefront partial results left unwritten, loops over them
    reading garbage), and a reduction that starts at offset 16 combines lanes within halves of
    the wavefront only: lanes 32-63 never reach lane 0. A host ``warp_size = 32`` that sizes
    test data, launches and expected results describes warps the hardware no longer has: blocks
    of ``(32, MAX_THREADS_PER_BLOCK / 32)`` for kernels that assume ``blockDim.x == warpSize``
    leave half of each row's lanes idle and index ``threadIdx.y * warpSize + threadIdx.x`` past
    the end of a buffer of ``MAX_THREADS_PER_BLOCK`` entries (HeCBench scatterAdd's port
    crashed on AMD's HIP CPU runtime). The code runs and gives wrong answers, or crashes.

    ## Example
    ```cpp
    int lane = threadIdx.x % 32;
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down(v, offset);
    const int warp_size = 32;  // host: sizes the data, the launch and the expected results
    int thread_x = 32; //warpSize;
    int thread_y = MAX_THREADS_PER_BLOCK / 32; //warpSize;
    ```

    ## Use instead
    ```cpp
    int lane = threadIdx.x % warpSize;
    for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_down(v, offset);
    const int warp_size = rocmigrate_warp_size();  // hipDeviceAttributeWarpSize
    int thread_x = rocmigrate_warp_size(); //warpSize;
    int thread_y = MAX_THREADS_PER_BLOCK / rocmigrate_warp_size(); //warpSize;
    ```

    ## Fix safety
    Unsafe: the rest of the kernel (shared arrays sized per warp, block sizes, host code) may
    rely on the same 32, and ``warpSize`` is not a compile-time constant on HIP. Review each
    site; constants, counts of warps in a block (the 31 of a rounding up and what the count
    sizes must change with the 32) and code inside macros are reported only. In a function
    that emulates 32-lane subgroups nothing is rewritten: its shuffles stay within each 32-lane
    half of a 64-lane wavefront, so the plain port is right, and ``warpSize`` in its lane
    arithmetic alone would pair lanes the shuffles never combine. A host constant asks the
    device only where every use is at run time in host code; its other uses may still assume
    32 (a person reviews the marker's sites), and a constant that a constant context needs is
    reported only. The same holds for a literal that its comment names the warp size, and for a
    count divided by one; a comment is the author's word, not a proof: only one that starts by
    naming the warp size counts (not ``// a multiple of the warp size``), and a divided count
    that a constant context needs keeps its marker, which says to divide by ``warpSize`` in
    device code or by ``rocmigrate_warp_size()`` on the host.
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
        for constant in _warp_constants(ctx):
            if constant.value in (32, 64) and constant.value != lanes:
                yield _constant_finding(ctx, constant, lanes)
        for match in _REDUCTION.finditer(data):
            start_value = int(match.group(2))
            if start_value * 2 not in (32, 64) or start_value * 2 == lanes:
                continue
            if not ctx.in_code(match.start()) or b"__shfl" not in data[match.end() : match.end() + 400]:
                continue
            at, end = match.span(2)
            subgroup = _subgroup(ctx, at, start_value * 2, lanes)
            if subgroup:
                yield _kept(f"a shuffle reduction from offset {start_value}", subgroup, at, end,
                            "reduction")
                continue
            fix = None
            if _in_device_code(ctx, at):
                fix = Fix("start at warpSize / 2", (Edit(at, end, b"warpSize / 2"),),
                          Applicability.UNSAFE)
            message = (f"shuffle reduction starts at offset {start_value}: it assumes "
                       f"{start_value * 2} lanes and never combines lanes "
                       f"{start_value * 2}-{lanes - 1} of a {lanes}-lane wavefront")
            yield Diagnostic("WAV001", message, at, end,
                             unproven_fix(ctx, marker_site(ctx, at), "WAV001", message, fix),
                             library="device", symbol="reduction")

    def _lane_operations(self, ctx: RuleContext, lanes: int):
        data = ctx.data
        found = operations(data)
        # most files hold no such operation: the scan for an operand word (a case-insensitive
        # search of the whole file where the names are missing) only where one does
        if not found or b"threadIdx" not in data and b"lane" not in data and b"tid" not in data \
                and _BLOCK_COUNT.search(data) is None:
            return
        for match in found:
            assumed = _assumed_by(match.group(1), match.group(2))
            if assumed is None or assumed == lanes or not ctx.in_code(match.start()):
                continue
            if match.group(1) == b"/" and data[match.start() + 1 : match.start() + 2] in (b"/", b"*"):
                continue
            left_start = _left_operand_start(ctx.code, match.start())
            left = data[left_start : match.start()].decode("utf-8", "replace")
            operator = match.group(1).decode()
            if not _LANE_OPERAND.search(left):
                counts_threads = _BLOCK_COUNT.search(data, left_start, match.start())
                if operator in ("/", ">>") and counts_threads \
                        and not _sizes_per_warp_array(ctx, match.start()) \
                        and match.start(2) not in _commented_divisors(ctx):
                    subgroup = _subgroup(ctx, match.start(), assumed, lanes)
                    if subgroup:
                        yield _kept(f"'{_quoted(data[left_start : match.end()])}'", subgroup,
                                    left_start, match.end(), "warps per block")
                    else:
                        yield self._warps_per_block(ctx, left_start, match.end(), assumed, lanes)
                continue  # the left operand is no thread or lane index: not lane math
            expression = _quoted(data[left_start : match.end()])
            if ctx.in_directive(match.start()):
                message = (f"lane arithmetic '{expression}' inside a macro assumes "
                           f"{assumed}-lane warps (not fixed inside macros)")
                yield Diagnostic("WAV001", message, left_start, match.end(),
                                 unproven_fix(ctx, marker_site(ctx, left_start), "WAV001", message),
                                 library="device", symbol=operator)
                continue
            subgroup = _subgroup(ctx, match.start(), assumed, lanes)
            if subgroup:
                yield _kept(f"'{expression}'", subgroup, left_start, match.end(), operator)
                continue
            at, end = match.span(2)
            if data[end : end + 1] in (b"u", b"U"):
                end += 1
            replacement = _WARPSIZE_FORMS[operator]
            rewrite = None
            if _in_device_code(ctx, match.start()):
                rewrite = Fix(f"use {replacement}", (Edit(at, end, replacement.encode()),),
                              Applicability.UNSAFE)
            message = (f"'{expression}' assumes {assumed}-lane warps; AMD wavefronts have "
                       f"{lanes} lanes")
            yield Diagnostic("WAV001", message, left_start, match.end(),
                             unproven_fix(ctx, marker_site(ctx, left_start), "WAV001", message,
                                          rewrite),
                             library="device", symbol=operator)

    @staticmethod
    def _warps_per_block(ctx: RuleContext, start: int, end: int, assumed: int,
                         lanes: int) -> Diagnostic:
        """A count of threads divided into warps of ``assumed`` lanes: reported with a marker
        only. Its 32 (and the 31 of a rounding up) cannot become warpSize alone: the arrays
        sized by the count and the loops over it must agree."""
        expression = _quoted(ctx.data[start:end])
        ratio = "half" if lanes > assumed else "twice"
        message = (f"'{expression}' counts {assumed}-lane warps in a block; AMD wavefronts have "
                   f"{lanes} lanes, so a block holds {ratio} as many (review what this count "
                   "sizes and bounds)")
        return Diagnostic("WAV001", message, start, end,
                          unproven_fix(ctx, marker_site(ctx, start), "WAV001", message),
                          library="device", symbol="warps per block")


def _sizes_per_warp_array(ctx: RuleContext, offset: int) -> bool:
    """Is ``offset`` in the size of a ``__shared__`` array sized per warp, which WAV006
    reports?"""
    sizes = ctx.cache.get("WAV001.per_warp_sizes")
    if sizes is None:
        sizes = ctx.cache["WAV001.per_warp_sizes"] = [
            match.span(2) for match in per_warp_shared.SHARED.finditer(ctx.data)
        ] if b"__shared__" in ctx.data else []
    return any(start <= offset < end for start, end in sizes)


def _quoted(expression: bytes) -> str:
    """``expression`` as a message quotes it: its comments left out (a marker written as a
    block comment, inside a macro, must hold no ``*/``) and its blanks squeezed."""
    return b" ".join(_COMMENT.sub(b" ", expression).split()).decode("utf-8", "replace")


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


def _lowered(ctx: RuleContext) -> bytes:
    """The file in lower case (bytes patterns ignore ASCII case alone), made once for the
    searches for 'warp' in names and comments."""
    found = ctx.cache.get("WAV001.lowered")
    if found is None:
        found = ctx.cache["WAV001.lowered"] = ctx.data.lower()
    return found


def _constants(data: bytes, lowered: bytes | None = None):
    """What ``_CONSTANT.finditer(data)`` finds, tried only where a match can start: at a word
    holding 'warp' (any case) and at the ``#`` of its line. Every match names such a word; a
    scan that tries each word boundary for a 'warp' inside costs 30 times more."""
    starts = set()
    previous = word = -1  # the last 'warp' found and the start of its word
    lowered = data.lower() if lowered is None else lowered  # ``data`` in lower case
    for found in re.finditer(b"warp", lowered):  # bytes patterns ignore ASCII case alone
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
    return _device_block(ctx, offset) is not None


def _device_block(ctx: RuleContext, offset: int):
    """The body of the device function (``_in_device_code``) that holds ``offset``, or None."""
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
    return device[index] if index >= 0 and device[index].contains(offset) else None


def _kept(what: str, subgroup: str, start: int, end: int, symbol: str) -> Diagnostic:
    """The note on a 32 left as it is in a function that emulates 32-lane subgroups."""
    message = (f"{what} assumes 32 lanes, kept: this function emulates 32-lane subgroups "
               f"({subgroup}), whose shuffles stay within each 32-lane half of a 64-lane "
               "wavefront, so its lane arithmetic must stay 32 with them")
    return Diagnostic("WAV001", message, start, end, None, library="device", symbol=symbol,
                      severity="info")


def _subgroup(ctx: RuleContext, offset: int, assumed: int, lanes: int) -> str:
    """Why the device function holding ``offset`` emulates a 32-lane subgroup on a 64-lane
    wavefront ('' where it does not, or where ``assumed`` is no such subgroup): a shuffle of
    width 32, or a ``__shfl_xor`` butterfly whose offsets are all below 32 (a literal, or the
    variable of a loop from 16 down or up to 32). Its plain port is right: the shuffles stay
    within each half, and ``warpSize`` in its lane arithmetic would break it."""
    if assumed != _SUBGROUP or lanes != 2 * _SUBGROUP:
        return ""
    block = _device_block(ctx, offset)
    if block is None:
        return ""
    reason = _subgroup_reason(ctx, block)
    if reason or not _any_subgroup(ctx):
        return reason
    helpers = ctx.cache.get("WAV001.helpers")
    if helpers is None:
        helpers = ctx.cache["WAV001.helpers"] = {}
    reason = helpers.get(block.open)
    if reason is None:
        reason = helpers[block.open] = _called_by_subgroup(ctx, block)
    return reason


def _subgroup_reason(ctx: RuleContext, block) -> str:
    """Why the device function whose body is ``block`` emulates a 32-lane subgroup by its own
    shuffles (``_subgroup_shuffle``: the first of them that says so), or ''. Read once per
    function, and only for the functions asked about: the shuffles of the others are not
    read."""
    reasons = ctx.cache.get("WAV001.reasons")
    if reasons is None:
        reasons = ctx.cache["WAV001.reasons"] = {}
        shuffles = ctx.cache["WAV001.shuffles"] = builtin_names(ctx, _SHUFFLES)
        ctx.cache["WAV001.shuffle_starts"] = [start for _, start, _ in shuffles]
    reason = reasons.get(block.open)
    if reason is None:
        reason = ""
        shuffles, starts = ctx.cache["WAV001.shuffles"], ctx.cache["WAV001.shuffle_starts"]
        # the shuffles inside its body (device bodies are the outermost: each holds its own)
        for index in range(bisect.bisect_right(starts, block.open),
                           bisect.bisect_left(starts, block.close)):
            name, start, end = shuffles[index]
            reason = _subgroup_shuffle(ctx, name.decode(), start, end, block.open)
            if reason:
                break
        reasons[block.open] = reason
    return reason


def _any_subgroup(ctx: RuleContext) -> bool:
    """Does a device function of the file emulate 32-lane subgroups by its own shuffles?"""
    found = ctx.cache.get("WAV001.any_subgroup")
    if found is None:
        found = False
        asked = None  # the functions holding shuffles, each asked once (a function without
        # one emulates none)
        for _, start, _ in ctx.cache["WAV001.shuffles"]:
            holder = _device_block(ctx, start)
            if holder is None or holder is asked:
                continue
            asked = holder
            if _subgroup_reason(ctx, holder):
                found = True
                break
        ctx.cache["WAV001.any_subgroup"] = found
    return found


def _called_by_subgroup(ctx: RuleContext, block) -> str:
    """Why the device function whose body is ``block`` belongs to a 32-lane subgroup as a
    helper that such a function (``_subgroup_reason``) calls, or '' (once per function:
    ``_subgroup``)."""
    # a helper (``__device__ int lane_id() { return threadIdx.x & 31; }``) that such a
    # function calls: its lane arithmetic is the subgroup's
    helper = _FUNCTION_NAME.search(ctx.code, block.head, block.open)
    if helper is None:
        return ""
    name = helper.group(1)
    data, code, size = ctx.data, ctx.code, len(helper.group(1))
    # its first whole-word call in code inside such a function (device bodies, the outermost,
    # do not overlap): searched in their bodies alone, in order
    for caller in ctx.cache["WAV001.device_blocks"]:
        if caller.open == block.open:
            continue
        at = data.find(name, caller.open + 1, caller.close)
        while at != -1:
            if data[at - 1] not in WORD_BYTES and data[at + size] not in WORD_BYTES \
                    and code[at] != 32 and code[at + size : at + size + 40].lstrip()[:1] == b"(":
                reason = _subgroup_reason(ctx, caller)
                if reason:
                    return f"called by a function with {reason}"
                break  # a caller that emulates none: its other calls say no more
            at = data.find(name, at + 1, caller.close)
    return ""


def _subgroup_shuffle(ctx: RuleContext, shuffle: str, start: int, end: int, body: int) -> str:
    """Why the shuffle ``shuffle`` (its name at [start, end), in the function whose body opens
    at ``body``) works on 32-lane subgroups, or ''."""
    data = ctx.data
    spans = call_arguments(ctx, end) or []
    width = SHUFFLE_WIDTH[shuffle]
    if width < len(spans):
        literal = integer_literal(data[slice(*spans[width])].decode("utf-8", "replace").strip())
        if literal is not None and literal[0] == _SUBGROUP:
            return f"{shuffle} of width 32"
    index = _XOR_OFFSET.get(shuffle)
    if index is None or index >= len(spans):
        return ""
    text = data[slice(*spans[index])].decode("utf-8", "replace").strip()
    literal = integer_literal(text)
    if literal is not None:
        butterfly = 0 < literal[0] < _SUBGROUP
        return f"a {shuffle} butterfly over offsets below 32" if butterfly else ""
    for loop in _COUNTED_LOOP.finditer(ctx.code, body, start):
        if loop.group(1).decode() != text:
            continue
        first, comparison, bound = int(loop.group(2)), loop.group(3), int(loop.group(4))
        # from below 32 down, or up to below 32: every offset stays within a 32-lane half
        down = comparison in (b">", b">=", b"!=") and 0 < first < _SUBGROUP
        up = (comparison == b"<" and bound <= _SUBGROUP
              or comparison == b"<=" and bound < _SUBGROUP)
        if down or up:
            return f"a {shuffle} butterfly over offsets below 32"
    return ""


# what may precede a host variable's name in its declaration: an integer type, const, static
_HOST_DECLARATION = re.compile(
    rb"(?:^|[;{}]|\n)\s*(?:static\s+)?(?:const\s+)?(?:unsigned\s+int|unsigned|int|long|size_t|"
    rb"u?int32_t)\s+(?:const\s+)?$")
_HEAD_BRACKET = re.compile(rb"[()]")
_HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx", ".cuh", ".inl")


def _host_run_time_constant(ctx: RuleContext, constant: _WarpConstant) -> bool:
    """Is ``constant`` one that only host code reads at run time, so that the device can give
    its value: a variable declared in a host function's body (not ``constexpr``), or a
    ``#define`` of a source file (not a header, whose includers are not seen), whose every use
    in the file is in host code, outside any directive and any context that needs a
    compile-time constant (an array bound, a template argument, a case label, a static_assert,
    a constexpr initialiser)?"""
    data = ctx.data
    name = constant.name
    if not constant.define:  # a variable: declared with an integer type in a host function
        start = constant.name_at
        if ctx.in_directive(start) or _in_device_code(ctx, start) \
                or _HOST_DECLARATION.search(data, max(0, start - 80), start) is None:
            return False
        if not _in_function(ctx, start):
            return False  # outside a function: read before main, and by whatever includes it
        scope = block_end(ctx, start)
        uses = words_in(ctx, name, constant.after, scope)
    else:
        if ctx.path is not None and str(ctx.path).lower().endswith(_HEADER_SUFFIXES):
            return False
        uses = words_in(ctx, name, constant.after, len(data))
    return bool(uses) and all(not ctx.in_directive(at) and not _in_device_code(ctx, at)
                              and _in_function(ctx, at)
                              and not constant_context(ctx, at, at + len(name)) for at in uses)


@dataclass(frozen=True)
class _WarpConstant:
    """A literal the code holds the warp size in: the value of a constant named like a warp
    size (``_CONSTANT``), or, on the host, of a constant or a divisor that a comment on its line
    names the warp size (``_commented_constants``)."""

    name: bytes  # the variable or macro that holds it
    name_at: int
    value: int
    at: int  # the literal's span
    end: int
    define: bool  # a #define, else a variable (declared or assigned)
    after: int  # where what defines it ends: its uses follow
    dividend: bytes = b""  # ``N`` where the literal divides it (``rows = N / 32;``)
    commented: bool = False  # found by its comment, not by its name


def _warp_constants(ctx: RuleContext) -> list[_WarpConstant]:
    """Every warp-size constant of the file in code, in order: the named, then the commented
    ones whose literal no name claimed."""
    found = {}
    for match in _constants(ctx.data, _lowered(ctx)):
        if not ctx.in_code(match.start()):
            continue
        define = match.group(1) is not None
        name, value = (1, 2) if define else (3, 4)
        found[match.start(value)] = _WarpConstant(
            match.group(name), match.start(name), int(match.group(value)), match.start(value),
            match.end(value), define, match.end())
    for constant in _commented_constants(ctx):
        found.setdefault(constant.at, constant)
    return [found[at] for at in sorted(found)]


def _constant_finding(ctx: RuleContext, constant: _WarpConstant, lanes: int) -> Diagnostic:
    """The finding on a warp-size constant: initialised from the device with unsafe fixes where
    only host code reads it at run time (``_host_run_time_constant``), else marked with what to
    write instead."""
    at, end, value = constant.at, constant.end, constant.value
    name = constant.name.decode()
    what = f"{name} = {constant.dividend.decode()} / {value}" if constant.dividend \
        else f"{name} = {value}"
    if constant.commented:
        what += " (commented as the warp size)"
    hard_codes = "divides by a hard-coded warp size" if constant.dividend \
        else "hard-codes the warp size"
    if constant.dividend:
        message = (f"{what} {hard_codes}; the wavefront has {lanes} lanes "
                   "(divide by warpSize in device code, by the device's warp size on the host: "
                   "rocmigrate_warp_size(), which asks hipDeviceAttributeWarpSize, or by a "
                   "constant per target where a constant is needed)")
    else:
        message = (f"{what} hard-codes the warp size; the wavefront has {lanes} lanes (use "
                   "warpSize in device code, the device's hipDeviceAttributeWarpSize on the "
                   "host, or a constant per target)")
    rewrite = None
    if _host_run_time_constant(ctx, constant):
        message = (f"{what} {hard_codes} on the host; the wavefront has {lanes} lanes "
                   "(ask the device: hipDeviceGetAttribute(&size, "
                   "hipDeviceAttributeWarpSize, device), rocmigrate_warp_size())")
        rewrite = Fix("ask the device for its warp size",
                      (Edit(at, end, b"rocmigrate_warp_size()"),),
                      Applicability.UNSAFE, includes=(SUPPORT_HEADER,))
    return Diagnostic("WAV001", message, at, end,
                      unproven_fix(ctx, marker_site(ctx, at), "WAV001", message, rewrite),
                      library="device", symbol=name)


# a comment that starts by naming the warp size (read in lower case): ``//warpSize;``,
# ``// warp size``, ``/* WARP_SIZE */``, ``// = warp width``, ``// the warp size``, ``//
# threads per warp``; not one that mentions it further on (``// a multiple of the warp size``)
_WARP_COMMENT = re.compile(
    rb"(?://|/\*)[\s*!/<]*(?:[=:(][ \t]*)?(?:the[ \t]+)?"
    rb"(?:warp[ \t_-]?(?:size|width)|(?:threads|lanes)[ \t]+(?:per|in[ \t]+a)[ \t]+warp)\b")
# on such a comment's line (its code): a #define of a literal, or a name given a literal or a
# word divided by a literal (``int thread_y = MAX_THREADS_PER_BLOCK / 32; //warpSize;``)
_COMMENTED = re.compile(
    rb"#[ \t]*define[ \t]+(\w+)[ \t]+\(?[ \t]*(\d+)[ \t]*\)?[ \t]*\r?$"
    rb"|\b([A-Za-z_]\w*)[ \t]*=[ \t]*(?:([A-Za-z_]\w*)[ \t]*/[ \t]*)?(\d+)[ \t]*[;,}]",
    re.MULTILINE)


def _commented_constants(ctx: RuleContext) -> list[_WarpConstant]:
    """The literals of host code that a comment on their line names the warp size (``int
    thread_x = 32; //warpSize;``), as the named constants (``_CONSTANT``) they stand for: a
    ``#define`` of one, a name given one, or a word divided by one. Only at a comment that
    starts by naming it (``_WARP_COMMENT``), so a 32 with no such comment stays as it was; a
    division of a thread or lane index is lane arithmetic, which ``_lane_operations`` owns, and
    device code keeps its findings as they were."""
    found = ctx.cache.get("WAV001.commented")
    if found is not None:
        return found
    found = ctx.cache["WAV001.commented"] = []
    data = ctx.data
    lowered = _lowered(ctx)
    if b"warp" not in lowered:
        return found
    literals, code = ctx.literals, ctx.code
    lines = set()
    for hit in re.finditer(b"warp", lowered):
        index = bisect.bisect_right(literals.starts, hit.start()) - 1
        if index < 0 or hit.start() >= literals.ends[index] or literals.kinds[index] != "comment":
            continue
        comment = literals.starts[index]
        if _WARP_COMMENT.match(lowered, comment) is None:
            continue
        line = ctx.source.line_start(comment)
        if line in lines:
            continue
        lines.add(line)
        line_end = data.find(b"\n", line)
        for match in _COMMENTED.finditer(code, line, len(data) if line_end == -1 else line_end):
            define = match.group(1) is not None
            name, value = (1, 2) if define else (3, 5)
            at = match.start(value)
            dividend = b"" if define else match.group(4) or b""
            if _in_device_code(ctx, at) or dividend and _LANE_OPERAND.search(dividend.decode()):
                continue
            found.append(_WarpConstant(match.group(name), match.start(name),
                                       int(match.group(value)), at, match.end(value), define,
                                       match.end(), dividend, True))
    return found


def _commented_divisors(ctx: RuleContext) -> set[int]:
    """Where the divisors of ``_commented_constants`` start: a count of threads divided by one
    (``MAX_THREADS_PER_BLOCK / 32; //warpSize;``) is that constant's finding, not a count of
    warps in a block."""
    found = ctx.cache.get("WAV001.commented_divisors")
    if found is None:
        found = ctx.cache["WAV001.commented_divisors"] = {
            constant.at for constant in _commented_constants(ctx) if constant.dividend}
    return found


def _in_function(ctx: RuleContext, offset: int) -> bool:
    """Is ``offset`` in a block whose head holds a bracket: a function's body, or a statement's
    in one (the head of ``for (...; ++k) {`` holds only its ``)`` where ``#ifdef`` branches
    split the braces)? Not at file, namespace or class scope."""
    bodies = ctx.cache.get("WAV001.bracket_blocks")
    if bodies is None:  # the outermost such blocks (blocks nest): they cover every other
        data = ctx.data
        bodies = []
        for block in blocks(ctx):
            if bodies and bodies[-1].contains(block.open):
                continue
            if _HEAD_BRACKET.search(data, block.head, block.open):
                bodies.append(block)
        ctx.cache["WAV001.bracket_blocks"] = bodies
        ctx.cache["WAV001.bracket_opens"] = [block.open for block in bodies]
    index = bisect.bisect_left(ctx.cache["WAV001.bracket_opens"], offset) - 1
    return index >= 0 and bodies[index].contains(offset)
