"""The nvcc option table (rules/build/nvcc_flags.tsv) and its translation to hipcc flags."""

from __future__ import annotations

from pathlib import Path

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


def test_a_mapped_flag_given_already_is_removed():
    assert _changes("-g -G -O3") == [("-G", "", "drop")]
    assert _changes("-G -O3") == [("-G", "-g", "map")]


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
    """The variable keeps its make or shell spelling; its definition becomes an AMD list."""
    (found,) = translate([word], ARCHS)
    reference = word.partition("=")[2]
    assert (found.replacement, found.variable) == (f"--offload-arch={reference}", variable)


def test_architectures_go_where_amd_targets_are_given_already():
    """A list half converted (a fix loop's earlier round) gets no second target list."""
    assert _changes("--offload-arch=gfx90a -gencode arch=compute_90,code=sm_90") == [
        ("-gencode arch=compute_90,code=sm_90", "", "arch")]


def _convert_makefile(data: bytes, **settings) -> bytes:
    from migrator import apitables, registry
    from migrator.buildfiles import fix_build_file
    from migrator.settings import Settings
    from migrator.source import Source

    rules = [cls() for cls in registry.all_rules() if cls.code.startswith("MKF")]
    chosen = Settings(**settings)
    first = fix_build_file(Source("Makefile", data), rules, chosen, apitables.load(), "make")
    again = fix_build_file(Source("Makefile", first.output), rules, chosen, apitables.load(),
                           "make")
    assert again.output == first.output, "converting the output again changed it"
    return first.output


def test_flags_on_continuation_lines_and_make_functions():
    data = (b"NVCC ?= nvcc\n"
            b"NVCCFLAGS := $(EXTRA) \\\n"
            b"\t-Xcompiler -fopenmp \\\n"
            b"\t-Xptxas -v \\\n"
            b"\t-arch=sm_70\n"
            b"OBJ = $(patsubst %.cu,%.o,$(wildcard *.cu))\n"
            b"%.o: %.cu\n"
            b"\t$(NVCC) $(NVCCFLAGS) -c $< -o $@\n")
    assert _convert_makefile(data, offload_archs=("gfx90a",)) == (
        b"NVCC ?= hipcc\n"
        b"# rocmigrate MKF005: -Xptxas -v: PTX assembler options have no AMD counterpart "
        b"(-Rpass-analysis=kernel-resource-usage reports registers and LDS; __launch_bounds__ "
        b"bounds registers)\n"
        b"NVCCFLAGS := $(EXTRA) \\\n"
        b"\t-fopenmp \\\n"
        b"\t\\\n"
        b"\t--offload-arch=gfx90a\n"
        b"OBJ = $(patsubst %.cu,%.o,$(wildcard *.cu))\n"
        b"%.o: %.cu\n"
        b"\t$(NVCC) $(NVCCFLAGS) -c $< -o $@\n")


_KERNEL = b"""#include <cstdio>
#include <cuda_runtime.h>
__global__ void scale(float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}
int main() {
  float *x;
  cudaMalloc(&x, 256 * sizeof(float));
  scale<<<1, 256>>>(x, 2.0f, 256);
  cudaDeviceSynchronize();
  cudaFree(x);
  printf("done\\n");
  return 0;
}
"""

_MAKEFILE = b"""CUDA_PATH ?= /usr/local/cuda
CC        = $(CUDA_PATH)/bin/nvcc
ARCH      = sm_60
CFLAGS := -std=c++17 -Xcompiler -Wall -arch=$(ARCH) -lineinfo -dc --expt-relaxed-constexpr
CFLAGS += -O3 -use_fast_math -Xcompiler -fPIC,-Wextra
LDFLAGS = -L$(CUDA_PATH)/lib64 -lcudart -arch=$(ARCH) -rdc=true
source = main.cu
obj = $(source:.cu=.o)

main: $(obj)
\t$(CC) $(obj) -o $@ $(LDFLAGS)

%.o: %.cu Makefile
\t$(CC) $(CFLAGS) -c $< -o $@
"""


