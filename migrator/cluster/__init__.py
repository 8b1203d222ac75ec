"""Running the work of ``validate``, ``harness`` and ``build`` as Slurm jobs.

Entry point: ``run_jobs(jobs, options, work, name, say, error)`` (``error``: the calling
command's exception, raised where Slurm cannot be used). Each ``Job`` (a kind of
``kinds.KINDS`` and its JSON arguments) becomes a task of an array job submitted with
``sbatch``; on its node the task runs ``python -m migrator.cluster.job``, which writes the
job's record into the work folder the submitting command reads (``work``). A job whose record
an earlier run left there is not submitted again (a re-run resumes); one that ends without a
record (failed, timed out, preempted, cancelled, its node died) is reported with Slurm's state
and reason and submitted again, up to ``ClusterOptions.retries`` times. Ctrl-C cancels the
jobs the run submitted, and nothing else. Nothing here replaces Slurm's own mechanisms: no
daemon, no ssh; the commands decide what a job is (``migrator.<command>.cluster``).
"""

from __future__ import annotations

from .options import EXECUTORS, ClusterError, ClusterOptions, merged
from .run import Job, JobOutcome, run_jobs, sbatch_arguments
from .slurm import SlurmError

__all__ = ["EXECUTORS", "ClusterError", "ClusterOptions", "Job", "JobOutcome", "SlurmError",
           "merged", "run_jobs", "sbatch_arguments"]
