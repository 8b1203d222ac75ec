"""`rocmigrate build`'s readers, without a compiler: the error parser, the line map, the untrusted
cache, explanations (markers, APIs the installed ROCm lacks), the tree's translation units and
include folders, compile_commands.json flags, and the command's usage errors.
(tests/test_build_projects.py builds real projects with hipcc, cmake and make.)"""

from __future__ import annotations

import json
import re
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from migrator.build.errors import Explainer, parse_errors
from migrator.build.run import _flags_of
from migrator.build.tree import LineMap, include_folders, plain_rel, read_tree, tree_files
from migrator.cli import _register, app
from migrator.workspace.units import translation_units

_register()

CLANG_LOG = """\
In file included from /b/tree/src/main.hip:3:
In file included from /b/tree/include/a.h:2:
/b/tree/include/b.h:7:5: error: unknown type name 'hip_bfloat16x'
    hip_bfloat16x v;
    ^
/b/tree/src/main.hip:10:14: warning: unused variable 'q' [-Wunused-variable]
/b/tree/src/main.hip:12:3: error: use of undeclared identifier '__shfl_down_sync'; did you mean '__shfl_down'?
/b/tree/src/main.hip:12:3: note: '__shfl_down' declared here
/b/tree/src/main.hip:12:3: error: use of undeclared identifier '__shfl_down_sync'; did you mean '__shfl_down'?
/b/tree/src/other.hip:1:10: fatal error: 'hip/hip_bf16.h' file not found
#include <hip/hip_bf16.h>
         ^~~~~~~~~~~~~~~~
3 errors generated when compiling for gfx90a.
clang-15: error: invalid target ID 'gfx942'; format is a processor name
/usr/bin/ld: main.o: in function `main':
main.hip:(.text+0x2a): undefined reference to `launch(float*, int)'
ld.lld: error: undefined symbol: helper()
clang-15: error: linker command failed with exit code 1 (use -v to see invocation)
CMake Error at CMakeLists.txt:2 (project):
  No CMAKE_HIP_COMPILER could be found.

  Tell CMake where to find the compiler.
"""


def test_the_error_parser_reads_compiler_linker_driver_and_cmake_errors():
    errors = parse_errors(CLANG_LOG)
    assert [(e.kind, e.file, e.line, e.column) for e in errors] == [
        ("compiler", "/b/tree/include/b.h", 7, 5),
        ("compiler", "/b/tree/src/main.hip", 12, 3),  # the repeated one once
        ("compiler", "/b/tree/src/other.hip", 1, 10),
        ("driver", None, None, None),
        ("linker", "main.hip", None, None),
        ("linker", None, None, None),
        ("cmake", "CMakeLists.txt", 2, None)]
    # the unit is the outermost includer of a header's error; a file's own error is its own
    assert [e.unit for e in errors[:3]] == ["/b/tree/src/main.hip", "/b/tree/src/main.hip",
                                            "/b/tree/src/other.hip"]
    assert errors[2].message == "'hip/hip_bf16.h' file not found"
    assert errors[4].message == "undefined reference to `launch(float*, int)'"
    assert errors[5].message == "undefined symbol: helper()"
    assert errors[6].message == ("No CMAKE_HIP_COMPILER could be found. Tell CMake where to "
                                 "find the compiler.")
    assert not any("errors generated" in e.message or "linker command failed" in e.message
                   for e in errors)
    tools = parse_errors("/usr/bin/ld: main.o: in function `main':\n"
                         "/usr/bin/ld: cannot find -lomp: No such file or directory\n"
                         "ld.lld: error: undefined symbol: f()\n"
                         "/usr/bin/ld: ./libv.a(scale.o):(.hipFatBinSegment+0x8): undefined "
                         "reference to `__hip_fatbin'\n"
                         "make: *** No rule to make target '../x-sycl/utils.h', needed by "
                         "'main.o'.  Stop.\n"
                         "Makefile:3: *** missing separator.  Stop.\n"
                         "make[1]: *** [Makefile:48: main] Error 1\n")
    assert [(e.kind, e.message) for e in tools] == [
        ("linker", "cannot find -lomp: No such file or directory"),
        ("linker", "undefined symbol: f()"),
        ("linker", "undefined reference to `__hip_fatbin'"),
        ("make", "No rule to make target '../x-sycl/utils.h', needed by 'main.o'"),
        ("make", "missing separator")]
    assert tools[2].file == "./libv.a(scale.o)"  # the linker's own line names the object
    assert (tools[4].file, tools[4].line) == ("Makefile", 3)
    gcc = parse_errors("In file included from inc/a.h:2,\n                 from src/host.cpp:3:\n"
                       "inc/b.h:7:5: error: 'x' was not declared in this scope\n")
    assert [(e.file, e.unit) for e in gcc] == [("inc/b.h", "src/host.cpp")]


