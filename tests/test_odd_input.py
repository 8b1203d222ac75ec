"""Engine correctness on odd input: the parse guard on macros and on files that do not parse
cleanly, insertions that must land in code, a byte-order mark, markers above an inserted
include."""

from __future__ import annotations

import pytest

from migrator import apitables
from migrator.convert import convert_bytes, rules_for
from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.engine import fix_source, guard_view
from migrator.parsing import treesitter
from migrator.parsing.tokens import LiteralSpans
from migrator.rule import Rule
from migrator.settings import Settings
from migrator.source import Source

_UNSUPPORTED = "cudaDeviceFlushGPUDirectRDMAWrites"  # API003: no HIP equivalent


def _convert(data: bytes, settings: Settings = Settings()) -> bytes:
    result = convert_bytes("t.cu", data, settings)
    assert result.status != "failed", result.message
    again = convert_bytes("t.cu", result.output, settings)
    assert again.output == result.output, "a second pass changed the output"
    return result.output


class _Probe(Rule):
    """Test rule: replaces each ``target`` in code by ``text`` (optionally asking for includes).

    ## What it does
    x
    ## Why is this bad on AMD
    x
    ## Example
    x
    ## Use instead
    x
    ## Fix safety
    x
    """

    code = "TST002"
    name = "test-probe"
    summary = "test"

    def __init__(self, target: bytes, text: bytes, includes=()):
        self.target, self.text, self.includes = target, text, includes

    def check(self, ctx):
        start = ctx.data.find(self.target)
        while start >= 0:
            if ctx.in_code(start):
                yield Diagnostic("TST002", "x", start, start + len(self.target),
                                 Fix("x", (Edit(start, start + len(self.target), self.text),),
                                     includes=self.includes))
            start = ctx.data.find(self.target, start + 1)


def _run(data: bytes, rule: Rule, settings: Settings = Settings()):
    return fix_source(Source("t.cu", data), [rule], settings, apitables.load())


# 1. the parse guard

@pytest.mark.parametrize("newline", [b"\n", b"\r\n"])
def test_unsupported_name_in_a_multiline_macro_converts(newline):
    """The marker goes inline into the macro as a block comment: valid C that tree-sitter's
    grammar misreads (it ends a directive's body at a block comment)."""
    data = newline.join([b"#include <cuda_runtime.h>", b"#define FLUSH(x) do { \\",
                         b"    " + _UNSUPPORTED.encode() + b"(x, x); \\", b"} while (0)",
                         b"__global__ void k() {}", b""])
    out = _convert(data)
    assert b"/* rocmigrate API003: " + _UNSUPPORTED.encode() in out
    assert out.startswith(b"#include <hip/hip_runtime.h>" + newline)


def test_single_line_macro_with_unsupported_name_converts():
    data = b"#define FLUSH() " + _UNSUPPORTED.encode() + b"(a, b) /* flush */ + 0\nint x;\n"
    assert b"// rocmigrate API003: " + _UNSUPPORTED.encode() in _convert(data)


# what stands for a fix the parse guard refused (it would have added parse errors)
_REFUSED = b"// rocmigrate TST002: x (not fixed: the fix would not parse)\n"
_BROKEN_INPUT = (b"int broken( ;\n"  # a parse error the file already has
                 b"int foo(int a) { return a + 1; }\n")


def test_guard_runs_on_a_file_that_already_has_parse_errors():
    assert treesitter.error_count(treesitter.parse(_BROKEN_INPUT)) > 0
    out = _run(_BROKEN_INPUT, _Probe(b"return", b"{ return")).output  # refused: marked
    assert out == _BROKEN_INPUT.replace(b"int foo", _REFUSED + b"int foo")


def test_fine_fixes_convert_a_file_that_already_has_parse_errors():
    out = _run(_BROKEN_INPUT, _Probe(b"a + 1", b"(a) + 1")).output
    assert out == _BROKEN_INPUT.replace(b"a + 1", b"(a) + 1")


def test_guard_judges_the_edited_region_not_the_total():
    """An edit that repairs the input's error does not pay for another that breaks code."""
    data = b"int g( ;\nint h;\nint foo(int a) { return a; }\n"
    out = fix_source(Source("t.cu", data),
                     [_Probe(b"( ;", b"();"), _Probe(b"return", b"{ return")],
                     Settings(), apitables.load()).output
    assert out == b"int g();\nint h;\n" + _REFUSED + b"int foo(int a) { return a; }\n"


def test_guard_sees_past_block_comments_in_macros():
    """A file whose macros hold block comments (tree-sitter errors there) is still guarded."""
    data = b"#define F(x) do { \\\n  /* note */ g(x); \\\n} while (0)\nint foo(int a) { return a; }\n"
    out = _run(data, _Probe(b"return", b"{ return")).output
    assert out.endswith(_REFUSED + b"int foo(int a) { return a; }\n")
    assert _run(data, _Probe(b"return a", b"return (a)")).output.endswith(b"return (a); }\n")


