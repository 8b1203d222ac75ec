"""What in a function relies on the legacy null stream: work issued to it synchronises with every
blocking stream, so a stream may only become non-blocking where nothing like this sits beside it."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from migrator.apitables import ApiTables
from migrator.rule import RuleContext

from ..api.rename import hip_name
from ..calls import arguments
from ..scopes import Block, code_matches

# Calls are recognised by the HIP name the API tables give them (api.rename.hip_name), so that a
# CUDA file and its converted output are judged alike: CUDA runtime and driver spellings
# (cudaMemcpy, cuMemcpyHtoD, cuStreamSynchronize) and HIP's are the same call here.
# sync copies/sets always go to the null stream
_SYNC_CALL = re.compile(
    r"hip(?:Memcpy(?:2D|3D|Peer|ToSymbol|FromSymbol|ToArray|FromArray|2DToArray|"
    r"2DFromArray|AtoH|HtoA|HtoD|DtoH|DtoD)?|Memset(?:2D|3D|D8|D16|D32)?)")
# (async call, index of its stream argument): a missing or null stream is the null stream
_STREAM_ARGUMENT = {
    "MemcpyAsync": 4, "MemsetAsync": 3, "Memcpy2DAsync": 7, "Memset2DAsync": 5,
    "MemcpyToSymbolAsync": 5, "MemcpyFromSymbolAsync": 5, "MemcpyPeerAsync": 5,
    "EventRecord": 1, "LaunchKernel": 5, "MemPrefetchAsync": 3, "MallocAsync": 2,
    "FreeAsync": 1, "StreamSynchronize": 0, "StreamWaitEvent": 0, "StreamQuery": 0,
}
_CALL = re.compile(rb"\b([A-Za-z_]\w*+)\s*\(")
_LAUNCH = re.compile(rb"<<<")
_GGL = re.compile(rb"\bhipLaunchKernelGGL\s*\(")
# libraries whose work runs on a stream the program sets: those with a SetStream call
_SET_STREAM_SUFFIX = "SetStream"
_RUNTIME_LIBRARIES = ("runtime", "driver")
# in HIP spelling: is_null_stream reads CUDA names (cudaStreamLegacy, (CUstream)0) as HIP's
NULL_STREAMS = {"0", "NULL", "nullptr", "hipStreamLegacy", "(hipStream_t)0", "0L",
                "hipStream_t(0)", "hipStreamDefault"}
_WORD = re.compile(r"[A-Za-z_]\w*")


def is_null_stream(text: str, tables: ApiTables) -> bool:
    """Does the stream expression ``text`` name the null stream (in CUDA or HIP spelling)?"""
    return _WORD.sub(lambda m: hip_name(tables, m.group()), text.replace(" ", "")) in NULL_STREAMS


@dataclass(frozen=True)
class Launch:
    """A ``kernel<<<grid, block[, shared[, stream]]>>>`` launch: where ``<<<`` starts, where
    ``>>>`` starts, and its stream ("0", the null stream, when the launch names none)."""

    start: int
    close: int
    stream: str


def launches(ctx: RuleContext, start: int, end: int):
    """The ``<<<...>>>`` launches in code in [start, end); the configuration is split at its
    top-level commas, so ``dim3(x, y)`` stays one argument."""
    data = ctx.data
    for match in code_matches(ctx, _LAUNCH, start, end):
        close = data.find(b">>>", match.end(), end)
        if close == -1:
            continue
        config = _split(data[match.end() : close])
        yield Launch(match.start(), close, config[3] if len(config) >= 4 else "0")


@dataclass(frozen=True)
class StreamApis:
    """HIP names of the APIs the stream rules look for, derived from the API tables."""

    runtime: frozenset[str]  # runtime and driver APIs (and the GGL launch)
    library: frozenset[str]  # functions of libraries that run work on a settable stream
    set_stream: frozenset[str]  # the calls that give such a library its stream
    # every spelling (CUDA's and HIP's, as bytes) of a call null_stream_uses acts on: a sync
    # copy or set, a call with a stream argument, a library call or a SetStream
    watched: frozenset[bytes] = frozenset()


@functools.lru_cache(maxsize=8)
def stream_apis(tables: ApiTables) -> StreamApis:
    """The stream-relevant APIs of ``tables``, each by its HIP name (or its CUDA name where it
    has none): match a written name through ``hip_name`` to find it in either spelling."""
    entries = [e for e in tables.names.values() if e.kind == "function"]
    libraries = {e.library for e in entries if _SET_STREAM_SUFFIX in e.cuda
                 and e.library not in _RUNTIME_LIBRARIES}
    library = frozenset(e.hip or e.cuda for e in entries if e.library in libraries)
    set_stream = frozenset(e.hip or e.cuda for e in entries if e.library in libraries
                           and re.search(_SET_STREAM_SUFFIX + r"(?:_v\d+)?$", e.cuda))
    watched = {name for entry in tables.names.values() for name in (entry.cuda, entry.hip)
               if name and _acted_on(hip_name(tables, name), library | set_stream)}
    return StreamApis(
        runtime=frozenset({e.hip or e.cuda for e in tables.names.values()
                           if e.library in _RUNTIME_LIBRARIES} | {"hipLaunchKernelGGL"}),
        library=library, set_stream=set_stream,
        watched=frozenset(name.encode() for name in watched | {
            "hip" + call for call in _STREAM_ARGUMENT}),
    )


def _acted_on(name: str, library_calls: frozenset[str]) -> bool:
    """Does null_stream_uses act on a call whose HIP name is ``name``?"""
    return (_SYNC_CALL.fullmatch(name) is not None or name in library_calls
            or (name.startswith("hip") and name[3:] in _STREAM_ARGUMENT))


def api_calls(ctx: RuleContext, start: int, end: int):
    """(match, HIP name) for each call in code in [start, end): ``match`` spans the callee and
    the opening parenthesis; the HIP name is the callee's in the API tables (``hip_name``)."""
    for match in code_matches(ctx, _CALL, start, end):
        yield match, hip_name(ctx.tables, match.group(1).decode("ascii", "replace"))


