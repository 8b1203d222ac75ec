"""`rocmigrate report`'s parts on small trees made here: the scan agrees with `convert`, the
inventory, the effort model and its configuration, the pilot's set cover, the batch order,
the evidence read from convert/build/validate outputs, and the renderers."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from migrator.cli import _register, app
from migrator.report import EffortModel, ModelError, ReportOptions, build_report, model_from_table
from migrator.report.effort import load_model
from migrator.report.evidence import gather
from migrator.report.phases import _built_state, batches, choose_pilot, order_modules, self_contained_units
from migrator.settings import Settings
from migrator.versions import parse_target

_register()
runner = CliRunner()
SETTINGS = Settings(rocm=parse_target("6.4"))

UTIL_H = b"""#pragma once
#include <cuda_runtime.h>
__device__ inline float warp_sum(float v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o);
  return v;
}
"""
KERNEL_CU = b"""#include "../common/util.h"
__global__ void scale(float* p) { p[threadIdx.x] = warp_sum(p[threadIdx.x]); }
__global__ void lane(int* p) { int v; asm("mov.u32 %0, %%laneid;" : "=r"(v)); p[0] = v; }
int main() {
  float* d;
  cudaMalloc(&d, 256);
  scale<<<1, 64>>>(d);
  cudaDeviceSynchronize();
  cudaFree(d);
  return 0;
}
"""
BLAS_CU = b"""#include <cublas_v2.h>
#include <cuda_runtime.h>
int main() {
  cublasHandle_t h;
  cublasCreate(&h);
  cublasDestroy(h);
  return 0;
}
"""
CMAKE = b"""cmake_minimum_required(VERSION 3.18)
project(demo LANGUAGES CXX CUDA)
add_executable(a a/kernel.cu)
add_executable(b b/blas.cu)
target_link_libraries(b CUDA::cublas)
"""


TREE_PATHS = ["common/util.h", "a/kernel.cu", "b/blas.cu", "CMakeLists.txt"]


def make_tree(root: Path) -> Path:
    """A small CUDA project: a kernel file with inline PTX including a header with a 32-lane
    warp reduction, a cuBLAS program, a CMakeLists.txt."""
    for rel, data in (("common/util.h", UTIL_H), ("a/kernel.cu", KERNEL_CU),
                      ("b/blas.cu", BLAS_CU), ("CMakeLists.txt", CMAKE)):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root


def report_of(root: Path, out: Path, **options) -> dict:
    settings = options.pop("settings", SETTINGS)
    return build_report(ReportOptions(root, out, settings=settings, jobs=1, **options))


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    return make_tree(tmp_path_factory.mktemp("tree") / "src")


@pytest.fixture(scope="module")
def document(tree, tmp_path_factory) -> dict:
    return report_of(tree, tmp_path_factory.mktemp("report"))


def by_path(document: dict) -> dict:
    return {record["path"]: record for record in document["files"]}


def test_findings_agree_with_convert(tree, document, tmp_path):
    """One source of truth: each file's findings are exactly those `convert` reports, and the
    automatic conversions are convert's converted references."""
    result = runner.invoke(app, ["convert", str(tree), "-o", str(tmp_path / "out"),
                                 "--rocm", "6.4", "--format", "json"])
    assert result.exit_code == 0, result.output
    converted = json.loads(result.stdout)
    expected = {entry["path"]: Counter(f["code"] for f in entry["findings"])
                for entry in converted["files"] if entry["findings"]}
    records = by_path(document)
    assert {path: Counter(record["codes"]) for path, record in records.items()
            if record["codes"]} == expected
    assert document["summary"]["findings"]["automatic"] == sum(
        converted["summary"]["converted_references"].values())


