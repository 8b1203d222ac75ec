"""LOW001/LOW002: lower CUDA names the target ROCm lacks onto an older HIP API (lowerings.tsv)."""

from __future__ import annotations

import re

from migrator.apitables import Lowering
from migrator.diagnostics import Applicability, Diagnostic, Edit, Fix
from migrator.rule import Marker, Rule, RuleContext
from migrator.semantic.calls import find_name, lexical_call
from migrator.semantic.conversions import (TemplateConversion, assigns, class_template_conversions,
                                           converted_values, copy_initialised,
                                           copy_initialises_alias, declaration_at,
                                           implicitly_initialised, instantiation,
                                           instantiation_conversions, is_class_template, node_at,
                                           parameters_of_type, returns_type,
                                           type_argument_positions)
from migrator.semantic.value_kinds import (TypeNames, declared_type, float_exact, numeric_literal,
                                           proven_value, resolved_type, unread, value_kind)
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
# Before ROCm 6.0, CUDA's bf16 intrinsics whose names HIP has for __half only: a call with an
# argument proven bf16 (a pair for the pair functions) calls rocmigrate_bf16.h's function.
SCALAR_ARITHMETIC = {name: "rocmigrate_" + name[2:] for name in (
    "__hadd", "__hsub", "__hmul", "__hdiv", "__hneg", "__hfma")}
PAIR_ARITHMETIC = {name: "rocmigrate_" + name[2:] for name in (
    "__hadd2", "__hsub2", "__hmul2", "__h2div", "__hneg2", "__hfma2", "__low2float",
    "__high2float")}
# lowerings exact for some arguments only, and rocmigrate_bf16.h's function, exact for all
EXACT_FOR_ALL = {"__float2bfloat16": "rocmigrate_float2bfloat16",
                 "__float2bfloat16_rn": "rocmigrate_float2bfloat16",
                 "__bfloat162float": "rocmigrate_bfloat162float"}
# bf16 as the semantic layer reads values (migrator/semantic/value_kinds.py)
BF16 = TypeNames(
    kind="bf16", types=BF16_TYPES, pair_types=BF162_TYPES, pair_member="__nv_bfloat16",
    # calls and conversions whose value is a bf16 scalar
    producer=re.compile(r"(?:__float2bfloat16(?:_r[nzdu])?|__double2bfloat16|" + _BF16 +
                        r"|rocmigrate_(?:float2bfloat16|h(?:add|sub|mul|div|neg|fma)"
                        r"|ushort_as_bfloat16|low2bfloat16|high2bfloat16))\s*[({]"
                        r"|static_cast\s*<\s*(?:const\s+)?(?:" + _BF16 + r")\s*>\s*\("),
    # calls whose value is a pair of bf16
    pair_producer=re.compile(r"(?:__float22bfloat162_rn|__floats?2bfloat162_rn"
                             r"|__halves2bfloat162|__bfloat162bfloat162|rocmigrate_(?:"
                             r"float22bfloat162_rn|floats?2bfloat162_rn|halves2bfloat162"
                             r"|bfloat162bfloat162|h(?:add|sub|mul|neg|fma)2|h2div))\s*\("),
    # __hadd(x, y) and the like: bf16 (a pair) where an argument is, as CUDA's overloads
    overloads=frozenset(SCALAR_ARITHMETIC.keys() | PAIR_ARITHMETIC.keys()),
    pair_results=frozenset(PAIR_ARITHMETIC) - {"__low2float", "__high2float"},
    # CUDA's functions whose value is a bf16 scalar (lowered onto rocmigrate_bf16.h's or HIP's)
    functions=re.compile(r"__\w+2bfloat16(?:_r[nzdu])?|__u?short_as_bfloat16"),
    # CUDA's functions (and rocmigrate_bf16.h's) whose value is a float
    float_functions=frozenset({
        "__bfloat162float", "__low2float", "__high2float", "__half2float",
        "rocmigrate_bfloat162float", "rocmigrate_low2float", "rocmigrate_high2float", "sqrtf",
        "rsqrtf", "cbrtf", "expf", "exp2f", "__expf", "logf", "log2f", "__logf", "powf",
        "__powf", "fabsf", "fmaxf", "fminf", "fmaf", "__fmaf_rn", "__fadd_rn", "__fmul_rn",
        "__fdividef", "__frcp_rn", "__saturatef", "tanhf", "sinf", "cosf", "__sinf", "__cosf",
        "erff", "ceilf", "floorf", "roundf", "truncf"}))
_SHOWN = 40


def _shown(ctx: RuleContext, spans: list[tuple[int, int]]) -> str:
    return _quoted(ctx, ", ".join(ctx.data[b:e].decode("utf-8", "replace") for b, e in spans))


