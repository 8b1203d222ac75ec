"""The short cuts of the atomics rules answer as the searches they replace (random texts of
the pieces those searches care about)."""

from __future__ import annotations

from conftest import rule_context
from rules.atomics import half_precision, operands
from strategies import random_texts


def test_atomic_names_are_the_operations_the_text_holds():
    pieces = [*(name.encode() for name in half_precision.OPERATIONS), b"atomic", b"Add", b"CAS",
              b"x", b" "]
    for data in random_texts(pieces, seed=17, count=3000, length=10):
        assert set(half_precision._OPERATION_NAME.findall(data)) == \
            {name.encode() for name in half_precision.OPERATIONS if name.encode() in data}, data


def test_sixteen_bit_hints_are_in_every_text_the_evidence_finds():
    pieces = [b"__half", b"half2", b"__float2half_rn", b"__hadd2", b"__hmul", b"__hfma", b"__hsub",
              b"bfloat16", b"__h", b"hal", b"f", b"x", b" ", b"("]
    for data in random_texts(pieces, seed=19, count=3000, length=8):
        evidence = operands._EVIDENCE.search(data.decode()) is not None
        assert operands.may_involve_sixteen_bit(rule_context(data)) == evidence, data
