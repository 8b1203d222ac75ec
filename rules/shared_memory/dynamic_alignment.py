"""SHM001: dynamic shared memory declared without an alignment."""

from __future__ import annotations

import re

from migrator.diagnostics import Diagnostic
from migrator.rule import Rule, RuleContext

_EXTERN_SHARED = re.compile(
    rb"\bextern\s+(?:(?:__shared__|volatile|const)\s+|__attribute__\s*\(\([^)]*\)\)\s*|alignas\s*\([^)]*\)\s*)*"
    rb"([A-Za-z_][\w:<>, ]*?)\s*\*?\s*(\w+)\s*\[\s*\]\s*;")


class DynamicSharedAlignment(Rule):
    """Report ``extern __shared__`` arrays declared without an explicit alignment.

    ## What it does
    Finds dynamic shared memory declarations (``extern __shared__ T smem[];``) that carry no
    ``__attribute__((aligned(N)))`` or ``alignas(N)``. Detection only: the rewrite, with the
    alignment chosen from the widest type the buffer is accessed as, belongs to the shared
    memory optimisation rules.

    ## Why is this bad on AMD
    Kernels commonly carve one dynamic buffer into arrays of different types
    (``float4*``, ``double*``) by pointer arithmetic. Without an explicit alignment the buffer
    is only aligned for its declared element type; vector loads from LDS (``ds_read_b128``) need
    16-byte alignment, and misaligned accesses are split or fault.

    ## Example
    ```cpp
    extern __shared__ float smem[];
    ```

    ## Use instead
    ```cpp
    extern __shared__ __attribute__((aligned(16))) float smem[];
    ```

    ## Fix safety
    No fix here: the needed alignment depends on how the buffer is used.
    """

    code = "SHM001"
    name = "dynamic-shared-alignment"
    summary = "dynamic shared memory without an explicit alignment"
    family = "shared_memory"
    fix = "never"

    def check(self, ctx: RuleContext):
        data = ctx.data
        if b"extern" not in data or b"__shared__" not in data:
            return
        for match in _EXTERN_SHARED.finditer(data):
            text = data[data.rfind(b"\n", 0, match.start()) + 1 : match.end()]  # whole statement line
            if b"__shared__" not in text or b"aligned" in text or b"alignas" in text:
                continue
            if not ctx.in_code(match.start()):
                continue
            name = match.group(2).decode()
            yield Diagnostic("SHM001", f"dynamic shared array '{name}' has no explicit alignment "
                             "(add __attribute__((aligned(16))) or the widest type it is used as)",
                             match.start(), match.end(), library="device", symbol=name)
