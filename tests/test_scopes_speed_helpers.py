"""The per-file indexes and short cuts of scopes and the stream rules answer as the scans of a
range they replace (random texts of the pieces these scans care about)."""

from __future__ import annotations

import random
import re

from migrator import apitables
from migrator.rule import RuleContext
from migrator.settings import Settings
from migrator.source import Source
from migrator.semantic import scopes
from rules.streams import null_stream

_PIECES = [b"s", b"f", b"for", b"if", b"sizeof", b"cudaMemcpy", b"hipStreamSynchronize",
           b"cublasSgemm", b"cudaMemsetAsync", b"hipLaunchKernelGGL", b"cudaDeviceSynchronize",
           b"cudaMalloc", b" ", b"\t", b"\n", b",",
           b";", b"(", b")", b"[", b"]", b"{", b"}", b"<<<", b">>>", b"<", b">", b"/*", b"*/",
           b"//", b'"', b"0", b"x::y", b"9"]


def _context(data: bytes) -> RuleContext:
    return RuleContext(Source("x.cu", data), Settings(), apitables.load())


def _texts(seed: int, count: int, pieces: int = 40):
    rng = random.Random(seed)
    for _ in range(count):
        data = b"".join(rng.choice(_PIECES) for _ in range(rng.randint(0, pieces)))
        start = rng.randint(0, len(data))
        yield data, start, rng.randint(start, len(data))


def _walked_enclosing_call(ctx: RuleContext, offset: int, limit: int):
    """enclosing_call as a walk back over every byte."""
    data, code = ctx.data, ctx.code
    depth = 0
    pos = offset - 1
    while pos >= limit:
        byte = code[pos : pos + 1]
        if byte in b")]":
            depth += 1
        elif byte in b"([":
            if depth == 0:
                if byte == b"[":
                    return None
                name_end = pos
                while name_end > limit and data[name_end - 1 : name_end] in b" \t":
                    name_end -= 1
                name = re.search(rb"[A-Za-z_][A-Za-z0-9_:]*$", data[max(limit, name_end - 128) : name_end])
                if name is None or name.group() in (b"for", b"if", b"sizeof"):
                    return None
                return name.group(), name_end - len(name.group())
            depth -= 1
        elif byte in b";{}":
            return None
        pos -= 1
    return None


def test_enclosing_call_agrees_with_a_walk_over_every_byte():
    # long texts too: the short cut reads back a window of 64 bytes, the walk the rest
    texts = [*_texts(3, 3000), *_texts(4, 1000, pieces=150)]
    for data, limit, offset in texts:
        ctx = _context(data)
        for at in (offset, offset + 2):  # past the end too
            assert scopes.enclosing_call(ctx, at, limit) == _walked_enclosing_call(ctx, at, limit), (
                data, at, limit)


def test_loop_heads_agree_with_one_scan():
    pattern = re.compile(rb"\b(?:for|while)\s*\(")
    pieces = [b"for", b"while", b"fo", b"r", b"whil", b"e", b"x", b"_", b"9", b" ", b"\n", b"(",
              b"//", b"\n", b'"', b"/*", b"*/"]
    rng = random.Random(11)
    for _ in range(3000):
        data = b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        ctx = _context(data)
        expected = [m.span() for m in scopes.code_matches(ctx, pattern, 0, len(data))]
        assert [m.span() for m in scopes._loop_heads(ctx)] == expected, data


def test_last_of_finds_the_last_stop_byte():
    rng = random.Random(5)
    for _ in range(500):
        data = bytes(rng.choice(b"ab;{") for _ in range(rng.randint(0, 2000)))
        start = rng.randint(0, len(data))
        end = rng.randint(start, len(data))
        expected = max(data.rfind(b";", start, end), data.rfind(b"{", start, end))
        assert scopes.last_of(data, (b";", b"{"), start, end) == expected


def test_launches_and_calls_agree_with_scans_of_the_range():
    watched = null_stream.stream_apis(apitables.load()).watched
    # calls the stream rules read (from one scan of the file for all of them), and others
    read_names = frozenset({"hipMemcpy", "hipStreamSynchronize", "hipMemsetAsync",
                            "hipDeviceSynchronize"})
    other_names = frozenset({"hipMalloc", "hipMemcpy"})
    for data, start, end in _texts(7, 3000):
        for extra in (b"", b"<<<<"):  # runs of '<' take the scan of the range
            text = data + extra
            ctx = _context(text)
            scanned = [(m.start(), text.find(b">>>", m.end(), end))
                       for m in scopes.code_matches(ctx, re.compile(rb"<<<"), start, end)]
            expected = [(at, close) for at, close in scanned if close != -1]
            found = [(launch.start, launch.close) for launch in null_stream.launches(ctx, start, end)]
            assert found == expected, (text, start, end)
        ctx = _context(data)
        calls = list(scopes.code_matches(ctx, null_stream._CALL, start, end))
        for names in (read_names, other_names):
            expected = [(m.span(), m.group(1)) for m in calls
                        if null_stream.hip_name(ctx.tables, m.group(1).decode()) in names]
            found = [(m.span(), m.group(1))
                     for m, _ in null_stream.api_calls(ctx, start, end, names)]
            assert found == expected, (data, start, end, names)
        acted_on = [m.span() for m in calls if null_stream._acts_on(m.group(1), watched)]
        index = null_stream._calls_where(ctx, "acted_on",
                                         lambda callee: null_stream._acts_on(callee, watched))
        assert [m.span() for m in null_stream._within(index, start, end)] == acted_on
        # the calls of given names alone (tries of their first bytes) where no set_stream is
        if b"set_stream" not in data:
            read = null_stream.stream_apis(ctx.tables).read
            index = null_stream._calls_of(ctx, "read", read)
            assert [m.span() for m in null_stream._within(index, start, end)] == acted_on


