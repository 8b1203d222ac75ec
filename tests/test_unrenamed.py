"""No CUDA name that the target ROCm has a HIP name for is left in converted code without a
marker: kernels/ and every rule fixture, converted at the default target and at ROCm 5.2, read
by benchmarks/unrenamed_scan.py (which reads the output on its own terms, not through the rules;
the same scan runs on HeCBench's outputs, figures in docs/benchmarks.md)."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from fixture_format import load_fixture
from migrator import apitables
from migrator.convert import convert_bytes
from migrator.runner import RunOptions, run
from migrator.settings import Settings
from migrator.versions import DEFAULT_ROCM, parse_version

sys.path.insert(0, str(ROOT / "benchmarks"))
from unrenamed_scan import renamable_names, scan, unrenamed  # noqa: E402

TARGETS = [parse_version(DEFAULT_ROCM), parse_version("5.2")]
FIXTURES = sorted(p for p in (ROOT / "fixtures" / "rules").glob("[!_]*/*")
                  if p.is_file() and ".fixed." not in p.name
                  and p.suffix in (".cu", ".cuh", ".cpp", ".h", ".hip"))


def test_the_scan_finds_what_is_left_and_passes_what_is_not_the_api():
    names = renamable_names(apitables.load(), parse_version(DEFAULT_ROCM))
    text = (b"void f() {\n  void *p;\n  cudaMalloc(&p, 4);\n  ::cudaFree(p);\n"
            b"  // rocmigrate API003: kept on purpose\n  cudaDeviceReset();\n"
            b"  cudaStream_t s;  // rocmigrate: ignore[API001]\n  holder.cudaMalloc = 1;\n"
            b"  ns::cudaMalloc();\n  /* cudaMalloc */ puts(\"cudaMalloc\");\n}\n"
            b"struct H { int cudaMalloc; };\n")
    assert [(line, name) for line, name, _ in unrenamed(text, names)] == [
        (3, "cudaMalloc"), (4, "cudaFree")]


@pytest.mark.parametrize("rocm", TARGETS, ids=lambda v: ".".join(map(str, v[:2])))
def test_kernels_keep_no_cuda_name_the_target_has(rocm, tmp_path: Path):
    result = run(RunOptions(ROOT / "kernels", tmp_path / "out"), Settings(rocm=rocm))
    assert not result.failed
    assert scan([tmp_path / "out"], rocm) == []


@pytest.mark.parametrize("rocm", TARGETS, ids=lambda v: ".".join(map(str, v[:2])))
def test_rule_fixtures_keep_no_cuda_name_the_target_has(rocm, tmp_path: Path):
    for path in FIXTURES:
        settings = dataclasses.replace(load_fixture(path).settings, rocm=rocm)
        converted = convert_bytes(path.name, path.read_bytes(), settings)
        assert converted.status != "failed", (path, converted.message)
        out = tmp_path / path.parent.name / path.name
        out.parent.mkdir(exist_ok=True)
        out.write_bytes(converted.output)
    assert scan([tmp_path], rocm) == []
