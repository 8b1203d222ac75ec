#!/usr/bin/env python3
"""The compatibility table: real CUDA projects converted and built, next to their AMD ports.

Not a test (tests never read the corpus); issue 26's measure. For every project of a projects
folder (``../shared/corpus/projects``: the originals; ``NAME-hip`` folders and the ports inside
a project, such as ``mixbench/mixbench-hip`` or ``BabelStream/src/hip``, are AMD ports, never
converted):

1. copies the project without its ports, converts it with ``rocmigrate convert`` at the default
   target (``--rocm auto``: the installed HIP), and builds it twice: with ``rocmigrate build``
   (its ``build.json`` read for the units built: targets, make goals or translation units,
   whatever the report has) and with the project's own build system as its README says (make
   with ``ROCM_PATH`` and ``HIP_PLATFORM=amd``; cmake with its options, CMake's HIP language
   pointed at the installed HIP as ``rocmigrate build`` does it). Each failed target's errors
   are classed as a blocking cause: **rocmigrate**, **missing ROCm library** (a header, ``-l``
   library or CMake package of a ROCm library that this machine lacks: names from
   ``migrator.apitables``' libraries and headers tables), **newer ROCm** (an error or rule
   explanation saying "from ROCm X") or **the project** (a dependency that is neither CUDA,
   ROCm nor a file of the project: MPI, OpenGL, TensorRT..., an NVIDIA-only library, a tool
   that is not installed). Classes come from the error text and the rule codes only.
2. compares each AMD port with rocmigrate's output as sets of tokens (CUDA/HIP names,
   included headers, build flags, libraries, compilers): what the human wrote that the
   conversion does not, and the reverse.
3. HeCBench (``--hecbench``): for every ``NAME`` with ``NAME-cuda`` and ``NAME-hip``, converts
   ``NAME-cuda`` into a folder of links to the corpus (so ``../common`` still resolves) and
   builds it and the human ``NAME-hip`` with ``rocmigrate build``: the Bar is no program whose
   human twin builds while its conversion does not.
4. prints the tables, writes them as Markdown (``--markdown``) and every figure as JSON.

Usage: python benchmarks/projects.py --projects DIR [--hecbench DIR/src] [--only NAME...]
           [--hecbench-limit N] [--jobs 2] [--workdir DIR] [--checkout DIR] [--json FILE]
           [--markdown docs/compatibility.md] [--timeout 900]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from corpus_share import convert, log  # the same conversion (python -m migrator of a checkout)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from migrator import apitables  # noqa: E402  the libraries and headers tables
from migrator.build.errors import Explainer, parse_errors  # noqa: E402  as build reads errors
from migrator.build.hip import cmake_setup  # noqa: E402  CMake's HIP language on this HIP
from migrator.build.run import _codemodel_targets  # noqa: E402  CMake's targets (file API)
from migrator.build.tree import read_tree  # noqa: E402  the converted tree's cache (line maps)
from migrator.toolchain.compilers import find_hipcc, installed_hip, rocm_root  # noqa: E402

SOURCES = (".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hxx", ".inl", ".hip")
BUILD_FILES = ("Makefile", "makefile", "GNUmakefile", "CMakeLists.txt")
ARCH = "gfx90a"
CLASSES = ("rocmigrate", "missing ROCm library", "newer ROCm", "the project")


@dataclass(frozen=True)
class Recipe:
    """How a project builds as its README says: the folders to build (relative; empty: every
    topmost folder with a build file), the configure options, and its AMD ports inside it
    (each with the converted folder it corresponds to)."""

    roots: tuple[str, ...] = ()
    cmake_args: tuple[str, ...] = ()
    make_args: tuple[str, ...] = ()
    ports: tuple[tuple[str, str], ...] = ()  # (port folder, converted counterpart)


# What each project's README says (build folders, options); ports beside a project are found
# by name (NAME-hip); these are the ports inside one.
RECIPES = {
    "mixbench": Recipe(roots=("mixbench-cuda",), ports=(("mixbench-hip", "mixbench-cuda"),)),
    # the README's flags of the CUDA model: CUDA_ARCH is required (its value unused once
    # converted); the compiler comes from CMake's HIP setup
    "BabelStream": Recipe(cmake_args=("-DMODEL=cuda", f"-DCUDA_ARCH={ARCH}"),
                          ports=(("src/hip", "src/cuda"),)),
}


@dataclass
class Cause:
    cls: str  # one of CLASSES
    detail: str
    error: str  # the error text it was read from


@dataclass
class Target:
    name: str
    built: bool
    causes: list[Cause] = field(default_factory=list)


@dataclass
class Way:
    """One way of building a project: its targets and what stopped them."""

    way: str  # rocmigrate build | own
    unit_kind: str = ""  # what a target is here (CMake target, make goal, translation unit...)
    targets: list[Target] = field(default_factory=list)
    seconds: float = 0.0
    note: str = ""

    @property
    def built(self) -> int:
        return sum(t.built for t in self.targets)


# --- classifying an error ----------------------------------------------------------------------

class Classifier:
    """Sorts a build error into CLASSES from its text and the rule code/explanation given."""

    def __init__(self, project_files: set[str]):
        tables = apitables.load()
        self.rocm_libraries: dict[str, str] = {}  # lowercase name -> library (its link name)
        self.cuda_only: dict[str, str] = {}  # NVIDIA-only names -> library
        self.added: dict[str, tuple] = {}
        for roc in (False, True):
            for library in apitables.libraries(roc):
                label = library.package or library.link or library.cuda_names[0]
                names = {library.link, library.package, library.target.split("::")[-1]}
                for name in filter(None, names):
                    self.rocm_libraries.setdefault(name.lower(), label)
                    if library.added:
                        self.added[name.lower()] = library.added
                if not library.link and not library.package:
                    for cuda in library.cuda_names:
                        self.cuda_only[cuda.rstrip("*").lower()] = cuda.rstrip("*")
        self.headers = tables.headers
        for entry in tables.headers.values():
            hip = entry.hip_header
            if hip and hip != "-" and "/" in hip:
                self.rocm_libraries.setdefault(hip.split("/")[0].lower(), hip.split("/")[0])
        self.installed = _installed_names()
        self.project_files = project_files

    def header_entry(self, name: str):
        """The headers table's row of a CUDA header (``nvtx3/X.h`` matches ``nvtx3/*``)."""
        entry = self.headers.get(name)
        if entry is None and "/" in name:
            entry = self.headers.get(name.split("/")[0] + "/*")
        return entry

    def log_causes(self, log: str) -> list[Cause]:
        """Tools a recipe ran that the shell did not find (``pgcc: not found``)."""
        return [self.classify(line) for line in log.splitlines() if _NOT_FOUND.search(line)]

    def classify(self, message: str, code: str | None = None,
                 explanation: str | None = None) -> Cause:
        text = f"{message} {explanation or ''}"
        newer = re.search(r"from ROCm (\d+\.\d+)", text) or re.search(
            r"\(ROCm (\d+\.\d+) has it\)", text)
        if newer:
            return Cause("newer ROCm", f"{_first_quoted(message) or code or ''} "
                                       f"(from ROCm {newer[1]})".strip(), message)
        name = _missing_name(message)
        if name is not None:
            key = _library_key(name)
            named = apitables.library_named(key, False)  # a CUDA name: NCCL, thrust, nvtx3...
            header = self.header_entry(name)
            if (named is not None and not named.mapped) or key in self.cuda_only or (
                    header is not None and header.hip_header == "-"):
                library = header.library if header is not None else \
                    self.cuda_only.get(key) or key
                return Cause("the project", f"NVIDIA-only: {library} ({name}; no drop-in AMD "
                                            "counterpart, marked: port by hand)", message)
            for candidate in filter(None, (key, named and named.link.lower(),
                                           named and named.package.lower())):
                if candidate in self.rocm_libraries and candidate not in self.installed:
                    return Cause("missing ROCm library", self.rocm_libraries[candidate], message)
            if header is not None:
                return Cause("rocmigrate", f"CUDA header left: {name}", message)
            if key not in self.rocm_libraries and not _is_cuda_name(name) and \
                    Path(name).name not in self.project_files:
                return Cause("the project", f"dependency {name}", message)
        tool = _NOT_FOUND.search(message)
        if tool and tool[1] not in ("nvcc", "hipcc", "hipconfig"):
            return Cause("the project", f"tool {tool[1]}", message)
        return Cause("rocmigrate", _short(message, code), message)


