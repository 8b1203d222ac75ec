"""The wave64 rules proven by running: CUDA programs with a 32-lane habit, converted for AMD's
HIP CPU runtime (64-lane wavefronts) and built with g++ against it, print PASS where the rules
widened what needs it (issue 28's defect classes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ROOT
from hip_cpu import build_for_hip_cpu, run_on_hip_cpu
from migrator.convert import convert_bytes
from migrator.settings import Settings

PROGRAMS = ROOT / "fixtures" / "wave64"
# what HIP-CPU lacks for these programs: __ffsll of an unsigned long long (it declares the
# int64_t and uint64_t overloads, between which unsigned long long is ambiguous)
_PRELUDE = """#include <hip/hip_runtime.h>
inline std::uint32_t __ffsll(unsigned long long x) noexcept {
  return __ffsll(static_cast<std::uint64_t>(x));
}
"""


def _converted_run(name: str, folder: Path, unsafe_fixes: bool) -> str:
    """The last line the program ``name`` (fixtures/wave64) prints, converted for the CPU
    runtime (with or without unsafe fixes) and run there."""
    settings = Settings(unsafe_fixes=unsafe_fixes).for_runtime("hip-cpu")
    result = convert_bytes(f"{name}.cu", (PROGRAMS / f"{name}.cu").read_bytes(), settings)
    assert result.status == "converted", result.message
    source = folder / f"{name}.cpp"
    source.write_bytes(_PRELUDE.encode() + result.output)
    return run_on_hip_cpu(build_for_hip_cpu(source, folder)).strip().splitlines()[-1]


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
