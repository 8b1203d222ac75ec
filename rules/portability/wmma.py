"""WMM001-WMM003: CUDA's warp matrix functions (``<mma.h>``, ``nvcuda::wmma``) -> rocWMMA
(``rocwmma::``) where the target has it and CDNA has the fragment's block."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.parsing.includes import LINE_INCLUDE
from migrator.rule import Marker, Rule, RuleContext
from migrator.semantic.calls import WORD_BYTES, arguments
from migrator.semantic.constants import constant_value
from migrator.semantic.scopes import blocks, function_at, loops
from migrator.versions import DEFAULT_OFFLOAD_ARCHS, format_version

from ..markers import marker_fix
from ._tables import table

CUDA_HEADER = "mma.h"
HIP_NAMESPACE = b"rocwmma"
# ``nvcuda::wmma``, with or without a leading ``::``
_NVCUDA_WMMA = re.compile(rb"(?:::[ \t]*)?\bnvcuda\s*::\s*wmma\b")
_USING_NVCUDA = re.compile(rb"\busing\s+namespace\s+(?:::\s*)?nvcuda\s*;")
_USING_WMMA = re.compile(rb"\busing\s+namespace\s+(?:(?:::\s*)?nvcuda\s*::\s*)?wmma\s*;")
# ``wmma::`` as a qualifier (what precedes it is tested: no word, ``::``, ``.`` or ``->``)
_WMMA_QUALIFIER = re.compile(rb"\bwmma\s*::\s*(\w+)")
# the file's own namespace or alias named wmma: its ``wmma::`` is not nvcuda's
_OWN_WMMA = re.compile(rb"\bnamespace\s+wmma\s*[={]")
_FRAGMENT = re.compile(rb"\bfragment\s*<")
_QUALIFIED_BEFORE = re.compile(rb"(?:(?:::\s*)?\bnvcuda\s*::\s*)?\bwmma\s*::\s*\Z")
_MEMBER = re.compile(rb"\s*::\s*(\w+)")
_DECLARATOR = re.compile(rb"\s*(?:&&?|\*|\bconst\b|\s)*\s*([A-Za-z_]\w*)")
_NEXT_DECLARATOR = re.compile(rb"\s*(?:\[[^\];]*\]\s*)*(?:=[^,;(){}]*)?,\s*(?:&|\*)?\s*"
                              rb"([A-Za-z_]\w*)")
# a fragment's elements, read through the fragment or an element of an array of them
_ELEMENTS = re.compile(rb"(?:\s*\[[^\]\n;]*\])*\s*\.\s*(x\b|num_elements\b)")
_SUBSCRIPTS = re.compile(rb"(?:\s*\[[^\]\n;]*\])+\Z")
_FILL = re.compile(rb"\bfill_fragment\s*(?=\()")
# rocWMMA's names for those of nvcuda::wmma (the same spelling, rocwmma/rocwmma.hpp)
_API = frozenset({"fragment", "matrix_a", "matrix_b", "accumulator", "row_major", "col_major",
                  "mem_row_major", "mem_col_major", "layout_t", "fill_fragment",
                  "load_matrix_sync", "store_matrix_sync", "mma_sync"})
# CUDA's fragment element types as wmma.tsv names them (half is HIP's __half, rocWMMA's
# hfloat16_t)
_ELEMENT_KINDS = {"half": "f16", "__half": "f16", "float": "f32", "double": "f64",
                  "signed char": "i8", "int": "i32"}
# CUDA's element types rocWMMA has no fragment for on CDNA, and what to do instead
_BF16 = ("rocWMMA's bf16 fragments hold rocwmma::bfloat16_t (hip_bfloat16), not __hip_bfloat16: "
         "declare them with rocwmma::bfloat16_t and pass the data as hip_bfloat16 (the same bits)")
_LACKING_TYPES = {
    "__nv_bfloat16": _BF16, "nv_bfloat16": _BF16, "__hip_bfloat16": _BF16,
    "precision::tf32": "rocWMMA's xfloat32_t fragments exist on gfx942 only: use float "
                       "fragments (16x16x4 or 32x32x2: FP32 products) or half ones",
    "experimental::precision::u4": "CDNA has no 4-bit MFMA: widen the data to signed char "
                                   "(int8 fragments)",
    "experimental::precision::s4": "CDNA has no 4-bit MFMA: widen the data to signed char "
                                   "(int8 fragments)",
    "experimental::precision::b1": "CDNA has no 1-bit MFMA: compute the products with "
                                   "__popc/__popcll over the packed words",
    "unsigned char": "CDNA's int8 MFMA is signed only: use signed char fragments where the "
                     "values fit, else half ones",
}
# the element types as markers name them: in HIP's spelling, which a second run reads
_HIP_SPELLING = {"__nv_bfloat16": "__hip_bfloat16", "nv_bfloat16": "__hip_bfloat16"}
_USES = {"matrix_a": "input", "matrix_b": "input", "accumulator": "accumulator"}
_USE_NAMES = {"input": "matrix_a/matrix_b fragments", "accumulator": "accumulators"}


@dataclass(frozen=True)
class _Fragment:
    """A ``wmma::fragment<...>`` type as written: the span of its qualifier and template
    arguments, the variables it declares, and why rocWMMA lacks it ("" where it has it or
    cannot tell)."""

    start: int
    end: int
    element: str
    names: tuple[tuple[bytes, int], ...]  # the variables declared with it, and where
    lacking: str
    shape: tuple[str, ...]  # the template arguments as the table reads them


@functools.lru_cache(maxsize=1)
def _blocks() -> tuple[dict[str, str], ...]:
    return table("wmma.tsv")


def _shape_lacking(ctx: RuleContext, use: str, m: int, n: int, k: int, kind: str,
                   element: str) -> str:
    """Why rocWMMA lacks an ``m``x``n``x``k`` fragment of ``kind`` for ``use`` (input or
    accumulator) on the target's CDNA architectures; "" where every one of them has it."""
    known = {arch for row in _blocks() for arch in row["archs"].split(",")}
    archs = [arch.partition(":")[0] for arch in ctx.settings.offload_archs]
    archs = [arch for arch in archs if arch in known] or list(DEFAULT_OFFLOAD_ARCHS)
    rows = [row for row in _blocks() if row[use] == kind]
    missing = [arch for arch in archs if not any(
        arch in row["archs"].split(",") and int(row["block"]) == m == n
        and (use == "accumulator" or (k >= int(row["k"]) and k % int(row["k"]) == 0))
        for row in rows)]
    if not missing:
        return ""
    blocks = sorted({(int(row["block"]), int(row["k"])) for row in rows
                     if all(arch in row["archs"].split(",") for arch in missing)})
    offered = ", ".join(f"{b}x{b}xK (K a multiple of {step})" for b, step in blocks)
    return (f"rocWMMA has no {m}x{n}x{k} {element} fragment on {', '.join(missing)}"
            + (" (CDNA's blocks are square)" if m != n else "")
            + (f": retile to {offered}" if offered
               else f": it has no {element} {_USE_NAMES[use]}"))


