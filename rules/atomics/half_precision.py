"""ATM001: atomics on __half, __half2 and bf16 that HIP lacks -> rocmigrate's helpers."""

from __future__ import annotations

import re

from migrator.diagnostics import Applicability, Diagnostic, Edit, Fix
from migrator.rule import Marker, Rule, RuleContext
from migrator.semantic.calls import arguments, find_name, lexical_call
from migrator.semantic.lookup import excluded_by_size_check
from migrator.versions import format_version

from ..cuda_types import SIXTEEN_BIT
from ..markers import marker_fix
from .operands import (SUPPORT_HEADER, Operand, converted_type, helper_available, may_involve_sixteen_bit,
                       mentions_sixteen_bit, native_in, pointer_operand, sixteen_bit_evidence)

OPERATIONS = {"atomicAdd": "add", "atomicSub": "sub", "atomicMax": "max", "atomicMin": "min",
              "atomicExch": "exch", "atomicCAS": "cas"}
# the operations a file writes, found by one search for "atomic" (which the regex engine jumps
# to) rather than a substring search per name: no name holds "atomic" but at its start, so no
# match hides another
_OPERATION_NAME = re.compile(
    b"atomic(?:" + b"|".join(name[6:].encode() for name in OPERATIONS) + b")")
# atomicAdd(h, __float2half(x)): the float is rounded to __half before the add
_ROUNDED_FLOAT = re.compile(r"__float2half(?:_rn)?\s*\(")


