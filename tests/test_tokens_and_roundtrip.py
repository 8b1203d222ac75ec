"""The lossless token view, literal detection, and the no-rules round trip over the corpus."""

from __future__ import annotations

import random
import re
from pathlib import Path

from hypothesis import example, given
from hypothesis import settings as hypothesis_settings

from conftest import ROOT
from strategies import cuda_text, file_names
from migrator import apitables
from migrator.engine import fix_source
from migrator.parsing.tokens import (DirectiveSpans, LiteralSpans, blank_literals,
                                     directive_hashes, in_directive, tokenize)
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


def test_literal_spans_found_by_hints_as_by_searching():
    """LiteralSpans searches with a pattern whose alternatives start with their first byte (a
    raw string or an include is then tried near its ``R"`` or ``#``): the same spans as
    searching with the literal pattern itself."""
    from migrator.parsing.tokens import _LITERAL, _LiteralScanner

    def searched(data):
        spans = []
        scanner = _LiteralScanner(data, 0, len(data))
        pos = 0
        while (match := _LITERAL.search(data, pos)) is not None:
            found = scanner.resolve(match)
            if found is None:
                pos = match.start() + 1
                continue
            spans.append((match.start(), *found))
            pos = found[1]
        return spans

    pieces = [b'u8R"x(', b')x"', b'R"(', b')"', b'uR"', b'LR"', b"L'", b"'", b'"', b"\\", b"\n",
              b" ", b"\t", b"#", b"#include", b"<a.h>", b'"a.h"', b"/*", b"*/", b"//", b"x",
              b"u", b"8", b"R", b"1'000", b"\r\n", b"\\\n", b"import", b"include_next", b"'ab'",
              b'xuR"', b'_R"(', b'R"a b(']
    rng = random.Random(7)
    for _ in range(30000):
        data = b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 14)))
        spans = LiteralSpans(data)
        assert list(zip(spans.starts, spans.kinds, spans.ends)) == searched(data), data


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


def test_directive_hashes_are_what_a_multiline_scan_finds():
    """directive_hashes finds the lines ``^[ \\t]*#`` (MULTILINE) finds, and their '#', on random
    text made of hashes, blanks, line ends and words."""
    pattern = re.compile(rb"^[ \t]*#", re.MULTILINE)
    pieces = [b"#", b"\n", b" ", b"\t", b"\r", b"\f", b"a", b"define", b"\\", b"##"]
    rng = random.Random(11)
    samples = [SAMPLE, b"", b"#", b"\n#", b" \t#x\n  a # b\n\f#c"] + [
        b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 30))) for _ in range(3000)]
    for data in samples:
        assert directive_hashes(data) == [(m.start(), m.end() - 1) for m in pattern.finditer(data)]


def test_literal_spans_up_to_a_stop_are_those_of_the_whole_file():
    """LiteralSpans(data, stop) holds exactly the spans of the whole file's scan that start at
    or before ``stop``, with the same ends and kinds."""
    pieces = [b"#include <a.h>\n", b"  #  include \"b.h\"\n", b"//", b"/*", b"*/", b'"', b"'",
              b'R"x(', b')x"', b'u8R"(', b')"', b"\\\n", b"\n", b"a", b" ", b"#"]
    rng = random.Random(13)
    samples = [SAMPLE] + [b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 20)))
                          for _ in range(2000)]
    for data in samples:
        full = LiteralSpans(data)
        for stop in range(-1, len(data) + 2):
            part = LiteralSpans(data, stop)
            kept = [i for i, start in enumerate(full.starts) if start <= stop]
            assert part.starts == [full.starts[i] for i in kept], (data, stop)
            assert part.ends == [full.ends[i] for i in kept], (data, stop)
            assert part.kinds == [full.kinds[i] for i in kept], (data, stop)


def _utf8(path: Path) -> bool:
    try:
        path.read_bytes().decode("utf-8")
        return True
    except UnicodeDecodeError:  # the non-UTF-8 fixture input: a per-file error by design
        return False


CORPUS = sorted(p for folder in ("kernels", "fixtures") for p in (ROOT / folder).rglob("*")
                if p.is_file() and not p.is_symlink()
                and p.suffix in (".cu", ".cuh", ".cpp", ".h", ".hip") and _utf8(p))


@hypothesis_settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(text=cuda_text(), name=file_names())
def test_no_rules_round_trip(text: str, name: str):
    """With no rules the engine returns its input byte for byte, on generated CUDA-like text
    and on every kernel and fixture file (the explicit examples)."""
    data = text.encode()
    result = fix_source(Source(name, data), [], Settings(), apitables.load())
    assert result.output == data


for _path in CORPUS:  # each real file is one explicit example of the same property
    test_no_rules_round_trip = example(text=_path.read_bytes().decode("utf-8"),
                                       name=_path.name)(test_no_rules_round_trip)