def _template_end(code: bytes, open_angle: int) -> int | None:
    """The offset after the ``>`` that closes the template argument list at ``open_angle``."""
    depth = 0
    for pos in range(open_angle, min(len(code), open_angle + 2000)):
        char = code[pos]
        if char in b"<(":
            depth += 1
        elif char in b">)":
            depth -= 1
            if depth == 0:
                return pos + 1
        elif char in b";{}":
            return None
    return None


def _split_arguments(text: bytes) -> list[bytes]:
    parts, depth, begin = [], 0, 0
    for pos, char in enumerate(text):
        if char in b"<([":
            depth += 1
        elif char in b">)]":
            depth -= 1
        elif char == ord(",") and depth == 0:
            parts.append(text[begin:pos].strip())
            begin = pos + 1
    parts.append(text[begin:].strip())
    return parts


def _unqualified(text: bytes) -> str:
    """A template argument as the table reads it: blanks collapsed, the ``nvcuda::wmma::`` or
    ``wmma::`` qualifier dropped."""
    words = b" ".join(text.split())
    words = re.sub(rb"^(?:::\s*)?(?:nvcuda\s*::\s*)?wmma\s*::\s*", b"", words)
    return re.sub(rb"\s*::\s*", b"::", words).decode("utf-8", "replace")


