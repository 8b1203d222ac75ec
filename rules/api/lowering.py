"""LOW001/LOW002: lower CUDA names the target ROCm lacks onto an older HIP API (lowerings.tsv)."""

from __future__ import annotations

import re
import struct

from migrator.apitables import Lowering
from migrator.diagnostics import Applicability, Diagnostic, Edit, Fix
from migrator.rule import Marker, Rule, RuleContext
from migrator.semantic.calls import close_of
from migrator.semantic.calls import arguments, find_name, lexical_call
from migrator.semantic.lookup import value_declaration
from migrator.semantic.types import strip_parens
from migrator.versions import format_version

from ..cuda_types import SIXTEEN_BIT
from ..markers import as_converted, marker_fix, unproven_fix
from .rename import names_code

# every spelling of a bf16 scalar, CUDA's and HIP's
BF16_TYPES = frozenset(t for t, c in SIXTEEN_BIT.items() if c in ("__hip_bfloat16", "hip_bfloat16"))
_BF16 = "|".join(sorted(BF16_TYPES, key=len, reverse=True))
# calls and conversions whose value is a bf16 scalar
_PRODUCER = re.compile(r"(?:__float2bfloat16(?:_r[nzdu])?|__double2bfloat16|" + _BF16 + r")\s*[({]"
                       r"|static_cast\s*<\s*(?:const\s+)?(?:" + _BF16 + r")\s*>\s*\(")
_CONTAINER = re.compile(r"(?:std::)?(?:vector|array|valarray)<(" + _BF16 + r")\s*[,>].*")
_ELEMENT = re.compile(r"([A-Za-z_]\w*)\s*((?:\[[^\[\]]*\]\s*)*)")
_LITERAL = re.compile(
    r"[-+]?\s*(?:0[xX](?P<hex>[0-9a-fA-F']*\.?[0-9a-fA-F']*(?:[pP][-+]?\d+)?)"
    r"|(?P<dec>(?:\d[\d']*\.?[\d']*|\.\d[\d']*)(?:[eE][-+]?\d+)?))(?P<suffix>[fFlLuU]*)")
_STATIC_CAST_BEFORE = re.compile(rb"static_cast\s*<\s*(?:const\s+)?$")
_CAST_OPEN = re.compile(rb"\(\s*(?:const\s+)?$")
_KEYWORDS = {b"return", b"case", b"throw", b"co_return", b"else", b"do", b"co_yield"}
_CAST_CLOSE = re.compile(rb"\s*>\s*\(")
_DIRECT_INIT_AFTER = re.compile(rb"\s*(?:const\s+)?[A-Za-z_]\w*\s*[({]")
_SHOWN = 40


def _literal(text: str) -> re.Match | None:
    """The numeric literal ``text`` is (sign and enclosing parentheses allowed), or None."""
    return _LITERAL.fullmatch(strip_parens(text))


def _float_exact(match: re.Match) -> bool:
    """Does the literal keep its value in float (or is it a float literal)? Then converting it to
    bf16 through float rounds once, as CUDA's conversions do."""
    suffix = match.group("suffix").lower()
    body = match.group().replace("'", "").replace(" ", "")
    body = body[: len(body) - len(suffix)]
    hexadecimal = match.group("hex")
    floating = (any(c in hexadecimal for c in ".pP") if hexadecimal is not None
                else any(c in match.group("dec") for c in ".eE"))
    if floating and "f" in suffix:
        return True
    if floating and "l" in suffix:
        return False  # long double: not checked
    try:
        if hexadecimal is not None:
            value = float.fromhex(body) if floating else float(int(body, 16))
        else:
            value = float(body) if floating else float(int(body))
        return struct.unpack("f", struct.pack("f", value))[0] == value
    except (ValueError, OverflowError):
        return False


def bf16_value(ctx: RuleContext, text: str, at: int) -> bool:
    """Is the expression ``text`` (written at ``at``) proven to be a bf16 scalar: a conversion to
    one, or a name declared with a bf16 type (``x``, ``*p``, ``p[i]``, ``v[i]`` of a
    ``std::vector`` of bf16)?"""
    text = strip_parens(text)
    producer = _PRODUCER.match(text)
    if producer is not None:  # the whole text is one conversion
        raw = text.encode()
        return close_of(raw, len(text[: producer.end() - 1].encode())) == len(raw) - 1
    derefs = 0
    while text.startswith("*"):
        derefs += 1
        text = strip_parens(text[1:])
    element = _ELEMENT.fullmatch(text)
    if element is None:
        return False
    declaration = value_declaration(ctx, element.group(1), at)
    if declaration is None:
        return False
    levels = derefs + element.group(2).count("[")
    if declaration.type in BF16_TYPES:
        return declaration.pointers == levels
    container = _CONTAINER.fullmatch(declaration.type.replace(" ", ""))
    return container is not None and declaration.pointers + 1 == levels