def test_inventory(document):
    totals = document["inventory"]["totals"]
    assert (totals["files"], totals["source_files"], totals["build_files"]) == (4, 3, 1)
    assert totals["lines"] == sum(data.count(b"\n") for data in (UTIL_H, KERNEL_CU, BLAS_CU, CMAKE))
    assert (totals["kernels"], totals["launches"], totals["inline_ptx"]) == (2, 1, 1)
    assert totals["warp_intrinsics"] >= 1  # __shfl_down_sync and the WAV findings on it
    records = by_path(document)
    assert records["a/kernel.cu"]["includes"] == ["common/util.h"]
    # the header, the handle type and two calls; the link to CUDA::cublas in CMakeLists.txt
    assert records["b/blas.cu"]["references"]["cublas"] == 4
    assert records["CMakeLists.txt"]["references"]["cublas"] == 1 == \
        totals["references"]["cublas"] - 4
    libraries = {lib["cuda"]: lib for lib in document["inventory"]["libraries"]}
    assert libraries["cublas"]["amd"] == "hipblas" and libraries["cublas"]["status"] == "mapped"
    folders = {folder["path"]: folder for folder in document["inventory"]["folders"]}
    assert set(folders) == {".", "a", "b", "common"}
    assert folders["a"]["kernels"] == 2


def test_effort_classes_and_hours(document):
    """Inline PTX and a 32-lane reduction left with a marker are blockers; each distinct
    decision is costed once, each site at its class's mechanical hours."""
    records = by_path(document)
    work = {(item["code"], item["class"]) for item in records["a/kernel.cu"]["work"]}
    assert ("PTX001", "blocker") in work
    assert ("WAV001", "blocker") in {(i["code"], i["class"])
                                     for i in records["common/util.h"]["work"]}
    model = EffortModel()
    summary = document["summary"]
    findings = summary["findings"]
    by_class = document["inventory"]["totals"]["hours_by_class"]
    # per site: the class's mechanical hours, whatever the code
    assert by_class["blocker"] == pytest.approx(findings["blocker"] * model.hours["blocker"])
    assert by_class["automatic"] == pytest.approx(findings["automatic"] * model.hours["automatic"])
    # per decision: PTX001 its code's hours, the other blockers and manual ones their class's
    decided = document["decisions"]
    keys = [(d["code"], d["symbol"]) for d in decided]
    assert len(keys) == len(set(keys))
    ptx = [d for d in decided if d["code"] == "PTX001"]
    assert ptx and all(d["hours"] == 8.0 for d in ptx)
    assert all(d["hours"] == {"blocker": 4.0, "manual": 1.0}[d["class"]]
               for d in decided if d["code"] != "PTX001")
    assert sum(d["sites"] for d in decided) == sum(
        1 for r in document["files"] for i in r["work"] if i["class"] in ("manual", "blocker"))
    assert summary["hours_decisions"] == pytest.approx(sum(d["hours"] for d in decided
                                                           if d["phase"] == "port"))
    assert summary["hours_port"] == pytest.approx(sum(by_class.values())
                                                  + summary["hours_decisions"])
    # the preparation phase carries the decisions' hours; the phases add up to the total
    phases = {p["name"]: p for p in document["plan"]["phases"]}
    assert phases["preparation"]["hours"] == pytest.approx(summary["hours_decisions"])
    assert sum(p["hours"] for p in document["plan"]["phases"]) == pytest.approx(
        summary["hours_port"] + summary["hours_optimisation"])
    assert "per decision" in document["model_line"] and "PTX001 8 h" in document["model_line"]
    assert "blocker 4 h" in document["model_line"] and "blocker 0.5 h" in document["model_line"]


def test_one_decision_for_many_sites(tmp_path):
    """Sixty calls of one API without a HIP counterpart are one decision and sixty mechanical
    sites, not sixty decisions (a cg::reduce-like shape); a second API is a second decision."""
    tree = tmp_path / "tree"
    tree.mkdir()
    calls = "".join(f"    cudaGraphInstantiateWithParams(&e{i}, g, &p);\n" for i in range(60))
    (tree / "many.cu").write_text("#include <cuda_runtime.h>\nvoid f(cudaGraph_t g) {\n"
                                  "    cudaGraphInstantiateParams p;\n"
                                  + "".join(f"    cudaGraphExec_t e{i};\n" for i in range(60))
                                  + calls + "}\n")
    document = report_of(tree, tmp_path / "r", settings=Settings(rocm=parse_target("5.2")))
    decided = [d for d in document["decisions"]
               if d["symbol"] == "cudaGraphInstantiateWithParams"]
    assert len(decided) == 1, document["decisions"]
    assert decided[0]["sites"] == 60 and decided[0]["files"] == 1
    assert decided[0]["hours"] == 4.0 and decided[0]["site_hours"] == pytest.approx(60 * 0.5)
    per_site_before = 60 * 4.0  # the old model: every site a blocker decision
    assert document["summary"]["hours_port"] < per_site_before / 4


