#!/usr/bin/env python3
"""Report benchmark: `rocmigrate report` and `report --history` against `convert` (issue 14).

Not a test. It:

1. generates the dense tree of ``corpus/dense.py`` (default 200,000 lines, deterministic) and
   makes it a git repository (gitpython) of ``--commits`` commits (default 50) by two authors:
   the first adds the whole tree, each later one changes ``--files-per-commit`` files (ports a
   few error-checked runtime calls to HIP, adds a new file, or now and then removes one), all
   drawn from a seeded generator, with fixed author and committer dates, so that the same
   arguments give the same commit ids;
2. times, each as a subprocess of the installed rocmigrate or of a source tree's
   (``--checkout``; wall clock including interpreter start-up; the fastest of ``--repeat``
   counts), all for ROCm 6.4 (not the default ``--rocm auto``, so figures compare across
   machines):
   - ``convert TREE -o OUT --rocm 6.4`` into an empty output,
   - ``report TREE -o R --rocm 6.4``,
   - ``report TREE -o R --rocm 6.4 --history --limit 50`` with an empty history cache, then
     again with the cache that run left (``R/history-cache.json``),
   - ``report ... --history --limit 10`` with an empty cache (the memory comparison);
3. records each run's CPU time and maximum resident memory from ``os.wait4`` on the child
   (user + system of it and the workers it reaped; ``ru_maxrss``: the largest single process
   among them) and, on Linux, the peak of the summed RSS of the whole process tree, sampled
   from ``/proc`` every 0.1 s;
4. prints a table with the targets of issue 14: report <= 1.5x convert; ``--history`` over 50
   commits <= 3x one report; memory flat in the number of commits (here: the largest process
   with 50 commits at most 10% above the one with 10), and where it was measured.

Usage: python benchmarks/report_bench.py [--lines 200000] [--commits 50] [--repeat 3]
                                         [--checkout DIR | --rocmigrate CMD]
                                         [--workdir DIR] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from convert_bench import machine_info, rocmigrate_version  # noqa: E402
from corpus import generate_dense_corpus  # noqa: E402
from corpus.dense import build_file  # noqa: E402

TARGET_REPORT_RATIO = 1.5  # report <= 1.5x convert
TARGET_HISTORY_RATIO = 3.0  # report --history over 50 commits <= 3x one report
TARGET_MEMORY_GROWTH = 1.10  # "flat": max RSS with 50 commits <= 1.1x the one with 10
ROCM = ["--rocm", "6.4"]
AUTHORS = (("Ada Moreau", "ada@example.com"), ("Bo Lindqvist", "bo@example.com"))
FIRST_DATE = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)

# --------------------------------------------------------------------------------------------
# The repository
# --------------------------------------------------------------------------------------------


def _port_calls(rng: random.Random, text: str) -> str | None:
    """A step of a port by hand: up to five error-checked runtime calls renamed to HIP's
    spelling; None when the file has none left."""
    lines = text.split("\n")
    calls = [i for i, line in enumerate(lines) if line.startswith("  CHECK(cuda")]
    if not calls:
        return None
    for i in rng.sample(calls, min(len(calls), rng.randint(2, 5))):
        lines[i] = lines[i].replace("cuda", "hip")
    return "\n".join(lines)


def build_repository(tree: Path, commits: int, per_commit: int, seed: int) -> dict:
    """Commit the generated tree, then ``commits - 1`` changes of ``per_commit`` files each,
    alternating the two authors; returns the repository's counts."""
    import git

    rng = random.Random(seed)
    repo = git.Repo.init(tree)
    people = [git.Actor(name, email) for name, email in AUTHORS]
    files = sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*")
                   if p.is_file() and ".git" not in p.relative_to(tree).parts)

    def commit(number: int, message: str, author) -> None:
        date = (FIRST_DATE + timedelta(days=number)).strftime("%Y-%m-%dT%H:%M:%S+0000")
        repo.index.commit(message, author=author, committer=author, author_date=date,
                          commit_date=date)

    repo.index.add(files)
    commit(0, "Import the CUDA code base", people[0])
    authors_of = {rel: {0} for rel in files}
    added = removed = ported = 0
    for number in range(1, commits):
        author = people[number % 2]
        changed: list[str] = []
        for rel in rng.sample(files, min(per_commit, len(files))):
            kind = rng.choices(("port", "add", "remove"), weights=(7, 2, 1), k=1)[0]
            path = tree / rel
            new_text = _port_calls(rng, path.read_text()) if kind == "port" else None
            if kind == "remove" and len(files) > per_commit + 1:
                repo.index.remove([rel], working_tree=True)
                files.remove(rel)
                del authors_of[rel]
                removed += 1
                changed.append(f"remove {Path(rel).name}")
                continue
            if new_text is not None:
                path.write_text(new_text)
                ported += 1
                changed.append(f"port {Path(rel).name}")
            else:  # "add", or a file with nothing left to port: a new file beside it
                stem = f"{Path(rel).parent.as_posix()}/added_{number:03d}_{len(changed)}"
                rel = f"{stem}.{rng.choice(('cu', 'cu', 'cpp'))}"
                (tree / rel).write_text(build_file(random.Random(rng.getrandbits(64)), rel,
                                                   rng.randint(80, 200)))
                files.append(rel)
                authors_of[rel] = set()
                added += 1
                changed.append(f"add {Path(rel).name}")
            repo.index.add([rel])
            authors_of[rel].add(number % 2)
        commit(number, "; ".join(changed), author)
    lines = sum((tree / rel).read_bytes().count(b"\n") for rel in files)
    return {"commits": commits, "head": repo.head.commit.hexsha, "files": len(files),
            "lines": lines, "ported": ported, "added": added, "removed": removed,
            "files_with_both_authors": sum(len(who) == 2 for who in authors_of.values())}


