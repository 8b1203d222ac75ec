#!/usr/bin/env python3
"""Calibrate the report's effort model on human ports: for each CUDA program that has an AMD
port written by people, the report's estimate next to the size of what the people changed.

Not a test (tests never read the corpus). For every ``NAME-cuda`` program of a HeCBench-layout
corpus with its ``NAME-hip`` port (``--programs N``: the first N by name; ``--only NAME...``),
and for the project pairs given with ``--pair CUDA_DIR HIP_DIR`` (the projects corpus: mixbench,
BabelStream, gpu-burn, nccl-tests), it measures:

- the estimate: ``rocmigrate report`` of the CUDA tree at ``--rocm`` (in this process, with the
  checkout's defaults): port hours under the decision model, its decisions and sites, and the
  same findings priced by the per-site model it replaced (every finding its class's hours:
  automatic 0.02, review 0.25, manual 1, blocker 4; PTX001 8, API004 6);
- the human diff: lines the port adds or removes against the original (files paired by path,
  ``.cu``/``.cpp``/``.hip`` and ``cuda``/``hip`` in names taken as equal; a file only in the
  port counts whole, one only in the original not at all, since ports share headers with it;
  blank lines and indentation ignored; build files included);
- the residual: the same diff between rocmigrate's conversion and the human port, i.e. what the
  people wrote beyond what the tool does by itself (the work the estimate's person-hours are
  for).

It prints one row per program and, per model, the rank correlation (Spearman) of the estimate
with the residual and the human diff, and the spread of residual lines per estimated hour
(median and the quartiles' ratio: a model whose hours follow the work keeps the ratio steady).

Usage: python benchmarks/report_calibration.py CORPUS_SRC [--programs N | --only NAME...]
           [--pair CUDA_DIR HIP_DIR]... [--rocm 6.4] [--checkout DIR] [--json OUT]
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SOURCES = (".cu", ".cuh", ".cpp", ".hip", ".h", ".hpp", ".c", ".cc", ".inl", ".cmake", ".mk")
BUILD_NAMES = ("Makefile", "makefile", "GNUmakefile", "CMakeLists.txt")
OLD_HOURS = {"automatic": 0.02, "review": 0.25, "manual": 1.0, "blocker": 4.0}
OLD_CODE_HOURS = {"PTX001": 8.0, "API004": 6.0}


def _normal_name(rel: str) -> str:
    name = re.sub(r"\.(cu|cpp|hip|cc|cxx)$", ".SRC", rel.lower())
    name = re.sub(r"\.(cuh|hpp|h)$", ".HDR", name)
    return name.replace("cuda", "X").replace("hip", "X")


def _lines(path: Path) -> list[str]:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return []
    return [" ".join(line.split()) for line in text.splitlines() if line.strip()]


def _files(root: Path) -> dict[str, Path]:
    return {_normal_name(p.relative_to(root).as_posix()): p for p in sorted(root.rglob("*"))
            if p.is_file() and (p.suffix in SOURCES or p.name in BUILD_NAMES)
            and ".rocmigrate" not in p.parts}


def changed_lines(left: Path, right: Path) -> int:
    """Lines added or removed from ``left``'s sources and build files to ``right``'s (files
    paired by name). A file ``right`` lacks is not counted: ports keep headers they share with
    the original in its folder (HeCBench's ``-I../NAME-cuda``)."""
    ours, theirs = _files(left), _files(right)
    total = 0
    for name in sorted(theirs):
        a = _lines(ours[name]) if name in ours else []
        b = _lines(theirs[name]) if name in theirs else []
        matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
        same = sum(block.size for block in matcher.get_matching_blocks())
        total += (len(a) - same) + (len(b) - same)
    return total


def estimate(tree: Path, rocm: str) -> dict:
    """The report's figures for ``tree``, and the per-site model's for the same findings."""
    from migrator.report import ReportOptions, build_report
    from migrator.settings import Settings
    from migrator.versions import parse_target

    with tempfile.TemporaryDirectory() as scratch:
        document = build_report(ReportOptions(tree, Path(scratch) / "r",
                                              settings=Settings(rocm=parse_target(rocm)),
                                              jobs=1))
    summary = document["summary"]
    old = summary["findings"]["automatic"] * OLD_HOURS["automatic"]
    for record in document["files"]:
        for item in record["work"]:
            if item["phase"] == "port":
                old += OLD_CODE_HOURS.get(item["code"], OLD_HOURS[item["class"]])
    return {"hours": summary["hours_port"], "hours_decisions": summary["hours_decisions"],
            "decisions": summary["decisions"], "sites": sum(
                1 for r in document["files"] for i in r["work"] if i["phase"] == "port"),
            "old_hours": round(old, 2), "lines": summary["lines"],
            "pilot_share": document["plan"]["pilot"]["share"]}


def convert(checkout: Path, tree: Path, out: Path, rocm: str) -> bool:
    done = subprocess.run([sys.executable, "-m", "migrator", "convert", str(tree), "-o", str(out),
                           "--rocm", rocm], cwd=checkout, capture_output=True, timeout=600)
    return done.returncode in (0, 1) and out.is_dir()


def spearman(xs: list[float], ys: list[float]) -> float:
    def ranks(values):
        order = sorted(range(len(values)), key=values.__getitem__)
        result = [0.0] * len(values)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
                j += 1
            for k in range(i, j + 1):
                result[order[k]] = (i + j) / 2
            i = j + 1
        return result

    rx, ry = ranks(xs), ranks(ys)
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    norm = (sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry)) ** 0.5
    return cov / norm if norm else 0.0


