"""LOW001/LOW002: lower CUDA names the target ROCm lacks onto an older HIP API (lowerings.tsv)."""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass

from migrator.apitables import Lowering
from migrator.diagnostics import Applicability, Diagnostic, Edit, Fix
from migrator.rule import Marker, Rule, RuleContext
from migrator.source import Source
from migrator.semantic.calls import arguments, close_of, find_name, lexical_call, trailing_return_type
from migrator.semantic.lookup import type_aliases, value_declaration
from migrator.semantic.types import is_fundamental, normal_type, strip_parens
from migrator.versions import format_version

from ..cuda_types import SIXTEEN_BIT
from ..markers import as_converted, marker_fix, unproven_fix
from ..target_names import replacement_of
from .rename import names_code

SUPPORT_HEADER = '"rocmigrate_bf16.h"'  # templates/support/rocmigrate_bf16.h.j2
# every spelling of a bf16 scalar, CUDA's and HIP's
BF16_TYPES = frozenset(t for t, c in SIXTEEN_BIT.items() if c in ("__hip_bfloat16", "hip_bfloat16"))
# and of a pair of them, rocmigrate_bf16.h's too
BF162_TYPES = frozenset(t for t, c in SIXTEEN_BIT.items() if c == "__hip_bfloat162") | {
    "rocmigrate_bfloat162"}
_BF16 = "|".join(sorted(BF16_TYPES, key=len, reverse=True))
# calls and conversions whose value is a bf16 scalar
_PRODUCER = re.compile(r"(?:__float2bfloat16(?:_r[nzdu])?|__double2bfloat16|" + _BF16 +
                       r"|rocmigrate_(?:float2bfloat16|h(?:add|sub|mul|div|neg|fma)"
                       r"|ushort_as_bfloat16|low2bfloat16|high2bfloat16))\s*[({]"
                       r"|static_cast\s*<\s*(?:const\s+)?(?:" + _BF16 + r")\s*>\s*\(")
# calls whose value is a pair of bf16
_PAIR_PRODUCER = re.compile(r"(?:__float22bfloat162_rn|__floats?2bfloat162_rn|__halves2bfloat162"
                            r"|__bfloat162bfloat162|rocmigrate_(?:float22bfloat162_rn"
                            r"|floats?2bfloat162_rn|halves2bfloat162|bfloat162bfloat162"
                            r"|h(?:add|sub|mul|neg|fma)2|h2div))\s*\(")
_C_CAST = re.compile(r"\(\s*(?:const\s+)?(?:" + _BF16 + r")\s*\)\s*")
_CONTAINER = re.compile(r"(?:std::)?(?:vector|array|valarray)<(" + _BF16 + r")\s*[,>].*")
# Before ROCm 6.0, CUDA's bf16 intrinsics whose names HIP has for __half only: a call with an
# argument proven bf16 (a pair for the pair functions) calls rocmigrate_bf16.h's function.
SCALAR_ARITHMETIC = {name: "rocmigrate_" + name[2:] for name in (
    "__hadd", "__hsub", "__hmul", "__hdiv", "__hneg", "__hfma")}
PAIR_ARITHMETIC = {name: "rocmigrate_" + name[2:] for name in (
    "__hadd2", "__hsub2", "__hmul2", "__h2div", "__hneg2", "__hfma2", "__low2float",
    "__high2float")}
_ARITHMETIC_CALL = re.compile(
    "(" + "|".join(sorted(SCALAR_ARITHMETIC.keys() | PAIR_ARITHMETIC.keys(), key=len,
                          reverse=True)) + r")\s*\(")
_PAIR_RESULTS = frozenset(PAIR_ARITHMETIC) - {"__low2float", "__high2float"}
# lowerings exact for some arguments only, and rocmigrate_bf16.h's function, exact for all
EXACT_FOR_ALL = {"__float2bfloat16": "rocmigrate_float2bfloat16",
                 "__float2bfloat16_rn": "rocmigrate_float2bfloat16",
                 "__bfloat162float": "rocmigrate_bfloat162float"}
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


def bf16_value(ctx: RuleContext, text: str, at: int, pair: bool = False) -> bool:
    """Is the expression ``text`` (written at ``at``) proven to be a bf16 scalar (or, with
    ``pair``, a pair of them): a conversion to one, or a name declared with a bf16 type (``x``,
    ``*p``, ``p[i]``, ``v[i]`` of a ``std::vector`` of bf16)?"""
    text = strip_parens(text)
    producer = (_PAIR_PRODUCER if pair else _PRODUCER).match(text)
    if producer is not None:  # the whole text is one conversion
        raw = text.encode()
        return close_of(raw, len(text[: producer.end() - 1].encode())) == len(raw) - 1
    arithmetic = _ARITHMETIC_CALL.match(text)
    if arithmetic is not None and (arithmetic.group(1) in _PAIR_RESULTS) == pair:
        # __hadd(x, y) and the like: bf16 (a pair) where an argument is, as CUDA's overloads
        raw = text.encode()
        spans = arguments(raw, arithmetic.end(1))
        return (spans is not None and close_of(raw, arithmetic.end() - 1) == len(raw) - 1
                and any(bf16_value(ctx, raw[b:e].decode("utf-8", "replace"), at, pair)
                        for b, e in spans))
    cast = None if pair else _C_CAST.match(text)
    if cast is not None:  # (T)x, (T)(...)
        operand = text[cast.end():].encode()
        return (re.fullmatch(rb"[\w.]+", operand) is not None
                or operand[:1] == b"(" and close_of(operand, 0) == len(operand) - 1)
    return _declared(ctx, text, at, BF162_TYPES if pair else BF16_TYPES, containers=not pair)


def _declared(ctx: RuleContext, text: str, at: int, types: frozenset[str],
              containers: bool = False) -> bool:
    """Is ``text`` a name declared with one of ``types`` (``x``, ``*p``, ``p[i]``; with
    ``containers``, ``v[i]`` of a ``std::vector`` of bf16 too)?"""
    found = _declared_type(ctx, text, at)
    if found is None:
        return False
    type_name, levels = found
    container = _CONTAINER.fullmatch(type_name.replace(" ", "")) if containers else None
    return (type_name in types and levels == 0) or (container is not None and levels == -1)


