"""Engine units: fix selection, edits, includes, suppressions, guards."""

from __future__ import annotations

import os
import re

import pytest

from migrator import apitables
from migrator.convert import convert_bytes
from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.engine import (EngineError, apply_edits, choose_fixes, fix_source, include_edit,
                             include_insertion_point, insert_includes)
from migrator.rule import Rule
from migrator.settings import Settings
from migrator.source import Source


def diag(start, end, text=b"", includes=()):
    return Diagnostic("TST001", "t", start, end, Fix("t", (Edit(start, end, text),), includes=includes))


def test_overlapping_and_touching_fixes_wait():
    a, b, c, d = diag(0, 4), diag(2, 6), diag(4, 8), diag(9, 10)
    chosen = choose_fixes([d, c, b, a], unsafe=False)
    assert chosen == [a, d]


def test_chosen_edits_come_in_order():
    """The engine takes the chosen fixes' edits one fix after the other instead of sorting all
    of them: the same list as sorting, for fixes of several edits in any order too."""
    import random

    from migrator.engine import _choose, _chosen_edits

    rng = random.Random(5)
    for _ in range(500):
        found = []
        for _ in range(rng.randint(0, 8)):
            edits = []
            for _ in range(rng.randint(0, 3)):
                start = rng.randint(0, 40)
                edits.append(Edit(start, start + rng.randint(0, 3), rng.choice([b"", b"x"])))
            rng.shuffle(edits)
            found.append(Diagnostic("TST001", "t", 0, 0, Fix("t", tuple(edits), includes=("a.h",))))
        chosen = _choose(found)
        assert chosen == choose_fixes(found, unsafe=False)
        assert _chosen_edits(chosen) == sorted(e for d in chosen for e in d.fix.edits)


def test_apply_edits_in_one_pass():
    data = b"cudaMalloc(cudaFree)"
    out = apply_edits(data, [diag(0, 10, b"hipMalloc"), diag(11, 19, b"hipFree")])
    assert out == b"hipMalloc(hipFree)"


@pytest.mark.parametrize("text, expected", [
    (b"#include <a.h>\nint x;\n", 0),
    (b"// header\n// more\nint x;\n", len(b"// header\n// more\n")),
    (b"#ifndef G\n#define G\nint x;\n#endif\n", len(b"#ifndef G\n#define G\n")),
    (b"#pragma once\n#ifdef A\n#include <a.h>\n#endif\n", len(b"#pragma once\n")),
    (b"/* c */\n#ifndef G\n#define G\n#include <x.h>\n#endif\n", len(b"/* c */\n#ifndef G\n#define G\n")),
    # code above the first #include: what it uses must come first
    (b"// c\n__global__ void k();\n#include <a.h>\n", len(b"// c\n")),
    (b"#define N 4\nint x[N];\n#include <a.h>\n", 0),
    (b'extern "C" {\n#include <a.h>\n}\n', 0),
    (b'#ifdef __cplusplus\nextern "C" {\n#endif\n#include <a.h>\n', 0),
    (b"#pragma once\n#ifdef A\nint a;\n#endif\n#include <b.h>\n", len(b"#pragma once\n")),
])
def test_include_insertion_point(text, expected):
    assert include_insertion_point(text) == expected


def test_requested_defines_are_written_once_before_the_includes():
    data = b"// x\n#include <hip/hip_runtime.h>\nint x;\n"
    edit = include_edit(data, ["a.h"], b"\n", ["ENABLE_IT"])
    assert edit.text == b"#define ENABLE_IT\n#include <a.h>\n"
    assert edit.start == data.index(b"#include")
    assert include_edit(b"#define ENABLE_IT 1\n" + data, [], b"\n", ["ENABLE_IT"]) is None
    for not_a_definition in (b"// #define ENABLE_IT\n", b"#define X \\\n#define ENABLE_IT\n"):
        assert include_edit(not_a_definition + data, [], b"\n", ["ENABLE_IT"]) is not None


