"""The per-file indexes and short cuts of the wavefront rules answer as the scans they replace
(random texts of the pieces those scans care about)."""

from __future__ import annotations

import re

from conftest import rule_context
from migrator.semantic.calls import find_name
from migrator.semantic.scopes import blocks
from migrator.settings import Settings
from rules.wavefront import lane_math
from rules.wavefront.common import SHUFFLE_WIDTH, SYNC_MASK_BUILTINS, builtin_names
from strategies import random_texts

_BUILTIN_PIECES = [b"__shfl_sync", b"__shfl", b"__ballot_sync", b"__activemask", b"__syncwarp",
                   b"__shfl_down", b"_", b"x", b"0", b" ", b"\n", b".", b"->", b"(", b")", b",",
                   b"/*", b"*/", b"//", b'"', b"#define M ", b"\\"]


def test_builtin_names_are_what_find_name_finds():
    for names in (SYNC_MASK_BUILTINS, SHUFFLE_WIDTH, ("__ballot", "__activemask")):
        wanted = frozenset(name.encode() for name in names)
        for data in random_texts(_BUILTIN_PIECES, seed=len(wanted), count=3000):
            assert builtin_names(rule_context(data), wanted) == \
                list(find_name(rule_context(data), wanted)), data


_LANE_PIECES = [b"%", b"/", b"&", b">", b">>", b"32", b"64", b"31", b"63", b"0x1F", b"0x3f", b"5",
                b"6", b"u", b"x", b" ", b"\t", b"\n", b"//", b"*"]


def test_lane_operations_are_what_one_pattern_for_every_operator_finds():
    together = re.compile(rb"(%|/|&|>>)" + lane_math.OPERAND)
    for data in random_texts(_LANE_PIECES, seed=11, count=4000):
        assert [match.regs for match in lane_math.operations(data)] == \
            [match.regs for match in together.finditer(data)], data


_CONSTANT_PIECES = [b"warp", b"WARP", b"Warp_Size", b"_", b"x", b"32", b" 32", b"64", b"(", b")",
                    b" ", b"\t", b"\n", b" = ", b";", b",", b"}", b"#", b"#define ", b"# define ",
                    b"//", b"/*", b"wa", b"rp", b"#define WARP_SIZE 32", b"int warps = 64;"]


def test_warp_constants_are_what_the_pattern_finds():
    for data in random_texts(_CONSTANT_PIECES, seed=7, count=5000):
        found = [match.span() for match in lane_math._constants(data)]
        assert found == [match.span() for match in lane_math._CONSTANT.finditer(data)], data


_DEVICE_PIECES = [b"{", b"}", b"}", b"(", b")", b";", b"__global__ void f() {", b"__device__ ",
                  b"void f", b"int g(x) {", b"x", b" ", b"\n", b"#define M {\n", b"//", b'"']


def test_device_code_is_any_device_block_around():
    for data in random_texts(_DEVICE_PIECES, seed=13, count=3000, length=30):
        ctx = rule_context(data)
        device = [block for block in blocks(ctx)
                  if data.find(b"(", block.head, block.open) != -1
                  and lane_math._DEVICE_QUALIFIER.search(data, block.head, block.open)]
        for offset in range(len(data) + 1):
            assert lane_math._in_device_code(ctx, offset) == \
                any(block.contains(offset) for block in device), (data, offset)


def _reduction_fixes(source: bytes) -> list[bool]:
    """Whether each finding offers the rewrite (with --unsafe-fixes; a marker is no rewrite)."""
    ctx = rule_context(source, settings=Settings(unsafe_fixes=True))
    return [finding.fix is not None and not finding.fix.marker
            for finding in lane_math.LaneMath().check(ctx)]


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


def test_a_32_bit_mask_variable_is_an_error_where_hip_rejects_it():
    """HIP's warp-sync builtins (6.2 on) static_assert a 64-bit mask: a 32-bit mask variable
    that cannot be widened is an error there, a warning before."""
    from rules.wavefront.mask_width import MaskWidth

    source = (b"__device__ float f(float v, int lane) {\n  unsigned mask = 0xffffffff;\n"
              b"  if (lane) mask = 0xf;\n  return __shfl_sync(mask, v, 0);\n}\n")
    for rocm, severity in (((6, 4, 0), "error"), ((5, 2, 0), "warning")):
        found = list(MaskWidth().check(rule_context(source, settings=Settings(rocm=rocm))))
        assert [(f.code, f.severity) for f in found] == [("WAV002", severity)]
