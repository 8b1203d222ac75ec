"""XFR002: a loop of copies of adjacent regions, or of many small regions."""

from __future__ import annotations

import functools
import re

from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Rule, RuleContext
from migrator.semantic.constants import constant_value, integer_literal
from migrator.semantic.scopes import code_text, statement_end, statement_start
from migrator.semantic.spellings import hip_name
from migrator.source import raw_bytes, raw_text

from ..markers import unproven_fix
from .common import Copy, loop_copies

SMALL_COPY_BYTES = 4096
_HEADER = re.compile(
    r"^\s*(?:(?:unsigned|signed|const)\s+)*(?:int|long|long long|size_t|std::size_t|unsigned|"
    r"int64_t|uint64_t|int32_t|uint32_t|ptrdiff_t)?\s*(?P<var>[A-Za-z_]\w*)\s*=\s*0\s*;"
    r"\s*(?P=var)\s*<\s*(?P<count>[^;]+?)\s*;\s*(?:\+\+\s*(?P=var)|(?P=var)\s*\+\+|(?P=var)\s*\+=\s*1)\s*$")
_ONE_BYTE = r"(?:char|unsigned\s+char|signed\s+char|uint8_t|int8_t|std::uint8_t|std::byte|void)"
_PURE = re.compile(r"^[\w\s+\-*/%()<>.:]*$")  # no calls (except sizeof), no assignment


class AdjacentCopies(Rule):
    """Merge a loop of copies of adjacent regions into one copy; report loops of small copies.

    ## What it does
    Finds loops ``for (i = 0; i < n; ++i)`` whose body is one ``hipMemcpy``/``hipMemcpyAsync``
    of ``size`` bytes from ``src + i * size`` to ``dst + i * size`` (byte pointers; or offsets
    ``i * count`` with a size of ``count * sizeof(T)`` on ``T*`` pointers), and rewrites the
    loop to one copy of ``n * size`` bytes, skipped when ``n <= 0``. Other loops of copies
    smaller than 4 KiB are reported: pack them into one transfer where the layout allows.

    ## Why is this bad on AMD
    Every copy pays a fixed cost whatever its size: a runtime call, a command on a queue, a DMA
    setup (and, from pageable memory, the runtime's staging: AMD's HIP runtime API reference,
    ``hipHostMalloc``, says pinned memory avoids "some of the setup required for regular
    unpinned memory"). For small copies that cost is all there is; AMD's HIP performance
    guidelines (data transfers between host and device) advise keeping such transfers few. On
    an NVIDIA H200 (CUDA 13.0, medians of 9, 2026-11-30; docs/benchmarks.md), 4096 copies of
    1 KiB from ``malloc``'d memory took 26.84 ms one by one, and 0.0888 ms once XFR002 had
    merged them into one copy (from memory XFR001 pinned). No AMD GPU has measured it.

    ## Example
    ```cpp
    for (int i = 0; i < count; ++i) {
      hipMemcpy(d_dst + i * ITEM, host + i * ITEM, ITEM, hipMemcpyHostToDevice);
    }
    ```

    ## Use instead
    ```cpp
    if ((count) > 0) {
      hipMemcpy(d_dst, host, (size_t)(count) * (ITEM), hipMemcpyHostToDevice);
    }
    ```

    ## Fix safety
    Safe: the loop copies exactly the bytes the single copy does, in the same direction, with
    the same stream. Only the canonical loop above, with a loop body of that one copy (possibly
    wrapped in an error-checking macro), is rewritten; the pointer types are checked against the
    function's declarations.
    """

    code = "XFR002"
    name = "adjacent-copies"
    summary = "loop of copies of adjacent or small regions"
    family = "transfers"
    fix = "sometimes"
    optimization = True

    def check(self, ctx: RuleContext):
        for copy in loop_copies(ctx):
            if copy.body is None or len(copy.arguments) < 4:
                continue
            merged = _merge(ctx, copy)
            if merged is not None:
                yield merged
                continue
            size = _size(ctx, copy.text(ctx, 2))
            if size is not None and size < SMALL_COPY_BYTES:
                line, _ = ctx.source.position(copy.loop.start)
                message = (f"a loop (line {line}) issues {copy.name.decode()} calls of {size} "
                           "bytes each: pack small copies into one transfer (each copy has a "
                           "fixed cost: `rocmigrate rule XFR002`)")
                # XFR003 may make the copies asynchronous in the same conversion: the marker is
                # known again whatever the copy's name
                key = f"a loop issues \0 calls of {size} bytes each"
                yield Diagnostic("XFR002", message, copy.start, copy.end,
                                 unproven_fix(ctx, copy.start, "XFR002", message, key=key),
                                 library="runtime", symbol=_symbol(ctx, copy))


# a name followed by '(': a call (``sizeof(float)``), which constant_value does not evaluate
_CALL = re.compile(r"[A-Za-z_]\w*\s*\(")


def _size(ctx: RuleContext, text: str) -> int | None:
    """``constant_value(ctx, text)``: None at once for a size that calls (``n * sizeof(T)``,
    most copies) and is no literal (a cast such as ``uint32_t(64)`` is one), whatever the file
    defines; the file's definitions are read only for the others."""
    stripped = text.strip()
    if _CALL.search(stripped) is not None and integer_literal(stripped) is None:
        return None
    return constant_value(ctx, text)


