#!/usr/bin/env python3
"""The per-harness lines of ``benchmarks/device_harness.sh`` runs (``hec.jsonl``) as a Markdown
table and counts, for docs/benchmarks.md.

Not a test. Each FILE is one run's hec.jsonl; a program found in a later FILE replaces its
lines from an earlier one (a re-run). Prints the verdicts per harness and per program, then a
table: program, harness, verdict, the median kernel time of each side, the port / original
ratio with its 99.9% interval, and the timing flag; a failed harness gets its first problem.

Usage: python benchmarks/harness_table.py FILE [FILE...]
"""

from __future__ import annotations

import collections
import json
import sys
from pathlib import Path


def main(paths: list[str]) -> int:
    programs: dict[str, list[dict]] = {}
    for path in paths:
        found: dict[str, list[dict]] = {}
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            if line.strip():
                entry = json.loads(line)
                found.setdefault(entry["program"], []).append(entry)
        programs.update(found)
    verdicts = collections.Counter(e["verdict"] for entries in programs.values() for e in entries)
    judged = [p for p, entries in programs.items()
              if any(e["verdict"] not in ("needs-edit", "built") for e in entries)]
    equal = [p for p, entries in programs.items()
             if any(e["verdict"] in ("pass", "nondeterministic-ok", "slower", "faster")
                    for e in entries)]
    print(f"{len(programs)} programs, {sum(verdicts.values())} harnesses: "
          + ", ".join(f"{v} {k}" for k, v in verdicts.most_common()))
    print(f"programs with a judged harness: {len(judged)}; with outputs equal within "
          f"tolerance (pass, nondeterministic-ok, or equal and timed slower/faster): "
          f"{len(equal)}\n")
    print("| program | harness | verdict | CUDA median | port median | port/CUDA (99.9% interval) "
          "| timing |")
    print("|---|---|---|---:|---:|---|---|")
    for program in sorted(programs):
        for entry in programs[program]:
            timings, timing = entry.get("timings") or {}, entry.get("timing") or {}
            cuda, hip = timings.get("cuda", {}), timings.get("hip", {})
            interval = timing.get("interval")
            ratio = (f"{timing['ratio']:.3f} ({interval[0]:.3f}-{interval[1]:.3f})"
                     if timing.get("ratio") and interval else "")
            verdict = entry["verdict"]
            if verdict in ("failed", "mismatch", "needs-edit") and entry.get("problems"):
                verdict += ": " + entry["problems"][0][:90].replace("|", "/")
            print(f"| {program} | {entry['spec'].removesuffix('.toml')} | {verdict} | "
                  f"{_ms(cuda)} | {_ms(hip)} | {ratio} | {timing.get('flag', '')} |")
    return 0


def _ms(side: dict) -> str:
    value = side.get("median_ms")
    if value is None:
        return ""
    return f"{value * 1000:.1f} µs" if value < 1 else f"{value:.3f} ms"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
