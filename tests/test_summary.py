"""The convert summary says what happened: fixes under "fixed", a marker claimed only where this
run wrote one, one message per grouped line, each finding once and at its line in the input."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from migrator.cli import _register, app
from migrator.output.text import render_summary
from migrator.results import valid_finding_summary

_register()
runner = CliRunner()

WAVE = b"""#include <cuda_runtime.h>
__global__ void k(int* out, float v) {
  v += __shfl_down_sync(0xffffffff, v, 1);
  int lane = threadIdx.x % 32;
  int warp = threadIdx.x / 32;
  int lane_again = threadIdx.x % 32;
  int tid = threadIdx.x;
  out[tid] = lane + warp + lane_again + tid % 32 + (int)v;
}
"""


def _convert(tmp_path: Path, data: bytes, *args: str, name: str = "src") -> tuple[dict, Path]:
    source = tmp_path / name
    source.mkdir(exist_ok=True)
    (source / "a.cu").write_bytes(data)
    out = tmp_path / f"{name}.out"
    result = runner.invoke(app, ["convert", str(source), "-o", str(out), "--format", "json",
                                 *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)["summary"], out


def _text(tmp_path: Path, source: Path, *args: str) -> str:
    result = runner.invoke(app, ["convert", str(source), "-o", str(tmp_path / "text.out"), *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_a_fix_convert_applied_is_listed_as_fixed_not_as_needing_attention(tmp_path: Path):
    # at ROCm 6.4, which has __shfl_down_sync (below 6.2, WRP001 lowers it and drops the mask)
    summary, out = _convert(tmp_path, WAVE, "--rocm", "6.4")
    assert [(e["code"], e["title"], e["locations"]) for e in summary["fixed"]] == [
        ("WAV002", "use 0xffffffffffffffffull", ["a.cu:3:25"])]
    assert "WAV002" not in {entry["code"] for entry in summary["attention"]}
    assert b"0xffffffffffffffffull" in (out / "a.cu").read_bytes()
    text = _text(tmp_path, tmp_path / "src", "--rocm", "6.4")
    fixed = text.index("fixed for AMD:")
    attention = text.index("needs attention")
    assert fixed < text.index("WAV002 use 0xffffffffffffffffull") < attention


def test_a_grouped_line_holds_one_message(tmp_path: Path):
    summary, _ = _convert(tmp_path, WAVE)
    lanes = [(e["message"].split("'")[1], e["count"], e["locations"])
             for e in summary["attention"] if e["code"] == "WAV001"]
    # the two sites of 'threadIdx.x % 32' share an entry; 'tid % 32' (the same operator, the
    # same symbol) has its own
    assert sorted(lanes) == [("threadIdx.x % 32", 2, ["a.cu:4:14", "a.cu:6:20"]),
                             ("threadIdx.x / 32", 1, ["a.cu:5:14"]),
                             ("tid % 32", 1, ["a.cu:8:41"])]


def test_a_marker_is_claimed_only_where_this_run_wrote_one(tmp_path: Path):
    summary, out = _convert(tmp_path, WAVE)
    converted = (out / "a.cu").read_bytes().decode()
    assert summary["attention"] and all(entry["marked"] for entry in summary["attention"])
    for entry in summary["attention"]:  # each has its marker in the output
        assert f"// rocmigrate {entry['code']}: {entry['message']}" in converted
    text = _text(tmp_path, tmp_path / "src")
    assert "needs attention (marked in the output with '// rocmigrate CODE: ...'):" in text
    assert "no marker written" not in text

    # converting the output again: the markers are there already, this run wrote none
    again, second = _convert(tmp_path, converted.encode(), name="again")
    assert (second / "a.cu").read_bytes().decode() == converted
    assert again["attention"] and not any(entry["marked"] for entry in again["attention"])
    text = _text(tmp_path, tmp_path / "again")
    assert "marked in the output" not in text
    assert "needs attention (no marker written by this run):" in text


def test_the_text_summary_splits_marked_from_unmarked_entries():
    def entry(code, message, marked):
        return {"code": code, "symbol": "s", "message": message, "marked": marked, "count": 1,
                "locations": ["a.cu:1:1"]}

    summary = {"files": {"converted": 1, "unchanged": 0, "cached": 0, "copied": 0, "skipped": 0,
                         "failed": 0, "total": 1},
               "converted_references": {}, "optimized": [], "fixed": [],
               "attention": [entry("WAV001", "marked one", True),
                             entry("STM002", "reported one", False)],
               "failures": [], "skipped": [], "notes": [], "removed_stale_outputs": [],
               "support_headers_written": []}
    lines = render_summary(summary).splitlines()
    marked = lines.index("needs attention (marked in the output with '// rocmigrate CODE: ...'):")
    unmarked = lines.index("needs attention (no marker written by this run):")
    assert lines[marked + 1] == "  WAV001 marked one  x1"
    assert lines[unmarked + 1] == "  STM002 reported one  x1"


LOWERED = b"""#include <cuda_runtime.h>
__global__ void k(int* out, float v, int p) {
  unsigned mask = __ballot_sync(0xffffffff, p);
  v += __shfl_xor_sync(0xffffffff, v, 1, 32);
  out[0] = (int)v + (int)mask;
}
"""


def test_a_finding_on_a_lowered_builtin_is_reported_once_at_its_input_line(tmp_path: Path):
    """WRP001 lowers __ballot_sync to __ballot for ROCm 5.2; the WAV003/WAV004 findings on the
    call were reported again on the engine's next round under the lowered name, with the
    output's line numbers."""
    source = tmp_path / "src"
    source.mkdir()
    (source / "a.cu").write_bytes(LOWERED)
    result = runner.invoke(app, ["convert", str(source), "-o", str(tmp_path / "out"),
                                 "--format", "json", "--rocm", "5.2"])
    assert result.exit_code == 0, result.output
    findings = json.loads(result.output)["files"][0]["findings"]
    wave = sorted((f["code"], f["line"]) for f in findings if f["code"] in ("WAV003", "WAV004"))
    assert wave == [("WAV003", 3), ("WAV004", 4)]
    converted = (tmp_path / "out" / "a.cu").read_text()
    assert "__ballot(p)" in converted and "__shfl_xor(v, 1, 32)" in converted