def _installed_names() -> set[str]:
    """Lowercase names of what the installed ROCm root has: include folders and headers,
    libraries (libNAME.so), CMake packages."""
    hipcc = find_hipcc()
    root = rocm_root(hipcc) if hipcc else Path("/usr")
    found: set[str] = set()
    for folder in [root / "include", root / "lib", *sorted((root / "lib").glob("*-linux-*"))]:
        for entry in (folder.iterdir() if folder.is_dir() else ()):
            name = entry.name.lower()
            if name.startswith("lib") and ".so" in name:
                found.add(name[3:name.index(".so")])
            elif name.endswith((".h", ".hpp")):
                found.add(name.rsplit(".", 1)[0])
            elif entry.is_dir():
                found.add(name)
        for package in (folder / "cmake").glob("*") if (folder / "cmake").is_dir() else ():
            found.add(package.name.lower())
    return found


# a tool the shell or make could not run: "sh: 1: pgcc: not found", "make: pgcc: No such file..."
_NOT_FOUND = re.compile(r"(?:^|: )([\w+-]+): (?:command not found|not found|No such file or "
                        r"directory)\b")


def _missing_name(message: str) -> str | None:
    """The header, library or package an error says is missing."""
    for pattern in (r"'([^']+)' file not found", r"^([\w./+-]+\.\w+): No such file or directory",
                    r"cannot find -l([\w+.-]+)", r"unable to find library -l([\w+.-]+)",
                    r'provided by\s+"([\w.+-]+)"', r"(?i)Could not find ([\w.+-]+)",
                    r"find_package\(([\w.+-]+)"):
        found = re.search(pattern, message)
        if found:
            return found[1].rstrip(".,;:")
    return None


def _library_key(name: str) -> str:
    """``hipblas/hipblas.h`` -> hipblas, ``rocblas.h`` -> rocblas, ``roc::hipblas`` -> hipblas."""
    name = name.split("::")[-1].lower()
    return name.split("/")[0] if "/" in name else re.sub(r"\.(h|hpp|hh|cuh)$", "", name)


def _is_cuda_name(name: str) -> bool:
    return bool(re.match(r"(cuda|cu[a-z]+[._/]|helper_|cooperative_groups|thrust/|cub/)",
                         name.lower()))


