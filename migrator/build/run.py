"""Building a converted tree: through its CMake, else its Makefile, else every build root below
the top (roots.py) and file by file what lies under none.

Everything the build writes goes into the build folder (a temporary one unless named): CMake and
Make work on a copy of the tree there, objects of the file-by-file build go there, and the
compilers' TMPDIR is there. The converted tree is only read.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shlex
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ..cluster import ClusterOptions
from ..fsutil import MiB, read_regular
from ..toolchain.compilers import (HIPCC_PLACES, HipError, InstalledHip, amd_env,
                                   installed_hip, rocm_root)
from ..toolchain.process import run_process
from ..versions import format_version
from ..workspace.units import translation_units
from .arguments import ArgumentError, checked_cmake_args, checked_make_vars
from .errors import BuildError, Explainer, parse_errors
from .goals import (DATABASE_ARGS, Goal, failed_rules, make_goals, only_runs_make,
                    sub_makes)
from .hip import CMakeSetup, cmake_setup
from .libraries import MissingLibraries
from .roots import BUILD_FILES, MAKEFILES, Root, calls_project, find_roots, root_of
from .tree import CACHE_FOLDER, ConvertedTree, include_folders, plain_rel, read_tree, tree_files

METHODS = ("auto", "cmake", "make", "files")
_SIBLING = re.compile(r"(?<![./])\.\./(\w[\w.+-]*)")  # ../NAME, not a/../NAME or ../../
DEFAULT_ARCH = "gfx90a"
CMAKE_CONFIGURE_TIMEOUT = 300.0  # seconds: configuring runs test compiles of its own
# make's line for a CMake target whose rule failed (in a subfolder: [sub/CMakeFiles/...]):
# make[2]: *** [CMakeFiles/NAME.dir/build.make:76: CMakeFiles/NAME.dir/main.hip.o] Error 1
_FAILED_TARGET = re.compile(r"^make\[\d+\]: \*\*\* \[(?:[^\]\s]*/)?CMakeFiles/([^/\]]+)\.dir/",
                            re.MULTILINE)
_MAX_MAKE_DEPTH = 4  # makes running makes: how deep their goals are followed
TARGET_KINDS = ("target", "goal", "make", "translation unit")  # what counts as a target built
_LOG_NAME = re.compile(r"[^\w.+-]+")


class BuildFailure(Exception):
    """The build cannot start: a usage error (no tree, no hipcc, a build folder inside OUT)."""


@dataclass(frozen=True)
class BuildOptions:
    out: Path  # the converted tree
    source: Path | None = None  # the CUDA tree it came from (maps error lines back)
    offload_archs: tuple[str, ...] = (DEFAULT_ARCH,)
    build_dir: Path | None = None  # None: a temporary folder, removed afterwards
    keep_build: bool = False
    jobs: int = 0  # 0: one per CPU
    timeout: float = 600.0  # seconds per compile
    method: str = "auto"
    max_errors: int = 5  # errors kept per unit
    cmake_args: tuple[str, ...] = ()  # passed to CMake's configure step (checked)
    make_vars: tuple[str, ...] = ()  # NAME=VALUE on make's command line (checked)
    # where the builds run: here, or one Slurm job per build root and per group of files
    # (build.cluster), in ``work`` (every node must see it)
    cluster: ClusterOptions = ClusterOptions()
    work: Path | None = None


@dataclass
class Unit:
    """One thing built: a CMake target, a make goal, the Makefile's build when make names no
    goal, a configure step, or a translation unit."""

    name: str
    kind: str  # configure | target | goal | make | translation unit
    built: bool
    seconds: float = 0.0
    timed_out: bool = False
    command: str = ""
    error_count: int = 0
    errors: list[BuildError] = field(default_factory=list)
    log_tail: str = ""  # the end of the log, when no error could be read from it
    root: str = ""  # the build root it belongs to ("" the tree's top; files: none)
    log: str = ""  # its log in the report folder (logs/NAME.log)

    @property
    def label(self) -> str:
        """The unit's name with its root, as the missing-library list names it."""
        return f"{self.root}: {self.name}" if self.root else self.name


