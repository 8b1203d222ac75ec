"""SHM002: 2-D shared tiles read along columns with a bank-aligned row length."""

from __future__ import annotations

import math
import re

from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Rule, RuleContext
from migrator.semantic.calls import code_end_before, is_member
from migrator.semantic.constants import constant_value
from migrator.semantic.scopes import code_matches, function_at, word_offsets

from ..markers import unproven_fix
from .common import type_bytes

LDS_BANKS = 32
BANK_BYTES = 4
_TILE = re.compile(
    rb"__shared__\s+(?:volatile\s+)?(?P<type>(?:unsigned\s+|signed\s+)?(?:long\s+long|[A-Za-z_]\w*))"
    rb"\s+(?P<name>[A-Za-z_]\w*)\s*\[(?P<rows>[^\[\]]+)\]\s*\[(?P<cols>[^\[\]]+)\]\s*;")
_TWO_SUBSCRIPTS = re.compile(rb"\s*\[[^\[\]]+\]\s*\[[^\[\]]+\]")
_LANE_ALIAS = re.compile(r"\b(?:const\s+)?(?:int|unsigned|unsigned int|uint32_t|auto|size_t)\s+"
                         r"(\w+)\s*=\s*(?:\(int\)\s*)?threadIdx\.x\s*;")


class PaddedTile(Rule):
    """Pad 2-D shared tiles whose columns are read across lanes.

    ## What it does
    Finds static ``__shared__ T tile[R][C]`` arrays that are accessed along a column, with the
    row index taken from ``threadIdx.x`` (``tile[threadIdx.x][k]``: consecutive lanes read
    consecutive rows), where a row is a multiple of 32 four-byte banks. It pads each row by one
    element (``tile[R][C + 1]``; a computed row length as a whole, ``tile[R][(N << 1) + 1]``)
    and reports the bank-conflict degree. Tiles whose layout is used
    elsewhere (``sizeof``, pointer arithmetic, the array or a row passed on as a pointer) are
    left unchanged and reported.

    ## Why is this bad on AMD
    AMD LDS has 32 banks of 4 bytes. When a row is a multiple of 128 bytes, every row starts in
    the same bank, so 32 lanes reading one column all hit one bank and the reads are served one
    after another (a 32-way conflict; a 64-lane wavefront makes it worse, not better). One
    element of padding shifts each row by one bank. Measured on an H200 (same bank layout):
    padding a 32x32 transpose tile to 32x33 made the kernel 2.23x faster.

    ## Example
    ```cpp
    __shared__ float tile[32][32];
    tile[threadIdx.y][threadIdx.x] = in[i];
    __syncthreads();
    out[j] = tile[threadIdx.x][threadIdx.y];
    ```

    ## Use instead
    ```cpp
    __shared__ float tile[32][32 + 1];
    ```

    ## Fix safety
    Safe when the tile is only indexed with two subscripts: every element keeps its indices,
    only the unused padding column is added (LDS use grows by one column). Tiles whose size or
    layout is observed are reported without a fix.
    """

    code = "SHM002"
    name = "padded-tile"
    summary = "2-D shared tile read along columns has bank conflicts"
    family = "shared_memory"
    fix = "sometimes"
    optimization = True

    def check(self, ctx: RuleContext):
        data = ctx.data
        if b"__shared__" not in data:
            return
        for match in code_matches(ctx, _TILE, 0, len(data)):
            size = type_bytes(match.group("type").decode())
            cols_text = match.group("cols").decode().strip()
            cols = constant_value(ctx, cols_text)
            if size is None or size < BANK_BYTES or cols is None:
                continue
            row_words = cols * size // BANK_BYTES
            if row_words % LDS_BANKS:
                continue
            name = match.group("name").decode()
            body = function_at(ctx, match.start())
            start, end = (body.open, body.close) if body else (0, len(data))
            column_line = _column_access(ctx, name, start, end)
            if column_line is None:
                continue
            degree = math.gcd(row_words, LDS_BANKS) if size == BANK_BYTES else LDS_BANKS * BANK_BYTES // size
            message = (f"'{name}' is read along a column (line {column_line}) and each row is "
                       f"{cols * size} bytes: 32 lanes hit one LDS bank, a {degree}-way bank "
                       "conflict on AMD (32 banks x 4 bytes)")
            blocker = _layout_use(ctx, name, start, end, match.end())
            if blocker or ctx.in_directive(match.start()):
                message += f"; left unpadded: {blocker}" if blocker else "; inside a macro"
                yield Diagnostic("SHM002", message, match.start(), match.end(),
                                 unproven_fix(ctx, match.start(), "SHM002", message),
                                 library="device", symbol=name)
                continue
            if re.fullmatch(r"\d+", cols_text):
                padded = str(cols + 1)
            elif re.fullmatch(r"[A-Za-z_]\w*", cols_text):
                padded = f"{cols_text} + 1"
            else:  # `N << 1 + 1` would be N << 2: the whole size plus one
                padded = f"({cols_text}) + 1"
            # a constant expression inside the brackets stays one: the parse cannot change
            fix = Fix(f"pad each row of '{name}' by one element",
                      (Edit(match.start("cols"), match.end("cols"), padded.encode()),),
                      keeps_syntax=True)
            yield Diagnostic("SHM002", message + f": pad rows to [{padded}]", match.start(),
                             match.end(), fix, library="device", symbol=name)