def _first_quoted(message: str) -> str:
    found = re.search(r"['`‘]([^'`’]+)['’]", message)
    return found[1] if found else ""


def _short(message: str, code: str | None) -> str:
    text = re.sub(r"\s+", " ", message).strip()
    return (f"[{code}] " if code else "") + (text[:140] + "…" if len(text) > 140 else text)


def _not_a_cause(message: str, kind: str | None) -> bool:
    """make's 'Error 1' lines and counts of errors: consequences, never causes."""
    return re.search(r"\] Error \d+|\*\*\* |Target .* not remade|errors generated",
                     message) is not None


# --- running -----------------------------------------------------------------------------------

def _run(command: list[str], cwd: Path, timeout: float, env: dict | None = None) -> tuple[int, str]:
    try:
        done = subprocess.run(["nice", "-n", "10", *command], cwd=cwd, env=env, text=True,
                              capture_output=True, timeout=timeout, errors="replace")
        return done.returncode, done.stdout + done.stderr
    except subprocess.TimeoutExpired as expired:
        out = expired.stdout or ""
        return -1, (out.decode(errors="replace") if isinstance(out, bytes) else out) + \
            f"\nTIMEOUT after {timeout:.0f} s"


def _migrator(checkout: Path) -> tuple[list[str], dict]:
    return [sys.executable, "-m", "migrator"], dict(os.environ, PYTHONPATH=str(checkout))


_UNIT_KINDS = {"target": "CMake targets", "goal": "make goals", "make": "Makefile builds",
               "translation unit": "translation units"}


def build_with_rocmigrate(checkout: Path, tree: Path, source: Path, report: Path, recipe: Recipe,
                          jobs: int, timeout: float, classifier: Classifier) -> Way:
    """``rocmigrate build`` of a converted tree; its build.json read defensively."""
    command, env = _migrator(checkout)
    command += ["build", str(tree), "--source", str(source), "--report", str(report), "-j",
                str(jobs), "--timeout", str(timeout)]
    helptext = _run(command[:3] + ["build", "--help"], checkout, 60, env)[1]
    for option, values in (("--cmake-arg", recipe.cmake_args), ("--make-arg", recipe.make_args)):
        if values and option in helptext:
            command += [f"{option}={value}" for value in values]
    started = time.monotonic()
    code, output = _run(command, checkout, timeout * 20, env)
    way = Way("rocmigrate build", seconds=round(time.monotonic() - started, 1))
    path = report / "build.json"
    try:
        document = json.loads(path.read_text())
    except (OSError, ValueError):
        way.note = f"no build.json (exit {code}): {output.strip().splitlines()[-1:]}"
        way.targets = [Target("build", False, [classifier.classify(output[-300:])])]
        return way
    units = document.get("units") or []
    kinds = Counter(unit.get("kind") for unit in units)
    chosen = next((group for group in (("target", "goal"), ("translation unit",), ("make",))
                   if any(kinds.get(kind) for kind in group)), ("configure",))
    way.unit_kind = " + ".join(f"{_UNIT_KINDS.get(kind, kind)}" for kind in chosen
                               if kinds.get(kind))
    failed_configure = [u for u in units if u.get("kind") == "configure" and not u.get("built")]
    for unit in units:
        if unit.get("kind") not in chosen and unit not in failed_configure:
            continue
        name = str(unit.get("name") or "?")
        if unit.get("root"):
            name = f"{unit['root']}/{name}"
        target = Target(name, bool(unit.get("built")))
        if not target.built:
            for error in unit.get("errors") or []:
                message = str(error.get("message", ""))
                if _not_a_cause(message, error.get("kind")):
                    continue
                target.causes.append(classifier.classify(message, error.get("code"),
                                                         error.get("explanation")))
            if not target.causes:
                tail = str(unit.get("log_tail") or "no error read")
                target.causes.append(classifier.classify(tail.strip().splitlines()[-1]
                                                         if tail.strip() else tail))
        way.targets.append(target)
    missing = document.get("missing_libraries") or []
    if missing:
        way.note = "build.json names missing: " + ", ".join(
            f"{entry.get('library', '?')} ({len(entry.get('targets') or [])} target(s))"
            for entry in missing if isinstance(entry, dict))
    return way


def build_own(converted: Path, original: Path, recipe: Recipe, work: Path, jobs: int,
              timeout: float, classifier: Classifier) -> Way:
    """The project's own build, folder by folder, as its README says, in a copy of the
    converted tree (relative paths between its folders still work); errors explained as
    ``rocmigrate build`` explains them (markers on the failing line, APIs the HIP lacks)."""
    way = Way("own build")
    hipcc = find_hipcc()
    hip = installed_hip()
    root = rocm_root(hipcc) if hipcc else Path("/usr")
    env = dict(os.environ, ROCM_PATH=str(root), HIP_PATH=str(root), HIP_PLATFORM="amd",
               HCC_AMDGPU_TARGET=ARCH)
    tree = work / "tree"
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(converted, tree, symlinks=True, ignore=shutil.ignore_patterns(".rocmigrate"))
    explainer = Explainer(read_tree(converted), [converted, tree], original,
                          hip.version if hip else None)
    kinds = set()
    started = time.monotonic()
    for rel in recipe.roots or _build_roots(tree):
        folder = tree / rel
        scratch = work / "scratch" / (rel.replace("/", "_") or "top")
        scratch.mkdir(parents=True)
        env["TMPDIR"] = str(scratch)
        label = rel or "."
        build = _Build(folder, label, recipe, env, jobs, timeout, classifier, explainer)
        if any((folder / name).is_file() for name in BUILD_FILES[:3]):
            kinds.add("make goals")
            way.targets += build.make()
        else:
            kinds.add("CMake targets")
            way.targets += build.cmake(scratch, hipcc)
    way.unit_kind = " + ".join(sorted(kinds))
    way.seconds = round(time.monotonic() - started, 1)
    return way


