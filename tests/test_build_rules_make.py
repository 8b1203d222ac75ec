"""The nvcc option table (rules/build/nvcc_flags.tsv) and its translation to hipcc flags."""

from __future__ import annotations

import pytest

from rules.build import nvcc_flags
from rules.build.nvcc_flags import translate

ARCHS = ("gfx90a", "gfx942")


def _changes(line: str, archs=ARCHS):
    words = line.split()
    return [(" ".join(words[t.first : t.last]), t.replacement, t.action)
            for t in translate(words, archs)]


def test_every_row_is_complete_and_names_are_unique():
    rows = [line.split("\t") for line in nvcc_flags._TABLE.read_text().splitlines()
            if line and not line.startswith("#")][1:]
    names = [name for row in rows for name in row[0].split("|")]
    assert len(names) == len(set(names)), "an nvcc option listed twice"
    for row in rows:
        assert row[1] in ("none", "value") and row[2] in (
            "same", "map", "drop", "host", "linker", "arch", "mark", "keep"), row
        if row[2] in ("drop", "mark", "keep"):
            assert row[4], f"{row[0]}: a removed or kept option needs its reason"
        if row[2] == "map":
            assert row[3], f"{row[0]}: a mapped option needs its replacement"


@pytest.mark.parametrize("line, expected", [
    ("-dc", [("-dc", "-fgpu-rdc -c", "map")]),
    ("-rdc=true", [("-rdc=true", "-fgpu-rdc", "map")]),
    ("--relocatable-device-code true", [("--relocatable-device-code true", "-fgpu-rdc", "map")]),
    ("-Xcompiler -fopenmp,-Wall", [("-Xcompiler -fopenmp,-Wall", "-fopenmp -Wall", "host")]),
    ("--compiler-options=-fPIC", [("--compiler-options=-fPIC", "-fPIC", "host")]),
    ("-Xlinker -rpath,/opt/x", [("-Xlinker -rpath,/opt/x", "-Wl,-rpath,/opt/x", "linker")]),
    ("--use_fast_math", [("--use_fast_math", "-ffast-math", "map")]),
    ("-x cu", [("-x cu", "-x hip", "map")]),
    ("--default-stream per-thread",
     [("--default-stream per-thread", "-fgpu-default-stream=per-thread", "map")]),
    ("-ccbin g++ -O3", [("-ccbin g++", "", "drop")]),
    ("-maxrregcount=32", [("-maxrregcount=32", "", "mark")]),
    ("-Xptxas -v", [("-Xptxas -v", "", "mark")]),
    ("-dlink", [("-dlink", None, "keep")]),
    ("-rdc maybe", [("-rdc maybe", None, "keep")]),
    ("-Xcompiler", [("-Xcompiler", None, "keep")]),
    ("--output-file a.o --compile", [("--output-file a.o", "-o a.o", "map"),
                                     ("--compile", "-c", "map")]),
])
def test_translations(line, expected):
    assert _changes(line) == expected


def test_quoted_host_flags_become_plain_words():
    words = ["-Xcompiler", '"-fopenmp -Wall"', "-Xcompiler", '\\"-fPIC\\"']
    assert [t.words for t in translate(words, ARCHS)] == [("-fopenmp", "-Wall"), ("-fPIC",)]


def test_hip_and_shared_flags_are_left_alone():
    """What hipcc takes as written is no translation: converting twice changes nothing."""
    line = ("-O3 -g -std=c++17 -Wall -fopenmp -I$(CUDA)/include -DX=1 -lcublas -o $@ -c "
            "--offload-arch=gfx90a -fgpu-rdc -ffast-math -Werror -m64 main.cu")
    assert _changes(line) == []


def test_architectures_collapse_into_the_target_list():
    line = ("-gencode arch=compute_60,code=sm_60 -gencode=arch=compute_70,code=[sm_70,compute_70] "
            "-arch sm_80 -code=sm_80")
    assert _changes(line) == [
        ("-gencode arch=compute_60,code=sm_60", "--offload-arch=gfx90a --offload-arch=gfx942",
         "arch"),
        ("-gencode=arch=compute_70,code=[sm_70,compute_70]", "", "arch"),
        ("-arch sm_80", "", "arch"), ("-code=sm_80", "", "arch")]
    assert _changes("-arch=sm_60", ("gfx90a",)) == [
        ("-arch=sm_60", "--offload-arch=gfx90a", "arch")]


@pytest.mark.parametrize("word, variable", [("-arch=$(ARCH)", "ARCH"), ("-arch=${SM}", "SM"),
                                            ("--gpu-architecture=$CUDA_ARCH", "CUDA_ARCH")])
def test_an_architecture_variable_stays_a_variable(word, variable):
    (found,) = translate([word], ARCHS)
    assert (found.replacement, found.variable) == (f"--offload-arch=$({variable})", variable)
