"""Building a converted tree: through its CMake, else its Makefile, else file by file.

Everything the build writes goes into the build folder (a temporary one unless named): CMake and
Make work on a copy of the tree there, objects of the file-by-file build go there, and the
compilers' TMPDIR is there. The converted tree is only read.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ..fsutil import MiB, read_regular
from ..toolchain.compilers import (HIPCC_PLACES, HipError, InstalledHip, amd_env,
                                   installed_hip, rocm_root)
from ..toolchain.process import run_process
from ..versions import format_version
from ..workspace.units import translation_units
from .errors import BuildError, Explainer, parse_errors
from .hip import cmake_setup
from .tree import CACHE_FOLDER, ConvertedTree, include_folders, plain_rel, read_tree, tree_files

METHODS = ("auto", "cmake", "make", "files")
_BUILD_FILES = ("CMakeLists.txt", "Makefile", "makefile", "GNUmakefile")
_PROJECT = re.compile(rb"^[ \t]*project[ \t]*\(", re.IGNORECASE | re.MULTILINE)
_SIBLING = re.compile(r"(?<![./])\.\./(\w[\w.+-]*)")  # ../NAME, not a/../NAME or ../../
DEFAULT_ARCH = "gfx90a"
CMAKE_CONFIGURE_TIMEOUT = 300.0  # seconds: configuring runs test compiles of its own
# make's line for a CMake target whose rule failed (in a subfolder: [sub/CMakeFiles/...]):
# make[2]: *** [CMakeFiles/NAME.dir/build.make:76: CMakeFiles/NAME.dir/main.hip.o] Error 1
_FAILED_TARGET = re.compile(r"^make\[\d+\]: \*\*\* \[(?:[^\]\s]*/)?CMakeFiles/([^/\]]+)\.dir/",
                            re.MULTILINE)


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


@dataclass
class Unit:
    """One thing built: a CMake target, the Makefile's build, or a translation unit."""

    name: str
    kind: str  # configure | target | make | translation unit
    built: bool
    seconds: float = 0.0
    timed_out: bool = False
    command: str = ""
    error_count: int = 0
    errors: list[BuildError] = field(default_factory=list)
    log_tail: str = ""  # the end of the log, when no error could be read from it


@dataclass
class BuildReport:
    settings: dict
    hip: dict
    tree: dict
    method: str
    build_dir: str | None
    notices: list[str] = field(default_factory=list)  # said up front: version mismatch, shim
    units: list[Unit] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(self.units) and all(unit.built for unit in self.units)


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