def test_the_line_map_follows_kept_changed_and_added_lines():
    source = ["#include <cuda_runtime.h>", "int a;", "cudaFree(p);", "int b;"]
    output = ["#include <hip/hip_runtime.h>", "int a;", "// rocmigrate X: note",
              "hipFree(p);", "int b;", "int c;"]
    lines = LineMap(source, output)
    assert lines.source_line(2) == (2, True)  # kept
    assert lines.source_line(1) == (1, False)  # changed
    assert lines.source_line(4)[0] == 3 and lines.source_line(3)[0] == 3  # a marker added above
    assert lines.source_line(5) == (4, True)
    assert lines.source_line(6) == (4, False)  # added at the end: the last source line
    assert lines.source_line(7) is None


def _tree_with_cache(tmp_path: Path, files: dict, key: str = "0.1.0|5|d|p|((5, 2, 0), 'x')"):
    out = tmp_path / "out"
    (out / ".rocmigrate").mkdir(parents=True)
    (out / ".rocmigrate" / "cache.json").write_text(json.dumps({"files": files, "key": key}))
    return out


def test_an_untrusted_cache_maps_only_paths_inside_the_trees(tmp_path: Path):
    out = _tree_with_cache(tmp_path, {
        "a.cu": {"output": "a.hip"},
        "../../etc/passwd": {"output": "p.hip"},
        "b.cu": {"output": "../outside.hip"},
        "/abs.cu": {"output": "abs.hip"},
        "c.cu": {"output": ".rocmigrate/cache.json"},
        "d.cu": {"output": "sub\\..\\x.hip"},
        "e.cu": "not an entry",
        "f.cu": {"output": 7},
        "sub/g.cu": {"output": "sub/g.cu"}})
    tree = read_tree(out)
    assert tree.sources == {"a.hip": "a.cu", "sub/g.cu": "sub/g.cu"}
    assert tree.converted_for == (5, 2, 0)
    assert "7 entries ignored" in tree.cache_note
    assert not plain_rel("") and not plain_rel("a//b") and not plain_rel("./a")


@pytest.mark.parametrize("content, said", [
    ("{not json", "not valid JSON"),
    ('{"files": []}', "no file table"),
    ('[1, 2]', "no file table"),
])
def test_a_damaged_cache_only_means_no_mapping(tmp_path: Path, content: str, said: str):
    out = tmp_path / "out"
    (out / ".rocmigrate").mkdir(parents=True)
    (out / ".rocmigrate" / "cache.json").write_text(content)
    tree = read_tree(out)
    assert tree.sources == {} and tree.converted_for is None and said in tree.cache_note


def test_a_symlinked_cache_is_not_followed(tmp_path: Path):
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps({"files": {"a.cu": {"output": "a.cu"}}, "key": "|((6, 4, 0), "}))
    out = tmp_path / "out"
    (out / ".rocmigrate").mkdir(parents=True)
    (out / ".rocmigrate" / "cache.json").symlink_to(elsewhere)
    tree = read_tree(out)
    assert tree.sources == {} and tree.converted_for is None
    (out / ".rocmigrate" / "cache.json").unlink()
    (out / ".rocmigrate").rmdir()
    (out / ".rocmigrate").symlink_to(tmp_path, target_is_directory=True)
    elsewhere.rename(tmp_path / "cache.json")
    assert read_tree(out).sources == {}


