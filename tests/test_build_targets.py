"""`rocmigrate build` counts targets (make goals, CMake targets) and translation units, builds
every build root of a tree without a top-level build file, keeps each build's log in the report
folder, names missing libraries and the targets that need them, and passes configure options
(--cmake-arg, --make-var): with the real hipcc, cmake and make on fixtures/build/{goals, roots,
missing_package}."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import ROOT, require_tool
from migrator.cli import _register, app
from migrator.toolchain.compilers import installed_hip, rocm_root

_register()
pytestmark = pytest.mark.slow
FIXTURES = ROOT / "fixtures" / "build"


@pytest.fixture(autouse=True)
def _tools():
    for tool in ("hipcc", "make", "cmake"):
        require_tool(tool)


def _build(tree: Path, report: Path, *args: str) -> tuple[int, dict, str]:
    done = CliRunner().invoke(app, ["build", str(tree), "--report", str(report), "-j", "2",
                                    *args])
    assert done.exit_code in (0, 1), done.output
    return done.exit_code, json.loads((report / "build.json").read_text()), done.output


def _has(library: str) -> bool:
    root = rocm_root(installed_hip().hipcc)
    return (root / "include" / library).is_dir() or any(root.glob(f"lib*/**/lib{library}.so*"))


def test_make_goals_are_counted_and_each_keeps_its_own_errors_and_log(tmp_path: Path):
    report = tmp_path / "report"
    code, document, output = _build(FIXTURES / "goals", report)
    assert code == 1 and document["method"] == "make"
    units = {unit["name"]: unit for unit in document["units"]}
    # the phony default goal `all` stands for its prerequisites, in the Makefile's order
    assert list(units) == ["alpha", "beta", "gamma", "delta"]
    assert [unit["kind"] for unit in units.values()] == ["goal"] * 4
    assert units["alpha"]["built"] and not units["beta"]["built"]
    summary = document["summary"]
    built = 1 + _has("hipblas") + _has("rccl")
    assert (summary["targets"], summary["targets_built"]) == (4, built)
    assert f"{built} of 4 targets built" in output
    # beta's errors are its own, in the compiler's order (the first undeclared name first)
    beta = units["beta"]["errors"]
    assert [error["line"] for error in beta] == [3, 5] and "first_undeclared" in beta[0]["message"]
    assert all(error["output_file"] == "beta.hip" for error in beta)
    assert units["alpha"]["errors"] == []
    # translation units: 3 of them (.hip), beta's (and gamma's without hipBLAS) have errors
    assert summary["translation_units"] == 3
    assert "beta.hip" in document["translation_units_with_errors"]
    # the full log is kept in the report folder and named in build.json and build.md
    assert document["logs"] == ["logs/make.log"] and units["beta"]["log"] == "logs/make.log"
    log = (report / "logs" / "make.log").read_text()
    assert "second_undeclared" in log and "make -k -j 2" in log
    assert "logs/make.log" in (report / "build.md").read_text()
    assert document["roots"] == [{"path": ".", "method": "make", "log": "logs/make.log",
                                  "configured": None, "targets": 4, "built": built,
                                  "units": ["alpha", "beta", "gamma", "delta"]}]


def test_goals_that_only_run_make_count_as_the_goals_of_those_makes(tmp_path: Path):
    """fixtures/build/recursive (nccl-tests' layout): the default goal runs make in src/,
    whose `build` runs make in os/; the goals are the library and the two programs, named
    from the root's folder, and the failed one is built alone for its own errors."""
    report = tmp_path / "report"
    code, document, output = _build(FIXTURES / "recursive", report)
    assert code == 1
    units = {unit["name"]: unit for unit in document["units"]}
    assert list(units) == ["build/os/libos.a", "build/good", "build/bad"]
    assert [unit["built"] for unit in units.values()] == [True, True, False]
    assert (document["summary"]["targets"], document["summary"]["targets_built"]) == (3, 2)
    assert "2 of 3 targets built" in output
    bad = units["build/bad"]
    assert [(error["output_file"], error["line"]) for error in bad["errors"]] == [
        ("src/bad.hip", 4)]
    assert "bad_undeclared" in bad["errors"][0]["message"]
    assert bad["command"].startswith("HIP_PLATFORM=amd ") and " -C src " in bad["command"]
    assert units["build/good"]["errors"] == units["build/os/libos.a"]["errors"] == []
    log = (report / bad["log"]).read_text()
    assert "bad_undeclared" in log and "src.build" in log


def test_missing_libraries_are_named_with_the_targets_that_need_them(tmp_path: Path):
    if _has("hipblas") and _has("rccl"):
        pytest.skip("the installed ROCm has hipBLAS and RCCL: nothing is missing")
    report = tmp_path / "report"
    _, document, output = _build(FIXTURES / "goals", report)
    missing = {entry["library"]: entry for entry in document["missing_libraries"]}
    if not _has("hipblas"):
        hipblas = missing["hipblas"]
        assert hipblas["targets"] == ["gamma"] and hipblas["installed"] is False
        assert hipblas["evidence"] == ["header <hipblas/hipblas.h> not found"]
        assert "hipblas (for hipblas/hipblas.h): not in the installed HIP" in output
    if not _has("rccl"):
        rccl = missing["rccl"]
        assert rccl["targets"] == ["delta"] and rccl["evidence"] == ["ld: cannot find -lrccl"]
    assert "missing libraries" in output
    markdown = (report / "build.md").read_text()
    assert "## Missing libraries" in markdown and "`gamma`" in markdown


def test_make_variables_go_on_makes_command_line(tmp_path: Path):
    _, document, _ = _build(FIXTURES / "goals", tmp_path / "report", "--make-var", "SCALE=3")
    assert document["settings"]["make_vars"] == ["SCALE=3"]
    log = (tmp_path / "report" / "logs" / "make.log").read_text()
    assert "-DSCALE=3 -c alpha.hip" in log and "SCALE=3 alpha" in log


def test_every_build_root_of_a_tree_without_a_top_level_build_file(tmp_path: Path):
    """cmake_app/ (project(), adds lib/, generates a header at configure time, needs
    -DMODEL=hip) and make_app/ (includes common.mk, recurses into sub/) are the roots; loose/
    lies under none and is compiled file by file."""
    report = tmp_path / "report"
    code, document, output = _build(FIXTURES / "roots", report, "--cmake-arg", "-DMODEL=hip")
    assert code == 0, output
    assert document["method"] == "roots"
    roots = {root["path"]: root for root in document["roots"]}
    assert list(roots) == ["cmake_app", "make_app", "(file by file)"]
    assert (roots["cmake_app"]["method"], roots["cmake_app"]["configured"],
            roots["cmake_app"]["targets"], roots["cmake_app"]["built"]) == ("cmake", True, 2, 2)
    # sub-tool only runs make in sub/: it counts as that make's goal
    assert roots["make_app"]["units"] == ["tool", "sub/helper"]
    assert roots["(file by file)"]["units"] == ["loose/extra.hip"]
    assert document["summary"]["targets"] == document["summary"]["targets_built"] == 5
    for root in roots.values():  # each build's log, apart
        assert (report / root["log"]).is_file()
    assert len({root["log"] for root in roots.values()}) == 3
    assert "cmake_app (cmake): 2 of 2 targets built" in output
    assert "5 of 5 targets built in 3 roots" in output
    units = [(unit["root"], unit["name"]) for unit in document["units"]]
    assert ("cmake_app", "app") in units and ("make_app", "tool") in units


def test_a_cmake_root_needs_its_configure_options(tmp_path: Path):
    report = tmp_path / "report"
    code, document, output = _build(FIXTURES / "roots", report)
    assert code == 1
    cmake_root = next(root for root in document["roots"] if root["path"] == "cmake_app")
    assert cmake_root["configured"] is False and cmake_root["targets"] == 0
    configure = next(unit for unit in document["units"] if unit["root"] == "cmake_app")
    assert "MODEL is unspecified" in configure["errors"][0]["message"]
    assert "MODEL is unspecified" in (report / cmake_root["log"]).read_text()
    assert "; 1 CMake configure step failed (targets not known)" in output
    assert "(1 CMake configure step failed: targets not known)" in (report / "build.md").read_text()


def test_a_missing_cmake_package_and_a_projects_own_search_are_named(tmp_path: Path):
    if _has("hipblas"):
        pytest.skip("the installed ROCm has hipBLAS")
    code, document, output = _build(FIXTURES / "missing_package", tmp_path / "r1")
    assert code == 1
    [entry] = document["missing_libraries"]
    assert entry["library"] == "hipblas" and entry["targets"] == ["configure"]
    assert entry["evidence"] == ["CMake: no package hipblas (find_package)"]
    code, document, output = _build(FIXTURES / "missing_package", tmp_path / "r2",
                                    "--cmake-arg", "-DOWN_SEARCH=ON")
    [entry] = document["missing_libraries"]
    assert (entry["library"], entry["asked_as"]) == ("rccl", ["NCCL"])
    assert entry["evidence"] == ["CMake: Could not find NCCL"]
    assert "rccl (for NCCL): not in the installed HIP" in output


def test_refused_configure_options_stop_before_anything_runs(tmp_path: Path):
    tree = tmp_path / "tree"
    shutil.copytree(FIXTURES / "missing_package", tree)
    for args, said in ((["--cmake-arg", "-B/elsewhere"], "-S, -B"),
                       (["--cmake-arg", "-DCMAKE_RUNTIME_OUTPUT_DIRECTORY=/x"],
                        "chooses where CMake reads or writes"),
                       (["--make-var", "MAKEFLAGS=-C /"], "make's own variable"),
                       (["--make-var", "-C"], "expected NAME=VALUE")):
        done = CliRunner().invoke(app, ["build", str(tree), "--report", str(tmp_path / "r"),
                                        *args])
        assert done.exit_code == 2 and said in done.output, (args, done.output)
    assert not (tmp_path / "r").exists()


def test_a_cmake_target_that_failed_with_no_errors_of_its_own_is_built_alone(tmp_path: Path):
    """saxpy links kernels, whose source does not compile: saxpy's errors are read from its own
    build (`--target saxpy`), in the root's log; a later run's report drops the stale log."""
    tree = tmp_path / "tree"
    shutil.copytree(FIXTURES / "cmake", tree)
    kernels = tree / "src" / "kernels.hip"
    kernels.write_text(kernels.read_text().replace("y[i] = a * x[i] + y[i];",
                                                   "y[i] = a * x[i] + undeclared_name;"))
    report = tmp_path / "report"
    code, document, output = _build(tree, report)
    assert code == 1
    units = {unit["name"]: unit for unit in document["units"]}
    saxpy = units["saxpy"]
    assert not saxpy["built"] and "--target saxpy" in saxpy["command"]
    assert "undeclared_name" in saxpy["errors"][0]["message"]
    log = (report / "logs" / "cmake.log").read_text()
    assert "--target saxpy" in log and log.index("$ ") < log.index("--build")
    _build(FIXTURES / "goals", report)
    assert sorted(path.name for path in (report / "logs").iterdir()) == ["make.log"]


def test_a_makefile_make_cannot_read_is_one_unit_with_makes_error(tmp_path: Path):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "Makefile").write_text("all: prog\nprog:\n    echo spaces, not a tab\n")
    code, document, output = _build(tree, tmp_path / "report")
    assert code == 1
    [unit] = document["units"]
    assert (unit["name"], unit["kind"], unit["built"]) == ("Makefile", "make", False)
    assert unit["errors"][0]["message"] == "missing separator"
    assert (unit["errors"][0]["file"], unit["errors"][0]["line"]) == ("Makefile", 3)
