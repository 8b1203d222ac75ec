#!/usr/bin/env python3
"""Share of a corpus's CUDA programs whose conversion compiles, next to their human HIP ports.

Not a test (tests never read the corpus). For every ``NAME-cuda`` program of a corpus in
HeCBench's layout, converts it with the rocmigrate of ``--checkout`` (``python -m migrator
convert`` run from that folder, so an older commit, e.g. a ``git archive`` of it, can be
measured too), then compiles every translation unit (``.cu``/``.cpp``/``.hip``) of the
conversion and of the authors' own ``NAME-hip`` port, in one of two modes:

- ``hipcc52``: ``--rocm 5.2`` conversion, Debian's hipcc (HIP 5.2) for gfx90a,
  ``-fsyntax-only -x hip -std=c++17``, as issue 12 measured;
- ``hip64``: the default target (``--rocm 6.4``), parsed with libclang against a HIP 6.4
  header tree (``migrator.clang.check_hip``), host and device sides: a unit passes with no
  error on either side.

The units are the Makefile's ``source = ...`` files (others are #included by them; without that
list, the unit files the Makefile names), or every unit file when the Makefile names none that
exists, or with ``--all-files``. Flags of a unit: its own
folder, the program's folder and the program's include-ish subfolders (include, inc, common,
support, utils, src) on the include path, plus the ``-I`` folders that exist and the ``-D``
definitions of the program's Makefile outside conditionals (plain make variables expanded; HIP ports use ``-I../NAME-cuda``
for headers shared with the original; some programs need ``-Ddfloat=double``); the conversion
takes its original's Makefile, resolved in the corpus. ``--no-makefile-flags`` leaves those
out. A program compiles when all its units do; a failed conversion (non-zero exit or a file
reported failed) counts as not compiling and is reported apart. Failing converted units are
classed by their first error, and each class is split by whether the human port of the program
compiles ("only the conversion fails") or not.

Usage: python benchmarks/corpus_share.py CORPUS_SRC --mode hipcc52|hip64
           [--checkout DIR] [--rocm X.Y] [--hip-include DIR] [--workdir DIR] [--jobs 2]
           [--programs N | --only NAME...] [--all-files] [--no-makefile-flags]
           [--top 15] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

UNITS = (".cu", ".cpp", ".hip")
INCLUDE_DIRS = {"include", "inc", "common", "support", "utils", "src"}
MODES = {"hipcc52": "5.2", "hip64": "6.4"}
# beside the checkout, as CI has it (the HIP 6.4.3 header tree of ../shared/data)
DEFAULT_HIP_INCLUDE = Path(__file__).resolve().parents[2] / "shared/data/hip-6.4/include"
_ERROR = re.compile(r"^(.+?):(\d+):(\d+): (?:fatal )?error: (.*)$", re.M)


@dataclass
class Unit:
    program: str
    side: str  # converted / twin
    path: str
    ok: bool = False
    errors: list[str] = field(default_factory=list)  # "file:line: message", first ones
    seconds: float = 0.0


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def convert(checkout: Path, source: Path, output: Path, rocm: str) -> str | None:
    """Converts ``source`` into ``output``; None when it worked, else why not."""
    if output.exists():
        shutil.rmtree(output)
    env = dict(os.environ, PYTHONPATH=str(checkout))
    proc = subprocess.run([sys.executable, "-m", "migrator", "convert", str(source), "-o",
                           str(output), "--rocm", rocm], cwd=checkout, env=env,
                          capture_output=True, text=True, check=False)
    failed = re.search(r"(\d+) failed", proc.stdout)
    if proc.returncode != 0 or not output.is_dir() or (failed and failed[1] != "0"):
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or [""]
        return f"exit {proc.returncode}: {tail[0][:200]}"
    return None


def makefile_build(program: Path) -> tuple[list[str], list[str]]:
    """The sources (``source = ...``, else the unit files named anywhere) and the flags
    (``-I`` folders that exist, ``-D`` definitions) of the program's Makefile, read outside
    conditional blocks, with its plain variables (``X = ...``) expanded and others empty."""
    makefile = program / "Makefile"
    if not makefile.is_file():
        return [], []
    text = makefile.read_text(errors="replace").replace("\\\n", " ")
    lines, depth = [], 0
    for line in text.splitlines():
        line = line.split("#", 1)[0]
        word = line.split()[0] if line.split() else ""
        if word in ("ifeq", "ifneq", "ifdef", "ifndef"):
            depth += 1
        elif word == "endif":
            depth -= 1
        elif not depth:
            lines.append(line)
    variables = {name: value.strip() for name, value in
                 re.findall(r"^\s*(\w+)\s*[:?]?=(.*)$", "\n".join(lines), re.M)}

    def expand(value: str, rounds: int = 5) -> str:
        for _ in range(rounds):
            value = re.sub(r"\$[({](\w+)[)}]", lambda m: variables.get(m[1], ""), value)
        return value

    sources: list[str] = []
    flags: list[str] = []
    for line in map(expand, lines):
        if m := re.match(r"\s*source\s*[:+]?=(.*)", line):
            sources += m[1].split()
        for m in re.finditer(r"(?:^|\s)-([ID])\s*([^\s$]+)", line):
            if m[1] == "D":
                flags.append(f"-D{m[2]}")
            elif (program / m[2]).resolve().is_dir():
                flags.append(f"-I{(program / m[2]).resolve()}")
    if not sources:  # no source list: the unit files its rules name
        sources = re.findall(r"[\w./-]+(?:\.cu|\.cpp|\.hip)\b", expand(text))
    return list(dict.fromkeys(sources)), list(dict.fromkeys(flags))


def include_path(unit: Path, root: Path) -> list[str]:
    folders = [unit.parent, root]
    folders += sorted(d for d in root.rglob("*") if d.is_dir() and d.name in INCLUDE_DIRS)
    arguments: list[str] = []
    for folder in dict.fromkeys(folders):
        arguments += ["-I", str(folder)]
    return arguments


def first_errors(text: str, limit: int = 5) -> list[str]:
    return [f"{m[1]}:{m[2]}: {m[4]}" for m in _ERROR.finditer(text)][:limit]


def check_hipcc(unit: Path, includes: list[str], scratch: Path) -> tuple[bool, list[str]]:
    env = dict(os.environ, HIP_PLATFORM="amd", TMPDIR=str(scratch))
    try:
        proc = subprocess.run(["hipcc", "--offload-arch=gfx90a", "-fsyntax-only", "-x", "hip",
                               "-std=c++17", *includes, str(unit)],
                              capture_output=True, text=True, env=env, timeout=600)
    except subprocess.TimeoutExpired:
        return False, [f"{unit}:0: timed out"]
    errors = first_errors(proc.stderr + proc.stdout)
    if proc.returncode != 0 and not errors:
        errors = [f"{unit}:0: hipcc exit {proc.returncode}: "
                  + (proc.stderr.strip().splitlines() or [""])[-1][:200]]
    return proc.returncode == 0, errors


def check_libclang(unit: Path, includes: list[str], hip_include: Path) -> tuple[bool, list[str]]:
    from migrator.clang import check_hip  # the running tree's checker, whatever --checkout is

    errors = [f"{m.file}:{m.line}: {m.text}" for m in
              check_hip(unit, hip_include, extra=tuple(includes)) if m.is_error]
    return not errors, errors[:5]


# --- failure classes -------------------------------------------------------------------------

_LIBRARIES = (("cublas", "cuBLAS"), ("cusparse", "cuSPARSE"), ("curand", "cuRAND"),
              ("cufft", "cuFFT"), ("cusolver", "cuSOLVER"), ("cudnn", "cuDNN"),
              ("nvtx", "NVTX"), ("cub", "CUB"), ("thrust", "Thrust"), ("nccl", "NCCL"))
_WARP = re.compile(r"__(shfl|ballot|any|all|activemask|syncwarp|match|reduce_\w+_sync)")
_TEXTURE = re.compile(r"^(tex[123]D\w*|tex1Dfetch|texture|surf\w+|\w*Texture\w*|\w*texture\w*|"
                      r"cudaArray\w*|hipArray\w*|cudaChannel\w*|hipChannel\w*)$")


def identifier_family(name: str) -> str:
    lowered = name.lower()
    for prefix, library in _LIBRARIES:
        if lowered.startswith(prefix) or lowered.startswith(prefix.replace("cu", "hip", 1)):
            return f"{library} API"
    if _TEXTURE.match(name):
        return "texture/surface API"
    if _WARP.match(name):
        return "warp builtin"
    if re.match(r"^(cuda|CUDA|cu[A-Z]|CU_|CUresult|CUdevice)", name):
        return "CUDA API left unconverted (cuda*/cu*)"
    if re.match(r"^(hip|HIP)", name):
        return "HIP name the headers lack (hip*)"
    if name.startswith("__"):
        return "device intrinsic (__*)"
    if re.match(r"^[A-Z][A-Z0-9_]+$", name):
        return "user macro (ALL_CAPS; needs a -D?)"
    return "other identifier"


def header_family(name: str) -> str:
    """A header by its library: the first folder of its path (``thrust/…``, ``hipcub/…``),
    the CUDA headers together, the others (a project's or a third party's own) together."""
    if re.match(r"^(cuda|cu[a-z]*\.h|helper_|nvml|nvrtc|cooperative_groups|sm_\d+|"
                r"device_(functions|launch)|math_constants|vector_types)", name.lower()):
        return "CUDA header (cuda*.h, helper_*.h...)"
    if "/" in name and not name.startswith("."):
        return name.split("/")[0] + "/…"
    return "a file of the project or a third party (X.h, ../X.h)"


def classify(message: str) -> str:
    """The class of an error message (the text after ``error:``)."""
    if m := re.match(r"'(.+)' file not found", message):
        return f"missing header: {header_family(m[1])}"
    if m := re.match(r"(use of undeclared identifier|unknown type name|"
                     r"no template named|use of undeclared label) '([^']+)'", message):
        return f"{m[1]}: {identifier_family(m[2].split('::')[0])}"
    if m := re.match(r"no member named '([^']+)' in (namespace )?'([^']+)'", message):
        return f"no member named '…' in '{m[3]}'"
    if m := re.match(r"no matching (function|constructor|member function) for (call to|"
                     r"initialization of) '([^']+)'", message):
        name = m[3] if m[1] == "function" else "…"
        return f"no matching {m[1]} for {m[2]} '{name}'"
    if m := re.match(r"(call to|reference to) '([^']+)' is ambiguous", message):
        return f"{m[1]} '{m[2]}' is ambiguous"
    if re.match(r"(conflicting types|redefinition|functions that differ only|"
                r"typedef redefinition|redeclaration)", message):
        return re.sub(r"'[^']*'", "'…'", message.split(":")[0])
    if m := re.match(r"use of overloaded operator '([^']+)' is ambiguous", message):
        return f"use of overloaded operator '{m[1]}' is ambiguous"
    message = re.sub(r"\s*(\(with|\(aka|; did you mean).*$", "", message)
    return re.sub(r"\d+", "N", re.sub(r"'[^']*'", "'…'", message))


# --- run ---------------------------------------------------------------------------------------

def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path, help="folder of NAME-cuda and NAME-hip programs")
    parser.add_argument("--mode", choices=sorted(MODES), required=True)
    parser.add_argument("--checkout", type=Path, default=Path(__file__).resolve().parents[1],
                        help="rocmigrate source folder that converts (default: this tree)")
    parser.add_argument("--rocm", help="conversion target (default: 5.2 / 6.4 by mode)")
    parser.add_argument("--hip-include", type=Path, default=DEFAULT_HIP_INCLUDE)
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--programs", type=int, help="only the first N programs")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="only these programs")
    parser.add_argument("--all-files", action="store_true",
                        help="compile every unit file, not the Makefile's sources")
    parser.add_argument("--no-makefile-flags", action="store_true",
                        help="leave out the Makefile's -I and -D flags")
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rocm = args.rocm or MODES[args.mode]
    checkout = args.checkout.resolve()
    corpus = args.corpus.resolve()
    work = (args.workdir or Path(tempfile.mkdtemp(prefix="corpus-share-"))).resolve()
    if work == corpus or corpus in work.parents:
        parser.error("--workdir must lie outside the corpus")
    names = sorted(p.name[:-5] for p in corpus.iterdir()
                   if p.is_dir() and p.name.endswith("-cuda"))
    if args.only:
        names = [n.removesuffix("-cuda").removesuffix("-hip") for n in args.only]
    elif args.programs:
        names = names[:args.programs]
    scratch = work / "tmp"
    scratch.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()

    conversion_failed: dict[str, str] = {}
    roots: dict[tuple[str, str], Path] = {}
    for index, name in enumerate(names, 1):
        output = work / f"converted-{rocm}" / f"{name}-cuda"
        why = convert(checkout, corpus / f"{name}-cuda", output, rocm)
        if why:
            conversion_failed[name] = why
        if output.is_dir():
            roots[name, "converted"] = output
        if (corpus / f"{name}-hip").is_dir():
            roots[name, "twin"] = corpus / f"{name}-hip"
        if index % 25 == 0 or index == len(names):
            log(f"converted {index}/{len(names)} ({time.monotonic() - started:.0f} s)")

    jobs = []
    for (name, side), root in sorted(roots.items()):
        sources, flags = makefile_build(corpus / f"{name}-{'cuda' if side == 'converted' else 'hip'}")
        units = [root / source for source in sources if (root / source).is_file()]
        if args.all_files or not units:
            units = [path for path in sorted(root.rglob("*")) if path.suffix in UNITS
                     and path.is_file() and ".rocmigrate" not in path.parts]
        if args.no_makefile_flags:
            flags = []
        for path in units:
            jobs.append((Unit(name, side, str(path)), include_path(path, root) + flags))
    done = 0
    lock = threading.Lock()

    def check(job: tuple[Unit, list[str]]) -> Unit:
        nonlocal done
        unit, includes = job
        begin = time.monotonic()
        if args.mode == "hipcc52":
            unit.ok, unit.errors = check_hipcc(Path(unit.path), includes, scratch)
        else:
            unit.ok, unit.errors = check_libclang(Path(unit.path), includes, args.hip_include)
        unit.seconds = round(time.monotonic() - begin, 2)
        with lock:
            done += 1
            if done % 20 == 0 or done == len(jobs):
                log(f"checked {done}/{len(jobs)} units ({time.monotonic() - started:.0f} s)")
        return unit

    with ThreadPoolExecutor(args.jobs) as pool:
        units = list(pool.map(check, jobs))

    report = summarise(names, units, conversion_failed, work, corpus, args.top)
    report.update(mode=args.mode, rocm=rocm, checkout=str(checkout), corpus=str(corpus),
                  all_files=args.all_files, makefile_flags=not args.no_makefile_flags,
                  seconds=round(time.monotonic() - started))
    print_report(report)
    if args.json:
        report["units"] = [asdict(u) for u in units]
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def summarise(names: list[str], units: list[Unit], conversion_failed: dict[str, str],
              work: Path, corpus: Path, top: int) -> dict:
    by_program: dict[tuple[str, str], list[Unit]] = defaultdict(list)
    for unit in units:
        by_program[unit.program, unit.side].append(unit)

    def program_ok(name: str, side: str) -> bool | None:
        members = by_program.get((name, side))
        if side == "converted" and name in conversion_failed:
            return False
        if not members:
            return None  # no translation unit (or no twin): not counted
        return all(u.ok for u in members)

    verdicts = {name: (program_ok(name, "converted"), program_ok(name, "twin")) for name in names}
    counted = [n for n in names if None not in verdicts[n]]
    both = Counter((verdicts[n][0], verdicts[n][1]) for n in counted)

    def short(location: str) -> str:
        for base in (work, corpus):
            location = location.replace(str(base) + os.sep, "")
        return location

    classes: dict[str, dict] = {}
    for unit in units:
        if unit.side != "converted" or unit.ok:
            continue
        first = unit.errors[0] if unit.errors else f"{unit.path}:0: no error message"
        message = first.split(": ", 1)[1] if ": " in first else first
        entry = classes.setdefault(classify(message), {"units": 0, "only_conversion": 0,
                                                       "example": short(first)})
        entry["units"] += 1
        if verdicts[unit.program][1]:
            entry["only_conversion"] += 1
    ranked = sorted(classes.items(), key=lambda item: (-item[1]["units"], item[0]))

    only_conversion = []
    for name in counted:
        if verdicts[name] == (False, True):
            failing = [u for u in by_program[name, "converted"] if not u.ok]
            first = failing[0].errors[0] if failing and failing[0].errors else \
                conversion_failed.get(name, "")
            only_conversion.append({"program": name, "failing_units": len(failing),
                                    "first_error": short(first)})

    def tu_share(side: str) -> dict:
        members = [u for u in units if u.side == side]
        return {"compile": sum(u.ok for u in members), "of": len(members)}

    return {
        "programs": len(names),
        "top": top,
        "conversion_failed": conversion_failed,
        "counted": len(counted),
        "not_counted": sorted(set(names) - set(counted)),
        "converted_compile": sum(verdicts[n][0] for n in counted),
        "twin_compile": sum(verdicts[n][1] for n in counted),
        "matrix": {"both": both[True, True], "only_conversion_fails": both[False, True],
                   "only_twin_fails": both[True, False], "neither": both[False, False]},
        "units_converted": tu_share("converted"),
        "units_twin": tu_share("twin"),
        "classes": [{"class": name, **entry} for name, entry in ranked],
        "only_conversion_fails": only_conversion,
        "only_twin_fails": [n for n in counted if verdicts[n] == (True, False)],
    }


def print_report(report: dict) -> None:
    def share(part: int, whole: int) -> str:
        return f"{part}/{whole} ({100 * part / whole:.1f}%)" if whole else "0/0"

    n = report["counted"]
    print(f"mode {report['mode']} (conversion --rocm {report['rocm']}), checkout "
          f"{report['checkout']}, {report['seconds']} s")
    print(f"programs: {report['programs']}; conversion failed: {len(report['conversion_failed'])}"
          + "".join(f"\n  {k}: {v}" for k, v in report["conversion_failed"].items()))
    if report["not_counted"]:
        print(f"not counted (no unit or no twin): {', '.join(report['not_counted'])}")
    print(f"programs compiling: conversion {share(report['converted_compile'], n)}, "
          f"human port {share(report['twin_compile'], n)}")
    matrix = report["matrix"]
    print(f"  both {matrix['both']}, only the conversion fails {matrix['only_conversion_fails']}, "
          f"only the human port fails {matrix['only_twin_fails']}, neither {matrix['neither']}")
    converted, twin = report["units_converted"], report["units_twin"]
    print(f"translation units compiling: conversion {share(converted['compile'], converted['of'])}"
          f", human port {share(twin['compile'], twin['of'])}")
    shown = report["classes"][:report["top"]]
    print(f"failures of converted units by class of the first error (top {len(shown)} of "
          f"{len(report['classes'])}; units / of them in programs whose human port compiles):")
    for entry in shown:
        print(f"  {entry['units']:4d} / {entry['only_conversion']:3d}  {entry['class']}\n"
              f"              e.g. {entry['example']}")
    print("only the conversion fails:")
    for entry in report["only_conversion_fails"]:
        print(f"  {entry['program']} ({entry['failing_units']} unit(s)): {entry['first_error']}")
    if report["only_twin_fails"]:
        print(f"only the human port fails: {', '.join(report['only_twin_fails'])}")


if __name__ == "__main__":
    sys.exit(main())
