"""`rocmigrate validate --executor slurm` on a real (one-node) Slurm cluster: the same report as
a local run; a job that fails, one that times out and one cancelled by Ctrl-C are reported with
Slurm's state, retried as configured, and a re-run with the same output folder resumes."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import ROOT, require_tool
from hip_cpu import HIP_CPU
from migrator.cli import _register, app
from migrator.validate.compare import key_kind
from slurm_cluster import job_state, slurm, wait_for  # noqa: F401 (a fixture)

_register()
runner = CliRunner()

FAST = ('#include <cstdio>\n'
        'int main() { printf("{\\"sum\\": 3, \\"result\\": \\"PASS\\"}\\nPASS\\n"); return 0; }\n')
# sleeps $ROCMIGRATE_TEST_SLEEP seconds: long for the Ctrl-C test, none when resumed
SLOW = ('#include <cstdio>\n#include <cstdlib>\n#include <unistd.h>\n'
        'int main() { const char* s = getenv("ROCMIGRATE_TEST_SLEEP");\n'
        '  if (s) sleep(atoi(s));\n'
        '  printf("{\\"slept\\": 1, \\"result\\": \\"PASS\\"}\\nPASS\\n"); return 0; }\n')
# kills the process that runs it: on a node, the job itself (as a node failure or an OOM kill
# would end it), which then writes no record
KILLER = ('#include <csignal>\n#include <cstdio>\n#include <unistd.h>\n'
          'int main() { kill(getppid(), SIGKILL); printf("PASS\\n"); return 0; }\n')


@pytest.fixture
def host_programs(monkeypatch) -> None:
    """nvcc on PATH, an NVIDIA GPU taken as present (these programs run on the host), and no
    --gres asked for (the CI cluster has no GPUs to schedule)."""
    nvcc = require_tool("nvcc", "/usr/local/cuda/bin/nvcc")
    monkeypatch.setenv("PATH", f"{Path(nvcc).parent}:{os.environ.get('PATH', '')}")
    monkeypatch.setenv("ROCMIGRATE_GPU", "nvidia")


def tree(root: Path, **programs: str) -> Path:
    src = root / "src"
    src.mkdir()
    for name, text in programs.items():
        (src / f"{name}.cu").write_text(text)
    return src


def validate(*args: str) -> tuple[int, dict, str]:
    result = runner.invoke(app, ["validate", *args])
    output = Path(args[args.index("-o") + 1])
    document = json.loads((output / "validate.json").read_text()) \
        if (output / "validate.json").is_file() else {}
    return result.exit_code, document, result.output


def results(run: dict) -> dict:
    """A run's results, without its timings and the figures derived from them."""
    return {key: value for key, value in run["json"].items()
            if key_kind(key) not in ("timing", "derived")}


def verdicts(document: dict) -> dict:
    return {program["name"]: {variant: port["verdict"]
                              for variant, port in program["variants"].items()}
            for program in document["programs"]}


@pytest.mark.slow
def test_build_only_over_the_kernels_equals_a_local_run(tmp_path: Path, slurm: str,
                                                         host_programs):
    common = [str(ROOT / "kernels"), "--build-only", "--hip-compiler", "nvcc"]
    code, local, output = validate(*common, "-o", str(tmp_path / "local"))
    assert code == 0, output
    code, on_slurm, output = validate(*common, "-o", str(tmp_path / "slurm"), "--executor",
                                      "slurm", "--partition", slurm)
    assert code == 0, output
    assert verdicts(on_slurm) == verdicts(local) and len(local["programs"]) == 10
    for mine, theirs in zip(on_slurm["programs"], local["programs"]):
        assert mine["original"]["build"]["ok"] == theirs["original"]["build"]["ok"] is True
        assert mine["job"]["ok"] and mine["job"]["node"] and not mine["job"]["resumed"]
        assert theirs["job"] is None
    assert on_slurm["settings"]["executor"]["partition"] == slurm
    assert re.search(r"submitted 10 validate jobs as Slurm array job \d+", output)
    markdown = (tmp_path / "slurm" / "validate.md").read_text()
    assert "## Slurm jobs" in markdown and "10 of 10 jobs have a result" in markdown
    # the same output folder again: every job's record is reused, nothing is submitted
    code, again, output = validate(*common, "-o", str(tmp_path / "slurm"), "--executor",
                                   "slurm", "--partition", slurm)
    assert code == 0 and "as Slurm array job" not in output
    assert "10 of 10 jobs have results from an earlier run" in output
    assert all(program["job"]["resumed"] for program in again["programs"])
    assert verdicts(again) == verdicts(local)


@pytest.mark.slow
def test_ports_run_on_hips_cpu_runtime_as_in_a_local_run(tmp_path: Path, slurm: str,
                                                         monkeypatch):
    """The CPU side (64-lane wavefronts) through Slurm: the same verdicts and results."""
    monkeypatch.setenv("ROCMIGRATE_HIP_CPU", str(HIP_CPU))
    common = [str(ROOT / "kernels"), "--hip-compiler", "hip-cpu", "--gpu", "none", "--runs",
              "1", "--warmup", "0", "--program", "vector_ops"]
    code, local, output = validate(*common, "-o", str(tmp_path / "local"))
    assert code == 0, output
    code, on_slurm, output = validate(*common, "-o", str(tmp_path / "slurm"), "--executor",
                                      "slurm")
    assert code == 0, output
    assert verdicts(on_slurm) == verdicts(local) == {"vector_ops": {"optimized": "pass",
                                                                    "naive": "pass"}}
    [mine], [theirs] = on_slurm["programs"], local["programs"]
    assert mine["variants_agree"] == theirs["variants_agree"]
    for variant in ("optimized", "naive"):  # the same results; timings are the node's own
        assert [results(run) for run in mine["variants"][variant]["runs"]] == \
            [results(run) for run in theirs["variants"][variant]["runs"]]
    assert on_slurm["original_not_run"] == local["original_not_run"]


