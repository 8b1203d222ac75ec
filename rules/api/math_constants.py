"""MTH001: CUDA's math constants (CUDART_PI_F...) that HIP lacks at the target ->
rocmigrate_math_constants.h."""

from __future__ import annotations

import functools

from migrator import support
from migrator.apitables import ApiTables
from migrator.diagnostics import Diagnostic, Fix
from migrator.engine import has_define
from migrator.parsing.includes import LINE_INCLUDE
from migrator.rule import Rule, RuleContext
from migrator.semantic.calls import find_name
from migrator.versions import format_version

from ..target_names import renamable

HEADER = "rocmigrate_math_constants.h"  # templates/support/rocmigrate_math_constants.h.j2
SUPPORT_HEADER = f'"{HEADER}"'
CUDA_HEADER = "math_constants.h"


@functools.lru_cache(maxsize=8)
def constants(tables: ApiTables) -> frozenset[str]:
    """CUDA's math constants: the rows ``CUDART_*`` whose HIP name is one of
    hip_math_constants.h's ``HIP_*`` (``CUDART_VERSION`` is none)."""
    return frozenset(entry.cuda for entry in tables.names.values()
                     if entry.cuda.startswith("CUDART_") and entry.hip.startswith("HIP_"))


@functools.lru_cache(maxsize=8)
def lacking(tables: ApiTables, rocm: tuple[int, int, int]) -> frozenset[str]:
    """The constants whose HIP name the target lacks (all before ROCm 5.3, the double ones
    before 5.7): rocmigrate_math_constants.h defines them under their CUDA names, and API001
    leaves them to MTH001; it renames the others."""
    return frozenset(name for name in constants(tables)
                     if not renamable(tables.names[name], rocm))


def _includes_cuda_header(ctx: RuleContext) -> bool:
    """Does the file include ``math_constants.h``? HDR001 rewrites that include to the header
    of the target (rocmigrate_math_constants.h before ROCm 5.3, a header row of
    lowerings.tsv), which then provides its constants: one more at the top would be a
    duplicate."""
    return any(match.group(2).strip() == CUDA_HEADER.encode()
               and ctx.literals.covering(match.start()) in ("include", None)
               for match in LINE_INCLUDE.finditer(ctx.data))


class MathConstants(Rule):
    """Include rocmigrate's definitions of the constants of CUDA's ``math_constants.h``
    (``CUDART_PI_F``, ``CUDART_INF_F``, ``CUDART_NAN``, ``CUDART_SQRT_2PI``...) where the
    target's HIP lacks them.

    ## What it does
    Before ROCm 5.3, HIP has no ``hip/hip_math_constants.h``, and before 5.7 it has only its
    float constants (``HIP_PI_F``; ``HIP_PI`` comes with 5.7). For the ``CUDART_*`` constants
    the target lacks (those API001 cannot rename to ``HIP_*``), the engine includes
    ``rocmigrate_math_constants.h``, which the run writes beside the output: it defines every
    constant of CUDA's ``math_constants.h`` under its CUDA name with CUDA's value, so the code
    keeps the names. Where the target has no HIP header at all (before ROCm 5.3), HDR001 turns
    ``#include <math_constants.h>`` itself into ``#include "rocmigrate_math_constants.h"``
    (a header row of ``rules/api/lowerings.tsv``). The constants the target has are renamed
    to HIP's (API001: ``CUDART_PI_F`` -> ``HIP_PI_F``); a file that uses them without
    including ``math_constants.h`` (nvcc's runtime includes it) gets
    ``hip/hip_math_constants.h`` included, which HIP's runtime header does not include. A
    file that defines a constant itself (a fallback ``#define CUDART_PI_F``) keeps its own.

    ## Why is this bad on AMD
    The converted file does not compile: ``'math_constants.h' file not found`` before ROCm
    5.3 (the real project mixbench stops there at ``--rocm 5.2``), an undeclared ``CUDART_PI``
    before 5.7, and an undeclared ``HIP_PI_F`` where the file relied on nvcc's runtime for the
    constants. A port by hand has to copy the constants, and a rounded-off value
    changes results.

    ## Example
    ```cpp
    #include <math_constants.h>
    __global__ void k(float* out) { out[0] = 2.0f * CUDART_PI_F; }
    ```

    ## Use instead
    ```cpp
    #include "rocmigrate_math_constants.h"
    __global__ void k(float* out) { out[0] = 2.0f * CUDART_PI_F; }
    ```

    ## Fix safety
    Safe: each constant has CUDA's value, bit for bit (the infinities, NaNs, signed zero and
    smallest denormals as CUDA's bit patterns, through ``__builtin_bit_cast``), on the host
    and on the device; rocmigrate's tests compare them with CUDA's header. On NVIDIA the
    header includes CUDA's own ``math_constants.h``.
    """

    code = "MTH001"
    category = "conversion"
    name = "math-constant"
    summary = "CUDA math constant HIP lacks at the target, or whose HIP header is missing"
    family = "api"
    fix = "always"

    def check(self, ctx: RuleContext):
        if b"CUDART_" not in ctx.data:
            return
        rocm = ctx.settings.rocm
        missing = lacking(ctx.tables, rocm)
        defined_here = HEADER in support.referenced(ctx.data)
        included = _includes_cuda_header(ctx)
        low = ctx.tables.lowerings.get(CUDA_HEADER)
        becomes_support = (included and low is not None and low.replacement == SUPPORT_HEADER
                           and low.applies(rocm))
        hip_header = ctx.tables.headers[CUDA_HEADER].hip_header
        target = format_version(rocm)
        found = list(find_name(ctx, {name.encode() for name in constants(ctx.tables)}))
        own = {name for name in {name.decode() for name, _, _ in found}
               if has_define(ctx.data, name, ctx.literals)}
        for name, start, end in found:
            constant = name.decode()
            if constant in own:
                continue
            entry = ctx.tables.names[constant]
            if constant in missing:
                if defined_here:
                    continue
                text = (f"{constant}: HIP {target} has no {entry.hip}; {HEADER} defines it "
                        "with CUDA's value")
                fix = Fix(f"include {HEADER}", (),
                          includes=() if becomes_support else (SUPPORT_HEADER,))
            elif included:
                continue  # API001 renames it, the include HDR001 rewrites declares it
            else:
                text = (f"{constant} -> {entry.hip} needs <{hip_header}>: CUDA's runtime "
                        "includes math_constants.h, HIP's runtime does not include it")
                fix = Fix(f"include <{hip_header}>", (), includes=(hip_header,))
            yield Diagnostic("MTH001", text, start, end, fix, library=entry.library,
                             symbol=constant, severity="info")
