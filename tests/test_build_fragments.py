"""Issue 26 item 3: a make fragment a Makefile includes (common.mk) is converted with what its
includer knows: the compiler variables and the commands that read the fragment's variables."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import ROOT, require_tool
from migrator import apitables, registry
from migrator.buildfiles import fix_build_file
from migrator.buildfiles.make import included_names, related_makefiles
from migrator.cli import _register, app
from migrator.settings import Settings
from migrator.source import Source
from migrator.workspace.includes import Included

_register()
PROJECT = ROOT / "fixtures" / "build_projects" / "make_fragment"
FRAGMENT = b"NVCUFLAGS := -ccbin $(CXX) $(NVCC_GENCODE) --extended-lambda\n" \
           b"NVCC_GENCODE ?= -gencode=arch=compute_80,code=sm_80\n"
INCLUDER = b"NVCC ?= nvcc\ninclude common.mk\nall:\n\t$(NVCC) $(NVCUFLAGS) main.cu\n"


def _convert(data: bytes, related: tuple = ()) -> bytes:
    settings = Settings(offload_archs=("gfx90a",))
    rules = [registry.find(code)() for code in ("MKF002", "MKF004")]
    return fix_build_file(Source("common.mk", data), rules, settings, apitables.load(), "make",
                          related=related).output


def test_include_lines_name_their_files():
    data = (b"include common.mk\n-include ../verifiable/verifiable.mk $(TOP)/x.mk\n"
            b"sinclude make.inc\n# include comment.mk\nall:\n\tinclude recipe.mk\n")
    assert included_names(data) == ["common.mk", "../verifiable/verifiable.mk", "make.inc"]
    # an indented directive is one too; a file whose lines start with no include word has none
    assert included_names(b"ifdef X\n  include x.mk\nendif\n") == ["x.mk"]
    assert included_names(b"all:\n\t$(CC) -include pre.h -c a.c\nX = include\n") == []


def test_related_makefiles_are_the_includers_and_the_included():
    files = {"src/Makefile": b"include common.mk\ninclude ../verifiable/verifiable.mk\n",
             "src/common.mk": b"X = 1\n", "verifiable/verifiable.mk": b"Y = 2\n",
             "other/Makefile": b"include common.mk\n"}  # other/common.mk: not in the tree
    assert related_makefiles("src/common.mk", files["src/common.mk"], files) == [
        ("src/Makefile", "common.mk"),
        ("verifiable/verifiable.mk", "../verifiable/verifiable.mk")]  # a sibling fragment
    assert related_makefiles("src/Makefile", files["src/Makefile"], files) == [
        ("src/common.mk", "common.mk"), ("verifiable/verifiable.mk", "../verifiable/verifiable.mk")]
    assert related_makefiles("other/Makefile", files["other/Makefile"], files) == []


def test_a_fragment_alone_is_left_and_with_its_includer_converted():
    assert _convert(FRAGMENT) == FRAGMENT  # nothing in it runs nvcc
    converted = _convert(FRAGMENT, (Included("Makefile", INCLUDER, "common.mk"),))
    assert converted == (b"NVCUFLAGS := $(NVCC_GENCODE)\n"
                         b"NVCC_GENCODE ?= --offload-arch=gfx90a\n")


def test_a_changed_includer_converts_its_fragment_again(tmp_path: Path):
    source, out = tmp_path / "src", tmp_path / "out"
    source.mkdir()
    (source / "common.mk").write_bytes(FRAGMENT)
    (source / "Makefile").write_bytes(b"include common.mk\n")
    args = ["convert", str(source), "-o", str(out), "--offload-arch", "gfx90a"]
    assert CliRunner().invoke(app, args).exit_code == 0
    assert (out / "common.mk").read_bytes() == FRAGMENT
    (source / "Makefile").write_bytes(INCLUDER)
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 0, done.output
    assert b"--offload-arch=gfx90a" in (out / "common.mk").read_bytes()


@pytest.mark.slow
def test_a_project_with_a_fragment_builds_with_make_and_hipcc(tmp_path: Path):
    """fixtures/build_projects/make_fragment: nvcc, its flags and chained CUDA root variables
    in config/common.mk, used by the Makefile that includes it."""
    hipcc = require_tool("hipcc")
    make = require_tool("make")
    tree, out = tmp_path / "src", tmp_path / "out"
    shutil.copytree(PROJECT, tree)
    done = CliRunner().invoke(app, ["convert", str(tree), "-o", str(out), "--rocm", "5.2",
                                    "--offload-arch", "gfx90a"])
    assert done.exit_code == 0, done.output
    fragment = (out / "config" / "common.mk").read_text()
    for cuda in ("nvcc", "-gencode", "-ccbin", "--extended-lambda", "-Xcompiler", "lib64",
                 "ROCM_PATH = $(ROCM_PATH)"):
        assert cuda not in fragment, fragment
    env = dict(os.environ, HIP_PLATFORM="amd", TMPDIR=str(tmp_path))
    root = Path(hipcc).parent.parent
    built = subprocess.run([make, "-C", str(out), f"ROCM_PATH={root}"], env=env,
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stdout + built.stderr
    assert (out / "main").exists()


def test_a_root_variable_made_in_the_includer_keeps_its_name_in_the_fragment():
    """CUDA_PATH is made from CUDA_HOME in the Makefile: the fragment's uses of it keep the
    name (ROCM_PATH there would lose the Makefile's /targets part)."""
    includer = b"include common.mk\nCUDA_PATH = $(CUDA_HOME)/targets/x86_64-linux\n"
    fragment = b"CUDA_HOME ?= /usr/local/cuda\nINC = -I$(CUDA_PATH)/include\n"
    rules = [registry.find("MKF008")()]
    result = fix_build_file(Source("common.mk", fragment), rules, Settings(), apitables.load(),
                            "make", related=(Included("Makefile", includer, "common.mk"),))
    assert result.output == b"ROCM_PATH ?= /opt/rocm\nINC = -I$(CUDA_PATH)/include\n"