def _build_in(options: BuildOptions, out: Path, folder: Path, hip: InstalledHip,
              progress) -> BuildReport:
    tree = read_tree(out)
    files = tree_files(out)
    method = options.method
    if method == "auto":
        method = ("cmake" if _top_level_cmake(out, files) else
                  "make" if set(_BUILD_FILES[1:]) & set(files) else "files")
    (folder / "tmp").mkdir(exist_ok=True)
    report = BuildReport(
        settings={"offload_archs": list(options.offload_archs), "jobs": _jobs(options),
                  "timeout": options.timeout, "method": options.method,
                  "source": str(options.source) if options.source else None},
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
    copy = folder / "tree" / out.name
    explainer = Explainer(tree, [out, copy], options.source, hip.version)
    if method == "cmake":
        report.units = _cmake(options, out, copy, folder, hip, report, explainer, progress)
    elif method == "make":
        report.units = _make(options, out, copy, folder, hip, explainer, progress,
                             len(translation_units(out, files)))
    else:
        report.units = _files(options, out, files, folder, hip, explainer, progress)
    return report


def _top_level_cmake(out: Path, files: list[str]) -> bool:
    """Does the tree have a CMakeLists.txt that can be configured on its own? A top-level one
    calls project(); one without is part of a larger project (HeCBench's per-program files
    call the suite's own functions)."""
    if "CMakeLists.txt" not in files:
        return False
    try:
        return bool(_PROJECT.search((out / "CMakeLists.txt").read_bytes()))
    except OSError:
        return False


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
        if rel.rsplit("/", 1)[-1] in _BUILD_FILES or rel.endswith((".mk", ".cmake")):
            try:
                named.update(_SIBLING.findall((out / rel).read_text(errors="replace")))
            except OSError:
                continue
    for name in sorted(named - {out.name}):
        sibling, link = out.parent / name, copy.parent / name
        if sibling.is_dir() and not link.exists() and not link.is_symlink():
            link.symlink_to(sibling.resolve(), target_is_directory=True)


def _unit_errors(unit: Unit, errors: list[BuildError], explainer: Explainer, cwd: Path,
                 limit: int) -> None:
    unit.error_count = len(errors)
    unit.errors = [explainer.explain(error, cwd) for error in errors[:limit]]


def _tail(text: str, lines: int = 20) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


# -- CMake ------------------------------------------------------------------------------------

def _cmake(options, out, copy, folder, hip, report, explainer, progress) -> list[Unit]:
    cmake = shutil.which("cmake")
    if cmake is None:
        return [Unit("configure", "configure", False, log_tail="cmake not found on PATH")]
    _copy_tree(out, copy)
    binary = folder / "cmake"
    query = binary / ".cmake" / "api" / "v1" / "query" / "codemodel-v2"
    query.parent.mkdir(parents=True, exist_ok=True)
    query.touch()
    setup = cmake_setup(hip.hipcc, folder, options.offload_archs[0])
    if setup.note:
        report.notices.append(f"CMake: {setup.note}")
        progress(f"note: CMake: {setup.note}")
    archs = ";".join(options.offload_archs)
    command = [cmake, "-S", str(copy), "-B", str(binary), "-G", "Unix Makefiles",
               f"-DCMAKE_HIP_ARCHITECTURES={archs}", f"-DAMDGPU_TARGETS={archs}",
               f"-DGPU_TARGETS={archs}", *setup.args]
    timeout_tool = shutil.which("timeout")
    if timeout_tool:  # each compile under the time limit
        launcher = f"{timeout_tool};-k;5;{options.timeout:g}"
        command += [f"-DCMAKE_{lang}_COMPILER_LAUNCHER={launcher}" for lang in ("HIP", "CXX", "C")]
    env = _env(folder, hip, dict(setup.env))
    progress(f"configuring {options.out} with CMake")
    done = run_process(command, folder, CMAKE_CONFIGURE_TIMEOUT, env=env)
    configure = Unit("configure", "configure", done.rc == 0, done.seconds, done.timed_out,
                     shlex.join(command))
    log = done.stdout + done.stderr
    _unit_errors(configure, parse_errors(log), explainer, copy, options.max_errors)
    if not configure.built:
        configure.log_tail = _tail(log) if not configure.errors else ""
        return [configure]
    targets = _codemodel_targets(binary)
    sources = sum(len(target["sources"]) for target in targets) or 1
    build = [cmake, "--build", str(binary), "-j", str(_jobs(options)), "--", "-k"]
    progress(f"building {len(targets)} CMake targets")
    done = run_process(build, folder, options.timeout * (sources + 1), env=env)
    log = done.stdout + done.stderr
    errors = parse_errors(log)
    for error in errors:
        explainer.explain(error, copy)
    failed_targets = set(_FAILED_TARGET.findall(log))
    units = [configure]
    for target in targets:
        built = target["name"] not in failed_targets and all(
            (binary / artifact).is_file() for artifact in target["artifacts"])
        unit = Unit(target["name"], "target", built, done.seconds,
                    done.timed_out and not built, shlex.join(build))
        mine = [error for error in errors if error.unit in target["sources"]
                or error.output_file in target["sources"]]
        unit.error_count = len(mine)
        unit.errors = mine[:options.max_errors]
        units.append(unit)
    claimed = {id(error) for unit in units for error in unit.errors}
    failed = [unit for unit in units[1:] if not unit.built]
    rest = [error for error in errors if id(error) not in claimed]
    if rest and failed and not any(unit.errors for unit in failed):
        for unit in failed:  # errors that name no target's source (a link error, a header)
            unit.error_count, unit.errors = len(rest), rest[:options.max_errors]
    if not targets:
        units.append(Unit("build", "make", done.rc == 0, done.seconds, done.timed_out,
                          shlex.join(build), len(errors), errors[:options.max_errors]))
    for unit in units[1:]:
        if not unit.built and not unit.errors:
            unit.log_tail = _tail(log)
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

def _make(options, out, copy, folder, hip, explainer, progress, unit_count) -> list[Unit]:
    make = shutil.which("make")
    if make is None:
        return [Unit("make", "make", False, log_tail="make not found on PATH")]
    _copy_tree(out, copy)
    # hipcc builds for HCC_AMDGPU_TARGET where a command names no --offload-arch
    env = _env(folder, hip, {"HCC_AMDGPU_TARGET": ",".join(options.offload_archs)})
    command = [make, "-k", "-j", str(_jobs(options))]
    progress(f"building {options.out} with its Makefile")
    done = run_process(command, copy, options.timeout * (unit_count + 1), env=env)
    log = done.stdout + done.stderr
    unit = Unit("Makefile", "make", done.rc == 0, done.seconds, done.timed_out,
                shlex.join(["HIP_PLATFORM=amd", *command]))
    _unit_errors(unit, parse_errors(log), explainer, copy, options.max_errors)
    if not unit.built and not unit.errors:
        unit.log_tail = _tail(log)
    return [unit]


# -- file by file -----------------------------------------------------------------------------

def _files(options, out, files, folder, hip, explainer, progress) -> list[Unit]:
    units = translation_units(out, files)
    if not units:
        raise BuildFailure(f"{options.out} holds nothing to build: no top-level CMakeLists.txt, "
                           "no Makefile, no HIP translation unit (.hip, .cu, C++ with HIP code)")
    flags = _compile_database(options, out, explainer.tree, files)
    includes = [arg for rel in include_folders(out, files)
                for arg in ("-I", str(out / rel) if rel else str(out))]
    objects = folder / "objects"
    env = _env(folder, hip)
    progress(f"compiling {len(units)} translation units with {hip.hipcc}")

    def compile_one(rel: str) -> Unit:
        target = objects / f"{rel}.o"
        target.parent.mkdir(parents=True, exist_ok=True)
        own = flags.get(rel, [])
        standard = [] if any(flag.startswith("-std=") for flag in own) else ["-std=c++17"]
        command = [hip.hipcc, *(f"--offload-arch={arch}" for arch in options.offload_archs),
                   *standard, *own, *includes, "-x", "hip", "-c", str(out / rel), "-o",
                   str(target)]
        done = run_process(command, folder, options.timeout, env=env)
        unit = Unit(rel, "translation unit", done.rc == 0, done.seconds, done.timed_out,
                    shlex.join(["HIP_PLATFORM=amd", *command]))
        log = done.stdout + done.stderr
        _unit_errors(unit, parse_errors(log), explainer, folder, options.max_errors)
        if not unit.built and not unit.errors:
            unit.log_tail = _tail(log) or (done.error or
                                           f"no answer within {options.timeout:g} s")
        return unit

    with ThreadPoolExecutor(max_workers=_jobs(options)) as pool:
        return list(pool.map(compile_one, units))


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