def _fragments(ctx: RuleContext, unqualified: bool) -> list[_Fragment]:
    """The file's ``nvcuda::wmma`` fragment types (unqualified ones where ``unqualified``: the
    file has ``using namespace nvcuda::wmma``)."""
    code = ctx.code
    found = []
    for match in _FRAGMENT.finditer(code):
        start = match.start()
        if start and code[start - 1] in WORD_BYTES:
            continue
        before = _QUALIFIED_BEFORE.search(code, max(0, start - 64), start)
        if before is None and (not unqualified or code[start - 2:start] == b"::"
                               or code[start - 1:start] == b"."):
            continue
        end = _template_end(code, match.end() - 1)
        if end is None:
            continue
        parts = _split_arguments(code[match.end():end - 1])
        if len(parts) not in (5, 6):
            continue
        first = before.start() if before else start
        alias = _alias_named(code, first, end)
        names = [name for at in (_alias_uses(code, alias) if alias else (end,))
                 for name in _declared_names(code, at)]
        use, element = _unqualified(parts[0]), _unqualified(parts[4])
        lacking = _LACKING_TYPES.get(element, "")
        if lacking:
            lacking = (f"rocWMMA has no {_HIP_SPELLING.get(element, element)} fragment: "
                       f"{lacking}")
        elif use in _USES and element in _ELEMENT_KINDS:
            m, n, k = (constant_value(ctx, part.decode("utf-8", "replace")) for part in parts[1:4])
            if None not in (m, n, k):
                lacking = _shape_lacking(ctx, _USES[use], m, n, k, _ELEMENT_KINDS[element],
                                         element)
        found.append(_Fragment(first, end, element,
                               tuple(names), lacking, tuple(_unqualified(p) for p in parts)))
    return found


_USING_ALIAS = re.compile(rb"\busing\s+(\w+)\s*=\s*(?:typename\s+)?\Z")
_TYPEDEF = re.compile(rb"\btypedef\s+(?:typename\s+)?\Z")
_TYPEDEF_NAME = re.compile(rb"\s*(\w+)\s*;")


def _alias_named(code: bytes, start: int, end: int) -> bytes | None:
    """The name a ``using NAME = fragment<...>;`` or ``typedef fragment<...> NAME;`` at
    [``start``, ``end``) gives the fragment type, or None."""
    using = _USING_ALIAS.search(code, max(0, start - 80), start)
    if using is not None:
        return using.group(1)
    if _TYPEDEF.search(code, max(0, start - 40), start):
        named = _TYPEDEF_NAME.match(code, end)
        return named.group(1) if named else None
    return None


def _alias_uses(code: bytes, alias: bytes) -> list[int]:
    """Where declarations with the type ``alias`` name their variables (after the alias)."""
    return [match.end() for match in re.compile(rb"(?<![\w:.])" + re.escape(alias) +
                                                 rb"\b(?!\s*[;=(<:])").finditer(code)]


def _declared_names(code: bytes, at: int) -> list[tuple[bytes, int]]:
    """The variables a declaration names after its type, which ends at ``at``, and where."""
    declarator = _DECLARATOR.match(code, at)
    if declarator is None or declarator.group(1) == b"operator":
        return []
    names = [(declarator.group(1), declarator.start(1))]
    pos = declarator.end()
    while (more := _NEXT_DECLARATOR.match(code, pos)) is not None:
        names.append((more.group(1), more.start(1)))
        pos = more.end()
    return names


def _includes_mma(ctx: RuleContext) -> bool:
    return any(match.group(2).strip() == CUDA_HEADER.encode()
               and ctx.literals.covering(match.start()) in ("include", None)
               for match in LINE_INCLUDE.finditer(ctx.data))


