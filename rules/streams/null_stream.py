"""What in a function relies on the legacy null stream: work issued to it synchronises with every
blocking stream, so a stream may only become non-blocking where nothing like this sits beside it."""

from __future__ import annotations

import re
from dataclasses import dataclass

from migrator.rule import RuleContext

from ..calls import arguments
from ..scopes import Block, code_matches

# sync copies/sets always go to the null stream
_SYNC_CALL = re.compile(
    rb"\b(?:cuda|hip)(?:Memcpy(?:2D|3D|Peer|ToSymbol|FromSymbol|ToArray|FromArray|2DToArray|"
    rb"2DFromArray|AtoH|HtoA|HtoD|DtoH|DtoD)?|Memset(?:2D|3D|D8|D16|D32)?)\s*\(")
# (async call, index of its stream argument): a missing or null stream is the null stream
_STREAM_ARGUMENT = {
    b"MemcpyAsync": 4, b"MemsetAsync": 3, b"Memcpy2DAsync": 7, b"Memset2DAsync": 5,
    b"MemcpyToSymbolAsync": 5, b"MemcpyFromSymbolAsync": 5, b"MemcpyPeerAsync": 5,
    b"EventRecord": 1, b"LaunchKernel": 5, b"MemPrefetchAsync": 3, b"MallocAsync": 2,
    b"FreeAsync": 1, b"StreamSynchronize": 0, b"StreamWaitEvent": 0, b"StreamQuery": 0,
}
_ASYNC_CALL = re.compile(rb"\b(?:cuda|hip)(" + b"|".join(_STREAM_ARGUMENT) + rb")\s*\(")
_LIBRARY_CALL = re.compile(rb"\b(?:cublas|cublasLt|cudnn|cufft|cusparse|cusolverDn|curand|"
                           rb"hipblas|rocblas|hipfft|rocfft|hipsparse|rocsparse|hipsolver|"
                           rb"miopen|hiprand|rocrand)[A-Z]\w*\s*\(")
_SET_STREAM = re.compile(rb"SetStream|set_stream|Create\w*Handle|\bcurandCreateGenerator")
_LAUNCH = re.compile(rb"<<<")
_GGL = re.compile(rb"\bhipLaunchKernelGGL\s*\(")
NULL_STREAMS = {"0", "NULL", "nullptr", "cudaStreamLegacy", "hipStreamLegacy", "(cudaStream_t)0",
                "(hipStream_t)0", "0L", "cudaStream_t(0)", "hipStream_t(0)", "cudaStreamDefault"}


def is_null_stream(text: str) -> bool:
    return text.replace(" ", "") in NULL_STREAMS


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


def null_stream_uses(ctx: RuleContext, body: Block) -> list[tuple[int, str]]:
    """(offset, what) for each use of the null stream in ``body``."""
    data = ctx.data
    start, end = body.open, body.close
    uses: list[tuple[int, str]] = []
    for launch in launches(ctx, start, end):
        if is_null_stream(launch.stream):
            uses.append((launch.start, "a kernel launch on the null stream"))
    for match in code_matches(ctx, _GGL, start, end):
        spans = arguments(data, match.end() - 1)
        if spans and len(spans) >= 5 and is_null_stream(_text(data, spans[4])):
            uses.append((match.start(), "a kernel launch on the null stream"))
    for match in code_matches(ctx, _SYNC_CALL, start, end):
        uses.append((match.start(), f"{match.group().rstrip(b'( ').decode()} (runs on the null stream)"))
    for match in code_matches(ctx, _ASYNC_CALL, start, end):
        spans = arguments(data, match.end() - 1)
        if spans is None:
            continue
        index = _STREAM_ARGUMENT[match.group(1)]
        name = match.group().rstrip(b"( ").decode()
        if len(spans) <= index or is_null_stream(_text(data, spans[index])):
            uses.append((match.start(), f"{name} on the null stream"))
    library = list(code_matches(ctx, _LIBRARY_CALL, start, end))
    if library and not any(code_matches(ctx, _SET_STREAM, start, end)):
        first = library[0]
        uses.append((first.start(), f"{first.group().rstrip(b'( ').decode()} (library work runs "
                     "on the null stream unless a stream is set)"))
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
