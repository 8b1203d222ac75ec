"""The API tables' HIP versions against real headers: the committed evidence
(docs/api_version_evidence.tsv) is what scripts/verify_api_versions.py computes from HIP 5.2.3
(Debian's /usr/include) and HIP 6.4.3 (../shared/data/hip-6.4), and no row the evidence
contradicts is the one the converter uses."""

from __future__ import annotations

import functools
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, require, require_path
from migrator.apitables import load
from migrator.versions import DEFAULT_ROCM, parse_version

SCRIPT = ROOT / "scripts" / "verify_api_versions.py"
EVIDENCE = ROOT / "docs" / "api_version_evidence.tsv"
HIP_64 = ROOT.parent / "shared" / "data" / "hip-6.4" / "include"
HIP_52 = Path("/usr/include")

sys.path.insert(0, str(SCRIPT.parent))
import verify_api_versions as verify  # noqa: E402

sys.path.pop(0)


def _evidence() -> list[dict[str, str]]:
    lines = [line for line in EVIDENCE.read_text(encoding="utf-8").split("\n")
             if line and not line.startswith("#")]
    header = lines[0].split("\t")
    assert tuple(header) == verify.COLUMNS
    return [dict(zip(header, line.split("\t"))) for line in lines[1:]]


def _version(text: str):
    return parse_version(text) if text else None


def _in_use(row: dict[str, str], tables) -> bool:
    """Is this table row the one the converter reads for its CUDA name (manual.tsv overrides the
    generated tables; among those the first table that maps the name wins)?"""
    entry = tables.names.get(row["cuda"])
    overridden = row["table"] != "manual.tsv" and row["cuda"] in _manual_names(tables.api_dir)
    return entry is not None and not overridden and (
        entry.hip, entry.hip_added, entry.hip_removed) == (
        row["hip"], _version(row["hip_added"]), _version(row["hip_removed"]))


@functools.lru_cache(maxsize=2)
def _manual_names(api_dir: Path) -> frozenset[str]:
    return frozenset(row["cuda"] for row in verify.table_rows(api_dir) if row["table"] == "manual")


def contradicted_rows_in_use(evidence: list[dict[str, str]], tables) -> list[str]:
    return [f"{row['table']}: {row['cuda']} -> {row['hip']} ({row['verdict']})"
            for row in evidence if row["verdict"].startswith("wrong:") and _in_use(row, tables)]


def test_no_contradicted_row_is_used():
    """Every row whose HIP version the headers contradict is overridden by a manual.tsv row
    that they confirm."""
    evidence = _evidence()
    assert contradicted_rows_in_use(evidence, load()) == []
    wrong = [row for row in evidence if row["verdict"].startswith("wrong:")]
    assert wrong, "the evidence has no contradicted generated row: re-check the verdicts"


def test_rows_used_at_the_default_target_exist_there():
    """Each name the converter renames at the default target is declared by HIP 6.4.3 (where
    the evidence could check it), with HIP_ENABLE_WARP_SYNC_BUILTINS for the warp-sync builtins
    (WRP003 defines it)."""
    from rules.target_names import renamable

    tables, rocm = load(), parse_version(DEFAULT_ROCM)
    missing = [row["cuda"] for row in _evidence()
               if _in_use(row, tables) and renamable(tables.names[row["cuda"]], rocm)
               and row["in_6.4"] == "no"]
    assert missing == []


def test_evidence_is_about_the_current_tables():
    """The evidence was computed from the tables as they are (re-run the script after editing
    a version in a table)."""
    rows = {(row["table"] + ".tsv", row["cuda"]): row for row in verify.table_rows()}
    for cells in _evidence():
        row = rows.get((cells["table"], cells["cuda"]))
        assert row is not None, f"{cells['table']}: {cells['cuda']} is no longer a row"
        assert (row["hip"], row["hip_added"], row["hip_removed"]) == (
            cells["hip"], cells["hip_added"], cells["hip_removed"]), cells["cuda"]


def test_evidence_records_the_issue_facts():
    """What the issue found in HIP 6.4.3, as the evidence says it."""
    rows = {(row["table"], row["cuda"]): row for row in _evidence()}
    syncwarp = rows["manual.tsv", "__syncwarp"]
    assert (syncwarp["hip"], syncwarp["in_old"], syncwarp["in_6.4"]) == ("", "no", "no")
    shfl = rows["manual.tsv", "__shfl_down_sync"]
    assert (shfl["in_old"], shfl["in_6.4"], shfl["verdict"]) == (
        "no", "with-HIP_ENABLE_WARP_SYNC_BUILTINS", "agrees-with-HIP_ENABLE_WARP_SYNC_BUILTINS")
    assert shfl["where_6.4"].startswith("hip/amd_detail/")
    assert rows["manual.tsv", "__nanosleep"]["in_6.4"] == "no"
    texref = rows["driver.tsv", "cuTexRefGetArray"]
    assert (texref["in_old"], texref["in_6.4"], texref["verdict"]) == (
        "no", "yes", "wrong:missing-in-5.2")
    assert rows["manual.tsv", "cuTexRefGetArray"]["verdict"] == "agrees"


ROW = {"cuda": "cuX", "hip": "hipX", "hip_added": "", "hip_removed": ""}


