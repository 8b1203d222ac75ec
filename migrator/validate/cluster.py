"""`rocmigrate validate --executor slurm`: one Slurm job per program (``migrator.cluster``).

The submitting command converts the tree into the work folder (which every node sees), as a
local run converts it into a temporary one; each program's job builds its original and ports
there (``build_plan``: the same sides a local run builds) and runs them on its node,
interleaved run by run as a local run does (``_run_program``), after checking that the node
has the GPUs they need. The submitting command judges the runs as a local run judges them."""

from __future__ import annotations

from pathlib import Path

from ..cluster import Job, JobOutcome
from ..cluster.work import files_digest
from ..workspace.includes import local_includes
from ..cluster.records import RecordError, from_record, record_of
from ..toolchain.devices import gpu_check
from ..toolchain.sides import BUILD_TIMEOUT, Build, Toolchain
from .compare import Run
from .programs import Program
from .run import (Plan, ProgramOutcome, ValidateOptions, _run_program, build_side,
                  program_outcomes)

KIND = "validate.program"


def program_jobs(programs: list[Program], plan: Plan, root: Path, trees: dict[str, Path],
                 scratch: Path, options: ValidateOptions, run: bool, run_original: bool,
                 gpu_sides: dict[str, str]) -> list[Job]:
    """One job per program with something to build (``plan``): the sides it builds, and
    whether it runs them (``run``; the original too with ``run_original``). ``gpu_sides``:
    the platform each side runs on where that is a GPU (cuda: nvidia; hip: nvidia or amd)."""
    sides: dict[str, list[tuple[str, Toolchain]]] = {}
    for program, side, toolchain, _tree in plan:
        sides.setdefault(program.name, []).append((side, toolchain))
    jobs = []
    for program in programs:
        name, built = program.name, sides.get(program.name)
        if not built:
            continue  # nothing to build: its outcome needs no job
        running = [side for side, _ in built if side != "cuda" or run_original] if run else []
        platforms = sorted({gpu_sides[side if side == "cuda" else "hip"] for side in running
                            if (side if side == "cuda" else "hip") in gpu_sides})
        rounds = (options.warmup + options.runs) * len(running)
        arguments = {
            "program": record_of(program), "root": str(root),
            "trees": {variant: str(tree) for variant, tree in trees.items()},
            "scratch": str(scratch),
            "builds": [[side, record_of(toolchain)] for side, toolchain in built],
            "build_flags": list(options.build_flags), "run": bool(running),
            "run_original": run_original, "warmup": options.warmup, "runs": options.runs,
            "timeout": options.timeout,
            "program_args": [[pattern, list(words)] for pattern, words in options.program_args],
            "gpu": options.gpu, "platforms": platforms,
            "sources": files_digest((root, rel) for rel in sorted(local_includes(root,
                                                                                program.rel))),
            # the ports are converted with these: another target is other work
            "settings": options.conversion_settings.fingerprint(),
        }
        jobs.append(Job(name, KIND, arguments,
                        seconds=len(built) * BUILD_TIMEOUT + rounds * options.timeout + 60,
                        gpu=bool(platforms)))
    return jobs


def program_job(arguments: dict) -> dict:
    """On a node: build the program's sides, check the node's GPUs, run; the record."""
    program = from_record(Program, arguments["program"])
    root, scratch = Path(arguments["root"]), Path(arguments["scratch"])
    trees = {variant: Path(tree) for variant, tree in arguments["trees"].items()}
    flags = tuple(arguments["build_flags"])
    builds: dict[tuple[str, str], Build] = {}
    for side, toolchain in arguments["builds"]:
        tree = root if side == "cuda" else trees[side]
        builds[program.name, side] = build_side(program, side, from_record(Toolchain, toolchain),
                                                tree, scratch, flags)
    # (a port whose files failed to convert is not among the builds: the submitting command
    # keeps those failures, and reports them)
    (outcome,) = program_outcomes([program], builds,
                                  {(program.name, variant): [] for variant in trees}, trees)
    not_run = None
    if arguments["run"]:
        absent = [check.reason for check in (gpu_check(platform, arguments["gpu"])
                                             for platform in arguments["platforms"])
                  if not check.present]
        if absent:
            not_run = "; ".join(absent)
        else:
            options = ValidateOptions(
                source=root, warmup=arguments["warmup"], runs=arguments["runs"],
                timeout=arguments["timeout"],
                program_args=tuple((pattern, tuple(words))
                                   for pattern, words in arguments["program_args"]))
            _run_program(program, outcome, root, trees, scratch, options,
                         run_original=arguments["run_original"])
    return {"builds": {side: record_of(build) for (_, side), build in builds.items()},
            "original": _runs_of(outcome.original), "arguments": outcome.arguments,
            "variants": {variant: _runs_of(port) for variant, port in outcome.variants.items()},
            "not_run": not_run}


def _runs_of(side) -> dict:
    return {"warmups": [record_of(run) for run in side.warmups],
            "runs": [record_of(run) for run in side.runs]}


def outcomes_from(programs: list[Program], jobs: list[Job], done: list[JobOutcome],
                  errors: dict, trees: dict[str, Path]) -> list[ProgramOutcome]:
    """Each program's outcome from its job's record; a job without one (or with one that is
    not a record of this kind) leaves its program failed with the job's error."""
    by_name = {job.key: outcome for job, outcome in zip(jobs, done)}
    outcomes = []
    for program in programs:
        (outcome,) = program_outcomes([program], {}, errors, trees)
        outcomes.append(outcome)
        job = by_name.get(program.name)
        if job is None:
            continue
        outcome.job = job.as_dict()
        if job.result is not None:
            try:
                _fill(outcome, job.result)
            except (RecordError, KeyError, TypeError, AttributeError) as err:
                outcome.job.update(ok=False, error=f"its record cannot be read: {err}")
    return outcomes


def _fill(outcome: ProgramOutcome, result: dict) -> None:
    builds = {side: from_record(Build, build) for side, build in result["builds"].items()}
    if "cuda" in builds:
        outcome.original.build = builds["cuda"]
    _fill_runs(outcome.original, result["original"])
    for variant, port in outcome.variants.items():
        if variant in builds:
            port.build = builds[variant]
        _fill_runs(port, result["variants"].get(variant, {"warmups": [], "runs": []}))
    outcome.arguments = [str(word) for word in result["arguments"]]
    if result["not_run"] is not None:
        outcome.not_run = str(result["not_run"])


def _fill_runs(holder, runs: dict) -> None:
    holder.warmups = [from_record(Run, run) for run in runs["warmups"]]
    holder.runs = [from_record(Run, run) for run in runs["runs"]]