def test_type_renamed_to_a_pointer_is_left_where_it_is_declared():
    """CUDA's cuda.h declares CUoccupancyB2DSize, which HIP spells ``void*``: in the typedef that
    declares it, the rename wrote ``(CUDA_CB *void*)``, which the guard now catches in a header
    tree-sitter cannot parse cleanly anyway."""
    data = (b"#define CB\ntypedef size_t (CB *CUoccupancyB2DSize)(int blockSize);\n"
            b"int broken( ;\nvoid f(CUoccupancyB2DSize x);\n")
    out = _convert(data)
    assert out == data.replace(b"f(CUoccupancyB2DSize x)", b"f(void* x)")


# 2. insertions and matches only in code

def _include_lands_in_code(data: bytes) -> bytes:
    out = _run(data, _Probe(b"foo", b"(bar)", includes=("hip/hip_runtime.h",))).output
    literals = LiteralSpans(out)
    found = [at for at in range(len(out)) if out.startswith(b"#include <hip/hip_runtime.h>", at)
             and literals.covering(at) == "include"]
    assert len(found) == 1, out
    at = found[0]
    assert at == 0 or not out[:at].rstrip(b"\r\n").endswith(b"\\"), out
    line = b"#include <hip/hip_runtime.h>" + (b"\r\n" if b"\r\n" in data else b"\n")
    assert out[:at] + out[at + len(line) :] == data.replace(b"foo", b"(bar)")
    return out


@pytest.mark.parametrize("data", [
    b"// C:\\temp\\\nint x;\nint y = foo;\n",
    b"// C:\\temp\\\r\nint x;\r\nint y = foo;\r\n",
    b"// a\n// C:\\temp\\\n#pragma once\nint y = foo;\n",
    b"#pragma once\n// C:\\temp\\\nint x;\nint y = foo;\n",
    b"/* licence */\n#ifndef G\n#define G \\\n  1\n// C:\\\nint x;\nint y = foo;\n#endif\n",
    b"int y = foo;\n/* never closed\n",
    b"int y = foo;\n/* #include <cstdio>\n",
    b"/* #include <cstdio> */\nint y = foo;\n",
    b"#define M \\\n#include <x.h>\nint y = foo;\n",
])
def test_inserted_include_is_code(data):
    _include_lands_in_code(data)


def test_include_named_only_in_a_comment_is_still_inserted():
    out = _include_lands_in_code(b"/*\n#include <hip/hip_runtime.h>\n*/\nint y = foo;\n")
    assert out.count(b"#include <hip/hip_runtime.h>") == 2


def test_runtime_include_after_a_comment_ending_in_backslash():
    data = (b"// C:\\temp\\\nint x;\n"
            b"__global__ void k(float* p) { p[threadIdx.x] = 1.0f; }\n")
    out = _convert(data)
    assert out == data.replace(b"int x;\n", b"int x;\n#include <hip/hip_runtime.h>\n")


@pytest.mark.parametrize("opener", [b"/* never closed\n", b"/*/\n"])
def test_ggl_launch_in_an_unterminated_comment_is_left(opener):
    code = b"__global__ void k(float* p) {}\nvoid f(float* p) {\n  k<<<1, 64>>>(p);\n}\n"
    settings = Settings(launch_syntax="ggl")
    out = _convert(code + opener + code, settings)
    assert out.endswith(opener + code)
    assert b"hipLaunchKernelGGL(k, dim3(1), dim3(64), 0, 0, p);" in out


def test_no_rule_fixes_inside_an_unterminated_comment():
    """Every rule, on code that tree-sitter reads after an unterminated /*: nothing changes
    there, whatever a rule's tree says."""
    code = (b"#include <cuda_runtime.h>\n__global__ void k(float* p, __half* h) {\n"
            b"  atomicAdd(h, __float2half(1.0f));\n  p[threadIdx.x] = __expf(1.0f);\n}\n"
            b"void f(float* p) {\n  cudaStream_t s; cudaStreamCreate(&s);\n"
            b"  k<<<1, 64, 0, s>>>(p, 0);\n  " + _UNSUPPORTED.encode() + b"(a, b);\n}\n")
    settings = Settings(launch_syntax="ggl", optimize=True, unsafe_fixes=True)
    tail = b"/* open\n" + code
    result = fix_source(Source("t.cu", code + tail), [cls() for cls in rules_for(settings)],
                        settings, apitables.load())
    assert result.output.endswith(tail)
    assert result.output != code + tail


# 3. a byte-order mark

_BOM = b"\xef\xbb\xbf"