@pytest.mark.parametrize("added, removed, states, expected", [
    ("5.2.0", "", [("yes", (5, 2)), ("yes", (6, 4))], "agrees"),
    ("5.7.0", "", [("yes", (5, 2)), ("yes", (6, 4))], "wrong:declared-in-5.2"),
    ("1.6.0", "", [("no", (5, 2)), ("yes", (6, 4))], "wrong:missing-in-5.2"),
    ("6.2.0", "", [("no", (5, 2)), ("no", (6, 4))], "wrong:missing-in-6.4"),
    ("5.0.0", "6.0.0", [("yes", (5, 2)), ("no", (6, 4))], "agrees"),
    ("5.0.0", "6.0.0", [("yes", (5, 2)), ("yes", (6, 4))], "wrong:declared-in-6.4"),
    ("6.2.0", "", [("no", (5, 2)), ("with-HIP_ENABLE_WARP_SYNC_BUILTINS", (6, 4))],
     "agrees-with-HIP_ENABLE_WARP_SYNC_BUILTINS"),
    ("1.5.0", "", [("no", (5, 3)), ("not-checkable", None)], "wrong:missing-in-5.3"),
    ("1.5.0", "", [("not-checkable", None), ("not-checkable", None)], "not-checkable"),
])
def test_verdict(added, removed, states, expected):
    assert verify.verdict(dict(ROW, hip_added=added, hip_removed=removed), states) == expected


def test_verdict_of_a_row_without_hip_name():
    """A row with no HIP name says HIP lacks its CUDA name: the headers may say otherwise."""
    row = dict(ROW, hip="")
    assert verify.verdict(row, [("no", (5, 2)), ("no", (6, 4))]) == "agrees"
    assert verify.verdict(row, [("no", (5, 2)), ("yes", (6, 4))]) == (
        "unsupported-but:declared-in-6.4")


def test_contradicted_row_in_use_is_found(tmp_path):
    """The check above fails on tables that use a contradicted row: cuTexRefGetArray's
    generated row (hipTexRefGetArray since 3.0.0) without the manual.tsv row."""
    api = tmp_path / "api"
    api.mkdir()
    for path in (ROOT / "rules" / "api").glob("*.tsv"):
        text = path.read_text(encoding="utf-8")
        if path.name == "manual.tsv":
            text = "".join(line for line in text.splitlines(keepends=True)
                           if not line.startswith("cuTexRefGetArray\t"))
        (api / path.name).write_text(text, encoding="utf-8")
    found = contradicted_rows_in_use(_evidence(), load.__wrapped__(api))
    assert found == ["driver.tsv: cuTexRefGetArray -> hipTexRefGetArray (wrong:missing-in-5.2)"]


def test_script_refuses_a_folder_without_hip(tmp_path):
    result = subprocess.run([sys.executable, str(SCRIPT), "--hip64", str(tmp_path),
                             "--out", str(tmp_path / "out.tsv")],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 2 and result.stderr.startswith("error: ")
    assert not (tmp_path / "out.tsv").exists()


@pytest.mark.slow
def test_evidence_matches_the_headers(tmp_path):
    """The committed evidence is what the script computes now (libclang parses both trees)."""
    require_path(HIP_64 / "hip" / "hip_version.h", "the HIP 6.4.3 headers (../shared/data)")
    require_path(HIP_52 / "hip" / "hip_version.h", "Debian's HIP 5.2.3 headers")
    from migrator.clang import find_resource_dir

    require(find_resource_dir() is not None, "clang's builtin headers (Debian: hipcc)")
    result = subprocess.run([sys.executable, str(SCRIPT), "--hip64", str(HIP_64), "--hip52",
                             str(HIP_52), "--out", str(EVIDENCE), "--check"],
                            capture_output=True, text=True, check=False, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr


def test_corrected_rows_in_a_conversion():
    """What the corrections change in converted code: make_half2 (HIP 5.2.3 and 6.4.3 declare it)
    is kept without a marker, __nanosleep (neither does) is reported, hipTexRefGetArray (absent
    from 5.2.3) is not written for ROCm 5.2."""
    from migrator.convert import convert_bytes
    from migrator.settings import Settings

    source = (b"#include <cuda_fp16.h>\n#include <cuda.h>\n"
              b"__global__ void k(__half2 *o, __half a) { o[0] = make_half2(a, a); __nanosleep(9); }\n"
              b"void f(CUarray *a, CUtexref t) { cuTexRefGetArray(a, t); }\n")
    findings = {}
    for rocm in ("6.4", "5.2"):
        result = convert_bytes("a.cu", source, Settings(
            rocm=parse_version(rocm), select=("API001", "API002", "API003")))
        assert result.status == "converted", result.message
        findings[rocm] = {(f.code, f.symbol) for f in result.findings}
        assert b"o[0] = make_half2(a, a);" in result.output
    assert ("API003", "__nanosleep") in findings["6.4"]
    assert not any(symbol == "make_half2" for _, symbol in findings["6.4"] | findings["5.2"])
    assert ("API001", "cuTexRefGetArray") in findings["6.4"]
    assert ("API002", "cuTexRefGetArray") in findings["5.2"]