def _explainer(tmp_path: Path, output: str, source: str | None, installed=(5, 2, 0)):
    out = _tree_with_cache(tmp_path, {"k.cu": {"output": "k.hip"}})
    (out / "k.hip").write_text(output)
    src = None
    if source is not None:
        src = tmp_path / "src"
        src.mkdir()
        (src / "k.cu").write_text(source)
    return Explainer(read_tree(out), [out, tmp_path / "copy"], src, installed), out


def test_an_error_under_a_marker_gets_its_code_and_the_cuda_line(tmp_path: Path):
    source = "int main() {\n  cudaGraph_t g;\n  cudaGraphInstantiateWithParams(0, g, 0);\n}\n"
    output = ("int main() {\n  hipGraph_t g;\n  // rocmigrate API002: cudaGraphInstantiateWithParams "
              "has no HIP equivalent in ROCm 5.2\n  cudaGraphInstantiateWithParams(0, g, 0);\n}\n")
    explainer, out = _explainer(tmp_path, output, source)
    error = parse_errors(f"{out}/k.hip:4:3: error: use of undeclared identifier "
                         "'cudaGraphInstantiateWithParams'\n")[0]
    explainer.explain(error)
    assert (error.output_file, error.source_file, error.source_line, error.line_exact) == \
        ("k.hip", "k.cu", 3, True)
    assert error.code == "API002" and "no HIP equivalent in ROCm 5.2" in error.explanation
    # the same path through the build folder's copy of the tree
    copied = parse_errors(f"{tmp_path}/copy/k.hip:4:3: error: x\n")[0]
    assert explainer.explain(copied).source_line == 3 and copied.code == "API002"
    # a marker two code lines up does not explain this line
    far = parse_errors(f"{out}/k.hip:5:1: error: expected ';'\n")[0]
    assert explainer.explain(far).code is None


def test_an_api_the_installed_rocm_lacks_is_explained_from_the_tables(tmp_path: Path):
    output = ("#include <hip/hip_bf16.h>\n__global__ void k(float* x) {\n"
              "  x[0] = __shfl_down_sync(0xffffffffffffffffull, x[0], 1);\n"
              "  hipGraphInstantiateWithParams(0, 0, 0);\n}\n")
    explainer, out = _explainer(tmp_path, output, None)
    log = (f"{out}/k.hip:1:10: fatal error: 'hip/hip_bf16.h' file not found\n"
           f"{out}/k.hip:3:10: error: use of undeclared identifier '__shfl_down_sync'\n"
           f"{out}/k.hip:4:3: error: use of undeclared identifier "
           "'hipGraphInstantiateWithParams'; did you mean 'hipGraphInstantiateWithFlags'?\n"
           f"{out}/k.hip:4:3: error: use of undeclared identifier 'hipMalloc'\n")
    header, shuffle, graph, known = [explainer.explain(e) for e in parse_errors(log)]
    assert header.code == "HDR001" and "from ROCm 6.0" in header.explanation
    assert shuffle.code == "WRP001" and "from ROCm 6.2" in shuffle.explanation
    assert "--rocm 5.2" in shuffle.explanation
    assert graph.code == "API002" and "from ROCm 6.2" in graph.explanation
    assert known.code is None  # hipMalloc is in every ROCm: something else is wrong
    assert header.source_file == "k.cu" and header.source_line is None  # no --source
    newer, _ = _explainer(tmp_path / "newer", output, None, installed=(6, 4, 0))
    assert newer.explain(parse_errors(log)[1]).code is None  # 6.4 has it: not the cause


def test_paths_outside_the_tree_are_not_mapped(tmp_path: Path):
    explainer, out = _explainer(tmp_path, "x\n", "x\n")
    for printed in ("/usr/include/hip/hip_runtime.h", f"{out}/../k.hip", "relative/k.hip"):
        error = explainer.explain(parse_errors(f"{printed}:1:1: error: boom\n")[0])
        assert error.output_file is None and error.source_file is None


