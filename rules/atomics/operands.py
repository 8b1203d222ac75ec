"""What the atomics rules share: the 16-bit types an atomic's pointer argument can point to
(classified from what migrator.semantic.lookup proves it points to), evidence of 16-bit values
where the type cannot be proven, the helpers rocmigrate_atomics.h has and the table of native
HIP atomics."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

from migrator.rule import RuleContext
from migrator.semantic.lookup import pointee, value_declaration
from migrator.semantic.types import IDENTIFIER, is_fundamental, strip_parens
from migrator.versions import parse_version

from ..cuda_types import SIXTEEN_BIT

SUPPORT_HEADER = '"rocmigrate_atomics.h"'
# the CUDA-style bf16 types: CUDA's __nv_bfloat16 becomes HIP's __hip_bfloat16 from ROCm 6.0
# (hip/hip_bf16.h; rules/api/manual.tsv); older HIP has only the hip_bfloat16 struct
NEW_BF16 = (6, 0, 0)
PAIRS = frozenset({"__half2", "__hip_bfloat162"})  # two 16-bit values in one 32-bit word
_TYPE_NAMES = "|".join(sorted(SIXTEEN_BIT, key=len, reverse=True))
_EVIDENCE = re.compile(
    r"\b(?:__float2half\w*|__double2half|__float2bfloat16\w*|__double2bfloat16|__floats2half2_rn|"
    r"__float22half2_rn|__floats2bfloat162_rn|__float22bfloat162_rn|__h(?:add|sub|mul|fma)2?\b|"
    + _TYPE_NAMES + r")\b")
# every _EVIDENCE alternative contains one of the hints or matches the pattern: a substring
# search each (one pattern for the four __h operations: four searches cost three times more)
_EVIDENCE_HINTS = (b"half", b"bfloat16")
_EVIDENCE_OPERATION_HINT = re.compile(rb"__h(?:add|sub|mul|fma)")


def helper_available(canonical: str, rocm: tuple[int, int, int]) -> bool:
    """Does rocmigrate_atomics.h, rendered for ``rocm``, define helpers for this type? (The
    header has the bf16 type the converted code uses at that target.)"""
    if canonical in ("__hip_bfloat16", "__hip_bfloat162"):
        return rocm >= NEW_BF16
    if canonical == "hip_bfloat16":
        return rocm < NEW_BF16
    return canonical in ("__half", "__half2")


@functools.lru_cache(maxsize=1)
def native_atomics() -> dict[tuple[str, str], tuple[int, int, int] | None]:
    """(operation, type) -> the first ROCm whose HIP declares it natively (None: none known)."""
    rows = {}
    for line in Path(__file__).with_name("native_atomics.tsv").read_text().splitlines():
        if not line.strip() or line.startswith("#") or line.startswith("operation\t"):
            continue
        operation, type_name, added = line.split("\t")[:3]
        rows[(operation, type_name)] = None if added == "-" else parse_version(added)
    return rows


def native_in(operation: str, canonical: str, rocm: tuple[int, int, int]) -> bool:
    added = native_atomics().get((operation, canonical))
    return added is not None and rocm >= added


@dataclass(frozen=True)
class Operand:
    """What an atomic's pointer argument points to: a ``known`` type, a ``template`` parameter,
    or ``unknown`` (``type`` then holds the unrecognised name, if any)."""

    kind: str
    type: str = ""
    shared: bool = False

    @property
    def sixteen_bit(self) -> str | None:
        return SIXTEEN_BIT.get(self.type) if self.kind == "known" else None


UNKNOWN = Operand("unknown")


def converted_type(ctx: RuleContext, operand: Operand) -> str | None:
    """The 16-bit type (native_atomics.tsv's name) the operand has in the converted code: where a
    lowering replaces its CUDA type name at the target (``__nv_bfloat16`` -> ``hip_bfloat16``
    before ROCm 6.0, rules/api/lowerings.tsv), the replacement's."""
    if operand.kind != "known":
        return None
    low = ctx.tables.lowerings.get(operand.type)
    if low is not None and low.kind == "name" and low.applies(ctx.settings.rocm):
        # a type lowered onto rocmigrate_bf16.h (empty replacement) keeps its HIP name here
        return SIXTEEN_BIT.get(low.replacement or operand.type)
    return SIXTEEN_BIT.get(operand.type)


def _known(type_name: str) -> bool:
    return type_name in SIXTEEN_BIT or is_fundamental(type_name)


def pointer_operand(ctx: RuleContext, begin: int, end: int) -> Operand:
    """The type the pointer expression at [begin, end) points to, proven lexically: a cast to
    ``T*``, or a name (``p``, ``p + i``, ``&x``, ``&a[i]``) declared in the enclosing function
    (parameters, locals) or at file scope, with every declaration of that name agreeing."""
    return operand_of(ctx, ctx.data[begin:end].decode("utf-8", "replace"), begin)


def operand_of(ctx: RuleContext, text: str, at: int) -> Operand:
    """What the pointer expression ``text``, written at ``at``, points to (see pointer_operand)."""
    found = pointee(ctx, text, at)
    if found is None:
        return UNKNOWN
    if found.template:
        return Operand("template", found.type)
    if not _known(found.type):
        return Operand("unknown", found.type)
    return Operand("known", found.type, found.shared)


def sixteen_bit_evidence(ctx: RuleContext, spans: list[tuple[int, int]], at: int) -> str:
    """Why the argument texts at ``spans`` look like 16-bit floats (a conversion to one, a
    16-bit type's name, a name declared with one), or ''."""
    for begin, end in spans:
        text = ctx.data[begin:end].decode("utf-8", "replace")
        found = _EVIDENCE.search(text)
        if found:
            return found.group()
        plain = strip_parens(text)
        if IDENTIFIER.fullmatch(plain):
            declaration = value_declaration(ctx, plain, at)
            if declaration and declaration.pointers == 0 and declaration.type in SIXTEEN_BIT:
                return f"{plain} is {declaration.type}"
    return ""


def may_involve_sixteen_bit(ctx: RuleContext) -> bool:
    """Could anything in the file be a 16-bit float? False when its text (comments included)
    names no 16-bit type and no conversion or operation producing one: then no operand can be
    proven 16-bit and no argument shows one, and the atomics rules need no declarations (and
    no parse)."""
    found = ctx.cache.get("atm_possible")
    if found is None:
        data = ctx.data
        # most files are settled by the hints (see there), without decoding and running _EVIDENCE
        found = ctx.cache["atm_possible"] = (any(hint in data for hint in _EVIDENCE_HINTS)
                                             or _EVIDENCE_OPERATION_HINT.search(data) is not None) \
            and _EVIDENCE.search(data.decode("utf-8", "replace")) is not None
    return found


def mentions_sixteen_bit(ctx: RuleContext) -> bool:
    """Does the file name a 16-bit floating-point type in code?"""
    found = ctx.cache.get("atm_mentions")
    if found is None:
        pattern = re.compile(rb"\b(?:" + _TYPE_NAMES.encode() + rb")\b")
        found = ctx.cache["atm_mentions"] = any(
            ctx.in_code(m.start()) for m in pattern.finditer(ctx.data))
    return found