@dataclass
class BuildReport:
    settings: dict
    hip: dict
    tree: dict
    method: str  # cmake | make | files (one build at the top) | roots (several)
    build_dir: str | None
    notices: list[str] = field(default_factory=list)  # said up front: version mismatch, shim
    units: list[Unit] = field(default_factory=list)
    roots: list[dict] = field(default_factory=list)  # {path, method, log, units: [index]}
    logs: dict[str, str] = field(default_factory=dict)  # report-relative name -> full log
    missing: list[dict] = field(default_factory=list)  # MissingLibrary.as_dict()
    translation_units: dict = field(default_factory=dict)  # {total, with_errors: [rel]}
    # with Slurm: {"work": folder, "jobs": [cluster.JobOutcome.as_dict()]}; None: built here
    cluster: dict | None = None

    @property
    def ok(self) -> bool:
        return bool(self.units) and all(unit.built for unit in self.units)

    @property
    def targets(self) -> list[Unit]:
        return [unit for unit in self.units if unit.kind in TARGET_KINDS]


@dataclass
class _Run:
    """What every build of one run shares."""

    options: BuildOptions
    out: Path
    copy: Path  # the tree's copy in the build folder (CMake and make work there)
    folder: Path  # the build folder
    hip: InstalledHip
    explainer: Explainer
    report: BuildReport
    missing: MissingLibraries
    progress: object
    root: str = ""  # the root being built (the units' root)
    cmake_setup: CMakeSetup | None = None  # how CMake finds this HIP (the first CMake root's)
    units_with_errors: set[str] = field(default_factory=set)
    explained: set[int] = field(default_factory=set)  # ids of the errors explained

    def explain(self, errors: list[BuildError], cwd: Path) -> list[BuildError]:
        """``errors`` mapped to the tree and explained (each once: its paths become the tree's),
        the translation units they name noted."""
        for error in errors:
            if id(error) in self.explained:
                continue
            self.explained.add(id(error))
            self.explainer.explain(error, cwd)
            if error.kind == "compiler" and error.unit and not Path(error.unit).is_absolute():
                self.units_with_errors.add(error.unit)
        return errors

    def errors_of(self, unit: Unit, errors: list[BuildError], cwd: Path) -> None:
        """``errors`` explained, counted and kept (the first ``max_errors``) for ``unit``; the
        libraries they show missing noted."""
        self.explain(errors, cwd)
        unit.root = self.root
        unit.error_count = len(errors)
        unit.errors = errors[:self.options.max_errors]
        self.missing.add(unit.label, errors)

    def reserve_log(self, name: str) -> str:
        """The report's ``logs/NAME.log`` for a build (a new name when taken), empty until the
        build stores its log there (``report.logs[rel] = text``)."""
        stem = _LOG_NAME.sub("-", name).strip("-.") or "build"
        rel, number = f"logs/{stem}.log", 1
        while rel in self.report.logs:
            number += 1
            rel = f"logs/{stem}-{number}.log"
        self.report.logs[rel] = ""
        return rel


def build(options: BuildOptions, progress=lambda line: None) -> BuildReport:
    """Build ``options.out``; raises BuildFailure when the build cannot start."""
    out = options.out
    if not out.is_dir():
        raise BuildFailure(f"{out} is not a folder (give the output folder of rocmigrate "
                           "convert)")
    if options.source is not None and not options.source.is_dir():
        raise BuildFailure(f"--source {options.source} is not a folder")
    if options.method not in METHODS:
        raise BuildFailure(f"unknown method {options.method!r} (expected one of "
                           f"{', '.join(METHODS)})")
    try:
        checked_cmake_args(options.cmake_args)
        checked_make_vars(options.make_vars)
    except ArgumentError as err:
        raise BuildFailure(str(err)) from None
    try:
        hip = installed_hip()
    except HipError as err:
        raise BuildFailure(str(err)) from None
    if hip is None:
        raise BuildFailure(f"hipcc not found ({HIPCC_PLACES}): install HIP (Debian: apt "
                           "install hipcc)")
    out = out.resolve()
    folder = _build_folder(options, out)
    try:
        return _build_in(options, out, folder, hip, progress)
    finally:
        if options.build_dir is None and not options.keep_build:
            shutil.rmtree(folder, ignore_errors=True)


