"""The kernel harnesses on AMD's HIP CPU runtime (--hip-compiler hip-cpu): the HIP side
converted for it (hipLaunchKernelGGL launches), built with g++ and run on the CPU with 64-lane
wavefronts; without an NVIDIA GPU it runs alone, compared with the CUDA outputs an earlier
harness run recorded (--reference) or reported not compared, never passed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import ROOT
from hip_cpu import HIP_CPU
from migrator.cli import _register, app
from migrator.harness import HarnessOptions
from migrator.harness import run as harness_run
from migrator.harness.outputs import write_output
from migrator.harness.render import render_harness
from migrator.harness.run import (HarnessError, HarnessOutcome, HarnessReport, SideRun,
                                  gpus_for, judge, read_reference)
from migrator.harness.spec import load_spec, write_spec
from migrator.toolchain.sides import Build
from test_harness import SAXPY, SAXPY_HOST, buffer, spec_of

_register()
runner = CliRunner()
NOT_RUN = "no NVIDIA GPU found"
GPUS = {"cuda": {"usable": False, "seen": NOT_RUN}, "hip": {"usable": True, "seen": "the CPU"}}


def _ran(folder: Path, side: str = "hip", values=(1.0, 2.0), spec: str = "main/saxpy.toml",
         runs: int = 2) -> HarnessOutcome:
    """A saxpy harness whose ``side`` ran ``runs`` times in ``folder``, writing ``values``."""
    write_spec(folder / spec, spec_of(SAXPY, SAXPY_HOST), force=True)
    outcome = HarnessOutcome("saxpy", "saxpy", "main.cu", spec, "written",
                             sources={"hip": "main/saxpy.hip.cpp"},
                             builds={"hip": Build("hip-cpu", "g++ ...", True, 1.0)})
    outcome.loaded = load_spec(folder / spec)
    for number in range(1, runs + 1):
        output = f"build/main/saxpy.{side}.{number}.out"
        (folder / output).parent.mkdir(parents=True, exist_ok=True)
        write_output(folder / output, [buffer("y", "f32", list(values))])
        outcome.runs.setdefault(side, []).append(SideRun(0, 0.1, False, [3.0], output))
    return outcome


def _reference(folder: Path, values=(1.0, 2.0)) -> Path:
    """An earlier harness output whose CUDA side ran saxpy (as an NVIDIA machine writes it)."""
    from dataclasses import asdict

    recorded = _ran(folder, "cuda", values)
    entry = asdict(recorded)
    del entry["loaded"]
    (folder / "harness.json").write_text(json.dumps({"tool": "rocmigrate",
                                                     "harnesses": [entry]}))
    return folder


def test_without_a_reference_the_hip_side_is_not_compared_never_passed(tmp_path: Path):
    outcome = _ran(tmp_path)
    judge(outcome, HarnessOptions(tmp_path, tmp_path), GPUS, NOT_RUN, {})
    assert outcome.verdict == "not-compared" and outcome.buffers == [] and not outcome.recorded
    [problem] = outcome.problems
    assert problem.startswith("not compared with CUDA: the HIP side ran 2 time(s) at 64 lanes")
    assert NOT_RUN in problem and "--reference" in problem
    assert outcome.timings["hip"].median_ms == 3.0 and outcome.timing is None
    report = HarnessReport({}, {}, GPUS, {}, [], [outcome], NOT_RUN)
    assert report.ok  # nothing failed: the comparison is what is missing, and it says so


@pytest.mark.parametrize("values, verdict", [((1.0, 2.0), "pass"), ((1.0, 2.5), "mismatch")])
def test_the_hip_side_is_compared_with_the_recorded_cuda_outputs(tmp_path: Path, values,
                                                                 verdict):
    reference = _reference(tmp_path / "nvidia")
    recorded = read_reference(reference)
    assert recorded == {"main/saxpy.toml": ("main/saxpy.toml", [
        "build/main/saxpy.cuda.1.out", "build/main/saxpy.cuda.2.out"])}
    outcome = _ran(tmp_path / "cpu", values=values)
    judge(outcome, HarnessOptions(tmp_path, tmp_path / "cpu", reference=reference), GPUS,
          NOT_RUN, recorded)
    assert outcome.verdict == verdict and outcome.recorded == str(reference)
    assert [b.equal for b in outcome.buffers] == [verdict == "pass"]
    assert outcome.timing is None and outcome.ratio is None  # a CPU's times are not a GPU's
    if verdict == "mismatch":
        assert outcome.problems == ["y: 1 value(s) differ, first at 1: original 2.0, port 2.5"]


def test_a_reference_of_another_spec_or_without_the_harness_is_not_compared(tmp_path: Path):
    reference = _reference(tmp_path / "nvidia")
    recorded = read_reference(reference)
    options = HarnessOptions(tmp_path, tmp_path / "cpu", reference=reference)
    other = _ran(tmp_path / "cpu", spec="other/saxpy.toml")
    judge(other, options, GPUS, NOT_RUN, recorded)
    assert other.verdict == "not-compared"
    assert f"{reference} recorded no CUDA run of other/saxpy.toml" in other.problems[0]
    edited = _ran(tmp_path / "cpu")
    document = spec_of(SAXPY, SAXPY_HOST)
    document["launch"]["grid"] = [256, 1, 1]  # half the threads: other outputs
    write_spec(reference / "main" / "saxpy.toml", document, force=True)
    judge(edited, options, GPUS, NOT_RUN, recorded)
    assert edited.verdict == "not-compared" and "differs from the one" in edited.problems[0]


def test_with_an_nvidia_gpu_both_sides_run_and_the_cpu_is_never_called_slower(tmp_path: Path):
    outcome = _ran(tmp_path, "cuda", runs=8)
    for number in range(1, 9):  # the CPU a thousand times slower than the GPU
        output = f"build/main/saxpy.hip.{number}.out"
        write_output(tmp_path / output, [buffer("y", "f32", [1.0, 2.0])])
        outcome.runs.setdefault("hip", []).append(SideRun(0, 1.0, False, [3000.0], output))
    both = {side: {"usable": True, "seen": side} for side in ("cuda", "hip")}
    judge(outcome, HarnessOptions(tmp_path, tmp_path, hip_compiler="hip-cpu"), both)
    assert (outcome.verdict, outcome.timing, outcome.ratio) == ("pass", None, None)
    assert outcome.timings["hip"].median_ms == 3000.0
    judge(outcome, HarnessOptions(tmp_path, tmp_path), both)  # two GPUs: slower
    assert outcome.verdict == "slower"


def test_a_reference_is_read_as_untrusted_input(tmp_path: Path):
    with pytest.raises(HarnessError, match="no harness report to read"):
        read_reference(tmp_path)
    (tmp_path / "harness.json").write_text('{"harnesses": [{"runs": {}}]}')
    with pytest.raises(HarnessError, match="not a rocmigrate harness report"):
        read_reference(tmp_path)
    run = {"rc": 0, "timed_out": False, "output": "../../etc/passwd"}
    failed = {"rc": 1, "timed_out": False, "output": "build/x.cuda.1.out"}
    (tmp_path / "harness.json").write_text(json.dumps({"harnesses": [
        {"spec": "a/x.toml", "runs": {"cuda": [run]}},
        {"spec": "b/x.toml", "runs": {"cuda": [failed]}},
        {"spec": "c/x.toml", "runs": {"hip": [failed]}}]}))
    assert read_reference(tmp_path) == {}  # outside the folder, failed, or no CUDA run


def test_the_hip_side_launches_with_hipLaunchKernelGGL_for_the_cpu_runtime(tmp_path: Path):
    """g++ cannot read <<<>>>: at ggl (the CPU runtime's conversion) the HIP side launches with
    hipLaunchKernelGGL, the kernel's name inside HIP_KERNEL_NAME (a template's commas)."""
    spec = _ran(tmp_path, runs=0).loaded
    hip = render_harness(spec, "hip", "main.cu.hip", False, "main/saxpy", "ggl")
    assert "hipLaunchKernelGGL(HIP_KERNEL_NAME(saxpy), dim3(" in hip and "<<<" not in hip
    assert "0, rocmigrate_stream,\n            rocmigrate_harness::Value<long long>" in hip
    cuda = render_harness(spec, "cuda", "main.cu", False, "main/saxpy", "ggl")
    assert "saxpy<<<dim3(" in cuda and "hipLaunchKernelGGL" not in cuda
    assert "saxpy<<<dim3(" in render_harness(spec, "hip", "main.cu.hip", False, "main/saxpy")


def test_the_cpu_runs_the_hip_side_whatever_the_gpus():
    assert gpus_for("hip-cpu", "none") == {
        "cuda": {"usable": False, "seen": "NVIDIA GPU taken as absent (--gpu / "
                 "ROCMIGRATE_GPU=none)"},
        "hip": {"usable": True, "seen": "the CPU: HIP's CPU runtime needs no GPU (64-lane "
                "wavefronts)"}}
    options = HarnessOptions(Path("."), Path("out"), hip_compiler="hip-cpu")
    settings = options.conversion_settings
    assert (settings.runtime, settings.rocm, settings.launch_syntax) == ("hip-cpu", (5, 2, 0),
                                                                         "ggl")
    assert options.as_dict()["rocm"] == "5.2" and options.as_dict()["runtime"] == "hip-cpu"


def test_validate_harness_passes_the_cpu_runtime_through(tmp_path: Path, monkeypatch):
    import migrator.harness as harness_package
    from migrator.cli.validate import _kernel_harnesses
    from migrator.validate.run import ValidateOptions

    seen = {}

    def stand_in(options, progress=None):
        seen["options"] = options
        return HarnessReport(options.as_dict(), {}, {}, {}, [], [])

    monkeypatch.setattr(harness_package, "harness", stand_in)
    monkeypatch.setattr("migrator.output.harness_json.render_json", lambda report: "{}")
    monkeypatch.setattr("migrator.output.harness_markdown.render_markdown", lambda report: "")
    earlier = tmp_path / "nvidia"
    (earlier / "harness").mkdir(parents=True)
    (earlier / "harness" / "harness.json").write_text("{}")
    options = ValidateOptions(source=tmp_path, hip_compiler="hip-cpu", hip_cpu="/opt/hip-cpu",
                              reference=earlier / "validate.json")
    _kernel_harnesses(options, tmp_path / "out", lambda line: None)
    given = seen["options"]
    assert (given.hip_compiler, given.hip_cpu) == ("hip-cpu", "/opt/hip-cpu")
    assert given.reference == earlier / "harness"
    assert given.conversion_settings.launch_syntax == "ggl"


@pytest.mark.slow
def test_vector_ops_harnesses_run_on_hips_cpu_runtime_without_nvcc(tmp_path: Path, monkeypatch):
    """kernels/vector_ops.cu's harnesses: the HIP side converted for the CPU runtime, built with
    g++ and run at 64 lanes without nvcc; not compared, then compared with a reference."""
    monkeypatch.setattr(harness_run, "find_nvcc", lambda: None)
    monkeypatch.setenv("ROCMIGRATE_HIP_CPU", str(HIP_CPU))
    source = ROOT / "kernels" / "vector_ops.cu"
    first = tmp_path / "first"
    arguments = ["harness", str(source), "--hip-compiler", "hip-cpu", "--runs", "1",
                 "--warmup", "0", "--kernel", "saxpy"]
    result = runner.invoke(app, [*arguments, "-o", str(first)])
    document = json.loads((first / "harness.json").read_text())
    assert result.exit_code == 0, (result.output, document["harnesses"])
    assert document["toolchains"]["hip"]["name"] == "hip-cpu"
    assert "nvcc not found" in document["original_not_run"]
    assert document["settings"]["runtime"] == "hip-cpu" and document["settings"]["rocm"] == "5.2"
    [saxpy] = document["harnesses"]
    assert saxpy["verdict"] == "not-compared" and list(saxpy["builds"]) == ["hip"]
    assert saxpy["problems"][0].startswith("not compared with CUDA: the HIP side ran 1 time(s)")
    assert "hipLaunchKernelGGL(HIP_KERNEL_NAME(saxpy)" in \
        (first / saxpy["sources"]["hip"]).read_text()
    assert "The CUDA side was not run" in (first / "harness.md").read_text()
    # the same outputs recorded as a CUDA side's (as an NVIDIA machine would write them)
    reference = tmp_path / "reference"
    shutil.copytree(first, reference)
    saxpy["runs"]["cuda"] = saxpy["runs"]["hip"]
    (reference / "harness.json").write_text(json.dumps(document))
    second = tmp_path / "second"
    result = runner.invoke(app, [*arguments, "-o", str(second), "--reference", str(reference)])
    [saxpy] = json.loads((second / "harness.json").read_text())["harnesses"]
    assert result.exit_code == 0, (result.output, saxpy)
    assert (saxpy["verdict"], saxpy["recorded"]) == ("pass", str(reference))
    assert saxpy["buffers"] and all(b["equal"] for b in saxpy["buffers"])
    # run again from its report (python -m migrator.harness DIR): the HIP side alone again,
    # against the same reference
    again = harness_run.run_again(second, runs=1, warmup=0)
    [saxpy] = again.harnesses
    assert again.original_not_run and (saxpy.verdict, saxpy.recorded) == ("pass", str(reference))
    assert list(saxpy.runs) == ["hip"]