def test_decision_keys_are_names():
    """A decision is a code with the API, header or macro it names; a code whose findings name
    an operator or a phrase (wave64 hazards) is one decision for the tree."""
    from migrator.report.effort import decision_key

    assert decision_key("CGM001", "cg::reduce") == ("CGM001", "cg::reduce")
    assert decision_key("HDR002", "cuda/atomic") == ("HDR002", "cuda/atomic")
    assert decision_key("API003", " __nanosleep ") == ("API003", "__nanosleep")
    assert decision_key("ARG002", "cudaFuncSetAttribute", "runtime", "api") == (
        "ARG002", "cudaFuncSetAttribute")
    assert decision_key("HMT001", "normcdf", "device", "portability") == ("HMT001", "normcdf")
    # wave64 hazards, transfers of a variable, build flags: one decision per code
    assert decision_key("WAV001", "%", family="wavefront") == decision_key(
        "WAV001", "warps per block", family="wavefront") == ("WAV001", "")
    assert decision_key("WAV002", "__shfl_sync", "device", "wavefront") == decision_key(
        "WAV002", "__shfl_down_sync", "device", "wavefront") == ("WAV002", "")
    assert decision_key("XFR005", "h_ref_end", "", "transfers") == decision_key(
        "XFR005", "df", "runtime", "transfers") == ("XFR005", "")
    assert decision_key("STM001", "StreamCreate", "runtime", "streams") == ("STM001", "")
    # NVML's link name and its API's are one library
    assert decision_key("MKF007", "nvidia-ml", "nvidia-ml", "build") == decision_key(
        "HDR002", "nvml.h", "nvml") == ("API004", "library nvml")
    assert decision_key("MKF002", "-arch", "build files", "build") == ("MKF002", "")
    # a library without a drop-in is one decision for its symbols, headers and link
    assert decision_key("API004", "cudnnCreate", "cudnn") == decision_key(
        "HDR002", "cudnn.h", "cudnn") == decision_key("MKF007", "cudnn", "cudnn") == (
        "API004", "library cudnn")
    assert decision_key("HDR002", "cuda/atomic", "runtime") == ("HDR002", "cuda/atomic")


def test_model_from_configuration(tree, tmp_path):
    config = tmp_path / "pyproject.toml"
    config.write_text('[tool.rocmigrate.report]\nhours = { blocker = 10.0, automatic = 0 }\n'
                      'decision-hours = { manual = 3 }\n'
                      'code-hours = { PTX001 = 20 }\ncode-class = { WAV002 = "manual" }\n'
                      'hours-per-week = 20\npilot-share = 0.25\n')
    model = load_model(config, ["PTX001", "WAV002", "WAV001"])
    assert model.hours["blocker"] == 10.0 and model.code_class == {"WAV002": "manual"}
    assert model.decision_hours["manual"] == 3.0 and model.pilot_share == 0.25
    document = report_of(tree, tmp_path / "r", model=model)
    findings = document["summary"]["findings"]
    by_class = document["inventory"]["totals"]["hours_by_class"]
    assert by_class["blocker"] == pytest.approx(10.0 * findings["blocker"])
    assert by_class["automatic"] == 0
    assert ("WAV002", "manual") in {(i["code"], i["class"])
                                    for i in by_path(document)["common/util.h"]["work"]}
    decided = {d["code"]: d for d in document["decisions"]}
    assert decided["PTX001"]["hours"] == 20.0 and decided["WAV002"]["hours"] == 3.0
    assert document["model"]["source"] == str(config)
    assert document["model"]["decision_hours"]["manual"] == 3.0
    assert document["summary"]["person_weeks"] == pytest.approx(
        document["summary"]["hours_port"] / 20, abs=0.01)


