"""WRP003: the warp-sync builtins are declared only on request in the HIP releases that have them."""

from __future__ import annotations

import re

from migrator.diagnostics import Diagnostic, Fix
from migrator.rule import Rule, RuleContext
from migrator.versions import parse_version

from .common import builtin_names

# HIP 6.2 to 6.4 declare __shfl_*_sync, __ballot_sync, __any_sync, __all_sync, __match_*_sync
# and __activemask only when this macro is defined before hip/hip_runtime.h is included (amd_detail/amd_warp_sync_functions.h of HIP 6.4.3: `#ifdef
# HIP_ENABLE_WARP_SYNC_BUILTINS`; checked against the HIP 6.4.3 header tree). Older releases lack
# the builtins (WRP001 lowers them); the releases rocmigrate knows stop at 6.4.
ENABLE = "HIP_ENABLE_WARP_SYNC_BUILTINS"
FIRST_RELEASE = parse_version("6.2")
GUARDED = frozenset({b"__shfl_sync", b"__shfl_up_sync", b"__shfl_down_sync", b"__shfl_xor_sync",
                     b"__ballot_sync", b"__any_sync", b"__all_sync", b"__match_any_sync",
                     b"__match_all_sync", b"__activemask"})  # what the #ifdef hides in 6.4.3
# a call of one of them in an included file (comments too: a define too many is harmless)
_CALLED = re.compile(rb"\b(?:" + b"|".join(sorted(GUARDED)) + rb")\b")


class WarpSyncEnable(Rule):
    """Define ``HIP_ENABLE_WARP_SYNC_BUILTINS`` in files that call the warp-sync builtins.

    ## What it does
    For targets from ROCm 6.2, where HIP has ``__shfl_*_sync``, ``__ballot_sync``,
    ``__any_sync``, ``__all_sync`` and ``__match_*_sync``, a file that calls one of them gets
    ``#define HIP_ENABLE_WARP_SYNC_BUILTINS`` before its first ``#include`` (once; not where the
    file defines it already). So does a file of the converted tree that includes such a file
    (``#include "reduce.cuh"``, directly or through other project headers): its own first HIP
    header, above that include, is where the macro must already be defined. Older targets get
    the lowered forms instead (WRP001).

    ## Why is this bad on AMD
    HIP 6.2 to 6.4 declare these builtins only when that macro is defined before
    ``hip/hip_runtime.h``: without it a CUDA kernel's ``__shfl_down_sync`` is an undeclared
    identifier and the port does not build.

    ## Example
    ```cpp
    #include <hip/hip_runtime.h>
    __device__ int sum(int v) { return v + __shfl_down_sync(0xffffffffffffffffull, v, 1); }
    ```

    ## Use instead
    ```cpp
    #define HIP_ENABLE_WARP_SYNC_BUILTINS
    #include <hip/hip_runtime.h>
    __device__ int sum(int v) { return v + __shfl_down_sync(0xffffffffffffffffull, v, 1); }
    ```

    ## Fix safety
    Safe: the macro only declares the builtins. A header that calls them and is included after
    ``hip/hip_runtime.h`` needs the macro in the including file too: converting a tree, the
    including files get it (a header included from outside the tree, or a file converted on
    its own, needs it there or as a compile flag, ``-DHIP_ENABLE_WARP_SYNC_BUILTINS``).
    """

    code = "WRP003"
    name = "warp-sync-enable"
    summary = "warp-sync builtins need HIP_ENABLE_WARP_SYNC_BUILTINS"
    family = "wavefront"
    fix = "always"
    category = "conversion"

    def check(self, ctx: RuleContext):
        if ctx.settings.rocm < FIRST_RELEASE or ENABLE.encode() in ctx.code:
            return  # lowered by WRP001; or the file defines (or tests) the macro itself
        # the wavefront rules' one scan of the file for the warp builtins (as find_name finds
        # them), not a search per builtin
        for name, start, end in builtin_names(ctx, GUARDED):
            yield Diagnostic("WRP003", f"{name.decode()} needs {ENABLE} defined before the HIP "
                             "headers", start, end,
                             Fix(f"define {ENABLE}", (), defines=(ENABLE,)), library="device",
                             symbol=name.decode(), severity="info")
            return  # one define serves the file
        for file in ctx.included:
            called = _CALLED.search(file.data)
            if called is None:
                continue
            name = called.group().decode()
            start = max(ctx.data.find(b'"' + file.spelled.encode("utf-8", "surrogateescape")
                                      + b'"') + 1, 0)
            yield Diagnostic("WRP003", f"{file.rel}, included here, calls {name}: {ENABLE} must "
                             "be defined before the first HIP header of the translation unit",
                             start, start + len(file.spelled),
                             Fix(f"define {ENABLE}", (), defines=(ENABLE,)), library="device",
                             symbol=name, severity="info")
            return
