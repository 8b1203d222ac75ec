"""`rocmigrate build` on real projects with the real hipcc, cmake and make (fixtures/build/; CI
installs all three: nothing here skips). Each build leaves the tree it builds unchanged."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import ROOT
from migrator.buildfiles import cmake
from migrator.cli import _register, app
from migrator.toolchain.compilers import installed_hip, rocm_root
from migrator.versions import format_version

_register()
pytestmark = pytest.mark.slow
FIXTURES = ROOT / "fixtures" / "build"


def _snapshot(root: Path) -> dict[str, str]:
    found = {}
    for folder, _, files in os.walk(root):
        for name in files:
            path = Path(folder) / name
            found[path.relative_to(root).as_posix()] = hashlib.sha256(
                path.read_bytes()).hexdigest()
    return found


def _build(tree: Path, tmp_path: Path, *args: str) -> tuple[int, dict, str]:
    report = tmp_path / "report"
    before = _snapshot(tree)
    done = CliRunner().invoke(app, ["build", str(tree), "--report", str(report), "-j", "2",
                                    *args])
    assert done.exit_code in (0, 1), done.output
    assert _snapshot(tree) == before  # the tree is only read
    assert (report / "build.md").read_text().startswith(f"# rocmigrate build: `{tree.resolve()}`")
    return done.exit_code, json.loads((report / "build.json").read_text()), done.output


def _convert(source: Path, out: Path, *args: str) -> None:
    done = CliRunner().invoke(app, ["convert", str(source), "-o", str(out), *args])
    assert done.exit_code == 0, done.output


def _units(document: dict) -> dict[str, bool]:
    return {unit["name"]: unit["built"] for unit in document["units"]}


def test_a_cmake_project_configures_and_builds_each_target(tmp_path: Path):
    code, document, _ = _build(FIXTURES / "cmake", tmp_path, "--build-dir",
                               str(tmp_path / "b"))
    assert code == 0 and document["method"] == "cmake", document
    assert _units(document) == {"configure": True, "kernels": True, "saxpy": True}
    assert (tmp_path / "b" / "cmake").is_dir()  # a named build folder is kept
    hip = installed_hip()
    plain = (rocm_root(hip.hipcc) / "lib" / "cmake" / "hip-lang").is_dir()
    shimmed = [note for note in document["notices"] if "ROCm root made in the build folder" in note]
    assert bool(shimmed) is not plain  # said when (and only when) it was needed
    assert document["schema_version"] == 1 and document["summary"]["ok"] is True


def test_a_failing_cmake_target_gets_its_errors_and_its_dependants_fail(tmp_path: Path):
    tree = tmp_path / "tree"
    shutil.copytree(FIXTURES / "cmake", tree)
    kernels = tree / "src" / "kernels.hip"
    kernels.write_text(kernels.read_text().replace("y[i] = a * x[i] + y[i];",
                                                   "y[i] = a * x[i] + undeclared_name;"))
    code, document, _ = _build(tree, tmp_path)
    assert code == 1
    assert _units(document) == {"configure": True, "kernels": False, "saxpy": False}
    failed = next(unit for unit in document["units"] if unit["name"] == "kernels")
    assert failed["errors"][0]["output_file"] == "src/kernels.hip"
    assert failed["errors"][0]["line"] == 6
    assert "undeclared_name" in failed["errors"][0]["message"]


def test_a_makefile_builds_on_a_copy_in_the_build_folder(tmp_path: Path):
    code, document, _ = _build(FIXTURES / "make", tmp_path, "--build-dir", str(tmp_path / "b"))
    assert code == 0 and document["method"] == "make", document
    assert _units(document) == {"reduce": True}  # the goal of its Makefile
    assert (tmp_path / "b" / "tree" / "make" / "reduce").is_file()  # the program, built there


def test_files_without_a_build_system_compile_one_by_one(tmp_path: Path):
    code, document, output = _build(FIXTURES / "plain", tmp_path)
    assert code == 0 and document["method"] == "files"
    # include/common.h is found; plain_cxx.cpp holds no HIP code
    assert _units(document) == {"src/fill.hip": True, "src/host.cpp": True}
    assert "src/fill.hip" in output and document["build_dir"] is None
    assert document["notices"] == []  # not a rocmigrate output: no target to compare


def test_the_time_limit_per_compile(tmp_path: Path):
    code, document, _ = _build(FIXTURES / "plain", tmp_path, "--timeout", "0.05")
    assert code == 1
    assert all(unit["timed_out"] and not unit["built"] for unit in document["units"])


def test_compile_commands_give_the_defines_and_include_folders(tmp_path: Path):
    source = tmp_path / "src"
    shutil.copytree(FIXTURES / "compile_db", source)
    (source / "compile_commands.json").write_text(json.dumps([{
        "directory": str(source), "file": "src/kernel.cu",
        "arguments": ["nvcc", "-DWIDTH=64", "-Ithird_party/inc", "-arch=sm_80", "-c",
                      "src/kernel.cu", "-o", "kernel.o"]}]))
    out = tmp_path / "out"
    _convert(source, out, "--rocm", "auto")
    code, document, _ = _build(out, tmp_path, "--source", str(source))
    assert code == 0, document
    (out / "compile_commands.json").unlink()  # the converted tree's copy of it
    code, document, _ = _build(out, tmp_path)  # and no --source: no database at all
    assert code == 1
    messages = [error["message"] for error in document["units"][0]["errors"]]
    assert any("WIDTH" in message for message in messages), messages


def test_errors_map_to_the_cuda_line_and_the_marker_that_explains_them(tmp_path: Path):
    source = FIXTURES / "errors" / "src"
    out = tmp_path / "out"
    _convert(source, out, "--rocm", "auto")  # the installed HIP's release
    code, document, output = _build(out, tmp_path, "--source", str(source))
    assert code == 1 and document["notices"] == []
    units = {unit["name"]: unit for unit in document["units"]}
    assert units["shuffle.cu"]["built"] and not units["graph.cu"]["built"]
    first = units["graph.cu"]["errors"][0]
    assert (first["source_file"], first["source_line"], first["line_exact"]) == \
        ("graph.cu", 12, True)
    assert "cudaGraphInstantiateWithParams" in first["message"]
    assert first["code"] == "API002" and first["explanation"].startswith("marked by rocmigrate")
    assert "graph.cu:12: use of undeclared identifier 'cudaGraphInstantiateWithParams'" in output
    assert document["summary"]["codes"]["API002"] >= 1


def test_a_tree_converted_for_a_newer_rocm_is_said_up_front_and_its_errors_explained(
        tmp_path: Path):
    hip = installed_hip()
    assert hip.version[:2] < (6, 2), "these errors need a HIP older than 6.2 (CI: Debian's 5.2)"
    source = FIXTURES / "errors" / "src"
    out = tmp_path / "out"
    _convert(source, out, "--rocm", "6.4")
    code, document, output = _build(out, tmp_path, "--source", str(source))
    installed = format_version(hip.version)
    assert code == 1
    assert document["tree"]["converted_for"] == "6.4"
    assert document["notices"][0].endswith(
        f"was converted for ROCm 6.4, newer than the installed HIP {hip.version_text} (ROCm "
        f"{installed}): what ROCm {installed} lacks will not compile; convert again with "
        f"--rocm auto (or --rocm {installed})")
    assert output.index("was converted for ROCm 6.4") < output.index("FAILED")
    units = {unit["name"]: unit for unit in document["units"]}
    shuffle = units["shuffle.cu"]["errors"][0]
    assert (shuffle["source_file"], shuffle["source_line"], shuffle["code"]) == \
        ("shuffle.cu", 6, "WRP001")
    graph = units["graph.cu"]["errors"][0]
    assert (graph["source_line"], graph["code"]) == (12, "API002")
    assert "from ROCm 6.2" in graph["explanation"]


# --- CUDA CMake projects converted and built (fixtures/build_projects/; the CMK rules) ---

CMAKE_PROJECTS = ROOT / "fixtures" / "build_projects"
_PROJECT_UNITS = {
    "cmake_rdc": {"configure", "vecmath", "saxpy"},
    "findcuda_legacy": {"configure", "histo", "histogram"},
    "host_models": {"configure", "stream", "devices", "probe", "jit"},
    "mixed_libraries": {"configure", "core", "gpu", "stats"},
    "registered_models": {"configure", "gpu-stream"},
    "searched_libraries": {"configure", "randoms"},
}


@pytest.mark.parametrize("rename", [False, True], ids=["cu", "rename-ext"])
@pytest.mark.parametrize("name", sorted(_PROJECT_UNITS))
def test_a_converted_cuda_cmake_project_builds_with_hip(name: str, rename: bool,
                                                        tmp_path: Path):
    out = tmp_path / "out"
    _convert(CMAKE_PROJECTS / name, out, "--rocm", "5.2", "--offload-arch", "gfx90a",
             *(["--rename-ext"] if rename else []))
    script = cmake.read((out / "CMakeLists.txt").read_bytes())
    left = [arg.value for command in script.commands if command.lower != "message"
            for arg in command.args if "CUDA" in arg.value or "cuda" in arg.value]
    assert left == []  # nothing CUDA's is left in the commands (messages are text)
    assert any(arg.value.endswith(".hip") for command in script.commands
               for arg in command.args) is rename
    code, document, _ = _build(out, tmp_path, "--build-dir", str(tmp_path / "b"))
    assert code == 0 and document["method"] == "cmake", document
    assert _units(document) == dict.fromkeys(_PROJECT_UNITS[name], True)


def test_the_roc_libraries_project_builds_with_roc(tmp_path: Path):
    out = tmp_path / "out"
    _convert(CMAKE_PROJECTS / "mixed_libraries", out, "--rocm", "5.2", "--offload-arch",
             "gfx90a", "--roc")
    text = (out / "CMakeLists.txt").read_text()
    assert "find_package(rocrand REQUIRED)" in text and "roc::rocsparse" in text
    code, document, _ = _build(out, tmp_path)
    assert code == 0 and _units(document) == dict.fromkeys(_PROJECT_UNITS["mixed_libraries"],
                                                          True), document


@pytest.mark.parametrize("name", sorted(_PROJECT_UNITS))
def test_without_the_cmake_rules_the_converted_project_does_not_build(name: str,
                                                                      tmp_path: Path):
    out = tmp_path / "out"
    _convert(CMAKE_PROJECTS / name, out, "--rocm", "5.2", "--offload-arch", "gfx90a",
             "--ignore", "CMK")
    code, document, _ = _build(out, tmp_path)
    assert code == 1
    assert not all(_units(document).values())


def test_a_makefile_that_reads_a_folder_beside_the_tree(tmp_path: Path):
    """HeCBench's layout: the Makefile includes ../shared; the per-program CMakeLists.txt is part
    of the suite's project (no project()), so the Makefile builds it."""
    program = tmp_path / "suite" / "program"
    shutil.copytree(FIXTURES / "make", program)
    (tmp_path / "suite" / "shared").mkdir()
    (tmp_path / "suite" / "shared" / "scale.h").write_text("#pragma once\n#define SCALE 2\n")
    makefile = program / "Makefile"
    makefile.write_text(makefile.read_text().replace("-Iinclude", "-Iinclude -I../shared"))
    main = program / "main.hip"
    main.write_text('#include "scale.h"\n' + main.read_text().replace("256 * sizeof",
                                                                        "SCALE * 128 * sizeof"))
    (program / "CMakeLists.txt").write_text("add_suite_benchmark(NAME program)\n")
    code, document, _ = _build(program, tmp_path)
    assert code == 0 and document["method"] == "make", document