# --------------------------------------------------------------------------------------------
# Running and measuring
# --------------------------------------------------------------------------------------------


def _tree_rss_kib(root: int) -> int:
    """Summed VmRSS of ``root`` and its descendants, from /proc (0 where unreadable)."""
    parent_of: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                stat = Path(entry.path, "stat").read_text()
                parent_of[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    family, frontier = {root}, [root]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parent_of.items():
            if ppid == parent and pid not in family:
                family.add(pid)
                frontier.append(pid)
    total = 0
    for pid in family:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
                    break
        except (OSError, ValueError, IndexError):
            continue
    return total


def run_measured(cmd: list[str], log: Path, **popen) -> dict:
    """Run ``cmd`` (output into ``log``); its wall time, exit status, and from ``os.wait4``
    the CPU time of it and the workers it reaped and the largest process's maximum RSS; plus
    the sampled peak RSS of its whole process tree."""
    sample_tree = Path("/proc/self/stat").exists()
    with log.open("wb") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, **popen)
        peak = [0]
        done = threading.Event()

        def sample() -> None:
            while not done.wait(0.1):
                peak[0] = max(peak[0], _tree_rss_kib(proc.pid))

        sampler = threading.Thread(target=sample, daemon=True)
        if sample_tree:
            sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        done.set()
        if sample_tree:
            sampler.join()
        proc.returncode = os.waitstatus_to_exitcode(status)
    # ru_maxrss is in KiB on Linux, in bytes on macOS
    max_rss_mib = usage.ru_maxrss / (1024 * 1024 if sys.platform == "darwin" else 1024)
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "rc": proc.returncode,
            "max_rss_mib": max_rss_mib,
            "tree_rss_mib": peak[0] / 1024 if sample_tree else None}


def default_rocmigrate() -> str:
    beside = Path(sys.executable).with_name("rocmigrate")
    if beside.exists():
        return str(beside)
    found = shutil.which("rocmigrate")
    if found:
        return found
    raise SystemExit("no rocmigrate beside this Python nor on PATH: give --rocmigrate CMD")


def checkout_version(popen: dict) -> str:
    """migrator.__version__ of the checkout that ``popen`` runs from."""
    proc = subprocess.run([sys.executable, "-c", "import migrator; print(migrator.__version__)"],
                          capture_output=True, text=True, **popen)
    return proc.stdout.strip() or "?"