def _build_folder(options: BuildOptions, out: Path) -> Path:
    if options.build_dir is None and options.cluster.slurm:  # in the work folder: nodes see it
        from ..cluster.work import prepare

        try:
            return prepare(options.work, "build") / "build"
        except OSError as err:
            raise BuildFailure(f"cannot use the work folder {options.work}: {err}") from None
    if options.build_dir is None:
        return Path(tempfile.mkdtemp(prefix="rocmigrate-build-"))
    folder = options.build_dir.resolve()
    if folder == out or out in folder.parents:
        raise BuildFailure(f"--build-dir {options.build_dir} is inside the converted tree "
                           f"{options.out}: the build never writes there")
    if folder in out.parents:
        raise BuildFailure(f"--build-dir {options.build_dir} holds the converted tree "
                           f"{options.out}: name a folder beside it")
    if folder.exists() and not folder.is_dir():
        raise BuildFailure(f"--build-dir {options.build_dir} exists and is not a folder")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def build_plan(method: str, out: Path, files: list[str]) -> tuple[str, list[Root], list[str]]:
    """What a run builds: (the method reported, the build roots, the translation units
    compiled file by file). ``auto``: the top's CMake project, else its Makefile, else every
    build root below (roots.py) and file by file what lies under none."""
    if method in ("cmake", "make"):
        return method, [Root("", method)], []
    units = translation_units(out, files)
    if method == "files":
        return "files", [], units
    if "CMakeLists.txt" in files and calls_project(_read_or_empty(out / "CMakeLists.txt")):
        return "cmake", [Root("", "cmake")], []
    if set(MAKEFILES) & set(files):
        return "make", [Root("", "make")], []
    roots = find_roots(out, files)
    loose = [rel for rel in units if root_of(rel, roots) is None]
    return ("roots" if roots else "files"), roots, loose


