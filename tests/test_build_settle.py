"""The build-file fix loop stops once every fix that applies was applied and none came from a
rule that chains (buildfiles.fixer): no round that would find nothing runs, and what it writes
and reports is what the loop run to the end gives."""

from __future__ import annotations

import pytest

from repo_sources import build_files

from migrator import apitables
from migrator.buildfiles import fixer
from migrator.convert import convert_bytes, rules_for
from migrator.rule import Rule
from migrator.settings import Settings
from migrator.source import Source

MAKEFILE = (b"CUDA_PATH ?= /usr/local/cuda\n"
            b"NVCC = nvcc\n"
            b"app: main.cu\n"
            b"\t$(NVCC) -O3 -arch=sm_80 -I$(CUDA_PATH)/include main.cu -o app -lcudart\n")


def _fixed(data: bytes, name: str, language: str):
    """The fix loop's result, and how many rounds ran the rules."""
    settings = Settings()
    rules = [cls() for cls in rules_for(settings, language)]
    contexts = []
    real = fixer.BuildContext

    def counting(*args):
        contexts.append(real(*args))
        return contexts[-1]

    fixer.BuildContext = counting
    try:
        result = fixer.fix_build_file(Source(name, data), rules, settings, apitables.load(),
                                      language)
    finally:
        fixer.BuildContext = real
    return result, len(contexts)


def test_a_makefile_settles_in_the_round_that_fixed_it(monkeypatch):
    settled, ran = _fixed(MAKEFILE, "Makefile", "make")
    assert b"hipcc" in settled.output and b"--offload-arch=" in settled.output
    assert ran == 1  # no second round to find nothing
    monkeypatch.setattr(Rule, "chains", True)  # every rule chains: the loop runs to the end
    full, ran = _fixed(MAKEFILE, "Makefile", "make")
    assert ran == 2 and full.output == settled.output and full.findings == settled.findings


def test_a_cmake_rule_that_chains_gets_its_round():
    """FindCUDA's cuda_add_executable becomes a HIP target (CMK011), whose flags CMK016 then
    moves: the round after CMK011's fixes runs."""
    data = (b"cmake_minimum_required(VERSION 3.10)\nproject(app)\nfind_package(CUDA REQUIRED)\n"
            b"set(CUDA_NVCC_FLAGS ${CUDA_NVCC_FLAGS} -O3 --use_fast_math)\n"
            b"cuda_add_executable(app main.cu)\n")
    result, ran = _fixed(data, "CMakeLists.txt", "cmake")
    assert ran >= 3  # CMK011's round, the round after it, and the one that finds nothing
    assert _fixed(result.output, "CMakeLists.txt", "cmake")[0].output == result.output



@pytest.mark.parametrize("settings", [Settings(), Settings(rocm=(5, 2, 0))],
                         ids=["rocm6.4", "rocm5.2"])
def test_settling_and_running_to_the_end_agree_on_fixtures(monkeypatch, settings):
    paths = build_files()
    assert len(paths) > 100
    settled = [convert_bytes(path.name, path.read_bytes(), settings) for path in paths]
    monkeypatch.setattr(Rule, "chains", True)
    key = lambda f: (f.line, f.column, f.code, f.message, f.fixed)  # noqa: E731
    for path, first in zip(paths, settled):
        full = convert_bytes(path.name, path.read_bytes(), settings)
        assert (first.status, first.output) == (full.status, full.output), path
        assert list(map(key, first.findings)) == list(map(key, full.findings)), path
