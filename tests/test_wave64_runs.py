"""The wave64 rules proven by running: CUDA programs with a 32-lane habit, converted for AMD's
HIP CPU runtime (64-lane wavefronts) and built with g++ against it, print PASS where the rules
widened what needs it (issue 28's defect classes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ROOT
from hip_cpu import converted_run

PROGRAMS = ROOT / "fixtures" / "wave64"


def _converted_run(name: str, folder: Path, unsafe_fixes: bool) -> str:
    return converted_run(PROGRAMS / f"{name}.cu", folder, unsafe_fixes)


@pytest.mark.slow
def test_a_ballot_held_in_32_bits_widens_with_its_whole_flow(tmp_path: Path):
    """WAV003 with unsafe fixes: the ballot variable, its __popc/__ffs (a rank's
    ``__popc(mask & ((1 << lane) - 1))`` too) and its lane tests widen together; before, the
    rank stayed 32-bit and half the lanes of each wavefront took another lane's slot."""
    assert _converted_run("ballot_flow", tmp_path, unsafe_fixes=True) == "PASS"


@pytest.mark.slow
def test_a_deliberate_32_lane_subgroup_keeps_its_32s(tmp_path: Path):
    """WAV001 with unsafe fixes leaves the lane arithmetic of a function that sums 32-element
    segments with a __shfl_xor butterfly below 32: its plain port is right at 64 lanes; the
    earlier rewrite to warpSize wrote every segment's sum wrong."""
    assert _converted_run("subgroup_sums", tmp_path, unsafe_fixes=True) == "PASS"


@pytest.mark.slow
def test_a_host_warp_size_asks_the_device(tmp_path: Path):
    """WAV001 with unsafe fixes initialises a host ``const int warp_size = 32;`` that sizes the
    vote data and its expected results from the device (rocmigrate_warp_size()); marked only,
    it kept 32, and half the votes of each 64-lane wavefront came out wrong."""
    assert _converted_run("host_warp_size", tmp_path, unsafe_fixes=True) == "PASS"


@pytest.mark.slow
@pytest.mark.parametrize("name, printed", [("ballot_flow", "PASS"), ("host_warp_size", "FAIL"),
                                           ("subgroup_sums", "PASS")])
def test_without_unsafe_fixes(name: str, printed: str, tmp_path: Path):
    """The same programs converted without unsafe fixes: the ballot's flow is widened safely
    (its uses are counts and lane tests that are whole conditions); a host warp size is only
    marked, and the port is wrong at 64 lanes, as the marker says; the subgroup's plain port is
    right."""
    assert _converted_run(name, tmp_path, unsafe_fixes=False) == printed
