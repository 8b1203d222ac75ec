#!/usr/bin/env python3
"""How many converted programs of a corpus compile with nvcc through rocmigrate's NVIDIA headers.

Not a test (tests never read the corpus). For every ``NAME-cuda`` program of a corpus in
HeCBench's layout whose sources use one of ``--uses`` (a regular expression; by default the
libraries and warp votes the headers map: CUB, Thrust, cooperative groups, cuBLAS, cuSPARSE,
cuFFT, cuRAND, cuSOLVER, __any/__all/__ballot), converts it with this checkout (``--rocm``
target), then compiles each translation unit of the CUDA original and of the conversion with
``nvcc -c -arch=sm_90`` through the header tree ``--headers`` (written by ``rocmigrate
nvidia-headers``, of this or an older checkout), with the program's Makefile flags as
corpus_share reads them and the ``-I`` folders given. A program compiles when all its units do.
The originals are the reference: a conversion is judged only where its original compiles.

Usage: python benchmarks/nvidia_share.py CORPUS_SRC --headers DIR [--headers DIR2 ...]
           [--rocm 6.4] [-I DIR ...] [--uses REGEX] [--workdir DIR] [--jobs 2]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from corpus_share import UNITS, convert, first_errors, include_path, makefile_build

USES = (r"<cub/|cooperative_groups|<thrust/|cublas|cusparse|cufft|curand|cusolver|"
        r"__(any|all|ballot)(_sync)?\s*\(")


def units_of(root: Path, program: Path) -> tuple[list[Path], list[str]]:
    sources, flags = makefile_build(program)
    units = [root / source for source in sources if (root / source).is_file()]
    if not units:
        units = [p for p in sorted(root.rglob("*")) if p.suffix in UNITS and p.is_file()
                 and ".rocmigrate" not in p.parts]
    return units, flags


def nvcc(unit: Path, root: Path, flags: list[str], scratch: Path) -> list[str]:
    """The first errors of compiling ``unit``; empty when it compiles."""
    command = ["nvcc", "-std=c++17", "-arch=sm_90", "-x", "cu", "-c", str(unit), "-o",
               str(scratch / f"{abs(hash(str(unit)))}.o"), *include_path(unit, root), *flags]
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return [f"{unit}:0: timed out"]
    if proc.returncode == 0:
        return []
    text = proc.stderr + proc.stdout
    errors = [f"{m[1]}:{m[2]}: {m[4]}" for m in re.finditer(
        r"^(.+?)\((\d+)\)(): error: (.*)$", text, re.M)][:3] or first_errors(text, 3)
    return errors or [line for line in text.splitlines() if "error" in line][:3] or \
        [f"{unit}:0: nvcc exit {proc.returncode}"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--headers", type=Path, action="append", required=True,
                        help="a tree written by `rocmigrate nvidia-headers` (repeatable)")
    parser.add_argument("--rocm", default="6.4")
    parser.add_argument("-I", dest="includes", type=Path, action="append", default=[],
                        help="a folder of CUDA library headers (cusparse.h...), repeatable")
    parser.add_argument("--uses", default=USES)
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    if shutil.which("nvcc") is None:
        parser.error("nvcc is not on PATH")
    checkout = Path(__file__).resolve().parents[1]
    corpus = args.corpus.resolve()
    work = (args.workdir or Path(tempfile.mkdtemp(prefix="nvidia-share-"))).resolve()
    scratch = work / "obj"
    scratch.mkdir(parents=True, exist_ok=True)
    uses = re.compile(args.uses)
    programs = [p for p in sorted(corpus.iterdir()) if p.is_dir() and p.name.endswith("-cuda")
                and any(uses.search(f.read_text(errors="replace")) for f in p.rglob("*")
                        if f.is_file() and f.suffix in UNITS + (".h", ".cuh", ".hpp"))]
    library = [f"-I{folder.resolve()}" for folder in args.includes]
    jobs = []
    for program in programs:
        units, flags = units_of(program, program)
        jobs += [(program.name, "original", unit, program, flags + library) for unit in units]
        out = work / f"converted-{args.rocm}" / program.name
        failed = convert(checkout, program, out, args.rocm)
        if failed:
            print(f"{program.name}: conversion failed ({failed})", file=sys.stderr)
            continue
        units, flags = units_of(out, program)
        for tree in args.headers:
            jobs += [(program.name, str(tree), unit, out,
                      flags + [f"-I{tree.resolve()}"] + library) for unit in units]
    with ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda job: nvcc(job[2], job[3], job[4], scratch), jobs))
    verdict: dict[tuple[str, str], list[str]] = {}
    for (name, side, unit, _, _), errors in zip(jobs, results):
        verdict.setdefault((name, side), [])
        if errors:
            verdict[name, side].append(f"{unit.name}: {errors[0]}")
    names = [p.name for p in programs]
    reference = [n for n in names if not verdict.get((n, "original"), ["no unit"])]
    print(f"{len(names)} programs use {args.uses!r}; {len(reference)} originals compile "
          f"with nvcc (conversion --rocm {args.rocm})")
    for tree in args.headers:
        ok = [n for n in reference if (n, str(tree)) in verdict and not verdict[n, str(tree)]]
        print(f"{tree}: {len(ok)} of {len(reference)} conversions compile")
        for name in reference:
            for error in verdict.get((name, str(tree)), ["not converted"])[:1]:
                print(f"  {name}: {error[:300]}")
    for name in sorted(set(names) - set(reference)):
        print(f"  original fails: {name}: {(verdict.get((name, 'original')) or ['-'])[0][:200]}")
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
