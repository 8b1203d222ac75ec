"""The Slurm cluster the executor tests submit to: the one-node cluster `.ci/slurm-up` starts on
the CI machine (required there), or any Slurm whose commands are on PATH elsewhere."""

from __future__ import annotations

import re
import subprocess
import time

import pytest

from conftest import IN_CI, require, require_tool


@pytest.fixture
def slurm() -> str:
    """The default partition's name, once a node of it is up; in CI a missing or stopped
    cluster fails the test (.ci/run starts it with .ci/slurm-up)."""
    require_tool("sbatch")
    done = subprocess.run(["sinfo", "--noheader", "--format=%P %T"], capture_output=True,
                          text=True, timeout=60)
    up = [line.split() for line in done.stdout.splitlines()
          if re.search(r"\b(idle|mixed|mix|allocated|alloc|completing)\b", line)]
    require(done.returncode == 0 and bool(up), "a running Slurm cluster (.ci/slurm-up starts "
            f"one; sinfo said: {(done.stderr or done.stdout).strip()!r})")
    return up[0][0].rstrip("*")


def job_state(job_id: str) -> dict[str, str]:
    """Each task's state of array job ``job_id`` (JOBID_INDEX -> JobState), from scontrol."""
    done = subprocess.run(["scontrol", "--oneliner", "show", "job", job_id],
                          capture_output=True, text=True, timeout=60)
    states = {}
    for line in done.stdout.splitlines():
        fields = dict(re.findall(r"(\w+)=(\S*)", line))
        key = fields.get("JobId", "")
        if fields.get("ArrayTaskId"):
            key = f"{fields['ArrayJobId']}_{fields['ArrayTaskId']}"
        states[key] = fields.get("JobState", "")
    return states


def wait_for(check, seconds: float, what: str):
    """Poll ``check()`` until it returns something true; fail the test after ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.5)
    pytest.fail(f"gave up waiting for {what} after {seconds:g} s")


__all__ = ["IN_CI", "job_state", "slurm", "wait_for"]