def test_include_edit_reads_the_head_of_the_file_as_a_full_scan_does(monkeypatch):
    """include_edit scans literals only up to the end of the last line starting with '#'
    (engine._head_literals): it decides as with every literal of the file, on random files of
    directives, comments, strings, raw strings, splices and code."""
    import random

    from migrator import engine
    from migrator.parsing.tokens import LiteralSpans

    pieces = [b"#include <a.h>\n", b"#ifndef G\n", b"#define G\n", b"#endif\n", b"#if X\n",
              b"#pragma once\n", b"  # define ENABLE_IT\n", b"// c\n", b"/* c\n", b"*/",
              b"int x;\n", b'"s\n', b'"#include <b.h>"\n', b'R"x(\n#include <a.h>\n)x"', b"\\\n",
              b"\n", b" ", b"// rocmigrate API001: m\n", b"#include <b.h>\n", b"'", b"/* d */",
              b"#define G /* e\n", b"#include <a.h> // f\n"]
    rng = random.Random(5)
    samples = [b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 14))) for _ in range(4000)]
    requests = [(["a.h"], []), (["b.h", '"c.h"'], ["ENABLE_IT"]), ([], ["G"])]
    head = {}
    for data in samples:
        for headers, defines in requests:
            head[data, len(headers), len(defines)] = include_edit(data, headers, b"\n", defines)
    monkeypatch.setattr(engine, "_head_literals", LiteralSpans)
    for data in samples:
        for headers, defines in requests:
            assert head[data, len(headers), len(defines)] == include_edit(
                data, headers, b"\n", defines), data


def test_insert_includes_once():
    data = b"#include <hip/hip_runtime.h>\nint x;\n"
    assert insert_includes(data, ["hip/hip_runtime.h"], b"\n") == data
    out = insert_includes(b"int x;\r\n", ["a.h", "a.h"], b"\r\n")
    assert out == b"#include <a.h>\r\nint x;\r\n"


def test_an_include_under_if_does_not_count():
    """A requested header the file includes only under #if is added unconditionally; one inside
    the include guard counts."""
    data = b"#ifdef A\n#include <hip/hip_runtime.h>\n#endif\n#include <cstdio>\n"
    assert insert_includes(data, ["hip/hip_runtime.h"], b"\n") == (
        b"#ifdef A\n#include <hip/hip_runtime.h>\n#endif\n#include <hip/hip_runtime.h>\n"
        b"#include <cstdio>\n")
    guarded = b"#ifndef G\n#define G\n#include <hip/hip_runtime.h>\n#endif\n"
    assert insert_includes(guarded, ["hip/hip_runtime.h"], b"\n") == guarded


