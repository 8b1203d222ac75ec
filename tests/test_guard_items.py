"""The parse guard judges a round by the top-level items it edited, parsed alone, when they
parse without an error (engine._items_parse_alone); else by the whole file, as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from repo_sources import cuda_sources

from migrator import engine
from migrator.convert import convert_bytes
from migrator.parsing.tokens import DirectiveSpans, LiteralSpans, blank_literals, top_level_items
from migrator.rule import RuleContext
from migrator.settings import Settings
from migrator.source import Source
from migrator import apitables

from test_engine import _Rewrites, run

ROOT = Path(__file__).resolve().parent.parent


def _items(data: bytes):
    code = blank_literals(data, LiteralSpans(data))
    found = top_level_items(code, DirectiveSpans(data))
    return None if found is None else [data[start:end] for start, end in found]


def test_top_level_items_run_from_the_end_of_what_precedes_them():
    data = (b"#include <cstdio>\nint n = 1;\n"
            b"void f() { if (n) { n = 2; } }\n"
            b"namespace a { struct S { int x; }; int g() { return 1; } }\n"
            b"struct T { int y; } t;\n")
    assert _items(data) == [
        b"\nvoid f() { if (n) { n = 2; } }",
        b"\nnamespace a { struct S { int x; }; int g() { return 1; } }",
        b"\nstruct T { int y; }"]
    # a definition's own `;` ends it (a struct parses alone with it, not without)
    assert _items(b"struct S { int x; } ;\nint f() { return 0; }\n") == [
        b"struct S { int x; } ;", b"\nint f() { return 0; }"]


def test_braces_in_comments_literals_and_directive_bodies_are_not_items():
    data = (b"#define OPEN {\n#define BLOCK(x) do { x; } \\\n  while (0)\n"
            b"// } a comment {\nconst char* s = \"{\";\nchar c = '}';\n"
            b"int f() { return 0; }\n")
    assert _items(data) == [b"\nint f() { return 0; }"]


def test_an_item_starts_after_the_last_semicolon_outside_directive_bodies():
    """The ``;`` of a #define body before an item's ``{`` is no end of a declaration: the item
    starts after the last one in code (read back from its brace)."""
    data = b"int a;\n#define X int b;\nvoid f() { g(); }\nint c; int d;\nint h() { return 0; }\n"
    assert _items(data) == [b"\n#define X int b;\nvoid f() { g(); }",
                            b"\nint h() { return 0; }"]
    assert _items(b"#define Y ;\nint f() { return 0; }\n") == [
        b"#define Y ;\nint f() { return 0; }"]


def test_braces_that_do_not_balance_give_no_items():
    """Branches of an #if that each open a block: the items cannot be told lexically."""
    data = b"#if A\nvoid f() {\n#else\nvoid f(int x) {\n#endif\n  return;\n}\n"
    assert _items(data) is None
    assert _items(b"}\nint f() { return 0; }\n") is None


def _parsed_lengths(monkeypatch) -> list[int]:
    lengths: list[int] = []
    real = engine.treesitter.parse

    def counting(data, old_tree=None):
        lengths.append(len(data))
        return real(data, old_tree)

    monkeypatch.setattr(engine.treesitter, "parse", counting)
    return lengths


def test_an_edit_in_a_function_that_parses_alone_costs_no_parse_of_the_file(monkeypatch):
    data = (b"int f(int a) { return a; }\n" + b"int pad(int b) { return b * 2; }\n" * 40
            + b"int g(int a) { int x = a; return x; }\n")
    lengths = _parsed_lengths(monkeypatch)
    result = run(data, _Rewrites((b"int x = a;", b"int x = (a);")))
    assert result.output == data.replace(b"int x = a;", b"int x = (a);")
    assert lengths and max(lengths) < 60  # the function alone, never the file's 1,400 bytes


@pytest.mark.parametrize("data, why", [
    (b"int n = 1;\nint f(int a) { return a; }\n", "a guarded edit outside every item"),
    (b"#if A\nint f() {\n#else\nint f(int x) {\n#endif\n  int n = 1; return n; }\n",
     "braces that do not balance"),
    (b"#define M(x) x /* note */ + 1\nint f() { int n = 1; return n; }\n",
     "a block comment in a directive's body (the guard's view differs from the text)"),
])
def test_the_whole_file_is_parsed_where_the_items_cannot_tell(monkeypatch, data, why):
    lengths = _parsed_lengths(monkeypatch)
    result = run(data, _Rewrites((b"int n = 1;", b"int n = (1);")))
    assert result.output == data.replace(b"int n = 1;", b"int n = (1);"), why
    assert len(data) in lengths, why


class _RewritesWithInclude(_Rewrites):
    """_Rewrites whose fixes request <cstdio>."""

    def check(self, ctx):
        for diag in super().check(ctx):
            fix = diag.fix
            yield engine.Diagnostic(diag.code, diag.message, diag.start, diag.end, engine.Fix(
                fix.title, fix.edits, fix.applicability, ("cstdio",)))


