"""rules/api/header_guards.tsv: the loader, the table's agreement with headers.tsv, and each
mapping's #define in the real CUDA and HIP headers (where installed)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from conftest import ROOT, require_path
from migrator import apitables

TABLE = ROOT / "rules" / "api" / "header_guards.tsv"
CUDA_INCLUDE = Path("/usr/local/cuda/include")
HIP_TREES = {"5.2": Path("/usr/include"), "6.4": ROOT.parent / "shared" / "data" / "hip-6.4" / "include"}


def _defines(path: Path, macro: str) -> bool:
    text = path.read_text(encoding="utf-8", errors="replace")
    return re.search(rf"^[ \t]*#[ \t]*define[ \t]+{re.escape(macro)}\b", text, re.M) is not None


def test_loader_reads_the_guards_by_cuda_macro():
    guards = apitables.load().header_guards
    (driver,) = guards["__DRIVER_TYPES_H__"]
    assert (driver.cuda_header, driver.hip_header, driver.hip_macro) == (
        "driver_types.h", "hip/driver_types.h", "HIP_INCLUDE_HIP_DRIVER_TYPES_H")
    assert {g.hip_header for g in guards["__CUDA_BF16_H__"]} == {"hip/hip_bf16.h",
                                                                 "hip/hip_bfloat16.h"}
    assert guards["CUBLAS_API_H_"][0].hip_macro == "-"


def test_loader_reads_a_guard_table_of_its_own(tmp_path: Path):
    (tmp_path / "header_guards.tsv").write_text(
        "# comment\ncuda_macro\tcuda_header\thip_header\thip_macro\tnote\n"
        "A_H\ta.h\thip/a.h\tHIP_A_H\tseen\nA_H\ta.h\thip/old_a.h\t-\tnone\n")
    tables = apitables.ApiTables(tmp_path)
    assert [(g.hip_header, g.hip_macro) for g in tables.header_guards["A_H"]] == [
        ("hip/a.h", "HIP_A_H"), ("hip/old_a.h", "-")]
    assert tables.names == {}  # not read as a name table


def test_each_row_follows_the_header_table():
    """A row applies where headers.tsv (or a header lowering) converts its CUDA header to its
    HIP header, so each row's pair must be one the conversion writes."""
    tables = apitables.load()
    lowered = {(low.cuda, low.replacement) for low in tables.lowerings.values()
               if low.kind == "header"}
    for guard in (g for rows in tables.header_guards.values() for g in rows):
        entry = tables.headers[guard.cuda_header]
        assert (guard.hip_header == entry.hip_header
                or (guard.cuda_header, guard.hip_header) in lowered), guard
        assert guard.note, guard


def test_cuda_side_against_the_cuda_headers():
    require_path(CUDA_INCLUDE / "cuda_runtime.h", "the CUDA toolkit headers")
    curand = next(Path(sys.prefix).glob("lib/python*/site-packages/nvidia/*/include/curand.h"),
                  None)  # the nvidia-curand wheel
    checked = 0
    for guard in (g for rows in apitables.load().header_guards.values() for g in rows):
        if guard.note.startswith("unverified"):
            continue
        folder = curand.parent if guard.cuda_header.startswith("curand") and curand else CUDA_INCLUDE
        candidates = [folder / guard.cuda_header, folder / "crt" / guard.cuda_header]
        if not (folder / guard.cuda_header).is_file():
            continue  # (cuRAND's headers without the wheel)
        assert any(p.is_file() and _defines(p, guard.cuda_macro) for p in candidates), guard
        checked += 1
    assert checked >= 15


@pytest.mark.parametrize("release", sorted(HIP_TREES))
def test_hip_side_against_the_hip_headers(release: str):
    include = HIP_TREES[release]
    require_path(include / "hip" / "hip_runtime.h", f"the HIP {release} headers")
    checked = 0
    for guard in (g for rows in apitables.load().header_guards.values() for g in rows):
        if guard.hip_macro == "-":
            continue
        header = include / (guard.hip_header or "hip/hip_runtime.h")
        if not header.is_file():
            continue  # newer than this release (hip_bf16.h...) or another library's
        assert _defines(header, guard.hip_macro), f"{guard.hip_macro} not in {header}"
        checked += 1
    assert checked >= 15