_FLOATING = rb"[-+]?(?:\d+\.\d*|\.\d+|\d+(?=[eE]))(?:[eE][-+]?\d+)?"
_LITERALS = {"float": re.compile(_FLOATING + rb"[fF]"), "double": re.compile(_FLOATING),
             "int": re.compile(rb"[-+]?(?:0[xX][0-9a-fA-F]+|\d+)")}


def _plain_literal_of(value: bytes, element: str) -> bool:
    """Is ``value`` a literal of type ``element`` (``0.0f`` of float, ``0`` of int): one that
    rocWMMA's fill_fragment deduces as the fragment's own type?"""
    literal = _LITERALS.get(element)
    return literal is not None and literal.fullmatch(value) is not None


class Wmma(Rule):
    """Port CUDA's warp matrix functions (``<mma.h>``, ``nvcuda::wmma``) to rocWMMA.

    ## What it does
    Where the target has rocWMMA (ROCm 6.4: rocWMMA 1.6, the release of the HIP 6.4.3 headers
    rocmigrate checks against; ``mma.h``'s row of ``rules/api/headers.tsv`` dates it), HDR001
    turns ``#include <mma.h>`` into ``#include <rocwmma/rocwmma.hpp>`` and WMM001 writes
    ``nvcuda::wmma`` as ``rocwmma``, ``wmma::`` (after ``using namespace nvcuda;``) as
    ``rocwmma::``, and ``using namespace nvcuda;`` as ``namespace wmma = rocwmma;`` (so a file
    that includes it keeps compiling). rocWMMA keeps CUDA's names (``fragment``, ``matrix_a``,
    ``matrix_b``, ``accumulator``, ``row_major``, ``col_major``, ``mem_row_major``,
    ``mem_col_major``, ``fill_fragment``, ``load_matrix_sync``, ``store_matrix_sync``,
    ``mma_sync``) and takes ``half`` (``__half``), ``float``, ``double``, ``signed char`` and
    ``int`` elements. ``fill_fragment(acc, 0.0f)`` on a ``half`` fragment gets its value cast
    to the fragment's type: rocWMMA deduces the type from both arguments, CUDA from the
    fragment only.
    WMM002 marks what rocWMMA lacks, and says what to do: a fragment whose block CDNA's MFMA
    instructions do not have on the target's architectures (``rules/portability/wmma.tsv``,
    from rocWMMA's headers: square 16x16 and 32x32 blocks only, so no 32x8x16 or 8x32x16;
    double 16x16x4, not 8x8x4; int8 16x16x16 on gfx90a but not gfx942, whose K starts at 32),
    bf16 fragments (rocWMMA's are ``hip_bfloat16``, not ``__hip_bfloat16``), tf32, 4-bit and
    1-bit fragments, other ``nvcuda::wmma`` names (``__float_to_tf32``, ``bmma_sync``), and,
    where the target has no rocWMMA (Debian's ROCm 5.2 packages none), the file's WMMA code.
    Such a fragment is left as written.
    WMM003 marks code that reads a fragment's elements (``frag.x[i]``, ``frag.num_elements``),
    but for element-wise loops (``for (int i = 0; i < c.num_elements; i++)`` whose body indexes
    fragments of ``c``'s type with ``i`` alone and names no lane: the same on 64 lanes), and
    launches of a kernel that declares fragments in blocks that are not whole 64-lane
    wavefronts (a constant, ``dim3(...)`` of constants, or a ``dim3`` variable declared so).

    ## Why is this bad on AMD
    HIP has no ``<mma.h>``: the file does not compile. rocWMMA is AMD's counterpart for the
    matrix cores of CDNA (MFMA), with CUDA's fragment API, but not every CUDA shape or type.
    A fragment belongs to a whole wavefront: 64 lanes on CDNA, where CUDA's belongs to a warp
    of 32. Each lane holds M*N/64 elements (4 of a 16x16 float accumulator, not 8), in an
    order of rocWMMA's: code that treats every element alike (scaling an accumulator) stays
    correct, code that relies on which element a lane holds computes something else. A kernel
    that gives each warp of 32 threads a tile (``threadIdx.x / 32`` as the warp index, blocks
    of 32 threads) gives each wavefront two tiles' threads, or half of its lanes without a
    thread, whose part of each tile is then never loaded: WAV001 reports the 32s, WMM003 the
    blocks; the warp index must count wavefronts (``warpSize``).

    ## Example
    ```cpp
    #include <mma.h>
    using namespace nvcuda;
    __global__ void tile(const half* a, const half* b, float* c) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
      wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
      wmma::fill_fragment(acc, 0.0f);
      wmma::load_matrix_sync(fa, a, 16);
      wmma::load_matrix_sync(fb, b, 16);
      wmma::mma_sync(acc, fa, fb, acc);
      wmma::store_matrix_sync(c, acc, 16, wmma::mem_row_major);
    }
    ```

    ## Use instead
    ```cpp
    #include <rocwmma/rocwmma.hpp>
    namespace wmma = rocwmma;
    __global__ void tile(const half* a, const half* b, float* c) {
      rocwmma::fragment<rocwmma::matrix_a, 16, 16, 16, half, rocwmma::row_major> fa;
      rocwmma::fragment<rocwmma::matrix_b, 16, 16, 16, half, rocwmma::col_major> fb;
      rocwmma::fragment<rocwmma::accumulator, 16, 16, 16, float> acc;
      rocwmma::fill_fragment(acc, 0.0f);
      rocwmma::load_matrix_sync(fa, a, 16);
      rocwmma::load_matrix_sync(fb, b, 16);
      rocwmma::mma_sync(acc, fa, fb, acc);
      rocwmma::store_matrix_sync(c, acc, 16, rocwmma::mem_row_major);
    }
    ```

    ## Fix safety
    The renames are safe: rocWMMA's functions load, multiply and store the same tiles, and
    a block rocWMMA lacks on the target is marked, not converted. The products are summed in
    the MFMA instructions' order, which may differ from CUDA's tensor cores in the last bits
    of float results. The wave64 difference is marked where the code reads elements (WMM003),
    and WAV001 reports 32-lane arithmetic; neither is rewritten: whether a kernel's tiles
    follow wavefronts is the kernel's design. rocmigrate's tests parse the converted fixtures
    against the HIP 6.4.3 and rocWMMA 1.6 headers for gfx90a, build each block of wmma.tsv
    for gfx908, gfx90a and gfx942 there, and build the fixtures back on NVIDIA with nvcc
    (rocmigrate's NVIDIA header names nvcuda::wmma rocwmma).
    """

    code = "WMM001"
    extra_codes = ("WMM002", "WMM003")
    attention_codes = ("WMM002",)
    category = "conversion"
    name = "warp-matrix"
    summary = "CUDA warp matrix (nvcuda::wmma) code: rocWMMA, or what it lacks"
    family = "portability"
    fix = "always"

    def check(self, ctx: RuleContext):
        data = ctx.data
        if b"nvcuda" not in data and CUDA_HEADER.encode() not in data:
            return
        code = ctx.code
        includes = _includes_mma(ctx)
        if not includes and b"nvcuda" not in code:
            return
        entry = ctx.tables.headers.get(CUDA_HEADER)
        since = entry.hip_added if entry is not None else None
        if since is None or ctx.settings.rocm < since:
            yield from _without_rocwmma(ctx, since)
            return
        using = _USING_NVCUDA.search(code) is not None
        own = _OWN_WMMA.search(code) is not None
        fragments = _fragments(ctx, _USING_WMMA.search(code) is not None)
        left = [(f.start, f.end) for f in fragments if f.lacking]

        def inside_left(offset: int) -> bool:
            return any(start <= offset < end for start, end in left)

        for fragment in fragments:
            if fragment.lacking:
                yield Diagnostic("WMM002", fragment.lacking, fragment.start, fragment.end,
                                 marker_fix(ctx, fragment.start,
                                            Marker("WMM002", fragment.lacking)),
                                 library="device", symbol="fragment")
        for match in _NVCUDA_WMMA.finditer(code):
            if inside_left(match.start()):
                continue
            yield _rename(match.start(), match.end(), "nvcuda::wmma")
            member = _MEMBER.match(code, match.end())
            if member and member.group(1).decode() not in _API:
                yield _lacking_name(ctx, member.group(1).decode(), member.start(1),
                                    member.end(1), match.start())
        for match in _USING_NVCUDA.finditer(code):
            yield Diagnostic("WMM001", "using namespace nvcuda -> namespace wmma = rocwmma",
                             match.start(), match.end(),
                             Fix("alias wmma to rocwmma", (Edit(
                                 match.start(), match.end(), b"namespace wmma = rocwmma;"),)),
                             library="device", symbol="nvcuda", severity="info")
        if (using or includes) and not own:
            for match in _WMMA_QUALIFIER.finditer(code):
                start = match.start()
                if start and (code[start - 1] in WORD_BYTES or code[start - 1:start] == b"."
                              or code[max(0, start - 2):start] in (b"::", b"->")):
                    continue
                if inside_left(start):
                    continue
                name = match.group(1).decode()
                if name not in _API:
                    yield _lacking_name(ctx, name, start, match.end(1), start)
                    continue
                yield _rename(start, start + len(b"wmma"), "wmma")
        kept = _Kept(ctx, [f for f in fragments if not f.lacking])
        yield from _fill_casts(ctx, kept)
        yield from _element_reads(ctx, kept)
        yield from _partial_wavefronts(ctx, fragments)


