#!/usr/bin/env python3
"""What converted CMake files still say of CUDA, against the human HIP ports' (HeCBench layout).

Not a test. For each program ``src/NAME-cuda`` with a ``CMakeLists.txt`` and a human twin
``src/NAME-hip/CMakeLists.txt``, converts the CUDA file with the CMake rules (in process, as
``convert`` does; --offload-arch gfx90a) and counts, in the commands of the original, the
converted and the human file (comments and message() texts aside), what is CUDA's:

- language: CUDA named as a language (project, enable_language, $<COMPILE_LANGUAGE:CUDA>...)
- variable: CMAKE_CUDA_*, CUDA_* and CUDAToolkit_* variables and properties
- package: find_package(CUDA / CUDAToolkit), CUDA:: targets, FindCUDA's cuda_* commands
- library: a CUDA library linked by name (cublas, -lcurand, nccl...)
- nvcc option: an option hipcc does not take as written (rules/build/nvcc_flags.py)
- architecture: sm_XX / compute_XX, a number given to *_ARCHITECTURES
- MODEL cuda: HeCBench's own add_hecbench_benchmark(... MODEL cuda ...), whose meaning only
  HeCBench's top-level CMakeLists knows (no tool can); counted apart

With ``--build``, also converts each CUDA program folder (``rocmigrate convert --rocm 5.2
--offload-arch gfx90a``) and builds it and a copy of its human twin with ``rocmigrate build
--method cmake`` (through the folder's own CMakeLists.txt), recording built or the first error.

Usage: python benchmarks/cmake_files.py CORPUS [--json FILE] [--list] [--build]. CORPUS holds
src/.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from migrator.apitables import library_named
from migrator.buildfiles import cmake
from migrator.convert import process_bytes
from migrator.settings import Settings
from rules.build.nvcc_flags import translate

CATEGORIES = ("language", "variable", "package", "library", "nvcc option", "architecture")
_LANGUAGE = re.compile(r"\$<(?:COMPILE|LINK)_LANG(?:UAGE|_AND_ID):[^>]*\bCUDA\b")
_VARIABLE = re.compile(r"(?<![\w])(?:CMAKE_CUDA_\w+|CUDA_[A-Z][A-Z_]+|CUDAToolkit_\w+)")
_IMPORTED = re.compile(r"(?<![\w])CUDA::\w+")
_ARCH = re.compile(r"\b(?:sm|compute)_\d+")
_LINK_FLAG = re.compile(r"^-l(\w+)$")
_LANGUAGE_COMMANDS = ("project", "enable_language", "check_language")
_KEYWORD = re.compile(r"^[A-Z][A-Z_]+$")


def leftovers(data: bytes) -> Counter:
    """What is CUDA's in the commands of one CMake file, by category (and MODEL cuda)."""
    found: Counter = Counter()
    for command in cmake.read(data).commands:
        lower = command.lower
        if lower == "message":
            continue
        values = [arg.value for arg in command.args if arg.kind != "bracket"]
        if lower.startswith("cuda_"):
            found["package"] += 1
        if lower == "find_package" and values[:1] in (["CUDA"], ["CUDAToolkit"]):
            found["package"] += 1
        if lower == "add_hecbench_benchmark":
            found["MODEL cuda"] += sum(1 for a, b in zip(values, values[1:])
                                       if a == "MODEL" and b.lower() == "cuda")
        architectures = False
        links = lower in ("target_link_libraries", "link_libraries")
        for value in values:
            if lower not in ("target_link_libraries", "link_libraries") and \
                    _KEYWORD.match(value):  # a keyword argument: LINK_LIBRARIES x y ...
                links = value == "LINK_LIBRARIES"
            if lower in _LANGUAGE_COMMANDS and value == "CUDA":
                found["language"] += 1
            found["language"] += len(_LANGUAGE.findall(value))
            found["variable"] += len(_VARIABLE.findall(value))
            found["package"] += len(_IMPORTED.findall(value))
            found["architecture"] += len(_ARCH.findall(value))
            if architectures and value.replace("-real", "").replace("-virtual", "").isdigit():
                found["architecture"] += 1
            architectures = architectures or value.endswith("ARCHITECTURES")
            flag = _LINK_FLAG.match(value)
            name = flag.group(1) if flag else value
            library = library_named(name, roc=False)
            if library is not None and name not in ("cub", "CUB", "thrust", "Thrust") and (
                    flag or links):
                found["library"] += 1
        words = [word for value in values for word in re.split(r"[\s;]+", value) if word]
        found["nvcc option"] += len(translate(words, ("gfx90a",)))
    return +found


