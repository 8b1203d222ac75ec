"""The build-file readers (CMake, Make, shell) and the build-file fix loop."""

from __future__ import annotations

from typing import ClassVar

import pytest

from migrator import apitables
from migrator.buildfiles import cmake, fix_build_file, language_of, make
from migrator.buildfiles.context import BuildContext, marker_fix
from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.engine import EngineError
from migrator.rule import Marker, Rule
from migrator.settings import Settings
from migrator.source import Source


@pytest.mark.parametrize("rel, language", [
    ("CMakeLists.txt", "cmake"), ("cmake/FindX.cmake", "cmake"), ("a/Makefile", "make"),
    ("GNUmakefile", "make"), ("rules.mk", "make"), ("Makefile.nvidia", "make"),
    ("Makefile.am", None), ("build.sh", "shell"), ("main.cu", None), ("CMakeLists.txt.bak", None),
])
def test_language_of(rel, language):
    assert language_of(rel) == language


def test_cmake_reader_commands_arguments_and_comments():
    data = (b'project(x LANGUAGES CXX CUDA) # CUDA here is a comment\n'
            b'if((A) AND "B C")\n'
            b'  set(V [==[a ]] b]==] -DX="a b" \\;)\n'
            b'#[[ find_package(CUDA)\n]]\n'
            b'target_compile_options(t PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-O3>)\n')
    script = cmake.read(data)
    assert [c.lower for c in script.commands] == ["project", "if", "set",
                                                  "target_compile_options"]
    assert script.commands[0].values() == ["x", "LANGUAGES", "CXX", "CUDA"]
    assert script.commands[1].values() == ["A", "AND", "B C"]
    assert [a.kind for a in script.commands[2].args] == ["unquoted", "bracket", "unquoted",
                                                         "unquoted"]
    assert script.commands[2].values()[1] == "a ]] b"
    for command in script.commands:
        assert data[command.start : command.end].endswith(b")")
        for arg in command.args:
            assert data[arg.start : arg.end] == arg.text
    assert len(script.comments) == 2
    assert script.in_comment(data.index(b"find_package"))


def test_cmake_reader_survives_broken_text():
    script = cmake.read(b'set(A "unclosed\nfoo bar\nproject(')
    assert [c.lower for c in script.commands] == ["set"]
    assert cmake.read(b"").commands == ()
    assert cmake.read(b"x(\\").commands[0].args == ()


def test_makefile_lines_and_words():
    data = (b"CC = nvcc # the compiler\n"
            b"export FLAGS := -O3 \\\n  -arch=sm_60\n"
            b"%.o: %.cu\n"
            b"\t$(CC) $(FLAGS) -Xcompiler \"-Wall -x\" -c $< -o $@ # built\n"
            b"ifeq ($(DEBUG),yes)\n"
            b"# a comment\n\n"
            b"define RECIPE\nCC = x\nendef\n"
            b"t: X = 1\n")
    lines = make.read_makefile(data)
    kinds = [line.kind for line in lines]
    assert kinds == ["assignment", "assignment", "rule", "recipe", "directive", "comment",
                     "blank", "directive", "other", "other", "rule"]
    cc, flags = lines[0], lines[1]
    assert (cc.name, cc.op, data[cc.value_start : cc.value_end]) == ("CC", "=", b"nvcc")
    assert (flags.name, flags.op) == ("FLAGS", ":=")
    assert [w.text for w in make.words(data, flags.value_start, flags.value_end)] == [
        b"-O3", b"-arch=sm_60"]
    recipe = lines[3]
    assert [w.text for w in make.words(data, recipe.value_start, recipe.value_end)] == [
        b"$(CC)", b"$(FLAGS)", b"-Xcompiler", b'"-Wall -x"', b"-c", b"$<", b"-o", b"$@"]
    for word in make.words(data, 0, len(data), shell_comments=False):
        assert data[word.start : word.end] == word.text


def test_words_keep_make_functions_and_quotes_whole():
    data = b"$(patsubst %.cu, %.o, $(SRC)) 'a b' x\\ y ${A B}"
    assert [w.text for w in make.words(data, 0, len(data))] == [
        b"$(patsubst %.cu, %.o, $(SRC))", b"'a b'", b"x\\ y", b"${A B}"]


def test_shell_script_lines():
    data = b"#!/bin/sh\nnvcc -arch=sm_80 \\\n  a.cu -o a\n\necho done\n"
    assert [line.kind for line in make.read_script(data)] == ["comment", "command", "blank",
                                                             "command"]