@pytest.mark.slow
def test_a_job_that_dies_is_reported_with_slurms_state_and_retried(tmp_path: Path, slurm: str,
                                                                   host_programs):
    src = tree(tmp_path, fast=FAST, killer=KILLER)
    args = [str(src), "-o", str(tmp_path / "out"), "--executor", "slurm", "--variant", "naive",
            "--runs", "1", "--warmup", "0", "--retries", "1", "--gres", "none"]
    code, document, output = validate(*args)
    assert code == 1, output
    programs = {program["name"]: program for program in document["programs"]}
    assert programs["fast"]["variants"]["naive"]["verdict"] == "pass"
    job = programs["killer"]["job"]
    assert not job["ok"] and len(job["attempts"]) == 2  # the first try and one retry
    for attempt in job["attempts"]:
        assert attempt["state"].startswith("FAILED"), attempt
    assert "submitting it again" in output
    port = programs["killer"]["variants"]["naive"]
    assert port["verdict"] == "failed"
    assert port["problems"][0].startswith("no result from its Slurm job: Slurm job ")
    assert "FAILED" in port["problems"][0]
    # a re-run submits only the job without a result
    code, document, output = validate(*args[:-4], "--retries", "0", "--gres", "none")
    assert code == 1 and "1 of 2 jobs have results from an earlier run" in output
    assert re.search(r"submitted 1 validate job as Slurm array job", output)


@pytest.mark.slow
def test_a_job_past_its_time_limit_is_reported_timed_out(tmp_path: Path, slurm: str,
                                                         host_programs, monkeypatch):
    monkeypatch.setenv("ROCMIGRATE_TEST_SLEEP", "600")
    src = tree(tmp_path, slow=SLOW)
    code, document, output = validate(
        str(src), "-o", str(tmp_path / "out"), "--executor", "slurm", "--variant", "naive",
        "--runs", "1", "--warmup", "0", "--timeout", "900", "--retries", "0", "--gres", "none",
        "--sbatch-option=--time=0:05")  # the user's option overrides rocmigrate's limit
    assert code == 1, output
    [program] = document["programs"]
    [attempt] = program["job"]["attempts"]
    assert attempt["state"].startswith("TIMEOUT"), attempt
    assert "submitting it again" not in output


@pytest.mark.slow
def test_ctrl_c_cancels_its_own_jobs_only_and_a_rerun_resumes(tmp_path: Path, slurm: str,
                                                              host_programs):
    src = tree(tmp_path, fast=FAST, slow=SLOW)
    other = subprocess.run(["sbatch", "--parsable", "--job-name=not-rocmigrate",
                            f"--partition={slurm}", "--time=5", "--output=/dev/null",
                            "--wrap", "sleep 300"],
                           capture_output=True, text=True, check=True).stdout.strip()
    try:
        out = tmp_path / "out"
        command = [sys.executable, "-m", "migrator", "validate", str(src), "-o", str(out),
                   "--executor", "slurm", "--variant", "naive", "--runs", "1", "--warmup", "0",
                   "--gres", "none", "--retries", "0"]
        log = tmp_path / "progress.log"
        with log.open("w") as written:
            process = subprocess.Popen(command, stdout=written, stderr=subprocess.STDOUT,
                                       env={**os.environ, "ROCMIGRATE_TEST_SLEEP": "300"},
                                       cwd=ROOT)
        job_id = wait_for(lambda: (re.findall(r"as Slurm array job (\d+)", log.read_text())
                                   or [None])[0], 120, "the submission")
        records = out / "slurm" / "results"
        wait_for(lambda: len(list(records.glob("*.json"))) == 1
                 and "RUNNING" in job_state(job_id).values(), 180,
                 "the fast job's record while the slow job runs")
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=120) == 130, log.read_text()
        text = log.read_text()
        assert f"cancelling Slurm jobs {job_id}" in text
        wait_for(lambda: "CANCELLED" in job_state(job_id).values(), 60, "the cancellation")
        assert job_state(other)[other] in ("RUNNING", "PENDING"), "another job was cancelled"
        assert not (out / "validate.json").exists()
        # the same output folder again: only the job without a record is submitted
        done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=600,
                              env={**os.environ, "ROCMIGRATE_TEST_SLEEP": "0"})
        assert done.returncode == 0, done.stdout + done.stderr
        assert "1 of 2 jobs have results from an earlier run" in done.stderr + done.stdout
        document = json.loads((out / "validate.json").read_text())
        resumed = {program["name"]: program["job"]["resumed"] for program in document["programs"]}
        assert resumed == {"fast": True, "slow": False}
    finally:
        subprocess.run(["scancel", other], capture_output=True)