class _Rename(Rule):
    """Test rule.

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

    code = "TST001"
    name = "test-rename"
    summary = "test"

    def __init__(self, old=b"foo", new=b"bar", includes=()):
        self.old, self.new, self.includes = old, new, includes

    def check(self, ctx):
        start = ctx.data.find(self.old)
        while start >= 0:
            if ctx.in_code(start):
                yield Diagnostic("TST001", "x", start, start + len(self.old),
                                 Fix("x", (Edit(start, start + len(self.old), self.new),),
                                     includes=self.includes))
            start = ctx.data.find(self.old, start + 1)


def run(data, rule, settings=Settings()):
    return fix_source(Source("t.cu", data), [rule], settings, apitables.load())


def test_suppressions():
    data = (b"int foo = 1; // rocmigrate: ignore[TST]\n"
            b"// rocmigrate: ignore[TST001]\nint foo2 = 2;\n"
            b"// rocmigrate: off\nint foo3;\n// rocmigrate: on\n"
            b"int foo4; // rocmigrate: ignore[OTHER]\n"
            b'const char* s = "rocmigrate: ignore"; int foo5;\n')
    out = run(data, _Rename()).output
    assert b"int foo = 1" in out and b"int foo2" in out and b"int foo3" in out
    assert b"int bar4" in out and b"int bar5" in out


def test_file_level_suppression():
    data = b"// rocmigrate: ignore-file[TST001]\nint foo;\n"
    assert run(data, _Rename()).output == data


def test_requested_include_inserted_once():
    data = b"#include <cstdio>\nint foo;\nint foo2;\n"
    out = run(data, _Rename(includes=("hip/hip_runtime.h",))).output
    assert out == b"#include <hip/hip_runtime.h>\n#include <cstdio>\nint bar;\nint bar2;\n"


def test_oscillation_hits_the_cap():
    class Flip(_Rename):
        chains = True  # its fixes create work for itself: the engine must re-run it

        def check(self, ctx):
            yield from _Rename(b"foo", b"bar").check(ctx)
            yield from _Rename(b"bar", b"foo").check(ctx)

    with pytest.raises(EngineError, match="did not converge"):
        run(b"int foo;\n", Flip())


def test_parse_guard_refuses_broken_output():
    """A fix that breaks the parse is not applied: a marker at its site says so."""
    result = run(b"int foo(int a) { return a; }\n", _Rename(b"foo", b"(("))
    assert result.output == (b"// rocmigrate TST001: x (not fixed: the fix would not parse)\n"
                             b"int foo(int a) { return a; }\n")
    assert run(result.output, _Rename(b"foo", b"((")).output == result.output


class _Rewrites(_Rename):
    """Test rule: each ``old`` in code becomes its ``new`` (a guarded fix: no name for a name)."""

    def __init__(self, *pairs):
        self.pairs = pairs

    def check(self, ctx):
        for old, new in self.pairs:
            start = ctx.data.find(old)
            while start >= 0:
                if ctx.in_code(start):
                    yield Diagnostic("TST001", f"rewrite {old.decode()}", start, start + len(old),
                                     Fix("rewrite", (Edit(start, start + len(old), new),)))
                start = ctx.data.find(old, start + 1)


def test_a_fix_that_breaks_the_parse_is_marked_and_the_rest_converts():
    """Issue 25 item 7: the one site whose fix breaks the parse gets a marker (at its line's
    indent); the other fixes apply, one of them on the same line as the broken one."""
    data = (b"int f(int a) { return a; }\n"
            b"int g(int a) {\n  int x = a; return x; }\n"
            b"int h(int a) { return a; }\n")
    rule = _Rewrites((b"return a;", b"return (a);"), (b"= a;", b"= (a);"),
                     (b"return x;", b"return (x;"))
    result = run(data, rule)
    assert result.output == (
        b"int f(int a) { return (a); }\n"
        b"int g(int a) {\n"
        b"  // rocmigrate TST001: rewrite return x; (not fixed: the fix would not parse)\n"
        b"  int x = (a); return x; }\n"
        b"int h(int a) { return (a); }\n")
    refused = [f for f in result.findings if f.message.startswith("rewrite return x;")]
    assert [(f.line, f.kind, f.fixed, f.fix_title) for f in refused] == [
        (3, "attention", True, "mark TST001")]
    assert refused[0].message.endswith("(not fixed: the fix would not parse)")
    assert sum(f.fixed and f.kind != "attention" for f in result.findings) == 3
    again = run(result.output, rule)
    assert again.output == result.output
    assert [(f.line, f.fixed) for f in again.findings] == [(4, False)]


def test_a_broken_fix_in_a_later_round_is_marked_once():
    """A chaining rule re-runs every round and finds the refused fix again: it is marked
    once and reported once."""
    class Chaining(_Rewrites):
        chains = True

    data = b"int g(int a) {\n  int x = a; return x; }\n"
    result = run(data, Chaining((b"= a;", b"= (a);"), (b"return x;", b"return (x;")))
    assert result.output.count(b"rocmigrate TST001") == 1
    assert len([f for f in result.findings if "return x" in f.message]) == 1


def test_markers_are_off_a_broken_fix_is_only_left_out():
    from dataclasses import replace

    data = b"int g(int a) {\n  int x = a; return x; }\n"
    result = run(data, _Rewrites((b"= a;", b"= (a);"), (b"return x;", b"return (x;")),
                 replace(Settings(), write_markers=False))
    assert result.output == b"int g(int a) {\n  int x = (a); return x; }\n"
    assert [f.fixed for f in result.findings if "return x" in f.message] == [False]


def test_select_filters_codes():
    out = run(b"int foo;\n", _Rename(), Settings(ignore=("TST",))).output
    assert out == b"int foo;\n"


def test_settles_after_one_round_without_deferred_fixes():
    result = run(b"int foo; int foo2;\n", _Rename())
    assert result.output == b"int bar; int bar2;\n" and result.rounds == 1


def test_deferred_fix_gets_a_second_round():
    class Touching(_Rename):
        def check(self, ctx):
            yield from _Rename(b"foo", b"bar").check(ctx)
            end = ctx.data.find(b";")
            if ctx.data[end - 1 : end] != b"X":  # an insertion touching the rename: waits a round
                yield Diagnostic("TST001", "x", end, end, Fix("x", (Edit(end, end, b"X"),)))

    result = run(b"int foo;\n", Touching())
    assert result.output == b"int barX;\n" and result.rounds == 2


class _Counting(_Rename):
    """A rename that counts the rounds it runs in (``runs``); ``chains`` as given."""

    def __init__(self, code, old, new, chains=False):
        super().__init__(old, new)
        self.code, self.runs, self.chains = code, 0, chains

    def codes(self):
        return (self.code,)

    def check(self, ctx):
        self.runs += 1
        for found in re.finditer(rb"\b%s\b" % self.old, ctx.data):
            yield Diagnostic(self.code, "x", found.start(), found.end(),
                             Fix("x", (Edit(found.start(), found.end(), self.new),)))


@pytest.mark.parametrize("chains, runs", [
    # foo -> foobar and foo -> food overlap: TST002's fix waits for round 2 (where it finds
    # nothing left); TST001's applied, so it runs again too; TST003 found nothing and
    # nothing chains into it: not run again
    (False, (2, 2, 1)),
    # TST001 chains: its output may be anyone's work, so every rule runs again
    (True, (2, 2, 2)),
])
def test_a_round_after_deferred_fixes_runs_the_rules_that_acted(chains, runs):
    rules = (_Counting("TST001", b"foo", b"foobar", chains=chains),
             _Counting("TST002", b"foo", b"food"),
             _Counting("TST003", b"qux", b"quux"))
    result = fix_source(Source("t.cu", b"int foo; int bar;\n"), list(rules), Settings(),
                        apitables.load())
    assert result.output == b"int foobar; int bar;\n"
    assert tuple(rule.runs for rule in rules) == runs


def test_incremental_reparse_matches_full_parse():
    from migrator.parsing import treesitter

    before = Source("t.cu", b"#include <x.h>\nint foo(int a) {\n  return a + foo(a - 1);\n}\n")
    edits = [Edit(19, 22, b"a_much\nlonger_name"), Edit(43, 46, b"g"), Edit(0, 0, b"// new\n")]
    after = apply_edits(before.data, [Diagnostic("T", "", e.start, e.end, Fix("", (e,))) for e in edits])
    tree = treesitter.parse(before.data)
    treesitter.edit_tree(tree, before, edits)
    incremental = treesitter.parse(after, tree)
    assert str(incremental.root_node) == str(treesitter.parse(after).root_node)


def _syntax_keeping_fixes(data: bytes):
    """(diagnostic, input tree errors) for every fix that claims to keep the syntax."""
    from migrator.convert import rules_for
    from migrator.rule import RuleContext

    settings = Settings()
    ctx = RuleContext(Source("t.cu", data), settings, apitables.load())
    for cls in rules_for(settings):
        for found in cls().check(ctx):
            if found.fix is not None and found.fix.keeps_syntax:
                yield found


def test_syntax_keeping_fixes_keep_the_parse(tmp_path):
    """Fixes marked ``keeps_syntax`` skip the engine's parse guard: each one, applied alone to
    kernels/, the fixture inputs and a generated project, leaves tree-sitter's error count as it
    was (the guard's condition), and every kind of such fix is met here."""
    import sys

    from conftest import ROOT
    from migrator.parsing import treesitter

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from corpus import generate_corpus
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    generate_corpus(tmp_path / "corpus", 12000)
    paths = [p for folder in (ROOT / "kernels", ROOT / "fixtures", tmp_path / "corpus")
             for p in sorted(folder.rglob("*"))
             if p.is_file() and p.suffix in (".cu", ".cuh", ".h", ".cpp") and "output" not in p.name]
    checked = set()
    for path in paths:
        data = path.read_bytes()
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        errors = treesitter.error_count(treesitter.parse(data))
        for found in _syntax_keeping_fixes(data):
            after = apply_edits(data, [found])
            assert treesitter.error_count(treesitter.parse(after)) == errors, (path, found)
            checked.add((found.code, found.fix.title.split(";")[-1].split()[0]))
    # API001 renames (an identifier to an identifier); ARG001 appends (hipHostMallocDefault),
    # wraps (HIP_SYMBOL), casts (a kernel to const void*, &ptr to void**) and renames alone (a
    # call none of its rows changes for the target); SHM001 aligns; SHM002 pads; WAV002 puts
    # one constant for another (a 64-bit all-lanes mask, in #define bodies too); WMM001 names
    # rocwmma for nvcuda::wmma; ARG001 replaces a legacy argument value by a name ("argument")
    assert checked == {("API001", "rename"), ("ARG001", "pass"), ("ARG001", "wrap"),
                       ("ARG001", "cast"), ("ARG001", "rename"), ("ARG001", "argument"),
                       ("SHM001", "align"), ("SHM002", "pad"), ("WAV002", "use"),
                       ("WMM001", "rocwmma")}


def test_findings_and_fixes_do_not_depend_on_hash_seeds(tmp_path):
    """Rules that walk sets yield in an order that changes with PYTHONHASHSEED; the engine's
    choice of which fix at one place waits for the next round, and so the findings' order,
    must not: the same input gives the same report in every process."""
    import json
    import subprocess
    import sys

    from conftest import ROOT

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from corpus import generate_dense_corpus
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    generate_dense_corpus(tmp_path / "src", 3000, seed=7)
    script = ("import json, sys, pathlib\n"
              "from migrator.convert import convert_bytes\n"
              "from migrator.settings import Settings\n"
              "from migrator.versions import parse_version\n"
              "s = Settings(rocm=parse_version('5.2'), launch_syntax='ggl')\n"
              "out = {}\n"
              "for p in sorted(pathlib.Path(sys.argv[1]).rglob('*.cu')):\n"
              "    r = convert_bytes(p.name, p.read_bytes(), s)\n"
              "    out[p.name] = [r.output.decode(), [f.as_dict() for f in r.findings]]\n"
              "print(json.dumps(out))\n")
    reports = []
    for seed in ("1", "2", "3"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        run = subprocess.run([sys.executable, "-c", script, str(tmp_path / "src")], cwd=ROOT,
                             capture_output=True, text=True, env=env, check=True)
        reports.append(json.loads(run.stdout))
    assert reports[0] and reports[0] == reports[1] == reports[2]


def test_respelling_finds_every_name_it_renames():
    """Marker texts are respelled part by part, split at names: the same text as substituting
    each identifier (names glued to digits or non-ASCII letters, members and partial names
    included)."""
    import random
    import re

    from rules.markers import _output_spelling, _respelled

    tables = apitables.load()
    identifier = re.compile(r"\b[A-Za-z_]\w*")
    rng = random.Random(3)
    for lowered in (False, True):
        spelling = _output_spelling(tables, (6, 2, 0), lowered)
        words = list(spelling)[::50] + ["x", "_", "é", "9", "cudaMallocX", "__shfl", "cu"]
        for _ in range(3000):
            text = "".join(rng.choice(words + [" ", ".", "->", "(", "\n", ";", "; "])
                           for _ in range(rng.randint(0, 10)))
            expected = identifier.sub(lambda m: spelling.get(m.group(), m.group()), text)
            assert _respelled(tables, (6, 2, 0), lowered, text) == expected, text


def test_find_name_finds_whole_words_only():
    """find_name's regex leaves out the leading word boundary when every name is a word (it
    checks the byte before a match instead): the same occurrences as the full pattern."""
    import random
    import re

    from migrator.rule import RuleContext
    from migrator.semantic.calls import find_name

    rng = random.Random(4)
    pieces = [b"__shfl", b"__shfl_down", b"_sync", b"a", b"x", b"1", b" ", b".", b"->", b"(", b"\n",
              b"//", b"\"", b"cudaMemcpy", b"Async", b"->cudaMemcpy"]
    for names in ({b"__shfl", b"__shfl_down"}, {b"cudaMemcpy", b"cudaMemcpyAsync"}, {b"a.b", b"x"}):
        full = re.compile(rb"\b(?:" + b"|".join(re.escape(n) for n in sorted(names)) + rb")\b")
        for _ in range(2000):
            data = b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 10)))
            ctx = RuleContext(Source("t.cu", data), Settings(), apitables.load())
            expected = []
            for match in full.finditer(data):
                before = ctx.code[max(0, match.start() - 64) : match.start()].rstrip()[-2:]
                if ctx.in_code(match.start()) and not before.endswith((b".", b"->")):
                    expected.append((match.group(), match.start(), match.end()))
            assert list(find_name(ctx, names)) == expected, data