def _merge(ctx: RuleContext, copy: Copy) -> Diagnostic | None:
    data = ctx.data
    loop = copy.loop
    header = _HEADER.match(data[loop.header[0] : loop.header[1]].decode("utf-8", "replace"))
    if header is None or not data[loop.start : loop.start + 3] == b"for":
        return None
    var, count = header.group("var"), header.group("count").strip()
    if not _PURE.match(count):
        return None
    first = statement_start(ctx, copy.start, loop.body[0])
    last = statement_end(ctx, first, loop.body[1])
    if (last is None or code_text(ctx, loop.body[0], first).strip()
            or code_text(ctx, last, loop.body[1]).strip()):
        return None  # the copy is not the loop's only statement
    size = copy.text(ctx, 2).strip()
    if _mentions(size, var):
        return None
    bases = []
    for index in (0, 1):
        base = _base(ctx, copy, copy.text(ctx, index), var, size)
        if base is None:
            return None
        bases.append(base)
    for index in range(3, len(copy.arguments)):
        if _mentions(copy.text(ctx, index), var):
            return None
    tail = [copy.text(ctx, i) for i in range(3, len(copy.arguments))]
    call = f"{copy.name.decode()}({bases[0]}, {bases[1]}, (size_t)({count}) * ({size}), {', '.join(tail)})"
    statement = raw_text(data[first : copy.start] + raw_bytes(call)
                          + data[copy.close + 1 : last])
    indent = raw_text(data[ctx.source.line_start(loop.start) : loop.start])
    newline = ctx.source.newline.decode()
    comments = raw_text(data[loop.body[0] : first]).strip()  # kept, not lost
    if comments:
        statement = comments + newline + indent + "  " + statement
    replacement = f"if (({count}) > 0) {{{newline}{indent}  {statement}{newline}{indent}}}"
    line, _ = ctx.source.position(loop.start)
    fix = Fix("merge the loop's copies into one copy",
              (Edit(loop.start, loop.end, raw_bytes(replacement)),))
    return Diagnostic("XFR002", f"the loop at line {line} copies adjacent regions one "
                      f"{copy.name.decode()} at a time: one copy of all of them pays the "
                      "fixed per-copy cost once (`rocmigrate rule XFR002`)",
                      copy.start, copy.end, fix, library="runtime", symbol=_symbol(ctx, copy))


def _mentions(text: str, var: str) -> bool:
    return re.search(r"\b" + re.escape(var) + r"\b", text) is not None


def _base(ctx: RuleContext, copy: Copy, text: str, var: str, size: str) -> str | None:
    """The pointer the argument ``text`` offsets by ``var`` items of ``size`` bytes, or None."""
    text = text.strip()
    pointer = r"(?P<base>[A-Za-z_]\w*)"
    offset = r"\(?\s*(?:{v}\s*\*\s*(?P<a>.+?)|(?P<b>.+?)\s*\*\s*{v})\s*\)?".format(v=re.escape(var))
    match = re.fullmatch(pointer + r"\s*\+\s*" + offset, text) or re.fullmatch(
        r"&\s*" + pointer + r"\s*\[\s*" + offset + r"\s*\]", text)
    if match is None:
        return None
    step = (match.group("a") or match.group("b")).strip()
    base = match.group("base")
    if _mentions(step, var) or _mentions(base, var):
        return None
    if _same(step, size):
        element = _ONE_BYTE
    else:
        typed = re.fullmatch(r"(?:{s}\s*\*\s*sizeof\s*\((?P<t1>[^()]+)\)|sizeof\s*\((?P<t2>[^()]+)\)"
                             r"\s*\*\s*{s})".format(s=re.escape(step)), size.strip())
        if typed is None:
            return None
        element = re.escape((typed.group("t1") or typed.group("t2")).strip())
    if not _declared(ctx, copy, base, element):
        return None
    return base


def _same(left: str, right: str) -> bool:
    strip = lambda text: re.sub(r"\s+|^\((.*)\)$", lambda m: m.group(1) or "", text.strip())
    return strip(left) == strip(right)


def _declared(ctx: RuleContext, copy: Copy, base: str, element: str) -> bool:
    """Is ``base`` declared in the function (parameters included) as a pointer to ``element``?"""
    text = ctx.data[copy.body.head : copy.body.close].decode("utf-8", "replace")
    return any(match.group(1) == base for match in _pointer_declarations(element).finditer(text))


@functools.lru_cache(maxsize=256)
def _pointer_declarations(element: str) -> re.Pattern:
    """Declarations of a pointer to ``element`` (a regex), the name in group 1: one pattern per
    type, whatever the name (names differ from file to file)."""
    return re.compile(r"(?:^|[(,;{\s])(?:const\s+)?" + element + r"\s*(?:const\b\s*)?\*\s*"
                      r"(?:const\b\s*)?(?:__restrict__\b\s*)?([A-Za-z_]\w*)(?=\s*[=;,)\[])")


def _symbol(ctx: RuleContext, copy: Copy) -> str:
    """The copy API's HIP name without its prefix: one finding keeps one name across the rename."""
    return hip_name(ctx.tables, copy.name.decode()).removeprefix("hip")
