"""VEC001: a project's own vector-type operators that HIP's vector types define themselves."""

from __future__ import annotations

import re

from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Rule, RuleContext
from migrator.semantic.calls import WORD_BYTES, close_of

# HIP's vector types (float2, int4, ... : HIP_vector_type<T, n> in amd_hip_vector_types.h)
_ELEMENTS = ("char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "longlong",
             "ulonglong", "float", "double")
VECTOR_TYPES = frozenset(f"{element}{n}" for element in _ELEMENTS for n in (1, 2, 3, 4))
# The operators HIP declares as non-templates taking two vectors of one type, so that a user's
# non-template of the same parameters makes every use ambiguous (checked in HIP 5.2.3 and 6.4.3,
# amd_detail/amd_hip_vector_types.h): the members +=, -=, *=, /= (both releases; the other
# compound operators are templates there, which a user's non-template outranks), and the
# hidden friends * and / (6.4.3; 5.2.3 has templates, which HIP keeps for a guarded user's).
COMPOUND = (b"+=", b"-=", b"*=", b"/=")
BINARY = (b"*", b"/")
_ANY_VECTOR = re.compile(rb"\b(?:u?(?:char|short|int|long|longlong)|float|double)[1-4]\b")
# no leading \b: a pattern that starts with its literal is searched for it quickly, not tried
# at every byte (the byte before is tested after)
_OPERATOR = re.compile(rb"operator[ \t]*(\+=|-=|\*=|/=|\*|/)[ \t]*\(")
_BEFORE = re.compile(rb"[ \t]*(?:[A-Za-z_]\w*[ \t]*&?[ \t]*)+")  # specifiers and return type
_PARAMETER = re.compile(rb"\s*(const\s+)?([A-Za-z_]\w*)\s*(&?)\s*(?:[A-Za-z_]\w*)?\s*")
# HIP's own vector types: AMD GPUs (__HIP_PLATFORM_AMD__) and AMD's HIP CPU runtime
# (__HIP_CPU_RT__, whose compound assignments are non-template members too; its binary operators
# are templates, the same element by element); what a guard of an earlier release began with
GUARD = b"#if !defined(__HIP_PLATFORM_AMD__) && !defined(__HIP_CPU_RT__)"
_EARLIER_GUARD = b"#if !defined(__HIP_PLATFORM_AMD__)"