def _api_rename_one_by_one():
    from rules.api.rename import ApiRename

    class OneByOne(ApiRename):
        """API001 with every rename a Diagnostic: the path the engine's bulk renames replace."""

        def check_renames(self, ctx):
            return self.check(ctx), None

    return OneByOne


_API_PIECES = [b"cudaMalloc", b"cudaStream_t", b"cuComplex", b"cudaMemcpy(", b"cublasAlloc",
               b"cudnnCreate", b"cub", b"::", b"CUoccupancyB2DSize", b"cudaFuncGetAttributes(",
               b"cudaStreamSynchronize(0);", b"cudaDeviceSynchronize();", b"atomicAdd(", b"(",
               b")", b";", b",", b" ", b"\n", b".", b"->", b"x", b"int ", b"struct S {", b"}",
               b"__global__ void k() {", b'"s"', b"/* c */", b"// c\n", b"#define M ", b"\\\n",
               b"#include <cuda_runtime.h>\n", b"// rocmigrate: ignore[API001]\n",
               b"foo", b"cudaFoo"]


def _outcome(data: bytes, rules, settings: Settings, apply_fixes: bool):
    try:
        result = fix_source(Source("t.cu", data), rules, settings, apitables.load(), apply_fixes)
    except EngineError as err:
        return str(err)
    return result.output, result.findings, result.rounds