@pytest.mark.parametrize("table, message", [
    ({"hour": {}}, "unknown key 'hour'"),
    ({"hours": {"urgent": 1}}, "unknown class 'urgent'"),
    ({"hours": {"manual": -1}}, "report.hours.manual must be a number"),
    ({"code-class": {"PTX001": "easy"}}, "report.code-class.PTX001 must be one of"),
    ({"code-hours": {"ptx": 1}}, "'ptx' is not a rule code"),
    ({"pilot-modules": 0}, "pilot-modules must be a whole number"),
    ({"pilot-share": 0}, "pilot-share must be a share"),
    ({"pilot-share": 1.5}, "pilot-share must be a share"),
    ({"decision-hours": {"hard": 1}}, "decision-hours: unknown class 'hard'"),
    ({"decision-hours": {"blocker": -2}}, "report.decision-hours.blocker must be a number"),
    ({"batch-hours": 0}, "must be above 0"),
])
def test_bad_model_tables(table, message):
    with pytest.raises(ModelError, match=message.replace("(", r"\(")):
        model_from_table(table, "pyproject.toml")


def test_unknown_code_in_model(tmp_path):
    config = tmp_path / ".rocmigrate.toml"
    config.write_text("[report]\ncode-hours = { ZZZ999 = 3 }\n")
    with pytest.raises(ModelError, match="no rule has the code 'ZZZ999'"):
        load_model(config, ["PTX001"])


def _record(path: str, lines: int, codes: dict, includes=(), hours=1.0, kind="source") -> dict:
    folder = path.rsplit("/", 1)[0] if "/" in path else "."
    return {"path": path, "folder": folder, "kind": kind, "lines": lines, "codes": codes,
            "references": {}, "patterns": [], "inline_ptx": 0, "textures": 0,
            "warp_intrinsics": 0, "kernels": 0, "includes": list(includes),
            "hours": {"port": hours, "optimisation": 0.0}, "status": "unchanged"}


def _paths(records: list[dict]) -> list[str]:
    return [r["path"] for r in records]


def test_pilot_units_are_self_contained():
    """A unit is a translation unit with the project files it includes, directly or not;
    headers are no unit of their own."""
    records = [_record("app/main.cu", 30, {}, includes=["lib/l.cuh"]),
               _record("lib/l.cuh", 20, {}, includes=["lib/base.h"]),
               _record("lib/base.h", 5, {}),
               _record("tool/t.cu", 10, {})]
    assert self_contained_units(records) == {
        "app/main.cu": ["app/main.cu", "lib/l.cuh", "lib/base.h"], "tool/t.cu": ["tool/t.cu"]}
    headers = [_record("x.h", 1, {}), _record("y.cuh", 1, {})]  # no unit: each file alone
    assert self_contained_units(headers) == {"x.h": ["x.h"], "y.cuh": ["y.cuh"]}


def test_pilot_is_a_budgeted_weighted_cover():
    """The most new pattern weight (files using a pattern) per line first, within the share
    of the tree's lines: b (3 codes, 2 of them common, in 10 lines) before a; c adds nothing
    once they are in; the big one does not fit."""
    records = [_record("a/x.cu", 100, {"API001": 1, "PTX001": 1, "SHM001": 1}),
               _record("b/x.cu", 10, {"API001": 1, "WAV001": 1, "SHM001": 1}),
               _record("c/x.cu", 5, {"API001": 1}),
               _record("big/x.cu", 2000, {"XFR001": 1, "API001": 1}),
               _record("d/CMakeLists.txt", 2, {"CMK001": 1}, kind="build")]
    pilot = choose_pilot(records, limit=3, share=0.1)
    assert pilot.units == ["b/x.cu", "a/x.cu"]
    assert pilot.lines == 110 and pilot.total_lines == 2117 and not pilot.over_budget
    assert pilot.covered == {"API001", "PTX001", "SHM001", "WAV001"}
    assert pilot.everything - pilot.covered == {"CMK001", "build:cmake", "XFR001"}
    assert pilot.weight_covered == 4 + 2 + 1 + 1 and pilot.weight_total == 4 + 2 + 1 + 1 + 1 + 1 + 1
    assert choose_pilot(records, limit=1, share=0.1).units == ["b/x.cu"]
    # a tighter share leaves a out
    assert choose_pilot(records, limit=3, share=0.01).units == ["b/x.cu"]


def test_pilot_over_budget_is_said():
    """A tree whose one translation unit includes everything has no slice within the share:
    the pilot is that unit, and says so."""
    records = [_record("main.cu", 100, {"API001": 1}, includes=["a.cuh", "b.cuh"]),
               _record("a.cuh", 400, {"WAV001": 1}), _record("b.cuh", 500, {"SHM001": 1})]
    pilot = choose_pilot(records, limit=3, share=0.1)
    assert pilot.units == ["main.cu"] and pilot.over_budget and pilot.lines == 1000