def fresh(path: Path) -> Path:
    if path.exists():
        shutil.rmtree(path)
    return path


# --------------------------------------------------------------------------------------------


def rocmigrate_command(ap: argparse.ArgumentParser, args) -> tuple[list[str], dict]:
    """The command to time and the subprocess options: a source tree's (``--checkout``: run
    from it, ``-m`` puts the working folder first on sys.path), or ``--rocmigrate``, or the
    one installed beside this Python."""
    if args.checkout is None:
        return (shlex.split(args.rocmigrate) if args.rocmigrate else [default_rocmigrate()]), {}
    if args.rocmigrate:
        ap.error("give --rocmigrate or --checkout, not both")
    checkout = args.checkout.resolve()
    if not (checkout / "migrator" / "__main__.py").is_file():
        ap.error(f"{checkout} has no migrator/__main__.py")
    return ([sys.executable, "-m", "migrator"],
            {"cwd": checkout, "env": dict(os.environ, PYTHONPATH=str(checkout))})


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=200_000, help="tree size in lines (newlines)")
    ap.add_argument("--commits", type=int, default=50, help="commits in the repository")
    ap.add_argument("--files-per-commit", type=int, default=3,
                    help="files each commit after the first changes (default 3)")
    ap.add_argument("--limit", type=int, default=50,
                    help="--limit of the timed history runs (default 50)")
    ap.add_argument("--small-limit", type=int, default=10,
                    help="--limit of the history run that memory is compared with (default 10)")
    ap.add_argument("--seed", type=int, default=20261201, help="corpus and history seed")
    ap.add_argument("--repeat", type=int, default=3,
                    help="run each command N times; the fastest counts (default 3)")
    ap.add_argument("--rocmigrate", help="rocmigrate command (default: the one beside this "
                    "Python, else on PATH)")
    ap.add_argument("--checkout", type=Path,
                    help="time the rocmigrate of this source tree (python -m migrator run from "
                    "it), e.g. `git archive HEAD` unpacked: a frozen copy, as the history cache "
                    "key hashes rocmigrate's sources and edits during the run would void it")
    ap.add_argument("--workdir", type=Path, help="work folder (default: a temp folder, removed)")
    ap.add_argument("--json", type=Path, help="also write every figure as JSON here")
    args = ap.parse_args(argv)
    if args.commits < 2 or min(args.files_per_commit, args.limit, args.small_limit) < 1:
        ap.error("--commits must be at least 2; --files-per-commit, --limit and --small-limit "
                 "at least 1")
    args.repeat = max(1, args.repeat)

    rocmigrate, popen = rocmigrate_command(ap, args)
    made_tmp = args.workdir is None
    work = (Path(tempfile.mkdtemp(prefix="rocmigrate-report-bench-")) if made_tmp
            else args.workdir).resolve()
    work.mkdir(parents=True, exist_ok=True)
    try:
        return measure(args, rocmigrate, popen, work)
    finally:
        if made_tmp:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"\nwork folder kept: {work}")


