#!/usr/bin/env python3
"""Lint benchmark: the pre-commit case (10 changed files) and full-tree lint against convert.

Not a test. On the mixed corpus of ``convert_bench.py`` (``corpus/``; default 200,000 lines):

1. converts the corpus to HIP with ``rocmigrate convert`` (timed: the reference throughput);
2. lints the whole converted tree with ``rocmigrate lint OUT --exit-zero`` (timed, end to end);
3. lints 10 files of it, named on the command line as pre-commit passes them, several times.

Targets (issue 3): the 10-file hook run under 1 s wall including start-up; full-tree lint
throughput within 1.5x of convert's (lint time <= 1.5 x convert time).

Usage: python benchmarks/lint_bench.py [--lines 200000] [--workdir DIR] [--rocmigrate CMD]
                                       [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from convert_bench import default_rocmigrate, machine_info  # noqa: E402
from corpus import generate_corpus  # noqa: E402

TARGET_HOOK_S = 1.0
TARGET_LINT_RATIO = 1.5


def timed(cmd: list[str]) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    return time.perf_counter() - start, proc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=200_000)
    ap.add_argument("--workdir", type=Path)
    ap.add_argument("--rocmigrate", help="rocmigrate command (default: on PATH)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    tool = shlex.split(args.rocmigrate) if args.rocmigrate else shlex.split(default_rocmigrate())
    work = args.workdir or Path(tempfile.mkdtemp(prefix="rocmigrate-lint-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    corpus = work / "corpus"
    if corpus.exists():
        shutil.rmtree(corpus)
    info = generate_corpus(corpus, args.lines)
    print(f"corpus: {info['lines']} lines, {info['files']} files -> {corpus}")

    converts, lints = [], []
    for attempt in range(args.repeat):
        out = work / f"hip{attempt}"
        shutil.rmtree(out, ignore_errors=True)
        seconds, proc = timed([*tool, "convert", str(corpus), "-o", str(out)])
        if proc.returncode != 0:
            print(proc.stdout, proc.stderr)
            return 2
        converts.append(seconds)
        seconds, proc = timed([*tool, "lint", str(out), "--exit-zero", "--output-format", "json"])
        if proc.returncode != 0:
            print(proc.stderr)
            return 2
        lints.append(seconds)
        findings = json.loads(proc.stdout)["findings"]
    hip = work / "hip0"
    files = sorted(p for p in hip.rglob("*") if p.suffix in (".cu", ".cuh", ".h", ".cpp"))[:10]
    hooks = []
    for _ in range(args.repeat):
        seconds, proc = timed([*tool, "lint", *map(str, files), "--exit-zero"])
        hooks.append(seconds)
    hook_lines = sum(p.read_bytes().count(b"\n") for p in files)
    convert_s, lint_s = min(converts), min(lints)
    result = {
        "machine": machine_info(),
        "corpus": {"lines": info["lines"], "files": info["files"]},
        "convert_s": converts, "lint_s": lints, "hook_s": hooks, "hook_lines": hook_lines,
        "lint_findings": len(findings),
        "ratio": lint_s / convert_s,
        "targets": {"hook_under_1s": max(hooks) < TARGET_HOOK_S,
                    "lint_within_1_5x_convert": lint_s / convert_s <= TARGET_LINT_RATIO},
    }
    print(f"convert, full tree (reference)    {convert_s:6.2f} s  {info['lines'] / convert_s:9,.0f} lines/s"
          f"   runs {[round(x, 2) for x in converts]}")
    print(f"lint, full converted tree         {lint_s:6.2f} s  {info['lines'] / lint_s:9,.0f} lines/s"
          f"   runs {[round(x, 2) for x in lints]}  ({len(findings)} findings)")
    print(f"lint / convert time               {lint_s / convert_s:6.2f}x   target <= {TARGET_LINT_RATIO}x: "
          f"{'MET' if result['targets']['lint_within_1_5x_convert'] else 'NOT MET'}")
    print(f"hook: lint 10 files ({hook_lines} lines)  median {statistics.median(hooks):.2f} s, "
          f"max {max(hooks):.2f} s   target < {TARGET_HOOK_S} s: "
          f"{'MET' if result['targets']['hook_under_1s'] else 'NOT MET'}")
    print("commands:")
    print(f"  {' '.join(tool)} convert {corpus} -o {work}/hipN")
    print(f"  {' '.join(tool)} lint {work}/hipN --exit-zero --output-format json")
    print(f"  {' '.join(tool)} lint <10 files> --exit-zero")
    print(f"machine: nproc={os.cpu_count()}, load {os.getloadavg()}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
