"""An API name in both spellings, from the tables: reading CUDA and HIP code alike (``hip_name``,
``spellings``), and writing calls in the dialect of the code being fixed: CUDA names in CUDA code
(the rename rules convert them in the next round of the fix loop) and HIP names in HIP code
(lint), so an optimisation rule writes one spelling of each call."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from ..apitables import ApiTables
from ..rule import RuleContext


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


def hip_name(tables: ApiTables, name: str) -> str:
    """The HIP name the tables give the API ``name`` (``name`` itself when it has none, or is
    already HIP's): rules that look for an API match on this, so that they judge a CUDA file
    and its converted output alike, whether or not the target renames it."""
    entry = tables.names.get(name)
    return entry.hip if entry is not None and entry.hip else name


@functools.lru_cache(maxsize=8)
def _spellings(tables: ApiTables) -> dict[str, frozenset[str]]:
    by_hip: dict[str, set[str]] = {}
    for entry in tables.names.values():
        if entry.hip:
            by_hip.setdefault(entry.hip, {entry.hip}).add(entry.cuda)
    return {hip: frozenset(names) for hip, names in by_hip.items()}


def spellings(tables: ApiTables, hip: str) -> frozenset[str]:
    """Every name that ``hip_name`` reads as ``hip``: the HIP name and the CUDA names the tables
    convert to it (``hipStream_t``: ``cudaStream_t``, ``CUstream``, ``hipStream_t``)."""
    return _spellings(tables).get(hip, frozenset({hip}))


def cuda_and_hip(tables: ApiTables, *cuda: str) -> frozenset[str]:
    """Each CUDA name in ``cuda`` and the HIP name the tables give it (``hip_name``): the two
    spellings of the calls a rule names, as a CUDA file and its converted output write them.
    Narrower than ``spellings``, which also reads the other CUDA names of that HIP name (driver
    API ``cu*`` calls, deprecated aliases such as ``cudaThreadSynchronize``)."""
    return frozenset(name for each in cuda for name in (each, hip_name(tables, each)))


def alternation(names: Iterable[str]) -> bytes:
    """``names`` as a regex group ``(?:a|b)`` of literal bytes, the longest first (so a name
    that starts another, ``hipMemcpy`` of ``hipMemcpyAsync``, is tried after it), then in
    alphabetical order: the same names make the same regex."""
    ordered = sorted(set(names), key=lambda name: (-len(name), name))
    return b"(?:" + b"|".join(re.escape(name.encode()) for name in ordered) + b")"