def null_stream_uses(ctx: RuleContext, body: Block) -> list[tuple[int, str]]:
    """(offset, what) for each use of the null stream in ``body``."""
    data = ctx.data
    start, end = body.open, body.close
    uses: list[tuple[int, str]] = []
    for launch in launches(ctx, start, end):
        if is_null_stream(launch.stream, ctx.tables):
            uses.append((launch.start, "a kernel launch on the null stream"))
    for match in code_matches(ctx, _GGL, start, end):
        spans = arguments(data, match.end() - 1)
        if spans and len(spans) >= 5 and is_null_stream(_text(data, spans[4]), ctx.tables):
            uses.append((match.start(), "a kernel launch on the null stream"))
    apis = stream_apis(ctx.tables)
    library, set_stream = None, False
    for match in code_matches(ctx, _CALL, start, end):
        callee = match.group(1)
        if callee not in apis.watched and b"set_stream" not in callee:
            continue  # most calls: user functions, macros, APIs that use no stream
        written = callee.decode("ascii", "replace")
        name = hip_name(ctx.tables, written)
        if _SYNC_CALL.fullmatch(name):
            uses.append((match.start(), f"{written} (runs on the null stream)"))
        elif name.startswith("hip") and name[3:] in _STREAM_ARGUMENT:
            spans = arguments(data, match.end() - 1)
            if spans is None:
                continue
            index = _STREAM_ARGUMENT[name[3:]]
            if len(spans) <= index or is_null_stream(_text(data, spans[index]), ctx.tables):
                uses.append((match.start(), f"{written} on the null stream"))
        elif name in apis.set_stream or b"set_stream" in match.group(1):
            set_stream = True
        elif name in apis.library and library is None:
            library = (match.start(), written)
    if library is not None and not set_stream:
        uses.append((library[0], f"{library[1]} (library work runs on the null stream unless a "
                     "stream is set)"))
    uses.sort()
    return uses


def _text(data: bytes, span: tuple[int, int]) -> str:
    return data[span[0] : span[1]].decode("utf-8", "replace").strip()


def _split(config: bytes) -> list[str]:
    parts, depth, current = [], 0, bytearray()
    for byte in config:
        char = bytes([byte])
        if char in b"([{":
            depth += 1
        elif char in b")]}":
            depth -= 1
        if char == b"," and depth == 0:
            parts.append(current.decode("utf-8", "replace").strip())
            current = bytearray()
            continue
        current += char
    parts.append(current.decode("utf-8", "replace").strip())
    return parts
