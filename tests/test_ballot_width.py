"""WAV003 with the other rules of a conversion, and the reach of a narrowed ballot variable."""

from __future__ import annotations

from conftest import rule_context
from migrator.convert import convert_bytes
from migrator.settings import Settings
from migrator.semantic.scopes import blocks
from rules.wavefront.ballot_width import BallotWidth
from rules.wavefront.common import block_end as _scope_end


def test_a_counted_ballot_is_never_cast_to_int_by_the_argument_rule():
    """ARG001 casts what ``__ffs`` takes to ``int`` (HIP overloads it); applied with WAV003's
    ``__ffs`` -> ``__ffsll`` in one round it gave ``__ffsll((int)(__ballot(v)))``, which drops
    lanes 32-63 again, and a second conversion cast it once more."""
    data = b"__device__ int f(int v) { return __ffs(__ballot(v)) + __ffs( __activemask()); }\n"
    once = convert_bytes("a.cu", data, Settings())
    assert once.status == "converted", once.message
    assert b"(int)" not in once.output
    assert b"__ffsll(" in once.output and b"__ffs(" not in once.output
    assert convert_bytes("a.cu", once.output, Settings()).output == once.output


def _uses(source: bytes) -> list[str]:
    ctx = rule_context(source)
    return [ctx.data[d.start : d.end].decode() for d in BallotWidth().check(ctx)
            if "narrowed" in d.message]


def test_bit_operations_are_those_on_the_variable_within_its_block():
    source = (b"__device__ int f(int v, int lane) {\n"
              b"  int total = 0;\n"
              b"  {\n"
              b"    unsigned mask = __ballot(v);\n"
              b"    total += __popc(mask) + __popc(mask2) + (mask & (1 << lane));\n"
              b"  }\n"
              b"  unsigned mask = 3;\n"
              b"  return total + __popc(mask);\n"  # another variable of that name: left alone
              b"}\n")
    assert _uses(source) == ["__popc(mask)", "mask & (1 << lane)"]


def test_a_variable_declared_again_ends_the_reach_of_the_first():
    """Each 'unsigned m = __ballot_sync(...)' of a long kernel is another m: the uses read for
    one stop at the next declaration, so each is widened with its own __popc (the next
    declaration read as a use left all of them marked; and the scan of every later use for
    each was quadratic: hard_input_bench's warp_math, 1.6 s at N, 5.7 s at 2N)."""
    from migrator.convert import convert_bytes
    from migrator.settings import Settings

    line = "unsigned m = __ballot_sync(0xffffffff, threadIdx.x < 16); sum += __popc(m);\n"
    text = ("__global__ void k(int *out) {\n  int sum = 0;\n" + line * 1500
            + "  out[0] = sum;\n}\n").encode()
    result = convert_bytes("k.cu", text, Settings())
    assert result.output.count(b"unsigned long long m = ") == 1500
    assert result.output.count(b"__popcll(m)") == 1500


def test_the_scope_of_an_offset_is_its_innermost_block():
    """_scope_end reads back from the offset by bisection: for every offset of a file of
    nested and sibling blocks (one in a macro, skipped) it gives the close of the innermost
    block holding it, the file's end outside any."""
    source = (b"int g;\n"
              b"__device__ void f(int v) {\n"
              b"  { int a; { int b; } int c; }\n"
              b"  if (v) { v++; } else { v--; }\n"
              b"#define BODY { v = 0; }\n"
              b"  for (;;) { { } { int d; } }\n"
              b"}\n"
              b"__device__ void h() { { } }\n"
              b"int tail;\n")
    ctx = rule_context(source)
    found = blocks(ctx)
    assert len(found) == 10  # the macro's block is none
    for offset in range(len(source) + 1):
        holding = [block for block in found if block.contains(offset)]
        expected = max(holding, key=lambda block: block.open).close if holding else len(source)
        assert _scope_end(ctx, offset) == expected, offset
