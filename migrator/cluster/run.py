"""Submitting jobs, waiting for them, gathering their records, submitting again what ended
without one, cancelling on Ctrl-C."""

from __future__ import annotations

import math
import os
import shlex
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..fsutil import write_inside
from ..templating import render
from . import slurm, work as folder
from .options import ClusterOptions

Progress = Callable[[str], None]
# seconds to wait for the record of a task Slurm says COMPLETED (a shared file system may show
# a file written on a node some seconds later here)
RECORD_GRACE = 30.0
QUEUE_FAILURES = 5  # squeue failures in a row before the run gives up waiting
CANCEL_WAIT = 60.0  # seconds to wait for cancelled jobs to leave the queue


@dataclass(frozen=True)
class Job:
    """One piece of a command's work: a kind of ``migrator.cluster.kinds`` and its JSON
    arguments; ``key`` names it in the report (a program, a translation unit, a build root)."""

    key: str
    kind: str
    arguments: dict
    seconds: float = 3600.0  # the most it may take (its time limit, unless the options set one)
    gpu: bool = False  # runs on a GPU: asks for the options' gres

    @property
    def digest(self) -> str:
        return folder.digest_of(self.kind, self.arguments)


@dataclass
class Attempt:
    job: str  # ARRAYID_INDEX
    state: str  # Slurm's final state (slurm.TaskState.describe), or COMPLETED
    log: str = ""  # the end of what the task printed, where it wrote no result


@dataclass
class JobOutcome:
    key: str
    result: dict | None  # what the kind's function returned; None: no result
    error: str = ""  # why there is none (Slurm's state and reason, or the job's own error)
    node: str = ""
    seconds: float = 0.0
    resumed: bool = False  # the record of an earlier run with this work folder was reused
    attempts: list[Attempt] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"key": self.key, "ok": self.result is not None, "error": self.error,
                "node": self.node, "seconds": self.seconds, "resumed": self.resumed,
                "attempts": [vars(attempt) for attempt in self.attempts]}


def run_jobs(jobs: list[Job], options: ClusterOptions, work: Path, name: str,
             say: Progress, error: type[Exception] = slurm.SlurmError) -> list[JobOutcome]:
    """Run every job through Slurm (``name``: the command, for the job names); the outcomes in
    the order of ``jobs``. Raises ``error`` (the calling command's own, with Slurm's message)
    when Slurm cannot be used at all (its commands missing, a submission refused);
    KeyboardInterrupt after cancelling the jobs this call submitted."""
    try:
        return _run_jobs(jobs, options, work, name, say)
    except slurm.SlurmError as err:
        if error is slurm.SlurmError:
            raise
        raise error(str(err)) from None


def _run_jobs(jobs: list[Job], options: ClusterOptions, work: Path, name: str,
              say: Progress) -> list[JobOutcome]:
    missing = slurm.available()
    if missing:
        raise slurm.SlurmError(missing)
    try:
        work = folder.prepare(work, "logs")  # where Slurm writes what the tasks print
    except OSError as err:
        raise slurm.SlurmError(f"cannot use the work folder {work}: {err}") from None
    outcomes: dict[str, JobOutcome] = {}
    pending: list[Job] = []
    for job in dict((job.digest, job) for job in jobs).values():
        record = folder.read_result(work, job.digest)
        if record is not None and "result" in record:
            outcomes[job.digest] = _outcome(job, record, resumed=True)
            continue
        if record is not None:  # an error an earlier run recorded: this run tries again
            folder.remove_result(work, job.digest)
        folder.write_item(work, job.digest, job.kind, job.arguments, job.key)
        pending.append(job)
    if outcomes:
        say(f"{len(outcomes)} of {len(jobs)} jobs have results from an earlier run in {work}: "
            "not submitted again")
    script = _job_script(work)
    submitted: list[str] = []
    try:
        for attempt in range(options.retries + 1):
            if not pending:
                break
            arrays = _submit(pending, options, work, script, name, attempt, submitted, say)
            ended = _wait(arrays, options, say)
            pending = _gather(arrays, ended, work, outcomes, attempt == options.retries, say)
    except (KeyboardInterrupt, slurm.SlurmError):  # Ctrl-C, or Slurm refused or went away
        _cancel(submitted, options, say)
        raise
    return [outcomes[job.digest] for job in jobs]


def _job_script(work: Path) -> str:
    """The script every task runs (``job.sh`` in the work folder)."""
    text = render("slurm/job.sh.j2", python=shlex.quote(sys.executable),
                  work=shlex.quote(str(work)))
    write_inside(work, "job.sh", text.encode())
    return str(work / "job.sh")


def sbatch_arguments(options: ClusterOptions, job_name: str, tasks: int, seconds: float,
                     gpu: bool, log_pattern: str) -> list[str]:
    """The sbatch options of an array of ``tasks`` tasks: rocmigrate's own, then the user's
    (which come last, so that they override)."""
    minutes = options.time_limit or max(1, math.ceil(seconds / 60))
    array = f"0-{tasks - 1}" + (f"%{options.max_running}" if options.max_running else "")
    words = [f"--job-name={job_name}", f"--array={array}", f"--time={minutes}",
             f"--cpus-per-task={options.cpus}", "--ntasks=1", f"--output={log_pattern}",
             "--export=ALL"]
    words += [f"--{name}={value}" for name, value in (("partition", options.partition),
                                                      ("account", options.account),
                                                      ("qos", options.qos)) if value]
    if gpu and options.gres != "none":
        words.append(f"--gres={options.gres}")
    return words + list(options.sbatch_options)