def test_pilot_goes_past_the_share_to_show_the_main_work():
    """A small unit fits the share but covers little; the program holding the tree's main
    work is taken too, and the pilot says it is over the share."""
    records = [_record("compare.cu", 60, {"API001": 1}),
               _record("driver.cpp", 900, {"API001": 1, "BLS001": 1, "API003": 1, "DRV001": 1},
                       includes=["driver.h"]),
               _record("driver.h", 40, {"API002": 1})]
    pilot = choose_pilot(records, limit=3, share=0.1)
    assert pilot.units == ["compare.cu", "driver.cpp"] and pilot.over_budget
    assert pilot.paths == ["compare.cu", "driver.cpp", "driver.h"] and pilot.lines == 1000
    assert 2 * pilot.weight_covered >= pilot.weight_total


def test_pilot_prefers_the_main_patterns():
    """A pattern many files use weighs more: the unit with the tree's common API wins over
    one with a rare one of the same size."""
    common = [_record(f"m{i}/x.cu", 100, {"API001": 1}) for i in range(8)]
    records = common + [_record("rare/x.cu", 100, {"XFR001": 1})]
    assert choose_pilot(records, limit=1, share=0.5).units[0].startswith("m")


def test_batches_follow_the_include_graph():
    """A module comes after the modules it includes, however cheap it is; among ready modules
    the cheapest goes first; batches close when they reach the batch size."""
    units = {"app": [_record("app/m.cu", 10, {}, includes=["lib/l.h"], hours=1.0)],
             "lib": [_record("lib/l.h", 10, {}, includes=["base/b.h"], hours=5.0)],
             "base": [_record("base/b.h", 10, {}, hours=9.0)],
             "tool": [_record("tool/t.cu", 10, {}, hours=2.0)]}
    assert order_modules(units, list(units)) == ["tool", "base", "lib", "app"]
    assert batches(units, list(units), batch_hours=11.0) == [["tool", "base"], ["lib", "app"]]
    # a batch closes before the module that would take it over the size
    assert batches(units, list(units), batch_hours=8.0) == [["tool"], ["base"], ["lib", "app"]]
    cycle = {"x": [_record("x/a.h", 1, {}, includes=["y/b.h"], hours=3.0)],
             "y": [_record("y/b.h", 1, {}, includes=["x/a.h"], hours=1.0)]}
    assert order_modules(cycle, ["x", "y"]) == ["y", "x"]  # a cycle: the cheapest first


def test_phases_and_status_without_evidence(document):
    plan = document["plan"]
    assert [phase["name"] for phase in plan["phases"]] == [
        "preparation", "pilot", "full migration", "optimisation"]
    preparation = plan["phases"][0]
    assert preparation["status"] == "in progress"  # blockers are not decided yet
    assert plan["current"] == "preparation"
    assert [c["text"] for c in plan["next_blocked_by"]] == ["no blocker left without a decision"]
    pilot = plan["phases"][1]
    assert {c["state"] for c in pilot["exit_criteria"]} == {"unknown"}
    summary = plan["pilot"]
    assert set(summary["modules"]) <= {"a/kernel.cu", "b/blas.cu", "a/other.cu"}, summary
    assert summary["lines"] == sum(r["lines"] for r in document["files"]
                                   if r["path"] in summary["paths"])
    assert summary["total_lines"] == document["summary"]["lines"]
    assert "self-contained units" in summary["rule"]
    total = sum(phase["hours"] for phase in plan["phases"][0:3])
    assert total == pytest.approx(document["summary"]["hours_port"])