def _lacking_name(ctx: RuleContext, name: str, start: int, end: int, at: int) -> Diagnostic:
    """WMM002 for a name of nvcuda::wmma that rocWMMA lacks, marked at ``at``."""
    text = (f"rocWMMA has no counterpart of nvcuda::wmma::{name}: rewrite it with rocwmma:: "
            "fragments of half, float, double or signed char")
    return Diagnostic("WMM002", text, start, end, marker_fix(ctx, at, Marker("WMM002", text)),
                      library="device", symbol=name)


def _rename(start: int, end: int, written: str) -> Diagnostic:
    return Diagnostic("WMM001", f"{written} -> rocwmma", start, end,
                      Fix("rocwmma", (Edit(start, end, HIP_NAMESPACE),), keeps_syntax=True),
                      library="device", symbol=written, severity="info")


class _Kept:
    """The converted fragments' variables by name, within the function that declares them
    (or the file, for parameters and globals): two kernels may name different fragments
    alike."""

    def __init__(self, ctx: RuleContext, fragments: list[_Fragment]) -> None:
        self.ctx = ctx
        self.by_name: dict[tuple[int, bytes], _Fragment] = {}
        for fragment in fragments:
            for name, at in fragment.names:
                self.by_name[(self._scope(at), name)] = fragment
        self.names = sorted({name for _, name in self.by_name})

    def _scope(self, offset: int) -> int:
        """The function around ``offset``, or whose head holds it (a parameter); -1: none."""
        function = function_at(self.ctx, offset)
        if function is None:
            heads = [block for block in blocks(self.ctx) if block.head <= offset < block.open]
            if heads:
                function = function_at(self.ctx, max(heads, key=lambda b: b.head).open + 1)
        return function.open if function is not None else -1

    def get(self, name: bytes, at: int) -> _Fragment | None:
        return self.by_name.get((self._scope(at), name)) or self.by_name.get((-1, name))