def test_bulk_renames_fix_and_report_as_one_by_one():
    """The engine takes API001's plain renames in bulk (no Diagnostic each): with the other
    rules' fixes touching them (`foo` -> a call around `cudaMalloc`; STM001...), suppressions,
    select, lint and deferred rounds, it writes and reports what it does with one Diagnostic
    per rename."""
    import random

    from migrator.convert import rules_for

    one_by_one = _api_rename_one_by_one()
    competing = [_Rename(b"foo", b"bar"), _Rename(b"cudaMalloc", b"hipMallocX"),
                 _Rename(b"(x", b"(y"), _Rename(b", ", b"")]
    rng = random.Random(3)
    for _ in range(400):
        data = b"".join(rng.choice(_API_PIECES) for _ in range(rng.randint(0, 50)))
        settings = rng.choice([Settings(), Settings(ignore=("API001",)), Settings(select=("API",)),
                               Settings(report_unused_suppressions=True),
                               Settings(unsafe_fixes=True)])
        classes = list(rules_for(Settings()))
        rules = [cls() for cls in classes]
        rng.shuffle(competing)
        place = rng.randint(0, len(rules))
        rules[place:place] = competing[: rng.randint(0, len(competing))]
        replaced = [one_by_one() if type(rule).__name__ == "ApiRename" else rule
                    for rule in rules]
        apply_fixes = rng.random() < 0.8
        assert (_outcome(data, rules, settings, apply_fixes)
                == _outcome(data, replaced, settings, apply_fixes)), data


