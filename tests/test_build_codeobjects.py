"""Issue 26 item 4: nvcc's -fatbin / -cubin / -ptx steps (kernel files a program loads at run
time with cuModuleLoad) convert into hipcc --genco steps that build, in a Makefile (MKF004's
table, MKF005 marker) and in a CMake custom command (CMK019 runs hipcc, CMK016/CMK017 its
options): fixtures/build_projects/make_code_object and cmake_code_object, built with
`rocmigrate build` (make / cmake, Debian's hipcc, HIP_PLATFORM=amd; compile and link only)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ROOT
from migrator.buildfiles import cmake
from test_build_projects import _build, _convert, _units

pytestmark = pytest.mark.slow
PROJECTS = ROOT / "fixtures" / "build_projects"
_BUNDLE = b"__CLANG_OFFLOAD_BUNDLE__"  # what hipcc --genco writes: one ELF per --offload-arch


def _commands(text: str) -> str:
    """A Makefile's lines without its comments (the markers quote the nvcc options)."""
    return "\n".join(line for line in text.splitlines() if not line.startswith("#"))


def _only(build: Path, name: str) -> Path:
    found = [path for path in build.rglob(name) if path.is_file()]
    assert len(found) == 1, (name, found)
    return found[0]


def _assert_code_object(path: Path) -> None:
    """An AMD code object holding the kernel the program asks for by name."""
    data = path.read_bytes()
    assert data.startswith(_BUNDLE) and b"amdgcn-amd-amdhsa--gfx90a" in data, path
    assert b"scale" in data


def _assert_loads(program: Path, source: Path, file: str) -> None:
    """The host program loads ``file`` and the kernel by name through HIP's module API."""
    text = source.read_text()
    assert "hipModuleLoad(&module, file)" in text and '"scale"' in text
    data = program.read_bytes()  # the name as a C string, HIP's function imported
    assert f"{file}\0".encode() in data and b"hipModuleLoad\0" in data


@pytest.mark.parametrize("rename", [False, True], ids=["cu", "rename-ext"])
def test_a_makefile_fatbin_and_ptx_step_builds_code_objects(rename: bool, tmp_path: Path):
    out = tmp_path / "out"
    _convert(PROJECTS / "make_code_object", out, "--rocm", "5.2", "--offload-arch", "gfx90a",
             *(["--rename-ext"] if rename else []))
    makefile = (out / "Makefile").read_text()
    commands = _commands(makefile)
    assert commands.count("$(NVCC) $(NVCCFLAGS) --genco $< -o $@") == 2
    assert "-fatbin" not in commands and "-ptx" not in commands and "nvcc" not in commands
    assert "# rocmigrate MKF005: -fatbin: no fatbin on AMD: --genco" in makefile
    code, document, _ = _build(out, tmp_path, "--build-dir", str(tmp_path / "b"))
    assert code == 0 and document["method"] == "make", document
    for name in ("kernels.fatbin", "kernels.ptx"):  # both are code objects now
        _assert_code_object(_only(tmp_path / "b", name))
    _assert_loads(_only(tmp_path / "b", "app"), out / "main.cpp", "kernels.fatbin")


def test_without_genco_the_fatbin_step_does_not_build(tmp_path: Path):
    out = tmp_path / "out"
    _convert(PROJECTS / "make_code_object", out, "--rocm", "5.2", "--offload-arch", "gfx90a",
             "--ignore", "MKF005")
    assert "-fatbin $< -o $@" in (out / "Makefile").read_text()  # hipcc rejects it
    code, document, _ = _build(out, tmp_path)
    assert code == 1 and not all(_units(document).values()), document


@pytest.mark.parametrize("rename", [False, True], ids=["cu", "rename-ext"])
def test_a_cmake_custom_command_running_nvcc_builds_a_code_object(rename: bool,
                                                                  tmp_path: Path):
    out = tmp_path / "out"
    _convert(PROJECTS / "cmake_code_object", out, "--rocm", "5.2", "--offload-arch", "gfx90a",
             *(["--rename-ext"] if rename else []))
    script = cmake.read((out / "CMakeLists.txt").read_bytes())
    custom = next(command for command in script.commands
                  if command.lower == "add_custom_command")
    words = custom.values()
    assert words[words.index("COMMAND") + 1] == "${HIP_HIPCC_EXECUTABLE}"
    values = [value for command in script.commands for value in command.values()]
    assert "--genco" in values and "--offload-arch=gfx90a" in values
    assert not [value for value in values if "CUDAToolkit" in value
                or value.startswith(("CUDA::", "-fatbin", "-gencode", "-arch"))]
    code, document, _ = _build(out, tmp_path, "--build-dir", str(tmp_path / "b"))
    assert code == 0 and document["method"] == "cmake", document
    units = _units(document)
    assert units.get("loader") is True and all(units.values()), units
    _assert_code_object(_only(tmp_path / "b", "kernels.fatbin"))
    _assert_loads(_only(tmp_path / "b", "loader"), out / "main.cpp", "kernels.fatbin")


def test_without_cmk019_the_custom_command_runs_no_compiler(tmp_path: Path):
    """nvcc's variable is empty once the file finds hip, not CUDAToolkit: CMake then writes a
    custom command that runs nothing, and the program builds without the file it loads."""
    out = tmp_path / "out"
    _convert(PROJECTS / "cmake_code_object", out, "--rocm", "5.2", "--offload-arch", "gfx90a",
             "--ignore", "CMK019")
    code, document, _ = _build(out, tmp_path, "--build-dir", str(tmp_path / "b"))
    assert code == 0, document
    assert _only(tmp_path / "b", "loader") and not list((tmp_path / "b").rglob("kernels.fatbin"))