def measure(args, rocmigrate: list[str], popen: dict, work: Path) -> int:
    """Build the repository under ``work``, run and print everything; 0."""
    limit = args.limit
    tree = fresh(work / "tree")
    info = machine_info()
    print(f"machine: nproc={info['nproc']} cpu={info['cpu']!r} mem={info['memory']} "
          f"python={info['python']} ({info['platform']}); load average {info['loadavg']}")
    if info["loadavg"] and float(info["loadavg"].split()[0]) > 0.5:
        print("warning: the machine is busy (load average above 0.5); timings will be noisy")
    res: dict = {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                 "machine": info, "checkout": str(popen["cwd"]) if popen else None,
                 "rocmigrate_version": checkout_version(popen) if popen
                 else rocmigrate_version(rocmigrate)}

    start = time.perf_counter()
    corpus = generate_dense_corpus(tree, args.lines, seed=args.seed)
    repo = build_repository(tree, args.commits, args.files_per_commit, args.seed)
    print(f"tree: generated {corpus['lines']} lines in {corpus['files']} files; repository of "
          f"{repo['commits']} commits by 2 authors ({repo['ported']} ports, {repo['added']} "
          f"files added, {repo['removed']} removed; {repo['files_with_both_authors']} files "
          f"with both); HEAD {repo['head'][:12]}: {repo['files']} files, {repo['lines']} lines "
          f"({time.perf_counter() - start:.1f} s) -> {tree}")
    res["corpus"], res["repository"] = corpus, repo

    out, plain, hist, hist_small = (work / name for name in
                                    ("out_convert", "report", "report_history",
                                     "report_history_small"))
    report = rocmigrate + ["report", str(tree)]
    history = ["--history", "--limit"]
    runs = {  # name: (command, folder emptied before the run or None)
        "convert": (rocmigrate + ["convert", str(tree), "-o", str(out)] + ROCM, out),
        "report": (report + ["-o", str(plain)] + ROCM, plain),
        "history_cold": (report + ["-o", str(hist)] + ROCM + history + [str(limit)], hist),
        "history_warm": (report + ["-o", str(hist)] + ROCM + history + [str(limit)], None),
        "history_small": (report + ["-o", str(hist_small)] + ROCM + history
                          + [str(args.small_limit)], hist_small),
    }
    measured: dict[str, list[dict]] = {name: [] for name in runs}
    caches: dict[str, dict] = {}
    stale_cache: list[int] = []  # repeats whose full-cache run converted files again
    logs = work / "logs"
    logs.mkdir(exist_ok=True)
    for rep in range(args.repeat):
        for name, (cmd, emptied) in runs.items():
            if emptied is not None:
                fresh(emptied)
            print(f"$ {shlex.join(cmd)}   [{rep + 1}/{args.repeat}]", flush=True)
            run = run_measured(cmd, logs / f"{name}.{rep + 1}.log", **popen)
            if run["rc"] != 0:
                sys.stderr.write((logs / f"{name}.{rep + 1}.log").read_text()[-4000:])
                raise SystemExit(f"{name} failed with exit status {run['rc']}")
            tree_rss = (f", process tree {run['tree_rss_mib']:.0f} MiB"
                        if run["tree_rss_mib"] is not None else "")
            print(f"  {run['wall_s']:.2f} s, max RSS {run['max_rss_mib']:.0f} MiB{tree_rss}",
                  flush=True)
            measured[name].append(run)
            if name.startswith("history"):
                document = json.loads(((emptied or hist) / "report.json").read_text())
                walked = document["history"]
                caches[name] = {"commits": len(walked["commits"]), **walked["cache"]}
                print(f"  commits walked {caches[name]['commits']}, cache hits "
                      f"{caches[name]['hits']}, misses {caches[name]['misses']}")
                if name == "history_warm" and caches[name]["misses"]:
                    stale_cache.append(rep + 1)

    best = {name: min(r["wall_s"] for r in rs) for name, rs in measured.items()}
    cpu = {name: min(r["cpu_s"] for r in rs) for name, rs in measured.items()}
    # the same ratio within each repeat (its runs back to back, under similar load)
    paired = {"report / convert": [r["wall_s"] / c["wall_s"] for r, c in
                                   zip(measured["report"], measured["convert"])],
              "history / report": [h["wall_s"] / r["wall_s"] for h, r in
                                   zip(measured["history_cold"], measured["report"])]}
    rss = {name: max(r["max_rss_mib"] for r in rs) for name, rs in measured.items()}
    tree_rss = {name: (max(r["tree_rss_mib"] for r in rs)
                       if rs[0]["tree_rss_mib"] is not None else None)
                for name, rs in measured.items()}
    report_ratio = best["report"] / best["convert"]
    history_ratio = best["history_cold"] / best["report"]
    warm_ratio = best["history_warm"] / best["report"]
    memory_ratio = rss["history_cold"] / rss["history_small"]
    targets = {
        f"report <= {TARGET_REPORT_RATIO}x convert": (report_ratio, TARGET_REPORT_RATIO),
        f"report --history --limit {limit} (empty cache) <= {TARGET_HISTORY_RATIO:.0f}x report":
            (history_ratio, TARGET_HISTORY_RATIO),
        f"max RSS, --limit {limit} / --limit {args.small_limit} <= {TARGET_MEMORY_GROWTH}":
            (memory_ratio, TARGET_MEMORY_GROWTH),
    }
    res.update({"runs": {name: {"cmd": shlex.join(runs[name][0]), "best_s": best[name],
                                "cpu_s": cpu[name],
                                "max_rss_mib": rss[name], "tree_rss_mib": tree_rss[name],
                                "all": measured[name]} for name in runs},
                "history_cache": caches, "stale_cache_repeats": stale_cache,
                "targets": {text: {"value": value, "limit": bound, "met": value <= bound}
                            for text, (value, bound) in targets.items()},
                "history_warm_ratio": warm_ratio, "paired_ratios": paired,
                "cpu_ratios": {"report / convert": cpu["report"] / cpu["convert"],
                               "history / report": cpu["history_cold"] / cpu["report"]},
                "loadavg_end": machine_info()["loadavg"]})

    labels = {"convert": "convert, empty output", "report": "report",
              "history_cold": f"report --history --limit {limit}, empty cache",
              "history_warm": f"report --history --limit {limit}, full cache",
              "history_small": f"report --history --limit {args.small_limit}, empty cache"}
    w = 46
    print("\n" + "=" * 86)
    print(f"tree: {repo['lines']} lines, {repo['files']} files at HEAD, {repo['commits']} commits;"
          f" rocmigrate {res['rocmigrate_version']}"
          f"{' of ' + res['checkout'] if res['checkout'] else ''}, --rocm 6.4, default --jobs")
    print(f"machine: {info['nproc']} CPUs ({info['cpu']}), python {info['python']}; load "
          f"average at start {info['loadavg']}, at end {res['loadavg_end']}")
    print(f"\n{'run (fastest of ' + str(args.repeat) + ')':<{w}} {'seconds':>8} {'x report':>9} "
          f"{'CPU s':>7} {'max RSS':>9} {'tree RSS':>9}")
    for name, label in labels.items():
        tree_cell = f"{tree_rss[name]:>5.0f} MiB" if tree_rss[name] is not None else f"{'-':>9}"
        print(f"{label:<{w}} {best[name]:>8.2f} {best[name] / best['report']:>9.2f} "
              f"{cpu[name]:>7.2f} {rss[name]:>5.0f} MiB {tree_cell}")
    print("(seconds: wall clock; CPU s: user + system of all its processes, the least of the "
          "runs; max RSS: the largest single process, os.wait4, the most of the runs; tree RSS: "
          "peak of the summed RSS of all its processes, sampled every 0.1 s)")
    fmt = lambda xs: ", ".join(f"{x:.2f}" for x in xs)  # noqa: E731
    print("all runs: " + "; ".join(f"{name} [{fmt(r['wall_s'] for r in measured[name])}]"
                                   for name in runs))
    for name, cache in caches.items():
        print(f"{labels[name]}: {cache['commits']} commits walked, cache hits {cache['hits']}, "
              f"misses {cache['misses']}")
    if stale_cache:
        print(f"warning: the full-cache run converted files again in repeat(s) {stale_cache}: "
              "rocmigrate's sources changed between runs (the cache key hashes them); time a "
              "frozen copy with --checkout")
    print(f"\n{'target':<70} {'value':>6}  verdict")
    for text, (value, bound) in targets.items():
        print(f"{text:<70} {value:>6.2f}  {'MET' if value <= bound else 'NOT MET'}")
    print(f"(report --history --limit {limit} with a full cache: {warm_ratio:.2f}x report)")
    for text, ratios in paired.items():
        print(f"{text} within each repeat: [{fmt(ratios)}]; in CPU time (least of the runs): "
              f"{res['cpu_ratios'][text]:.2f}")
    if args.json:
        args.json.write_text(json.dumps(res, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
