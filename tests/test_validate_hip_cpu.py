"""validate's CPU side: the ports converted for AMD's HIP CPU runtime (--runtime hip-cpu), built
with g++ against it and run on the CPU with 64-lane wavefronts; without an NVIDIA GPU (or nvcc)
the ports are judged by their self-checks and the optimized one against the naive one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import ROOT
from hip_cpu import HIP_CPU
from migrator.cli import _register, app
from migrator.toolchain.devices import gpu_check
from migrator.toolchain.sides import Build, ToolchainError, hip_toolchain
from migrator.validate import run as validate_run
from migrator.validate.compare import Run
from migrator.validate.run import (Original, ProgramOutcome, ValidateOptions, VariantOutcome,
                                   _judge)

_register()
runner = CliRunner()
NOT_RUN = "no NVIDIA GPU found"


def _run(**values) -> Run:
    result = values.pop("result", "PASS")
    return Run.from_output(0 if result == "PASS" else 1, 0.01, False,
                           json.dumps({**values, "result": result}) + f"\n{result}\n")


def _outcome(naive: list[Run], optimized: list[Run]) -> ProgramOutcome:
    built = Build("hip-cpu", "g++ ...", True, 1.0)
    return ProgramOutcome("p", "p.cu", Original(Build("nvcc", "", False, 0.0, "not built")),
                          {"optimized": VariantOutcome([], built, optimized),
                           "naive": VariantOutcome([], built, naive)})


def test_without_the_original_the_ports_pass_on_their_self_checks_and_agreement():
    outcome = _outcome([_run(sum=10, kernel_ms=2.0)], [_run(sum=10, kernel_ms=1.0)])
    _judge(outcome, ValidateOptions(source=Path(".")), original_not_run=NOT_RUN)
    for port in outcome.variants.values():
        assert (port.verdict, port.problems, port.results) == ("pass", [], [])
        assert port.notes == [f"not compared with the CUDA original: {NOT_RUN}"]
    assert {r.key: r.equal for r in outcome.variants_agree} == {"sum": True}
    [row] = outcome.naive_vs_optimized
    assert (row.key, row.naive_ms, row.optimized_ms, row.ratio) == ("kernel_ms", 2.0, 1.0, 0.5)


def test_an_optimized_port_that_computes_otherwise_than_the_naive_one_is_a_mismatch():
    outcome = _outcome([_run(sum=10)], [_run(sum=11)])
    _judge(outcome, ValidateOptions(source=Path(".")), original_not_run=NOT_RUN)
    optimized = outcome.variants["optimized"]
    assert optimized.verdict == "mismatch" and optimized.notes == []
    assert optimized.problems == ["result sum differs from the naive port's: naive 10, "
                                  "optimized 11"]
    assert outcome.variants["naive"].verdict == "pass"


def test_a_failing_self_check_fails_the_port_without_the_original():
    outcome = _outcome([_run(sum=10, result="FAIL")], [_run(sum=10, result="FAIL")])
    _judge(outcome, ValidateOptions(source=Path(".")), original_not_run=NOT_RUN)
    assert {port.verdict for port in outcome.variants.values()} == {"mismatch"}
    assert outcome.variants["naive"].problems == ["port run 1 did not pass (exit code 1, "
                                                  "status FAIL)"]


def test_the_cpu_is_always_there_and_hip_cpu_converts_for_its_runtime():
    assert gpu_check("cpu", "none").present and gpu_check("cpu").platform == "cpu"
    options = ValidateOptions(source=Path("."), hip_compiler="hip-cpu")
    settings = options.conversion_settings
    assert (settings.runtime, settings.rocm, settings.launch_syntax) == ("hip-cpu", (5, 2, 0),
                                                                         "ggl")
    assert options.as_dict()["rocm"] == "5.2" and options.as_dict()["runtime"] == "hip-cpu"


def test_hip_cpu_needs_its_folder(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("ROCMIGRATE_HIP_CPU", raising=False)
    with pytest.raises(ToolchainError, match="HIP's CPU runtime not named"):
        hip_toolchain("hip-cpu", None, "sm_90", "gfx90a", tmp_path)
    with pytest.raises(ToolchainError, match="not HIP's CPU runtime"):
        hip_toolchain("hip-cpu", None, "sm_90", "gfx90a", tmp_path, hip_cpu=tmp_path)
    result = runner.invoke(app, ["validate", str(ROOT / "kernels"), "-o", str(tmp_path / "r"),
                                 "--hip-compiler", "hip-cpu"])
    assert result.exit_code == 2 and "HIP's CPU runtime not named" in result.output


@pytest.mark.slow
def test_kernels_run_on_hips_cpu_runtime_without_nvcc(tmp_path: Path, monkeypatch):
    """Two of kernels/ (one with dynamic shared memory, SHM003) converted for the CPU runtime,
    built with g++ against it and run with 64-lane wavefronts: both variants pass their
    self-checks and agree; nvcc is not needed. Their CUDA originals' results, recorded by
    `validate kernels` on an H100 (fixtures/hip_cpu/h100_kernels_validate.json, that report's
    two programs), are replayed against them: every result equal."""
    monkeypatch.setattr(validate_run, "find_nvcc", lambda: None)
    monkeypatch.setenv("ROCMIGRATE_HIP_CPU", str(HIP_CPU))
    reports = tmp_path / "reports"
    recorded = ROOT / "fixtures" / "hip_cpu" / "h100_kernels_validate.json"
    result = runner.invoke(app, ["validate", str(ROOT / "kernels"), "-o", str(reports),
                                 "--hip-compiler", "hip-cpu", "--runs", "1", "--warmup", "0",
                                 "--program", "vector_ops", "--program", "shared_memory",
                                 "--reference", str(recorded)])
    document = json.loads((reports / "validate.json").read_text())
    assert result.exit_code == 0, (result.output, document["programs"])
    assert document["toolchains"]["hip"]["name"] == "hip-cpu"
    assert "nvcc not found" in document["original_not_run"]
    assert document["settings"]["runtime"] == "hip-cpu" and document["settings"]["rocm"] == "5.2"
    for program in document["programs"]:
        assert {v["verdict"] for v in program["variants"].values()} == {"pass"}
        assert program["variants_agree"] and all(r["equal"] for r in program["variants_agree"])
        assert program["original"]["recorded"] == str(recorded)
        assert program["original"]["runs"][0]["status"] == "PASS"
        for variant in program["variants"].values():
            assert variant["results"] and all(r["equal"] for r in variant["results"])
            assert f"compared with the CUDA original's results recorded in {recorded}" in \
                variant["notes"]
    markdown = (reports / "validate.md").read_text()
    assert "The CUDA original was not run" in markdown and "HIP's CPU runtime" in markdown
    assert f"the ports were compared with its results recorded in {recorded}" in result.stdout


def _report_of(runs: dict[str, list[Run]]) -> dict:
    """A validate.json as an NVIDIA machine writes it: each program's original and its runs."""
    from dataclasses import asdict

    return {"tool": "rocmigrate", "programs": [
        {"name": name, "original": {"warmups": [], "runs": [asdict(run) for run in recorded]}}
        for name, recorded in runs.items()]}