class HalfPrecisionAtomic(Rule):
    """Rewrite atomics on ``__half``, ``__half2`` and bf16 that HIP lacks into rocmigrate's
    compare-and-swap helpers.

    ## What it does
    Finds ``atomicAdd``, ``atomicSub``, ``atomicMax``, ``atomicMin``, ``atomicExch`` and
    ``atomicCAS`` whose pointer argument is a ``__half*``, ``__half2*`` or bf16 pointer
    (``__nv_bfloat16``/``__hip_bfloat16`` and their pairs; ``hip_bfloat16`` for ROCm < 6.0, which
    LOW001 lowers ``__nv_bfloat16`` to). The type must be proven from the code: a cast to ``T*``,
    or a name declared as such in the enclosing function (parameters, locals), or at file scope
    (``p``, ``p + i``, ``&a[i]``, ``&x``; ``const``, ``__restrict__`` and simple typedefs are
    fine). Where the target ROCm has the native function (``rules/atomics/native_atomics.tsv``)
    the call is left as it is; else it becomes ``rocmigrate_atomic_add`` (``_sub``, ``_max``,
    ``_min``, ``_exch``, ``_cas``) from the generated header ``rocmigrate_atomics.h``, which the
    engine includes and the run writes beside the output. Calls whose type cannot be proven but
    whose arguments show 16-bit values (``__float2half(...)``, a ``__half`` variable), calls on
    ``T*`` in template code of a file that uses 16-bit types, and calls inside ``#define`` bodies
    are reported without a fix.
    With ``--clang`` (or ``--compile-commands FILE``), libclang is asked about those calls (and
    only those: a file that has none is not parsed): where it resolves the pointer to one 16-bit
    type in every instantiation the translation unit makes (``T*`` in a template, a struct
    member, a typedef from a header), the call is fixed as a proven one; where it resolves it to
    a type HIP has the atomic for (``T`` only ``float``/``double``), nothing is said; where it
    cannot tell (an instantiation with a 16-bit type and one without, a template nothing
    instantiates, an error in the function, a type it cannot find), the report stays.
    With ``lint --fix --unsafe-fixes``, ``atomicAdd(h, __float2half(x))`` on a ``__half*``
    becomes ``rocmigrate_atomic_add_mixed(h, x)``.

    This rule is not an optimisation: ``convert --no-optimize`` runs it too, since without it the
    port does not build (HIP 5.2.3, the release checked here, declares none of these overloads;
    CUDA has ``atomicAdd`` for them since sm_60/sm_70/sm_80).

    ## Why is this bad on AMD
    HIP's ``atomicAdd`` has no ``__half``/bf16 overload in the releases rocmigrate can check: the
    call fails to compile, or, through a conversion, resolves to an atomic of another width.
    A correct replacement must update the 16-bit value without touching the other half of the
    32-bit word that holds it: the helpers run a compare-and-swap loop on that aligned word
    (``atomicCAS(unsigned int*, …)``) and return the old value, like ``atomicAdd``.

    ## Example
    ```cpp
    __global__ void accumulate(__half* grads, const __half* update, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) atomicAdd(&grads[i % 64], update[i]);
    }
    ```

    ## Use instead
    ```cpp
    #include "rocmigrate_atomics.h"
    __global__ void accumulate(__half* grads, const __half* update, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) rocmigrate_atomic_add(&grads[i % 64], update[i]);
    }
    ```

    ## Fix safety
    Safe where the pointer type is proven: the helper has the semantics of CUDA's native
    function (one atomic update, the sum rounded once, the old value returned), on the same
    address. A CUDA bf16 scalar becomes ``__hip_bfloat16`` for ROCm >= 6.0 and ``hip_bfloat16``
    (LOW001) before; a bf16 pair is only fixed for ROCm >= 6.0. A type libclang proves is as
    safe, within what it reads: one preprocessing of the file (the active ``#if`` branches, the
    flags of ``--compile-commands``) and the instantiations made in its translation unit (a
    template instantiated in another one with a 16-bit type keeps a plain ``atomicAdd``).
    The mixed-precision rewrite is unsafe: it rounds ``h + x`` once instead of rounding ``x``
    to ``__half`` first, so results can differ in the last bit (they become more accurate).
    """

    code = "ATM001"
    category = "conversion"
    name = "half-precision-atomic"
    summary = "atomic on __half/__half2/bf16 that HIP lacks"
    family = "atomics"
    fix = "sometimes"

    def check(self, ctx: RuleContext):
        names = set(_OPERATION_NAME.findall(ctx.data))
        if not names or not may_involve_sixteen_bit(ctx):
            return
        rocm = ctx.settings.rocm
        target = format_version(rocm)
        for name, start, end in find_name(ctx, names):
            function = name.decode()
            operation = OPERATIONS[function]
            call = lexical_call(ctx, start, end)
            if call is None:
                continue
            if call == "macro":
                evidence = sixteen_bit_evidence(ctx, arguments(ctx, end) or [], start)
                if evidence:
                    yield self._report(ctx, start, end, function, (
                        f"{function} inside a macro on a 16-bit float ({evidence}): ROCm {target} "
                        f"has no native {function} for __half/bf16; use rocmigrate_atomic_"
                        f"{operation} (rocmigrate_atomics.h) in the macro by hand"))
                continue
            args = call.arguments
            if len(args) != (3 if operation == "cas" else 2):
                continue
            operand = pointer_operand(ctx, *args[0])
            canonical = converted_type(ctx, operand)
            source = ""  # where the type comes from, when not from the code as read here
            if canonical is None:
                diagnostic = self._unproven(ctx, start, end, function, operand, args, target)
                if diagnostic is None:
                    continue
                proven = _clang_pointee(ctx, *args[0])
                if proven is None:
                    yield diagnostic
                    continue
                if proven not in SIXTEEN_BIT:
                    continue  # libclang proves a type HIP has the atomic for
                operand, source = Operand("known", proven), " (the type libclang resolves)"
                canonical = converted_type(ctx, operand)
            mixed = _mixed_rewrite(ctx, start, end, args) if canonical == "__half" and \
                operation == "add" else None
            if native_in(function, canonical, rocm):
                if mixed is not None:  # the native call is right; rounding once is better
                    yield Diagnostic("ATM001", "atomicAdd of __float2half(x) into a __half "
                                     "rounds twice; rocmigrate_atomic_add_mixed rounds h + x "
                                     "once", start, end, mixed, library="device", symbol=function)
                continue
            if not helper_available(canonical, rocm):
                yield self._report(ctx, start, end, function, _no_helper(function, operand.type,
                                                                         canonical, target))
                continue
            helper = f"rocmigrate_atomic_{operation}"
            fix = mixed if mixed is not None and ctx.settings.unsafe_fixes else Fix(
                f"use {helper} (rocmigrate_atomics.h)", (Edit(start, end, helper.encode()),),
                includes=(SUPPORT_HEADER,))
            yield Diagnostic("ATM001", f"{function} on {operand.type}*{source}: ROCm {target} "
                             f"has no native {function} for {canonical}; {helper} "
                             "(rocmigrate_atomics.h) "
                             "is a compare-and-swap loop on the 32-bit word that holds it",
                             start, end, fix, library="device", symbol=function)

    def _unproven(self, ctx, start, end, function, operand, args, target) -> Diagnostic | None:
        """A report (no fix) for a call whose pointer type is not proven but may be 16-bit."""
        helper = f"rocmigrate_atomic_{OPERATIONS[function]}"
        if operand.kind == "template":
            if not mentions_sixteen_bit(ctx) or excluded_by_size_check(
                    ctx, start, operand.type, size=2):  # bytes of a 16-bit T
                return None
            return self._report(ctx, start, end, function, (
                f"{function} on {operand.type}* in template code: where {operand.type} is __half, "
                f"__half2 or bf16, ROCm {target} has no native {function}; call {helper} "
                "(rocmigrate_atomics.h) for those types"))
        if operand.kind == "known":
            return None  # int, float, double...: HIP has these
        evidence = sixteen_bit_evidence(ctx, args[1:], start)
        if not evidence:
            return None
        return self._report(ctx, start, end, function, (
            f"{function} on a 16-bit float ({evidence}) through a pointer whose type rocmigrate "
            f"cannot see: if it is __half or bf16, ROCm {target} has no native {function}; "
            f"use {helper} (rocmigrate_atomics.h)"))

    @staticmethod
    def _report(ctx: RuleContext, start: int, end: int, function: str, text: str) -> Diagnostic:
        return Diagnostic("ATM001", text, start, end,
                          marker_fix(ctx, start, Marker("ATM001", text)), library="device",
                          symbol=function)