def _shown(ctx: RuleContext, spans: list[tuple[int, int]]) -> str:
    text = ", ".join(ctx.data[b:e].decode("utf-8", "replace") for b, e in spans)
    text = as_converted(ctx, " ".join(text.split()))  # as the output reads, then shortened
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


class OldRocmLowering(Rule):
    """Lower CUDA names whose HIP counterpart is newer than the target ROCm onto an older HIP API
    with the same meaning: bf16 onto ``hip_bfloat16`` before ROCm 6.0.

    ## What it does
    Applies the ``LOW001`` rows of ``rules/api/lowerings.tsv`` where the target ROCm (``--rocm``)
    is older than the row's ``below`` version. Before ROCm 6.0, which brought CUDA's bf16 API as
    ``__hip_bfloat16`` (``hip/hip_bf16.h``), HIP has only the struct ``hip_bfloat16`` of
    ``hip/hip_bfloat16.h``: the type ``__nv_bfloat16`` (and ``nv_bfloat16``) becomes
    ``hip_bfloat16`` wherever it is code (declarations, template arguments, casts, ``sizeof``),
    ``__float2bfloat16(x)`` and ``__float2bfloat16_rn(x)`` become ``hip_bfloat16(x)``, and
    ``__bfloat162float(x)`` becomes ``static_cast<float>(x)``; HDR001 rewrites
    ``<cuda_bf16.h>`` to ``<hip/hip_bfloat16.h>``. Only what has an exact counterpart is
    lowered: ``__nv_bfloat162`` and the other bf16 intrinsics stay reported by API001 (API002,
    API003). From ROCm 6.0 nothing is lowered: API001 renames the CUDA names to HIP's
    (``__hip_bfloat16``). Names inside ``#define`` bodies, and functions that are not called,
    are reported (LOW002), not rewritten. WRP001 applies the table's warp-sync rows.

    ## Why is this bad on AMD
    The CUDA-style bf16 API does not exist before ROCm 6.0: a port that keeps it does not build,
    and HIP 5.x's ``hip_bfloat16`` spells the same operations differently (a constructor and a
    conversion operator instead of intrinsics). Both types are the upper 16 bits of an IEEE
    float, and ``rocmigrate_atomics.h`` has the atomics for ``hip_bfloat16`` (ATM001).

    ## Example
    ```cpp
    #include <cuda_bf16.h>
    __global__ void twice(__nv_bfloat16* v) {
      v[threadIdx.x] = __float2bfloat16(__bfloat162float(v[threadIdx.x]) * 2.0f);
    }
    ```

    ## Use instead
    ```cpp
    #include <hip/hip_bfloat16.h>
    __global__ void twice(hip_bfloat16* v) {
      v[threadIdx.x] = hip_bfloat16(static_cast<float>(v[threadIdx.x]) * 2.0f);
    }
    ```
    That is ``lint --fix --unsafe-fixes --rocm 5.2``; without unsafe fixes
    ``__float2bfloat16(...)`` is marked, since its argument may be NaN.

    ## Fix safety
    Safe where the lowering is exact, else unsafe (``convert`` marks the site, ``lint --fix
    --unsafe-fixes`` applies it); the table's ``exact`` column says which. HIP 5.2.3's
    ``hip_bfloat16(float)`` rounds to nearest even like CUDA's ``__float2bfloat16`` for every
    float that is not NaN (compared on all 2^32 inputs), but keeps a NaN's sign and payload
    (``0x7fc00000`` -> ``0x7fc0``) where CUDA returns ``0x7fff``: the rewrite is safe where the
    argument is a numeric literal. Converting a value to the type
    (``T(x)``, ``T{x}``, ``static_cast<T>(x)``, ``(T)x``, ``T v(x)``) has the same NaN caveat and,
    from a double or a large integer, rounds through float where CUDA rounds once: safe for a
    literal that float holds exactly, for a ``f`` literal and for a bf16 value. ``operator
    float`` zero-extends like ``__bfloat162float``, whose CUDA form first converts any other
    argument to bf16: safe where the argument is proven bf16 (a name declared with a bf16 type,
    ``*p``, ``p[i]``, an element of a ``std::vector`` of bf16, a conversion to bf16).
    ``hip_bfloat16``'s float constructor is explicit: an implicit conversion CUDA accepts
    (``__nv_bfloat16 v = f;``) fails to build rather than change meaning. Not seen: conversions
    written through a typedef of the type, and default member initialisers.
    """

    code = "LOW001"
    extra_codes = ("LOW002",)
    category = "conversion"
    attention_codes = ("LOW002",)
    name = "old-rocm-lowering"
    summary = "CUDA API newer than the target ROCm, with an exact older HIP counterpart"
    family = "api"
    fix = "sometimes"

    def check(self, ctx: RuleContext):
        rocm = ctx.settings.rocm
        rows = {name.encode(): low for name, low in ctx.tables.lowerings.items()
                if low.rule == self.code and low.kind != "header" and low.applies(rocm)
                and name.encode() in ctx.data}
        for name, start, end in find_name(ctx, rows):
            if not names_code(ctx, start, end):
                continue
            low = rows[name]
            if low.kind == "name":
                yield self._name(ctx, low, start, end)
            else:
                yield self._call(ctx, low, start, end)

    def _name(self, ctx: RuleContext, low: Lowering, start: int, end: int) -> Diagnostic:
        if ctx.in_directive(start):
            return self._report(ctx, low, start, end, "write {replacement} in this macro by hand")
        rewrite = Fix(f"lower to {low.replacement}", (Edit(start, end, low.replacement.encode()),))
        spans = _converted(ctx, start, end)
        if spans is None or all(self._exact_conversion(ctx, low, span) for span in spans):
            return Diagnostic("LOW001", f"{low.cuda} -> {low.replacement} ({self._why(ctx, low)})",
                              start, end, rewrite, library="device", symbol=low.cuda,
                              severity="info")
        text = (f"{low.cuda} -> {low.replacement}: the conversion of {_shown(ctx, spans)} to it "
                "is exact only for a literal that float holds exactly or a value of the type "
                f"itself, which rocmigrate cannot prove here: {low.note}")
        return self._unsafe(ctx, low, start, end, text, rewrite)

    def _call(self, ctx: RuleContext, low: Lowering, start: int, end: int) -> Diagnostic:
        call = lexical_call(ctx, start, end)
        if call == "macro":
            return self._report(ctx, low, start, end,
                                "use {replacement}(...) in this macro by hand")
        if call is None:
            return self._report(ctx, low, start, end,
                                "it is not called here: use {replacement}(...) by hand")
        rewrite = Fix(f"lower to {low.replacement}", (Edit(start, end, low.replacement.encode()),))
        args = call.arguments
        if low.exact == "always" or (low.exact == "literal" and args and all(
                _literal(ctx.data[b:e].decode("utf-8", "replace")) for b, e in args)) or (
                low.exact == "bf16" and len(args) == 1 and bf16_value(
                    ctx, ctx.data[args[0][0]:args[0][1]].decode("utf-8", "replace"), start)):
            return Diagnostic("LOW001", f"{low.cuda} -> {low.replacement} ({self._why(ctx, low)})",
                              start, end, rewrite, library="device", symbol=low.cuda,
                              severity="info")
        shown = _shown(ctx, args)
        proven = "a numeric literal" if low.exact == "literal" else "a bf16 value"
        text = (f"{low.cuda}({shown}) -> {low.replacement}({shown}) is exact only for {proven}, "
                f"which rocmigrate cannot prove here: {low.note}")
        return self._unsafe(ctx, low, start, end, text, rewrite)

    @staticmethod
    def _exact_conversion(ctx: RuleContext, low: Lowering, span: tuple[int, int]) -> bool:
        text = ctx.data[span[0]:span[1]].decode("utf-8", "replace")
        if low.exact == "always":
            return True
        literal = _literal(text)
        return (literal is not None and _float_exact(literal)) or bf16_value(ctx, text, span[0])

    @staticmethod
    def _why(ctx: RuleContext, low: Lowering) -> str:
        entry = ctx.tables.names.get(low.cuda)
        hip = entry.hip if entry is not None and entry.hip else low.cuda
        comes = (f"which comes with ROCm {format_version(low.below)}" if low.below else
                 "which no release up to it has")
        return f"ROCm {format_version(ctx.settings.rocm)} lacks {hip}, {comes}"

    def _unsafe(self, ctx, low, start, end, text, rewrite) -> Diagnostic:
        unsafe = Fix(rewrite.title, rewrite.edits, Applicability.UNSAFE)
        return Diagnostic("LOW001", text, start, end, unproven_fix(ctx, start, "LOW001", text,
                                                                   unsafe),
                          library="device", symbol=low.cuda, severity="warning")

    def _report(self, ctx, low, start, end, advice: str) -> Diagnostic:
        text = (f"{low.cuda} {low.lacking()} (target {format_version(ctx.settings.rocm)}): "
                + advice.format(replacement=low.replacement) + f" ({low.note})")
        return Diagnostic("LOW002", text, start, end,
                          marker_fix(ctx, start, Marker("LOW002", text)), library="device",
                          symbol=low.cuda, severity="warning")