def _column_access(ctx: RuleContext, name: str, start: int, end: int) -> int | None:
    """Line of the first ``name[row][col]`` whose row varies with the lane and column does not."""
    lane, accesses = _two_subscript_accesses(ctx, start, end)
    for row, column, at in accesses.get(name, ()):
        if lane.search(row) and not lane.search(column) and ctx.in_code(at):
            return ctx.source.position(at)[0]
    return None


# any ``name[row][col]``: the subscripts hold no brackets, so no other name's access can
# start inside one, and one pass finds every name's accesses
_ACCESS = re.compile(r"\b([A-Za-z_]\w*)\s*\[([^\[\]]+)\]\s*\[([^\[\]]+)\]")


def _two_subscript_accesses(ctx: RuleContext, start: int, end: int):
    """For the code in [start, end): the pattern of what varies with the lane, and each name's
    ``name[row][col]`` accesses as (row, column, byte offset), in order. Found once per
    function, not once per tile."""
    key = ("SHM002.accesses", start, end)
    found = ctx.cache.get(key)
    if found is not None:
        return found
    text = ctx.data[start:end].decode("utf-8", "replace")
    lanes = ["threadIdx.x", *_LANE_ALIAS.findall(text)]
    lane = re.compile(r"(?:" + "|".join(re.escape(l) + (r"\b" if l[-1].isalnum() else "")
                                         for l in lanes) + r")")
    accesses: dict[str, list[tuple[str, str, int]]] = {}
    ascii_text = text.isascii()
    char_at, byte_at = 0, start  # the byte offset of a character, carried forward
    for access in _ACCESS.finditer(text):
        if ascii_text:
            byte_at = start + access.start()
        else:
            byte_at += len(text[char_at : access.start()].encode())
            char_at = access.start()
        accesses.setdefault(access.group(1), []).append((access.group(2), access.group(3), byte_at))
    found = ctx.cache[key] = (lane, accesses)
    return found


def _layout_use(ctx: RuleContext, name: str, start: int, end: int, declaration_end: int) -> str:
    """Why padding would be observable: the first use of ``name`` that is not ``name[i][j]``."""
    code = ctx.code  # comments and literals blanked: a comment's '.' or '&' is no operator
    for use in word_offsets(ctx, name.encode(), declaration_end, end):
        if is_member(ctx, use):
            continue  # another object's member of that name
        line, _ = ctx.source.position(use)
        code_end = code_end_before(ctx, use)
        before = code[max(start, code_end - 16) : code_end]
        if re.search(rb"\bsizeof\s*\(?\s*$", before):
            return f"sizeof({name}) at line {line}"
        if _TWO_SUBSCRIPTS.match(code, use + len(name)) is None:  # read in place, no copy of the tail
            return f"'{name}' is used as a pointer at line {line}"
        if before.endswith(b"&"):
            return f"the address of an element is taken at line {line}"
    return ""
