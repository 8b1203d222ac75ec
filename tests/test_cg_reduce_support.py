"""cg::reduce and the scans from the generated rocmigrate_cg_reduce.h: the includes of
cooperative_groups/reduce.h and scan.h become it, CGM001 leaves those names to it (CGM002 says
that the order may differ from CUDA's), its collectives give the sequential reference's results
over 64 emulated lanes (fixtures/cg_reduce/lanes.cpp: tiles and coalesced groups) and in kernels
on AMD's HIP CPU runtime with 64-lane wavefronts (hip_cpu_tiles.cpp: tiles), a group CUDA does
not support is a compile error naming what is, and on NVIDIA CUDA's own collectives are used."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, nvcc_compile, require_tool
from migrator import apitables, support
from migrator.convert import convert_bytes
from migrator.nvidia import write_nvidia_headers
from migrator.settings import Settings
from rules.portability.cooperative_groups_members import PROVIDED, SUPPORT_HEADER

LANES = ROOT / "fixtures" / "cg_reduce" / "lanes.cpp"
HIP_CPU_TILES = ROOT / "fixtures" / "cg_reduce" / "hip_cpu_tiles.cpp"
FUNCTION_OBJECTS = ("plus", "less", "greater", "bit_and", "bit_or", "bit_xor")
_SOURCE = b"""\
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
namespace cg = cooperative_groups;
__global__ void k(const float* in, float* out) {
  auto tile = cg::tiled_partition<32>(cg::this_thread_block());
  out[0] = cg::reduce(tile, in[tile.thread_rank()], cg::plus<float>());
  out[1] = cg::exclusive_scan(tile, in[0]);
}
"""


def _rendered() -> str:
    return support.render(SUPPORT_HEADER, Settings()).decode()


def test_the_header_defines_what_cgm001_leaves_to_it():
    text = _rendered()
    for name in PROVIDED:
        assert f"auto {name}(const Group& group" in text
    for name in FUNCTION_OBJECTS:
        assert f"template <class T> struct {name} {{" in text
    tables = apitables.load()
    assert {name for name, entry in tables.headers.items()
            if entry.hip_header == f'"{SUPPORT_HEADER}"'} == {
        "cooperative_groups/reduce.h", "cooperative_groups/scan.h"}


@pytest.mark.parametrize("rocm", [(5, 2, 0), (6, 4, 0)])
def test_includes_become_the_support_header_and_uses_say_the_order_may_differ(rocm):
    result = convert_bytes("k.cu", _SOURCE, Settings(rocm=rocm))
    assert result.output.count(b'#include "rocmigrate_cg_reduce.h"\n') == 1
    assert b"cooperative_groups/" not in result.output and b"rocmigrate CGM" not in result.output
    assert result.support == (SUPPORT_HEADER,)
    reported = [f for f in result.findings if f.code == "CGM002"]
    assert [f.line for f in reported] == [7, 8]
    assert all("floating-point results may differ in the last bits" in f.message
               for f in reported)
    assert not [f for f in result.findings if f.code == "CGM001"]


def test_without_the_include_the_collectives_are_still_marked():
    source = _SOURCE.replace(b"#include <cooperative_groups/reduce.h>\n", b"").replace(
        b"#include <cooperative_groups/scan.h>\n", b"")
    result = convert_bytes("k.cu", source, Settings())
    assert sorted(f.symbol for f in result.findings if f.code == "CGM001") == [
        "exclusive_scan", "reduce"]
    assert result.support == ()


def _build(source: Path, folder: Path) -> subprocess.CompletedProcess:
    (folder / SUPPORT_HEADER).write_text(_rendered(), encoding="utf-8")
    return subprocess.run([require_tool("g++"), "-std=c++20", "-O1", "-pthread", "-I",
                           str(folder), str(source), "-o", str(folder / "lanes")],
                          capture_output=True, text=True, timeout=600, check=False)


@pytest.mark.slow
def test_collectives_match_a_sequential_reference_over_64_lanes(tmp_path: Path):
    """Tiles of 2 to 64 lanes (and the derived class tiled_partition returns), coalesced groups
    of 1 to 64 lanes anywhere in the wavefront beside the lanes outside them; reduce with every
    function object, a lambda, a struct and a byte; inclusive and exclusive scans with and
    without op: 441 cases, each lane's result the reference's."""
    built = _build(LANES, tmp_path)
    assert built.returncode == 0, built.stderr[-3000:]
    ran = subprocess.run([str(tmp_path / "lanes")], capture_output=True, text=True,
                         timeout=300, check=False)
    assert ran.returncode == 0 and ran.stdout.strip() == "441 cases, 0 failures", ran.stdout


@pytest.mark.slow
def test_a_group_cuda_does_not_support_is_a_compile_error_naming_those_it_does(
        tmp_path: Path):
    text = LANES.read_text(encoding="utf-8")
    main = text.index("int main() {")
    source = tmp_path / "block.cpp"
    source.write_text(text[:main] + """\
namespace cooperative_groups { class thread_block : public group_base {
 public: using group_base::group_base; }; }
int main() {
  const cg::thread_block block(nullptr, 0, 64);
  return cg::reduce(block, 1, cg::plus<int>());
}
""", encoding="utf-8")
    built = _build(source, tmp_path)
    assert built.returncode != 0
    assert "take a thread_block_tile<N> or a coalesced_group" in built.stderr


@pytest.mark.slow
def test_on_nvidia_cuda_s_own_collectives_are_used(tmp_path: Path):
    """Through rocmigrate's NVIDIA headers the header includes CUDA's reduce.h and scan.h and
    defines nothing (a definition of its own would clash with CUDA's)."""
    include = tmp_path / "nvh"
    write_nvidia_headers(apitables.load(), include)
    (tmp_path / SUPPORT_HEADER).write_text(_rendered(), encoding="utf-8")
    source = tmp_path / "k.cu"
    source.write_bytes(convert_bytes("k.cu", _SOURCE, Settings()).output)
    compiled = nvcc_compile(source, tmp_path, ("-I", str(include), "-I", str(tmp_path)))
    assert compiled.returncode == 0, compiled.stderr[-3000:]


@pytest.mark.slow
def test_tile_collectives_in_kernels_on_hip_cpu_with_64_lane_wavefronts(tmp_path: Path):
    """Kernels launched on AMD's HIP CPU runtime (warpSize 64): reduce (plus, greater) and
    both scans over tiles of 2 to 64 threads, in blocks of two wavefronts, each thread's
    result the sequential reference's."""
    from hip_cpu import build_for_hip_cpu, run_on_hip_cpu

    (tmp_path / SUPPORT_HEADER).write_text(_rendered(), encoding="utf-8")
    program = build_for_hip_cpu(HIP_CPU_TILES, tmp_path, (tmp_path,))
    printed = run_on_hip_cpu(program)
    assert printed.strip().endswith("warpSize 64, 0 failures"), printed
    assert printed.count(": 0 failures") == 6
