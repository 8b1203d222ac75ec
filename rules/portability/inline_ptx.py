"""PTX001: inline PTX assembly."""

from __future__ import annotations

import re

from migrator.diagnostics import Diagnostic
from migrator.rule import Rule, RuleContext

_ASM = re.compile(rb"\b(?:asm|__asm__|__asm)\s*(?:volatile|__volatile__)?\s*\(\s*(\"(?:\\.|[^\"\\])*\")")
_PTX = re.compile(
    rb"%%?(?:laneid|warpid|smid|clock|tid\.|ntid\.|ctaid\.)|\b(?:ld|st|mov|cvt|shfl|vote|bar|"
    rb"membar|atom|red|mma|wmma|ldmatrix|cp\.async|prmt|lop3|brev|bfe|bfi|popc|clz|fma|mad|"
    rb"add|sub|mul|setp|selp)\.[a-z0-9.]+|\.reg\s+\.|\{\s*\.reg")


class InlinePtx(Rule):
    """Report inline PTX assembly (``asm("...")`` with NVIDIA PTX instructions).

    ## What it does
    Finds ``asm`` / ``__asm__`` statements whose template is PTX (``mov.u32 %0, %%laneid;``,
    ``shfl.sync...``, ``ld.global...``, ``.reg`` declarations) and reports each one.

    ## Why is this bad on AMD
    PTX is NVIDIA's virtual ISA: AMD GPUs execute GCN/CDNA instructions, and hipcc cannot
    translate PTX. The build fails, or the block is silently compiled out behind
    ``#ifdef __CUDA_ARCH__``. Each site must be rewritten by hand, usually with a HIP builtin
    (``__lane_id()``, ``__shfl*``, ``__builtin_amdgcn_*``) or plain C++.

    ## Example
    ```cpp
    unsigned lane;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    ```

    ## Use instead
    ```cpp
    unsigned lane = __lane_id();
    ```

    ## Fix safety
    No fix: there is no mechanical translation from PTX to AMD ISA.
    """

    code = "PTX001"
    name = "inline-ptx"
    summary = "inline PTX assembly"
    family = "portability"
    fix = "never"

    def check(self, ctx: RuleContext):
        data = ctx.data
        if b"asm" not in data:
            return
        for match in _ASM.finditer(data):
            if not ctx.in_code(match.start()):
                continue
            template = match.group(1)
            instruction = _PTX.search(template)
            if instruction is None:
                continue
            yield Diagnostic("PTX001", f"inline PTX ('{instruction.group().decode()}...'): AMD "
                             "GPUs cannot run PTX; rewrite with a HIP builtin or C++",
                             match.start(), match.end(), library="device", symbol="asm")