def test_converted_output_is_evidence(tree, tmp_path):
    """--converted OUT: the pilot's files are converted from their current content; one changed
    since then is named; a damaged cache is a note, not a crash."""
    out = tmp_path / "out"
    converted = runner.invoke(app, ["convert", str(tree), "-o", str(out), "--rocm", "6.4"])
    assert converted.exit_code == 0
    document = report_of(tree, tmp_path / "r1", converted=out)
    pilot = document["plan"]["phases"][1]
    assert pilot["exit_criteria"][0]["state"] == "met"
    assert pilot["status"] == "in progress"
    copy = make_tree(tmp_path / "copy")
    (copy / "a" / "kernel.cu").write_bytes(KERNEL_CU + b"// changed\n")
    (copy / "b" / "blas.cu").write_bytes(BLAS_CU + b"// changed\n")
    changed = report_of(copy, tmp_path / "r2", converted=out)
    criterion = changed["plan"]["phases"][2]["exit_criteria"][0]
    assert criterion["state"] == "not met" and "2 changed since converted" in criterion["detail"]
    (out / ".rocmigrate" / "cache.json").write_text('{"files": {"a.cu": 3}}')
    damaged = report_of(tree, tmp_path / "r3", converted=out)
    assert damaged["plan"]["phases"][1]["exit_criteria"][0]["state"] == "unknown"
    assert any("cache is damaged" in note for note in damaged["notes"])


def test_build_and_validate_reports_are_evidence(tree, tmp_path):
    build = {"tool": "rocmigrate", "report": "build", "schema_version": 1,
             "summary": {"ok": False, "units": 2, "built": 1, "failed": 1, "errors": 1},
             "units": [{"name": "a/kernel.hip", "kind": "translation unit", "built": True,
                        "errors": []},
                       {"name": "b/blas.hip", "kind": "translation unit", "built": False,
                        "errors": [{"message": "x", "source_file": "b/blas.cu"}]}]}
    validate = {"tool": "rocmigrate", "programs": [
        {"name": "a/kernel", "source": "a/kernel.cu", "variants": {
            "optimized": {"verdict": "pass", "timings": [{"key": "t", "port_ms": 1.5}]}}},
        {"name": "b/blas", "source": "b/blas.cu", "variants": {
            "optimized": {"verdict": "slower", "timings": []}}}]}
    (tmp_path / "build.json").write_text(json.dumps(build))
    (tmp_path / "validate.json").write_text(json.dumps(validate))
    evidence = gather(TREE_PATHS, None, tmp_path / "build.json", tmp_path / "validate.json")
    assert evidence.built == {"a/kernel.hip": True, "a/kernel.cu": True, "b/blas.hip": False,
                              "b/blas.cu": False}
    assert evidence.validated == {"a/kernel.cu": "pass", "b/blas.cu": "slower"}
    assert evidence.timed == {"a/kernel.cu"}
    document = report_of(tree, tmp_path / "r", build_report=tmp_path / "build.json",
                         validate_report=tmp_path / "validate.json")
    full = {c["text"]: c for c in document["plan"]["phases"][2]["exit_criteria"]}
    assert full["the port builds"]["state"] == "not met"
    assert "b/blas.cu" in full["the port builds"]["detail"]
    assert full["every program validated"]["state"] == "not met"
    optimisation = document["plan"]["phases"][3]["exit_criteria"][0]
    assert optimisation["state"] == "not met" and "b/blas.cu" in optimisation["detail"]
    (tmp_path / "other.json").write_text('{"ok": true}')
    (tmp_path / "bad.json").write_bytes(b"\xff{")
    notes = gather(TREE_PATHS, None, tmp_path / "other.json", tmp_path / "bad.json").notes
    assert any("not a rocmigrate build report" in n for n in notes)
    assert any("not valid JSON" in n for n in notes)


