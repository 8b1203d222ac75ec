"""SHM001: dynamic shared memory declared without an alignment."""

from __future__ import annotations

import re

from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Rule, RuleContext
from migrator.semantic.scopes import function_at

from .common import type_bytes

EXTERN_SHARED = re.compile(
    rb"\bextern\s+(?:(?:__shared__|volatile|const)\s+|__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)\s*|"
    rb"alignas\s*\((?:[^()]|\([^()]*\))*\)\s*)*"
    rb"([A-Za-z_][\w:<>, ]*?)\s*\*?\s*(\w+)\s*\[\s*\]\s*;")
MINIMUM_ALIGNMENT = 16


class DynamicSharedAlignment(Rule):
    """Align dynamic shared memory for the widest type it is accessed as.

    ## What it does
    Finds dynamic shared memory declarations (``extern __shared__ T smem[];``) that carry no
    ``__attribute__((aligned(N)))`` or ``alignas(N)`` and adds
    ``__attribute__((aligned(N)))``: N is the size of the widest type the buffer is read or
    written as in the function (casts such as ``reinterpret_cast<float4*>(smem)`` or
    ``(double2*)&smem[i]``), at least 16.

    ## Why is this bad on AMD
    Kernels commonly carve one dynamic buffer into arrays of different types (``float4*``,
    ``double*``) by pointer arithmetic. Without an explicit alignment the buffer is only
    aligned for its declared element type. AMD's CDNA ISA reference guides (MI200, MI300) have
    128-bit LDS instructions for 16-byte values (``ds_read_b128``, ``ds_write_b128``), which
    the compiler uses only where it knows the alignment: Debian's hipcc 5.2 (gfx90a) reads
    ``reinterpret_cast<float4*>(smem)[threadIdx.x]`` of an ``extern __shared__ float smem[]``
    with two ``ds_read2_b32``, and of the same buffer declared ``aligned(16)`` with one
    ``ds_read_b128``.

    ## Example
    ```cpp
    extern __shared__ float smem[];
    float4 v = reinterpret_cast<float4*>(smem)[threadIdx.x];
    ```

    ## Use instead
    ```cpp
    extern __shared__ __attribute__((aligned(16))) float smem[];
    float4 v = reinterpret_cast<float4*>(smem)[threadIdx.x];
    ```

    ## Fix safety
    Safe: a stricter alignment of the dynamic buffer changes no value and no layout (the
    buffer starts the dynamic LDS segment). Declarations inside macros are reported only.
    Not run under ``--runtime hip-cpu``: SHM003 declares the buffer with ``HIP_DYNAMIC_SHARED``
    there.
    """

    code = "SHM001"
    name = "dynamic-shared-alignment"
    summary = "dynamic shared memory without an explicit alignment"
    family = "shared_memory"
    fix = "sometimes"
    optimization = True

    def check(self, ctx: RuleContext):
        data = ctx.data
        if b"extern" not in data or b"__shared__" not in data or ctx.settings.runtime == "hip-cpu":
            return  # (HIP's CPU runtime: SHM003 declares it with HIP_DYNAMIC_SHARED)
        for match in EXTERN_SHARED.finditer(data):
            text = data[data.rfind(b"\n", 0, match.start()) + 1 : match.end()]  # whole statement line
            if b"__shared__" not in text or b"aligned" in text or b"alignas" in text:
                continue
            if not ctx.in_code(match.start()):
                continue
            name = match.group(2).decode()
            alignment, widest = _alignment(ctx, match, name)
            message = (f"dynamic shared array '{name}' has no explicit alignment: add "
                       f"__attribute__((aligned({alignment})))" + (f" (it is accessed as {widest})"
                                                                  if widest else ""))
            fix = None
            shared = data.find(b"__shared__", match.start(), match.end())
            if shared != -1 and not ctx.in_directive(match.start()):
                at = shared + len(b"__shared__")
                fix = Fix(f"align '{name}' to {alignment} bytes",
                          (Edit(at, at, f" __attribute__((aligned({alignment})))".encode()),),
                          keeps_syntax=True)
            yield Diagnostic("SHM001", message, match.start(), match.end(), fix,
                             library="device", symbol=name)


# pointer casts of a name: (type, name); the names differ from file to file, the patterns not
_REINTERPRET_CASTS = re.compile(r"reinterpret_cast\s*<\s*(?:const\s+|volatile\s+)*([\w: ]+?)"
                                r"\s*\*\s*>\s*\(\s*&?\s*([A-Za-z_]\w*)\b")
_C_CASTS = re.compile(r"\(\s*(?:const\s+|volatile\s+)*([\w: ]+?)\s*\*\s*\)\s*\(?\s*&?\s*"
                      r"([A-Za-z_]\w*)\b")


def _alignment(ctx: RuleContext, match: re.Match, name: str) -> tuple[int, str]:
    """(alignment, widest type) from the declared type and the casts of ``name`` in its
    function (the whole file for a file-scope declaration)."""
    body = function_at(ctx, match.start())
    start, end = (body.open, body.close) if body else (0, len(ctx.data))
    text = ctx.data[start:end].decode("utf-8", "replace")
    types = [match.group(1).decode()]
    types += [cast for cast, cast_name in _REINTERPRET_CASTS.findall(text) if cast_name == name]
    types += [cast for cast, cast_name in _C_CASTS.findall(text) if cast_name == name]
    best, widest = MINIMUM_ALIGNMENT, ""
    for name_of_type in types:
        size = type_bytes(name_of_type)
        if size is not None and size >= best and name_of_type != types[0]:
            best, widest = size, name_of_type.strip()
    return best, widest