@pytest.mark.slow
@pytest.mark.parametrize("rename", [False, True])
def test_converted_makefile_builds_with_make_and_hipcc(tmp_path, rename):
    """A HeCBench-style Makefile (nvcc through $(CUDA_PATH), an ARCH variable, -Xcompiler,
    relocatable device code) converts into one that make builds with Debian's hipcc."""
    import os
    import subprocess

    from typer.testing import CliRunner

    from conftest import require_tool
    from migrator.cli import _register, app

    _register()
    hipcc = require_tool("hipcc")
    make = require_tool("make")
    source = tmp_path / "src"
    source.mkdir()
    (source / "main.cu").write_bytes(_KERNEL)
    (source / "Makefile").write_bytes(_MAKEFILE)
    out = tmp_path / "out"
    args = ["convert", str(source), "-o", str(out), "--rocm", "5.2", "--offload-arch", "gfx90a"]
    result = CliRunner().invoke(app, args + ["--rename-ext"] * rename)
    assert result.exit_code == 0, result.output
    converted = (out / "Makefile").read_text()
    assert "nvcc" not in converted and "sm_60" not in converted and "-Xcompiler" not in converted
    env = dict(os.environ, HIP_PLATFORM="amd", ROCM_PATH=str(Path(hipcc).parent.parent),
               TMPDIR=str(tmp_path))
    built = subprocess.run([make, "-C", str(out)], env=env,
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stdout + built.stderr
    assert (out / "main").exists()


def test_script_loops_and_conditions_reach_the_compiler():
    from migrator import apitables, registry
    from migrator.buildfiles import fix_build_file
    from migrator.settings import Settings
    from migrator.source import Source

    data = (b"for f in *.cu; do nvcc -Xcompiler -fPIC -c $f; done\n"
            b"if [ -n \"$DEBUG\" ]; then time nvcc -G main.cu; fi\n"
            b"./app -G\n")
    rules = [registry.find("MKF004")()]
    result = fix_build_file(Source("build.sh", data), rules, Settings(), apitables.load(),
                            "shell")
    assert result.output == (b"for f in *.cu; do nvcc -fPIC -c $f; done\n"
                             b"if [ -n \"$DEBUG\" ]; then time nvcc -g main.cu; fi\n"
                             b"./app -G\n")


def test_chained_toolkit_variables_never_reference_themselves():
    """Issue 26 item 2: CUDA root variables that are one another's name all become ROCM_PATH
    without a ``ROCM_PATH = $(ROCM_PATH)`` line; one made from another keeps its name."""
    from migrator import apitables, registry
    from migrator.buildfiles import fix_build_file
    from migrator.settings import Settings
    from migrator.source import Source

    data = (b"CUDA_DIR = /usr/local/cuda\n"
            b"CUDA_INSTALL_PATH = $(CUDA_DIR)\n"
            b"CUDA_PATH ?= ${CUDA_INSTALL_PATH}\n"
            b"CUDA_HOME := $(CUDA_PATH)\n"
            b"CUDA_ROOT = $(CUDA_HOME)/..\n"
            b"X = -I$(CUDA_HOME)/include $(CUDA_ROOT)\n")
    rules = [registry.find("MKF008")()]
    result = fix_build_file(Source("Makefile", data), rules, Settings(), apitables.load(), "make")
    assert result.output == (b"ROCM_PATH = /opt/rocm\n"
                             b"# rocmigrate MKF009: CUDA_HOME/..: the CUDA toolkit's .. has no "
                             b"counterpart in ROCm\n"
                             b"CUDA_ROOT = $(ROCM_PATH)/..\n"
                             b"X = -I$(ROCM_PATH)/include $(CUDA_ROOT)\n")


@pytest.mark.slow
def test_chained_toolkit_variables_build_with_make_and_hipcc(tmp_path):
    """fixtures/build_projects/make_chained_paths: CUDA_DIR, CUDA_INSTALL_PATH and an exported
    CUDA_PATH, each another's name, convert into a Makefile make evaluates and builds with
    hipcc, given ROCM_PATH on its command line."""
    import os
    import subprocess

    from typer.testing import CliRunner

    from conftest import ROOT, require_tool
    from migrator.cli import _register, app

    _register()
    hipcc = require_tool("hipcc")
    make = require_tool("make")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["convert", str(ROOT / "fixtures" / "build_projects" /
                                                     "make_chained_paths"), "-o", str(out),
                                      "--rocm", "5.2", "--offload-arch", "gfx90a"])
    assert result.exit_code == 0, result.output
    converted = (out / "Makefile").read_text()
    assert "ROCM_PATH = $(ROCM_PATH)" not in converted and "CUDA_INSTALL_PATH" not in converted
    env = dict(os.environ, HIP_PLATFORM="amd", TMPDIR=str(tmp_path))
    root = Path(hipcc).parent.parent
    built = subprocess.run([make, "-C", str(out), f"ROCM_PATH={root}"], env=env,
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stdout + built.stderr
    assert "references itself" not in built.stderr and (out / "main").exists()