def test_phases_are_done_only_on_evidence(tree, tmp_path):
    """A build whose every target failed is "N of N targets failed", not a count of files; a
    validate report in which nothing ran proves neither validation nor speed."""
    build = {"tool": "rocmigrate", "report": "build", "schema_version": 1,
             "summary": {"ok": False, "units": 4, "built": 0, "failed": 4, "errors": 4,
                         "targets": 4, "targets_built": 0},
             "units": [{"name": f"gpu{i}", "kind": "target", "built": False,
                        "errors": [{"message": f"undefined reference to cuda{i}",
                                    "source_file": "a/kernel.cu" if i < 2 else ""}]}
                       for i in range(4)]}
    validate = {"tool": "rocmigrate", "programs": [
        {"name": f"p{i}", "source": "a/kernel.cu" if i == 0 else f"x/p{i}.cu",
         "variants": {"optimized": {"verdict": "failed", "timings": []}}} for i in range(28)]}
    (tmp_path / "build.json").write_text(json.dumps(build))
    (tmp_path / "validate.json").write_text(json.dumps(validate))
    document = report_of(tree, tmp_path / "r", build_report=tmp_path / "build.json",
                         validate_report=tmp_path / "validate.json")
    phases = {p["name"]: p for p in document["plan"]["phases"]}
    full = {c["text"]: c for c in phases["full migration"]["exit_criteria"]}
    assert full["the port builds"]["state"] == "not met"
    assert full["the port builds"]["detail"].startswith(
        "4 of 4 targets failed (first: gpu0: undefined reference to cuda0)")
    assert full["every program validated"] == {
        "text": "every program validated", "state": "not met", "blocking": False,
        "detail": "none of 1 program ran (first: a/kernel.cu: failed)"}
    slower = phases["optimisation"]["exit_criteria"][0]
    assert slower["state"] == "unknown", slower
    assert slower["detail"] == "no timed run in the validate report (28 of 28 programs did " \
                               "not run)"
    assert phases["optimisation"]["status"] != "done"
    # the pilot's own files: the build failed before compiling b/blas.cu: no evidence either way
    state = _built_state(["b/blas.cu"], gather(TREE_PATHS, None, tmp_path / "build.json", None))
    assert state[0] == "unknown" and "before any of these files was compiled" in state[1]
    # preparation carries the hours of the decisions it lists
    prep = phases["preparation"]
    decide = prep["work_items"][-1]
    assert decide["decisions"] and decide["hours"] > 0
    assert prep["hours"] == pytest.approx(decide["hours"])


def test_evidence_from_another_root(tmp_path):
    """Evidence made from a folder above the tree (convert and validate of the whole project,
    report of its src/) or from a folder inside it (convert of a/ alone) is read under the
    tree's own paths, with a note; a path outside the tree is left out."""
    project = tmp_path / "project"
    tree = make_tree(project / "src")
    (project / "tools").mkdir()
    (project / "tools" / "kernel.cu").write_bytes(KERNEL_CU)
    whole = tmp_path / "whole"
    assert runner.invoke(app, ["convert", str(project), "-o", str(whole), "--rocm",
                               "6.4"]).exit_code == 0
    validate = {"tool": "rocmigrate", "programs": [
        {"name": "k", "source": "src/a/kernel.cu", "variants": {
            "optimized": {"verdict": "pass", "timings": [{"key": "t", "port_ms": 1.0}]}}},
        {"name": "t", "source": "tools/kernel.cu", "variants": {
            "optimized": {"verdict": "mismatch", "timings": []}}}]}
    (tmp_path / "validate.json").write_text(json.dumps(validate))
    document = report_of(tree, tmp_path / "r1", converted=whole,
                         validate_report=tmp_path / "validate.json")
    full = {c["text"]: c for c in document["plan"]["phases"][2]["exit_criteria"]}
    assert full["every file converted"]["state"] == "met"
    assert full["every program validated"]["state"] == "met"  # tools/ is not this tree's
    assert any(note.startswith("--converted: made from a folder above this tree: its paths "
                               "under 'src/'") for note in document["notes"])
    assert any(note.startswith("--validate-report: made from a folder above")
               for note in document["notes"])

    part = tmp_path / "part"
    assert runner.invoke(app, ["convert", str(tree / "a"), "-o", str(part), "--rocm",
                               "6.4"]).exit_code == 0
    document = report_of(tree, tmp_path / "r2", converted=part)
    criterion = document["plan"]["phases"][2]["exit_criteria"][0]
    assert criterion["state"] == "not met" and "a/kernel.cu" not in criterion["detail"]
    assert "3 not converted" in criterion["detail"]
    assert any("made from the tree's folder 'a'" in note for note in document["notes"])


def test_tree_without_git_says_so(document):
    assert document["owners"]["available"] is False
    assert all(record["owner"] == "" for record in document["files"])
    assert any("not in a git repository" in note for note in document["notes"])


def test_part_way_tree_counts_markers(tmp_path):
    """A tree part-way through its port: HIP code with rocmigrate markers still in it."""
    root = tmp_path / "hip"
    root.mkdir()
    (root / "k.hip").write_bytes(b"#include <hip/hip_runtime.h>\n"
                                 b"// rocmigrate API003: cudaFooBar has no HIP equivalent\n"
                                 b"__global__ void k(int* p) { p[0] = 1; }\n")
    document = report_of(root, tmp_path / "r")
    assert document["inventory"]["totals"]["markers"] == 1
    assert document["inventory"]["totals"]["kernels"] == 1


