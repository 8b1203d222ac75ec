"""The short cuts of the header, argument, atomics and wavefront rules answer as the scans they
replace (random texts of the pieces those scans care about)."""

from __future__ import annotations

import random
import re

from migrator import apitables
from migrator.rule import RuleContext
from migrator.settings import Settings
from migrator.source import Source
from rules.api import headers
from rules.atomics import half_precision, operands
from migrator.semantic.calls import find_name
from migrator.semantic.scopes import blocks
from rules.wavefront import lane_math


def _context(data: bytes) -> RuleContext:
    return RuleContext(Source("x.cu", data), Settings(), apitables.load())


def _texts(pieces: list[bytes], seed: int, count: int, length: int = 40):
    rng = random.Random(seed)
    for _ in range(count):
        yield b"".join(rng.choice(pieces) for _ in range(rng.randint(0, length)))


_DIRECTIVE_PIECES = [b"#", b"# ", b"include", b"if", b"ifdef", b"endif", b"else", b"elif", b"x",
                     b" ", b"\t", b"\n", b"\r", b"<a.h>", b'"b.h"', b"<", b">", b'"', b"\\"]


def test_directive_lines_are_what_the_anchored_patterns_find():
    for pattern in (headers._INCLUDE, headers._CONDITIONAL):
        anchored = re.compile(rb"^[ \t]*" + pattern.pattern, re.MULTILINE)
        for data in _texts(_DIRECTIVE_PIECES, seed=len(pattern.pattern), count=4000):
            found = [(line, match.end(), match.regs[1:])
                     for line, match in headers._directive_lines(pattern, data)]
            assert found == [(match.start(), match.end(), match.regs[1:])
                             for match in anchored.finditer(data)], data


_ARGUMENT_NAMES = [b"cudaMemcpyToSymbol", b"cudaMemcpyToSymbolAsync", b"cudaMallocHost",
                   b"cudaLaunchKernel", b"cudaLaunchCooperativeKernel"]


def test_argument_names_absent_from_the_file_change_nothing_find_name_finds():
    every = set(_ARGUMENT_NAMES)
    pieces = [*_ARGUMENT_NAMES, b"Async", b"x", b"_", b" ", b".", b"(", b"//", b"\n", b'"']
    for data in _texts(pieces, seed=7, count=3000, length=12):
        present = {name for name in every if name in data}
        assert list(find_name(_context(data), every)) == list(find_name(_context(data), present))


_LANE_PIECES = [b"%", b"/", b"&", b">", b">>", b"32", b"64", b"31", b"63", b"0x1F", b"0x3f", b"5",
                b"6", b"u", b"x", b" ", b"\t", b"\n", b"//", b"*"]


def test_lane_operations_are_what_one_pattern_for_every_operator_finds():
    together = re.compile(rb"(%|/|&|>>)" + lane_math.OPERAND)
    for data in _texts(_LANE_PIECES, seed=11, count=4000):
        assert [match.regs for match in lane_math.operations(data)] == \
            [match.regs for match in together.finditer(data)], data


_DEVICE_PIECES = [b"{", b"}", b"}", b"(", b")", b";", b"__global__ void f() {", b"__device__ ",
                  b"void f", b"int g(x) {", b"x", b" ", b"\n", b"#define M {\n", b"//", b'"']


def test_device_code_is_any_device_block_around():
    for data in _texts(_DEVICE_PIECES, seed=13, count=3000, length=30):
        ctx = _context(data)
        device = [block for block in blocks(ctx)
                  if data.find(b"(", block.head, block.open) != -1
                  and lane_math._DEVICE_QUALIFIER.search(data, block.head, block.open)]
        for offset in range(len(data) + 1):
            assert lane_math._in_device_code(ctx, offset) == \
                any(block.contains(offset) for block in device), (data, offset)


def test_atomic_names_are_the_operations_the_text_holds():
    pieces = [*(name.encode() for name in half_precision.OPERATIONS), b"atomic", b"Add", b"CAS",
              b"x", b" "]
    for data in _texts(pieces, seed=17, count=3000, length=10):
        assert set(half_precision._OPERATION_NAME.findall(data)) == \
            {name.encode() for name in half_precision.OPERATIONS if name.encode() in data}, data


def test_sixteen_bit_hints_are_in_every_text_the_evidence_finds():
    pieces = [b"__half", b"half2", b"__float2half_rn", b"__hadd2", b"__hmul", b"__hfma", b"__hsub",
              b"bfloat16", b"__h", b"hal", b"f", b"x", b" ", b"("]
    for data in _texts(pieces, seed=19, count=3000, length=8):
        evidence = operands._EVIDENCE.search(data.decode()) is not None
        assert operands.may_involve_sixteen_bit(_context(data)) == evidence, data