def _declared_type(ctx: RuleContext, text: str, at: int) -> tuple[str, int] | None:
    """(declared type, pointer levels left) of ``text`` where it is a name (``x``, ``*p``,
    ``p[i]``) whose declaration is found, else None."""
    derefs = 0
    text = strip_parens(text)
    while text.startswith("*"):
        derefs += 1
        text = strip_parens(text[1:])
    element = _ELEMENT.fullmatch(text)
    if element is None:
        return None
    declaration = value_declaration(ctx, element.group(1), at)
    if declaration is None:
        return None
    return declaration.type, declaration.pointers - derefs - element.group(2).count("[")


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
    ``<cuda_bf16.h>`` to ``<hip/hip_bfloat16.h>``. What ``hip_bfloat16`` lacks is lowered onto
    the support header ``rocmigrate_bf16.h``, written beside the output on ``hip_bfloat16``:
    ``__nv_bfloat162`` becomes ``rocmigrate_bfloat162``, the pair conversions and bit casts
    (``__float2bfloat162_rn``, ``__float22bfloat162_rn``, ``__bfloat1622float2``,
    ``__halves2bfloat162``, ``__ushort_as_bfloat16``...) their ``rocmigrate_`` functions, and
    ``__hadd``, ``__hsub``, ``__hmul``, ``__hdiv``, ``__hneg``, ``__hfma``, their pair forms,
    ``__low2float`` and ``__high2float`` (HIP 5.x has them for ``__half`` only) become
    ``rocmigrate_hadd``... where an argument is proven bf16 (a pair). A copy-initialisation
    (``__nv_bfloat16 x = 0.f;``, ``T a[] = {x, y}``), an assignment (``=``, ``+=``...) to a
    bf16 (a half of a pair too), a return from a function or a lambda that returns one (a
    trailing ``-> __nv_bfloat16`` too), an argument where every function of that name declared
    in the project takes one, and a bf16 member of an aggregate (a struct defined in the file
    with no constructor, base or access specifier) initialised from a brace list (``S s = {x,
    2};``, ``S s{x, 2};``, by position or designator, nested lists too) convert implicitly in
    CUDA and do not
    build against ``hip_bfloat16``'s explicit float constructor; a ``typedef`` or ``using``
    alias of the type is the type in each of them (``bf16 x = f;``). Each value
    gets its conversion written (``hip_bfloat16(0.f)`` for a literal float holds exactly,
    ``rocmigrate_float2bfloat16(f)`` for a float: a name, a member of a struct defined in the
    file, a call of a function declared there, an arithmetic expression of them), a bf16 value
    is left, and a value of another type (a double, an int) or of a type rocmigrate cannot read
    (a member function's value) is marked; so is a default member initialiser ``T v{x};`` that
    is not exact (a float's conversion is written there too). The first call of a function
    template with bf16 as a template argument (``g<__nv_bfloat16>(x)``), or with a bf16
    argument where it deduces its type parameter (``g(p)`` of ``g(T* p)``), is marked where the
    template, or one it calls with that type (read in the file and in the project files it
    includes), converts a value of arithmetic type to it implicitly (``T v = 0;``, ``return
    x;``, ``p[i] = f;``): the fix belongs in the template, for every type it is used with. So
    is the first use of a class template with a bf16 argument (``Acc<__nv_bfloat16> a;``) where
    its default member initialisers (``T v = 0;``) or its member functions (in its body or
    outside it: ``Acc<T>::add``) convert one. From ROCm 6.0 API001 renames the CUDA names to HIP's (``__hip_bfloat16``); only
    ``__float2bfloat162_rn`` and ``__floats2bfloat162_rn`` (missing from HIP 6.4.3) and the
    bit casts (which HIPIFY's tables do not know) are lowered there, onto the header written
    for that target. Names inside ``#define`` bodies, and functions that are not called, are
    reported (LOW002), not rewritten. WRP001 applies the table's warp-sync rows.

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
    #include "rocmigrate_bf16.h"
    #include <hip/hip_bfloat16.h>
    __global__ void twice(hip_bfloat16* v) {
      v[threadIdx.x] = rocmigrate_float2bfloat16(static_cast<float>(v[threadIdx.x]) * 2.0f);
    }
    ```
    That is ``convert --rocm 5.2``: ``hip_bfloat16(x)`` would keep a NaN's payload where CUDA
    returns ``0x7fff``, so a value's conversion goes through ``rocmigrate_bf16.h``; a
    literal's is ``hip_bfloat16(1.0f)``.

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
    fails to build rather than change meaning; LOW001 writes those of copy-initialisations it
    can prove exact. Safe, for every argument they take: ``rocmigrate_bf16.h``'s functions,
    which round as CUDA does (to nearest even once, any NaN result ``0x7fff``; an fma rounds to
    odd in float first). Compared with CUDA 13's intrinsics on an H200 (the header built
    through rocmigrate's NVIDIA headers), ``__hadd``, ``__hsub``, ``__hmul``, ``__hdiv`` and
    ``__hfma`` agree on all 2^32 operand pairs, ``__float2bfloat16`` on all 2^32 floats, the
    pair forms on 2^28 random inputs; HIP 5.2's build agrees with an exact rational reference
    (tests). ``rocmigrate_float2bfloat16(x)`` is exact for every float (CUDA's function takes
    a float too); ``rocmigrate_bfloat162float(x)`` takes a bf16 only, so that an argument of
    another type, which CUDA rounds to bf16 first, fails to build: where the argument is
    declared with another type the site is marked instead. The bf16 overloads are lowered only
    where an argument is proven bf16: CUDA then calls the bf16 overload or rejects the call.
    A conversion through an alias of the type (``bf16(x)``) of a float is written
    ``rocmigrate_float2bfloat16(x)``, exact for every float; of a double or an integer it is
    marked, as the type's is. Not seen: an
    alias's conversion of a value whose type is not read (it builds, a NaN keeping its
    payload); implicit conversions in function templates whose bf16 argument rocmigrate
    cannot type (a member, a call), in an aggregate's members after one whose braces are
    elided, and of values whose type is not read inside a larger expression: they fail to
    build.
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
        # one scan for the bf16 names (most of the rows) instead of one for each: a bf16 name,
        # and a bf16 argument's proof (a type, a conversion), says bfloat16
        says_bf16 = b"bfloat16" in ctx.data
        rows = {name.encode(): low for name, low in ctx.tables.lowerings.items()
                if low.rule == self.code and low.kind != "header" and low.applies(rocm)
                and (says_bf16 or "bfloat16" not in name) and name.encode() in ctx.data}
        overloads = {}
        bf16 = ctx.tables.lowerings.get("__nv_bfloat16")
        if says_bf16 and bf16 is not None and bf16.applies(rocm):  # CUDA's API from ROCm 6.0
            overloads = {name.encode(): (name, pair) for table, pair in (
                (SCALAR_ARITHMETIC, False), (PAIR_ARITHMETIC, True)) for name in table
                if name.encode() in ctx.data}
        if overloads or (says_bf16 and bf16 is not None and bf16.applies(rocm)):
            # (hip_bfloat16 too: a conversion that waited a round for a fix inside its value)
            yield from self._implicit_values(ctx, replacement_of(bf16))
        for name, start, end in find_name(ctx, rows.keys() | overloads.keys()):
            if not names_code(ctx, start, end):
                continue
            if name in overloads:
                found = self._overload(ctx, *overloads[name], start, end)
                if found is not None:
                    yield found
                continue
            low = rows[name]
            if low.kind == "name":
                yield from self._name(ctx, low, start, end)
            else:
                yield self._call(ctx, low, start, end)

    def _implicit_values(self, ctx: RuleContext, replacement: str):
        """``x = v`` where ``x`` is proven bf16, ``return v;`` in a function that returns bf16 and
        ``f(v)`` where every ``f`` declared in the project takes a bf16 there, ``v`` not proven
        bf16: CUDA converts ``v`` implicitly, ``replacement`` (explicit float
        constructor) does not. A literal float holds exactly -> ``T(v)``, a float (a name, a
        member, a call or an arithmetic expression of float type) ->
        ``rocmigrate_float2bfloat16(v)``; a value of another arithmetic type (a double, rounded
        once by CUDA; an int), a member or a call of a type rocmigrate cannot read is marked.
        Other values (names and expressions of unread type) are not judged: most are bf16."""
        instantiations: dict[str, object] = {}  # template name -> its first call with bf16
        classes: dict[str, object] = {}  # class template name -> its first use with bf16
        stack = [ctx.tree.root_node]
        while stack:
            node = stack.pop()
            stack.extend(node.children)
            values: list = []
            if node.type == "template_type":
                name = node.child_by_field_name("name")
                if name is not None and _is_class_template(ctx, ctx.text(name)) and \
                        _bf16_positions(ctx, node) and (
                        ctx.text(name) not in classes
                        or classes[ctx.text(name)].start_byte > node.start_byte):
                    classes[ctx.text(name)] = node
            elif node.type == "call_expression":
                function = node.child_by_field_name("function")
                called = _instantiation(ctx, node, function) if function is not None else None
                if called is not None and (
                        called not in instantiations
                        or instantiations[called].start_byte > node.start_byte):
                    instantiations[called] = node
                listed = node.child_by_field_name("arguments")
                if function is not None and function.type == "identifier" and listed is not None:
                    given = [argument for argument in listed.named_children
                             if argument.type != "comment"]
                    if len(given) == 1 and ctx.text(function) not in BF16_TYPES and \
                            _resolved(ctx, ctx.text(function)) in BF16_TYPES:
                        yield from self._alias_conversion(ctx, function, given[0])
                    positions = _bf16_parameters(ctx, ctx.text(function), len(given))
                    values = [given[i] for i in sorted(positions)]
                    how = f"passed to {ctx.text(function)} as"
            elif node.type == "assignment_expression":
                left, value = node.child_by_field_name("left"), node.child_by_field_name("right")
                if _assigns(node) and left is not None and value is not None and \
                        _kind(ctx, left) == "bf16":
                    values, how = [value], "assigned to"
            elif node.type == "return_statement":
                value = node.named_children[0] if node.named_child_count else None
                if value is not None and value.type not in ("comment", "initializer_list") and \
                        _returns_bf16(ctx, node):
                    values, how = [value], "returned as"
            elif node.type in ("declaration", "field_declaration"):
                values, how = _initialised(ctx, node), "initialising"
            for value in values:
                yield from self._implicit_value(ctx, replacement, value, how)
        yield from self._instantiations(ctx, replacement, instantiations)
        for name, use in classes.items():
            found = _class_template_conversions(ctx, name, _bf16_positions(ctx, use))
            if found:
                yield _template_marker(ctx, replacement, use, found)

    @staticmethod
    def _implicit_value(ctx: RuleContext, replacement: str, value, how: str):
        """_implicit_values for one value (``how``: "assigned to"...). A value copy-initialising
        a variable of an alias of the type is judged as one of the type itself (a value of
        unread type marked)."""
        verdict = _judged(ctx, value, replacement)
        if verdict is None or verdict == "unproven" and not _unread(value) and \
                _kind(ctx, value) is None and not _copy_initialises_alias(ctx, value):
            return
        begin, finish = value.start_byte, value.end_byte
        if verdict == "unproven":
            shown = _shown(ctx, [(begin, finish)])
            message = (f"{shown} {how} a bf16: if it is not one, its implicit "
                       f"conversion to {replacement} does not build ({replacement}'s float "
                       "constructor is explicit) and rocmigrate cannot prove its type here: "
                       f"write rocmigrate_float2bfloat16({shown}) for a float")
            yield Diagnostic("LOW001", message, begin, finish,
                             marker_fix(ctx, begin, Marker("LOW001", message)),
                             library="device", symbol="__nv_bfloat16")
            return
        text = ctx.text(value)
        includes = (SUPPORT_HEADER,) if verdict.startswith("rocmigrate_") else ()
        yield Diagnostic("LOW001", f"{text} {how} a bf16 -> {verdict}({text})", begin, finish,
                         Fix(f"convert with {verdict}", (Edit(begin, begin, verdict.encode() + b"("),
                                                         Edit(finish, finish, b")")),
                             includes=includes),
                         library="device", symbol="__nv_bfloat16", severity="info")

    @staticmethod
    def _alias_conversion(ctx: RuleContext, alias, value):
        """``bf16(x)`` through the file's alias of the type, converted as the type's own
        ``__nv_bfloat16(x)``: left where exact (a literal float holds exactly, a bf16), a float's
        written ``rocmigrate_float2bfloat16(x)`` (hip_bfloat16's constructor keeps a NaN's
        payload), a double's or an integer's marked (CUDA rounds it to bf16 once, hip_bfloat16
        through float); a value of unread type is left (it builds, as most are floats)."""
        literal = _literal(ctx.text(value))
        kind = _kind(ctx, value)
        if literal is not None and _float_exact(literal) or kind not in ("float", "double",
                                                                           "integer"):
            return
        name, begin, finish = ctx.text(alias), alias.start_byte, alias.end_byte
        function = EXACT_FOR_ALL["__float2bfloat16"]
        if kind == "float":
            yield Diagnostic("LOW001", f"{name}(x) of a float -> {function}(x) (rocmigrate_bf16.h:"
                             f" {name}'s constructor keeps a NaN's payload, CUDA makes it "
                             "0x7fff)", begin, finish, _lowering(function, begin, finish),
                             library="device", symbol="__nv_bfloat16", severity="info")
            return
        shown = _shown(ctx, [(value.start_byte, value.end_byte)])
        what = "a double" if kind == "double" else "an integer"
        message = (f"{name}({shown}): CUDA rounds {what} to bf16 once, {name} (hip_bfloat16) "
                   f"rounds it through float: write {function}(x) of a float where that is "
                   "meant")
        yield Diagnostic("LOW001", message, begin, finish,
                         marker_fix(ctx, begin, Marker("LOW001", message)), library="device",
                         symbol="__nv_bfloat16", severity="warning")

    def _instantiations(self, ctx: RuleContext, replacement: str, calls: dict):
        """The first call of each function template that names bf16 as a template argument
        (``g<__nv_bfloat16>(x)``) or passes a bf16 where it deduces one (``g(p)`` of ``T* p``
        with bf16 ``p``), marked where the template, or one it calls with that type, converts
        a value of arithmetic type to it implicitly (``T v = 0;``,
        ``return x;`` of a float, ``p[i] = f;``): CUDA's bf16 converts it, ``replacement``
        does not build. The template is read in the file or in the project files it includes;
        the fix (an explicit conversion) is the template's, for every type it is used with."""
        for name, call in calls.items():
            function = call.child_by_field_name("function")
            found = _template_conversions(ctx, name, _bf16_positions(ctx, function),
                                          _bf16_arguments(ctx, ctx, call, BF16_TYPES), set())
            if found:
                yield _template_marker(ctx, replacement, call, found)

    def _overload(self, ctx: RuleContext, name: str, pair: bool, start: int,
                  end: int) -> Diagnostic | None:
        """``__hadd(a, b)`` and the like on bf16: rocmigrate_bf16.h's function where an argument
        is proven bf16 (CUDA picks the bf16 overload then, or rejects the call); else left,
        being HIP's __half function or unproven."""
        call = lexical_call(ctx, start, end)
        if call is None or call == "macro" or not any(
                bf16_value(ctx, ctx.data[b:e].decode("utf-8", "replace"), start, pair)
                for b, e in call.arguments):
            return None
        replacement = (PAIR_ARITHMETIC if pair else SCALAR_ARITHMETIC)[name]
        kind = "a bf16 pair" if pair else "bf16"
        return Diagnostic(
            "LOW001", f"{name} on {kind} -> {replacement} (rocmigrate_bf16.h): ROCm "
            f"{format_version(ctx.settings.rocm)} has {name} for __half only", start, end,
            _lowering(replacement, start, end), library="device", symbol=name, severity="info")

    def _name(self, ctx: RuleContext, low: Lowering, start: int, end: int):
        if ctx.in_directive(start):
            yield self._report(ctx, low, start, end, "write {replacement} in this macro by hand")
            return
        replacement = replacement_of(low)
        rewrite = _lowering(replacement, start, end)
        spans = _converted(ctx, start, end)
        # explicit float constructor: copy-initialisations convert, the scalar's own values and
        # each member of the pair's ({x, y}: rocmigrate_bfloat162 is an aggregate of two)
        element = (replacement if low.exact == "literal"
                   else replacement_of(ctx.tables.lowerings["__nv_bfloat16"])
                   if low.cuda == "__nv_bfloat162" else None)
        if element is not None:
            edits, unproven = self._implicit_conversions(ctx, element, start, end,
                                                         pair=element != replacement)
            if edits:
                support = any(edit.text.startswith(b"rocmigrate_") for edit in edits)
                rewrite = Fix(rewrite.title, rewrite.edits + tuple(edits),
                              includes=(SUPPORT_HEADER,) if support else ())
            for begin, finish in unproven:
                shown = _shown(ctx, [(begin, finish)])
                text = (f"{shown}: if it is not a bf16, its implicit conversion to {element} "
                        f"does not build ({element}'s float constructor is explicit) and "
                        "rocmigrate cannot prove its type here: write "
                        f"rocmigrate_float2bfloat16({shown}) for a float, as CUDA converts it")
                yield self._report_as(ctx, low, "LOW001", begin, finish, text)
        if spans and element == replacement and _declaration(ctx, start, end) is not None:
            # T v{x}, T v(x), struct S { T v{x}; }: a float's conversion is written exact
            kinds = {span: _kind(ctx, _node_at(ctx, *span)) for span in spans
                     if not self._exact_conversion(ctx, low, span)}
            floats = [span for span, kind in kinds.items() if kind == "float"]
            function = EXACT_FOR_ALL["__float2bfloat16"].encode()
            rewrite = Fix(rewrite.title, rewrite.edits + tuple(
                edit for begin, finish in floats
                for edit in (Edit(begin, begin, function + b"("), Edit(finish, finish, b")"))),
                includes=(SUPPORT_HEADER,) if floats else rewrite.includes)
            spans = [span for span in spans if kinds.get(span) not in ("float", "bf16")]
        if spans is None or all(self._exact_conversion(ctx, low, span) for span in spans):
            yield Diagnostic("LOW001", f"{low.cuda} -> {replacement} ({self._why(ctx, low)})",
                             start, end, rewrite, library="device", symbol=low.cuda,
                             severity="info")
            return
        text = (f"{low.cuda} -> {replacement}: the conversion of {_shown(ctx, spans)} to it "
                "is exact only for a literal that float holds exactly or a value of the type "
                f"itself, which rocmigrate cannot prove here: {low.note}")
        yield self._unsafe(ctx, low, start, end, text, rewrite)

    @staticmethod
    def _implicit_conversions(ctx: RuleContext, replacement: str, start: int, end: int,
                              pair: bool = False) -> tuple[list[Edit], list[tuple[int, int]]]:
        """The values copy-initialised to the type named at [start, end) (``T v = x;``,
        ``T a[] = {x, y};``, a default member initialiser; with ``pair``, the two members of
        each pair ``P p = {x, y};``), which CUDA converts implicitly and ``replacement`` (whose
        float constructor is explicit) does not: the edits that write the conversions that
        need it (a literal float holds exactly -> ``T(x)``, a float ->
        ``rocmigrate_float2bfloat16(x)``, both exact), and the values whose type rocmigrate
        cannot prove."""
        edits: list[Edit] = []
        unproven: list[tuple[int, int]] = []
        values = _copy_initialised(ctx, start, end)
        if pair:  # a pair's members: of {x, y}, of each {x, y} of an array; not a pair value
            values = [member for value in values
                      for member in (value.named_children if value.type == "initializer_list"
                                     else [value] if value.parent.type == "initializer_list"
                                     else ())
                      if member.type != "comment"]
        for value in values:
            begin, finish = value.start_byte, value.end_byte
            function = _judged(ctx, value, replacement)
            if function is None or function == "unproven" and pair and _kind(ctx, value) is None:
                continue  # (a pair's members: given.x, a call... mostly bf16; not judged)
            if function == "unproven":
                unproven.append((begin, finish))
                continue
            edits += [Edit(begin, begin, function.encode() + b"("), Edit(finish, finish, b")")]
        return edits, unproven

    def _call(self, ctx: RuleContext, low: Lowering, start: int, end: int) -> Diagnostic:
        call = lexical_call(ctx, start, end)
        if call == "macro":
            return self._report(ctx, low, start, end,
                                "use {replacement}(...) in this macro by hand")
        if call is None:
            return self._report(ctx, low, start, end,
                                "it is not called here: use {replacement}(...) by hand")
        rewrite = _lowering(replacement_of(low), start, end)
        args = call.arguments
        if low.exact == "always" or (low.exact == "literal" and args and all(
                _literal(ctx.data[b:e].decode("utf-8", "replace")) for b, e in args)) or (
                low.exact == "bf16" and len(args) == 1 and bf16_value(
                    ctx, ctx.data[args[0][0]:args[0][1]].decode("utf-8", "replace"), start)):
            return Diagnostic("LOW001", f"{low.cuda} -> {replacement_of(low)} "
                              f"({self._why(ctx, low)})", start, end, rewrite, library="device",
                              symbol=low.cuda, severity="info")
        exact = EXACT_FOR_ALL.get(low.cuda)
        if exact is not None and not (low.exact == "bf16" and _other_than_bf16(ctx, args)):
            # the support header's function is exact for every argument it takes
            return Diagnostic("LOW001", f"{low.cuda} -> {exact} (rocmigrate_bf16.h; "
                              f"{self._why(ctx, low)})", start, end,
                              _lowering(exact, start, end), library="device", symbol=low.cuda,
                              severity="info")
        shown = _shown(ctx, args)
        proven = "a numeric literal" if low.exact == "literal" else "a bf16 value"
        text = (f"{low.cuda}({shown}) -> {replacement_of(low)}({shown}) is exact only for {proven}, "
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
                + advice.format(replacement=replacement_of(low)) + f" ({low.note})")
        return self._report_as(ctx, low, "LOW002", start, end, text)

    @staticmethod
    def _report_as(ctx, low, code: str, start: int, end: int, text: str) -> Diagnostic:
        return Diagnostic(code, text, start, end, marker_fix(ctx, start, Marker(code, text)),
                          library="device", symbol=low.cuda, severity="warning")


def _other_than_bf16(ctx: RuleContext, args: list[tuple[int, int]]) -> bool:
    """Is the one argument a name declared with another type than bf16 (which CUDA's
    __bfloat162float converts to bf16 first, and rocmigrate_bfloat162float does not take)?"""
    if len(args) != 1:
        return False
    (begin, finish), = args
    text = ctx.data[begin:finish].decode("utf-8", "replace")
    return _declared_type(ctx, text, begin) is not None and not bf16_value(ctx, text, begin)


def _lowering(replacement: str, start: int, end: int) -> Fix:
    """The fix that writes ``replacement`` over [start, end), with the support header where it
    names one of its functions or types."""
    support = (SUPPORT_HEADER,) if replacement.startswith("rocmigrate_") else ()
    return Fix(f"lower to {replacement}", (Edit(start, end, replacement.encode()),),
               includes=support)


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
    if before.rstrip().endswith(b"->") and trailing_return_type(ctx, start):
        return None  # `-> T {`: the function's body follows, no T{x}
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


def _declaration(ctx: RuleContext, start: int, end: int):
    """The declaration (a tree node) whose type is named at [start, end), or None."""
    node = ctx.tree.root_node.descendant_for_byte_range(start, end)
    while node is not None and node.type not in ("declaration", "field_declaration",
                                                 "function_definition", "compound_statement"):
        node = node.parent
    if node is None or node.type not in ("declaration", "field_declaration"):
        return None
    type_node = node.child_by_field_name("type")
    if type_node is None or not (type_node.start_byte <= start and end <= type_node.end_byte):
        return None
    return node


def _bf16_expression(ctx: RuleContext, node) -> bool:
    """Is the expression ``node`` proven a bf16 scalar: ``bf16_value``, or the sum, difference,
    product, quotient or negation of such (bf16 arithmetic, CUDA's and hip_bfloat16's)?"""
    while node.type == "parenthesized_expression" and node.named_child_count == 1:
        node = node.named_children[0]
    if node.type == "binary_expression":
        operator = node.child_by_field_name("operator")
        return (operator is not None and operator.type in ("+", "-", "*", "/")
                and all(_bf16_expression(ctx, node.child_by_field_name(side))
                        for side in ("left", "right")))
    if node.type == "unary_expression":
        operator = node.child_by_field_name("operator")
        return (operator is not None and operator.type in ("-", "+")
                and _bf16_expression(ctx, node.child_by_field_name("argument")))
    return bf16_value(ctx, ctx.text(node), node.start_byte)


# CUDA's functions (and rocmigrate_bf16.h's) whose value is a float
_FLOAT_FUNCTIONS = frozenset({
    "__bfloat162float", "__low2float", "__high2float", "__half2float", "rocmigrate_bfloat162float",
    "rocmigrate_low2float", "rocmigrate_high2float", "sqrtf", "rsqrtf", "cbrtf", "expf", "exp2f",
    "__expf", "logf", "log2f", "__logf", "powf", "__powf", "fabsf", "fmaxf", "fminf", "fmaf",
    "__fmaf_rn", "__fadd_rn", "__fmul_rn", "__fdividef", "__frcp_rn", "__saturatef", "tanhf",
    "sinf", "cosf", "__sinf", "__cosf", "erff", "ceilf", "floorf", "roundf", "truncf"})
# CUDA's functions whose value is a bf16 scalar (lowered onto rocmigrate_bf16.h's or HIP's)
_BF16_FUNCTION = re.compile(r"__\w+2bfloat16(?:_r[nzdu])?|__u?short_as_bfloat16")
_ARITHMETIC_OPERATORS = frozenset({"+", "-", "*", "/", "%"})
_BOOLEAN_OPERATORS = frozenset({"==", "!=", "<", ">", "<=", ">=", "&&", "||"})


def _kind(ctx: RuleContext, node) -> str | None:
    """The kind of the expression ``node`` where rocmigrate can read it: "bf16", "float",
    "double" (long double too) or "integer" (bool and char too), else None. Read from literals,
    casts, declarations (names, members of structs defined in the file, functions declared
    there) and the usual arithmetic conversions; bf16 mixed with another type is not read (CUDA
    rejects it as ambiguous, hip_bfloat16 computes in float)."""
    while node.type == "parenthesized_expression" and node.named_child_count == 1:
        node = node.named_children[0]
    kind = node.type
    if kind == "number_literal":
        literal = _LITERAL.fullmatch(ctx.text(node))
        if literal is None:
            return None
        hexadecimal = literal.group("hex")
        floating = (any(c in hexadecimal for c in ".pP") if hexadecimal is not None
                    else any(c in literal.group("dec") for c in ".eE"))
        suffix = literal.group("suffix").lower()
        return ("float" if "f" in suffix else "double") if floating else "integer"
    if kind in ("true", "false", "char_literal"):
        return "integer"
    if kind in ("binary_expression", "unary_expression", "conditional_expression"):
        return _operation_kind(ctx, node)
    if kind == "cast_expression":
        type_node = node.child_by_field_name("type")
        return _type_kind(ctx, ctx.text(type_node), 0) if type_node is not None else None
    if bf16_value(ctx, ctx.text(node), node.start_byte):
        return "bf16"
    if kind == "call_expression":
        return _call_kind(ctx, node)
    typed = _typed(ctx, node)
    if typed is None:
        return None
    type_name, pointers = typed
    container = _CONTAINER.fullmatch(type_name.replace(" ", ""))
    return ("bf16" if container is not None and pointers == -1
            else _type_kind(ctx, type_name, pointers))


def _operation_kind(ctx: RuleContext, node) -> str | None:
    """_kind of a unary, binary or conditional expression."""
    if node.type == "conditional_expression":
        kinds = {_kind(ctx, node.child_by_field_name(side))
                 for side in ("consequence", "alternative")}
        return kinds.pop() if len(kinds) == 1 else None
    operator = node.child_by_field_name("operator")
    operator = operator.type if operator is not None else ""
    if operator in _BOOLEAN_OPERATORS or operator == "!":
        return "integer"
    if node.type == "unary_expression":
        inner = _kind(ctx, node.child_by_field_name("argument"))
        return inner if operator in ("-", "+") or inner == "integer" else None
    kinds = {_kind(ctx, node.child_by_field_name(side)) for side in ("left", "right")}
    if None in kinds or operator not in _ARITHMETIC_OPERATORS and kinds != {"integer"}:
        return None
    if "bf16" in kinds:
        return "bf16" if kinds == {"bf16"} and operator != "%" else None
    # the usual arithmetic conversions
    return next(kind for kind in ("double", "float", "integer") if kind in kinds)


def _type_kind(ctx: RuleContext, type_text: str, pointers: int) -> str | None:
    """_kind of a value declared with ``type_text`` (or the file's alias of a type) and
    ``pointers`` levels left."""
    type_name = _resolved(ctx, type_text)
    if pointers != 0 or not type_name:
        return None
    if type_name in BF16_TYPES:
        return "bf16"
    if type_name == "float":
        return "float"
    if type_name in ("double", "long double"):
        return "double"
    return "integer" if is_fundamental(type_name) else None


def _call_kind(ctx: RuleContext, node) -> str | None:
    """_kind of a call: a conversion (``static_cast<T>(x)``, ``float(x)``), a float function of
    CUDA's, or a function whose every declaration in the file returns values of one kind."""
    function = node.child_by_field_name("function")
    if function is None:
        return None
    if function.type == "primitive_type":
        return _type_kind(ctx, ctx.text(function), 0)
    if function.type == "field_expression":  # s.f(): a member function of a struct here
        typed = _member(ctx, function, "()")
        return _type_kind(ctx, *typed) if typed is not None else None
    template_arguments: list[str] = []
    if function.type == "template_function":
        name, listed = (function.child_by_field_name(f) for f in ("name", "arguments"))
        if name is None or listed is None:
            return None
        template_arguments = [ctx.text(argument) for argument in listed.named_children]
        if ctx.text(name) == "static_cast":
            return _type_kind(ctx, template_arguments[0], 0) if template_arguments else None
        function = name
    if function.type != "identifier":
        return None
    name = ctx.text(function)
    if name in _FLOAT_FUNCTIONS:
        return "float"
    if _BF16_FUNCTION.fullmatch(name):
        return "bf16"
    if name in type_aliases(ctx):  # a conversion to a typedef of a type: bf16(x)
        return _type_kind(ctx, name, 0)
    listed = node.child_by_field_name("arguments")
    given = [argument for argument in (listed.named_children if listed is not None else ())
             if argument.type != "comment"]
    candidates = [declared for declared in _function_kinds(ctx).get(name, ())
                  if declared.least <= len(given) <= declared.most]
    if not candidates and not template_arguments:
        return _lambda_kind(ctx, node, name)
    kinds = {declared.returned(ctx, template_arguments) for declared in candidates}
    if len(kinds) > 1:  # overloads: those whose parameters have the arguments' kinds
        given_kinds = [_kind(ctx, argument) for argument in given]
        kinds = {declared.returned(ctx, template_arguments) for declared in candidates
                 if all(kind is None or kind == parameter
                        for kind, parameter in zip(given_kinds, declared.parameters))}
    return kinds.pop() if len(kinds) == 1 else None


def _lambda_kind(ctx: RuleContext, call, name: str) -> str | None:
    """_kind of the call of the lambda ``name`` declared (``auto name = [...](...) -> T {...}``)
    before ``call`` in a block around it (or the file), read from its trailing return type."""
    node = call.parent
    while node is not None:
        if node.type in ("compound_statement", "translation_unit"):
            for child in node.named_children:
                if child.start_byte >= call.start_byte:
                    break
                type_node = child.child_by_field_name("type")
                if child.type != "declaration" or type_node is None or \
                        ctx.text(type_node) != "auto":
                    continue
                for declarator in child.children_by_field_name("declarator"):
                    target = declarator.child_by_field_name("declarator")
                    value = declarator.child_by_field_name("value")
                    if declarator.type == "init_declarator" and target is not None and \
                            ctx.text(target) == name and value is not None:
                        return _lambda_return_kind(ctx, value)
        node = node.parent
    return None


def _lambda_return_kind(ctx: RuleContext, lambda_) -> str | None:
    """_kind of the value of a lambda expression with a trailing return type, else None."""
    if lambda_.type != "lambda_expression":
        return None
    declarator = lambda_.child_by_field_name("declarator")
    trailing = next((child for child in (declarator.children if declarator is not None else ())
                     if child.type == "trailing_return_type"), None)
    if trailing is None or not trailing.named_child_count:
        return None
    return _type_kind(ctx, ctx.text(trailing.named_children[0]), 0)


@dataclass(frozen=True)
class _Declared:
    """A function declaration as _call_kind reads it."""

    returns: str | int | None  # a _kind, or the index of the template parameter returned
    parameters: tuple[str | None, ...]  # the _kind of each parameter
    least: int  # arguments it takes, at least
    most: float  # and at most

    def returned(self, ctx: RuleContext, template_arguments: list[str]) -> str | None:
        """The _kind of its value, called with ``template_arguments`` (written in ``ctx``)."""
        if not isinstance(self.returns, int):
            return self.returns
        return (_type_kind(ctx, template_arguments[self.returns], 0)
                if self.returns < len(template_arguments) else None)


def _function_kinds(ctx: RuleContext) -> dict[str, list[_Declared]]:
    """The declarations (and definitions) of each function the file declares by a plain
    name."""
    found = ctx.cache.get("LOW001.functions")
    if found is not None:
        return found
    found = {}
    stack = [ctx.tree.root_node]
    while stack:
        node = stack.pop()
        if node.type in ("function_definition", "declaration", "field_declaration"):
            type_node = node.child_by_field_name("type")
            for declarator in node.children_by_field_name("declarator"):
                if declarator.type != "function_declarator" or type_node is None:
                    continue
                name = declarator.child_by_field_name("declarator")
                if name is not None and name.type == "identifier":
                    found.setdefault(ctx.text(name), []).append(
                        _declared_function(ctx, node, type_node, declarator))
        if node.type != "compound_statement":
            stack.extend(node.children)
    ctx.cache["LOW001.functions"] = found
    return found


def _declared_function(ctx: RuleContext, node, type_node, declarator) -> _Declared:
    returned = normal_type(ctx.text(type_node))
    template_parameters = _template_parameters(ctx, node)
    listed = declarator.child_by_field_name("parameters")
    parameters, least, most = [], 0, 0.0
    for parameter in listed.named_children if listed is not None else ():
        if parameter.type == "variadic_parameter":
            most = float("inf")
            continue
        if parameter.type not in ("parameter_declaration", "optional_parameter_declaration"):
            continue
        parameters.append(_type_kind(ctx, *_parameter_type(ctx, parameter)))
        least += parameter.type == "parameter_declaration"
    if parameters == [None] and ctx.text(listed).replace(" ", "") == "(void)":
        parameters = []
    most = max(most, len(parameters))
    return _Declared(template_parameters.index(returned) if returned in template_parameters
                     else _type_kind(ctx, returned, 0), tuple(parameters), least, most)


def _parameter_type(ctx: RuleContext, parameter) -> tuple[str, int]:
    """(type, pointer levels) of a parameter declaration (a reference counts none)."""
    pointers, inner = 0, parameter.child_by_field_name("declarator")
    while inner is not None and inner.type in ("pointer_declarator", "abstract_pointer_declarator",
                                               "array_declarator", "reference_declarator"):
        pointers += inner.type != "reference_declarator"
        inner = inner.child_by_field_name("declarator") or next(
            (child for child in inner.named_children if "declarator" in child.type
             or child.type == "identifier"), None)
    type_node = parameter.child_by_field_name("type")
    return (normal_type(ctx.text(type_node)) if type_node is not None else ""), pointers


def _template_parameters(ctx: RuleContext, declaration) -> list[str]:
    """The type parameters (names, in order) of the template the declaration is the body of,
    if it is one."""
    parent = declaration.parent
    if parent is None or parent.type != "template_declaration":
        return []
    listed = parent.child_by_field_name("parameters")
    names = []
    for parameter in listed.named_children if listed is not None else ():
        name = next((child for child in parameter.named_children
                     if child.type == "type_identifier"), None)
        names.append(ctx.text(name) if name is not None else "")
    return names


def _typed(ctx: RuleContext, node) -> tuple[str, int] | None:
    """(declared type, pointer levels left) of a name, an element (``p[i]``, ``*p``), a member
    (``s.x``, ``p->x`` of a struct defined in the file, ``v.x`` of a bf16 pair) or a pointer's
    arithmetic (``p + i``), or None."""
    while node.type == "parenthesized_expression" and node.named_child_count == 1:
        node = node.named_children[0]
    if node.type == "identifier":
        declaration = value_declaration(ctx, ctx.text(node), node.start_byte)
        if declaration is not None:
            return declaration.type, declaration.pointers
        return _sibling_member(ctx, node)
    if node.type == "subscript_expression":
        inner = _typed(ctx, node.child_by_field_name("argument"))
        return (inner[0], inner[1] - 1) if inner is not None else None
    operator = node.child_by_field_name("operator")
    if node.type == "binary_expression" and operator is not None and operator.type in ("+", "-"):
        inner = _typed(ctx, node.child_by_field_name("left"))  # p + i: a pointer's arithmetic
        return inner if inner is not None and inner[1] > 0 and _kind(
            ctx, node.child_by_field_name("right")) == "integer" else None
    if node.type == "pointer_expression":
        inner = _typed(ctx, node.child_by_field_name("argument"))
        if inner is None or operator is None:
            return None
        return inner[0], inner[1] + (1 if operator.type == "&" else -1)
    if node.type == "field_expression":
        return _member(ctx, node, "")
    return None


def _member(ctx: RuleContext, node, suffix: str) -> tuple[str, int] | None:
    """_typed of the member ``s.x`` / ``p->x`` (a field expression); with ``suffix`` "()", of
    the value of the member function ``s.f()``."""
    operator, field = node.child_by_field_name("operator"), node.child_by_field_name("field")
    owner = _typed(ctx, node.child_by_field_name("argument"))
    if owner is None or operator is None or field is None or \
            owner[1] != (1 if operator.type == "->" else 0):
        return None
    if normal_type(owner[0]) in BF162_TYPES and ctx.text(field) in ("x", "y") and not suffix:
        return "__nv_bfloat16", 0  # a bf16 pair's halves
    return _members(ctx).get(normal_type(owner[0]), {}).get(ctx.text(field) + suffix)


def _sibling_member(ctx: RuleContext, name) -> tuple[str, int] | None:
    """(type, pointer levels) of the member of the struct whose body ``name`` is written in
    (``struct S { T a; T b{a}; }``), or None."""
    node, function = name.parent, None
    while node is not None and node.type != "field_declaration_list":
        if function is None and node.type == "function_definition":
            function = node
        node = node.parent
    if node is None and function is not None:  # S::f() { v = x; } outside S's body
        owner = _owner_of(function)
        return None if owner is None else _members(ctx).get(ctx.text(owner), {}).get(
            ctx.text(name))
    owner = node.parent if node is not None else None
    if owner is None:
        return None
    type_name = owner.child_by_field_name("name")
    if type_name is None and owner.parent is not None and owner.parent.type == "type_definition":
        type_name = owner.parent.child_by_field_name("declarator")
    return None if type_name is None else _members(ctx).get(ctx.text(type_name), {}).get(
        ctx.text(name))


def _owner_of(function):
    """The name (a tree node) of the struct or class template whose member the function
    definition defines outside its body (``void S::f()``, ``void Acc<T>::f()``), else None."""
    declarator = function.child_by_field_name("declarator")
    name = declarator.child_by_field_name("declarator") if declarator is not None and \
        declarator.type == "function_declarator" else None
    scope = name.child_by_field_name("scope") if name is not None and \
        name.type == "qualified_identifier" else None
    if scope is not None and scope.type == "template_type":
        scope = scope.child_by_field_name("name")
    return scope if scope is not None and scope.type in ("namespace_identifier",
                                                         "type_identifier") else None


def _members(ctx: RuleContext) -> dict[str, dict[str, tuple[str, int] | None]]:
    """struct name -> member name -> (type, pointer levels; an array dimension counts as one),
    for the structs, classes and unions defined in the file outside functions (``typedef
    struct {...} S;`` too), and "name()" -> the type a member function returns;
    a member that two definitions of a name declare differently is None."""
    found = ctx.cache.get("LOW001.members")
    if found is not None:
        return found
    found = {}
    stack = [ctx.tree.root_node]
    while stack:
        node = stack.pop()
        if node.type != "compound_statement":  # (not the structs local to a function)
            stack.extend(node.children)
        if node.type not in ("struct_specifier", "class_specifier", "union_specifier"):
            continue
        body, name = node.child_by_field_name("body"), node.child_by_field_name("name")
        if body is None:
            continue
        if name is None and node.parent is not None and node.parent.type == "type_definition":
            name = node.parent.child_by_field_name("declarator")
        if name is None or name.type != "type_identifier":
            continue
        fields = found.setdefault(ctx.text(name), {})
        for member in body.named_children:
            type_node = member.child_by_field_name("type")
            if member.type not in ("field_declaration", "function_definition") or \
                    type_node is None:
                continue
            for declarator in member.children_by_field_name("declarator"):
                pointers, suffix = 0, ""
                while declarator.type in ("pointer_declarator", "array_declarator"):
                    pointers += 1
                    declarator = declarator.child_by_field_name("declarator")
                if declarator is not None and declarator.type == "function_declarator":
                    declarator, suffix = declarator.child_by_field_name("declarator"), "()"
                if declarator is None or declarator.type != "field_identifier":
                    continue
                typed = (normal_type(ctx.text(type_node)), pointers)
                field = ctx.text(declarator) + suffix  # a member function's: "name()"
                fields[field] = typed if fields.get(field, typed) == typed else None
    ctx.cache["LOW001.members"] = found
    return found


def _node_at(ctx: RuleContext, begin: int, end: int):
    """The outermost tree node that spans exactly [begin, end) (else the smallest around it)."""
    node = ctx.tree.root_node.descendant_for_byte_range(begin, end)
    while node.parent is not None and (node.parent.start_byte, node.parent.end_byte) == (
            begin, end):
        node = node.parent
    return node


_TEMPLATE_DEPTH = 4  # templates followed from an instantiation through the templates they call
_TEMPLATES_READ = 32  # at most, from one instantiation


def _bf16_positions(ctx: RuleContext, template_function) -> frozenset[int]:
    """The positions of the template arguments that are a bf16 type (``g<float, __nv_bfloat16>``:
    {1})."""
    listed = template_function.child_by_field_name("arguments")
    return frozenset(index for index, argument in enumerate(
        listed.named_children if listed is not None else ())
        if _resolved(ctx, ctx.text(argument)) in BF16_TYPES)


def _project_contexts(ctx: RuleContext) -> list[RuleContext]:
    """The file, then each project file it includes, as contexts rules can read."""
    found = ctx.cache.get("LOW001.project")
    if found is None:
        found = ctx.cache["LOW001.project"] = [ctx] + [
            RuleContext(Source(file.rel, file.data), ctx.settings, ctx.tables)
            for file in ctx.included]
    return found


def _template_conversions(ctx: RuleContext, name: str, positions: frozenset[int],
                          deduced: tuple[int | None, ...], seen: set,
                          depth: int = 0) -> list[tuple[str, str, str, str]]:
    """(template, type parameter, file, code) of the implicit conversions to bf16 in the function
    template ``name`` (defined in the file or a project file it includes) called with bf16 as
    the template arguments at ``positions`` or as the arguments whose pointer levels
    ``deduced`` gives (None: not a bf16), and in the templates it calls with it, from a value
    of arithmetic type: a declaration ``T v = x;``, ``return x;`` where it returns ``T``, an
    assignment to a ``T``."""
    if depth >= _TEMPLATE_DEPTH:
        return []
    found = []
    for file in _project_contexts(ctx):
        if name.encode() not in file.data:
            continue
        for function in _function_templates(file).get(name, ()):
            parameters = _template_parameters(file, function)
            bound = {parameters[i] for i in positions if i < len(parameters)}
            declarator = function.child_by_field_name("declarator")
            listed = declarator.child_by_field_name("parameters")
            declared = [parameter for parameter in listed.named_children if parameter.type in (
                "parameter_declaration", "optional_parameter_declaration")]
            bound |= {type_name for parameter, level in zip(declared, deduced)
                      if level is not None for type_name, pointers in [_parameter_type(
                          file, parameter)] if type_name in parameters and pointers == level}
            bound -= {""}
            key = (file.path, function.start_byte, frozenset(bound))
            if bound and key not in seen and len(seen) < _TEMPLATES_READ:
                seen.add(key)
                found += _conversions_in(ctx, file, function, name, bound, seen, depth)
    return found


def _instantiation(ctx: RuleContext, call, function) -> str | None:
    """The name of the function template the call instantiates with bf16 (named as a template
    argument, or passed where a template parameter is deduced), else None."""
    if function.type == "template_function":
        name = function.child_by_field_name("name")
        return ctx.text(name) if name is not None and _bf16_positions(ctx, function) else None
    if function.type != "identifier":
        return None
    name = ctx.text(function)
    return name if _is_template(ctx, name) and _bf16_arguments(ctx, ctx, call, BF16_TYPES) \
        else None


def _template_marker(ctx: RuleContext, replacement: str, use,
                     found: list[tuple[str, str, str, str]]) -> Diagnostic:
    """The marker at ``use`` (a call of a template, a class template's type) of the implicit
    conversions to bf16 that ``found`` lists in the template (_template_conversions)."""
    (template, parameter, file, shown), more = found[0], len(found) - 1
    where = f"{template} ({file})" if file != ctx.path else template
    others = f" and {more} more" if more else ""
    shown_use = as_converted(ctx, " ".join(ctx.text(use).split()))
    if len(shown_use) > _SHOWN:
        shown_use = shown_use[: _SHOWN - 3] + "..."
    message = (f"{shown_use} makes {where} "
               f"convert to {replacement} implicitly ({shown}{others}), which does not "
               f"build: {replacement}'s float constructor is explicit. Convert there "
               f"explicitly: {parameter}(x) rounds a float to {replacement} as CUDA does "
               "(a NaN keeps its payload where CUDA makes it 0x7fff)")
    return Diagnostic("LOW001", message, use.start_byte, use.end_byte,
                      marker_fix(ctx, use.start_byte, Marker("LOW001", message)),
                      library="device", symbol="__nv_bfloat16")


def _class_templates(ctx: RuleContext) -> dict[str, list]:
    """name -> the class templates (their template declarations) defined in the file, and the
    definitions of their member functions outside their bodies (``template <class T> void
    Acc<T>::add(float x) {...}``)."""
    found = ctx.cache.get("LOW001.class_templates")
    if found is None:
        found = ctx.cache["LOW001.class_templates"] = {}
        stack = [ctx.tree.root_node]
        while stack:
            node = stack.pop()
            if node.type == "template_declaration":
                defined = next((child for child in node.named_children if child.type in (
                    "struct_specifier", "class_specifier", "function_definition")), None)
                name = (defined.child_by_field_name("name")
                        if defined is not None and defined.type != "function_definition"
                        and defined.child_by_field_name("body") is not None
                        else _owner_of(defined) if defined is not None else None)
                if name is not None:
                    found.setdefault(ctx.text(name), []).append(defined)
            if node.type not in ("compound_statement", "function_definition"):
                stack.extend(node.children)
    return found


def _is_class_template(ctx: RuleContext, name: str) -> bool:
    """Is ``name`` a class template defined in the file or a project file it includes?"""
    known = ctx.cache.setdefault("LOW001.is_class_template", {})
    if name not in known:
        known[name] = any(name in _class_templates(file) for file in _project_contexts(ctx)
                          if name.encode() in file.data)
    return known[name]


def _class_template_conversions(ctx: RuleContext, name: str,
                                positions: frozenset[int]) -> list[tuple[str, str, str, str]]:
    """_template_conversions of the class template ``name`` whose type parameters at
    ``positions`` are bf16: in its default member initialisers (``T v = 0;``) and in its member
    functions, defined in its body or outside it (``v += x;``, ``return x;``), and the
    templates they call."""
    found: list[tuple[str, str, str, str]] = []
    seen: set = set()
    for file in _project_contexts(ctx):
        if name.encode() not in file.data:
            continue
        defined_here = _class_templates(file).get(name, ())
        # the names the class's body gives its parameters (its members' types are written so)
        own = next((_template_parameters(file, defined) for defined in defined_here
                    if defined.type != "function_definition"), [])
        for defined in defined_here:
            parameters = _template_parameters(file, defined)
            if defined.type == "function_definition":  # Acc<U>::f: its own names, by position
                scope = defined.child_by_field_name("declarator").child_by_field_name(
                    "declarator").child_by_field_name("scope")
                listed = scope.child_by_field_name("arguments")
                parameters = [file.text(argument) for argument in (
                    listed.named_children if listed is not None else ())]
            bound = {parameters[i] for i in positions if i < len(parameters)} - {""}
            if defined.type == "function_definition" and bound:
                bound |= {own[i] for i in positions if i < len(own)} - {""}
            if not bound:
                continue
            if defined.type == "function_definition":
                found += _conversions_in(ctx, file, defined, name, bound, seen, 0)
                continue
            for member in defined.child_by_field_name("body").named_children:
                if member.type == "template_declaration":
                    member = next((child for child in member.named_children
                                   if child.type == "function_definition"), member)
                if member.type == "function_definition":
                    found += _conversions_in(ctx, file, member, name, bound, seen, 0)
                elif member.type == "field_declaration" and _copy_init(member):
                    type_node, value = (member.child_by_field_name(field)
                                        for field in ("type", "default_value"))
                    if type_node is not None and value is not None and \
                            normal_type(file.text(type_node)) in bound and (
                            value.type == "number_literal" or _kind(file, value) in (
                                "float", "double", "integer")):
                        text = as_converted(ctx, " ".join(file.text(member).split()))
                        found.append((name, min(bound), file.path, text if len(text) <= _SHOWN
                                      else text[: _SHOWN - 3] + "..."))
    return found


def _bf16_parameters(ctx: RuleContext, name: str, count: int) -> frozenset[int]:
    """The positions where every function declared by ``name`` in the file and the project
    files it includes, that takes ``count`` arguments, has a bf16 parameter (by value): an
    argument there converts to bf16 whichever of them is called."""
    known = ctx.cache.setdefault("LOW001.bf16_parameters", {})
    if (name, count) in known:
        return known[name, count]
    positions = None
    for file in _project_contexts(ctx):
        if name.encode() not in file.data:
            continue
        for declared in _function_kinds(file).get(name, ()):
            if declared.least <= count <= declared.most:
                here = {i for i, kind in enumerate(declared.parameters[:count]) if kind == "bf16"}
                positions = here if positions is None else positions & here
    known[name, count] = frozenset(positions or ())
    return known[name, count]


def _is_template(ctx: RuleContext, name: str) -> bool:
    """Is ``name`` a function template defined in the file or a project file it includes?"""
    known = ctx.cache.setdefault("LOW001.is_template", {})
    if name not in known:
        known[name] = any(name in _function_templates(file) for file in _project_contexts(ctx)
                          if name.encode() in file.data)
    return known[name]


def _bf16_arguments(ctx: RuleContext, file: RuleContext, call,
                    types) -> tuple[int | None, ...]:
    """For each argument of the call (written in ``file``): its pointer levels where it is
    declared with one of ``types`` (a bf16, or a template parameter bound to one), else None."""
    listed = call.child_by_field_name("arguments")
    levels = []
    for argument in listed.named_children if listed is not None else ():
        typed = _typed(file, argument) if argument.type != "comment" else None
        levels.append(typed[1] if typed is not None and _resolved(file, typed[0]) in types
                      and typed[1] >= 0 else None)
    return tuple(levels) if any(level is not None for level in levels) else ()


def _function_templates(ctx: RuleContext) -> dict[str, list]:
    """name -> the function templates defined in the file by that plain name."""
    found = ctx.cache.get("LOW001.templates")
    if found is None:
        found = ctx.cache["LOW001.templates"] = {}
        stack = [ctx.tree.root_node]
        while stack:
            node = stack.pop()
            if node.type == "function_definition":
                declarator = node.child_by_field_name("declarator")
                name = declarator.child_by_field_name("declarator") \
                    if declarator is not None and declarator.type == "function_declarator" else None
                if name is not None and name.type == "identifier" and \
                        _template_parameters(ctx, node):
                    found.setdefault(ctx.text(name), []).append(node)
                continue
            stack.extend(node.children)
    return found


def _conversions_in(ctx: RuleContext, file: RuleContext, function, name: str, bound: set[str],
                    seen: set, depth: int) -> list[tuple[str, str, str, str]]:
    """_template_conversions in one definition, whose type parameters ``bound`` are bf16."""
    found = []
    returned = function.child_by_field_name("type")
    returns_bound = returned is not None and normal_type(file.text(returned)) in bound and \
        function.child_by_field_name("declarator").type == "function_declarator"
    stack = [function.child_by_field_name("body")]
    while stack:
        node = stack.pop()
        if node is None or node.type == "lambda_expression":
            continue
        stack.extend(reversed(node.children))
        values, shown = [], node
        if node.type == "return_statement" and returns_bound and node.named_child_count:
            values = node.named_children[:1]
        elif node.type == "declaration" and node.child_by_field_name("type") is not None and \
                normal_type(file.text(node.child_by_field_name("type"))) in bound:
            values = [child for declarator in node.children_by_field_name("declarator")
                      if declarator.type == "init_declarator" and _copy_init(declarator)
                      and declarator.child_by_field_name("declarator").type in (
                          "identifier", "array_declarator")
                      for value in [declarator.child_by_field_name("value")] if value is not None
                      for child in (value.named_children if value.type == "initializer_list"
                                    else [value])]
        elif node.type == "assignment_expression" and _assigns(node):
            typed = _typed(file, node.child_by_field_name("left"))
            if typed is not None and typed[1] == 0 and normal_type(typed[0]) in bound:
                values = [node.child_by_field_name("right")]
        elif node.type == "call_expression" and node.child_by_field_name("function") is not None:
            callee = node.child_by_field_name("function")
            positions: frozenset[int] = frozenset()
            if callee.type == "template_function":
                listed = callee.child_by_field_name("arguments")
                positions = frozenset(index for index, argument in enumerate(
                    listed.named_children if listed is not None else ())
                    if normal_type(file.text(argument)) in bound)
                callee = callee.child_by_field_name("name")
            deduced = _bf16_arguments(ctx, file, node, bound) if callee is not None and \
                _is_template(ctx, file.text(callee)) else ()
            if callee is not None and callee.type == "identifier" and (positions or deduced):
                found += _template_conversions(ctx, file.text(callee), positions, deduced, seen,
                                               depth + 1)
        if any(value.type == "number_literal" or _kind(file, value) in ("float", "double",
                                                                          "integer")
               for value in values if value is not None):
            text = as_converted(ctx, " ".join(file.text(shown).split()))
            found.append((name, min(bound), file.path, text if len(text) <= _SHOWN
                          else text[: _SHOWN - 3] + "..."))
    return found


def _assigns(assignment) -> bool:
    """Does the assignment expression convert its right side to the left's type (``=``, and
    ``+=``, ``-=``, ``*=``, ``/=``, whose bf16 operators take a bf16)?"""
    operator = assignment.child_by_field_name("operator")
    return operator is not None and operator.type in ("=", "+=", "-=", "*=", "/=")


def _judged(ctx: RuleContext, value, replacement: str) -> str | None:
    """How a value converted implicitly to bf16 is written for ``replacement`` (whose float
    constructor is explicit): the function that converts it as CUDA does (``replacement`` for a
    literal float holds exactly, ``rocmigrate_float2bfloat16`` for a float), None for a bf16
    (left), "unproven" for a value of another or an unread type."""
    literal = _literal(ctx.text(value))
    if literal is not None and _float_exact(literal):
        return replacement
    kind = _kind(ctx, value)
    if kind == "bf16":
        return None
    return EXACT_FOR_ALL["__float2bfloat16"] if kind == "float" else "unproven"


def _unread(value) -> bool:
    """Is ``value`` a call or a member (not an expression of them), whose type rocmigrate
    could not read?"""
    while value.type == "parenthesized_expression" and value.named_child_count == 1:
        value = value.named_children[0]
    while value.type == "subscript_expression":
        value = value.child_by_field_name("argument")
    return value.type in ("call_expression", "field_expression")


def _returns_bf16(ctx: RuleContext, statement) -> bool:
    """Does the function or lambda that the return statement is in return a bf16 (by value;
    through an alias of the type, or a trailing return type ``-> __nv_bfloat16``)?"""
    node = statement.parent
    while node is not None and node.type not in ("function_definition", "lambda_expression"):
        node = node.parent
    if node is None:
        return False
    declarator = node.child_by_field_name("declarator")
    if node.type == "lambda_expression":  # [](float x) -> __nv_bfloat16 { return x; }
        type_node = None
    else:
        if declarator is None or declarator.type != "function_declarator":
            return False
        type_node = node.child_by_field_name("type")
    trailing = next((child for child in (declarator.children if declarator is not None else ())
                     if child.type == "trailing_return_type"), None)
    if trailing is not None:  # auto f() -> T, [] () -> T
        type_node = trailing.named_children[0] if trailing.named_child_count else None
    return type_node is not None and _resolved(ctx, ctx.text(type_node)) in BF16_TYPES


def _resolved(ctx: RuleContext, type_text: str) -> str:
    """The normal type ``type_text`` names, through the file's aliases (``typedef
    __nv_bfloat16 bf16;``, ``using bf16 = ...``), as declarations are looked up."""
    type_name, aliases = normal_type(type_text), type_aliases(ctx)
    for _ in range(4):
        if type_name not in aliases:
            break
        type_name = normal_type(aliases[type_name])
    return type_name


def _copy_initialised(ctx: RuleContext, start: int, end: int) -> list:
    """The values (tree nodes) a declaration whose type is named at [start, end) copy-initialises
    its variables with: ``x`` of ``T v = x``, each element of ``T a[] = {x, y}`` (a nested list
    whole). Only where the type is the whole declared type (not ``T*``, ``T&``)."""
    if b"=" not in ctx.code[end : ctx.code.find(b";", end)]:
        return []  # most declarations: nothing to parse for
    node = _declaration(ctx, start, end)
    type_node = node.child_by_field_name("type") if node is not None else None
    if type_node is None or (type_node.start_byte, type_node.end_byte) != (start, end):
        return []  # not a declaration of the type itself (std::vector<T> v = ...)
    values = []
    default = node.child_by_field_name("default_value") if node.type == "field_declaration" \
        else None
    if default is not None and _copy_init(node):  # struct S { T v = x; } (not T v{x};)
        values += ([c for c in default.named_children if c.type != "comment"]
                   if default.type == "initializer_list" else [default])
    for declarator in node.children_by_field_name("declarator"):
        if declarator.type != "init_declarator" or not _copy_init(declarator):
            continue
        target = declarator.child_by_field_name("declarator")
        value = declarator.child_by_field_name("value")
        if target is None or value is None or target.type not in ("identifier",
                                                                  "array_declarator"):
            continue
        if target.type == "identifier" and value.type != "initializer_list":
            values.append(value)
        elif value.type == "initializer_list":
            values += [c for c in value.named_children if c.type != "comment"]
    return values


def _initialised(ctx: RuleContext, declaration) -> list:
    """The values (tree nodes) a declaration converts to bf16 implicitly that the type's own
    rename does not see: those copy-initialising a variable of the file's alias of the type
    (``bf16 v = x;``, ``bf16 a[] = {x, y};``, a default member initialiser), and the members of
    an aggregate (a struct defined in the file, see _aggregates) initialised from a brace list
    (``S s = {x, 2};``, ``S s{x, 2};``, each of ``S a[] = {{x, 2}, ...}``) that are bf16."""
    type_node = declaration.child_by_field_name("type")
    if type_node is None or type_node.type != "type_identifier":
        return []
    name = ctx.text(type_node)
    resolved = _resolved(ctx, name)
    if resolved in BF16_TYPES:
        return [] if name in BF16_TYPES else _copy_initialised(ctx, type_node.start_byte,
                                                               type_node.end_byte)
    fields = _aggregates(ctx).get(resolved)
    if not fields or declaration.type != "declaration":
        return []
    values = []
    for declarator in declaration.children_by_field_name("declarator"):
        target = declarator.child_by_field_name("declarator")
        value = declarator.child_by_field_name("value")
        if declarator.type != "init_declarator" or target is None or value is None or \
                value.type != "initializer_list":
            continue
        lists = ([value] if target.type == "identifier" else
                 [c for c in value.named_children if c.type == "initializer_list"]
                 if target.type == "array_declarator" else [])
        for listed in lists:
            values += _bf16_members(ctx, fields, listed)
    return values


def _bf16_members(ctx: RuleContext, fields: list[tuple[str, str]], listed,
                  depth: int = 0) -> list:
    """The values of the brace list ``listed`` that initialise a bf16 member of the aggregate
    whose members ``fields`` lists (name, kind), or of an aggregate member's own braced list:
    by position up to a member that is not a scalar whose value is not braced (its braces may
    be elided), by name where designated (``.v = x``). A braced value of a bf16 (``{x}``) is
    not read."""
    found: list = []
    members = [c for c in listed.named_children if c.type != "comment"]
    for position, member in enumerate(members):
        if member.type == "initializer_pair":
            designator = member.named_children[0] if member.named_child_count else None
            name = ctx.text(designator).lstrip(".").strip() if designator is not None and \
                designator.type == "field_designator" else None
            field = next((kind for field_name, kind in fields if field_name == name), None)
            value = member.child_by_field_name("value")
        else:
            field = fields[position][1] if position < len(fields) else None
            if field is not None and field not in ("bf16", "scalar") and \
                    member.type != "initializer_list":
                break
            value = member
        inner = _aggregates(ctx).get(field[len("struct "):]) \
            if field is not None and field.startswith("struct ") else None
        if value is None:
            continue
        if inner is not None:  # Outer o = {{x, 1}, y}
            if value.type == "initializer_list" and depth < _NESTED_AGGREGATES:
                found += _bf16_members(ctx, inner, value, depth + 1)
        elif field == "bf16" and value.type != "initializer_list":
            found.append(value)
    return found


_NESTED_AGGREGATES = 4  # aggregates read inside an aggregate's brace list, at most


def _aggregates(ctx: RuleContext) -> dict[str, list[tuple[str, str]]]:
    """struct name -> its non-static data members in order, (name, kind: "bf16", "scalar" (an
    arithmetic type or a pointer), "struct NAME" (a struct by its name, an aggregate where this
    table has it) or "other" (an array...)), for the structs defined in the file outside
    functions and templates that are aggregates as rocmigrate can tell: no base class, access
    specifier, constructor or virtual function."""
    found = ctx.cache.get("LOW001.aggregates")
    if found is not None:
        return found
    found = ctx.cache["LOW001.aggregates"] = {}
    stack = [ctx.tree.root_node]
    while stack:
        node = stack.pop()
        if node.type not in ("compound_statement", "template_declaration"):
            stack.extend(node.children)
        body, name = node.child_by_field_name("body"), node.child_by_field_name("name")
        if node.type != "struct_specifier" or body is None:
            continue
        if name is None and node.parent is not None and node.parent.type == "type_definition":
            name = node.parent.child_by_field_name("declarator")
        if name is None or name.type != "type_identifier" or any(
                child.type == "base_class_clause" for child in node.children):
            continue
        fields = _aggregate_fields(ctx, body, ctx.text(name))
        if fields is not None:
            found[ctx.text(name)] = fields
    return found


def _aggregate_fields(ctx: RuleContext, body, name: str) -> list[tuple[str, str]] | None:
    """_aggregates' members of one struct body, None where it is not an aggregate."""
    fields = []
    for member in body.named_children:
        if member.type == "access_specifier" or b"virtual" in ctx.data[
                member.start_byte:member.end_byte].split():
            return None
        declarators = member.children_by_field_name("declarator")
        if any(declarator.type == "function_declarator" and ctx.text(
                declarator.child_by_field_name("declarator")).split("::")[-1] == name
               for declarator in declarators):
            return None  # a constructor
        type_node = member.child_by_field_name("type")
        if member.type != "field_declaration" or type_node is None or any(
                child.type == "storage_class_specifier" for child in member.children):
            continue
        for declarator in declarators:
            if declarator.type == "field_identifier":
                resolved = _resolved(ctx, ctx.text(type_node))
                kind = ("bf16" if resolved in BF16_TYPES else "scalar"
                        if type_node.type != "struct_specifier" and is_fundamental(resolved)
                        else "struct " + resolved if type_node.type == "type_identifier"
                        else "other")
                fields.append((ctx.text(declarator), kind))
            elif declarator.type == "pointer_declarator":
                inner = declarator
                while inner is not None and inner.type == "pointer_declarator":
                    inner = inner.child_by_field_name("declarator")
                if inner is not None and inner.type == "field_identifier":
                    fields.append((ctx.text(inner), "scalar"))
                else:
                    fields.append(("", "other"))
            elif declarator.type != "function_declarator":
                fields.append(("", "other"))  # an array, a bit-field...
    return fields


def _copy_initialises_alias(ctx: RuleContext, value) -> bool:
    """Does ``value`` copy-initialise a variable (an element of one) declared with the file's
    alias of the bf16 type?"""
    node = value.parent
    while node is not None and node.type in ("initializer_list", "init_declarator"):
        node = node.parent
    type_node = node.child_by_field_name("type") if node is not None and node.type in (
        "declaration", "field_declaration") else None
    return type_node is not None and ctx.text(type_node) not in BF16_TYPES and \
        _resolved(ctx, ctx.text(type_node)) in BF16_TYPES


def _copy_init(declarator) -> bool:
    return any(child.type == "=" for child in declarator.children)


def _direct_init(ctx: RuleContext, start: int, end: int) -> list[tuple[int, int]] | None:
    """Initialisers of ``T v(x);`` / ``T v{x};`` declarations whose type is named at
    [start, end), default member initialisers ``T v{x};`` too (the parser may read ``T v(x)``
    as a function declaration)."""
    node = _declaration(ctx, start, end)
    if node is None:
        return None
    spans: list[tuple[int, int]] = []
    default = node.child_by_field_name("default_value") if node.type == "field_declaration" \
        else None
    if default is not None and default.type == "initializer_list" and not _copy_init(node):
        spans += [(c.start_byte, c.end_byte) for c in default.named_children  # struct S { T v{x}; }
                  if c.type != "comment"]
    in_block = node.parent is not None and node.parent.type == "compound_statement"
    for declarator in node.children_by_field_name("declarator"):
        value = None
        if declarator.type == "init_declarator" and not _copy_init(declarator):
            value = declarator.child_by_field_name("value")
            if value is not None and value.type not in ("argument_list", "initializer_list"):
                value = None
        elif declarator.type == "function_declarator" and in_block:
            value = declarator.child_by_field_name("parameters")
        if value is not None:
            spans += [(c.start_byte, c.end_byte) for c in value.named_children
                      if c.type != "comment"]
    return spans or None