def _build_roots(tree: Path) -> list[str]:
    """The topmost folders with a Makefile or CMakeLists.txt (the tree itself when it has one)."""
    roots: list[str] = []
    for folder in sorted([tree, *(p for p in tree.rglob("*") if p.is_dir())]):
        rel = folder.relative_to(tree).as_posix()
        rel = "" if rel == "." else rel
        if ".rocmigrate" in folder.parts or any(not r or rel == r or rel.startswith(r + "/")
                                                for r in roots):
            continue
        if any((folder / name).is_file() for name in BUILD_FILES):
            roots.append(rel)
    return roots


_LINK_OUTPUT = re.compile(r"(?:^|\s)-o\s*(\S+)")
_ENTERING = re.compile(r"Entering directory ['`]([^'`]+)'")
_COMPILERS = ("hipcc", "clang", "g++", "gcc", "c++", "nvcc", "ld ", "mpicc", "mpicxx", "pgc")


@dataclass
class _Build:
    """One folder's own build."""

    folder: Path
    label: str
    recipe: Recipe
    env: dict
    jobs: int
    timeout: float
    classifier: Classifier
    explainer: Explainer

    def causes(self, output: str, cwd: Path, code: int) -> list[Cause]:
        errors = [self.explainer.explain(e, cwd) for e in parse_errors(output)
                  if not _not_a_cause(e.message, e.kind)]
        causes = [self.classifier.classify(e.message, e.code, e.explanation) for e in errors]
        causes += self.classifier.log_causes(output)
        if not causes and code != 0:
            causes = [self.classifier.classify((output.strip().splitlines() or ["no output"])[-1])]
        return causes

    def make(self) -> list[Target]:
        """Targets: the files its recipes write with ``-o`` that are no objects (from ``make
        -n -B``), built when they exist after ``make -k``; each failed one made again alone
        for its own errors."""
        args = [f"ROCM_PATH={self.env['ROCM_PATH']}", *self.recipe.make_args]
        _, dry = _run(["make", "-n", "-B", "-k", *args], self.folder, 120, self.env)
        outputs: dict[Path, tuple[Path, str]] = {}  # output -> its make's folder, its name
        cwd = self.folder
        for line in dry.splitlines():
            entering = _ENTERING.search(line)
            if entering:
                cwd = Path(entering[1])
                continue
            if " -c " in f" {line} " or not any(tool in line for tool in _COMPILERS):
                continue
            for found in _LINK_OUTPUT.finditer(line):
                name = found[1].strip("'\"")
                if not name.endswith((".o", ".obj")) and "$" not in name:
                    outputs.setdefault((cwd / name).resolve(), (cwd, name))
        code, output = _run(["make", "-k", f"-j{self.jobs}", *args], self.folder, self.timeout,
                            self.env)
        if not outputs:  # no link command read: the folder's build as one goal
            return [Target(self.label, code == 0,
                           [] if code == 0 else self.causes(output, self.folder, code)[:5])]
        targets = []
        for path, (cwd, printed) in outputs.items():
            name = path.relative_to(self.folder.resolve()).as_posix() if path.is_relative_to(
                self.folder.resolve()) else path.name
            target = Target(f"{self.label}/{name}".removeprefix("./"), path.is_file())
            if not target.built:
                again, alone = _run(["make", "-k", "-j1", *args, printed], cwd, self.timeout,
                                    self.env)
                if "No rule to make target" in alone:  # named otherwise: the whole build's
                    alone, again, cwd = output, code, self.folder
                target.causes = self.causes(alone, cwd, again)[:5]
            targets.append(target)
        return targets

    def cmake(self, scratch: Path, hipcc: str | None) -> list[Target]:
        """Configure with the recipe's options (CMake's HIP language pointed at this HIP as
        ``rocmigrate build`` does it), build with ``-k``: the file API's targets."""
        binary = scratch / "cmake"
        query = binary / ".cmake" / "api" / "v1" / "query" / "codemodel-v2"
        query.parent.mkdir(parents=True, exist_ok=True)
        query.touch()
        setup = cmake_setup(hipcc, scratch, ARCH) if hipcc else None
        env = dict(self.env, **dict(setup.env)) if setup else self.env
        command = ["cmake", "-S", str(self.folder), "-B", str(binary),
                   f"-DCMAKE_HIP_ARCHITECTURES={ARCH}", f"-DAMDGPU_TARGETS={ARCH}",
                   *(setup.args if setup else ()), *self.recipe.cmake_args]
        code, output = _run(command, scratch, 300, env)
        if code != 0:
            return [Target(f"{self.label} (configure)", False,
                           self.causes(output, self.folder, code)[:5])]
        targets = _codemodel_targets(binary)
        code, output = _run(["cmake", "--build", str(binary), "-j", str(self.jobs), "--", "-k"],
                            scratch, self.timeout, env)
        failed = set(re.findall(r"CMakeFiles/([^/\]]+)\.dir/", "\n".join(
            line for line in output.splitlines() if "***" in line)))
        found = []
        for target in targets:
            built = target["name"] not in failed and all((binary / a).is_file()
                                                          for a in target["artifacts"])
            entry = Target(f"{self.label}:{target['name']}", built)
            if not built:
                again, alone = _run(["cmake", "--build", str(binary), "--target", target["name"],
                                     "-j1", "--", "-k"], scratch, self.timeout, env)
                entry.causes = self.causes(alone, binary, again)[:5]
            found.append(entry)
        if not targets:
            found.append(Target(f"{self.label} (build)", code == 0,
                                [] if code == 0 else self.causes(output, binary, code)[:5]))
        return found


