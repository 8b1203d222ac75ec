"""SHM002: 2-D shared tiles read along columns with a bank-aligned row length."""

from __future__ import annotations

import math
import re

from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Rule, RuleContext
from migrator.semantic.calls import code_end_before, is_member
from migrator.semantic.constants import constant_value, integer_literal
from migrator.semantic.lookup import enclosing_function, function_name
from migrator.semantic.scopes import code_matches, function_at, word_offsets

from ..markers import unproven_fix
from .common import type_bytes

LDS_BANKS = 32
BANK_BYTES = 4
_TILE = re.compile(
    rb"__shared__\s+(?:volatile\s+)?(?P<type>(?:unsigned\s+|signed\s+)?(?:long\s+long|[A-Za-z_]\w*))"
    rb"\s+(?P<name>[A-Za-z_]\w*)\s*\[(?P<rows>[^\[\]]+)\]\s*\[(?P<cols>[^\[\]]+)\]\s*;")
_PADDED = re.compile(r"\+\s*1\s*$")  # a row padded by one element, as this rule pads it
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

    A row length from a template's parameters (``template <int TILE>`` ... ``tile[TILE][TILE]``)
    is decided by the instantiations visible in the file: launches and calls (``k<32><<<...>>>``),
    explicit instantiations (``template void k<16>(...)``), defaults. When every one makes the
    row a multiple of 128 bytes, the row is padded as a literal one (``[TILE][TILE + 1]``); when
    none does, nothing is said; when they disagree, when none is visible or an argument is not
    a constant, the tile is reported with a marker and padded only with ``--unsafe-fixes``.
    With ``--clang`` (or ``--compile-commands FILE``), such a tile is decided by the
    instantiations libclang sees instead: also those made through other templates
    (``relay<32>`` launching ``k<W>``), with ``constexpr`` arguments, or in the file that
    includes this one; a tile no code instantiates stays reported.

    ## Why is this bad on AMD
    AMD's CDNA ISA reference guides (MI200, MI300: the local data share) describe LDS as 32
    banks of 4-byte words, and AMD's HIP performance guidelines (shared memory) say that
    accesses to different addresses in one bank are served one after another: a bank conflict.
    When a row is a multiple of 128 bytes, every row starts in the same bank, so 32 lanes
    reading one column all hit one bank (a 32-way conflict). One element of padding shifts
    each row by one bank. NVIDIA's shared memory has the same 32 x 4-byte banks: on an NVIDIA
    H200 (CUDA 13.0, 2026-12-01, docs/benchmarks.md), padding ``kernels/transpose.cu``'s
    32x32 tile to 32x33 took its tiled transpose from 0.0854 to 0.0382 ms. No AMD GPU has
    measured it.

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
    layout is observed are reported without a fix. A template's tile whose instantiations do not
    all have bank-aligned rows gets the same padding as an unsafe fix: it never changes results,
    but costs LDS where it removes no conflict (or where another file instantiates it). With
    ``--clang``, the instantiations decide within one translation unit: another one that
    instantiates the template with other sizes is not seen.
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
            if size is None or size < BANK_BYTES:
                continue
            literal = integer_literal(cols_text)
            if literal is not None and literal[0] * size // BANK_BYTES % LDS_BANKS:
                continue  # (most rows: known without the file's constants or its reads)
            name = match.group("name").decode()
            body = function_at(ctx, match.start())
            start, end = (body.open, body.close) if body else (0, len(data))
            column_line = _column_access(ctx, name, start, end)
            if column_line is None:
                continue  # read along rows only: no row length to evaluate (nor tree to read)
            cols = constant_value(ctx, cols_text)
            if cols is not None and cols * size // BANK_BYTES % LDS_BANKS:
                continue
            if cols is None and _PADDED.search(cols_text):
                continue
            if cols is not None:
                row = f"each row is {cols * size} bytes: {_conflict(cols, size)}"
                undecided = ""
            else:  # a row length from the template's parameters: its instantiations decide
                sizes = _instantiated(ctx, match.start(), cols_text)
                if sizes is None:
                    continue
                row, undecided = _template_rows(cols_text, sizes, size)
                if undecided and ctx.settings.clang_root is not None:
                    sizes = _clang_sizes(ctx, match.start(), match.start("name"), sizes)
                    row, undecided = _template_rows(cols_text, sizes, size)
                if row is None:
                    continue  # no visible instantiation has a bank-aligned row
            message = f"'{name}' is read along a column (line {column_line}) and {row}"
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
            if undecided:
                message += f"; left unpadded: {undecided}, pad rows to [{padded}] if they matter"
                yield Diagnostic("SHM002", message, match.start(), match.end(),
                                 unproven_fix(ctx, match.start(), "SHM002", message, fix),
                                 library="device", symbol=name)
                continue
            yield Diagnostic("SHM002", message + f": pad rows to [{padded}]", match.start(),
                             match.end(), fix, library="device", symbol=name)