class _Porting(_Rename):
    """Test rule.

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
    extra_codes = ("TST003",)
    name = "test-porting"
    category = "conversion"
    attention_codes = ("TST003",)

    def check(self, ctx):
        for diagnostic in super().check(ctx):
            yield Diagnostic("TST002", "ported", diagnostic.start, diagnostic.end,
                             diagnostic.fix, library="team")
        at = ctx.data.find(b"gone")
        if at >= 0:
            yield Diagnostic("TST003", "gone", at, at + 4, Fix("mark", (Edit(at, at, b"/* x */"),),
                                                              marker=True))


def test_where_findings_are_listed_comes_from_the_rules():
    """The summary places findings by what their rule declares (a conversion, an attention
    code, an optimisation) and by markers: no rule code is known to the engine or the summary."""
    from migrator.results import summarize_findings

    assert not _Porting.validate()
    result = run(b"int foo; int gone;\n", _Porting())
    assert [(f.code, f.kind) for f in result.findings] == [("TST002", "conversion"),
                                                          ("TST003", "attention")]
    summary = summarize_findings([result.findings])
    assert summary["converted_references"] == {"team": 1}
    assert [entry["code"] for entry in summary["attention"]] == ["TST003"]
    optimizing = type("_Optimizing", (_Rename,), {"optimization": True, "__doc__": _Rename.__doc__})
    assert [f.kind for f in run(b"int foo;\n", optimizing()).findings] == ["optimization"]
    wrong = type("_Wrong", (_Rename,), {"category": "port", "attention_codes": ("XYZ001",),
                                        "__doc__": _Rename.__doc__})
    assert len(wrong.validate()) == 2


DISPATCHED = b"""template <class Barrier>
int arrive_all(Barrier& b, int n)
{
  int token = 0;
  DISPATCH_ON_TARGET(
    TARGET_NEW,
    (
      if (!in_shared(&b)) { return b.arrive(n); }

      unsigned int mask   = __activemask();
      unsigned int group  = __match_any_sync(mask, n);
      unsigned int active = group & mask;
      int lead            = __ffs(active) - 1;
      // every lane named by the mask meets here
      __syncwarp(mask);
      if (lead == lane_id()) {
        token = b.arrive(__popc(active) * n);
      } token = __shfl_sync(active, token, lead);),
    TARGET_HOST,
    (token = b.arrive(n);))
  return token;
}
"""


def test_marker_lines_beside_a_guarded_edit_in_code_that_does_not_parse():
    """Statements inside a macro's arguments (CCCL's NV_DISPATCH_TARGET: CUDA 13's
    barrier_block_scope.h failed so) parse with errors; marker lines there move tree-sitter's
    error recovery, and the guarded edits of the same round (WRP001's __syncwarp, ARG001's
    cast) were held to the errors the markers moved. The guarded edits alone keep the parse,
    so the round is kept, markers and all."""
    from migrator.parsing import treesitter

    assert treesitter.error_count(treesitter.parse(DISPATCHED)) > 0
    result = convert_bytes("dispatch.h", DISPATCHED, Settings())
    assert result.status == "converted", result.message
    assert b"// rocmigrate WAV002:" in result.output
    assert b"__builtin_amdgcn_wave_barrier()" in result.output


def test_vec001_guard_between_specifiers_and_declarator_is_marked():
    """Issue 25 item 7: VEC001's #if before a declaration whose specifiers stand on the line
    above it would split the declaration; that fix alone is marked, the file still converts."""
    data = (b"#include <cuda_runtime.h>\n"
            b"inline __host__ __device__ void operator+=(float2 &a, float2 b) { a.x += b.x; }\n"
            b"static inline __host__ __device__\n"
            b"float2 operator*(float2 a, float2 b) { return make_float2(a.x * b.x, a.y * b.y); }\n")
    result = convert_bytes("helper_math.h", data, Settings())
    assert result.status == "converted", result.message
    assert result.output == (
        b"#include <hip/hip_runtime.h>\n"
        b"#if !defined(__HIP_PLATFORM_AMD__) && !defined(__HIP_CPU_RT__) /* HIP's float2 defines operator+= */\n"
        + data.splitlines(True)[1] + b"#endif\n"
        b"static inline __host__ __device__\n"
        b"// rocmigrate VEC001: operator*(float2, float2) is HIP's own: the project's is kept for "
        b"other platforms only (uses of both are ambiguous) (not fixed: the fix would not parse)\n"
        + data.splitlines(True)[3])
    again = convert_bytes("helper_math.h", result.output, Settings())
    assert again.output == result.output


@pytest.mark.parametrize("text", [
    b"", b"/* c */\n", b"#define A 1 /* one */ + 2\n", b"#define A 1 /* one */\n",
    b"  #  define F(x) do { /* note */ f(x); } while (0)\n", b"#if X /* c */ && Y\n",
    b"#define A \\\n  f(x) /* c */ g(x)\n", b"#define A \\\r\n  f(x) /* c */ g(x)\n",
    b"int x; /* c */ int y;\n#define B /* open\n", b"#define C \\\n/* a */ /* b */ x\n",
    b"x /* a */\n#define D /* b */ y\n", b"#define E 1 /** doc **/\n",
])
def test_directive_comment_test_agrees_with_the_pattern(text):
    from migrator.engine import _DIRECTIVE_COMMENT, _has_directive_comment

    assert _has_directive_comment(text) == (_DIRECTIVE_COMMENT.search(text) is not None)


def test_a_rename_between_the_edits_of_one_fix_applies_with_it_at_its_input_line():
    """XFR001 rewrites a buffer's allocation and its free (lines 90 and 104 of
    kernels/gradient_transfer.cu); the copy between them (line 98) is renamed in the same round
    and reported at its line in the input, not at the line a later round's text (one line
    longer above it) gives it. The file then takes the round XFR001's chain asks for, no
    third."""
    from conftest import ROOT
    from migrator.convert import rules_for

    data = (ROOT / "kernels" / "gradient_transfer.cu").read_bytes()
    line = data.split(b"\n")[97]
    assert line.lstrip().startswith(b"CHECK(cudaMemcpy(host + offset,")
    settings = Settings()
    result = fix_source(Source("gradient_transfer.cu", data),
                        [cls() for cls in rules_for(settings)], settings, apitables.load())
    renamed = [(f.line, f.column) for f in result.findings
               if f.code == "API001" and f.symbol in ("cudaMemcpy", "cudaMemcpyDeviceToHost")
               and f.line in (98, 99)]
    assert renamed == [(98, line.index(b"cudaMemcpy") + 1),
                       (98, line.index(b"cudaMemcpyDeviceToHost") + 1)]
    assert result.rounds == 2