def convert(data: bytes) -> tuple[bytes, list]:
    result = process_bytes("CMakeLists.txt", data, Settings(offload_archs=("gfx90a",)),
                           apply_fixes=True, reject_non_code=False)
    if result.status == "failed":
        raise RuntimeError(result.note)
    return result.output or data, result.findings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path, help="the corpus (holding src/)")
    parser.add_argument("--json", type=Path, help="write every program's counts here")
    parser.add_argument("--list", action="store_true", help="list the programs with leftovers")
    parser.add_argument("--build", action="store_true",
                        help="build the converted and the human folders through CMake")
    args = parser.parse_args(argv)
    src = args.corpus / "src"
    if not src.is_dir():
        parser.error(f"{src} is not a folder")
    rows = []
    for cuda in sorted(src.glob("*-cuda")):
        human = src / (cuda.name[: -len("-cuda")] + "-hip") / "CMakeLists.txt"
        if not (cuda / "CMakeLists.txt").is_file() or not human.is_file():
            continue
        data = (cuda / "CMakeLists.txt").read_bytes()
        output, findings = convert(data)
        rows.append({
            "program": cuda.name[: -len("-cuda")],
            "hecbench_function": b"add_hecbench_benchmark" in data,
            "changed": output != data,
            "findings": dict(Counter(f.code for f in findings)),
            "markers": sum(1 for f in findings if f.kind == "attention"),
            "original": dict(leftovers(data)),
            "converted": dict(leftovers(output)),
            "human": dict(leftovers(human.read_bytes())),
        })
        if args.build:
            rows[-1]["build"] = _build_both(cuda, human.parent)
    _print(rows, args.list)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


def _rocmigrate(*words: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "migrator", *words], capture_output=True,
                          text=True, timeout=900)


def _build_both(cuda: Path, human: Path) -> dict[str, str]:
    """'built' or the first error line of each side's CMake build."""
    verdicts = {}
    with tempfile.TemporaryDirectory() as work:
        converted = Path(work) / "converted"
        _rocmigrate("convert", str(cuda), "-o", str(converted), "--rocm", "5.2",
                    "--offload-arch", "gfx90a")
        twin = Path(work) / "human"
        shutil.copytree(human, twin)
        for side, tree in (("converted", converted), ("human", twin)):
            report = Path(work) / f"report-{side}"
            _rocmigrate("build", str(tree), "--method", "cmake", "-j", "2", "--report",
                        str(report))
            try:
                document = json.loads((report / "build.json").read_text())
            except (OSError, ValueError):
                verdicts[side] = "no report"
                continue
            units = document.get("units", [])
            failed = [unit for unit in units if not unit.get("built")]
            if units and not failed:
                verdicts[side] = "built"
            else:
                errors = [error.get("message", "") for unit in failed
                          for error in unit.get("errors", [])]
                verdicts[side] = (errors[0] if errors else "failed").splitlines()[0][:120]
    return verdicts


def _cuda_left(counts: dict) -> int:
    return sum(counts.get(category, 0) for category in CATEGORIES)


def _print(rows: list[dict], listing: bool) -> None:
    total = len(rows)
    function = sum(row["hecbench_function"] for row in rows)
    print(f"{total} programs with a CMakeLists.txt and a human twin's; {function} use HeCBench's "
          f"add_hecbench_benchmark(), {total - function} are standalone CMake projects")
    print(f"converted files changed by the CMake rules: {sum(r['changed'] for r in rows)}")
    print()
    print(f"{'what is CUDA-specific':<24}{'original':>10}{'converted':>11}{'human':>8}")
    for category in (*CATEGORIES, "MODEL cuda"):
        sums = [sum(row[side].get(category, 0) for row in rows)
                for side in ("original", "converted", "human")]
        print(f"{category:<24}{sums[0]:>10}{sums[1]:>11}{sums[2]:>8}")
    print()
    for side in ("original", "converted", "human"):
        left = sum(1 for row in rows if _cuda_left(row[side]))
        model = sum(1 for row in rows if row[side].get("MODEL cuda"))
        print(f"{side:<10} files with CUDA left (MODEL aside): {left:>3} of {total}; "
              f"with MODEL cuda: {model}")
    codes = Counter()
    for row in rows:
        codes.update(row["findings"])
    print("findings by code:", ", ".join(f"{code} {n}" for code, n in sorted(codes.items())))
    built = [row for row in rows if "build" in row]
    if built:
        for side in ("converted", "human"):
            verdicts = Counter(row["build"][side] for row in built)
            print(f"{side} folders built through CMake: {verdicts.get('built', 0)} of "
                  f"{len(built)}; failures: " + "; ".join(
                      f"{n} x {v}" for v, n in verdicts.most_common() if v != "built"))
    if listing:
        for row in rows:
            if _cuda_left(row["converted"]) or _cuda_left(row["human"]):
                print(f"  {row['program']}: converted {row['converted']}, "
                      f"human {row['human']}")


if __name__ == "__main__":
    sys.exit(main())