# --- a CUDA Makefile project converted and built (fixtures/build_projects/make_rdc; MKF rules) ---

@pytest.mark.parametrize("rename", [False, True], ids=["cu", "rename-ext"])
def test_a_converted_cuda_makefile_project_builds_with_hip(rename: bool, tmp_path: Path):
    """nvcc with -gencode, -Xcompiler, --expt-relaxed-constexpr, -lineinfo and CUDA's paths,
    separable compilation (-dc) into a static library of device functions other files' kernels
    call, a C++ file: the converted Makefile builds the program with Debian's hipcc."""
    out = tmp_path / "out"
    _convert(CMAKE_PROJECTS / "make_rdc", out, "--rocm", "5.2", "--offload-arch", "gfx90a",
             *(["--rename-ext"] if rename else []))
    makefile = "\n".join(line for line in (out / "Makefile").read_text().splitlines()
                         if not line.startswith("#"))
    assert "nvcc" not in makefile and "-gencode" not in makefile and "-Xcompiler" not in makefile
    assert ("src/%.hip" in makefile) is rename
    code, document, _ = _build(out, tmp_path, "--build-dir", str(tmp_path / "b"))
    assert code == 0 and document["method"] == "make", document
    assert (tmp_path / "b" / "tree" / "saxpy").is_file() or any(
        path.name == "saxpy" for path in (tmp_path / "b").rglob("saxpy"))


