"""ATM003: float/double atomicAdd on AMD: the safe default or the fast hardware atomics."""

from __future__ import annotations

from migrator.diagnostics import Diagnostic
from migrator.rule import Rule, RuleContext
from migrator.semantic.calls import find_name, lexical_call
from migrator.semantic.lookup import function_key, may_point_to

from ..markers import unproven_fix
from .operands import pointer_operand

_FLOATING = frozenset({"float", "double"})


class FloatAtomicTradeoff(Rule):
    """Report, once per function, the fast/safe choice for float and double ``atomicAdd`` on AMD.

    ## What it does
    Counts the ``atomicAdd`` calls on a proven ``float*`` or ``double*`` (declared in the
    function or the file, or cast) in each function, and reports them once per function, at the
    first call: one finding per kernel instead of one per call. Atomics on ``__shared__`` arrays
    (LDS) are not counted: they use the hardware atomics either way. Nothing is rewritten; a
    ``// rocmigrate ATM003:`` marker above the first call says the choice.

    ## Why is this bad on AMD
    HIP's ``atomicAdd(float*)`` and ``atomicAdd(double*)`` are the safe form by default. On MI200
    (gfx90a), hipcc compiles them on global memory to a compare-and-swap loop
    (``global_atomic_cmpswap``: Debian's hipcc 5.2, checked); with ``-munsafe-fp-atomics`` they
    become the hardware float atomics (``global_atomic_add_f32``, ``flat_atomic_add_f64``).
    AMD's documentation of ``unsafeAtomicAdd`` (HIP's ``amd_hip_unsafe_atomics.h``) calls them
    "fast hardware floating point atomic operations" that "may handle rounding and subnormal
    values differently", and undefined on fine-grained memory (``hipHostMalloc``'d or coherent
    host memory, memory shared with peers). ``unsafeAtomicAdd`` and ``safeAtomicAdd`` pick one
    form per call, whatever the flag. Which one is right depends on where the memory comes
    from, which a converter cannot see: the choice is reported, not made.

    ## Example
    ```cpp
    __global__ void histogram(const int* bins, float* counts, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) atomicAdd(&counts[bins[i]], 1.0f);
    }
    ```

    ## Use instead
    ```cpp
    __global__ void histogram(const int* bins, float* counts, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      // counts is hipMalloc'd (coarse-grained): the hardware atomic is safe here
      if (i < n) unsafeAtomicAdd(&counts[bins[i]], 1.0f);
    }
    ```

    ## Fix safety
    No fix: the fast form is wrong on fine-grained memory and the safe form is slow; only a
    person who knows the allocation can choose. Suppress the finding where the default is meant.
    """

    code = "ATM003"
    name = "float-atomic-tradeoff"
    summary = "float/double atomicAdd: safe CAS loop or fast hardware atomic on AMD"
    family = "atomics"
    fix = "never"
    optimization = True

    def check(self, ctx: RuleContext):
        if b"atomicAdd" not in ctx.data:
            return
        functions: dict[int, list] = {}  # function's body -> [start, end, count, types, name]
        # (CUDA's block-scope atomicAdd_block is HIP's atomicAdd once converted)
        for _, start, end in find_name(ctx, {b"atomicAdd", b"atomicAdd_block"}):
            call = lexical_call(ctx, start, end)
            if call is None or call == "macro" or len(call.arguments) != 2:
                continue
            if not may_point_to(ctx, *call.arguments[0], _FLOATING):
                continue  # cannot be float/double: settled without parsing the file
            operand = pointer_operand(ctx, *call.arguments[0])
            if operand.kind != "known" or operand.type not in ("float", "double") or operand.shared:
                continue
            function = function_key(ctx, start)
            if function is None:
                continue
            entry = functions.setdefault(function[0], [start, end, 0, set(), function[1]])
            entry[2] += 1
            entry[3].add(operand.type)
        for start, end, count, types, name in functions.values():
            calls = "1 atomicAdd" if count == 1 else f"{count} atomicAdd calls"
            floating = "/".join(sorted(types))
            # the marker, at the first call, says the choice without the count (which a
            # person's own unsafeAtomicAdd elsewhere in the function would change)
            marker = (f"atomicAdd on {floating} in global memory: AMD's default is a safe "
                      "compare-and-swap loop; unsafeAtomicAdd (or -munsafe-fp-atomics) is the "
                      "faster hardware atomic, undefined on fine-grained memory: choose per call")
            yield Diagnostic(
                "ATM003", f"{name}: {calls} on {floating} in global memory. On AMD "
                "the default is the safe form (a compare-and-swap loop on MI200); "
                "-munsafe-fp-atomics or unsafeAtomicAdd use the faster hardware atomics, which are "
                "undefined on fine-grained (host-coherent or peer) memory; safeAtomicAdd keeps the "
                "safe form under that flag. Unchanged: choose per call",
                start, end, unproven_fix(ctx, start, "ATM003", marker),
                library="device", symbol="atomicAdd", severity="info")