def test_recorded_results_of_the_original_are_replayed_against_the_ports(tmp_path: Path):
    """--reference: a report recorded where the CUDA original ran (an NVIDIA GPU) gives the
    original's results to a run that cannot run it (the CPU side)."""
    reference = tmp_path / "validate.json"
    reference.write_text(json.dumps(_report_of({"p": [_run(sum=10, kernel_ms=5.0)],
                                                "other": [_run(sum=1)]})))
    recorded = validate_run.read_reference(reference)
    assert sorted(recorded) == ["other", "p"] and recorded["p"][1][0].json["sum"] == 10
    outcome = _outcome([_run(sum=10)], [_run(sum=11)])
    outcome.original.warmups, outcome.original.runs = recorded["p"]
    outcome.original.recorded = str(reference)
    _judge(outcome, ValidateOptions(source=Path("."), reference=reference),
           original_not_run=NOT_RUN)
    naive, optimized = outcome.variants["naive"], outcome.variants["optimized"]
    assert naive.verdict == "pass" and naive.notes == [
        f"compared with the CUDA original's results recorded in {reference}"]
    assert {r.key: r.equal for r in naive.results} == {"sum": True}
    assert optimized.verdict == "mismatch"
    assert "result sum differs: original (recorded) 10, port 11" in optimized.problems
    assert naive.timings == []  # recorded timings are another machine's: never compared