def test_without_the_make_rules_the_converted_makefile_project_does_not_build(tmp_path: Path):
    out = tmp_path / "out"
    _convert(CMAKE_PROJECTS / "make_rdc", out, "--rocm", "5.2", "--offload-arch", "gfx90a",
             "--ignore", "MKF011")
    code, document, _ = _build(out, tmp_path)
    assert code == 1  # the link of the -fgpu-rdc objects lacks -fgpu-rdc
    assert any("__hip_fatbin" in error["message"] for unit in document["units"]
               for error in unit["errors"]), document


@pytest.mark.parametrize(("ignored", "failing"), [
    ("CMK018", {"devices", "probe", "stream"}),  # C++ sources without hip::host
    ("CMK007", {"stream"}),  # the .cu a function adds is compiled by no language
])
def test_host_targets_and_sources_added_in_a_function_need_their_rules(
        ignored: str, failing: set[str], tmp_path: Path):
    out = tmp_path / "out"
    _convert(CMAKE_PROJECTS / "host_models", out, "--rocm", "5.2", "--offload-arch", "gfx90a",
             "--ignore", ignored)
    code, document, _ = _build(out, tmp_path)
    assert code == 1
    assert {name for name, built in _units(document).items() if not built} == failing


@pytest.mark.parametrize(("ignored", "failing"), [
    ("CMK007", {"gpu-stream"}),  # the .cu an included macro lists: compiled by no language
    ("CMK010", {"gpu-stream"}),  # register_link_library("nvidia-ml"): cannot find -lnvidia-ml
])
def test_sources_and_libraries_a_macro_of_another_file_registers_need_their_rules(
        ignored: str, failing: set[str], tmp_path: Path):
    out = tmp_path / "out"
    _convert(CMAKE_PROJECTS / "registered_models", out, "--rocm", "5.2", "--offload-arch",
             "gfx90a", "--ignore", ignored)
    code, document, _ = _build(out, tmp_path)
    assert code == 1
    assert {name for name, built in _units(document).items() if not built} == failing