def test_translation_units_and_include_folders(tmp_path: Path):
    files = {"src/a.cu": '#include "util.cuh"\n#include "local.h"\n',
             "src/local.h": "", "src/b.cpp": "#include <hip/hip_runtime.h>\n",
             "src/c.cpp": "int f() { return 1; }\n", "lib/inc/util.cuh": '#include <deep/x.h>\n',
             "third/deep/x.h": "", "k.hip": "", "notes.txt": '#include "nothing.h"\n'}
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    (tmp_path / ".rocmigrate").mkdir()
    (tmp_path / ".rocmigrate" / "x.cu").write_text("")
    listed = tree_files(tmp_path)
    assert ".rocmigrate/x.cu" not in listed
    assert translation_units(tmp_path, listed) == ["k.hip", "src/a.cu", "src/b.cpp"]
    assert include_folders(tmp_path, listed) == ["", "lib/inc", "third"]


def test_the_tree_is_walked_as_every_command_walks_it(tmp_path: Path):
    """Version control and environments are not entered; a link to a file of the tree counts,
    a link out of the tree does not."""
    for rel in ("a.cu", ".git/x.cu", ".venv/y.cu", "sub/.git/z.cu"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    (tmp_path / "inside.cu").symlink_to("a.cu")
    outside = tmp_path.parent / f"{tmp_path.name}-outside.cu"
    outside.write_text("")
    (tmp_path / "outside.cu").symlink_to(outside)
    listed = tree_files(tmp_path)
    assert listed == ["a.cu", "inside.cu"]
    assert translation_units(tmp_path, listed) == ["a.cu", "inside.cu"]


def test_compile_commands_give_defines_includes_and_the_standard(tmp_path: Path):
    original = tmp_path / "orig"
    out = tmp_path / "out"
    for root in (original, out):
        (root / "inc").mkdir(parents=True)
    entries = [
        {"directory": str(original / "build"), "file": "../src/a.cu",
         "arguments": ["nvcc", "-DN=4", "-D", "M=2", "-I../inc", "-isystem", "/usr/include",
                       "-arch=sm_80", "-std=c++17", "-gencode", "arch=compute_80,code=sm_80",
                       "-I", "/no/such/folder", "-UOLD", "-c", "../src/a.cu"]},
        {"directory": str(original), "file": "src/b.cu",
         "command": "g++ -DB=1 -include inc/pre.h -c src/b.cu"},
        {"directory": str(original), "file": "elsewhere/c.cu", "command": "nvcc -DX"},
        "garbage", {"file": 3}]
    (out / "inc" / "pre.h").write_text("")
    flags = _flags_of(entries, {"src/a.cu": "src/a.hip"}, {"src/b.cu", "src/a.hip"}, out)
    assert flags == {
        "src/a.hip": ["-DN=4", "-DM=2", "-I", str(out / "inc"), "-isystem", "/usr/include",
                      "-std=c++17", "-UOLD"],
        "src/b.cu": ["-DB=1", "-include", str(out / "inc" / "pre.h")]}


def test_usage_errors_exit_2(tmp_path: Path):
    out = tmp_path / "out"
    out.mkdir()
    runner = CliRunner()
    cases = [
        (["build", str(tmp_path / "missing")], "is not a folder"),
        (["build", str(out), "--offload-arch", "sm_80"], "--offload-arch: 'sm_80'"),
        (["build", str(out), "--build-dir", str(out / "b")], "inside the converted tree"),
        (["build", str(out), "--build-dir", str(tmp_path)], "holds the converted tree"),
        (["build", str(out), "--report", str(out / "r")], "inside"),
        (["build", str(out), "--method", "scons"], "unknown method 'scons'"),
        (["build", str(out), "--source", str(tmp_path / "nope")], "--source"),
        (["build", str(out)], "holds nothing to build"),
    ]
    for args, said in cases:
        done = runner.invoke(app, [*args, "--report", str(tmp_path / "r")]
                             if "--report" not in args else args)
        assert done.exit_code == 2, (args, done.output)
        assert said in done.output, (args, done.output)
    assert os.listdir(out) == []  # nothing written into the tree


def test_the_copy_in_the_build_folder_links_the_folders_its_build_files_name(tmp_path: Path):
    from migrator.build.run import _copy_tree, build_plan

    out = tmp_path / "prog-hip"
    (out / ".rocmigrate").mkdir(parents=True)
    (out / ".rocmigrate" / "cache.json").write_text("{}")
    (out / "Makefile").write_text("CFLAGS = -I../prog-cuda -I../missing\ninclude ../mk/x.mk\n")
    (tmp_path / "prog-cuda").mkdir()
    (tmp_path / "mk").mkdir()
    copy = tmp_path / "build" / "tree" / out.name
    _copy_tree(out, copy)
    assert sorted(os.listdir(copy.parent)) == ["mk", "prog-cuda", "prog-hip"]
    assert (copy.parent / "prog-cuda").resolve() == (tmp_path / "prog-cuda").resolve()
    assert not (copy / ".rocmigrate").exists() and (copy / "Makefile").is_file()
    assert build_plan("auto", out, ["Makefile"])[0] == "make"
    (out / "CMakeLists.txt").write_text("add_hecbench_benchmark(NAME x)\n")
    # a part of a larger project: the Makefile builds
    assert build_plan("auto", out, ["CMakeLists.txt", "Makefile"])[0] == "make"
    (out / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.21)\n"
                                        "PROJECT (x LANGUAGES HIP)\n")
    assert build_plan("auto", out, ["CMakeLists.txt", "Makefile"])[0] == "cmake"