def _fill_casts(ctx: RuleContext, kept: _Kept):
    """WMM001 for ``fill_fragment(frag, value)`` whose value is not a literal of the fragment's
    type: cast to it (rocWMMA deduces the element type from the value too)."""
    code = ctx.code
    for match in _FILL.finditer(code):
        spans = arguments(ctx, match.end())
        if not spans or len(spans) != 2:
            continue
        fragment = _SUBSCRIPTS.sub(b"", code[spans[0][0]:spans[0][1]].strip())
        declared = kept.get(fragment, spans[0][0])
        element = declared.element if declared is not None else ""
        if not re.fullmatch(r"[A-Za-z_][\w ]*", element):
            continue
        begin, end = spans[1]
        value = ctx.data[begin:end]
        if _plain_literal_of(value, element) or value.startswith(b"static_cast<"):
            continue
        yield Diagnostic("WMM001", f"fill_fragment value -> static_cast<{element}>: rocWMMA "
                         "deduces the element type from the value too", begin, end,
                         Fix(f"cast to {element}", (
                             Edit(begin, begin, f"static_cast<{element}>(".encode()),
                             Edit(end, end, b")"))),
                         library="device", symbol="fill_fragment", severity="info")


def _element_reads(ctx: RuleContext, kept: _Kept):
    """WMM003 for reads of a converted fragment's elements (``frag.x[i]``, ``num_elements``),
    one per line, but for element-wise loops (_elementwise_reads)."""
    if not kept.names:
        return
    code = ctx.code
    pattern = re.compile(rb"\b(" + b"|".join(re.escape(n) for n in kept.names) + rb")\b")
    alike = _elementwise_reads(ctx, kept, pattern)
    marked_lines = set()
    for match in pattern.finditer(code):
        member = _ELEMENTS.match(code, match.end())
        if member is None or match.start() in alike or (
                match.start() and code[match.start() - 1:match.start()] == b".") or \
                kept.get(match.group(1), match.start()) is None:
            continue
        line = ctx.source.line_start(match.start())
        if line in marked_lines:
            continue
        marked_lines.add(line)
        text = ("a rocWMMA fragment's elements are spread over a 64-lane wavefront (M*N/64 per "
                "lane, in rocWMMA's order): code that treats every element alike stays "
                "correct, code that relies on which element a lane holds does not")
        yield Diagnostic("WMM003", text, match.start(), member.end(),
                         marker_fix(ctx, match.start(), Marker("WMM003", text)),
                         library="device", symbol=member.group(1).decode())


