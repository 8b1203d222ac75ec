"""`rocmigrate harness --executor slurm` on a real (one-node) Slurm cluster: one job per
translation unit; the same verdicts and outputs as a local run; a re-run resumes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import ROOT
from hip_cpu import HIP_CPU
from migrator.cli import _register, app
from slurm_cluster import slurm  # noqa: F401 (a fixture)

_register()
runner = CliRunner()


def harness(*args: str) -> tuple[int, dict, str]:
    result = runner.invoke(app, ["harness", *args])
    output = Path(args[args.index("-o") + 1])
    return result.exit_code, json.loads((output / "harness.json").read_text()), result.output


@pytest.mark.slow
def test_harnesses_run_on_hips_cpu_runtime_as_in_a_local_run(tmp_path: Path, slurm,
                                                             monkeypatch):
    """vector_ops.cu's harnesses, the HIP side on the CPU runtime (64-lane wavefronts): the
    same verdicts and the same output bytes through Slurm as here; then resumed."""
    monkeypatch.setenv("ROCMIGRATE_HIP_CPU", str(HIP_CPU))
    common = [str(ROOT / "kernels" / "vector_ops.cu"), "--hip-compiler", "hip-cpu", "--gpu",
              "none", "--runs", "1", "--warmup", "0", "--kernel", "saxpy", "--kernel",
              "multiply"]
    local_folder, slurm_folder = tmp_path / "local", tmp_path / "slurm"
    code, local, output = harness(*common, "-o", str(local_folder))
    assert code == 0, output
    code, on_slurm, output = harness(*common, "-o", str(slurm_folder), "--executor", "slurm",
                                     "--partition", slurm)
    assert code == 0, output
    assert "submitted 1 harness job as Slurm array job" in output
    verdicts = {h["name"]: h["verdict"] for h in on_slurm["harnesses"]}
    assert verdicts == {h["name"]: h["verdict"] for h in local["harnesses"]} == \
        {"saxpy": "not-compared", "multiply": "not-compared"}
    for mine, theirs in zip(on_slurm["harnesses"], local["harnesses"]):
        assert mine["binaries"] == theirs["binaries"] and mine["builds"]["hip"]["ok"]
        [run], [local_run] = mine["runs"]["hip"], theirs["runs"]["hip"]
        assert run["rc"] == 0 and run["output"] == local_run["output"]
        assert (slurm_folder / run["output"]).read_bytes() == \
            (local_folder / local_run["output"]).read_bytes()
    [job] = on_slurm["cluster"]["jobs"]
    assert job["key"] == "vector_ops.cu" and job["ok"] and not job["resumed"]
    assert local["cluster"] is None
    assert "## Slurm jobs" in (slurm_folder / "harness.md").read_text()
    code, again, output = harness(*common, "-o", str(slurm_folder), "--executor", "slurm")
    assert code == 0 and "as Slurm array job" not in output
    assert "1 of 1 jobs have results from an earlier run" in output
    assert again["cluster"]["jobs"][0]["resumed"]
    assert [h["verdict"] for h in again["harnesses"]] == list(verdicts.values())
