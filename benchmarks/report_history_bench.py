#!/usr/bin/env python3
"""History benchmark: `rocmigrate report --history` over a long history (issue 29).

Not a test. It:

1. generates a CUDA tree (default about 24,000 lines: some 120 sources of 80 to 400 lines from
   ``corpus/dense.py``'s file builder, half of them including one or two of 6 project headers)
   and makes it a git repository of ``--commits`` commits (default 1,500) with ``git
   fast-import``: the import, then commits that each change 1 to 3 files (port a few runtime
   calls to HIP, add a file, remove one, or, one in twenty, edit a project header, which
   every file including it depends on), a README-only commit now and then, and every 25 commits
   or so a side branch of 2 to 6 such commits merged back with ``--no-ff`` (main moving on
   meanwhile); seeded, with fixed dates, so the same arguments give the same commit ids;
2. times, each as a subprocess of the installed rocmigrate or of a source tree's
   (``--checkout``; wall clock including interpreter start-up; the fastest of ``--repeat``),
   for ROCm 6.4: ``report TREE -o R --rocm 6.4 --history`` (the whole history, the default)
   with an empty report folder (no history cache), then again with the cache it left; plus
   ``report`` alone, for scale;
3. prints the figures with the machine's CPU count and load average (at start and end), and
   the walk's own counts (commits walked, merges, cache hits and misses).

Usage: python benchmarks/report_history_bench.py [--commits 1500] [--lines 24000]
                                                 [--repeat 1] [--checkout DIR | --rocmigrate CMD]
                                                 [--workdir DIR] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import random
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from convert_bench import machine_info, rocmigrate_version  # noqa: E402
from corpus.dense import build_file  # noqa: E402
from report_bench import checkout_version, rocmigrate_command, run_measured  # noqa: E402

ROCM = ["--rocm", "6.4"]
FIRST = int(datetime(2024, 1, 1, 9, 0, tzinfo=timezone.utc).timestamp())
FOLDERS = ("bench", "bench/blas", "wrappers", "wrappers/streams", "tests", "drivers")
HEADERS = 6


def _header(rng: random.Random, number: int, version: int) -> str:
    """A project header: a few device helpers (one with a warp shuffle, whose
    HIP_ENABLE_WARP_SYNC_BUILTINS every includer needs) and a checking macro."""
    lines = [f"#pragma once  // helpers {number}, revision {version}", "#include <cuda_runtime.h>",
             "#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) return; } while (0)"]
    for index in range(rng.randint(4, 10)):
        if index == 0 and number % 2 == 0:
            lines.append(f"__device__ inline float h{number}_sum{index}(float v) "
                         "{ return v + __shfl_down_sync(0xffffffff, v, 1); }")
        else:
            lines.append(f"__device__ inline float h{number}_f{index}(float v) "
                         f"{{ return v * {rng.randint(2, 9)}.0f; }}")
    return "\n".join(lines) + "\n"


def _source(rng: random.Random, rel: str) -> str:
    text = build_file(random.Random(rng.getrandbits(64)), rel, rng.randint(80, 400))
    if rng.random() < 0.5:  # half the sources use project headers
        includes = rng.sample(range(HEADERS), rng.randint(1, 2))
        text = "".join(f'#include "common/helpers_{n}.cuh"\n' for n in includes) + text
    return text


def _port(rng: random.Random, text: str) -> str | None:
    lines = text.split("\n")
    calls = [i for i, line in enumerate(lines) if line.startswith("  CHECK(cuda")]
    if not calls:
        return None
    for i in rng.sample(calls, min(len(calls), rng.randint(1, 4))):
        lines[i] = lines[i].replace("cuda", "hip", 1)
    return "\n".join(lines)


class History:
    """The repository's commits, written as a git fast-import stream."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.stream: list[bytes] = []
        self.marks = 0
        self.counts = {"commits": 0, "merges": 0, "side_commits": 0, "readme": 0,
                       "header_edits": 0, "ported": 0, "added": 0, "removed": 0}
        self.header_versions = [0] * HEADERS

    def commit(self, branch: str, state: dict, changes: dict, message: str,
               parents: tuple[int, ...]) -> int:
        """A commit of ``changes`` (path -> text, None: removed) on ``branch``; its mark."""
        self.marks += 1
        when = FIRST + 3600 * self.marks
        who = ("Ada Moreau <ada@example.com>", "Bo Lindqvist <bo@example.com>")[self.marks % 2]
        data = message.encode()
        out = [f"commit refs/heads/{branch}\nmark :{self.marks}\n"
               f"author {who} {when} +0000\ncommitter {who} {when} +0000\n"
               f"data {len(data)}\n".encode() + data + b"\n"]
        if parents:
            out.append(f"from :{parents[0]}\n".encode())
            out += [f"merge :{mark}\n".encode() for mark in parents[1:]]
        for rel, text in sorted(changes.items()):
            if text is None:
                out.append(f"D {rel}\n".encode())
                state.pop(rel, None)
            else:
                blob = text.encode()
                out.append(f"M 100644 inline {rel}\ndata {len(blob)}\n".encode() + blob + b"\n")
                state[rel] = text
        self.stream.append(b"".join(out) + b"\n")
        self.counts["commits"] += 1
        return self.marks

    def changes(self, state: dict, number: int) -> tuple[dict, str]:
        """What one ordinary commit changes: 1 to 3 files (or, now and then, the README)."""
        rng = self.rng
        if rng.random() < 0.03:
            self.counts["readme"] += 1
            return {"README.md": f"# The code base\n\nNotes, revision {number}.\n"}, "README"
        changed: dict = {}
        words = []
        for _ in range(rng.choices((1, 2, 3), weights=(5, 3, 2))[0]):
            kind = rng.choices(("port", "add", "remove", "header"), weights=(70, 12, 8, 5))[0]
            sources = sorted(rel for rel in state if rel.endswith((".cu", ".cpp"))
                             and rel not in changed)
            if kind == "header":
                n = rng.randrange(HEADERS)
                self.header_versions[n] += 1
                changed[f"common/helpers_{n}.cuh"] = _header(rng, n, self.header_versions[n])
                self.counts["header_edits"] += 1
                words.append(f"helpers {n}")
                continue
            if kind == "remove" and len(sources) > 60:
                rel = rng.choice(sources)
                changed[rel] = None
                self.counts["removed"] += 1
                words.append(f"remove {rel}")
                continue
            rel = rng.choice(sources)
            text = _port(rng, changed.get(rel) or state[rel]) if kind == "port" else None
            if text is not None:
                changed[rel] = text
                self.counts["ported"] += 1
                words.append(f"port {rel}")
            else:
                new = f"{rng.choice(FOLDERS)}/added_{number:04d}_{len(changed)}." \
                      f"{rng.choice(('cu', 'cu', 'cpp'))}"
                changed[new] = _source(rng, new)
                self.counts["added"] += 1
                words.append(f"add {new}")
        return changed, "; ".join(words)


