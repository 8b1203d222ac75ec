"""The short cuts of migrator.semantic.calls (names looked up, argument lists split) answer as
the scans they replace (random texts of the pieces those scans care about)."""

from __future__ import annotations

import random

from conftest import rule_context
from migrator.semantic import calls
from rules.wavefront.common import builtin_names, call_arguments
from strategies import random_texts

_ARGUMENT_NAMES = [b"cudaMemcpyToSymbol", b"cudaMemcpyToSymbolAsync", b"cudaMallocHost",
                   b"cudaLaunchKernel", b"cudaLaunchCooperativeKernel"]


def test_argument_names_absent_from_the_file_change_nothing_find_name_finds():
    every = set(_ARGUMENT_NAMES)
    pieces = [*_ARGUMENT_NAMES, b"Async", b"x", b"_", b" ", b".", b"(", b"//", b"\n", b'"']
    for data in random_texts(pieces, seed=7, count=3000, length=12):
        present = {name for name in every if name in data}
        assert list(calls.find_name(rule_context(data), every)) == \
            list(calls.find_name(rule_context(data), present))


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
    texts = [*random_texts(_ARGUMENT_PIECES, seed=3, count=2000, length=30), *_plain_calls(5, 2000)]
    plain = 0
    for data in texts:
        ctx = rule_context(data)
        for _, _, end in builtin_names(ctx, frozenset({b"__shfl_sync"})):
            scanned = calls._scanned_arguments(data, end, None)  # no plain-list shortcut
            assert call_arguments(ctx, end) == scanned, data
            assert calls.arguments(data, end) == scanned, data
            plain += calls._PLAIN_LIST.match(data, end) is not None
    assert plain > 2000  # the shortcut was taken, and again for lists seen before


def test_arguments_kept_per_line_text_agree_with_a_scan_of_each_list():
    # one line text in many files: before it (a directive, open brackets), after it (the rest
    # of a list that does not close on the line), and lines longer than the kept window
    pieces = [b"a", b"s", b" ", b"\t", b",", b"(", b")", b"[", b"]", b"{", b"}", b'"', b"'",
              b"\\", b"\r", b"/*", b"*/", b"//", b"0", b"x" * 120]
    around = [b"", b"#define M(x) f", b"f(", b"x /* ", b"\n", b"\\\n", b"(a, b)", b", s)", b")",
              b'"']
    rng = random.Random(13)
    calls._WINDOW_SPANS.clear()
    kept = 0
    for _ in range(3000):
        line = b"(" + b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 14)))
        for _ in range(3):
            before = b"".join(rng.choice(around) for _ in range(rng.randint(0, 2)))
            after = b"\n" + b"".join(rng.choice(around) for _ in range(rng.randint(0, 2)))
            data = before + line + after
            for within in (True, None):  # None: as calls.arguments, which STM001 reads
                expected = calls._scanned_arguments(data, len(before), within)
                assert calls.macro_arguments(data, len(before), within) == expected, data
            assert calls.argument_text(data, len(before), 1) == (
                None if expected is None else b"" if len(expected) <= 1
                else data[expected[1][0] : expected[1][1]])
        kept = max(kept, len(calls._WINDOW_SPANS))
    assert kept > 500  # lists were kept, and found again in other texts