def test_an_architecture_the_compiler_does_not_know_is_explained(tmp_path: Path):
    explainer, _ = _explainer(tmp_path, "x\n", None)
    error = explainer.explain(parse_errors(
        "clang-15: error: invalid target ID 'gfx942'; format is a processor name\n")[0])
    assert error.code is None
    assert error.explanation.startswith("gfx942 is not a target of the installed HIP's compiler "
                                        "(ROCm 5.2)")


def test_the_cmake_targets_make_says_failed():
    from migrator.build.run import _FAILED_TARGET

    log = ("make[2]: *** [CMakeFiles/kernels.dir/build.make:76: CMakeFiles/kernels.dir/src/k.hip.o]"
           " Error 1\nmake[2]: *** [lib/CMakeFiles/util.dir/build.make:76: lib/CMakeFiles/util.dir/"
           "u.hip.o] Error 1\nmake[1]: *** [CMakeFiles/Makefile2:85: CMakeFiles/kernels.dir/all] "
           "Error 2\nmake: *** [Makefile:91: all] Error 2\n")
    assert _FAILED_TARGET.findall(log) == ["kernels", "util"]


# --- targets, roots, configure options, missing libraries, the text summary -------------------

def test_make_goals_come_from_makes_own_database(tmp_path: Path):
    from conftest import require_tool
    from migrator.build.goals import DATABASE_ARGS, failed_rules, make_goals
    from migrator.toolchain.process import run_process

    make = require_tool("make")
    (tmp_path / "rules.mk").write_text("TOOLS = tool\n%: %.c\n\tcc -o $@ $<\n")
    (tmp_path / "Makefile").write_text(
        "include rules.mk\nPROGRAMS = a b\nall: $(PROGRAMS) group $(TOOLS)\n.PHONY: all group\n"
        "group: c d\nc d:\n\ttouch $@\na: a.o\n\tcc -o $@ $^\nb: b.c\n")
    for name in ("a.c", "b.c", "tool.c"):
        (tmp_path / name).write_text("int main(void) { return 0; }\n")

    def goals() -> list:
        done = run_process([make, *DATABASE_ARGS], tmp_path, 30.0)
        return [(goal.name, goal.phony, goal.default) for goal in make_goals(done.stdout)]

    # the phony `all` and `group` stand for their prerequisites; b and tool: pattern rules
    assert goals() == [("a", False, False), ("b", False, False), ("c", False, False),
                       ("d", False, False), ("tool", False, False)]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["Makefile", "a.c", "b.c",
                                                                "rules.mk", "tool.c"]
    # `all` with no recipe but not declared phony stands for its prerequisites too
    (tmp_path / "Makefile").write_text("all: a b\na: a.c\nb: b.c\n%: %.c\n\tcc -o $@ $<\n")
    assert [name for name, *_ in goals()] == ["a", "b"]
    # a default goal with a recipe of its own is the goal (the build's name: no file looked for)
    (tmp_path / "Makefile").write_text("all: a.c\n\tcc -o prog a.c\n")
    assert goals() == [("all", False, True)]
    assert make_goals("no database here") == []
    assert failed_rules("make: *** [Makefile:48: gpu_burn] Error 1\nmake[1]: *** [x.o] Error 2\n"
                        "make: *** No rule to make target 'compare.cu', needed by "
                        "'compare.fatbin'.\n") == {"gpu_burn", "x.o", "compare.fatbin"}


