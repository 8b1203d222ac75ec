"""The per-file indexes of the transfer rules answer as the scans they replace (random texts
of the pieces those scans care about)."""

from __future__ import annotations

from conftest import rule_context
from migrator import apitables
from rules.transfers.common import copies, loop_copies
from migrator.semantic.scopes import name_matches
from rules.transfers.pageable_copies import _calls
from strategies import random_texts

_COPY_PIECES = [b"for (int i = 0; i < n; ++i) ", b"for (;;) {", b"while (x) ", b"{", b"}", b";",
                b"cudaMemcpy", b"hipMemcpyAsync(d, h, 4, k, s);", b"cudaMemcpyToSymbol",
                b"(d, h, 4, k)", b"cudaMemcpy(d, h, 4, k);", b"x", b" ", b"\n", b"//",
                b"\n#define M ", b"void f() ", b"a.", b"do "]


def test_loop_copies_are_the_copies_in_loops():
    for data in random_texts(_COPY_PIECES, seed=11, count=3000):
        wanted = [(copy.start, copy.loop) for copy in copies(rule_context(data))
                  if copy.loop is not None]
        found = [(copy.start, copy.loop) for copy in loop_copies(rule_context(data))]
        assert found == wanted, data


_CLAIM_PIECES = [b"cudaMalloc", b"cudaMallocHost", b"hipHostMalloc", b"cudaHostRegister", b"my",
                 b"_", b"(", b"(&d, n)", b"((void**)&h, n)", b"(v.data(), n, 0)", b"&", b"s->",
                 b" ", b"\n", b";", b"cudaMalloc(&cudaMallocHost", b"x", b"hip", b"cuda"]


def test_name_matches_are_the_pattern_finditer():
    calls = _calls(apitables.load())
    met = 0
    for data in random_texts(_CLAIM_PIECES, seed=13, count=3000):
        for pattern, names in ((calls.claims, calls.claiming), (calls.pins, calls.pinning)):
            wanted = [match.span() + match.groups() for match in pattern.finditer(data)]
            assert [match.span() + match.groups()
                    for match in name_matches(pattern, names, data)] == wanted, data
            met += bool(wanted)
    assert met > 1000  # the texts hold calls, not only misses
