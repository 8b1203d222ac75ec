"""The per-file indexes and short cuts of the wavefront and transfer rules answer as the scans
they replace (random texts of the pieces those scans care about)."""

from __future__ import annotations

import random

from migrator import apitables
from migrator.rule import RuleContext
from migrator.settings import Settings
from migrator.source import Source
from migrator.semantic.calls import _PLAIN_LIST, _scanned_arguments, arguments, find_name
from rules.transfers.common import copies, loop_copies
from rules.wavefront import lane_math
from rules.wavefront.common import (SHUFFLE_WIDTH, SYNC_MASK_BUILTINS, builtin_names,
                                    call_arguments)


def _context(data: bytes) -> RuleContext:
    return RuleContext(Source("x.cu", data), Settings(), apitables.load())


def _texts(pieces: list[bytes], seed: int, count: int, length: int = 40):
    rng = random.Random(seed)
    for _ in range(count):
        yield b"".join(rng.choice(pieces) for _ in range(rng.randint(0, length)))


_BUILTIN_PIECES = [b"__shfl_sync", b"__shfl", b"__ballot_sync", b"__activemask", b"__syncwarp",
                   b"__shfl_down", b"_", b"x", b"0", b" ", b"\n", b".", b"->", b"(", b")", b",",
                   b"/*", b"*/", b"//", b'"', b"#define M ", b"\\"]


def test_builtin_names_are_what_find_name_finds():
    for names in (SYNC_MASK_BUILTINS, SHUFFLE_WIDTH, ("__ballot", "__activemask")):
        wanted = frozenset(name.encode() for name in names)
        for data in _texts(_BUILTIN_PIECES, seed=len(wanted), count=3000):
            assert builtin_names(_context(data), wanted) == list(find_name(_context(data), wanted)), data


_ARGUMENT_PIECES = [b"__shfl_sync", b"(", b")", b"[", b"]", b"{", b"}", b",", b" ", b"\\", b"\n",
                    b"/*", b"*/", b"//", b'"', b"v", b"#define M "]


def _plain_calls(seed: int, count: int):
    """Texts of calls whose argument lists are plain (blanks, commas, backslashes, words)
    between random pieces: the same list text comes back at other offsets and in other texts."""
    rng = random.Random(seed)
    for _ in range(count):
        parts = []
        for _ in range(rng.randint(1, 6)):
            inner = b"".join(rng.choice([b"v", b"0x1", b" ", b"\t", b",", b"\\", b"\r"])
                             for _ in range(rng.randint(0, 6)))
            parts.append(b"__shfl_sync" + rng.choice([b"", b" ", b"\t"]) + b"(" + inner + b")")
            parts.extend(rng.choice(_ARGUMENT_PIECES) for _ in range(rng.randint(0, 3)))
        yield b"".join(parts)


def test_call_arguments_are_what_a_scan_of_each_list_finds():
    texts = [*_texts(_ARGUMENT_PIECES, seed=3, count=2000, length=30), *_plain_calls(5, 2000)]
    plain = 0
    for data in texts:
        ctx = _context(data)
        for _, _, end in builtin_names(ctx, frozenset({b"__shfl_sync"})):
            scanned = _scanned_arguments(data, end, None)  # no plain-list shortcut
            assert call_arguments(ctx, end) == scanned, data
            assert arguments(data, end) == scanned, data
            plain += _PLAIN_LIST.match(data, end) is not None
    assert plain > 2000  # the shortcut was taken, and again for lists seen before


_CONSTANT_PIECES = [b"warp", b"WARP", b"Warp_Size", b"_", b"x", b"32", b" 32", b"64", b"(", b")",
                    b" ", b"\t", b"\n", b" = ", b";", b",", b"}", b"#", b"#define ", b"# define ",
                    b"//", b"/*", b"wa", b"rp", b"#define WARP_SIZE 32", b"int warps = 64;"]


def test_warp_constants_are_what_the_pattern_finds():
    for data in _texts(_CONSTANT_PIECES, seed=7, count=5000):
        found = [match.span() for match in lane_math._constants(data)]
        assert found == [match.span() for match in lane_math._CONSTANT.finditer(data)], data


_COPY_PIECES = [b"for (int i = 0; i < n; ++i) ", b"for (;;) {", b"while (x) ", b"{", b"}", b";",
                b"cudaMemcpy", b"hipMemcpyAsync(d, h, 4, k, s);", b"cudaMemcpyToSymbol",
                b"(d, h, 4, k)", b"cudaMemcpy(d, h, 4, k);", b"x", b" ", b"\n", b"//",
                b"\n#define M ", b"void f() ", b"a.", b"do "]


def test_loop_copies_are_the_copies_in_loops():
    for data in _texts(_COPY_PIECES, seed=11, count=3000):
        wanted = [(copy.start, copy.loop) for copy in copies(_context(data)) if copy.loop is not None]
        assert [(copy.start, copy.loop) for copy in loop_copies(_context(data))] == wanted, data


def _reduction_fixes(source: bytes) -> list[bool]:
    ctx = _context(source)
    return [finding.fix is not None for finding in lane_math.LaneMath().check(ctx)]


def test_device_code_is_read_from_the_blocks_of_code_not_of_macro_bodies():
    # a kernel written in a #define body: code inside macros is reported, never fixed
    in_macro = (b"#define KERNEL(name) __global__ void name(float* d) { float v = d[0]; \\\n"
                b"  for (int offset = 16; offset > 0; offset /= 2)"
                b" v += __shfl_down_sync(0xffffffff, v, offset); }\n")
    assert _reduction_fixes(in_macro) == [False]
    # a brace in a directive inside a kernel does not end the kernel's body
    brace_in_directive = (b"__global__ void k(float* d) {\n  float v = d[0];\n#define CLOSE }\n"
                          b"  for (int offset = 16; offset > 0; offset /= 2)"
                          b" v += __shfl_down_sync(0xffffffff, v, offset);\n}\n")
    assert _reduction_fixes(brace_in_directive) == [True]