@pytest.mark.parametrize("newline", [b"\n", b"\r\n"])
def test_byte_order_mark_is_kept_and_ignored(newline):
    data = newline.join([b"#include <cuda_runtime.h>",
                         b"void f() { float* p; cudaMalloc(&p, 4); }", b""])
    plain = convert_bytes("t.cu", data, Settings())
    marked = convert_bytes("t.cu", _BOM + data, Settings())
    assert marked.status == "converted"
    assert marked.output == _BOM + plain.output
    assert marked.output.startswith(_BOM + b"#include <hip/hip_runtime.h>" + newline)
    assert [(f.line, f.column, f.code) for f in marked.findings] == [
        (f.line, f.column, f.code) for f in plain.findings]
    assert convert_bytes("t.cu", marked.output, Settings()).status == "unchanged"


def test_byte_order_mark_before_device_code_gets_the_runtime_include():
    data = _BOM + b"__global__ void k(float* p) { p[threadIdx.x] = 1.0f; }\n"
    assert _convert(data) == _BOM + b"#include <hip/hip_runtime.h>\n" + data[3:]


# 4. markers above line 1 and an inserted include

@pytest.mark.parametrize("head", [b"", b"// licence\n", b"#pragma once\n", b"/* c */\r\n"])
def test_markers_on_the_first_code_line_stay_with_it(head):
    newline = b"\r\n" if b"\r\n" in head else b"\n"
    line = (b"void f() { " + _UNSUPPORTED.encode()
            + b"(cudaFlushGPUDirectRDMAWritesTargetCurrentDevice, 0); }")
    data = head + line + newline + b"__global__ void k(float* p) { p[threadIdx.x] = 1.0f; }" + newline
    out = _convert(data)
    lines = out.split(newline)
    assert sum(_UNSUPPORTED.encode() + b" has no HIP" in x for x in lines) == 1
    code = lines.index(line)
    assert all(x.startswith(b"// rocmigrate API003") for x in lines[code - 2 : code])
    assert lines[code - 3] == b"#include <hip/hip_runtime.h>"


def test_incremental_reparses_match_full_parses(monkeypatch):
    """Every tree the guard compares (the engine's, or that of the view with macro comments
    blanked) is the tree a full parse of that text gives: the edits it reports to tree-sitter
    are right, in both views, and an incremental parse cannot hide an error a second pass
    would see."""
    from conftest import ROOT
    from migrator import engine

    compared = []
    viewed = []

    def checked_compare(old_tree, new_tree, steps):
        assert str(new_tree.root_node) == str(treesitter.parse(steps[-1].after).root_node)
        compared.append(steps)
        return original(old_tree, new_tree, steps)

    def counted_view_steps(steps, first_view):
        viewed.append(steps)
        return view_steps(steps, first_view)

    original, view_steps = engine._compare, engine._view_steps
    monkeypatch.setattr(engine, "_compare", checked_compare)
    monkeypatch.setattr(engine, "_view_steps", counted_view_steps)
    paths = sorted((ROOT / "fixtures" / "rules").glob("*/*.cu")) + sorted(
        (ROOT / "kernels").glob("*.cu"))
    for path in paths:
        if ".fixed." not in path.name:
            convert_bytes(path.name, path.read_bytes(), Settings(rocm=(5, 2, 0)))
    # an edit that puts body text before a macro's comment blanks the comment beyond the edit
    out = _run(b"#define F(x) /* c */ g(x)\nint f(int a) { return a; }\n",
               _Probe(b"F(x) /", b"F(x) 1 + /")).output
    assert out.startswith(b"#define F(x) 1 + /* c */ g(x)\n")
    assert viewed and len(compared) > len(viewed)  # both kinds of tree were compared


@pytest.mark.parametrize("below", [b"int y = foo;", b"#include <foo.h>"])
def test_inserted_include_keeps_a_suppression_on_its_line(below):
    """A suppression comment alone on its line applies to the next line: no include between."""
    suppression = b"// rocmigrate: ignore[TST002]"
    data = b"// licence\n" + suppression + b"\n" + below + b"\nint z = foo;\n"
    rule = _Probe(b"foo", b"bar", includes=("hip/hip_runtime.h",))
    out = _run(data, rule).output
    assert out == data.replace(b"int z = foo;", b"int z = bar;").replace(
        suppression, b"#include <hip/hip_runtime.h>\n" + suppression)
    assert _run(out, rule).output == out


def test_guard_view_when_a_comment_runs_past_a_macro_body():
    """A block comment opened in a #define and closed lines later (after a spliced line) ends
    beyond the directive: the guard's view must read it as the end of the body, not fail."""
    data = (b'#x#if X\\\r\n/* c *//*\\\r\n#x#pragma "\n#define M /*\n'
            b'f(a)//#define M #x#pragma /* c */')
    view = guard_view(data)
    assert len(view) == len(data)
    out = _run(data + b"\nint z = foo;\n", _Probe(b"foo", b"bar")).output
    assert out.endswith(b"int z = bar;\n")