def spread(rows: list[dict], hours_key: str) -> dict:
    ratios = sorted(row["residual"] / row[hours_key] for row in rows if row[hours_key] > 0)
    if len(ratios) < 4:
        return {"median": 0.0, "quartile_ratio": 0.0}
    q1, median, q3 = statistics.quantiles(ratios, n=4)
    return {"median": round(median, 1), "quartile_ratio": round(q3 / q1, 2) if q1 else 0.0}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path, nargs="?")
    parser.add_argument("--programs", type=int, default=0)
    parser.add_argument("--only", nargs="*", default=[])
    parser.add_argument("--pair", nargs=2, action="append", default=[], type=Path,
                        metavar=("CUDA_DIR", "HIP_DIR"))
    parser.add_argument("--rocm", default="6.4")
    parser.add_argument("--checkout", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    sys.path.insert(0, str(args.checkout))
    pairs: list[tuple[str, Path, Path]] = []
    if args.corpus:
        names = sorted(p.name[:-5] for p in args.corpus.glob("*-cuda")
                       if (args.corpus / (p.name[:-5] + "-hip")).is_dir())
        if args.only:
            names = [n for n in names if n in args.only]
        elif args.programs:
            names = names[:args.programs]
        pairs += [(n, args.corpus / f"{n}-cuda", args.corpus / f"{n}-hip") for n in names]
    pairs += [(f"{cuda.parent.name}/{cuda.name}", cuda, hip) for cuda, hip in args.pair]
    rows = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as scratch:
        for index, (name, cuda, hip) in enumerate(pairs):
            out = Path(scratch) / f"c{index}"
            figures = estimate(cuda, args.rocm)
            row = {"program": name, **figures, "human": changed_lines(cuda, hip),
                   "residual": changed_lines(out, hip) if convert(args.checkout, cuda, out,
                                                                 args.rocm) else None}
            rows.append(row)
            print(f"{name:40} {row['hours']:7.1f} h ({row['decisions']:3} decisions, "
                  f"{row['sites']:4} sites; per-site model {row['old_hours']:7.1f} h)  "
                  f"human diff {row['human']:5}  residual {row['residual']}", flush=True)
    usable = [row for row in rows if row["residual"] is not None]
    result = {"rocm": args.rocm, "programs": len(rows), "seconds": round(time.monotonic()
                                                                         - started, 1),
              "rows": rows, "models": {}}
    for label, key in (("decision", "hours"), ("per-site", "old_hours")):
        result["models"][label] = {
            "spearman_residual": round(spearman([r[key] for r in usable],
                                                [r["residual"] for r in usable]), 3),
            "spearman_human": round(spearman([r[key] for r in usable],
                                             [r["human"] for r in usable]), 3),
            "total_hours": round(sum(r[key] for r in usable), 1),
            "residual_lines_per_hour": spread(usable, key)}
    print(json.dumps({k: v for k, v in result.items() if k != "rows"}, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