SAME_LINE = b"""#include <cuda_runtime.h>
__global__ void k(int* o, unsigned mask, float v) {


  o[0] = threadIdx.x % 32 + threadIdx.x / 32;
  v += __shfl_sync(mask, v, 0);
  if (threadIdx.x % 32 == 0) atomicAdd((float*)o, v);
}
"""


def test_markers_of_findings_on_one_line_are_written_together_and_reported_at_it(tmp_path):
    """Two markers go above the same line: the second waited for the engine's next round and
    was reported at its line in that round's text (two lines down, below the first marker)."""
    source = tmp_path / "src"
    source.mkdir()
    (source / "a.cu").write_bytes(SAME_LINE)
    result = runner.invoke(app, ["convert", str(source), "-o", str(tmp_path / "out"),
                                 "--format", "json"])
    assert result.exit_code == 0, result.output
    findings = json.loads(result.output)["files"][0]["findings"]
    marked = sorted((f["code"], f["line"], f["column"]) for f in findings
                    if f["code"] in ("WAV001", "WAV002", "WAV004", "ATM003"))
    # (no shuffle of width 32: with one, the kernel is a 32-lane subgroup WAV001 leaves alone)
    assert marked == [("ATM003", 7, 30), ("WAV001", 5, 10), ("WAV001", 5, 29),
                      ("WAV001", 7, 7), ("WAV002", 6, 20)]
    lines = (tmp_path / "out" / "a.cu").read_text().splitlines()
    code = lines.index("  o[0] = threadIdx.x % 32 + threadIdx.x / 32;")
    assert [line.split(":")[0] for line in lines[code - 2 : code]] == \
        ["  // rocmigrate WAV001", "  // rocmigrate WAV001"]
    assert "'threadIdx.x % 32'" in lines[code - 2] and "'threadIdx.x / 32'" in lines[code - 1]


def test_the_same_marker_twice_on_one_line_is_written_once(tmp_path: Path):
    source = tmp_path / "src"
    source.mkdir()
    (source / "a.cu").write_bytes(b"#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800\n"
                                  b"int x;\n#endif\n")
    result = runner.invoke(app, ["convert", str(source), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    lines = (tmp_path / "out" / "a.cu").read_text().splitlines()
    assert lines[0].startswith("// rocmigrate API003: __CUDA_ARCH__")
    assert lines[1] == "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800"


def test_a_summary_stored_by_an_earlier_version_is_made_again():
    """A cache's stored summary without the fixed part, or whose attention entries do not say
    whether they are marked, is not taken (the runner makes it again from the findings)."""
    entry = {"code": "WAV001", "symbol": "%", "message": "m", "count": 1, "locations": ["a:1:1"]}
    earlier = {"converted_references": {}, "optimized": [], "attention": [entry]}
    assert not valid_finding_summary(earlier)
    assert not valid_finding_summary(dict(earlier, fixed=[]))
    assert valid_finding_summary(dict(earlier, fixed=[], attention=[dict(entry, marked=True)]))
