"""Defects of ours that HeCBench programs showed on AMD's HIP CPU runtime (benchmarks/hip_cpu.py,
docs/hip_cpu.md), each reproduced by a small CUDA program in fixtures/hip_cpu/programs that is
converted for the runtime, built with g++ against it and run: it prints PASS."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ROOT
from hip_cpu import converted_run

PROGRAMS = ROOT / "fixtures" / "hip_cpu" / "programs"


@pytest.mark.slow
def test_a_projects_own_vector_operators_give_way_to_the_runtimes(tmp_path: Path):
    """VEC001 keeps helper_math.h-style operators off the CPU runtime too, whose float4 declares
    ``operator+=`` as a member: before, HeCBench mdh and particles did not build there (every
    ``a += b`` ambiguous) while their human ports, which drop the operators, did."""
    assert converted_run(PROGRAMS / "vector_operators.cu", tmp_path) == "PASS"