@pytest.mark.parametrize("text, said", [
    ("{", "not a readable validate.json"),
    ('{"tool": "other", "programs": []}', "not a rocmigrate validate report"),
    ('{"tool": "rocmigrate", "programs": [{"name": "p"}]}', "not as validate writes it"),
])
def test_a_bad_reference_is_a_clear_usage_error(tmp_path: Path, text: str, said: str):
    reference = tmp_path / "validate.json"
    reference.write_text(text)
    with pytest.raises(validate_run.ValidateError, match=said):
        validate_run.read_reference(reference)
    result = runner.invoke(app, ["validate", str(ROOT / "kernels"), "-o", str(tmp_path / "r"),
                                 "--reference", str(reference)])
    assert result.exit_code == 2 and said in result.output


def test_a_port_the_cpu_runtime_cannot_build_says_what_it_lacks():
    log = ("p.cu:3:5: error: \u2018cudaFooBar\u2019 was not declared in this scope\n"
           "p.cu:9:1: error: \u2018hipThing\u2019 was not declared in this scope; did you mean "
           "\u2018hipThin\u2019?\n")
    outcome = _outcome([], [])
    outcome.variants["naive"].build = Build("hip-cpu", "g++ ...", False, 1.0, log)
    _judge(outcome, ValidateOptions(source=Path(".")), original_not_run=NOT_RUN)
    naive = outcome.variants["naive"]
    assert naive.verdict == "failed"
    assert naive.problems == ["the port did not build: it needs cudaFooBar, hipThing, which "
                              "HIP's CPU runtime lacks (and rocmigrate's prelude for it does "
                              "not provide): it cannot run there"]


def test_program_arguments_are_chosen_by_name_and_reach_the_runs(tmp_path: Path):
    from migrator.validate.programs import Program, arguments_for

    given = (("reduction", ("1024",)), ("reduction.cu", ("2048", "3")), ("other", ("9",)))
    assert arguments_for(Program("reduction", "reduction.cu"), given) == ("2048", "3")
    assert arguments_for(Program("vector_ops", "vector_ops.cu"), given) == ()
    script = tmp_path / "echo.sh"
    script.write_text("#!/bin/sh\necho \"{\\\"args\\\": \\\"$*\\\", \\\"result\\\": \\\"PASS\\\"}\"\necho PASS\n")
    script.chmod(0o755)
    run = validate_run.run_binary(script, tmp_path, 10, ("1024", "two words"))
    assert run.passed and run.json["args"] == "1024 two words"
    result = runner.invoke(app, ["validate", str(ROOT / "kernels"), "--program-args", "nope"])
    assert result.exit_code == 2 and "is not NAME=ARGS" in result.output


def test_a_port_on_the_cpu_is_never_timed_against_an_original_on_a_gpu():
    """With an NVIDIA GPU the original runs there and the ports on the CPU: results are
    compared, timings are not (a CPU would always be 'slower')."""
    outcome = _outcome([_run(sum=10, kernel_ms=900.0)] * 3, [_run(sum=10, kernel_ms=800.0)] * 3)
    outcome.original = Original(Build("nvcc", "nvcc ...", True, 1.0),
                                [_run(sum=10, kernel_ms=1.0)] * 3)
    _judge(outcome, ValidateOptions(source=Path("."), hip_compiler="hip-cpu"))
    for port in outcome.variants.values():
        assert port.verdict == "pass" and port.timings == [] and port.derived == []
        assert {r.key: r.equal for r in port.results} == {"sum": True}
        assert port.notes == ["timings not compared: the original ran on the NVIDIA GPU, the "
                              "port on the CPU (HIP's CPU runtime)"]
    [row] = outcome.naive_vs_optimized  # both variants ran on the CPU: that ratio stands
    assert row.ratio == 800.0 / 900.0