def _clang_pointee(ctx: RuleContext, begin: int, end: int) -> str | None:
    """What libclang proves the pointer at [begin, end) points to, with ``--clang``: a 16-bit
    type's name when it is that one in every instantiation, ``"other"`` when it is never a
    16-bit type; None when unknown, not asked, or different 16-bit types (or 16-bit in some
    instantiations only: the call needs the helper for some and not others)."""
    if ctx.settings.clang_root is None:
        return None
    from migrator.clang.types import pointee_types_at

    pointees = pointee_types_at(ctx, begin, end)
    if not pointees:
        return None
    sixteen = {pointee for pointee in pointees if pointee in SIXTEEN_BIT}
    if not sixteen:
        return "other"
    return sixteen.pop() if len(sixteen) == len(pointees) == 1 else None


def _no_helper(function: str, written: str, canonical: str, target: str) -> str:
    if canonical == "hip_bfloat16":
        return (f"{function} on hip_bfloat16*: HIP has no atomics for the hip_bfloat16 struct, and "
                f"rocmigrate's helpers cover it only for ROCm < 6.0; on ROCm {target} use "
                "__hip_bfloat16 (hip/hip_bf16.h) with rocmigrate_atomic_" + OPERATIONS[function])
    return (f"{function} on {written}*: ROCm {target} has no CUDA-style bf16 type "
            "(__hip_bfloat16 comes with ROCm 6.0) and no native atomic for it; port the type, "
            f"then use rocmigrate_atomic_{OPERATIONS[function]} (rocmigrate_atomics.h)")


def _mixed_rewrite(ctx: RuleContext, start: int, end: int, args) -> Fix | None:
    """``atomicAdd(h, __float2half(x))`` -> ``rocmigrate_atomic_add_mixed(h, x)`` (unsafe)."""
    begin, finish = args[1]
    text = ctx.data[begin:finish].decode("utf-8", "replace")
    match = _ROUNDED_FLOAT.match(text)
    if match is None or not text.endswith(")"):
        return None
    inner = arguments(ctx, begin + match.end() - 1)
    if inner is None or len(inner) != 1 or ctx.data.find(b")", inner[0][1]) != finish - 1:
        return None
    value = ctx.data[inner[0][0] : inner[0][1]]
    return Fix("add the float with rocmigrate_atomic_add_mixed (one rounding)",
               (Edit(start, end, b"rocmigrate_atomic_add_mixed"), Edit(begin, finish, value)),
               Applicability.UNSAFE, includes=(SUPPORT_HEADER,))
