"""Writing runtime calls in the dialect of the code being fixed: CUDA names in CUDA code (the
rename rules convert them in the next round of the fix loop) and HIP names, from the API tables,
in HIP code (lint), so an optimisation rule writes one spelling of each call."""

from __future__ import annotations

from migrator.rule import RuleContext


def is_hip(name: bytes | str) -> bool:
    return (name.decode() if isinstance(name, bytes) else name).startswith("hip")


def api_name(ctx: RuleContext, cuda: str, hip: bool) -> str:
    """``cuda`` itself, or its HIP name for HIP code."""
    if not hip:
        return cuda
    entry = ctx.tables.names.get(cuda)
    return entry.hip if entry is not None else cuda


def api_call(ctx: RuleContext, cuda: str, arguments: list[str], hip: bool) -> str:
    """``name(arguments)`` for the dialect; HIP calls get the arguments HIP adds (for example
    hipHostMalloc's flags) from the argument-rewrite table."""
    arguments = list(arguments)
    if hip:
        for rewrite in ctx.tables.argument_rewrites.get(cuda, ()):
            if rewrite.action == "append_argument" and len(arguments) == rewrite.arg:
                arguments.append(rewrite.value)
    return f"{api_name(ctx, cuda, hip)}({', '.join(arguments)})"
