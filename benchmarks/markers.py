#!/usr/bin/env python3
"""Markers left for a person and support headers written, per program of a corpus, for one or
more rocmigrate checkouts (issue 27's "count of markers per program before/after, and how many
shims were written"). Not a test (tests never read the corpus).

Each checkout (a clone or ``git archive`` of a commit) converts every ``NAME-cuda`` program of a
corpus in HeCBench's layout with ``python -m migrator convert`` run from that folder, at the
target given (``--rocm``, default 6.4); the outputs' ``// rocmigrate CODE:`` marker lines (and
``/* rocmigrate CODE: */`` inline ones) are counted per program and per code, and the
``rocmigrate_*.h`` support headers written are listed.

Usage: python benchmarks/markers.py CORPUS_SRC --checkout DIR [--checkout DIR ...]
           [--rocm 6.4] [--workdir DIR] [--json OUT]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_MARKER = re.compile(rb"(?://|/\*) rocmigrate ([A-Z]+[0-9]+):")
_SOURCES = (".cu", ".cuh", ".h", ".hpp", ".hip", ".cpp", ".cc", ".cxx", ".c", ".inl")


def convert(checkout: Path, corpus: Path, out: Path, rocm: str) -> float:
    """Convert each program into ``out/NAME``; the seconds it took."""
    env = dict(os.environ, PYTHONPATH=str(checkout))
    started = time.monotonic()
    for program in sorted(p for p in corpus.iterdir() if p.name.endswith("-cuda")):
        subprocess.run([sys.executable, "-m", "migrator", "convert", str(program), "-o",
                        str(out / program.name), "--rocm", rocm], cwd=checkout, env=env,
                       capture_output=True, check=False)
    return time.monotonic() - started


def count(out: Path) -> dict:
    """Markers per program and per code, and the support headers written."""
    programs: dict[str, int] = {}
    codes: collections.Counter = collections.Counter()
    headers: collections.Counter = collections.Counter()
    for program in sorted(p for p in out.iterdir() if p.is_dir()):
        found = 0
        for path in program.rglob("*"):
            if path.is_file() and path.name.startswith("rocmigrate_") and path.suffix == ".h":
                headers[path.name] += 1
            elif path.is_file() and path.suffix in _SOURCES and ".rocmigrate" not in path.parts:
                for match in _MARKER.finditer(path.read_bytes()):
                    found += 1
                    codes[match.group(1).decode()] += 1
        programs[program.name.removesuffix("-cuda")] = found
    return {"programs": programs, "codes": dict(codes.most_common()),
            "support_headers": dict(headers.most_common())}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--checkout", type=Path, action="append", required=True)
    parser.add_argument("--rocm", default="6.4")
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="markers-"))
    results = {}
    for index, checkout in enumerate(args.checkout):
        out = work / f"out{index}"
        if out.exists():
            shutil.rmtree(out)
        seconds = convert(checkout.resolve(), args.corpus.resolve(), out, args.rocm)
        found = count(out)
        results[str(checkout)] = found
        programs = found["programs"]
        marked = sum(1 for n in programs.values() if n)
        print(f"{checkout}: {sum(programs.values())} markers in {marked} of {len(programs)} "
              f"programs ({seconds:.0f} s); support headers: "
              + (", ".join(f"{name} x{n}" for name, n in found["support_headers"].items())
                 or "none"))
        print("  by code: " + ", ".join(f"{code} {n}" for code, n in found["codes"].items()))
    if len(args.checkout) > 1:
        first, last = (results[str(c)]["programs"] for c in (args.checkout[0], args.checkout[-1]))
        changed = {name: (first.get(name, 0), last.get(name, 0)) for name in first
                   if first.get(name, 0) != last.get(name, 0)}
        print(f"programs whose marker count changed: {len(changed)}")
        for name, (before, after) in sorted(changed.items(), key=lambda item: item[1][1] -
                                            item[1][0]):
            print(f"  {name}: {before} -> {after}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