class VectorOperators(Rule):
    """Keep a project's own vector-type operators from colliding with HIP's.

    ## What it does
    Puts a project's own definition (or declaration) of ``operator+=``, ``-=``, ``*=`` or
    ``/=`` on two vectors of one type (``void operator+=(float2 &a, float2 b)``), and of
    ``operator*`` or ``operator/`` on two vectors of one type, under
    ``#if !defined(__HIP_PLATFORM_AMD__) && !defined(__HIP_CPU_RT__)``: on AMD GPUs and AMD's
    HIP CPU runtime, the operator HIP's vector types define does the same element by element;
    elsewhere (HIP on NVIDIA, whose vector types are CUDA's, without operators) the project's
    own is kept. CUDA samples' widely copied
    ``helper_math.h`` defines all of these.

    ## Why is this bad on AMD
    HIP's ``float2``, ``int4``... are ``HIP_vector_type`` classes whose compound assignments are
    members and whose ``*`` and ``/`` are friends (HIP 6.4), taking the same two vectors as the
    project's functions: every ``a += b`` or ``a * b`` on two vectors is then ambiguous and the
    port does not build (HeCBench mdh's ``helper_math.h``; CUDA's vector types have no
    operators, which is why projects defined them). HIP's CPU runtime declares the compound
    assignments as members alike (HeCBench mdh and particles did not build there).

    ## Example
    ```cpp
    inline __host__ __device__ void operator+=(float2 &a, float2 b) { a.x += b.x; a.y += b.y; }
    ```

    ## Use instead
    ```cpp
    #if !defined(__HIP_PLATFORM_AMD__) && !defined(__HIP_CPU_RT__) /* HIP's float2 defines operator+= */
    inline __host__ __device__ void operator+=(float2 &a, float2 b) { a.x += b.x; a.y += b.y; }
    #endif
    ```

    ## Fix safety
    Safe where the project's operator is the element-wise one, as every such operator seen is:
    HIP's applies the operation to each element. A project operator that does something else
    under these names (a dot product as ``*``) would change meaning: such code is rare, and
    the guard line names the operator for review.
    """

    code = "VEC001"
    name = "vector-operator-collision"
    summary = "project operator on vector types HIP defines itself"
    family = "portability"
    fix = "always"

    def check(self, ctx: RuleContext):
        data = ctx.data
        if b"operator" not in data:
            return
        code = ctx.code
        operators = [match for match in _OPERATOR.finditer(code)
                     if match.start() == 0 or code[match.start() - 1] not in WORD_BYTES]
        if not operators or _ANY_VECTOR.search(data) is None:
            return  # (few files define these operators, fewer name a vector type: that
            # pattern, tried at every byte, comes last)
        for match in operators:
            symbol = match.group(1)
            vector = _colliding_type(ctx, match, symbol)
            if vector is None:
                continue
            line = data.rfind(b"\n", 0, match.start()) + 1
            if not _BEFORE.fullmatch(code, line, match.start()) or _guarded(data, line):
                continue
            end = _definition_end(ctx, close_of(ctx, match.end() - 1))
            if end is None:
                continue
            newline = ctx.source.newline
            name = f"operator{symbol.decode()}"
            opening = GUARD + f" /* HIP's {vector} defines {name} */".encode() + newline
            closing = b"#endif" + newline
            if end == len(data) and not data.endswith(b"\n"):
                closing = newline + closing
            yield Diagnostic("VEC001", f"{name}({vector}, {vector}) is HIP's own: the project's "
                             "is kept for other platforms only (uses of both are ambiguous)",
                             match.start(), match.end() - 1,
                             Fix(f"keep {name}({vector}, {vector}) off AMD",
                                 (Edit(line, line, opening), Edit(end, end, closing))),
                             symbol=name, severity="info")


def _colliding_type(ctx: RuleContext, match: re.Match, symbol: bytes) -> str | None:
    """The vector type whose HIP operator this definition collides with, or None."""
    close = close_of(ctx, match.end() - 1)
    if close is None:
        return None
    parameters = ctx.code[match.end() : close].split(b",")
    if len(parameters) != 2:
        return None
    first, second = (_PARAMETER.fullmatch(p) for p in parameters)
    if first is None or second is None or first.group(2) != second.group(2):
        return None
    vector = first.group(2).decode()
    if vector not in VECTOR_TYPES:
        return None
    if symbol in COMPOUND:
        return vector if first.group(3) and not first.group(1) else None
    return vector if not first.group(3) or first.group(1) else None


def _definition_end(ctx: RuleContext, close: int | None) -> int | None:
    """Just past the line that ends the definition (its body's ``}``) or declaration (``;``)."""
    if close is None:
        return None
    code = ctx.code
    after = re.compile(rb"\s*(?:noexcept\s*)?([{;])").match(code, close + 1)
    if after is None:
        return None
    end = after.end() if after.group(1) == b";" else close_of(ctx, after.start(1))
    if end is None:
        return None
    end = end + 1 if after.group(1) == b"{" else end
    newline = ctx.data.find(b"\n", end)
    if ctx.data[end:newline if newline >= 0 else len(ctx.data)].strip():
        return None  # more code after it on its line
    return len(ctx.data) if newline < 0 else newline + 1


def _guarded(data: bytes, line: int) -> bool:
    """Is the line right above this one the guard this rule writes, or an earlier release
    wrote (converted before)?"""
    previous = data.rfind(b"\n", 0, max(line - 1, 0)) + 1
    return data.startswith(_EARLIER_GUARD, previous) and line > 0