def test_a_host_only_makefile_that_compiles_kernels_at_run_time_builds_with_g_plus_plus(
        tmp_path: Path):
    """g++ compiles and links a tool that calls the runtime and NVRTC (no nvcc in the file;
    the libraries are a list linked as $(LIBRARIES:%=-l%)): before ROCm 6.0 hiprtc is part of
    amdhip64 (Debian's HIP 5.2 has no libhiprtc), so the converted link names amdhip64."""
    out = tmp_path / "out"
    _convert(CMAKE_PROJECTS / "make_runtime_compiler", out, "--rocm", "5.2")
    makefile = (out / "Makefile").read_text()
    assert "LIBRARIES := amdhip64 amdhip64" in makefile and "-D__HIP_PLATFORM_AMD__" in makefile
    code, document, _ = _build(out, tmp_path)
    assert code == 0 and document["method"] == "make", document
    newer = tmp_path / "newer"
    _convert(CMAKE_PROJECTS / "make_runtime_compiler", newer, "--rocm", "6.4")
    assert "LIBRARIES := hiprtc amdhip64" in (newer / "Makefile").read_text()


def test_without_the_platform_define_the_host_only_makefile_does_not_build(tmp_path: Path):
    out = tmp_path / "out"
    _convert(CMAKE_PROJECTS / "make_runtime_compiler", out, "--rocm", "5.2", "--ignore",
             "MKF012")
    code, document, _ = _build(out, tmp_path)
    assert code == 1
    assert any("__HIP_PLATFORM_AMD__" in error["message"] for unit in document["units"]
               for error in unit["errors"]), document


def test_a_project_that_searches_a_cuda_library_itself_finds_the_hip_one(tmp_path: Path):
    """find_path(NAMES curand.h) / find_library(NAMES curand) (as nccl-tests finds NCCL):
    without CMK009's search names the configure stops at the project's own error."""
    out = tmp_path / "out"
    _convert(CMAKE_PROJECTS / "searched_libraries", out, "--rocm", "5.2", "--offload-arch",
             "gfx90a", "--ignore", "CMK009")
    code, document, _ = _build(out, tmp_path)
    assert code == 1 and _units(document)["configure"] is False


@pytest.mark.parametrize(("ignored", "built"), [("", True), ("MKF012", False)])
def test_objects_of_make_s_built_in_rule_get_the_platform_define(ignored: str, built: bool,
                                                                 tmp_path: Path):
    """main.o comes from make's built-in rule (no recipe in the file): CPPFLAGS carries HIP's
    platform define, else g++ stops at HIP's #error."""
    out = tmp_path / "out"
    _convert(CMAKE_PROJECTS / "make_built_in_rules", out, "--rocm", "5.2", "--offload-arch",
             "gfx90a", *(["--ignore", ignored] if ignored else []))
    code, document, _ = _build(out, tmp_path)
    assert (code == 0) is built, document
