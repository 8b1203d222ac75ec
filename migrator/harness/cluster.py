"""`rocmigrate harness --executor slurm`: one Slurm job per translation unit (a kernel file, or
the file including it) with usable specs (``migrator.cluster``).

The submitting command reads the kernels, writes the specs, converts the tree and renders the
harness sources into the output folder (which every node sees), as a local run does; each job
builds its unit's harnesses on both sides (``build``: once per side, alone where the unit does
not build) and runs them on its node (``run``: the sides interleaved), after checking that the
node has the GPUs they need; the submitting command judges the runs as a local run does."""

from __future__ import annotations

from pathlib import Path

from ..cluster import Job, JobOutcome
from ..cluster.work import files_digest
from ..cluster.records import RecordError, from_record, record_of
from ..toolchain.sides import BUILD_TIMEOUT, Build, Toolchain
from .run import HIP_TREE, HarnessOptions, HarnessOutcome, SideRun, build, gpus_for, run

KIND = "harness.unit"
# what a job needs of a harness's outcome; the rest (builds, runs) is what it makes. (Not the
# spec's status: "written" once, "unchanged" when run again, which would be other work)
_GIVEN = ("name", "kernel", "file", "spec", "unit", "sources")


def unit_jobs(outcomes: list[HarnessOutcome], root: Path, options: HarnessOptions,
              cuda: Toolchain | None, hip: Toolchain, gpus: dict[str, dict],
              original_not_run: str | None) -> list[Job]:
    """One job per translation unit of ``outcomes`` (the usable harnesses)."""
    units: dict[str, list[HarnessOutcome]] = {}
    for outcome in outcomes:
        units.setdefault(outcome.unit, []).append(outcome)
    sides = ("hip",) if original_not_run else ("cuda", "hip")
    # the GPUs the runs need, where they are taken as usable (not with --gpu none: then
    # nothing runs on them, and no job asks for one)
    platforms = sorted({platform for side, platform in (("cuda", "nvidia"),
                                                        ("hip", hip.runs_on))
                        if side in sides and platform != "cpu" and gpus[side]["usable"]}) \
        if not options.build_only else []
    jobs = []
    for unit, members in units.items():
        arguments = {
            "root": str(root), "output": str(options.output.resolve()),
            "harnesses": [{name: getattr(outcome, name) for name in _GIVEN}
                          for outcome in members],
            "toolchains": {"cuda": record_of(cuda) if cuda else None, "hip": record_of(hip)},
            "options": {"include_paths": [str(path) for path in options.include_paths],
                        "compile_commands": str(options.compile_commands)
                        if options.compile_commands else None,
                        "build_flags": list(options.build_flags), "jobs": options.jobs,
                        "runs": options.runs, "warmup": options.warmup,
                        "timeout": options.timeout, "build_only": options.build_only},
            "original_not_run": original_not_run, "gpus": gpus, "gpu": options.gpu,
            "platforms": platforms,
            "sources": _sources_digest(root, options, unit, members),
            "settings": options.conversion_settings.fingerprint(),
        }
        rounds = (options.warmup + options.runs) * len(sides) * len(members)
        jobs.append(Job(unit, KIND, arguments,
                        seconds=2 * (len(members) + 1) * BUILD_TIMEOUT
                        + (0 if options.build_only else rounds * options.timeout) + 60,
                        gpu=bool(platforms)))
    return jobs


def _sources_digest(root: Path, options: HarnessOptions, unit: str,
                    members: list[HarnessOutcome]) -> str:
    """A hash of what a unit's job builds: its harnesses' specs and sources, the unit and the
    local headers it includes, and their conversions; a record of an earlier run is reused
    only for the same."""
    from ..runner import output_name
    from ..workspace.includes import local_includes

    output = options.output
    files = [(output, rel) for outcome in members
             for rel in (outcome.spec, *sorted(outcome.sources.values()))]
    for rel in sorted(local_includes(root, unit)):
        files += [(root, rel), (output / HIP_TREE,
                                output_name(rel, options.conversion_settings))]
    return files_digest(files)


def unit_job(arguments: dict) -> dict:
    """On a node: build the unit's harnesses on both sides and run them; the record."""
    given = arguments["options"]
    options = HarnessOptions(
        source=Path(arguments["root"]), output=Path(arguments["output"]),
        include_paths=tuple(Path(path) for path in given["include_paths"]),
        compile_commands=Path(given["compile_commands"]) if given["compile_commands"] else None,
        build_flags=tuple(given["build_flags"]), jobs=given["jobs"], runs=given["runs"],
        warmup=given["warmup"], timeout=given["timeout"], build_only=given["build_only"],
        gpu=arguments["gpu"])
    outcomes = [HarnessOutcome(**{name: harness[name] for name in _GIVEN}, spec_status="")
                for harness in arguments["harnesses"]]
    toolchains = {side: from_record(Toolchain, record) if record else None
                  for side, record in arguments["toolchains"].items()}

    def say(line: str) -> None:
        print(line, flush=True)

    build(outcomes, Path(arguments["root"]), options, toolchains["cuda"], toolchains["hip"], say)
    gpus = arguments["gpus"]
    if arguments["platforms"]:  # a side runs on a GPU: what this node has
        gpus = gpus_for(toolchains["hip"].name, arguments["gpu"])
    if not options.build_only:
        run(outcomes, options, gpus, say, arguments["original_not_run"])
    return {"gpus": gpus,
            "harnesses": [{"builds": {side: record_of(b) for side, b in outcome.builds.items()},
                           "binaries": outcome.binaries,
                           "runs": {side: [record_of(r) for r in runs]
                                    for side, runs in outcome.runs.items()}}
                          for outcome in outcomes]}


def gather(outcomes: list[HarnessOutcome], jobs: list[Job], done: list[JobOutcome]
           ) -> dict[str, dict]:
    """Each harness's builds, binaries and runs from its unit's job record; the GPUs each
    unit's node had (by unit), to judge its harnesses by. A job without a readable record
    leaves its harnesses unbuilt, with the job's error as their build output."""
    by_unit: dict[str, list[HarnessOutcome]] = {}
    for outcome in outcomes:
        by_unit.setdefault(outcome.unit, []).append(outcome)
    node_gpus = {}
    for job, result in zip(jobs, done):
        members = by_unit[job.key]
        try:
            if result.result is None:
                raise RecordError(result.error)
            records = result.result["harnesses"]
            if len(records) != len(members):
                raise RecordError("it does not hold one record per harness")
            for outcome, record in zip(members, records):
                outcome.builds = {side: from_record(Build, b) for side, b in
                                  record["builds"].items()}
                outcome.binaries = {str(side): str(path) for side, path in
                                    record["binaries"].items()}
                outcome.runs = {side: [from_record(SideRun, r) for r in runs]
                                for side, runs in record["runs"].items()}
            node_gpus[job.key] = {side: {"usable": bool(gpu["usable"]), "seen": str(gpu["seen"])}
                                  for side, gpu in result.result["gpus"].items()}
        except (RecordError, KeyError, TypeError, AttributeError) as err:
            if result.result is not None:
                result.error = f"its record cannot be read: {err}"
            for outcome in members:
                outcome.builds = {side: Build("slurm", "", False, 0.0,
                                              f"no result from its Slurm job: {result.error}")
                                  for side in outcome.sources}
                outcome.binaries, outcome.runs = {}, {}
    return node_gpus
