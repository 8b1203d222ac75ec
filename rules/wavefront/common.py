"""What the wavefront rules share: the warp-level builtins, where a file calls them, and C
integer literal values."""

from __future__ import annotations

import bisect
import re

from migrator.rule import RuleContext
from migrator.semantic.calls import BLANK_OR_MEMBER_END, WORD_BYTES, arguments, is_member
from migrator.semantic.constants import integer_literal
from migrator.semantic.scopes import blocks

from ..markers import as_converted

# builtin -> index of its mask argument (the *_sync family takes the mask first)
SYNC_MASK_BUILTINS = {
    name: 0 for name in (
        "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync", "__ballot_sync",
        "__any_sync", "__all_sync", "__uni_sync", "__match_any_sync", "__match_all_sync",
        "__syncwarp", "__reduce_add_sync", "__reduce_min_sync", "__reduce_max_sync",
        "__reduce_and_sync", "__reduce_or_sync", "__reduce_xor_sync")
}
# builtins whose result is a lane mask (64-bit on HIP)
MASK_RESULTS = ("__ballot", "__ballot_sync", "__activemask", "__match_any_sync", "__match_all_sync")
# shuffles -> index of the optional width argument
SHUFFLE_WIDTH = {"__shfl": 2, "__shfl_up": 2, "__shfl_down": 2, "__shfl_xor": 2,
                 "__shfl_sync": 3, "__shfl_up_sync": 3, "__shfl_down_sync": 3,
                 "__shfl_xor_sync": 3}

# every builtin above; all start with "__", which a search skips ahead to
_BUILTINS = frozenset(name.encode() for name in (*SYNC_MASK_BUILTINS, *MASK_RESULTS, *SHUFFLE_WIDTH))
_BUILTIN_WORD = re.compile(rb"__(?:" + b"|".join(re.escape(name[2:]) for name in sorted(_BUILTINS))
                           + rb")[A-Za-z0-9_]*")


def builtin_names(ctx: RuleContext, names: frozenset[bytes]) -> list[tuple[bytes, int, int]]:
    """(name, start, end) of each occurrence of one of ``names`` (warp builtins above) as what
    ``calls.find_name(ctx, names)`` yields: a whole word in code, not a member. The file is
    searched once for all the builtins, the rules each take theirs: find_name's pattern starts
    with ``\\b``, which a search tries at every byte, once per rule."""
    found = ctx.cache.get("wavefront.builtins")
    if found is None:
        found = ctx.cache["wavefront.builtins"] = []
        data, code = ctx.data, ctx.code
        for match in _BUILTIN_WORD.finditer(data):
            start = match.start()
            if match.group() not in _BUILTINS or (start and data[start - 1] in WORD_BYTES):
                continue  # another word, or the tail of one
            if ctx.literals.covering(start) is not None:
                continue
            if code[start - 1 : start] in BLANK_OR_MEMBER_END and _member(ctx, code, start):
                continue  # a member of the same name
            found.append((match.group(), start, match.end()))
    return [site for site in found if site[0] in names]


_WHITESPACE = b" \t\n\r\x0b\x0c"  # what bytes.rstrip() strips


def _member(ctx: RuleContext, code: bytes, start: int) -> bool:
    """``calls.is_member(ctx, start)``, answered at once where the code before the name on its
    line ends in a byte that is no blank, '.' or '>' outside directives (``(__shfl``, ``=
    __ballot``): that byte ends the code before it, which no '.' or '->' ends then."""
    pos = start
    while pos and code[pos - 1] in b" \t":
        pos -= 1
    if pos and code[pos - 1] not in _WHITESPACE and code[pos - 1] not in b".>" \
            and not ctx.directives.contains(pos - 1):
        return False
    return is_member(ctx, start)