# --- what the human port changed ---------------------------------------------------------------

_NAMES = re.compile(r"\b(?:cuda\w+|CUDA_?\w*|cu[A-Z]\w+|cublas\w*|curand\w*|cufft\w*|nccl\w+|"
                    r"nvml\w+|nvtx\w+|hip\w+|HIP_?\w*|rocm\w*|ROCM_?\w*|rccl\w+|__hip\w+|"
                    r"__shfl\w*|__syncwarp|__ballot\w*|warpSize)\b")
_INCLUDE = re.compile(r"^\s*#\s*include\s*[<\"]([^>\"]+)[>\"]", re.M)
_FLAG = re.compile(r"(?<![\w$(])(--?[A-Za-z][\w+-]*(?:=[\w.,;:+-]+)?)")
_LIBRARY = re.compile(r"(?<!\S)-l([\w+.-]+)|\b(\w+::\w+)\b")
_COMPILER = re.compile(r"\b(nvcc|hipcc|clang\+\+|amdclang\+\+|g\+\+|gcc|c\+\+)\b")
_PACKAGE = re.compile(r"find_package\s*\(\s*([\w.-]+)", re.I)
_LANGUAGE = re.compile(r"\b(CUDA|HIP|CXX)\b(?=[^\n]*(?:project|enable_language|LANGUAGE))", re.I)


def _tokens(root: Path) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {k: set() for k in ("API names", "headers", "build flags",
                                                     "libraries", "compilers", "packages")}
    for path in sorted(root.rglob("*")):
        if not path.is_file() or ".rocmigrate" in path.parts:
            continue
        build = path.name in BUILD_FILES or path.suffix in (".mk", ".cmake")
        if not build and path.suffix not in SOURCES:
            continue
        text = "\n".join(line.split("#", 1)[0] if build and not line.lstrip().startswith("#incl")
                         else line for line in path.read_text(errors="replace").splitlines())
        if build:
            found["build flags"] |= {f for f in _FLAG.findall(text) if not f.startswith("-l")
                                     and not re.match(r"-+\d", f)}
            found["libraries"] |= {a or b for a, b in _LIBRARY.findall(text)}
            found["compilers"] |= set(_COMPILER.findall(text))
            found["packages"] |= set(_PACKAGE.findall(text))
        else:
            text = re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.S)  # comments: markers
            found["API names"] |= set(_NAMES.findall(text))
            found["headers"] |= set(_INCLUDE.findall(text))
    return found


def port_differences(port: Path, original: Path, converted: Path, limit: int = 12) -> dict:
    """Per kind of token, against the original: what the human port added that the conversion
    did not (``human``), what the conversion added that the port did not (``rocmigrate``), and
    what the port dropped that the conversion kept (``dropped``: large for a rewrite)."""
    theirs, before, ours = _tokens(port), _tokens(original), _tokens(converted)
    result = {}
    for kind in theirs:
        sides = {"human": theirs[kind] - before[kind] - ours[kind],
                 "rocmigrate": ours[kind] - before[kind] - theirs[kind],
                 "dropped": (before[kind] & ours[kind]) - theirs[kind]}
        if any(sides.values()):
            result[kind] = {side: {"count": len(found), "first": sorted(found)[:limit]}
                            for side, found in sides.items()}
    return result


# --- one project -------------------------------------------------------------------------------

def lines_of_code(root: Path) -> int:
    return sum(path.read_bytes().count(b"\n") for path in root.rglob("*")
               if path.is_file() and (path.suffix in SOURCES or path.name in BUILD_FILES
                                      or path.suffix in (".mk", ".cmake")))


def measure_project(project: Path, ports_beside: list[Path], args, work: Path) -> dict:
    name = project.name
    recipe = RECIPES.get(name, Recipe())
    original = work / "original" / name
    converted = work / "converted" / name
    inner_ports = {rel for rel, _ in recipe.ports}
    if original.exists():
        shutil.rmtree(original)
    shutil.copytree(project, original, symlinks=True, ignore=lambda folder, names: [
        n for n in names if (Path(folder) / n).relative_to(project).as_posix() in inner_ports])
    started = time.monotonic()
    why = convert(args.checkout, original, converted, "auto")
    entry: dict = {"project": name, "lines": lines_of_code(original),
                   "convert": why or "ok", "convert_seconds": round(time.monotonic() - started, 1)}
    files = {p.name for p in original.rglob("*") if p.is_file()}
    classifier = Classifier(files)
    rel = recipe.roots[0] if recipe.roots else ""  # the tree, or the one folder to build
    log(f"{name}: rocmigrate build {rel or '.'}")
    ways = [build_with_rocmigrate(args.checkout, converted / rel, original / rel,
                                  work / "reports" / name, recipe, args.jobs, args.timeout,
                                  classifier)]
    log(f"{name}: own build")
    ways.append(build_own(converted, original, recipe, work / "own" / name, args.jobs,
                          args.timeout * 4, classifier))
    entry["kind"] = _kind(original, recipe)
    entry["ways"] = [dict(asdict(w), built=w.built, total=len(w.targets)) for w in ways]
    ports = [(p, "") for p in ports_beside] + [(project / rel, counterpart)
                                               for rel, counterpart in recipe.ports]
    entry["ports"] = [{"port": port.relative_to(project.parent).as_posix(),
                       "against": f"{name}/{counterpart}".rstrip("/"),
                       "differences": port_differences(port, original / counterpart,
                                                        converted / counterpart)}
                      for port, counterpart in ports]
    return entry