def _read_or_empty(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


def _build_in(options: BuildOptions, out: Path, folder: Path, hip: InstalledHip,
              progress) -> BuildReport:
    tree = read_tree(out)
    files = tree_files(out)
    method, roots, loose = build_plan(options.method, out, files)
    if not roots and not loose:
        raise BuildFailure(f"{options.out} holds nothing to build: no top-level CMakeLists.txt, "
                           "no Makefile, no HIP translation unit (.hip, .cu, C++ with HIP code)")
    (folder / "tmp").mkdir(exist_ok=True)
    report = BuildReport(
        settings={"offload_archs": list(options.offload_archs), "jobs": _jobs(options),
                  "timeout": options.timeout, "method": options.method,
                  "source": str(options.source) if options.source else None,
                  "cmake_args": list(options.cmake_args), "make_vars": list(options.make_vars),
                  "executor": options.cluster.as_dict() if options.cluster.slurm
                  else {"executor": "local"}},
        hip=hip.describe(),
        tree={"path": str(out), "converted_for": format_version(tree.converted_for)
              if tree.converted_for else None, "cache": tree.cache_note},
        method=method,
        build_dir=str(folder) if options.build_dir or options.keep_build else None)
    if tree.converted_for and tree.converted_for[:2] > hip.version[:2]:
        report.notices.append(
            f"{options.out} was converted for ROCm {format_version(tree.converted_for)}, newer "
            f"than the installed HIP {hip.version_text} (ROCm {format_version(hip.version)}): "
            f"what ROCm {format_version(hip.version)} lacks will not compile; convert again "
            f"with --rocm auto (or --rocm {format_version(hip.version)})")
    elif tree.converted_for is None and tree.sources:  # a rocmigrate output with an odd cache
        report.notices.append(f"the ROCm {options.out} was converted for is unknown "
                              f"({tree.cache_note})")
    for notice in report.notices:
        progress(f"note: {notice}")
    run = new_run(options, out, folder, hip, tree, report, progress)
    if roots:
        _copy_tree(out, run.copy)
        if len(roots) > 1 or roots[0].path:
            progress(f"{len(roots)} build roots: {', '.join(root.label for root in roots)}")
    if options.cluster.slurm:
        from .cluster import build_on_cluster

        build_on_cluster(run, roots, loose)
    else:
        for root in roots:
            _add_root(report, root.label, root.method, build_root(run, root))
        if loose:
            _add_root(report, loose_label(roots), "files", _files(run, loose))
    report.missing = run.missing.result()
    failed_files = {unit.name for unit in report.units
                    if unit.kind == "translation unit" and not unit.built}
    every_unit = translation_units(out, files)
    with_errors = sorted((run.units_with_errors | failed_files) & set(every_unit))
    report.translation_units = {"total": len(every_unit), "with_errors": with_errors}
    return report


def new_run(options: BuildOptions, out: Path, folder: Path, hip: InstalledHip,
            tree: ConvertedTree, report: BuildReport, progress) -> _Run:
    """What the builds of a run share (the tree's copy goes to ``folder/tree``)."""
    copy = folder / "tree" / out.name
    return _Run(options, out, copy, folder, hip,
                Explainer(tree, [out, copy], options.source, hip.version), report,
                MissingLibraries(rocm_root(hip.hipcc)), progress)


def build_root(run: _Run, root: Root) -> list[Unit]:
    """Build one root with its CMake or its Makefile."""
    run.root = root.path
    units = _cmake(run, root) if root.method == "cmake" else _make(run, root)
    for unit in units:
        unit.root = root.path
    run.root = ""
    return units


def loose_label(roots: list[Root]) -> str:
    """The report's name of what is built file by file."""
    return "(file by file)" if roots else "."


def _add_root(report: BuildReport, label: str, method: str, units: list[Unit]) -> None:
    first = len(report.units)
    report.units += units
    report.roots.append({"path": label, "method": method,
                         "log": next((unit.log for unit in units if unit.log), ""),
                         "units": list(range(first, len(report.units)))})


def _jobs(options: BuildOptions) -> int:
    return options.jobs if options.jobs > 0 else os.cpu_count() or 1


def _env(folder: Path, hip: InstalledHip, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The build's environment: HIP's AMD platform, TMPDIR in the build folder, ROCM_PATH and
    HIP_PATH of the installed HIP unless set."""
    root = str(rocm_root(hip.hipcc))
    env = amd_env({"TMPDIR": str(folder / "tmp"), **(extra or {})})
    env.setdefault("ROCM_PATH", root)
    env.setdefault("HIP_PATH", root)
    return env


def _run_logged(command: list[str], cwd: Path, timeout: float, env: dict[str, str]):
    """``command`` run with its error output in its standard output (one log, in the order
    the build wrote it)."""
    return run_process(["sh", "-c", 'exec "$@" 2>&1', "sh", *command], cwd, timeout, env=env)


def _log_of(done) -> str:
    return done.stdout + done.stderr + (f"\n{done.error}\n" if done.error else "")


@functools.lru_cache(maxsize=4)
def _output_sync(make: str) -> tuple[str, ...]:
    """``--output-sync=target`` where make has it (GNU make 4): each target's output in one
    piece, so a compiler's errors are not interleaved with another's under -j."""
    done = run_process([make, "--version"], None, 30.0)
    version = re.search(r"GNU Make (\d+)", done.stdout or "")
    return ("--output-sync=target",) if version and int(version.group(1)) >= 4 else ()


def _copy_tree(out: Path, copy: Path) -> None:
    """The converted tree, copied into the build folder (links kept as links), without the
    cache folder: CMake and Make then write nothing into the tree itself. A folder beside the
    tree that its build files name (``../common``: HeCBench's HIP Makefiles include
    ``../NAME-cuda``) is linked beside the copy, for reading."""
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(out, copy, symlinks=True,
                    ignore=lambda folder, names: [CACHE_FOLDER] if Path(folder) == out else [])
    named: set[str] = set()
    for rel in tree_files(out):
        if rel.rsplit("/", 1)[-1] in BUILD_FILES or rel.endswith((".mk", ".cmake")):
            try:
                named.update(_SIBLING.findall((out / rel).read_text(errors="replace")))
            except OSError:
                continue
    for name in sorted(named - {out.name}):
        sibling, link = out.parent / name, copy.parent / name
        if sibling.is_dir() and not link.exists() and not link.is_symlink():
            link.symlink_to(sibling.resolve(), target_is_directory=True)


def _tail(text: str, lines: int = 20) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def _finish(run: _Run, unit: Unit, log: str, errors: list[BuildError], cwd: Path,
            log_name: str, fallback: str = "") -> Unit:
    """A unit's errors, its log kept, and the log's tail where it failed with no error read."""
    run.errors_of(unit, errors, cwd)
    unit.log = log_name
    if not unit.built and not unit.errors:
        unit.log_tail = _tail(log) or fallback
    return unit


# -- CMake ------------------------------------------------------------------------------------

def _cmake(run: _Run, root: Root) -> list[Unit]:
    options, report, progress = run.options, run.report, run.progress
    cmake = shutil.which("cmake")
    if cmake is None:
        return [Unit("configure", "configure", False, log_tail="cmake not found on PATH")]
    source = run.copy / root.path if root.path else run.copy
    binary = run.folder / "cmake" / root.path if root.path else run.folder / "cmake"
    query = binary / ".cmake" / "api" / "v1" / "query" / "codemodel-v2"
    query.parent.mkdir(parents=True, exist_ok=True)
    query.touch()
    if run.cmake_setup is None:  # once per run, for every CMake root
        run.cmake_setup = cmake_setup(run.hip.hipcc, run.folder, options.offload_archs[0])
        if run.cmake_setup.note:
            report.notices.append(f"CMake: {run.cmake_setup.note}")
            progress(f"note: CMake: {run.cmake_setup.note}")
    setup = run.cmake_setup
    archs = ";".join(options.offload_archs)
    command = [cmake, "-S", str(source), "-B", str(binary), "-G", "Unix Makefiles",
               f"-DCMAKE_HIP_ARCHITECTURES={archs}", f"-DAMDGPU_TARGETS={archs}",
               f"-DGPU_TARGETS={archs}", *setup.args]
    timeout_tool = shutil.which("timeout")
    if timeout_tool:  # each compile under the time limit
        launcher = f"{timeout_tool};-k;5;{options.timeout:g}"
        command += [f"-DCMAKE_{lang}_COMPILER_LAUNCHER={launcher}" for lang in ("HIP", "CXX", "C")]
    command += options.cmake_args  # the user's last: they win
    env = _env(run.folder, run.hip, dict(setup.env))
    progress(f"configuring {root.label} with CMake")
    done = _run_logged(command, run.folder, CMAKE_CONFIGURE_TIMEOUT, env)
    log = _log_of(done)
    logs = [f"$ {shlex.join(command)}\n{log}"]
    log_name = run.reserve_log(root.path or "cmake")
    configure = Unit("configure", "configure", done.rc == 0, done.seconds, done.timed_out,
                     shlex.join(command))
    _finish(run, configure, log, parse_errors(log), source, log_name)
    if not configure.built:
        run.report.logs[log_name] = "".join(logs)
        return [configure]
    targets = _codemodel_targets(binary)
    sources = sum(len(target["sources"]) for target in targets) or 1
    sync = _output_sync(shutil.which("make") or "make")
    build = [cmake, "--build", str(binary), "-j", str(_jobs(options)), "--", "-k", *sync]
    progress(f"building {len(targets)} CMake targets of {root.label}")
    done = _run_logged(build, run.folder, options.timeout * (sources + 1), env)
    log = _log_of(done)
    logs.append(f"$ {shlex.join(build)}\n{log}")
    errors = run.explain(parse_errors(log), source)
    failed_targets = set(_FAILED_TARGET.findall(log))
    prefix = f"{root.path}/" if root.path else ""
    units = [configure]
    for target in targets:
        built = target["name"] not in failed_targets and all(
            (binary / artifact).is_file() for artifact in target["artifacts"])
        unit = Unit(target["name"], "target", built, done.seconds,
                    done.timed_out and not built, shlex.join(build))
        own_files = {prefix + rel for rel in target["sources"]}
        mine = [error for error in errors if error.unit in own_files
                or error.output_file in own_files]
        if not built and not mine and not done.timed_out:
            # its errors are a dependency's, a link's or a header's: build it alone to read them
            alone = [cmake, "--build", str(binary), "--target", target["name"], "-j",
                     str(_jobs(options)), "--", "-k", *sync]
            again = _run_logged(alone, run.folder, options.timeout * (sources + 1), env)
            own = _log_of(again)
            logs.append(f"$ {shlex.join(alone)}\n{own}")
            unit.command, mine, log_of_unit = shlex.join(alone), parse_errors(own), own
        else:
            log_of_unit = log
        _finish(run, unit, log_of_unit, mine, source, log_name)
        units.append(unit)
    if not targets:
        unit = Unit("build", "make", done.rc == 0, done.seconds, done.timed_out,
                    shlex.join(build))
        units.append(_finish(run, unit, log, errors, source, log_name))
    run.report.logs[log_name] = "".join(logs)
    return units


def _codemodel_targets(binary: Path) -> list[dict]:
    """The targets that make something (name, their sources relative to the source tree, the
    artifacts relative to the build folder), from CMake's file API reply."""
    reply = binary / ".cmake" / "api" / "v1" / "reply"
    try:
        index = json.loads(max(reply.glob("index-*.json")).read_text())
        codemodel = next(item for item in index["objects"] if item["kind"] == "codemodel")
        model = json.loads((reply / codemodel["jsonFile"]).read_text())
        found = []
        for listed in model["configurations"][0]["targets"]:
            target = json.loads((reply / listed["jsonFile"]).read_text())
            artifacts = [a["path"] for a in target.get("artifacts", ())]
            if target.get("type") == "UTILITY" or not artifacts:
                continue
            found.append({"name": target["name"], "artifacts": artifacts,
                          "sources": {s["path"] for s in target.get("sources", ())
                                      if not s.get("isGenerated")}})
        return found
    except (OSError, ValueError, KeyError, StopIteration, IndexError, TypeError):
        return []


# -- Make -------------------------------------------------------------------------------------

def _make(run: _Run, root: Root) -> list[Unit]:
    """Each goal of the root's Makefile (goals.py: from make's database) built with
    ``make -k GOAL``, one after the other (each goal's errors are its own); the default goal
    as one unit when make names no goal. A goal that only runs other makes (``src.build:
    $(MAKE) -C src build``) counts as their goals, each failed one built again alone for its
    own errors."""
    options, progress = run.options, run.progress
    make = shutil.which("make")
    if make is None:
        return [Unit("Makefile", "make", False, log_tail="make not found on PATH")]
    where = run.copy / root.path if root.path else run.copy
    # hipcc builds for HCC_AMDGPU_TARGET where a command names no --offload-arch
    env = _env(run.folder, run.hip, {"HCC_AMDGPU_TARGET": ",".join(options.offload_archs)})
    variables = list(options.make_vars)
    unit_count = len(translation_units(where, tree_files(where)))
    database = run_process([make, *DATABASE_ARGS, *variables], where, 60.0, env=env)
    # a Makefile make cannot read (Makefile:3: *** missing separator) builds as one unit
    unreadable = any(error.kind == "make" and error.file for error in
                     parse_errors(database.stderr))
    goals = [] if unreadable else make_goals(database.stdout)
    recursive = bool(goals) and bool(sub_makes(database.stdout))
    base = [make, "-k", "-j", str(_jobs(options)), *_output_sync(make), *variables]
    log_name = run.reserve_log(root.path or "make")
    progress(f"building {root.label} with its Makefile"
             + (f" ({len(goals)} goals: {', '.join(goal.name for goal in goals[:8])}"
                f"{'...' if len(goals) > 8 else ''})" if goals else ""))
    logs: list[str] = []
    units: list[Unit] = []
    for goal in goals or [None]:
        command = base + ([goal.name] if goal else [])
        done = _run_logged(command, where, options.timeout * (unit_count + 1), env)
        log = _log_of(done)
        logs.append(f"$ {shlex.join(command)}\n{log}")
        if goal is None:
            unit = Unit("Makefile", "make", done.rc == 0, done.seconds, done.timed_out)
        else:
            leaves = _sub_goals(make, where, where, goal, variables, env) if recursive else []
            if leaves:  # the goal stands for the goals of the makes it runs
                units += _sub_goal_units(run, make, leaves, done, log, where, env, log_name, logs)
                continue
            built = done.rc == 0 and goal.name not in failed_rules(log) and (
                not goal.writes_file or (where / goal.name).exists())
            unit = Unit(goal.name, "goal", built, done.seconds, done.timed_out and not built)
        unit.command = shlex.join(["HIP_PLATFORM=amd", *command])
        units.append(_finish(run, unit, log, parse_errors(log), where, log_name,
                             done.error or ""))
    run.report.logs[log_name] = "".join(logs)
    return units


@dataclass(frozen=True)
class _SubGoal:
    """A goal of a make that a root's goal runs: where its make runs, with which variables,
    and its name from the root's folder."""

    goal: Goal
    folder: Path
    variables: tuple[str, ...]
    name: str

    def path(self) -> Path:
        return self.folder / self.goal.name  # an absolute name stays itself


def _sub_goals(make: str, root: Path, folder: Path, goal: Goal, variables: list[str] | tuple,
               env: dict[str, str], depth: int = 0) -> list[_SubGoal]:
    """The goals ``goal`` stands for when its recipes only run makes (read from ``make -pn
    GOAL``: goals.sub_makes), each such goal's own followed the same way; [] when it runs
    anything else."""
    # -B: every recipe printed, so that a goal already made still shows what it runs
    dry = run_process([make, *DATABASE_ARGS, "-B", goal.name, *variables], folder, 60.0,
                      env=env)
    found: list[_SubGoal] = []
    if depth >= _MAX_MAKE_DEPTH or not only_runs_make(dry.stdout, make):
        return found
    for sub in sub_makes(dry.stdout):
        sub_folder = Path(sub.folder)
        for inner in sub.goal_list():
            deeper = _sub_goals(make, root, sub_folder, inner, sub.variables, env, depth + 1)
            if deeper:
                found += deeper
                continue
            if any(leaf.path() == sub_folder / inner.name for leaf in found):
                continue
            name = os.path.relpath(sub_folder / inner.name, root)
            if name.startswith(".."):
                name = str(sub_folder / inner.name)
            found.append(_SubGoal(inner, sub_folder, sub.variables, Path(name).as_posix()))
    return found


def _sub_goal_units(run: _Run, make: str, leaves: list[_SubGoal], done, log: str, where: Path,
                    env: dict[str, str], log_name: str, logs: list[str]) -> list[Unit]:
    """Units for the goals a root's goal stood for, judged by its build's log (make's failed
    rules) and files; a failed one built again alone (``make -k GOAL`` in its make's folder,
    with its variables) for its own errors."""
    failed = failed_rules(log)
    units = []
    for leaf in leaves:
        if (leaf.goal.writes_file and not leaf.goal.has_prerequisites
                and leaf.goal.name not in failed and not leaf.path().exists()):
            continue  # a step of the build that writes no file of its name (``dirs: mkdir``)
        built = leaf.goal.name not in failed and (
            leaf.path().exists() if leaf.goal.writes_file else done.rc == 0)
        unit = Unit(leaf.name, "goal", built, done.seconds, done.timed_out and not built)
        own, cwd = log, where
        if not built and not done.timed_out:
            alone = [make, "-k", "-j", str(_jobs(run.options)), leaf.goal.name,
                     *leaf.variables]
            again = _run_logged(alone, leaf.folder, run.options.timeout * 4, env)
            own, cwd = _log_of(again), leaf.folder
            logs.append(f"$ (cd {shlex.quote(str(leaf.folder))} && {shlex.join(alone)})\n{own}")
            folder = os.path.relpath(leaf.folder, where)
            unit.command = shlex.join(["HIP_PLATFORM=amd", alone[0], "-C", folder, *alone[1:]])
        # a built goal's log is the whole build's: its errors are the others'
        units.append(_finish(run, unit, own, [] if built else parse_errors(own), cwd,
                             log_name, done.error or ""))
    return units


# -- file by file -----------------------------------------------------------------------------

def _files(run: _Run, units: list[str]) -> list[Unit]:
    options, out, hip = run.options, run.out, run.hip
    files = tree_files(out)
    flags = _compile_database(options, out, run.explainer.tree, files)
    includes = [arg for rel in include_folders(out, files)
                for arg in ("-I", str(out / rel) if rel else str(out))]
    objects = run.folder / "objects"
    env = _env(run.folder, hip)
    log_name = run.reserve_log("files")
    run.progress(f"compiling {len(units)} translation units with {hip.hipcc}")

    def compile_one(rel: str) -> tuple[Unit, str]:
        target = objects / f"{rel}.o"
        target.parent.mkdir(parents=True, exist_ok=True)
        own = flags.get(rel, [])
        standard = [] if any(flag.startswith("-std=") for flag in own) else ["-std=c++17"]
        command = [hip.hipcc, *(f"--offload-arch={arch}" for arch in options.offload_archs),
                   *standard, *own, *includes, "-x", "hip", "-c", str(out / rel), "-o",
                   str(target)]
        done = _run_logged(command, run.folder, options.timeout, env)
        unit = Unit(rel, "translation unit", done.rc == 0, done.seconds, done.timed_out,
                    shlex.join(["HIP_PLATFORM=amd", *command]))
        log = _log_of(done)
        _finish(run, unit, log, parse_errors(log), run.folder, log_name,
                done.error or f"no answer within {options.timeout:g} s")
        return unit, f"$ {unit.command}\n{log}"

    with ThreadPoolExecutor(max_workers=_jobs(options)) as pool:
        done = list(pool.map(compile_one, units))
    run.report.logs[log_name] = "".join(log for _, log in done)
    return [unit for unit, _ in done]


_KEPT_FLAGS = ("-D", "-U", "-I", "-isystem", "-include", "-std=")


def _compile_database(options: BuildOptions, out: Path, tree: ConvertedTree,
                      files: list[str]) -> dict[str, list[str]]:
    """Per translation unit (output rel), the defines, include folders and language standard
    of its entry in a compile_commands.json of the converted tree or the CUDA tree (--source).
    Paths inside the tree the database was made for are moved into the converted tree;
    other flags (nvcc's -arch, -gencode...) are left out."""
    by_source = {source: output for output, source in tree.sources.items()}
    known = set(files)
    for root in (out, options.source):
        for place in ("compile_commands.json", "build/compile_commands.json"):
            path = (root / place) if root else None
            if path is None or not path.is_file():
                continue
            try:
                entries = json.loads(read_regular(path, 512 * MiB).decode(errors="replace"))
            except (OSError, ValueError, RecursionError):
                continue
            if isinstance(entries, list):
                return _flags_of(entries, by_source, known, out)
    return {}


def _flags_of(entries: list, by_source: dict[str, str], known: set[str],
              out: Path) -> dict[str, list[str]]:
    flags: dict[str, list[str]] = {}
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("file"), str):
            continue
        directory = Path(entry.get("directory") or ".") if isinstance(
            entry.get("directory"), str) else Path(".")
        arguments = entry.get("arguments")
        if not (isinstance(arguments, list) and all(isinstance(a, str) for a in arguments)):
            try:
                arguments = shlex.split(entry.get("command") or "")
            except (ValueError, TypeError):
                continue
        file = Path(os.path.normpath(directory / entry["file"]))
        parts = file.parts
        # the longest tail of the file's path that names a file of the trees
        for start in range(len(parts)):
            tail = "/".join(parts[start:])
            if not plain_rel(tail):
                continue
            output = by_source.get(tail) or (tail if tail in known else None)
            if output is not None:
                break
        else:
            continue
        tree_root = Path(*parts[:start]) if start else Path("/")
        flags[output] = _kept(arguments[1:], directory, tree_root, out)
    return flags


def _kept(arguments: list[str], directory: Path, tree_root: Path, out: Path) -> list[str]:
    """The defines, include folders and standard of a compile command; a folder inside the
    tree the command was made for is moved into the converted tree."""
    kept: list[str] = []
    index = 0
    while index < len(arguments):
        arg = arguments[index]
        flag = next((f for f in _KEPT_FLAGS if arg.startswith(f)), None)
        index += 1
        if flag is None or (flag == "-I" and arg.startswith("-include")):
            if arg.startswith("-include"):
                flag = "-include"
            else:
                continue
        if flag == "-std=":
            if arg.startswith("-std=c++") or arg.startswith("-std=gnu++"):
                kept.append(arg)
            continue
        value = arg[len(flag):]
        if not value and index < len(arguments):
            value, index = arguments[index], index + 1
        if not value:
            continue
        if flag in ("-D", "-U"):
            kept.append(flag + value)
            continue
        path = Path(os.path.normpath(directory / value))
        try:
            path = out / path.relative_to(tree_root)
        except ValueError:
            pass
        if path.exists():
            kept += [flag, str(path)]
    return kept