def call_arguments(ctx: RuleContext, name_end: int) -> list[tuple[int, int]] | None:
    """``calls.arguments(ctx, name_end)``, kept per file: the mask, width and ballot rules
    split the same calls."""
    known = ctx.cache.setdefault("wavefront.arguments", {})
    spans = known.get(name_end, known)
    if spans is known:
        spans = known[name_end] = arguments(ctx, name_end)
    return spans


def words_in(ctx: RuleContext, word: bytes, start: int, end: int) -> list[int]:
    """What ``scopes.word_offsets(ctx, word, start, end)`` gives (``word`` an identifier: its
    whole-word uses in code in [start, end), one cut by ``end`` too), found by byte searches
    of that range alone: a rule asks for a variable's uses in its block, and the file-wide
    index behind word_offsets costs a scan of the whole file (and a regex) per new name."""
    data, code = ctx.data, ctx.code
    size, length = len(word), len(data)
    start, end = max(start, 0), max(end, 0)  # as the index's bisection reads them
    found = []
    at = data.find(word, start, end)
    while at != -1:
        after = at + size
        if (at == 0 or data[at - 1] not in WORD_BYTES) and code[at] != 32 \
                and (after == end or after >= length or data[after] not in WORD_BYTES):
            found.append(at)
        at = data.find(word, at + 1, end)
    return found


def all_ones(lanes: int) -> str:
    """The all-lanes mask literal for a wavefront of ``lanes`` (always a 64-bit type)."""
    return "0xffffffffffffffffull" if lanes == 64 else "0xffffffffull"


def stable_symbol(ctx: RuleContext, builtin: str) -> str:
    """``builtin`` as the conversion writes it for the target (``__ballot_sync`` is
    ``__ballot`` where WRP001 lowers it): a finding's symbol is then the same on every engine
    round, which reports a finding it has seen (by code and symbol) once."""
    known = ctx.cache.get("wavefront.symbols")
    if known is None:
        known = ctx.cache["wavefront.symbols"] = {}
    symbol = known.get(builtin)
    if symbol is None:
        symbol = known[builtin] = as_converted(ctx, builtin)
    return symbol


# integer_literal of the texts the wavefront rules read per site (masks such as 0xffffffff,
# widths, operands): a few spellings, each read once
_LITERALS: dict[str, tuple[int, int] | None] = {}


def literal_of(text: str) -> tuple[int, int] | None:
    """``constants.integer_literal(text)``, remembered."""
    found = _LITERALS.get(text, _LITERALS)
    if found is _LITERALS:
        found = integer_literal(text)
        if len(_LITERALS) < 4096:
            _LITERALS[text] = found
    return found


def marker_site(ctx: RuleContext, offset: int) -> int:
    """Where a marker for a finding at ``offset`` goes: the line's first code, past blanks and
    block comments (inline markers written there before). A line marker goes above the line
    anyway; an inline one (in a continued ``#define``) then precedes the line's code instead
    of following a ``(``, where tree-sitter's macro grammar cannot take a comment."""
    data = ctx.data
    literals = ctx.literals
    at = ctx.source.line_start(offset)
    while at < offset:
        if data[at : at + 1] in (b" ", b"\t"):
            at += 1
        elif data[at : at + 2] == b"/*" and literals.covering(at) == "comment":
            index = bisect.bisect_right(literals.starts, at) - 1
            at = literals.ends[index]
        else:
            break
    return min(at, offset)


def block_end(ctx: RuleContext, after: int) -> int:
    """The end of the innermost block holding ``after`` (the file's end outside any): the
    block opened last before ``after`` that still holds it (blocks nest, in order of their
    opening), read back from ``after`` by bisection instead of from the file's first block."""
    found = blocks(ctx)
    opens = ctx.cache.get("wavefront.block_opens")
    if opens is None:
        opens = ctx.cache["wavefront.block_opens"] = [block.open for block in found]
    for index in range(bisect.bisect_left(opens, after) - 1, -1, -1):
        if found[index].contains(after):
            return found[index].close
    return len(ctx.data)
