"""WAV006: shared arrays sized per warp with a literal 32."""

from __future__ import annotations

import re

from migrator.diagnostics import Diagnostic
from migrator.rule import Rule, RuleContext

from ..markers import unproven_fix
from .common import marker_site

SHARED = re.compile(rb"__shared__[^;{}]*?\[([^\]\n]*?)(/\s*32|>>\s*5)\s*\]")


class PerWarpSharedArray(Rule):
    """Report ``__shared__`` arrays sized as "one slot per 32-lane warp".

    ## What it does
    Finds shared-memory arrays whose size divides by 32 (or shifts by 5):
    ``__shared__ float partial[BLOCK / 32]``, ``[blockDim.x >> 5]``; each gets a
    ``// rocmigrate WAV006:`` marker.

    ## Why is this bad on AMD
    These arrays hold one value per warp, indexed by ``threadIdx.x / 32``. With 64-lane
    wavefronts the code that fills them (``lane == 0`` writers, warp reductions) produces one
    value per 64 lanes: half the slots stay uninitialised and a final pass over all of them reads
    garbage; or, if the index is changed to ``/ warpSize`` and the size is not, the sizes
    disagree. Sizing and indexing must change together.

    ## Example
    ```cpp
    __shared__ float partial[BLOCK / 32];
    ```

    ## Use instead
    ```cpp
    __shared__ float partial[BLOCK / 32];   // upper bound: enough for 32- and 64-lane targets
    int warps = blockDim.x / warpSize;      // and loop over the slots actually written
    ```

    ## Fix safety
    No fix: the array size and every index into it must be reviewed together.
    """

    code = "WAV006"
    name = "per-warp-shared-array"
    summary = "shared array sized per 32-lane warp"
    family = "wavefront"
    fix = "never"

    def check(self, ctx: RuleContext):
        if ctx.settings.wavefront_size == 32 or b"__shared__" not in ctx.data:
            return
        for match in SHARED.finditer(ctx.data):
            if not ctx.in_code(match.start()):
                continue
            start, end = match.span(1)[0], match.end(2)
            size = ctx.data[start:end].decode("utf-8", "replace").strip()
            message = (f"shared array sized [{size}]: one slot per 32-lane warp; 64-lane "
                       "wavefronts fill half of it (review its size and indexing together)")
            yield Diagnostic("WAV006", message, start, end,
                             unproven_fix(ctx, marker_site(ctx, match.start()), "WAV006", message),
                             library="device", symbol="__shared__")
