"""`rocmigrate build --executor slurm`: one Slurm job per build root (its CMake or Makefile) and
one per group of translation units built file by file (``migrator.cluster``).

The submitting command plans the build and copies the tree into the build folder, inside the
work folder every node sees, as a local run copies it into its build folder; each job builds its
part there as a local run builds it (``build_root``, ``_files``) and returns its units, logs and
missing libraries; the report puts them together in the order a local run builds them."""

from __future__ import annotations

from pathlib import Path

from ..cluster import Job, JobOutcome, run_jobs
from ..cluster.records import RecordError, from_record, record_of
from ..cluster.work import files_digest
from ..toolchain.compilers import installed_hip
from ..workspace.units import translation_units
from .roots import Root
from .run import (CMAKE_CONFIGURE_TIMEOUT, BuildFailure, BuildOptions, BuildReport, Unit, _Run,
                  _add_root, _files, build_root, loose_label, new_run)
from .tree import read_tree, tree_files

KIND = "build.part"
FILES_PER_JOB = 16  # translation units of one job building file by file


def build_on_cluster(run: _Run, roots: list[Root], loose: list[str]) -> None:
    """Build every root and the loose translation units as Slurm jobs; their units, logs and
    missing libraries into ``run``'s report, in the order of a local build."""
    options = run.options
    files = tree_files(run.out)
    common = {"out": str(run.out), "folder": str(run.folder), "options": _options_record(options),
              "tree": files_digest((run.out, rel) for rel in sorted(files))}
    units = translation_units(run.out, files)
    jobs = [Job(f"root {root.label}", KIND, {**common, "root": record_of(root)},
                seconds=_root_seconds(root, units, options.timeout))
            for root in roots]
    chunks = [loose[start:start + FILES_PER_JOB] for start in range(0, len(loose), FILES_PER_JOB)]
    jobs += [Job(f"files {chunk[0]}" + (f" .. {chunk[-1]}" if len(chunk) > 1 else ""), KIND,
                 {**common, "files": chunk}, seconds=options.timeout * len(chunk) + 60)
             for chunk in chunks]
    run.progress(f"{len(jobs)} builds as Slurm jobs ({len(roots)} build roots, "
                 f"{len(loose)} files in {len(chunks)} groups; work folder {options.work})")
    done = run_jobs(jobs, options.cluster, options.work, "build", run.progress,
                    error=BuildFailure)
    report = run.report
    report.cluster = {"work": str(options.work), "jobs": [outcome.as_dict() for outcome in done]}
    for root, outcome in zip(roots, done):
        units = _units_of(run, outcome)
        if units is None:
            units = [Unit(root.label, "job", False,
                          log_tail=f"no result from its Slurm job: {outcome.error}")]
        _add_root(report, root.label, root.method, units)
    if not loose:
        return
    name = run.reserve_log("files")
    units, logs = [], []
    for chunk, outcome in zip(chunks, done[len(roots):]):
        part = _units_of(run, outcome, logs)
        if part is None:
            part = [Unit(rel, "translation unit", False,
                         log_tail=f"no result from its Slurm job: {outcome.error}")
                    for rel in chunk]
        units += part
    for unit in units:
        unit.log = name if unit.log else unit.log
    report.logs[name] = "".join(logs)
    _add_root(report, loose_label(roots), "files", units)


def _root_seconds(root: Root, units: list[str], timeout: float) -> float:
    """A root job's time limit: configuring, then its build and the builds of failed targets
    alone, each allowed ``timeout`` per translation unit under the root (as a local build
    allows them)."""
    sources = sum(1 for rel in units if not root.path or rel.startswith(root.path + "/"))
    return CMAKE_CONFIGURE_TIMEOUT + 2 * timeout * (sources + 1) + 60


def _units_of(run: _Run, outcome: JobOutcome, files_log: list[str] | None = None
              ) -> list[Unit] | None:
    """A job's units, its logs (those of a file-by-file job appended to ``files_log``, the
    others kept under their names, a taken one renamed), its missing libraries and the
    translation units with errors, into ``run``; None without a readable result."""
    result = outcome.result
    if result is None:
        return None
    try:
        units = [from_record(Unit, unit) for unit in result["units"]]
        logs = {str(rel): str(text) for rel, text in result["logs"].items()}
        run.missing.merge(result["missing"])
        run.units_with_errors.update(str(rel) for rel in result["with_errors"])
        run.report.notices += [str(notice) for notice in result["notices"]
                               if notice not in run.report.notices]
    except (RecordError, KeyError, TypeError, AttributeError) as err:
        outcome.error = f"its record cannot be read: {err}"
        return None
    if files_log is not None:
        files_log += logs.values()
        return units
    renamed = {}
    for rel, text in logs.items():
        renamed[rel] = run.reserve_log(Path(rel).stem) if rel in run.report.logs else rel
        run.report.logs[renamed[rel]] = text
    for unit in units:
        unit.log = renamed.get(unit.log, unit.log)
    return units


def part_job(arguments: dict) -> dict:
    """On a node: build one root, or a group of translation units file by file."""
    options = _options_from(arguments["options"])
    out, folder = Path(arguments["out"]), Path(arguments["folder"])
    hip = installed_hip()
    if hip is None:
        raise BuildFailure("hipcc not found on this node")
    report = BuildReport({}, hip.describe(), {}, "", None)
    run = new_run(options, out, folder, hip, read_tree(out), report,
                  lambda line: print(line, flush=True))
    if "root" in arguments:
        units = build_root(run, from_record(Root, arguments["root"]))
    else:
        units = _files(run, [str(rel) for rel in arguments["files"]])
    return {"units": [record_of(unit) for unit in units], "logs": report.logs,
            "missing": run.missing.result(), "with_errors": sorted(run.units_with_errors),
            "notices": report.notices}


def _options_record(options: BuildOptions) -> dict:
    return {"source": str(options.source) if options.source else None,
            "offload_archs": list(options.offload_archs), "jobs": options.cluster.cpus,
            "timeout": options.timeout, "method": options.method,
            "max_errors": options.max_errors, "cmake_args": list(options.cmake_args),
            "make_vars": list(options.make_vars)}


def _options_from(record: dict) -> BuildOptions:
    return BuildOptions(out=Path("."), source=Path(record["source"]) if record["source"] else None,
                        offload_archs=tuple(record["offload_archs"]), jobs=record["jobs"],
                        timeout=record["timeout"], method=record["method"],
                        max_errors=record["max_errors"], cmake_args=tuple(record["cmake_args"]),
                        make_vars=tuple(record["make_vars"]))