def _converted(ctx: RuleContext, start: int, end: int) -> list[tuple[int, int]] | None:
    """Spans of the values converted to the type named at [start, end): ``T(x)``, ``T{x}``,
    ``static_cast<T>(x)``, ``(T)x``, ``T v(x)`` / ``T v{x}``; None where it converts nothing."""
    data = ctx.data
    after = end
    while data[after : after + 1] in (b" ", b"\t"):
        after += 1
    before = data[max(0, start - 64) : start]
    if re.search(rb"\boperator\s*$", before):
        return None  # a conversion operator's declaration
    if data[after : after + 1] in (b"(", b"{"):
        return _bracketed(ctx, after)
    if _STATIC_CAST_BEFORE.search(before):
        close = _CAST_CLOSE.match(data, end)
        return _bracketed(ctx, close.end() - 1) if close else None
    if _c_cast(data, start, after):
        return _cast_operand(ctx, after + 1)
    if _DIRECT_INIT_AFTER.match(data, end):
        return _direct_init(ctx, start, end)
    return None


def _bracketed(ctx: RuleContext, open_at: int) -> list[tuple[int, int]]:
    """Argument spans of the ``(...)`` or ``{...}`` list at ``open_at`` (``[]`` when empty)."""
    data = ctx.data
    if data[open_at : open_at + 1] == b"(":
        return arguments(ctx, open_at) or []
    close = close_of(ctx, open_at)
    if close is None:
        return []
    # the braced list, read as a parenthesised one: offsets map one to one
    spans = arguments(b"(" + data[open_at + 1 : close] + b")", 0) or []
    return [(begin + open_at, end + open_at) for begin, end in spans]