def _split_byte_by_byte(config: bytes) -> list[str]:
    parts, depth, current = [], 0, bytearray()
    for byte in config:
        char = bytes([byte])
        if char in b"([{":
            depth += 1
        elif char in b")]}":
            depth -= 1
        if char == b"," and depth == 0:
            parts.append(current.decode("utf-8", "replace").strip())
            current = bytearray()
            continue
        current += char
    parts.append(current.decode("utf-8", "replace").strip())
    return parts


def test_split_cuts_at_commas_outside_brackets():
    assert null_stream._split(b"dim3(a, b), 256 , 0,s[i,j]") == ["dim3(a, b)", "256", "0", "s[i,j]"]
    assert null_stream._split(b") , x") == [") , x"]  # below depth 0 no comma splits
    rng = random.Random(9)
    for _ in range(1000):
        config = bytes(rng.choice(b"a ,()[]{}\xc3") for _ in range(rng.randint(0, 30)))
        assert null_stream._split(config) == _split_byte_by_byte(config), config


def test_arguments_kept_per_line_text_agree_with_a_scan_of_each_list():
    # one line text in many files: before it (a directive, open brackets), after it (the rest
    # of a list that does not close on the line), and lines longer than the kept window
    from migrator.semantic import calls

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


def test_blocking_stream_marker_says_the_message_without_its_line_numbers(monkeypatch):
    # STM001 writes its marker's text itself: it must be what unproven_fix makes of the message
    from rules import markers
    from rules.streams import blocking_stream

    given = []

    def checked(ctx, offset, code, message, rewrite=None, without_lines=None):
        given.append(without_lines)
        if without_lines is not None:
            assert without_lines == markers._LINE_NUMBER.sub("", message), message
        return markers.unproven_fix(ctx, offset, code, message, rewrite, without_lines)

    monkeypatch.setattr(blocking_stream, "unproven_fix", checked)
    data = (b"void g(cudaStream_t);\n"
            b"void f(float* d, float* h, int n) {\n  cudaStream_t s, pipeline;\n"
            b"  cudaStreamCreate(&s);\n  cudaStreamCreate(&pipeline);\n  k<<<1, 1>>>(d);\n"
            b"  cudaMemcpy(d, h, n, cudaMemcpyHostToDevice);\n  cudaMemcpyAsync(d, h, n,\n"
            b"      cudaMemcpyHostToDevice);\n  cublasSgemm(handle, n);\n  g(s);\n  g(pipeline);\n"
            b"  cudaEventRecord(e);\n}\nvoid e2() { cudaStream_t* p; cudaStreamCreate(p); }\n")
    found = list(blocking_stream.BlockingStream().check(_context(data)))
    assert len(found) == 3 and given[0] is not None and given[1] is None, given


def _blocks_by_every_boundary(ctx: RuleContext) -> list[scopes.Block]:
    """scopes.blocks as a visit of every ``{};`` outside directives."""
    opened, found, boundary = [], [], 0
    for match in re.finditer(rb"[{};]", ctx.code):
        at = match.start()
        if ctx.in_directive(at):
            continue
        if ctx.code[at] == 123:
            opened.append((boundary, at))
        elif ctx.code[at] == 125 and opened:
            head, open_at = opened.pop()
            found.append(scopes.Block(head, open_at, at))
        boundary = at + 1
    return sorted(found, key=lambda block: block.open)


def test_blocks_read_back_to_the_head_as_a_visit_of_every_boundary():
    pieces = [b"{", b"}", b";", b"f()", b" ", b"\n", b"#define M {;", b"#if x;", b"\\\n", b"\\",
              b"//", b"/*", b"*/", b'"', b"'", b"a;b", b"#"]
    rng = random.Random(17)
    for _ in range(4000):
        data = b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 40)))
        assert scopes.blocks(_context(data)) == _blocks_by_every_boundary(_context(data)), data


def test_calls_found_in_the_blanked_code_are_the_calls_in_code_of_the_file():
    # every kind of literal before a name or between it and its '(' (_scan_calls reads ctx.code)
    pieces = [b"cudaMemcpy", b"hipMemcpy", b"(", b")", b" ", b"\n", b'"', b"'", b"/*", b"*/",
              b"//", b"a", b'R"x(', b')x"', b"#include <a>", b'#include "b"', b"u8", b"L",
              b"\\\n", b"'a'"]
    names = frozenset({b"cudaMemcpy", b"hipMemcpy"})
    rng = random.Random(19)
    for _ in range(5000):
        data = b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 25)))
        ctx = _context(data)
        expected = [m.span() for m in null_stream._CALL.finditer(data)
                    if m.group(1) in names and ctx.in_code(m.start())]
        assert [m.span() for m in null_stream._scan_calls(ctx, names)] == expected, data