def _kind(tree: Path, recipe: Recipe) -> str:
    kinds = set()
    for rel in recipe.roots or _build_roots(tree):
        folder = tree / rel
        if recipe.cmake_args or not any((folder / n).is_file() for n in BUILD_FILES[:3]):
            kinds.add("CMake")
        else:
            kinds.add("Make")
    count = len(recipe.roots or _build_roots(tree))
    return "/".join(sorted(kinds)) + (f" ({count} folders)" if count > 1 else "")


# --- HeCBench ----------------------------------------------------------------------------------

def measure_hecbench(src: Path, args, work: Path) -> dict:
    names = sorted(p.name[:-5] for p in src.iterdir() if p.name.endswith("-cuda")
                   and (src / f"{p.name[:-5]}-hip").is_dir())
    if args.hecbench_only:
        names = [n for n in names if n in args.hecbench_only]
    if args.hecbench_limit:
        names = names[:args.hecbench_limit]
    layout = work / "hecbench" / "src"  # links to the corpus, the conversion in their midst
    layout.mkdir(parents=True, exist_ok=True)
    for entry in src.iterdir():
        link = layout / entry.name
        if not link.exists() and not link.is_symlink():
            link.symlink_to(entry.resolve(), target_is_directory=entry.is_dir())
    programs = []
    started = time.monotonic()
    for index, name in enumerate(names, 1):
        begin = time.monotonic()
        output = layout / f"{name}-cuda"
        if output.is_symlink():
            output.unlink()
        why = convert(args.checkout, src / f"{name}-cuda", output, "auto")
        sides = {}
        for side, tree, source in (("converted", output, src / f"{name}-cuda"),
                                   ("human", src / f"{name}-hip", None)):
            report = work / "hecbench" / "reports" / side / name
            command, env = _migrator(args.checkout)
            command += ["build", str(tree), "--report", str(report), "-j", str(args.jobs),
                        "--timeout", str(args.timeout)]
            if source is not None:
                command += ["--source", str(source)]
            code, text = _run(command, args.checkout, args.timeout * 10, env)
            sides[side] = {"built": code == 0, "first_error": "" if code == 0 else
                           _first_error(report / "build.json", text)}
        if why:
            sides["converted"] = {"built": False, "first_error": f"convert: {why}"}
        kept = work / "hecbench" / "converted" / f"{name}-cuda"  # out of the layout, which
        if kept.exists():                                          # links the original again
            shutil.rmtree(kept)
        kept.parent.mkdir(parents=True, exist_ok=True)
        if output.is_dir() and not output.is_symlink():
            shutil.move(output, kept)
        if not output.exists() and not output.is_symlink():
            output.symlink_to(src / f"{name}-cuda", target_is_directory=True)
        programs.append({"program": name, **{f"{k}_built": v["built"] for k, v in sides.items()},
                         "first_error": sides["converted"]["first_error"],
                         "human_first_error": sides["human"]["first_error"],
                         "seconds": round(time.monotonic() - begin, 1)})
        log(f"hecbench {index}/{len(names)} {name}: converted "
            f"{'ok' if sides['converted']['built'] else 'FAIL'}, human "
            f"{'ok' if sides['human']['built'] else 'FAIL'} ({programs[-1]['seconds']} s)")
    seconds = time.monotonic() - started
    only_conversion = [p for p in programs if p["human_built"] and not p["converted_built"]]
    return {"programs": len(programs), "partial": bool(args.hecbench_limit or args.hecbench_only),
            "converted_built": sum(p["converted_built"] for p in programs),
            "human_built": sum(p["human_built"] for p in programs),
            "only_conversion_fails": only_conversion,
            "only_human_fails": [p["program"] for p in programs
                                 if p["converted_built"] and not p["human_built"]],
            "seconds": round(seconds), "seconds_per_program": round(seconds / max(1, len(programs)),
                                                                    1),
            "list": programs}


def _first_error(path: Path, text: str) -> str:
    try:
        document = json.loads(path.read_text())
    except (OSError, ValueError):
        return (text.strip().splitlines() or [""])[-1][:200]
    for unit in document.get("units") or []:
        if unit.get("built"):
            continue
        for error in unit.get("errors") or []:
            if not _not_a_cause(str(error.get("message", "")), error.get("kind")):
                where = error.get("source_file") or error.get("file") or ""
                line = error.get("source_line") or error.get("line")
                return _short(f"{where}:{line}: {error.get('message')}" if where else
                              str(error.get("message")), error.get("code"))
        tail = str(unit.get("log_tail") or "").strip().splitlines()
        if tail:
            return _short(tail[-1], None)
    return "failed, no error read"


# --- output ------------------------------------------------------------------------------------