def test_unreadable_input_is_reported_not_fatal(tmp_path):
    root = tmp_path / "src"
    root.mkdir()
    (root / "bin.cu").write_bytes(bytes(range(256)) * 64)
    (root / "ok.cu").write_bytes(b"__global__ void k() {}\n")
    document = report_of(root, tmp_path / "r")
    records = by_path(document)
    assert records["bin.cu"]["status"] == "failed" and records["bin.cu"]["note"]
    assert document["inventory"]["totals"]["failed_files"] == 1


def test_markdown_is_short_unless_full(document):
    from migrator.output.report_markdown import render_markdown

    short = render_markdown(document)
    full = render_markdown(document, full=True)
    assert "## Phases" in short and "| pilot |" in short
    assert "## Files with work for a person" not in short
    assert "## Files with work for a person" in full and "`a/kernel.cu`" in full
    assert document["model_line"] in short
    assert len(short.splitlines()) < 40


def test_html_is_self_contained_and_escaped(tree, tmp_path):
    from migrator.output.report_html import render_html

    document = report_of(tree, tmp_path / "r")
    document["files"][0]["path"] = "<script>alert(1)</script>"
    page = render_html(document)
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)" in page
    for fetched in ("http://", "https://", "src=", "@import", "<link"):
        assert fetched not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert page.count("<svg") >= 2
    for section in ('id="summary"', 'id="plan"', 'id="owners"', 'id="inventory"',
                    'id="files"', 'id="model"'):
        assert section in page


def test_renderers_show_decisions_pilot_and_fold_long_lists(document):
    """The per-decision model in both renderers: the split of the port hours, the decisions
    (the first 25 in HTML and the rest folded; the first 10 in the short Markdown, all in the
    full one), the pilot line and its over-budget note; the files grouped by folder."""
    import copy

    from markupsafe import escape

    from migrator.output.report_html import FOLDED, render_html
    from migrator.output.report_markdown import render_markdown

    changed = copy.deepcopy(document)
    template = changed["decisions"][0]
    changed["decisions"] = [dict(template, symbol=f"sym{n}") for n in range(40)]
    changed["plan"]["pilot"]["over_budget"] = True
    summary, pilot = changed["summary"], changed["plan"]["pilot"]
    page = render_html(changed)
    assert page.count('<tr data-code=') == 40
    folded = page.index(f"<summary>{40 - FOLDED['decisions']} more decisions</summary>")
    assert page.index('data-symbol="sym24"') < folded < page.index('data-symbol="sym25"')
    assert f'id="v-hours-decisions" data-value="{summary["hours_decisions"]}"' in page
    assert f'id="v-pilot-lines" data-value="{pilot["lines"]}"' in page
    assert 'id="pilot-over-budget"' in page and str(escape(pilot["rule"])) in page
    folders = {record["folder"] for record in changed["files"]}
    assert page.count('<details class="folder"') == len(folders) > 1
    short, full = render_markdown(changed), render_markdown(changed, full=True)
    for text in (short, full):
        assert f"{pilot['lines']:,} lines = {100 * pilot['share']:.1f} % of the tree's" in text
        assert "**Over budget:**" in text and "## Decisions" in text
        assert "%.1f h for %d decisions" % (summary["hours_decisions"],
                                            summary["decisions"]) in text
    assert short.count("`sym") == 10 and "30 more in report.json" in short
    assert full.count("`sym") == 40


def test_scan_crosses_processes_unchanged():
    """A worker's scan is pickled with its rows as columns of text numbers: it comes back
    equal, with findings and without."""
    import pickle

    from migrator.report.scan import scan_file

    for rel, data in (("a/kernel.cu", KERNEL_CU), ("common/util.h", UTIL_H), ("e.cu", b"int x;\n")):
        scan = scan_file(rel, data, SETTINGS)
        back = pickle.loads(pickle.dumps(scan))
        assert back == scan and back.rows == scan.rows
    assert scan_file("a/kernel.cu", KERNEL_CU, SETTINGS).rows  # findings were there to pack
