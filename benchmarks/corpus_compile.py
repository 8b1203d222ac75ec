#!/usr/bin/env python3
"""Before/after compile check of a conversion change on a corpus of CUDA programs.

Not a test. Converts every ``*-cuda`` folder of a corpus (HeCBench's layout) twice, with two
rocmigrate checkouts (``--before`` and ``--after``, each a source folder run as
``python -m migrator`` from there), lists the programs whose outputs differ, and compiles the
translation units (``.cu``/``.cpp``/``.hip``) of those programs' outputs with Debian's hipcc for
gfx90a (``-fsyntax-only``, the program's own folder on the include path), before and after:
how many translation units compile on each side, and which changed verdict. Programs whose
outputs are identical compile identically and are only counted.

Usage: python benchmarks/corpus_compile.py CORPUS_SRC --before DIR --after DIR
                                           [--rocm 5.2] [--workdir DIR] [--jobs 2]
"""

from __future__ import annotations

import argparse
import filecmp
import shutil
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from corpus_share import check_hipcc, convert  # the same conversion and hipcc check

UNITS = (".cu", ".cpp", ".hip")


def differs(left: Path, right: Path) -> bool:
    compared = filecmp.dircmp(left, right, ignore=[".rocmigrate"])
    stack = [compared]
    while stack:
        node = stack.pop()
        if node.left_only or node.right_only or node.diff_files or node.funny_files:
            return True
        stack.extend(node.subdirs.values())
    return False


def compiles(unit: Path, scratch: Path) -> bool:
    return check_hipcc(unit, ["-I", str(unit.parent)], scratch)[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, required=True)
    parser.add_argument("--rocm", default="5.2")
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="corpus-compile-"))
    programs = sorted(p for p in args.corpus.iterdir() if p.is_dir() and p.name.endswith("-cuda"))
    changed = []
    for program in programs:
        sides = {}
        for side, checkout in (("before", args.before), ("after", args.after)):
            out = work / side / program.name
            if out.exists():
                shutil.rmtree(out)
            convert(checkout.resolve(), program.resolve(), out, args.rocm)
            sides[side] = out
        if differs(sides["before"], sides["after"]):
            changed.append(program.name)
    print(f"{len(programs)} programs; outputs differ for {len(changed)}: {', '.join(changed)}")
    scratch = work / "tmp"
    scratch.mkdir(exist_ok=True)
    jobs = [(name, side, unit) for name in changed for side in ("before", "after")
            for unit in sorted((work / side / name).rglob("*")) if unit.suffix in UNITS]
    with ThreadPoolExecutor(args.jobs) as pool:
        verdicts = list(pool.map(lambda job: compiles(job[2], scratch), jobs))
    by_side: dict[str, dict[str, bool]] = {"before": {}, "after": {}}
    for (name, side, unit), ok in zip(jobs, verdicts):
        by_side[side][str(unit.relative_to(work / side))] = ok
    for side in ("before", "after"):
        units = by_side[side]
        print(f"{side}: {sum(units.values())} of {len(units)} translation units of the changed "
              "programs compile")
    for unit in sorted(set(by_side["before"]) | set(by_side["after"])):
        before, after = by_side["before"].get(unit), by_side["after"].get(unit)
        if before != after:
            print(f"  {unit}: {before} -> {after}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
