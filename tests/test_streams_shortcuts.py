"""The per-file indexes and short cuts of the stream rules answer as the scans of a range they
replace (random texts of the pieces these scans care about)."""

from __future__ import annotations

import random
import re

from conftest import rule_context
from migrator import apitables
from migrator.rule import LINE_NUMBER
from migrator.semantic import scopes
from rules.streams import null_stream
from strategies import STATEMENT_PIECES, random_ranges, random_texts


def test_launches_and_calls_agree_with_scans_of_the_range():
    watched = null_stream.stream_apis(apitables.load()).watched
    # calls the stream rules read (from one scan of the file for all of them), and others
    read_names = frozenset({"hipMemcpy", "hipStreamSynchronize", "hipMemsetAsync",
                            "hipDeviceSynchronize"})
    other_names = frozenset({"hipMalloc", "hipMemcpy"})
    for data, start, end in random_ranges(STATEMENT_PIECES, seed=7, count=3000):
        for extra in (b"", b"<<<<"):  # runs of '<' take the scan of the range
            text = data + extra
            ctx = rule_context(text)
            scanned = [(m.start(), null_stream._LAUNCH_CLOSING.search(text, m.end(), end))
                       for m in scopes.code_matches(ctx, null_stream.LAUNCH, start, end)]
            expected = [(at, close.start()) for at, close in scanned if close is not None]
            found = [(launch.start, launch.close) for launch in null_stream.launches(ctx, start, end)]
            assert found == expected, (text, start, end)
        ctx = rule_context(data)
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
    # a template-id's commas split no part (as in a call's arguments), a comparison's do
    assert null_stream._split(b"1, T<A, B>::n, 0, s") == ["1", "T<A, B>::n", "0", "s"]
    assert null_stream._split(b"a < b, c > d") == ["a < b", "c > d"]
    rng = random.Random(9)
    for _ in range(1000):
        config = bytes(rng.choice(b"a ,()[]{}\xc3") for _ in range(rng.randint(0, 30)))
        assert null_stream._split(config) == _split_byte_by_byte(config), config


def test_blocking_stream_marker_says_the_message_without_its_line_numbers(monkeypatch):
    # STM001 writes its marker's text itself: it must be what unproven_fix makes of the message
    from rules import markers
    from rules.streams import blocking_stream

    given = []

    def checked(ctx, offset, code, message, rewrite=None, without_lines=None, key=""):
        given.append(without_lines)
        if without_lines is not None:
            assert without_lines == LINE_NUMBER.sub("", message), message
        assert message.startswith(key)  # the marker is found again by the start of its text
        return markers.unproven_fix(ctx, offset, code, message, rewrite, without_lines, key)

    monkeypatch.setattr(blocking_stream, "unproven_fix", checked)
    data = (b"void g(cudaStream_t);\n"
            b"void f(float* d, float* h, int n) {\n  cudaStream_t s, pipeline;\n"
            b"  cudaStreamCreate(&s);\n  cudaStreamCreate(&pipeline);\n  k<<<1, 1>>>(d);\n"
            b"  cudaMemcpy(d, h, n, cudaMemcpyHostToDevice);\n  cudaMemcpyAsync(d, h, n,\n"
            b"      cudaMemcpyHostToDevice);\n  cublasSgemm(handle, n);\n  g(s);\n  g(pipeline);\n"
            b"  cudaEventRecord(e);\n}\nvoid e2() { cudaStream_t* p; cudaStreamCreate(p); }\n")
    found = list(blocking_stream.BlockingStream().check(rule_context(data)))
    assert len(found) == 3 and given[0] is not None and given[1] is None, given


def test_calls_found_in_the_blanked_code_are_the_calls_in_code_of_the_file():
    # every kind of literal before a name or between it and its '(' (_scan_calls reads ctx.code)
    pieces = [b"cudaMemcpy", b"hipMemcpy", b"(", b")", b" ", b"\n", b'"', b"'", b"/*", b"*/",
              b"//", b"a", b'R"x(', b')x"', b"#include <a>", b'#include "b"', b"u8", b"L",
              b"\\\n", b"'a'"]
    names = frozenset({b"cudaMemcpy", b"hipMemcpy"})
    for data in random_texts(pieces, seed=19, count=5000, length=25):
        ctx = rule_context(data)
        expected = [m.span() for m in null_stream._CALL.finditer(data)
                    if m.group(1) in names and ctx.in_code(m.start())]
        assert [m.span() for m in null_stream._scan_calls(ctx, names)] == expected, data


