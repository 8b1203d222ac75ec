"""HMT001: a host function calling a math function HIP declares for device code only."""

from __future__ import annotations

import bisect
import re

from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Marker, Rule, RuleContext
from migrator.semantic.calls import LexicalCall, lexical_call
from migrator.semantic.scopes import blocks, function_at

from ..markers import marker_fix
from .builtin_redefinition import compiled_by_hip
from ._tables import table

# exact host replacements worth suggesting (the rest: compute it with the C library)
_SUGGESTIONS = {
    "rsqrtf": "1.0f / sqrtf(x)", "rsqrt": "1.0 / sqrt(x)", "__frsqrt_rn": "1.0f / sqrtf(x)",
    "__fdividef": "x / y", "fdividef": "x / y", "__fdiv_rn": "x / y",
    "norm3df": "sqrtf(a*a + b*b + c*c)", "norm3d": "sqrt(a*a + b*b + c*c)",
    "rnorm3df": "1.0f / sqrtf(a*a + b*b + c*c)", "rhypotf": "1.0f / hypotf(x, y)",
    "sinpif": "sinf(M_PI * x)", "cospif": "cosf(M_PI * x)", "sincospif": "sincosf(M_PI * x, s, c)",
    "__int_as_float": "memcpy or std::bit_cast", "__float_as_int": "memcpy or std::bit_cast",
    "__saturatef": "fminf(fmaxf(x, 0.0f), 1.0f)", "__popc": "__builtin_popcount(x)",
    "__popcll": "__builtin_popcountll(x)", "__clz": "__builtin_clz(x) (x != 0)",
    "__brev": "a bit-reversal loop",
}
# host rewrites that compute the same function with the C library (``{0}``, ``{1}``: the call's
# arguments, each parenthesised): applied, with the marker saying they are not bit-identical
_REWRITES = {
    "rsqrtf": "(1.0f / sqrtf({0}))", "rsqrt": "(1.0 / sqrt({0}))",
    "__frsqrt_rn": "(1.0f / sqrtf({0}))", "rcbrtf": "(1.0f / cbrtf({0}))",
    "rcbrt": "(1.0 / cbrt({0}))", "__fdividef": "({0} / {1})", "fdividef": "({0} / {1})",
    "__fdiv_rn": "({0} / {1})", "rhypotf": "(1.0f / hypotf({0}, {1}))",
    "rhypot": "(1.0 / hypot({0}, {1}))", "__saturatef": "fminf(fmaxf({0}, 0.0f), 1.0f)",
    "__popc": "__builtin_popcount({0})", "__popcll": "__builtin_popcountll({0})",
}
_EXACT = frozenset({"__popc", "__popcll", "__saturatef", "__fdiv_rn"})  # the same results
# a head that says device code, or may through a macro (_CCCL_DEVICE, HOST_DEVICE, CUDA_CALLABLE:
# an all-caps word): such a function is not judged host-only
_DEVICE_HEAD = re.compile(rb"\b(?:__device__|__global__|_*[A-Z][A-Z0-9]*_[A-Z0-9_]*|[A-Z]{4,})\b")


def _alternation(names: list[bytes]) -> bytes:
    """``names`` as one regex alternation with common prefixes factored out (a trie): Python's
    engine tries a flat alternation of 150 names at every byte."""
    if names == [b""]:
        return b""
    groups: dict[bytes, list[bytes]] = {}
    for name in names:
        groups.setdefault(name[:1], []).append(name[1:])
    parts = []
    for first, rests in sorted(groups.items()):
        optional = b"" in rests
        inner = _alternation(sorted(r for r in rests if r)) if any(rests) else b""
        if inner:
            parts.append(re.escape(first) + b"(?:" + inner + b")" + (b"?" if optional else b""))
        else:
            parts.append(re.escape(first))
    return b"|".join(parts)


_WORD_BEFORE = re.compile(rb"([A-Za-z_]\w*)\s*\Z")
_EXPRESSION_KEYWORDS = {b"return", b"else", b"case", b"throw", b"co_return", b"co_yield", b"do"}


