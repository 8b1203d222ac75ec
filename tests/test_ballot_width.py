"""WAV003 with the other rules of a conversion, and the reach of a narrowed ballot variable."""

from __future__ import annotations

from conftest import rule_context
from migrator.convert import convert_bytes
from migrator.settings import Settings
from rules.wavefront.ballot_width import BallotWidth


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
