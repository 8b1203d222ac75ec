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


@pytest.mark.slow
@pytest.mark.parametrize("unsafe_fixes, printed", [(True, "PASS"), (False, "FAIL")])
def test_a_literal_warp_size_named_by_its_comment_asks_the_device(unsafe_fixes: bool, printed: str,
                                                                  tmp_path: Path):
    """WAV001 with unsafe fixes gives HeCBench scatterAdd's launch the device's warp size where
    a comment names its literal 32 the warp size (``int thread_x = 32; //warpSize;``, and
    ``MAX_THREADS_PER_BLOCK / 32; //warpSize;`` divides by it): blocks of (64, 8) whose kernel
    indexes ``threadIdx.y * warpSize + threadIdx.x``. Before, the 32s stayed, blocks of (32, 16)
    indexed past the 512-entry shared buffer (scatterAdd's port crashed on the CPU runtime) and
    this program printed FAIL; marked only, it still does, as the markers say."""
    assert converted_run(PROGRAMS / "warp_rows.cu", tmp_path, unsafe_fixes=unsafe_fixes) == printed