def _quoted(ctx: RuleContext, code: str) -> str:
    """``code`` as a message quotes it: on one line, as the output reads, then shortened."""
    text = as_converted(ctx, " ".join(code.split()))
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
        # one scan for the bf16 names (most of the rows) instead of one for each: a bf16 name,
        # and a bf16 argument's proof (a type, a conversion), says bfloat16
        says_bf16 = b"bfloat16" in ctx.data
        bf16 = ctx.tables.lowerings.get("__nv_bfloat16")
        lowers_bf16 = says_bf16 and bf16 is not None and bf16.applies(ctx.settings.rocm)
        rows = self._rows(ctx, says_bf16)
        overloads = _overloads(ctx) if lowers_bf16 else {}
        if lowers_bf16:  # CUDA's bf16 API from ROCm 6.0
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

    def _rows(self, ctx: RuleContext, says_bf16: bool) -> dict[bytes, Lowering]:
        """The rule's rows that apply to the target, by CUDA name, of the names in the file."""
        data = ctx.data
        return {encoded: low for name, encoded, low in ctx.tables.lowerings_of(
                    self.code, ctx.settings.rocm)
                if low.kind != "header" and (says_bf16 or "bfloat16" not in name)
                and encoded in data}

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
                if name is not None and is_class_template(ctx, ctx.text(name)) and \
                        type_argument_positions(ctx, BF16, node):
                    _first_use(classes, ctx.text(name), node)
            elif node.type == "call_expression":
                function = node.child_by_field_name("function")
                if function is not None:
                    _first_use(instantiations, instantiation(ctx, BF16, node, function), node)
                listed = node.child_by_field_name("arguments")
                if function is not None and function.type == "identifier" and listed is not None:
                    given = [argument for argument in listed.named_children
                             if argument.type != "comment"]
                    if len(given) == 1 and ctx.text(function) not in BF16.types and \
                            resolved_type(ctx, ctx.text(function)) in BF16.types:
                        yield from self._alias_conversion(ctx, function, given[0])
                    positions = parameters_of_type(ctx, BF16, ctx.text(function), len(given))
                    values = [given[i] for i in sorted(positions)]
                    how = f"passed to {ctx.text(function)} as"
            elif node.type == "assignment_expression":
                left, value = node.child_by_field_name("left"), node.child_by_field_name("right")
                if assigns(node) and left is not None and value is not None and \
                        value_kind(ctx, BF16, left) == BF16.kind:
                    values, how = [value], "assigned to"
            elif node.type == "return_statement":
                value = node.named_children[0] if node.named_child_count else None
                if value is not None and value.type not in ("comment", "initializer_list") and \
                        returns_type(ctx, BF16, node):
                    values, how = [value], "returned as"
            elif node.type in ("declaration", "field_declaration"):
                values, how = implicitly_initialised(ctx, BF16, node), "initialising"
            for value in values:
                yield from self._implicit_value(ctx, replacement, value, how)
        yield from self._instantiations(ctx, replacement, instantiations)
        for name, use in classes.items():
            found = class_template_conversions(ctx, BF16, name, use)
            if found:
                yield _template_marker(ctx, replacement, use, found)

    @staticmethod
    def _implicit_value(ctx: RuleContext, replacement: str, value, how: str):
        """_implicit_values for one value (``how``: "assigned to"...). A value copy-initialising
        a variable of an alias of the type is judged as one of the type itself (a value of
        unread type marked)."""
        verdict = _judged(ctx, value, replacement)
        if verdict is None or verdict == "unproven" and not unread(value) and \
                value_kind(ctx, BF16, value) is None and \
                not copy_initialises_alias(ctx, BF16, value):
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
        literal = numeric_literal(ctx.text(value))
        kind = value_kind(ctx, BF16, value)
        if literal is not None and float_exact(literal) or kind not in ("float", "double",
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
            found = instantiation_conversions(ctx, BF16, name, call)
            if found:
                yield _template_marker(ctx, replacement, call, found)

    def _overload(self, ctx: RuleContext, name: str, pair: bool, start: int,
                  end: int) -> Diagnostic | None:
        """``__hadd(a, b)`` and the like on bf16: rocmigrate_bf16.h's function where an argument
        is proven bf16 (CUDA picks the bf16 overload then, or rejects the call); else left,
        being HIP's __half function or unproven."""
        call = lexical_call(ctx, start, end)
        if call is None or call == "macro" or not any(
                proven_value(ctx, BF16, ctx.data[b:e].decode("utf-8", "replace"), start, pair)
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
        spans = converted_values(ctx, start, end)
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
        if spans and element == replacement and declaration_at(ctx, start, end) is not None:
            # T v{x}, T v(x), struct S { T v{x}; }: a float's conversion is written exact
            kinds = {span: value_kind(ctx, BF16, node_at(ctx, *span)) for span in spans
                     if not self._exact_conversion(ctx, low, span)}
            floats = [span for span, kind in kinds.items() if kind == "float"]
            function = EXACT_FOR_ALL["__float2bfloat16"].encode()
            rewrite = Fix(rewrite.title, rewrite.edits + tuple(
                edit for begin, finish in floats
                for edit in (Edit(begin, begin, function + b"("), Edit(finish, finish, b")"))),
                includes=(SUPPORT_HEADER,) if floats else rewrite.includes)
            spans = [span for span in spans if kinds.get(span) not in ("float", BF16.kind)]
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
        values = copy_initialised(ctx, start, end)
        if not pair:  # a multi-dimensional array's values: T v[2][2] = {{0}, {x, y}}
            values = _leaves(values)
        if pair:  # a pair's members: of {x, y}, of each {x, y} of an array; not a pair value
            values = [member for value in values
                      for member in (value.named_children if value.type == "initializer_list"
                                     else [value] if value.parent.type == "initializer_list"
                                     else ())
                      if member.type != "comment"]
        for value in values:
            begin, finish = value.start_byte, value.end_byte
            function = _judged(ctx, value, replacement)
            if function is None or function == "unproven" and pair and \
                    value_kind(ctx, BF16, value) is None:
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
                numeric_literal(ctx.data[b:e].decode("utf-8", "replace")) for b, e in args)) or (
                low.exact == "bf16" and len(args) == 1 and proven_value(
                    ctx, BF16, ctx.data[args[0][0]:args[0][1]].decode("utf-8", "replace"), start)):
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
        literal = numeric_literal(text)
        return (literal is not None and float_exact(literal)) or proven_value(ctx, BF16, text,
                                                                              span[0])

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