def _patterns() -> list[re.Pattern]:
    """One pattern per two-byte prefix of the names, each starting with that literal (Python's
    engine searches for a literal prefix quickly, and tries a pattern that starts otherwise at
    every byte)."""
    names = sorted(row["name"].encode() for row in table("device_only_math.tsv"))
    prefixes = sorted({name[:2] for name in names})
    return [re.compile(re.escape(prefix) + b"(?:" + _alternation(
        [n[2:] for n in names if n[:2] == prefix]) + rb")\b\s*\(") for prefix in prefixes]


_PATTERNS = _patterns()
_NAME = re.compile(rb"[A-Za-z_]\w*")
_SIMPLE = re.compile(rb"[\w.]+")  # a name or a number: needs no parentheses
# bytes before a name that make it part of a longer name, a member or a qualified name
_NOT_BEFORE = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:>")


class HostDeviceMath(Rule):
    """Rewrite or mark host code calling a math function HIP declares for device code only.

    ## What it does
    Finds calls of CUDA math functions and intrinsics that HIP declares ``__device__`` only
    (``rsqrtf``, ``__fdividef``, ``norm3df``, ``sincospif``, ``erfinvf``, ``__float_as_int``...,
    ``rules/portability/device_only_math.tsv``) in host code: a function without
    ``__device__``/``__global__`` nor a macro that may say so (an all-caps word such as
    ``HOST_DEVICE``), or code outside any function, not inside a ``__device__``
    lambda, not in a file that defines the name itself, and not in a branch hip-clang skips
    (``#ifdef __CUDA_ARCH__``: it defines no ``__CUDA_ARCH__``). Each gets a marker with a
    host replacement where one is simple.

    ## Why is this bad on AMD
    CUDA 13 defines 20 of these for the host too (``rsqrtf``, ``rcbrtf``, ``erfinvf``,
    ``erfcxf``, ``normcdff``, ``sinpif``, ``sincospif``... and their double forms: ``__func__``
    in ``crt/math_functions.h``), so CUDA host code calls them; HIP declares them for the device
    only (HIP 5.2.3 and 6.4.3 alike, checked with hipcc and clang: ``reference to __device__
    function 'rsqrtf' in __host__ function``), so the port's host code does not compile. The
    others (``norm3df``, ``__fdividef``...) are device-only in CUDA too; a host call of one
    is reported all the same.

    ## Example
    ```cpp
    float scale(float x) { return rsqrtf(x); }  // host function
    ```

    ## Use instead
    ```cpp
    float scale(float x) { return 1.0f / sqrtf(x); }
    ```

    ## Fix safety
    Where the host replacement is the same function (``rsqrtf(x)`` -> ``(1.0f / sqrtf(x))``,
    ``rcbrtf``, ``rhypotf``, ``__fdividef(x, y)`` -> ``(x / y)``, ``__saturatef``, ``__popc``),
    the call is rewritten and a marker says so: the result is close but not bit-identical
    (``rsqrtf`` and ``__fdividef`` are approximate on the GPU; ``1.0f / sqrtf(x)`` rounds twice),
    so a host reference value may differ in the last bits from what CUDA's host code computed.
    The others (``norm3df``, ``sinpif``, ``erfinvf``...) get a marker with a hint.
    """

    code = "HMT001"
    name = "host-device-math"
    summary = "host code calls a math function HIP has for device code only"
    family = "portability"
    fix = "sometimes"
    attention_codes = ("HMT001",)

    def check(self, ctx: RuleContext):
        code = ctx.code
        found = None
        for start in _host_calls(ctx):
            if found is None:
                found = blocks(ctx)
            if _in_device_block(code, found, start) or not compiled_by_hip(ctx, start):
                continue
            match = _NAME.match(code, start)
            name = match.group().decode()
            before = _WORD_BEFORE.search(code, max(0, start - 64), start)
            if before is not None and before.group(1) not in _EXPRESSION_KEYWORDS:
                continue  # a declaration (unsigned int __funnelshift_l(...) MACRO), not a call
            if re.search(rb"[\w*&>]\s+" + match.group() + rb"\s*\([^;{}]*\)\s*(?:const\s*)?\{",
                         code):
                continue  # the file defines it (for its host code)
            rewrite = _rewrite(ctx, name, match.end())
            if rewrite is not None:
                text = (f"{name} is a device-only function in HIP: this host call now computes "
                        f"{_REWRITES[name].format('x', 'y')} with the C library"
                        + ("" if name in _EXACT else " (not bit-identical to the GPU's result)"))
                marker = marker_fix(ctx, start, Marker("HMT001", text))
                edits = (marker.edits if marker is not None else ()) + (
                    Edit(start, rewrite[0], rewrite[1]),)
                yield Diagnostic("HMT001", text, start, start + len(name),
                                 Fix(f"{name} on the host", edits), library="device",
                                 symbol=name)
                continue
            hint = _SUGGESTIONS.get(name)
            text = (f"{name} is a device-only function in HIP: this host code does not compile"
                    + (f"; on the host use {hint}" if hint else "; compute it on the host with "
                       "the C library") + " (not bit-identical to the GPU's result)")
            yield Diagnostic("HMT001", text, start, start + len(name),
                             marker_fix(ctx, start, Marker("HMT001", text)), library="device",
                             symbol=name)


