"""Issue 25, "Also noted": a C++ library header that only tests ``__CUDACC__`` is left
byte-identical, a script named ``.cu`` is refused, and ``report`` does not count a git
submodule's files as the project's own."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import require, require_path
from migrator.cli import _register, app
from migrator.convert import convert_bytes
from migrator.lint import lint_bytes
from migrator.report import ReportOptions, build_report
from migrator.settings import Settings
from migrator.versions import parse_version

_register()
runner = CliRunner()

SETTINGS = [Settings(), Settings(rocm=parse_version("5.2"))]

# -- a library header's test of the CUDA compiler is no CUDA code ----------------------------

LIBRARY_HEADER = b"""#ifndef _GLIBCXX_BITS_STD_ABS_H
#define _GLIBCXX_BITS_STD_ABS_H 1
#if !defined(__STRICT_ANSI__) && defined(_GLIBCXX_USE_FLOAT128) && !defined(__CUDACC__)
  inline constexpr __float128 abs(__float128 __x) { return __x < 0 ? -__x : __x; }
#endif
#if (defined __x86_64__ \\
     ? __GNUC_PREREQ (4, 3) : 0) \\
     &&  !defined(__CUDACC__) && !defined(__ICC)
# define __HAVE_FLOAT128 1
#endif
#if defined(__CUDA_ARCH__) || defined(__CUDACC_VER_MAJOR__)
# define _ON_DEVICE 1
#endif
#endif
"""


@pytest.mark.parametrize("settings", SETTINGS)
@pytest.mark.parametrize("name", ["std_abs.h", "floatn.h", "numbers.hpp", "abs.cpp"])
def test_library_header_testing_cudacc_is_left_byte_identical(settings, name):
    result = convert_bytes(name, LIBRARY_HEADER, settings)
    assert result.status == "unchanged", (result.status, result.message)
    assert not result.findings


@pytest.mark.parametrize("path", ["/usr/include/c++/12/bits/std_abs.h",
                                  "/usr/include/x86_64-linux-gnu/bits/floatn.h"])
def test_installed_library_headers_are_left_as_they_are(path):
    require_path(Path(path), "a libstdc++ or glibc header")
    data = Path(path).read_bytes()
    assert b"__CUDACC__" in data
    result = convert_bytes(Path(path).name, data, Settings())
    assert result.status == "unchanged", result.message


@pytest.mark.parametrize("settings", SETTINGS)
@pytest.mark.parametrize("body, name", [
    (b"#define HD __host__ __device__\n", "math.h"),  # device code
    (b"#include <cuda_runtime.h>\n", "util.hpp"),  # a CUDA header
    (b"inline void sync() { cudaDeviceSynchronize(); }\n", "sync.h"),  # a CUDA API name
    (b"#define HD\n", "math.cuh"),  # a CUDA file by its name
])
def test_cuda_aware_file_still_renames_its_test(settings, body, name):
    data = b"#ifdef __CUDACC__\n" + body + b"#endif\n"
    output = convert_bytes(name, data, settings).output
    assert output is not None and b"#ifdef __HIPCC__\n" in output
    assert b"__CUDACC__" not in output


# -- a script named .cu is no C/C++ ---------------------------------------------------------

SCRIPT = b"#!/bin/sh\n# build it\nnvcc -o x x.cu\ncudaMalloc(&p, n);\n"


@pytest.mark.parametrize("data", [SCRIPT, b"\xef\xbb\xbf" + SCRIPT, b"#!" + b"x" * 10])
def test_script_named_cu_is_refused(data):
    for result in (convert_bytes("run.cu", data, Settings()),
                   lint_bytes("run.cu", data, Settings(), fix=True)):
        assert result.status == "failed"
        assert "a script: line 1 starts with '#!'" in result.message
        assert result.output is None


def test_script_named_cu_is_not_written(tmp_path: Path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "run.cu").write_bytes(SCRIPT)
    (tmp_path / "src" / "k.cu").write_bytes(b"void f() { cudaDeviceSynchronize(); }\n")
    out = tmp_path / "out"
    result = runner.invoke(app, ["convert", str(tmp_path / "src"), "-o", str(out)])
    assert result.exit_code == 1, result.output
    assert "run.cu: does not parse as C/C++/CUDA (a script" in result.output
    assert not (out / "run.cu").exists()
    assert b"hipDeviceSynchronize" in (out / "k.cu").read_bytes()


# -- report and git submodules ---------------------------------------------------------------

def _git(folder: Path, *args: str) -> None:
    env = dict(os.environ, GIT_AUTHOR_NAME="a", GIT_AUTHOR_EMAIL="a@example.com",
               GIT_COMMITTER_NAME="a", GIT_COMMITTER_EMAIL="a@example.com",
               GIT_CONFIG_NOSYSTEM="1", HOME=str(folder))
    subprocess.run(["git", "-c", "protocol.file.allow=always", "-c", "init.defaultBranch=main",
                    *args], cwd=folder, env=env, check=True, capture_output=True)


@pytest.fixture
def superproject(tmp_path: Path) -> Path:
    require(shutil.which("git") is not None, "git")
    library = tmp_path / "library"
    library.mkdir()
    (library / "lib.cu").write_bytes(b"__global__ void k(float *a) { a[0] = 1; }\n"
                                     b"void f() { cudaMalloc(0, 0); }\n")
    (library / "other.cu").write_bytes(b"void g() { cudaFree(0); }\n")
    _git(library, "init", "-q")
    _git(library, "add", ".")
    _git(library, "commit", "-qm", "library")
    project = tmp_path / "project"
    project.mkdir()
    (project / "main.cu").write_bytes(b"int main() { cudaDeviceSynchronize(); }\n")
    _git(project, "init", "-q")
    _git(project, "submodule", "add", "-q", str(library), "third_party/library")
    _git(project, "add", ".")
    _git(project, "commit", "-qm", "project")
    assert (project / "third_party" / "library" / ".git").is_file()
    return project


def _report(source: Path, tmp_path: Path) -> dict:
    return build_report(ReportOptions(source, tmp_path / "report", Settings()))


def test_report_does_not_count_a_submodule(superproject: Path, tmp_path: Path):
    document = _report(superproject, tmp_path)
    assert [record["path"] for record in document["files"]] == ["main.cu"]
    assert document["summary"]["files"] == 1 and document["summary"]["kernels"] == 0
    assert ("not read: third_party/library: another git repository (a submodule); its 2 source "
            "and build files are not counted as the project's own") in document["notes"]


def test_report_on_the_command_line_names_the_submodule(superproject: Path, tmp_path: Path):
    out = tmp_path / "report"
    result = runner.invoke(app, ["report", str(superproject), "-o", str(out)])
    assert result.exit_code == 0, result.output
    document = json.loads((out / "report.json").read_text())
    assert [record["path"] for record in document["files"]] == ["main.cu"]
    assert "third_party/library" in (out / "report.md").read_text()


def test_a_folder_gitmodules_names_is_left_out_without_its_git_file(tmp_path: Path):
    source = tmp_path / "src"
    (source / "deps" / "cub").mkdir(parents=True)
    (source / "deps" / "cub" / "cub.cuh").write_bytes(b"__global__ void k() {}\n")
    (source / "clone" / ".git").mkdir(parents=True)  # a clone inside the tree
    (source / "clone" / "c.cu").write_bytes(b"__global__ void c() {}\n")
    (source / "a.cu").write_bytes(b"__global__ void a() {}\n")
    (source / ".gitmodules").write_bytes(b'[submodule "cub"]\n\tpath = deps/cub\n\t'
                                         b"url = https://example.com/cub.git\n")
    document = _report(source, tmp_path)
    assert [record["path"] for record in document["files"]] == ["a.cu"]
    notes = "\n".join(document["notes"])
    assert "deps/cub: another git repository" in notes and "clone: another git" in notes


def test_a_gitmodules_that_is_no_regular_file_is_ignored(tmp_path: Path):
    source = tmp_path / "src"
    source.mkdir()
    (source / "a.cu").write_bytes(b"__global__ void a() {}\n")
    os.mkfifo(source / ".gitmodules")
    document = _report(source, tmp_path)
    assert [record["path"] for record in document["files"]] == ["a.cu"]
