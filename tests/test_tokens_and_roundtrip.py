"""The lossless token view, literal detection, and the no-rules round trip over the corpus."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from conftest import ROOT
from migrator import apitables
from migrator.engine import fix_source
from migrator.parsing.tokens import (DirectiveSpans, LiteralSpans, blank_literals, in_directive,
                                     tokenize)
from migrator.settings import Settings
from migrator.source import Source

SAMPLE = rb"""#include <cuda.h>
int a = '"'; // x "y
const char* s = "cudaMalloc // no"; /* c
d */ auto r = R"xy(cudaFree)"  )xy"; long big = 1'000'000;
#define M(x) cudaFree(x) /* cudaFree */ \
  "cudaFree" // tail \
  continued comment
char c = '\''; const wchar_t* w = L"cudaMalloc";
"""


def test_tokenize_is_lossless():
    tokens = list(tokenize(SAMPLE))
    assert b"".join(SAMPLE[s:e] for _, s, e in tokens) == SAMPLE
    assert all(e > s for _, s, e in tokens)


def test_literal_spans():
    spans = LiteralSpans(SAMPLE)
    found = [(kind, SAMPLE[s:e]) for s, e, kind in zip(spans.starts, spans.ends, spans.kinds)]
    assert ("include", b"#include <cuda.h>") in found
    assert ("char", b"'\"'") in found
    assert ("string", b'"cudaMalloc // no"') in found
    assert ("raw", b'R"xy(cudaFree)"  )xy"') in found
    assert ("comment", b"/* cudaFree */") in found
    assert ("comment", b"// tail \\\n  continued comment") in found
    assert ("char", b"'\\''") in found
    # digit separators are not character literals
    assert not any(b"000" in text for _, text in found)
    code_free = SAMPLE.index(b"cudaFree(x)")
    assert spans.covering(code_free) is None


def test_literal_search_by_hints_finds_what_a_search_finds():
    """LiteralSpans tries the literal pattern only near a hint byte (``/``, a quote, ``#``,
    ``R"``): from every position, the same match as searching with the pattern itself."""
    from migrator.parsing.tokens import _LITERAL, _search_literal

    pieces = [b'u8R"x(', b')x"', b'R"(', b')"', b'uR"', b'LR"', b"L'", b"'", b'"', b"\\", b"\n",
              b" ", b"\t", b"#", b"#include", b"<a.h>", b'"a.h"', b"/*", b"*/", b"//", b"x",
              b"u", b"8", b"R", b"1'000", b"\r\n", b"\\\n", b"import", b"include_next"]
    rng = random.Random(7)
    for _ in range(20000):
        data = b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        for pos in range(len(data) + 1):
            expected = _LITERAL.search(data, pos)
            found = _search_literal(data, pos)
            assert (found and (found.span(), found.lastgroup)) == (
                expected and (expected.span(), expected.lastgroup)), (data, pos)


def test_macro_body_tokens():
    start = SAMPLE.index(b"cudaFree(x)")
    kinds = [(k, SAMPLE[s:e]) for k, s, e in tokenize(SAMPLE, start, SAMPLE.index(b"char c"))
             if k != "ws"]
    assert kinds[:4] == [("ident", b"cudaFree"), ("punct", b"("), ("ident", b"x"), ("punct", b")")]
    assert ("string", b'"cudaFree"') in kinds


def test_blank_literals_keeps_offsets_and_code():
    spans = LiteralSpans(SAMPLE)
    blank = blank_literals(SAMPLE, spans)
    assert len(blank) == len(SAMPLE)
    for offset, (byte, kept) in enumerate(zip(SAMPLE, blank)):
        assert kept == (byte if spans.covering(offset) is None else 32)


def test_directive_spans_agree_with_in_directive():
    """The per-file index answers exactly as the line-walking definition, on every offset of
    random text made of the bytes that matter (hashes, continuations, CRLF, newlines)."""
    pieces = [b"#", b"\n", b"\\", b"\r", b" ", b"\t", b"a", b"define", b"{", b";", b"/*", b'"']
    rng = random.Random(7)
    samples = [SAMPLE] + [b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 24)))
                          for _ in range(3000)]
    for data in samples:
        spans = DirectiveSpans(data)
        for offset in range(len(data) + 1):
            assert spans.contains(offset) == in_directive(data, offset), (data, offset)


def _utf8(path: Path) -> bool:
    try:
        path.read_bytes().decode("utf-8")
        return True
    except UnicodeDecodeError:  # the non-UTF-8 fixture input: a per-file error by design
        return False


CORPUS = sorted(p for folder in ("kernels", "fixtures") for p in (ROOT / folder).rglob("*")
                if p.is_file() and not p.is_symlink()
                and p.suffix in (".cu", ".cuh", ".cpp", ".h", ".hip") and _utf8(p))


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_rules_round_trip(path: Path):
    data = path.read_bytes()
    result = fix_source(Source(path.name, data), [], Settings(), apitables.load())
    assert result.output == data