def _reference_null_stream_uses(ctx, start, end):
    """null_stream_uses as it read every launch and argument list of the range afresh."""
    from migrator.semantic.calls import argument_text

    tables = ctx.tables
    apis = null_stream.stream_apis(tables)
    uses = [(launch.start, "a kernel launch on the null stream")
            for launch in null_stream.launches(ctx, start, end)
            if null_stream.is_null_stream(launch.stream, tables)]
    calls = (null_stream._calls_where(ctx, "reference",
                                      lambda callee: null_stream._acts_on(callee, apis.watched))
             if b"set_stream" in ctx.data else null_stream._calls_of(ctx, "reference", apis.read))
    library, set_stream = None, False
    for match in null_stream._within(calls, start, end):
        callee = match.group(1)
        if callee == null_stream._GGL:
            stream = argument_text(ctx, match.end() - 1, 4)
            if stream and null_stream.is_null_stream(stream.decode().strip(), tables):
                uses.append((match.start(), "a kernel launch on the null stream"))
            if callee not in apis.watched:
                continue
        what, written, index = null_stream._callee_kind(callee, tables, apis)
        if what == "sync":
            uses.append((match.start(), written))
        elif what == "stream argument":
            stream = argument_text(ctx, match.end() - 1, index)
            if stream is not None and (not stream or null_stream.is_null_stream(
                    stream.decode("utf-8", "replace").strip(), tables)):
                uses.append((match.start(), written))
        elif what == "set stream":
            set_stream = True
        elif what == "library" and library is None:
            library = (match.start(), written)
    if library is not None and not set_stream:
        uses.append(library)
    return sorted(uses)


def test_null_stream_uses_agree_with_reading_each_call_afresh():
    # the launches' streams judged once per configuration, the argument lists kept per line
    pieces = STATEMENT_PIECES + [b"0", b"s", b"NULL", b", ", b"k<<<1, 2, 0, 0>>>(p);",
                                 b"k<<<1, 2, 0, s>>>(p);", b"k << < 1, 2 >> >(p);",
                                 b"cudaMemcpyAsync(d, h, n, k, 0);", b"cudaMemsetAsync(d, 0, n, s);",
                                 b"cublasSetStream(h, s);", b"set_stream(s);", b"\\\n"]
    from migrator.semantic.scopes import Block

    for data, start, end in random_ranges(pieces, seed=31, count=3000):
        for text in (data, data + b"<<<<"):
            ctx = rule_context(text)
            expected = _reference_null_stream_uses(ctx, start, end)
            ctx = rule_context(text)
            assert null_stream.null_stream_uses(ctx, Block(start, start, end)) == expected, \
                (text, start, end)


def test_kept_arguments_agree_with_argument_text():
    from migrator.semantic.calls import argument_text

    pieces = [b"f", b"(", b")", b"(", b"[", b"]", b"{", b"}", b",", b", ", b"a", b"0", b"s",
              b"\n", b"\\\n", b"/*", b"*/", b"//", b'"', b"'", b"<", b">", b"#define M ", b" "]
    for data in random_texts(pieces, seed=33, count=3000, length=30):
        for paren in [at for at, byte in enumerate(data) if byte == 40]:
            for index in (0, 1, 3):
                expected = argument_text(bytes(bytearray(data)), paren, index)  # read afresh
                assert null_stream._argument(rule_context(data), paren, index) == expected, \
                    (data, paren, index)


def test_kept_callees_and_declarations_agree_with_scopes():
    from rules.streams import blocking_stream

    pieces = [b"s", b"s1", b"cudaStream_t", b"hipStream_t", b"CUstream", b" ", b"\n", b",", b"*",
              b"&", b";", b"=", b"[", b"]", b"(", b")", b"{", b"}", b"/*", b"*/", b"//", b'"',
              b"x", b"f", b"for", b"sizeof", b"f(s);", b"g(a, s)", b"9", b"::", b"\\\n"]
    types, words = blocking_stream._stream_types(apitables.load())
    # the whole declaration as one pattern with the name in it: what the head and the text
    # after the name must find together
    declaration = re.compile(rb"\b(?:" + types + rb")\s+(?:[^;(){}]*?[\s,*&])?s\s*[\[;=,)]")
    head = blocking_stream._declaration_head(types)
    for data, start, end in random_ranges(pieces, seed=35, count=3000):
        ctx = rule_context(data)
        uses = scopes.word_offsets(ctx, b"s", start, end, code_only=False)
        expected = scopes.declares(ctx, declaration, words, b"s", start, end)
        assert blocking_stream._declared(ctx, head, words, b"s", uses, start, end) == expected, \
            (data, start, end)
        for offset in range(start, end + 1):
            callee = scopes.enclosing_call(ctx, offset, start)
            assert blocking_stream._callee_name(ctx, offset, start) == \
                (callee[0] if callee is not None else None), (data, offset, start)
        # the kept answers, as _escapes reads them
        for offset in range(start, end + 1):
            callee = scopes.enclosing_call(ctx, offset, start)
            window = max(start, offset - blocking_stream._LAST_OPEN_WINDOW)
            boundary = max(ctx.code.rfind(b";", window, offset), ctx.code.rfind(b"{", window, offset),
                           ctx.code.rfind(b"}", window, offset))
            text = data[boundary:offset]
            if boundary != -1 and ctx.code.startswith(text, boundary) \
                    and text in blocking_stream._CALLEES:
                assert blocking_stream._CALLEES[text] == \
                    (callee[0] if callee is not None else None), (data, offset, start)
