"""Slurm's own commands, and only those: ``sbatch`` submits an array job, ``squeue`` says which
of its tasks are still pending or running, ``scontrol show job`` how each ended (Slurm keeps a
finished job's record for ``MinJobAge``, 300 s by default; ``sacct`` needs an accounting
database, which many clusters and CI machines lack), ``scancel`` cancels."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass

COMMAND_TIMEOUT = 120.0  # seconds for one Slurm command (a busy controller answers slowly)
# the states a job leaves the queue in (squeue shows the others: PENDING, RUNNING...)
ENDED = ("COMPLETED", "FAILED", "TIMEOUT", "CANCELLED", "PREEMPTED", "NODE_FAIL",
         "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE", "REVOKED")
_FIELD = re.compile(r"(\w+)=(\S*)")


class SlurmError(Exception):
    """A Slurm command is missing or failed: its words and what it printed."""


@dataclass(frozen=True)
class TaskState:
    """How a task of an array job stands (squeue) or ended (scontrol)."""

    state: str  # PENDING, RUNNING, COMPLETED, FAILED, TIMEOUT, CANCELLED, NODE_FAIL...
    reason: str = ""  # Slurm's reason (NonZeroExitCode, TimeLimit, NodeDown...), "" for None
    exit_code: str = ""  # EXIT:SIGNAL as scontrol shows it, e.g. 3:0 or 0:9
    node: str = ""

    def describe(self) -> str:
        """One line for a report: ``FAILED (NonZeroExitCode, exit code 3:0, on node1)``."""
        details = [part for part in (self.reason, self.exit_code and self.exit_code != "0:0"
                                     and f"exit code {self.exit_code}",
                                     self.node and f"on {self.node}") if part]
        return self.state + (f" ({', '.join(details)})" if details else "")


def available() -> str | None:
    """Why Slurm cannot be used here (its commands are not on PATH), or None."""
    missing = [name for name in ("sbatch", "squeue", "scontrol", "scancel")
               if shutil.which(name) is None]
    if missing:
        return (f"{', '.join(missing)} not found: the Slurm executor runs Slurm's own commands "
                "(install Slurm's client tools, or run on a node of the cluster)")
    return None


def _slurm(command: list[str]) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=COMMAND_TIMEOUT,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise SlurmError(f"{' '.join(command[:2])}: {err}") from None
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()
        raise SlurmError(f"{' '.join(command[:2])} failed: {said[-1] if said else done.returncode}")
    return done.stdout


def submit(arguments: list[str], script: list[str]) -> str:
    """Submit ``script`` (its path and arguments) with sbatch ``arguments``; the job's id."""
    printed = _slurm(["sbatch", "--parsable", *arguments, *script]).strip()
    job_id = printed.split(";")[0]  # --parsable: ID or ID;CLUSTER
    if not job_id.isdigit():
        raise SlurmError(f"sbatch printed {printed!r}, not a job id")
    return job_id


def queued(job_ids: list[str]) -> dict[tuple[str, int], TaskState]:
    """The tasks of ``job_ids`` still in the queue, by (array job id, task index)."""
    if not job_ids:
        return {}
    printed = _slurm(["squeue", "--noheader", "--array", "--jobs", ",".join(job_ids),
                      "--format", "%i|%T|%r|%N"])
    tasks = {}
    for line in printed.splitlines():
        words = line.strip().split("|")
        if len(words) != 4:
            continue
        array_id, _, index = words[0].partition("_")
        if index.isdigit():
            tasks[array_id, int(index)] = TaskState(words[1], _reason(words[2]), "", words[3])
        elif index.startswith("["):  # pending tasks not yet split out: 12_[3-5%2]
            for number in _indices(index.strip("[]").split("%")[0]):
                tasks[array_id, number] = TaskState(words[1], _reason(words[2]))
    return tasks


def ended(job_id: str) -> dict[int, TaskState]:
    """How each task of array job ``job_id`` ended, by task index, as long as Slurm keeps its
    record; empty when it no longer does."""
    try:
        printed = _slurm(["scontrol", "--oneliner", "show", "job", job_id])
    except SlurmError:
        return {}  # "Invalid job id specified": the record is gone
    states = {}
    for line in printed.splitlines():
        fields = dict(_FIELD.findall(line))
        if fields.get("ArrayJobId") != job_id or not fields.get("ArrayTaskId", "").isdigit():
            continue
        states[int(fields["ArrayTaskId"])] = TaskState(
            fields.get("JobState", "UNKNOWN"), _reason(fields.get("Reason", "")),
            fields.get("ExitCode", ""), _node(fields.get("BatchHost") or fields.get("NodeList")))
    return states


def cancel(job_ids: list[str]) -> None:
    """Cancel these jobs (every task of each array), and nothing else."""
    if job_ids:
        _slurm(["scancel", *job_ids])


def _reason(text: str) -> str:
    return "" if text in ("None", "(null)") else text


def _node(text: str | None) -> str:
    return "" if not text or text == "(null)" else text


def _indices(text: str) -> list[int]:
    """Task indices of an array range as squeue prints it: 3-5,7."""
    numbers = []
    for part in text.split(","):
        first, _, last = part.partition("-")
        if first.isdigit() and (not last or last.isdigit()):
            numbers += range(int(first), int(last or first) + 1)
    return numbers