def _rewrite(ctx: RuleContext, name: str, name_end: int) -> tuple[int, bytes] | None:
    """Where the call of ``name`` ends and its host replacement, when it has one and the call
    has the arguments it takes (none inside a macro body)."""
    template = _REWRITES.get(name)
    call = lexical_call(ctx, name_end - len(name), name_end) if template is not None else None
    if not isinstance(call, LexicalCall) or len(call.arguments) != template.count("{") or (
            ctx.in_directive(name_end)):
        return None
    args = [ctx.data[begin:end] if _SIMPLE.fullmatch(ctx.code, begin, end)
            else b"(" + ctx.data[begin:end] + b")" for begin, end in call.arguments]
    return call.close + 1, template.format(*(arg.decode("utf-8", "surrogateescape")
                                        for arg in args)).encode("utf-8", "surrogateescape")


def _host_calls(ctx: RuleContext):
    """Offsets of the listed names' calls outside directives and outside the bodies of
    functions declared __device__ or __global__. The calls are found in one pass over the
    file, and the function bodies read only where there is one (most files have none)."""
    code = ctx.code
    if "scopes.functions" in ctx.cache:
        # the function bodies are known (another rule read them): the host code alone is
        # searched. A call ends with its '(' and holds no '}' (where a stretch starts), so a
        # search of each stretch finds what a search of the file finds wholly in it
        host_starts, host_ends = _host_code(ctx)
        calls = sorted((match.start(), match.end())
                       for start, end in zip(host_starts, host_ends) if start < end
                       for pattern in _PATTERNS for match in pattern.finditer(code, start, end)
                       if match.start() == 0 or code[match.start() - 1] not in _NOT_BEFORE)
    else:
        calls = sorted((match.start(), match.end()) for pattern in _PATTERNS
                       for match in pattern.finditer(code)
                       if match.start() == 0 or code[match.start() - 1] not in _NOT_BEFORE)
        if not calls:
            return
        host_starts, host_ends = _host_code(ctx)
    for start, end in calls:
        index = bisect.bisect_right(host_starts, start) - 1
        if end <= host_ends[index] and not ctx.in_directive(start):
            yield start  # wholly in that stretch, as a search of it alone finds it


def _host_code(ctx: RuleContext) -> tuple[list[int], list[int]]:
    """The stretches of host code, as their starts and ends: from the end of a device
    function's body to the next one's head (outermost function bodies)."""
    code = ctx.code
    host_starts, host_ends, at = [], [], 0
    function_at(ctx, 0)  # fills the cache of outermost function bodies
    for body in ctx.cache["scopes.functions"]:
        if _DEVICE_HEAD.search(code, body.head, body.open):
            host_starts.append(at)
            host_ends.append(body.head)
            at = body.close
    host_starts.append(at)
    host_ends.append(len(code))
    return host_starts, host_ends


def _in_device_block(code: bytes, found, offset: int) -> bool:
    """Is ``offset`` in a block whose head says __device__ (a device lambda in host code)?"""
    return any(block.open < offset < block.close
               and _DEVICE_HEAD.search(code, block.head, block.open)
               for block in found if block.open < offset)