def test_sub_makes_come_from_the_dry_runs_output(tmp_path: Path):
    """A recipe's $(MAKE) -C sub: its folder, command-line targets and variables (a blank in a
    value escaped as make writes it) are read from make's own dry-run output; a goal whose
    recipes only run make is told from one that runs anything else."""
    from conftest import require_tool
    from migrator.build.goals import DATABASE_ARGS, only_runs_make, sub_makes
    from migrator.toolchain.process import run_process

    make = require_tool("make")
    (tmp_path / "sub").mkdir()
    (tmp_path / "Makefile").write_text(
        "both: sub.build\n\ttouch both\nsub.build:\n\t$(MAKE) -C sub prog NAME='a b'\n")
    (tmp_path / "sub" / "Makefile").write_text("prog:\n\techo $(NAME) > prog\n")
    done = run_process([make, *DATABASE_ARGS, "-B", "sub.build"], tmp_path, 30.0)
    found = sub_makes(done.stdout)
    assert [(Path(sub.folder).name, sub.goals, sub.variables) for sub in found] == [
        ("sub", ("prog",), ("NAME=a b",))]
    assert [goal.name for goal in found[0].goal_list()] == ["prog"]
    assert only_runs_make(done.stdout, make)
    both = run_process([make, *DATABASE_ARGS, "-B", "both"], tmp_path, 30.0)
    assert not only_runs_make(both.stdout, make)  # it touches a file of its own too
    assert sub_makes("no make output") == []