def _conflict(cols: int, size: int) -> str:
    """What a bank-aligned row of ``cols`` elements of ``size`` bytes costs a column read."""
    row_words = cols * size // BANK_BYTES
    degree = math.gcd(row_words, LDS_BANKS) if size == BANK_BYTES else LDS_BANKS * BANK_BYTES // size
    return (f"32 lanes hit one LDS bank, a {degree}-way bank conflict on AMD (32 banks x 4 "
            "bytes)")


def _template_rows(cols_text: str, sizes: list[tuple[str, int | None]],
                   size: int) -> tuple[str | None, str]:
    """For a row length from template parameters, given each visible instantiation's (its
    arguments, the row's elements or None where not constant): what the message says of the
    rows, and why the rows are left unpadded where the instantiations do not all decide for
    padding (empty when they do). (None, "") when every instantiation's row is conflict-free,
    as a literal row of that length is."""
    aligned = [(where, cols) for where, cols in sizes
               if cols is not None and cols * size // BANK_BYTES % LDS_BANKS == 0]
    if sizes and not aligned and all(cols is not None for _, cols in sizes):
        return None, ""
    if not sizes:
        return (f"its rows are {cols_text} elements",
                "no instantiation is visible in this file: rows of a multiple of 128 bytes "
                "make a 32-way LDS bank conflict on AMD (32 banks x 4 bytes)")
    unknown = [where for where, cols in sizes if cols is None]
    if unknown:
        return (f"its rows are {cols_text} elements",
                f"the row length of {', '.join(unknown)} is not a constant here")
    row = (f"with {', '.join(where for where, _ in aligned)} each row is "
           f"{', '.join(str(cols * size) for _, cols in aligned)} bytes: "
           f"{_conflict(aligned[0][1], size)}")
    if len(aligned) == len(sizes):
        return row, ""
    others = [where for where, cols in sizes if (where, cols) not in aligned]
    return row, f"the instantiations disagree ({', '.join(others)} has no bank-aligned rows)"


def _instantiated(ctx: RuleContext, at: int, cols_text: str) -> list[tuple[str, int | None]] | None:
    """The row length ``cols_text`` of a tile declared at ``at`` in each instantiation of its
    function template visible in the file (``k<32><<<...>>>``, ``template void k<16>(...)``),
    as (the instantiation as written, its value or None); None when the row length does not
    depend on a non-type template parameter of the function."""
    if not any(re.search(rb"\btemplate\s*<[^;{}]*\b" + re.escape(word.encode()) + rb"\b", ctx.data)
               for word in re.findall(r"[A-Za-z_]\w*", cols_text)):
        return None  # no template parameter list names it: no tree needed to say so
    function = enclosing_function(ctx, at)
    template = function.parent if function is not None else None
    if template is None or template.type != "template_declaration":
        return None
    parameters = template.child_by_field_name("parameters")
    names, defaults = [], []
    for parameter in parameters.named_children if parameters is not None else ():
        declarator = parameter.child_by_field_name("declarator")
        if parameter.type not in ("parameter_declaration", "optional_parameter_declaration"):
            declarator = None  # a type parameter: counted, never substituted
        elif declarator is None or declarator.type != "identifier":
            return None  # a parameter pack or an unnamed one: positions are not known
        default = parameter.child_by_field_name("default_value")
        names.append(ctx.text(declarator) if declarator is not None else None)
        defaults.append(ctx.text(default) if default is not None else None)
    used = [n for n in names if n and re.search(r"\b" + re.escape(n) + r"\b", cols_text)]
    if not used:
        return None
    found = []
    for text, arguments in _template_uses(ctx, function_name(ctx, function)):
        if len(arguments) > len(names):
            continue  # another template of that name
        values = {}
        for index, name in enumerate(names):
            argument = arguments[index] if index < len(arguments) else defaults[index]
            if name in used:
                values[name] = constant_value(ctx, argument) if argument is not None else None
        if any(value is None for value in values.values()):
            found.append((text, None))
            continue
        substituted = re.sub(r"\b(" + "|".join(map(re.escape, used)) + r")\b",
                             lambda m: f"({values[m.group(1)]})", cols_text)
        found.append((text, constant_value(ctx, substituted)))
    return found


def _clang_sizes(ctx: RuleContext, at: int, name_at: int,
                 sizes: list[tuple[str, int | None]]) -> list[tuple[str, int | None]]:
    """The row length of the tile named at ``name_at`` in each instantiation libclang sees
    (``--clang``: also those made in other files of the translation unit, through other
    templates, with constexpr arguments), with those the file shows that it does not; ``sizes``
    as they were when it sees none."""
    from migrator.clang.types import declared_types_at

    declared = declared_types_at(ctx, name_at)
    if not declared or any(len(d.extents) != 2 or not d.arguments for d in declared):
        return sizes
    function = function_name(ctx, enclosing_function(ctx, at))
    found = {f"{function}<{', '.join(d.arguments)}>": d.extents[1] for d in declared}
    values = set(found.values())
    return list(found.items()) + [(text, cols) for text, cols in sizes
                                  if text not in found and cols is not None and cols not in values]


def _template_uses(ctx: RuleContext, name: str) -> list[tuple[str, list[str]]]:
    """Every ``name<arguments>`` of the function template ``name`` in the file (launches, calls,
    explicit instantiations, addresses): (the text, its arguments), in order, each spelling
    once. Read from the tree where the name's bytes occur (a ``template_function`` starts
    with its name), not from a walk of the whole tree."""
    key = ("SHM002.template_uses", name)
    found = ctx.cache.get(key)
    if found is None:
        uses = []
        word = name.encode()
        data, root = ctx.data, ctx.tree.root_node
        # at each occurrence of its bytes, even after a word byte (tree-sitter reads `1k` and
        # `0xfk` as a number and an identifier)
        at = data.find(word)
        while at >= 0:
            node = root.descendant_for_byte_range(at, at + len(word))
            while node is not None and node.start_byte == at:
                if node.type == "template_function":
                    node_name, arguments = (node.child_by_field_name("name"),
                                            node.child_by_field_name("arguments"))
                    if (node_name is not None and arguments is not None
                            and ctx.text(node_name) == name):
                        uses.append((node.start_byte, ctx.text(node),
                                     [ctx.text(a) for a in arguments.named_children]))
                node = node.parent
            at = data.find(word, at + 1)
        found = ctx.cache[key] = list({text: (text, arguments) for _, text, arguments
                                       in sorted(uses, reverse=True)}.values())[::-1]
    return found


def _column_access(ctx: RuleContext, name: str, start: int, end: int) -> int | None:
    """Line of the first ``name[row][col]`` whose row varies with the lane and column does not."""
    if ctx.data.find(b"threadIdx.x", start, end) < 0:
        return None  # nothing varies with the lane: its aliases are copies of threadIdx.x
    text, lane = _lanes(ctx, start, end)
    accesses, ascii = _subscripted(ctx, text, start, end)
    for offset, row, column in accesses.get(name, ()):
        if lane.search(row) and not lane.search(column):
            at = start + (offset if ascii else len(text[:offset].encode()))
            if ctx.in_code(at):
                return ctx.source.position(at)[0]
    return None


def _subscripted(ctx: RuleContext, text: str, start: int, end: int) -> tuple[dict[str, list], bool]:
    """Each name's ``name[row][col]`` accesses in a function's text, in order, as (offset, row,
    column), and whether the text is ASCII (its offsets are then the bytes'): one scan per
    function, not one per tile (a kernel of N tiles was read N times).
    The subscripts hold no brackets, so no access hides inside another, and a name is read
    whole (the end of a longer name is not an access of it)."""
    key = ("SHM002.subscripted", start, end)
    found = ctx.cache.get(key)
    if found is None:
        accesses: dict[str, list] = {}
        for pair in _SUBSCRIPTS.finditer(text):
            # what _SUBSCRIPTED finds: the pair of subscripts after a whole name (and blanks)
            name_end = pair.start()
            while name_end and text[name_end - 1].isspace():
                name_end -= 1
            at = name_end
            while at and (text[at - 1].isalnum() or text[at - 1] == "_"):
                at -= 1
            if at < name_end:
                accesses.setdefault(text[at:name_end], []).append(
                    (at, pair.group(1), pair.group(2)))
        found = ctx.cache[key] = (accesses, text.isascii())
    return found


_SUBSCRIPTED = re.compile(r"(?<!\w)(\w+)\s*\[([^\[\]]+)\]\s*\[([^\[\]]+)\]")
# its subscripts alone: a search skips ahead to a '[' (_SUBSCRIPTED, which starts with a
# lookbehind and a name, is tried at every character). A pair with no name before it is no
# access, and hides none: a name right before a '[' inside it would follow a ']'
_SUBSCRIPTS = re.compile(r"\[([^\[\]]+)\]\s*\[([^\[\]]+)\]")


def _lanes(ctx: RuleContext, start: int, end: int) -> tuple[str, re.Pattern]:
    """The code in [start, end) as text, and the pattern of what varies with the lane there
    (threadIdx.x and its copies). Read once per function, not once per tile."""
    key = ("SHM002.lanes", start, end)
    found = ctx.cache.get(key)
    if found is None:
        text = ctx.data[start:end].decode("utf-8", "replace")
        lanes = ["threadIdx.x", *_lane_aliases(text)]
        found = ctx.cache[key] = (text, re.compile(r"(?:" + "|".join(
            re.escape(l) + (r"\b" if l[-1].isalnum() else "") for l in lanes) + r")"))
    return found


_LANE_END = re.compile(r"threadIdx\.x\s*;")


def _lane_aliases(text: str) -> list[str]:
    """What ``_LANE_ALIAS.findall(text)`` finds, read only in the statements that end with
    ``threadIdx.x;`` (the pattern starts with no literal: tried at every character of a
    function, it costs more than the rest of the rule). A match holds no ``;{}``, so it
    starts after the last of them before its end, and no earlier match reaches there."""
    found = []
    for end in _LANE_END.finditer(text):
        statement = max(text.rfind(";", 0, end.start()), text.rfind("{", 0, end.start()),
                        text.rfind("}", 0, end.start())) + 1
        alias = _LANE_ALIAS.search(text, statement, end.end())
        if alias is not None:
            found.append(alias.group(1))
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
