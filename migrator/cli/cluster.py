"""The executor options `validate`, `harness` and `build` share: where their work runs (here,
or as Slurm jobs) and how it is submitted; the configuration's ``executor`` and ``slurm``
table give what these options do not."""

from __future__ import annotations

import functools
import hashlib
import inspect
from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer

from .progress import say


class Executor(str, Enum):
    local = "local"
    slurm = "slurm"


EXECUTOR_OPTION = typer.Option(
    None, "--executor", help="local (here, the default) or slurm (one Slurm job per program, "
    "kernel file or build part, submitted with sbatch; docs/slurm.md). Default: executor in the "
    "configuration, else local.")
PARTITION_OPTION = typer.Option(None, "--partition", help="Slurm: the partition to submit to.")
ACCOUNT_OPTION = typer.Option(None, "--account", help="Slurm: the account to charge.")
QOS_OPTION = typer.Option(None, "--qos", help="Slurm: the quality of service to ask for.")
SBATCH_OPTION = typer.Option(
    None, "--sbatch-option", help="Slurm: one more sbatch option (shell words; repeatable), "
    "after rocmigrate's own: e.g. --sbatch-option=--constraint=mi250 or --time=30.")
SHARED_OPTION = typer.Option(
    None, "--shared-dir", help="Slurm: a folder every node sees, for the jobs' work folder "
    "(default: inside the output folder, which must then be shared).")
RETRIES_OPTION = typer.Option(None, "--retries", min=0, help="Slurm: how many times a job "
                              "that ends without a result is submitted again (default 1).")
GRES_OPTION = typer.Option(None, "--gres", help="Slurm: what a job that runs on a GPU asks "
                           "for (default gpu:1; e.g. gpu:mi250:1; none: ask for no GPU, where "
                           "nodes come whole).")


# (parameter, its type, the option, the ClusterOptions field it sets; None: the executor)
_PARAMETERS = (
    ("executor", Optional[Executor], EXECUTOR_OPTION, None),
    ("partition", Optional[str], PARTITION_OPTION, "partition"),
    ("account", Optional[str], ACCOUNT_OPTION, "account"),
    ("qos", Optional[str], QOS_OPTION, "qos"),
    ("sbatch_option", Optional[List[str]], SBATCH_OPTION, "sbatch_options"),
    ("shared_dir", Optional[Path], SHARED_OPTION, "shared"),
    ("retries", Optional[int], RETRIES_OPTION, "retries"),
    ("gres", Optional[str], GRES_OPTION, "gres"),
)


def executor_options(command):
    """The command with the executor options added to its own: its function takes them as one
    keyword argument, ``executor_flags`` (what was given, for ``cluster_options``)."""
    signature = inspect.signature(command)
    own = [parameter for parameter in signature.parameters.values()
           if parameter.name != "executor_flags"]
    added = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=option,
                               annotation=kind) for name, kind, option, _ in _PARAMETERS]

    @functools.wraps(command)
    def with_flags(*args, **kwargs):
        flags = {name: kwargs.pop(name) for name, *_ in _PARAMETERS}
        return command(*args, executor_flags=flags, **kwargs)

    with_flags.__signature__ = signature.replace(parameters=own + added)
    with_flags.__annotations__ = {**{name: value for name, value in
                                     command.__annotations__.items()
                                     if name != "executor_flags"},
                                  **{name: kind for name, kind, *_ in _PARAMETERS}}
    return with_flags


def cluster_options(workspace, flags: dict):
    """The command's ClusterOptions: its executor options (``flags``, from
    ``executor_options``) over the workspace's configuration file; a bad value ends the command
    with its message (exit 2)."""
    from ..cluster import ClusterError, merged
    from ..workspace.config import ConfigError, load_config

    given = {field: tuple(flags[name] or ()) if field == "sbatch_options" else flags[name]
             for name, _, _, field in _PARAMETERS if field}
    executor = flags["executor"]
    try:
        config = load_config(workspace.config_path)
        return merged(given, executor.value if executor else None, config.values, config.path,
                      config.root)
    except (ClusterError, ConfigError) as err:
        say(f"error: {err}")
        raise typer.Exit(2) from None


def work_folder(options, output: Path, command: str) -> Path:
    """The Slurm jobs' work folder of a command writing into ``output``: ``output/slurm``, or,
    with a shared folder, a folder there named after the command and ``output`` (the same
    output folder finds the same work folder: a re-run resumes)."""
    if options.shared is None:
        return output / "slurm"
    name = hashlib.sha256(str(output.resolve()).encode()).hexdigest()[:16]
    return options.shared / f"rocmigrate-{command}-{name}"