def _c_cast(data: bytes, start: int, after: int) -> bool:
    """Is the type named at ``start`` the whole of a C-style cast ``(T)`` whose ``)`` is at
    ``after``?"""
    if data[after : after + 1] != b")":
        return False
    before = data[max(0, start - 64) : start]
    match = _CAST_OPEN.search(before)
    if match is None:
        return False
    head = before[: match.start()]
    word = re.search(rb"(\w+)\s*$", head)
    if word is not None:
        return word.group(1) in _KEYWORDS  # f(T), sizeof(T)...: not a cast
    return not re.search(rb"[)\]>]\s*$", head)


_UP_TO_DELIMITER = re.compile(rb"[^;,)}\n]*")


def _cast_operand(ctx: RuleContext, at: int) -> list[tuple[int, int]]:
    """The operand of a C-style cast whose ``)`` ends before ``at``: a literal or a parenthesised
    expression, else the text up to the next delimiter (which proves nothing)."""
    data = ctx.data
    pos = at
    while data[pos : pos + 1] in (b" ", b"\t"):
        pos += 1
    if data[pos : pos + 1] == b"(":
        close = close_of(ctx, pos)
        return [(pos, close + 1 if close is not None else pos + 1)]
    text = data[pos : pos + 64].decode("utf-8", "replace")
    literal = _LITERAL.match(text)
    if literal is not None and not re.match(r"[\w.(\[]", text[literal.end() :]):
        return [(pos, pos + len(literal.group().encode()))]
    rest = _UP_TO_DELIMITER.match(data, pos)  # from pos, not a copy of the file's tail
    return [(pos, max(pos + 1, rest.end()))]


def _direct_init(ctx: RuleContext, start: int, end: int) -> list[tuple[int, int]] | None:
    """Initialisers of ``T v(x);`` / ``T v{x};`` declarations whose type is named at
    [start, end) (the parser may read ``T v(x)`` as a function declaration)."""
    node = ctx.tree.root_node.descendant_for_byte_range(start, end)
    while node is not None and node.type not in ("declaration", "field_declaration",
                                                 "function_definition", "compound_statement"):
        node = node.parent
    if node is None or node.type not in ("declaration", "field_declaration"):
        return None
    type_node = node.child_by_field_name("type")
    if type_node is None or not (type_node.start_byte <= start and end <= type_node.end_byte):
        return None
    spans: list[tuple[int, int]] = []
    in_block = node.parent is not None and node.parent.type == "compound_statement"
    for declarator in node.children_by_field_name("declarator"):
        value = None
        if declarator.type == "init_declarator":
            value = declarator.child_by_field_name("value")
            if value is not None and value.type not in ("argument_list", "initializer_list"):
                value = None
        elif declarator.type == "function_declarator" and in_block:
            value = declarator.child_by_field_name("parameters")
        if value is not None:
            spans += [(c.start_byte, c.end_byte) for c in value.named_children
                      if c.type != "comment"]
    return spans or None