class _NvccToHipcc(Rule):
    """A test rule.

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

    code = "ZZZ901"
    extra_codes = ("ZZZ902",)
    name = "test-rule"
    summary = "test"
    fix = "sometimes"
    languages: ClassVar[tuple[str, ...]] = ("make", "cmake")

    def check(self, ctx: BuildContext):
        for match in __import__("re").finditer(rb"\bnvcc\b", ctx.data):
            yield Diagnostic("ZZZ901", "nvcc", match.start(), match.end(),
                             Fix("hipcc", (Edit(match.start(), match.end(), b"hipcc"),)))
        for match in __import__("re").finditer(rb"-G\b", ctx.data):
            yield Diagnostic("ZZZ902", "-G", match.start(), match.end(),
                             marker_fix(ctx, match.start(), Marker("ZZZ902", "no debug")))


def _fix(data: bytes, language: str = "make", **settings):
    return fix_build_file(Source("Makefile", data), [_NvccToHipcc()], Settings(**settings),
                          apitables.load(), language)


def test_fix_loop_applies_fixes_and_markers_once():
    data = b"CC = nvcc\nFLAGS = -O3 \\\n\t-G\nall:\n\tnvcc -G a.cu\n"
    result = _fix(data)
    assert result.output == (b"CC = hipcc\n# rocmigrate ZZZ902: no debug\nFLAGS = -O3 \\\n\t-G\n"
                             b"all:\n# rocmigrate ZZZ902: no debug\n\thipcc -G a.cu\n")
    assert sorted((f.line, f.code, f.fixed, f.kind) for f in result.findings) == [
        (1, "ZZZ901", True, "check"), (3, "ZZZ902", True, "attention"),
        (5, "ZZZ901", True, "check"), (5, "ZZZ902", True, "attention")]
    again = _fix(result.output)
    assert again.output == result.output
    assert not any(f.fixed for f in again.findings)


def test_suppression_comment_silences_a_build_finding():
    data = b"# rocmigrate: ignore[ZZZ901]\nCC = nvcc\nNVCC = nvcc # rocmigrate: ignore\n"
    assert _fix(data).output == data
    assert _fix(b"CC = nvcc\n", ignore=("ZZZ901",)).output == b"CC = nvcc\n"


def test_markers_off_write_nothing():
    assert _fix(b"X = -G\n", write_markers=False).output == b"X = -G\n"


def test_cmake_marker_keeps_the_command_indent():
    data = b"if(A)\n  set(F\n      -G)\nendif()\n"
    assert _fix(data, "cmake").output == (b"if(A)\n  # rocmigrate ZZZ902: no debug\n  set(F\n"
                                          b"      -G)\nendif()\n")


def test_cmake_fix_that_unbalances_a_command_writes_nothing():
    class Breaks(_NvccToHipcc):
        def check(self, ctx):
            at = ctx.data.index(b")")
            yield Diagnostic("ZZZ901", "x", at, at + 1, Fix("x", (Edit(at, at + 1, b""),)))

    with pytest.raises(EngineError, match="unclosed"):
        fix_build_file(Source("CMakeLists.txt", b"set(A B)\n"), [Breaks()], Settings(),
                       apitables.load(), "cmake")


def test_identical_findings_of_one_round_are_each_reported():
    class Marks(_NvccToHipcc):
        def check(self, ctx):
            for match in __import__("re").finditer(rb"-G\b", ctx.data):
                yield Diagnostic("ZZZ902", "-G", match.start(), match.end())

    result = fix_build_file(Source("Makefile", b"A = -G\nB = -G\n"), [Marks()], Settings(),
                            apitables.load(), "make")
    assert [(f.line, f.code) for f in result.findings] == [(1, "ZZZ902"), (2, "ZZZ902")]


def test_build_findings_count_under_build_files_unless_they_name_a_library():
    class Links(_NvccToHipcc):
        def check(self, ctx):
            if ctx.data.startswith(b"-lcublas"):
                yield Diagnostic("ZZZ901", "-lcublas", 0, 8,
                                 Fix("x", (Edit(0, 8, b"-lhipblas"),)), library="cublas")
            yield from super().check(ctx)

    result = fix_build_file(Source("Makefile", b"-lcublas\nCC = nvcc\n"), [Links()], Settings(),
                            apitables.load(), "make")
    assert [f.library for f in result.findings] == ["cublas", "build files"]


def test_a_fix_that_waits_is_reported_by_the_round_that_applies_it():
    class Overlapping(_NvccToHipcc):
        def check(self, ctx):
            yield from super().check(ctx)
            at = ctx.data.find(b"nvcc")
            if at >= 0:  # overlaps the rename: waits, then has nothing left to do
                yield Diagnostic("ZZZ902", "nvcc again", at, at + 4,
                                 Fix("again", (Edit(at, at + 4, b"clang"),)))

    result = fix_build_file(Source("Makefile", b"CC = nvcc\n"), [Overlapping()], Settings(),
                            apitables.load(), "make")
    assert result.output == b"CC = hipcc\n"
    assert [(f.code, f.fixed) for f in result.findings] == [("ZZZ901", True)]


@pytest.mark.parametrize("text, expected", [
    (b"nvcc -O3 $(FLAGS) main.cu -o app", [b"nvcc", b"-O3", b"$(FLAGS)", b"main.cu", b"-o", b"app"]),
    (b"a$(B C)d e", [b"a$(B C)d", b"e"]),
    (b'"x y" z', [b'"x y"', b"z"]),
    (b'-Xcompiler="-O2 -g" k', [b'-Xcompiler="-O2 -g"', b"k"]),
    (b"$$(x) $$y", [b"$$(x)", b"$$y"]),
    (b"a\\ b c", [b"a\\ b", b"c"]),
    (b"x # comment", [b"x"]),
    (b"one\\\ntwo", [b"one", b"two"]),
    (b"${A}/b.o:c", [b"${A}/b.o:c"]),
])
def test_make_words_plain_and_quoted(text, expected):
    from migrator.buildfiles.make import words

    found = words(text, 0, len(text))
    assert [word.text for word in found] == expected
    assert all(text[word.start:word.end] == word.text for word in found)