_ELEMENTWISE_HEAD = re.compile(
    rb"\s*(?:(?:unsigned|int|auto|uint32_t|size_t|const)\s+)*(\w+)\s*=\s*0\s*;\s*\1\s*<\s*"
    rb"(\w+)\s*\.\s*num_elements\s*;\s*(?:\+\+\s*\1|\1\s*\+\+|\1\s*\+=\s*1)\s*")
_LANE_WORDS = re.compile(rb"\b(?:threadIdx|__lane_id|lane\w*)\b")


def _elementwise_reads(ctx: RuleContext, kept: _Kept,
                       fragment_names: re.Pattern) -> set[int]:
    """Where the file reads elements element-wise: ``for (int i = 0; i < f.num_elements; i++)``
    whose body indexes fragments of ``f``'s own type only, with ``i`` alone, and names no lane
    (``c.x[i] = alpha * acc.x[i] + beta * c.x[i]``: every element treated alike, whichever
    lane holds it). The offsets of those fragment names."""
    code = ctx.code
    found: set[int] = set()
    for loop in loops(ctx):
        head = _ELEMENTWISE_HEAD.fullmatch(code, *loop.header)
        counted = kept.get(head.group(2), head.start(2)) if head else None
        if counted is None:
            continue
        index, shape = head.group(1), counted.shape
        body = range(*loop.body)
        if _LANE_WORDS.search(code, body.start, body.stop):
            continue
        reads = []
        for match in fragment_names.finditer(code, body.start, body.stop):
            element = re.compile(rb"\s*\.\s*x\s*\[\s*" + re.escape(index) + rb"\s*\]").match(
                code, match.end())
            read = kept.get(match.group(1), match.start())
            if element is None or read is None or read.shape != shape:
                break
            reads.append((match.start(), element.end()))
        else:
            uses = [m.start() for m in re.compile(rb"\b" + re.escape(index) + rb"\b").finditer(
                code, body.start, body.stop)]
            if all(any(start <= use < end for start, end in reads) for use in uses):
                found.update(start for start, _ in reads)
                found.add(head.start(2))
    return found


_HEAD_CALL = re.compile(rb"\b([A-Za-z_]\w*)\s*\(")
_NOT_KERNEL_NAMES = frozenset({b"__launch_bounds__", b"__attribute__", b"alignas", b"decltype",
                               b"__declspec"})
_DIM3 = re.compile(rb"\bdim3\s+(\w+)\s*(?:\(([^;()]*)\)|\{([^;{}]*)\}|=\s*dim3\s*\(([^;()]*)\))")
_WAVEFRONT = 64  # CDNA's lanes: rocWMMA runs wave64 only on gfx9 (rocwmma/internal/config.hpp)


