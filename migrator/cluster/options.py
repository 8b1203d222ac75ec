"""Where a command's work runs: here (``local``, the default) or as Slurm jobs; from the
command's options, else ``executor`` and the ``[tool.rocmigrate.slurm]`` table of the
configuration file, else the defaults."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, fields, replace
from pathlib import Path

from ..workspace.config import EXECUTORS


class ClusterError(Exception):
    """Options or a configuration table that cannot be used; the message says which."""


@dataclass(frozen=True)
class ClusterOptions:
    executor: str = "local"  # local | slurm
    partition: str | None = None  # sbatch --partition
    account: str | None = None  # sbatch --account
    qos: str | None = None  # sbatch --qos
    sbatch_options: tuple[str, ...] = ()  # more sbatch options, after rocmigrate's own
    # a folder every node sees, for the work folder (job records, builds); None: the work
    # folder lies in the command's output folder, which must then be shared
    shared: Path | None = None
    retries: int = 1  # submissions more of a job that ended without a result
    # sbatch --gres of a job that runs on a GPU; "none": ask for none (nodes come whole, with
    # their GPUs, or the cluster schedules GPUs otherwise)
    gres: str = "gpu:1"
    cpus: int = 1  # sbatch --cpus-per-task of each job
    time_limit: int | None = None  # minutes per job (None: from the command's time limits)
    poll: float = 5.0  # seconds between two looks at the queue
    max_running: int | None = None  # tasks of one array running at once (--array=...%N)

    @property
    def slurm(self) -> bool:
        return self.executor == "slurm"

    def as_dict(self) -> dict:
        return {"executor": self.executor, "partition": self.partition, "account": self.account,
                "qos": self.qos, "sbatch_options": list(self.sbatch_options),
                "shared": str(self.shared) if self.shared else None, "retries": self.retries,
                "gres": self.gres, "cpus": self.cpus, "time_limit": self.time_limit,
                "poll": self.poll, "max_running": self.max_running}


# configuration key -> (ClusterOptions field, type, description)
TABLE_KEYS = {
    "partition": ("partition", str, "the partition jobs are submitted to"),
    "account": ("account", str, "the account jobs are charged to"),
    "qos": ("qos", str, "the quality of service jobs ask for"),
    "options": ("sbatch_options", list, "more sbatch options (a list of strings, each one "
                "option or shell words), after rocmigrate's own"),
    "shared": ("shared", str, "a folder every node sees, for the jobs' work folder, relative "
               "to the configuration file (default: inside the command's output folder)"),
    "retries": ("retries", int, "how many times a job that ended without a result is "
                "submitted again (default 1)"),
    "gres": ("gres", str, "the generic resources of a job that runs on a GPU (default gpu:1; "
             "e.g. gpu:mi250:1; none: ask for none)"),
    "cpus-per-job": ("cpus", int, "CPUs each job asks for (default 1)"),
    "time-limit": ("time_limit", int, "minutes each job may run (default: from the command's "
                   "time limits)"),
    "poll-seconds": ("poll", (int, float), "seconds between two looks at the queue (default 5)"),
    "max-running": ("max_running", int, "tasks of one array job running at once"),
}


def from_table(table: object, where: str, root: Path) -> ClusterOptions:
    """The options a configuration's ``slurm`` table sets (``where`` names it in errors;
    ``shared`` is read against ``root``, the configuration file's folder)."""
    if not isinstance(table, dict):
        raise ClusterError(f"{where}: slurm must be a table")
    values = {}
    for key, value in table.items():
        if key not in TABLE_KEYS:
            raise ClusterError(f"{where}: slurm.{key} is not a key of the slurm table (known: "
                               f"{', '.join(TABLE_KEYS)})")
        name, kind, _ = TABLE_KEYS[key]
        if isinstance(value, bool) or not isinstance(value, kind):
            raise ClusterError(f"{where}: slurm.{key} must be "
                               f"{'a number' if kind == (int, float) else kind.__name__}")
        if kind is list:
            if not all(isinstance(item, str) for item in value):
                raise ClusterError(f"{where}: slurm.{key} must be a list of strings")
            value = tuple(word for item in value for word in shlex.split(item))
        values[name] = root / value if name == "shared" else value
    return checked(replace(ClusterOptions(executor="local"), **values), where)


def merged(given: dict, executor: str | None, config_values: dict, config_path: Path | None,
           config_root: Path) -> ClusterOptions:
    """The options of a command: ``given`` (ClusterOptions fields the command line set; None or
    empty where not given) over the configuration (its ``executor`` and ``slurm`` table) over
    the defaults."""
    where = str(config_path) if config_path else "the configuration"
    options = from_table(config_values["slurm"], where, config_root) \
        if "slurm" in config_values else ClusterOptions()
    chosen = executor or config_values.get("executor") or "local"
    if chosen not in EXECUTORS:
        raise ClusterError(f"unknown executor {chosen!r} (expected {' or '.join(EXECUTORS)})")
    known = {field.name for field in fields(ClusterOptions)}
    unknown = set(given) - known
    if unknown:
        raise ValueError(f"not ClusterOptions fields: {sorted(unknown)}")
    overrides = {name: value for name, value in given.items() if value not in (None, (), [])}
    if "sbatch_options" in overrides:
        overrides["sbatch_options"] = options.sbatch_options + tuple(
            word for option in overrides["sbatch_options"] for word in shlex.split(option))
    return checked(replace(options, executor=chosen, **overrides), "the options")


def checked(options: ClusterOptions, where: str) -> ClusterOptions:
    """``options``, or ClusterError naming the first value that cannot be."""
    if options.retries < 0:
        raise ClusterError(f"{where}: retries must be 0 or more")
    if options.cpus < 1:
        raise ClusterError(f"{where}: CPUs per job must be 1 or more")
    if options.time_limit is not None and options.time_limit < 1:
        raise ClusterError(f"{where}: the time limit is in minutes, 1 or more")
    if options.poll <= 0:
        raise ClusterError(f"{where}: the time between two looks at the queue must be above 0")
    if options.max_running is not None and options.max_running < 1:
        raise ClusterError(f"{where}: max-running must be 1 or more")
    for name in ("partition", "account", "qos", "gres"):
        value = getattr(options, name)
        if value is not None and (not value or any(c.isspace() for c in value)):
            raise ClusterError(f"{where}: {name} {value!r} must be one word")
    return options