def _first_causes(way: dict) -> Counter:
    """(class, detail) of each failed target's first cause, counted."""
    return Counter((t["causes"][0]["cls"], t["causes"][0]["detail"]) for t in way["targets"]
                   if not t["built"] and t["causes"])


def _causes(way: dict) -> str:
    ordered = sorted(_first_causes(way).items(),
                     key=lambda item: (CLASSES.index(item[0][0]), -item[1], item[0][1]))
    return "; ".join(f"**{cls}**: {detail}" + (f" (×{n})" if n > 1 else "")
                     for (cls, detail), n in ordered)


def _causes_short(way: dict) -> str:
    """Per class: the failed targets and their causes in a few words."""
    by_class: dict[str, Counter] = {}
    for (cls, detail), n in _first_causes(way).items():
        by_class.setdefault(cls, Counter())[re.sub(r" \(.*$", "", detail)[:60]] += n
    parts = []
    for cls in CLASSES:
        if cls in by_class:
            details = by_class[cls]
            parts.append(f"**{cls}** {sum(details.values())}: " + ", ".join(
                f"{d}" + (f" ×{n}" if n > 1 else "") for d, n in details.most_common()))
    return "; ".join(parts)


def markdown(report: dict) -> str:
    cell = lambda text: str(text).replace("|", "\\|").replace("\n", " ")  # noqa: E731
    out = ["# Compatibility: real CUDA projects through rocmigrate",
           "",
           "Measured by `benchmarks/projects.py` (see benchmarks/README.md); not a test.",
           "",
           f"- date: {report['date']}; rocmigrate {report['commit']}",
           f"- HIP: {report['hip']} (conversion target `--rocm auto`), `--offload-arch {ARCH}`",
           f"- machine: {report['machine']}; load average at start {report['load'][0]}, at end "
           f"{report['load'][1]}",
           f"- command: `{report['command']}`",
           ""]
    if report.get("partial_note"):
        out += [f"**Partial:** {report['partial_note']}", ""]
    out += ["## Projects", "",
            "Targets built / total: with `rocmigrate build` (its build.json's units) and with the "
            "project's own build system (make with `ROCM_PATH`, `HIP_PLATFORM=amd`; cmake with its "
            "README's options). Lines: the C/C++/CUDA sources and build files of the project, "
            "ports left out. Causes: each failed target's first error, classed as "
            "**rocmigrate** / **missing ROCm library** (one this machine lacks) / **newer ROCm** "
            "(\"from ROCm X\": a marker or an API the installed HIP lacks) / **the project** (a "
            "dependency that is neither CUDA nor ROCm, an NVIDIA-only library with no drop-in AMD "
            "counterpart, a tool not installed), with the number of targets; each target's "
            "error below.",
            "",
            "| project | kind | lines | rocmigrate build | own build | blocking causes |",
            "|---|---|---:|---|---|---|"]
    for entry in report["projects"]:
        ways = {w["way"]: w for w in entry["ways"]}
        cells = []
        causes = []
        for key in ("rocmigrate build", "own build"):
            way = ways.get(key)
            if way is None:
                cells.append("–")
                continue
            cells.append(f"{way['built']}/{way['total']} {way['unit_kind']}")
            if _causes_short(way):
                causes.append(f"{'rocmigrate build' if key != 'own build' else 'own'}: "
                              f"{_causes_short(way)}")
        if len(causes) == 2 and causes[0].split(": ", 1)[1] == causes[1].split(": ", 1)[1]:
            causes = [f"both: {causes[0].split(': ', 1)[1]}"]
        if entry["convert"] != "ok":
            causes.insert(0, f"convert: {entry['convert']}")
        out.append(f"| {cell(entry['project'])} | {cell(entry['kind'])} | {entry['lines']} | "
                   f"{cell(cells[0])} | {cell(cells[1])} | {cell('<br>'.join(causes)) or '–'} |")
    out += ["", "### Targets", ""]
    for entry in report["projects"]:
        for way in entry["ways"]:
            failed = [t for t in way["targets"] if not t["built"]]
            built = [t["name"] for t in way["targets"] if t["built"]]
            out.append(f"- **{entry['project']}**, {way['way']} ({way['seconds']} s): built "
                       f"{', '.join(f'`{n}`' for n in built) or 'none'}"
                       + (f"; {way['note']}" if way.get("note") else ""))
            for target in failed:
                first = target["causes"][0] if target["causes"] else None
                out.append(f"  - `{target['name']}` failed: " + (
                    f"{first['cls']} ({cell(first['detail'])}): "
                    f"{cell(_short(first['error'], None))}" if first else "?"))
    out += ["", "## What the human ports changed that rocmigrate did not", "",
            "Tokens of each AMD port, of its CUDA original and of rocmigrate's conversion of the "
            "original: API names (in code, not comments), included headers, and in build files "
            "flags, libraries (`-l`, `ns::target`), compilers and packages. *Human, not "
            "rocmigrate*: in the port, in neither the original nor the conversion; *rocmigrate, "
            "not the human*: in the conversion only; *dropped by the human*: in the original and "
            "the conversion, not in the port (large where the port is a rewrite). First 12 of "
            "each, with the count.", ""]
    for entry in report["projects"]:
        for port in entry["ports"]:
            out += [f"### {port['port']} (original: {port['against']})", "",
                    "| tokens | human, not rocmigrate | rocmigrate, not the human | dropped by "
                    "the human |", "|---|---|---|---|"]
            for kind, diff in port["differences"].items():
                def listed(side: str) -> str:
                    found = diff[side]
                    more = found["count"] - len(found["first"])
                    return cell(", ".join(f"`{n}`" for n in found["first"])
                                + (f" (+{more})" if more > 0 else "")) or "–"
                out.append(f"| {kind} | {listed('human')} | {listed('rocmigrate')} | "
                           f"{listed('dropped')} |")
            out.append("")
    hec = report.get("hecbench")
    if hec:
        out += ["## HeCBench: converted NAME-cuda against the human NAME-hip", "",
                f"{hec['programs']} programs{' (partial run)' if hec['partial'] else ''}, "
                f"{hec['seconds']} s ({hec['seconds_per_program']} s per program), both sides "
                "through `rocmigrate build`: the conversion builds "
                f"{hec['converted_built']}, the human port {hec['human_built']}; "
                f"**human builds, conversion does not: {len(hec['only_conversion_fails'])}** "
                "(the Bar: 0); conversion builds, human does not: "
                f"{len(hec['only_human_fails'])}.", ""]
        if hec["only_conversion_fails"]:
            out += ["| program | first error of the conversion |", "|---|---|"]
            out += [f"| {p['program']} | {cell(p['first_error'])} |"
                    for p in hec["only_conversion_fails"]]
            out.append("")
    return "\n".join(out) + "\n"