def test_an_include_the_round_inserts_costs_no_parse_of_the_file(monkeypatch):
    """The engine's own #include line (a fix's request) changes no parse: the round is judged
    by the items it edited, as without one."""
    data = (b"int f(int a) { return a; }\n" + b"int pad(int b) { return b * 2; }\n" * 40
            + b"int g(int a) { int x = a; return x; }\n")
    lengths = _parsed_lengths(monkeypatch)
    result = run(data, _RewritesWithInclude((b"int x = a;", b"int x = (a);")))
    assert result.output == b"#include <cstdio>\n" + data.replace(b"int x = a;", b"int x = (a);")
    assert lengths and max(lengths) < 60


@pytest.mark.parametrize("line, neutral", [
    (b"#if defined(X) && __has_include(<nccl.h>)\n", True),
    (b'#if __has_include("nccl.h")\n', True),
    (b"#elif __has_include_next( <nccl.h>)\n", True),
    (b"int y = f(<nccl.h>);\n", False),  # no __has_include: not a test of a header
    (b"// __has_include(<nccl.h>)\nint z;\n", False),  # a comment, no directive
])
def test_a_header_name_in_has_include_is_replaced_neutrally(line, neutral):
    from migrator.parsing.tokens import LiteralSpans

    data = line + b"#endif\n"
    start = data.index(b"nccl.h")
    edit = engine.Edit(start, start + len(b"nccl.h"), b"rccl/rccl.h")
    assert engine._neutral(edit, Source("t.cu", data), LiteralSpans(data)) is neutral
    # a name that would close the test early is never neutral
    broken = engine.Edit(start, start + len(b"nccl.h"), b"rccl>.h")
    assert not engine._neutral(broken, Source("t.cu", data), LiteralSpans(data))


def test_an_item_that_parses_with_an_error_sends_the_round_to_the_whole_file(monkeypatch):
    """The item's own errors (here the input's: allowed) are judged against the input's tree,
    as the guard always did; the fix that adds one more is still refused."""
    data = b"int f(int a) { int x = a; return x + ; }\nint g() { return 0; }\n"
    lengths = _parsed_lengths(monkeypatch)
    kept = run(data, _Rewrites((b"int x = a;", b"int x = (a);")))
    assert kept.output == data.replace(b"int x = a;", b"int x = (a);")
    assert len(data) in lengths
    refused = run(b"int f(int a) { int x = a; return x; }\n",
                  _Rewrites((b"int x = a;", b"int x = (a;")))
    assert b"not fixed: the fix would not parse" in refused.output


def test_items_alone_and_the_whole_file_agree_on_kernels_and_fixtures(monkeypatch):
    """Every CUDA source in kernels/ and fixtures/ converts to the same output, with the
    same findings, when the guard is made to parse every whole file, and so are the rules that
    ask whether an offset parses (RuleContext.parses_clean_at)."""
    settings = Settings()
    paths = cuda_sources()
    assert len(paths) > 300
    judged = []
    real = engine._items_parse_alone

    def recording(*args):
        judged.append(real(*args))
        return judged[-1]

    monkeypatch.setattr(engine, "_items_parse_alone", recording)
    by_items = [convert_bytes(path.name, path.read_bytes(), settings) for path in paths]
    assert judged.count(True) > 20 and judged.count(False) > 0  # both ways are taken
    monkeypatch.setattr(engine, "_items_parse_alone", lambda *args: False)
    monkeypatch.setattr(RuleContext, "parses_clean_at", lambda self, offset: False)
    for path, first in zip(paths, by_items):
        whole = convert_bytes(path.name, path.read_bytes(), settings)
        assert (first.status, first.output, first.findings) == (
            whole.status, whole.output, whole.findings), path.relative_to(ROOT)


def test_an_offset_in_an_item_that_parses_alone_is_told_without_the_file(monkeypatch):
    data = (b"int n;\n"
            b"int f(int a) { return a; }\n"
            b"int g(int a) { return a + ; }\n")
    lengths = _parsed_lengths(monkeypatch)
    ctx = RuleContext(Source("t.cu", data), Settings(), apitables.load())
    assert ctx.parses_clean_at(data.index(b"return a;"))
    assert not ctx.parses_clean_at(data.index(b"return a +"))  # its item has an error
    assert not ctx.parses_clean_at(data.index(b"n;"))  # no item: the tree must tell
    assert ctx.parsed_tree is None and len(data) not in lengths
    assert max(lengths) < len(data)
    whole = RuleContext(Source("t.cu", data), Settings(), apitables.load())
    whole.tree  # parsed: the tree tells (it has an error, so no offset is vouched for)
    assert not whole.parses_clean_at(data.index(b"return a;"))