def _kernels(ctx: RuleContext, fragments: list[_Fragment]) -> set[bytes]:
    """The names of the ``__global__`` functions that declare a fragment."""
    names = set()
    for fragment in fragments:
        body = function_at(ctx, fragment.start)
        if body is None:
            continue
        head = ctx.code[body.head:body.open]
        if b"__global__" not in head:
            continue
        for call in _HEAD_CALL.finditer(head, head.find(b"__global__")):
            if call.group(1) not in _NOT_KERNEL_NAMES:
                names.add(call.group(1))
                break
    return names


def _threads(ctx: RuleContext, text: bytes) -> int | None:
    """The threads of a block argument: a constant, ``dim3(x, y, z)``, or a ``dim3`` variable
    the file declares with constants (the first such declaration)."""
    text = text.strip()
    constructed = re.fullmatch(rb"dim3\s*[({]([^;(){}]*)[)}]", text)
    if constructed is None and re.fullmatch(rb"[A-Za-z_]\w*", text):
        declared = next((m for m in _DIM3.finditer(ctx.code) if m.group(1) == text), None)
        if declared is not None:
            constructed = declared
            extents = next(group for group in declared.groups()[1:] if group is not None)
            return _product(ctx, extents)
    if constructed is not None:
        return _product(ctx, constructed.group(1))
    return constant_value(ctx, text.decode("utf-8", "replace"))


def _product(ctx: RuleContext, extents: bytes) -> int | None:
    total = 1
    for extent in _split_arguments(extents):
        value = constant_value(ctx, extent.decode("utf-8", "replace"))
        if value is None:
            return None
        total *= value
    return total


def _partial_wavefronts(ctx: RuleContext, fragments: list[_Fragment]):
    """WMM003 for launches of a kernel that declares fragments with blocks that are not whole
    64-lane wavefronts (a block of 32 threads: one warp of CUDA's, half a wavefront)."""
    kernels = _kernels(ctx, fragments)
    if not kernels:
        return
    code = ctx.code
    launch = re.compile(rb"\b(" + b"|".join(re.escape(k) for k in sorted(kernels)) +
                        rb")\s*(?:<[^<>;]*>)?\s*<<<([^;]*?)>>>")
    for match in launch.finditer(code):
        parts = _split_arguments(match.group(2))
        if len(parts) < 2:
            continue
        threads = _threads(ctx, parts[1])
        if threads is None or threads % _WAVEFRONT == 0:
            continue
        kernel = match.group(1).decode()
        text = (f"{kernel} runs rocWMMA fragments in blocks of {threads} threads, not whole "
                "64-lane wavefronts: a fragment spans every lane of its wavefront (lanes "
                "without a thread leave their part of each tile unloaded), and CUDA's warps of "
                "32 share one wavefront: give each wavefront a tile (blocks of a multiple of 64 "
                "threads, the warp index threadIdx.x / warpSize)")
        yield Diagnostic("WMM003", text, match.start(), match.end(),
                         marker_fix(ctx, match.start(), Marker("WMM003", text)),
                         library="device", symbol=kernel)


def _without_rocwmma(ctx: RuleContext, since):
    """WMM002 at the file's first ``nvcuda`` where the target has no rocWMMA."""
    match = re.compile(rb"\bnvcuda\b").search(ctx.code)
    if match is None:
        return
    target = format_version(ctx.settings.rocm)
    where = f"ROCm {format_version(since)}" if since else "a later ROCm"
    text = (f"nvcuda::wmma has no HIP counterpart in ROCm {target}: rocWMMA "
            f"(<rocwmma/rocwmma.hpp>, {where}) has its fragments under rocwmma:: (square "
            f"16x16 and 32x32 blocks on CDNA): target {where}, or compute the tiles without "
            "matrix cores")
    yield Diagnostic("WMM002", text, match.start(), match.end(),
                     marker_fix(ctx, match.start(), Marker("WMM002", text)),
                     library="device", symbol="nvcuda")