def print_summary(report: dict) -> None:
    for entry in report["projects"]:
        print(f"{entry['project']}: {entry['kind']}, {entry['lines']} lines, convert "
              f"{entry['convert']}")
        for way in entry["ways"]:
            print(f"  {way['way']}: {way['built']}/{way['total']} {way['unit_kind']}; "
                  f"{_causes(way) or 'no cause'}")
    hec = report.get("hecbench")
    if hec:
        print(f"hecbench: {hec['programs']} programs, conversion builds {hec['converted_built']}, "
              f"human {hec['human_built']}, only the conversion fails "
              f"{len(hec['only_conversion_fails'])}; {hec['seconds_per_program']} s per program")
        for program in hec["only_conversion_fails"]:
            print(f"  {program['program']}: {program['first_error']}")


def _shown_arguments(argv: list[str]) -> list[str]:
    """The command line without where its outputs went (--workdir, --json, --markdown)."""
    shown, skip = [], False
    for argument in argv:
        if skip:
            skip = False
        elif argument in ("--workdir", "--json", "--markdown"):
            skip = True
        elif not argument.startswith(("--workdir=", "--json=", "--markdown=")):
            shown.append(argument)
    return shown


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--projects", type=Path, help="folder of projects and their AMD ports")
    parser.add_argument("--hecbench", type=Path, help="HeCBench's src/ (NAME-cuda, NAME-hip)")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="only these projects")
    parser.add_argument("--hecbench-limit", type=int, help="only the first N HeCBench programs")
    parser.add_argument("--hecbench-only", nargs="+", metavar="NAME",
                        help="only these HeCBench programs")
    parser.add_argument("--jobs", type=int, default=2, help="parallel compiles of a build")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per compile")
    parser.add_argument("--workdir", type=Path, help="keep everything here (default: temporary)")
    parser.add_argument("--checkout", type=Path, default=Path(__file__).resolve().parents[1],
                        help="rocmigrate source folder that converts and builds (default: this "
                             "tree; e.g. a `git archive` of HEAD)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--markdown", type=Path, help="write the tables here "
                                                      "(docs/compatibility.md)")
    args = parser.parse_args()
    args.checkout = args.checkout.resolve()
    if not args.projects and not args.hecbench:
        parser.error("give --projects, --hecbench or both")
    work = (args.workdir or Path(tempfile.mkdtemp(prefix="projects-"))).resolve()
    work.mkdir(parents=True, exist_ok=True)
    hip = installed_hip()
    commit = subprocess.run(["git", "-C", str(args.checkout), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or "(no git)"
    if subprocess.run(["git", "-C", str(args.checkout), "status", "--porcelain", "--", "migrator",
                       "rules"], capture_output=True, text=True).stdout.strip():
        commit += " with uncommitted changes in migrator/ or rules/"
    report: dict = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit, "hip": hip.version_text if hip else "none",
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.system()} "
                   f"{platform.release()}",
        "load": [f"{os.getloadavg()[0]:.2f}", ""],
        "command": "python benchmarks/projects.py " + " ".join(_shown_arguments(sys.argv[1:])),
        "projects": []}
    if args.projects:
        folders = sorted(p.resolve() for p in args.projects.iterdir() if p.is_dir())
        for project in folders:
            if project.name.endswith("-hip") or (args.only and project.name not in args.only):
                continue
            beside = [p for p in folders if p.name == f"{project.name}-hip"]
            log(f"{project.name}: converting")
            report["projects"].append(measure_project(project.resolve(), beside, args, work))
    if args.hecbench:
        report["hecbench"] = measure_hecbench(args.hecbench.resolve(), args, work)
    report["load"][1] = f"{os.getloadavg()[0]:.2f}"
    partial = []
    if args.only:
        partial.append(f"projects {', '.join(args.only)} only")
    if report.get("hecbench", {}).get("partial"):
        partial.append(f"HeCBench {report['hecbench']['programs']} programs only")
    report["partial_note"] = "; ".join(partial)
    print_summary(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    if args.markdown:
        args.markdown.write_text(markdown(report))
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