def _overloads(ctx: RuleContext) -> dict[bytes, tuple[str, bool]]:
    """The bf16 overloads of __half's functions (SCALAR_ARITHMETIC, PAIR_ARITHMETIC) the file
    names: name -> (name, whether it takes a pair)."""
    return {name.encode(): (name, pair) for table, pair in (
        (SCALAR_ARITHMETIC, False), (PAIR_ARITHMETIC, True)) for name in table
        if name.encode() in ctx.data}


def _first_use(uses: dict, name: str | None, node) -> None:
    """Keeps ``node`` in ``uses`` as the use of ``name`` where it comes first in the file."""
    if name is not None and (name not in uses or uses[name].start_byte > node.start_byte):
        uses[name] = node


def _other_than_bf16(ctx: RuleContext, args: list[tuple[int, int]]) -> bool:
    """Is the one argument a name declared with another type than bf16 (which CUDA's
    __bfloat162float converts to bf16 first, and rocmigrate_bfloat162float does not take)?"""
    if len(args) != 1:
        return False
    (begin, finish), = args
    text = ctx.data[begin:finish].decode("utf-8", "replace")
    return declared_type(ctx, text, begin) is not None and not proven_value(ctx, BF16, text,
                                                                            begin)


def _lowering(replacement: str, start: int, end: int) -> Fix:
    """The fix that writes ``replacement`` over [start, end), with the support header where it
    names one of its functions or types."""
    support = (SUPPORT_HEADER,) if replacement.startswith("rocmigrate_") else ()
    return Fix(f"lower to {replacement}", (Edit(start, end, replacement.encode()),),
               includes=support)


def _judged(ctx: RuleContext, value, replacement: str) -> str | None:
    """How a value converted implicitly to bf16 is written for ``replacement`` (whose float
    constructor is explicit): the function that converts it as CUDA does (``replacement`` for a
    literal float holds exactly, ``rocmigrate_float2bfloat16`` for a float), None for a bf16
    (left), "unproven" for a value of another or an unread type."""
    literal = numeric_literal(ctx.text(value))
    if literal is not None and float_exact(literal):
        return replacement
    kind = value_kind(ctx, BF16, value)
    if kind == BF16.kind:
        return None
    return EXACT_FOR_ALL["__float2bfloat16"] if kind == "float" else "unproven"


def _template_marker(ctx: RuleContext, replacement: str, use,
                     found: list[TemplateConversion]) -> Diagnostic:
    """The marker at ``use`` (a call of a template, a class template's type) of the implicit
    conversions to bf16 that ``found`` lists in the template."""
    first, more = found[0], len(found) - 1
    where = f"{first.template} ({first.path})" if first.path != ctx.path else first.template
    others = f" and {more} more" if more else ""
    message = (f"{_quoted(ctx, ctx.text(use))} makes {where} "
               f"convert to {replacement} implicitly ({_quoted(ctx, first.code)}{others}), which "
               f"does not build: {replacement}'s float constructor is explicit. Convert there "
               f"explicitly: {first.parameter}(x) rounds a float to {replacement} as CUDA does "
               "(a NaN keeps its payload where CUDA makes it 0x7fff)")
    return Diagnostic("LOW001", message, use.start_byte, use.end_byte,
                      marker_fix(ctx, use.start_byte, Marker("LOW001", message)),
                      library="device", symbol="__nv_bfloat16")


def _leaves(values: list) -> list:
    """``values`` with each nested initializer list replaced by its values, recursively (the
    rows of a multi-dimensional array's initialiser)."""
    found = []
    for value in values:
        if value.type == "initializer_list":
            found += _leaves([child for child in value.named_children if child.type != "comment"])
        else:
            found.append(value)
    return found