def test_build_roots_of_a_tree_without_a_top_level_build_file(tmp_path: Path):
    from migrator.build.roots import Root, find_roots, root_of

    files = {
        "mixbench-cuda/CMakeLists.txt": "project(mixbench-cuda LANGUAGES CUDA)\n",
        "mixbench-hip/CMakeLists.txt": "project(m LANGUAGES HIP)\nadd_subdirectory(lib)\n",
        "mixbench-hip/lib/CMakeLists.txt": "project(lib)\n",  # reached: no root
        "suite/prog/CMakeLists.txt": "add_suite_benchmark(prog)\n",  # no project(): no root
        "suite/prog/Makefile": "all:\n\thipcc main.hip\n",
        "posts/a/Makefile": "include ../common.mk\nall: x\nsub:\n\t$(MAKE) -C sub\n"
                            "other:\n\tcd ../b && $(MAKE) all\n",
        "posts/a/sub/Makefile": "all:\n",  # recursed into from posts/a
        "posts/b/Makefile": "all:\n",  # recursed into (cd ../b && $(MAKE))
        "posts/common.mk": "NVCC = hipcc\n",
        "posts/c/GNUmakefile": "all:\n", "posts/c/Makefile": "all:\n",  # make reads GNUmakefile
        "both/CMakeLists.txt": "project(both)\n", "both/Makefile": "all:\n",  # CMake wins
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    roots = find_roots(tmp_path, sorted(files))
    assert roots == [Root("both", "cmake"), Root("mixbench-cuda", "cmake"),
                     Root("mixbench-hip", "cmake"), Root("posts/a", "make"),
                     Root("posts/c", "make"), Root("suite/prog", "make")]
    assert root_of("mixbench-hip/lib/k.hip", roots) == Root("mixbench-hip", "cmake")
    assert root_of("series/x.cu", roots) is None
    assert root_of("x.cu", [Root("", "make")]) == Root("", "make")


@pytest.mark.parametrize("args, said", [
    (["-S", "/elsewhere"], "-S, -B"), (["-B/elsewhere"], "-S, -B"), (["-C", "init.cmake"], "-C"),
    (["-P", "script.cmake"], "scripts"), (["--preset=x"], "presets"),
    (["-DCMAKE_BINARY_DIR=/x"], "chooses where"),
    (["-DCMAKE_RUNTIME_OUTPUT_DIRECTORY_RELEASE:PATH=/x"], "chooses where"),
    (["-D"], "expected -DNAME=VALUE"), (["-D=1"], "expected -DNAME=VALUE"),
])
def test_cmake_arguments_that_would_move_the_build_are_refused(args, said):
    from migrator.build.arguments import ArgumentError, checked_cmake_args

    with pytest.raises(ArgumentError, match=re.escape(said)):
        checked_cmake_args(tuple(args))


def test_accepted_configure_options():
    from migrator.build.arguments import ArgumentError, checked_cmake_args, checked_make_vars

    accepted = ("-DMODEL=cuda", "-DX:BOOL=ON", "-UOLD", "-Wno-dev", "--log-level=VERBOSE",
                "-DCMAKE_BUILD_TYPE=Release")
    assert checked_cmake_args(accepted) == accepted
    assert checked_make_vars(("ROCM_PATH=/opt/rocm", "FLAGS=-O3 -g", "EMPTY=")) == (
        "ROCM_PATH=/opt/rocm", "FLAGS=-O3 -g", "EMPTY=")
    for bad, said in (("-C", "expected NAME=VALUE"), ("1X=2", "expected NAME=VALUE"),
                      ("MAKEFLAGS=-C /", "make's own"), ("CURDIR=/", "make's own")):
        with pytest.raises(ArgumentError, match=re.escape(said)):
            checked_make_vars((bad,))


def test_missing_libraries_are_named_from_headers_links_and_cmake(tmp_path: Path):
    from migrator.build.libraries import MissingLibraries

    log = ("gpu_burn-drv.cpp:63:10: fatal error: hipblas/hipblas.h: No such file or directory\n"
           "/b/k.hip:2:10: fatal error: 'hipfft/hipfft.h' file not found\n"
           "/b/k.hip:3:10: fatal error: 'project/own.h' file not found\n"
           "/usr/bin/ld: cannot find -lhipblas: No such file or directory\n"
           "/usr/bin/ld: cannot find -lonnx_proto: No such file or directory\n"
           "CMake Error at CMakeLists.txt:91 (message):\n"
           "  Could not find NCCL.  Set -DNCCL_HOME=/path/to/nccl\n\n"
           "CMake Error at CMakeLists.txt:9 (find_package):\n"
           "  Could not find a package configuration file provided by \"hipcub\" with any\n"
           "  of the following names:\n\n"
           "CMake Error at CMakeLists.txt:2 (project):\n  Could not find compiler set in "
           "environment variable CXX\n")
    rocm = tmp_path / "rocm"
    (rocm / "lib").mkdir(parents=True)
    (rocm / "lib" / "libhipfft.so").write_text("")  # installed, yet its header is not found
    (rocm / "lib" / "libhipblas.so.0").write_text("")  # a runtime only: nothing to build with
    missing = MissingLibraries(rocm)
    errors = parse_errors(log)
    missing.add("gpu_burn", errors[:1])
    missing.add("other", errors[1:])
    found = {entry["library"]: entry for entry in missing.result()}
    assert sorted(found) == ["hipblas", "hipcub", "hipfft", "onnx_proto", "rccl"]
    assert found["hipblas"]["targets"] == ["gpu_burn", "other"]
    assert found["hipblas"]["evidence"] == ["header <hipblas/hipblas.h> not found",
                                            "ld: cannot find -lhipblas"]
    assert found["hipblas"]["installed"] is False and found["hipfft"]["installed"] is True
    assert found["rccl"]["asked_as"] == ["NCCL"]
    assert found["rccl"]["evidence"] == ["CMake: Could not find NCCL"]
    assert found["hipcub"]["evidence"] == ["CMake: no package hipcub (find_package)"]
    assert found["onnx_proto"]["installed"] is None  # no ROCm library: not looked up


def test_a_linkers_section_is_no_file_and_a_missing_main_is_explained(tmp_path: Path):
    log = ("/usr/bin/ld: /usr/lib/x86_64-linux-gnu/Scrt1.o: in function `_start':\n"
           "(.text+0x17): undefined reference to `main'\n")
    [error] = parse_errors(log)
    assert (error.kind, error.file, error.line) == ("linker", None, None)
    explainer, _ = _explainer(tmp_path, "x\n", None)
    assert "defines main()" in explainer.explain(error, tmp_path).explanation
    assert error.output_file is None


def test_the_text_summary_explains_its_marks_and_prints_no_missing_line(tmp_path: Path):
    from migrator.build.errors import BuildError
    from migrator.build.run import BuildReport, Unit
    from migrator.output.build_text import render_summary

    approximate = BuildError("boom", "compiler", "/b/k.hip", 4, 1, output_file="k.hip",
                             source_file="k.cu", source_line=3, line_exact=False)
    no_line = BuildError("undefined reference to `f'", "linker", "x.o", output_file="x.o")
    report = BuildReport({}, {"hip_version": "5.2"}, {}, "make", None, units=[
        Unit("a", "goal", False, errors=[approximate, no_line], error_count=2),
        Unit("b", "goal", False, log_tail="something odd"), Unit("c", "goal", True)],
        roots=[{"path": ".", "method": "make", "log": "logs/make.log", "units": [0, 1, 2]}],
        translation_units={"total": 2, "with_errors": ["k.hip"]})
    text = render_summary(report, ["r/build.json"])
    assert "k.cu:3 (~): boom" in text and "x.o: undefined reference" in text
    assert "None" not in text
    assert "(~) the CUDA line is approximate" in text
    assert "| the end of the unit's log" in text
    assert text.rstrip().endswith("rocmigrate build: 1 of 3 targets built; 2 translation units, "
                                  "1 with errors (make, HIP 5.2); report: r/build.json")


def test_a_recipes_program_that_is_not_installed_is_an_error():
    log = ("make: pgcc: No such file or directory\n/bin/sh: 1: nvc++: not found\n"
           "bash: line 1: mpicxx: command not found\n"
           "make: *** [Makefile:30: laplace2d_omp] Error 127\n")
    assert [(error.kind, error.message.split(":")[0]) for error in parse_errors(log)] == [
        ("make", "pgcc"), ("make", "nvc++"), ("make", "mpicxx")]
    assert parse_errors(log)[0].message.endswith("(a recipe runs a program that is not installed)")


def test_a_library_that_keeps_its_folder_is_named_by_it_and_hips_own_headers_are_not():
    from migrator.build.libraries import MissingLibraries

    names = MissingLibraries(None)._library_of_header
    assert names("thrust/device_ptr.h").package == "rocthrust"
    assert names("nvtx3/nvToolsExtMem.h").package == "roctracer"  # nvToolsExt.h: rocmigrate_nvtx.h
    assert names("hipcub/hipcub.hpp").package == "hipcub"
    for header in ("cuda/atomic", "hip/hip_runtime.h", "hip/hip_bf16.h", "mpi.h", "own.h"):
        assert names(header) is None, header


def test_paths_a_recursive_make_prints_are_read_from_its_folder(tmp_path: Path):
    explainer, out = _explainer(tmp_path, "x\n", None)
    (out / "src").mkdir()
    log = (f"make[1]: Entering directory '{out}/src'\n"
           "common.h:12:10: fatal error: 'rccl/rccl.h' file not found\n"
           "../k.hip:1:1: error: boom\n"
           f"make[1]: Leaving directory '{out}/src'\n"
           "k.hip:1:1: error: again\n")
    errors = [explainer.explain(error, out) for error in parse_errors(log)]
    assert [(error.output_file, error.directory) for error in errors] == [
        ("src/common.h", f"{out}/src"), ("k.hip", f"{out}/src"), ("k.hip", None)]


def test_the_error_that_shows_a_missing_rocm_library_says_so(tmp_path: Path):
    from migrator.build.libraries import MissingLibraries

    [header, other] = parse_errors("/b/k.hip:2:10: fatal error: 'hipblas/hipblas.h' file not "
                                   "found\n/b/k.hip:3:10: fatal error: 'mpi.h' file not found\n")
    MissingLibraries(tmp_path).add("k", [header, other])
    assert header.explanation == "hipblas is a ROCm library the installed HIP does not have"
    assert other.explanation is None