@dataclass
class _Array:
    job_id: str
    batch: str
    jobs: list[Job]


def _submit(pending: list[Job], options: ClusterOptions, work: Path, script: str, name: str,
            attempt: int, submitted: list[str], say: Progress) -> list[_Array]:
    """One array job per kind of resources (GPU or not), its tasks in the order of
    ``pending``."""
    arrays = []
    stamp = f"{int(time.time())}-{os.getpid()}-{attempt}"
    for gpu in (False, True):
        group = [job for job in pending if job.gpu == gpu]
        if not group:
            continue
        batch = f"{stamp}-{'gpu' if gpu else 'cpu'}"
        folder.write_json(work, f"batches/{batch}.json", [job.digest for job in group])
        arguments = sbatch_arguments(options, f"rocmigrate-{name}", len(group),
                                     max(job.seconds for job in group), gpu,
                                     str(work / "logs" / f"{batch}-%a.log"))
        job_id = slurm.submit([*arguments, f"--chdir={work}"], [script, batch])
        submitted.append(job_id)
        arrays.append(_Array(job_id, batch, group))
        again = f" (attempt {attempt + 1})" if attempt else ""
        say(f"submitted {len(group)} {name} job{'s' if len(group) != 1 else ''}{again} as "
            f"Slurm array job {job_id}" + (f" ({options.gres} each)" if gpu else ""))
    return arrays


def _wait(arrays: list[_Array], options: ClusterOptions, say: Progress
          ) -> dict[str, dict[int, slurm.TaskState]]:
    """Wait until no task of ``arrays`` is in the queue; how each ended, by array job id and
    task index (as long as Slurm keeps the records)."""
    ids = [array.job_id for array in arrays]
    total = sum(len(array.jobs) for array in arrays)
    shown = None
    delay = min(1.0, options.poll)
    failures = 0
    while True:
        try:
            queued = slurm.queued(ids)
            failures = 0
        except slurm.SlurmError as err:  # a busy controller: look again, a few times
            failures += 1
            if failures >= QUEUE_FAILURES:
                raise
            say(f"{err}; looking again")
            time.sleep(options.poll)
            continue
        running = sum(task.state == "RUNNING" for task in queued.values())
        summary = (len(queued), running)
        if summary != shown and queued:
            say(f"{total - len(queued)} of {total} jobs ended, {running} running, "
                f"{len(queued) - running} waiting")
            shown = summary
        if not queued:
            return {job_id: slurm.ended(job_id) for job_id in ids}
        time.sleep(delay)
        delay = min(options.poll, delay * 2)


def _gather(arrays: list[_Array], ended: dict[str, dict[int, slurm.TaskState]], work: Path,
            outcomes: dict[str, JobOutcome], last: bool, say: Progress) -> list[Job]:
    """Each task's record into ``outcomes``; the jobs to submit again (none on the ``last``
    attempt: those get an outcome without a result)."""
    again = []
    for array in arrays:
        for index, job in enumerate(array.jobs):
            state = ended[array.job_id].get(index)
            record = _record(work, job.digest, state)
            task = f"{array.job_id}_{index}"
            earlier = outcomes.pop(job.digest).attempts if job.digest in outcomes else []
            if record is not None and "result" in record:
                outcome = _outcome(job, record)
                outcome.attempts = earlier + [Attempt(task, "COMPLETED")]
                outcomes[job.digest] = outcome
                continue
            if record is not None:  # the job's own error (an exception): not Slurm's doing
                described = (f"the job failed on {record.get('node') or 'its node'}: "
                             f"{record['error']}")
            else:
                described = (state.describe() if state else "ended without a result, and Slurm "
                             "no longer keeps its record")
            tail = folder.log_tail(work, f"{array.batch}-{index}")
            attempts = earlier + [Attempt(task, described, tail)]
            outcomes[job.digest] = JobOutcome(job.key, None, f"Slurm job {task}: {described}",
                                              attempts=attempts)
            if record is None and not last:
                again.append(job)
            say(f"{job.key}: Slurm job {task} {described}"
                + ("; submitting it again" if record is None and not last else ""))
    return again


def _record(work: Path, digest: str, state: slurm.TaskState | None) -> dict | None:
    """The task's record; for a task that COMPLETED, waited for a while (RECORD_GRACE) when it
    is not there yet."""
    deadline = time.monotonic() + RECORD_GRACE
    while True:
        record = folder.read_result(work, digest)
        if record is not None or state is None or state.state != "COMPLETED" \
                or time.monotonic() > deadline:
            return record
        time.sleep(1.0)


def _outcome(job: Job, record: dict, resumed: bool = False) -> JobOutcome:
    seconds = record.get("seconds")
    return JobOutcome(job.key, record["result"], node=str(record.get("node", "")),
                      seconds=float(seconds) if isinstance(seconds, (int, float)) else 0.0,
                      resumed=resumed)


def _cancel(job_ids: list[str], options: ClusterOptions, say: Progress) -> None:
    """Cancel the jobs this run submitted (Slurm leaves those already ended alone), and
    nothing else; then wait a while (CANCEL_WAIT) for them to leave the queue, so that none
    still writes into the work folder when the command cleans up."""
    if not job_ids:
        return
    say(f"cancelling Slurm jobs {', '.join(job_ids)} (their results so far are kept: the same "
        "command with the same output folder resumes)")
    try:
        slurm.cancel(job_ids)
        deadline = time.monotonic() + CANCEL_WAIT
        while slurm.queued(job_ids) and time.monotonic() < deadline:
            time.sleep(min(1.0, options.poll))
    except slurm.SlurmError as err:
        say(f"error: {err}")
