"""What the transfer rules share: finding copies, their direction, and the host buffer behind an
argument."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from migrator.apitables import ApiTables
from migrator.rule import RuleContext
from migrator.semantic.calls import WORD_BYTES, find_name, lexical_call
from migrator.semantic.scopes import Block, function_at, loop_around, Loop, loops
from migrator.semantic.spellings import alternation, cuda_and_hip
from migrator.source import raw_bytes, raw_text
BASE = re.compile(rb"^\s*(?:\(\s*[\w\s:*]+\*\s*\)\s*)?&?\s*([A-Za-z_][A-Za-z0-9_]*)")


@functools.lru_cache(maxsize=8)
def _copy_names(tables: ApiTables) -> tuple[frozenset[bytes], re.Pattern]:
    """The copies' names (cudaMemcpy, cudaMemcpyAsync and their HIP names), as bytes and as a
    regex that finds them where no word byte follows (the byte before is the caller's to test)."""
    names = cuda_and_hip(tables, "cudaMemcpy", "cudaMemcpyAsync")
    return (frozenset(name.encode() for name in names),
            re.compile(alternation(names) + rb"(?![A-Za-z0-9_])"))


@functools.lru_cache(maxsize=8)
def _shortest_copy_names(tables: ApiTables) -> tuple[bytes, ...]:
    """The copies' names that hold no other (cudaMemcpyAsync holds cudaMemcpy): a file without
    any of these has no copy."""
    names = _copy_names(tables)[0]
    return tuple(sorted(name for name in names
                        if not any(other in name for other in names - {name})))


@dataclass
class Copy:
    """One ``hipMemcpy``/``cudaMemcpy(Async)`` call found in code."""

    name: bytes
    start: int  # of the name
    end: int
    close: int  # offset of the closing parenthesis
    arguments: list[tuple[int, int]]
    body: Block | None
    loop: Loop | None

    def text(self, ctx: RuleContext, index: int) -> str:
        """Argument ``index`` as written (``raw_text``: it may go back into a fix)."""
        start, end = self.arguments[index]
        return raw_text(ctx.data[start:end])

    def host_argument(self, ctx: RuleContext) -> int | None:
        """Index of the host-side pointer argument (from the copy kind), or None."""
        if len(self.arguments) < 4:
            return None
        kind = self.text(ctx, 3)
        if kind.endswith("HostToDevice"):
            return 1
        if kind.endswith("DeviceToHost"):
            return 0
        return None


def copies(ctx: RuleContext) -> list[Copy]:
    """Every memcpy call in code, with its function body and innermost loop (cached per file)."""
    found = ctx.cache.get("transfers.copies")
    if found is not None:
        return found
    found = []
    names = {n for n in _copy_names(ctx.tables)[0] if n in ctx.data}
    for name, start, end in find_name(ctx, names):
        call = lexical_call(ctx, start, end)
        if call is None or call == "macro":
            continue
        found.append(Copy(name, start, end, call.close, call.arguments, function_at(ctx, start),
                          loop_around(ctx, start)))
    ctx.cache["transfers.copies"] = found
    return found


def loop_copies(ctx: RuleContext) -> list[Copy]:
    """The copies of ``copies(ctx)`` that are in a loop. Most files copy outside loops only:
    the loop bodies are searched first for a copy's name as a whole word, and the file's
    copies are built only if one holds one."""
    found = ctx.cache.get("transfers.loop_copies")
    if found is None:
        found = ctx.cache["transfers.loop_copies"] = (
            [copy for copy in copies(ctx) if copy.loop is not None] if _copy_name_in_loop(ctx)
            else [])
    return found


def _copy_name_in_loop(ctx: RuleContext) -> bool:
    """Does a loop body hold a copy's name as a whole word (code or not)? Each byte is
    searched once however deep the loops nest (they come in order of their starts)."""
    data = ctx.data
    copy_name = _copy_names(ctx.tables)[1]
    if "scopes.loops" not in ctx.cache and not any(
            name in data for name in _shortest_copy_names(ctx.tables)):
        return False  # no copy anywhere (cudaMemcpyAsync holds cudaMemcpy): loops not read
    searched = 0  # bodies are searched up to here
    for loop in loops(ctx):
        start, end = max(loop.body[0], searched), loop.body[1]
        for match in copy_name.finditer(data, start, end):
            if data[match.start() - 1] not in WORD_BYTES:
                return True
        searched = max(searched, end)
    return False


def base_identifier(text: str) -> str | None:
    """The pointer variable an argument expression starts from: ``host`` in ``host + off``,
    ``&host[i]``, ``(char*)host + n``. ``text`` is ``raw_text`` (a Latin-1 byte in a comment
    is a surrogate): it goes back to its bytes as written."""
    match = BASE.match(raw_bytes(text))
    return match.group(1).decode() if match else None