def build_repository(tree: Path, commits: int, lines: int, seed: int) -> dict:
    history = History(seed)
    rng = history.rng
    state: dict[str, str] = {}
    first: dict[str, str | None] = {}
    for n in range(HEADERS):
        first[f"common/helpers_{n}.cuh"] = _header(rng, n, 0)
    written = 0
    while written < lines:
        rel = f"{rng.choice(FOLDERS)}/file_{len(first):04d}.{rng.choice(('cu', 'cu', 'cu', 'cpp'))}"
        first[rel] = _source(rng, rel)
        written += first[rel].count("\n")
    first["README.md"] = "# The code base\n"
    head = history.commit("main", state, first, "Import the CUDA code base", ())
    number = 1
    next_branch = rng.randint(15, 35)
    while history.counts["commits"] < commits:
        if number >= next_branch and commits - history.counts["commits"] > 8:
            # a side branch from here, main moving on meanwhile, then merged
            side_state, side, side_changed = dict(state), head, set()
            for _ in range(rng.randint(2, 6)):
                changes, words = history.changes(side_state, number)
                side_changed |= set(changes)
                side = history.commit("side", side_state, changes, f"side: {words}", (side,))
                history.counts["side_commits"] += 1
                number += 1
            for _ in range(rng.randint(0, 3)):
                changes, words = history.changes(state, number)
                head = history.commit("main", state, changes, words, (head,))
                number += 1
            # the merge takes the side's version of what the side changed
            brought = {rel: side_state.get(rel) for rel in side_changed}
            head = history.commit("main", state, brought, "Merge branch 'side'", (head, side))
            history.counts["merges"] += 1
            number += 1
            next_branch = number + rng.randint(15, 35)
            continue
        changes, words = history.changes(state, number)
        head = history.commit("main", state, changes, words, (head,))
        number += 1
    tree.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(tree)], check=True)
    subprocess.run(["git", "fast-import", "--quiet"], input=b"".join(history.stream),
                   cwd=tree, check=True)
    subprocess.run(["git", "checkout", "-q", "-f", "main"], cwd=tree, check=True)
    head_id = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tree, capture_output=True,
                             text=True, check=True).stdout.strip()
    first_parent = int(subprocess.run(["git", "rev-list", "--count", "--first-parent", "HEAD"],
                                      cwd=tree, capture_output=True, text=True,
                                      check=True).stdout)
    return {**history.counts, "first_parent_line": first_parent, "head": head_id,
            "files": len(state), "lines": sum(text.count("\n") for text in state.values())}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--commits", type=int, default=1500, help="commits in the repository")
    ap.add_argument("--lines", type=int, default=24_000, help="lines of the imported tree")
    ap.add_argument("--seed", type=int, default=20261205)
    ap.add_argument("--repeat", type=int, default=1, help="runs of each; the fastest counts")
    ap.add_argument("--rocmigrate", help="rocmigrate command (default: beside this Python)")
    ap.add_argument("--checkout", type=Path, help="time this source tree's rocmigrate (python "
                    "-m migrator run from it; a frozen copy, as the cache key hashes the sources)")
    ap.add_argument("--workdir", type=Path, help="work folder (default: a temp folder, removed)")
    ap.add_argument("--json", type=Path, help="also write the figures as JSON here")
    args = ap.parse_args(argv)
    rocmigrate, popen = rocmigrate_command(ap, args)
    made_tmp = args.workdir is None
    work = (Path(tempfile.mkdtemp(prefix="rocmigrate-history-bench-")) if made_tmp
            else args.workdir).resolve()
    work.mkdir(parents=True, exist_ok=True)
    try:
        info = machine_info()
        print(f"machine: nproc={info['nproc']} cpu={info['cpu']!r} python={info['python']}; "
              f"load average {info['loadavg']}", flush=True)
        tree = work / "tree"
        if tree.exists():
            shutil.rmtree(tree)
        start = time.perf_counter()
        repo = build_repository(tree, args.commits, args.lines, args.seed)
        print(f"repository: {repo['commits']} commits ({repo['first_parent_line']} on the "
              f"first-parent line, {repo['merges']} merges of {repo['side_commits']} side-branch "
              f"commits, {repo['readme']} README-only, {repo['header_edits']} header edits, "
              f"{repo['ported']} ports, {repo['added']} files added, {repo['removed']} removed); "
              f"HEAD: {repo['files']} files, {repo['lines']} lines "
              f"({time.perf_counter() - start:.1f} s)", flush=True)
        out = work / "report"
        report = rocmigrate + ["report", str(tree), "-o", str(out)] + ROCM
        runs = {"report": (report, True), "history_empty_cache": (report + ["--history"], True),
                "history_full_cache": (report + ["--history"], False)}
        measured: dict[str, list[dict]] = {name: [] for name in runs}
        walked: dict = {}
        for rep in range(max(1, args.repeat)):
            for name, (cmd, empty) in runs.items():
                if empty and out.exists():
                    shutil.rmtree(out)
                print(f"$ {shlex.join(cmd)}   [{rep + 1}]", flush=True)
                run = run_measured(cmd, work / f"{name}.{rep}.log", **popen)
                if run["rc"] != 0:
                    sys.stderr.write((work / f"{name}.{rep}.log").read_text()[-4000:])
                    raise SystemExit(f"{name} failed with exit status {run['rc']}")
                run["loadavg"] = machine_info()["loadavg"]
                print(f"  {run['wall_s']:.2f} s wall, {run['cpu_s']:.2f} s CPU, max RSS "
                      f"{run['max_rss_mib']:.0f} MiB; load average after: {run['loadavg']}",
                      flush=True)
                measured[name].append(run)
                history = json.loads((out / "report.json").read_text())["history"]
                if history:
                    walked[name] = {"commits": len(history["commits"]),
                                    "merges": sum(p["merge"] for p in history["commits"]),
                                    **history["cache"]}
                    print(f"  walked {walked[name]['commits']} commits "
                          f"({walked[name]['merges']} merges); cache hits "
                          f"{walked[name]['hits']}, misses {walked[name]['misses']}", flush=True)
        best = {name: min(runs_, key=lambda r: r["wall_s"]) for name, runs_ in measured.items()}
        version = checkout_version(popen) if popen else rocmigrate_version(rocmigrate)
        print("\n" + "=" * 78)
        print(f"rocmigrate {version}; {info['nproc']} CPUs ({info['cpu']}); load average at "
              f"start {info['loadavg']}, at end {machine_info()['loadavg']}")
        print(f"{repo['commits']} commits, HEAD {repo['files']} files / {repo['lines']} lines")
        for name, run in best.items():
            extra = (f", {walked[name]['commits']} commits walked, {walked[name]['misses']} "
                     f"files converted" if name in walked else "")
            print(f"{name:<22} {run['wall_s']:8.2f} s wall {run['cpu_s']:8.2f} s CPU "
                  f"{run['max_rss_mib']:6.0f} MiB{extra}")
        if args.json:
            args.json.write_text(json.dumps({"machine": info, "repository": repo,
                                             "version": version, "runs": measured,
                                             "walked": walked}, indent=2) + "\n")
        return 0
    finally:
        if made_tmp:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
