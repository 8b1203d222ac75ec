#!/usr/bin/env python3
"""Fuzz benchmark: mutants of real CUDA files through convert and lint, in worker processes.

Not a test. Each mutant is a corpus file with a few seeded edits of the kinds that broke
rocmigrate before (bytes that are not UTF-8, control characters, unclosed comments, strings and
raw strings, brackets, ``#if`` without ``#endif``, line continuations, a line cut in the middle,
a line or span duplicated, swapped or deleted). For each mutant, with the settings chosen in
turn (``--rocm 6.4``, ``--rocm 5.2``, ``--no-optimize``):

- convert it (``migrator.convert.convert_bytes``) and lint it (``migrator.lint``'s per-file
  entry, findings only);
- an **internal error** is a result whose message starts ``internal error`` (a rule raised) or
  an exception out of either call (they must never raise);
- a **hang** is a mutant that takes longer than ``--timeout`` seconds (the worker is killed and
  replaced);
- a **second-pass change** is a converted output that converts again to something else.

A failed result with a clear message (a file that is not C/C++, a fix refused by the parse guard)
is counted apart: that is the contract, not a defect. Prints the counts and the first examples of
each defect, and exits 1 when any defect was found.

    python benchmarks/fuzz_bench.py ../shared/corpus/hecbench/src --pattern '*-cuda' --mutants 10000
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import sys
import time
from concurrent.futures import ProcessPoolExecutor, TimeoutError as FutureTimeout
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from migrator.convert import convert_bytes, process_bytes  # noqa: E402
from migrator.results import CONVERTIBLE_SUFFIXES  # noqa: E402
from migrator.settings import Settings  # noqa: E402
from migrator.versions import parse_version  # noqa: E402

SETTINGS = {
    "default": Settings(rocm=parse_version("6.4")),
    "rocm52": Settings(rocm=parse_version("5.2")),
    "no-optimize": Settings(rocm=parse_version("6.4"), optimize=False),
}
INSERTS = [b"\xe9", b"\xff\xfe", b"\x1b[2J", b"\x00", b"\r", b"/*", b"*/", b"//", b'"', b"'",
           b'R"(', b'R"x(', b")", b"(", b"{", b"}", b"[", b"]", b"<<<", b">>>", b"\\\n",
           b"#if 1\n", b"#endif\n", b"#define X(", b"cudaMemcpy(", b"__shfl_sync(0xffffffff, ",
           b"cudaStream_t s; cudaStreamCreate(&s);", b"\n#include \"", b"template <", b";"]


def sources(folders: list[Path], pattern: str | None) -> list[Path]:
    found = []
    for folder in folders:
        roots = sorted(p for p in folder.glob(pattern) if p.is_dir()) if pattern else [folder]
        for root in roots:
            found += [p for p in sorted(root.rglob("*"))
                      if p.is_file() and p.name.endswith(CONVERTIBLE_SUFFIXES)
                      and p.stat().st_size < 400_000]
    return found


def mutate(data: bytes, rng: random.Random) -> bytes:
    """One to four seeded edits of ``data``."""
    for _ in range(rng.randint(1, 4)):
        at = rng.randrange(len(data) + 1)
        kind = rng.randrange(6)
        if kind == 0:
            data = data[:at] + rng.choice(INSERTS) + data[at:]
        elif kind == 1:
            data = data[:at] + data[at + rng.randint(1, 200):]
        elif kind == 2:
            span = data[at:at + rng.randint(1, 400)]
            data = data[:at] + span + span + data[at + len(span):]
        elif kind == 3:
            lines = data.split(b"\n")
            i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
            data = b"\n".join(lines)
        elif kind == 4:
            data = data[:at]  # cut, possibly mid-line
        else:
            data = data[:at] + bytes([rng.randrange(256)]) + data[at:]
    return data


def check(rel: str, data: bytes, setting: str) -> tuple[str, str]:
    """(outcome, detail): ok | refused | internal | second-pass."""
    settings = SETTINGS[setting]
    try:
        once = convert_bytes(rel, data, settings)
        linted = process_bytes(rel, data, replace(settings, unsafe_fixes=False), apply_fixes=False,
                               reject_non_code=False)
    except Exception as err:  # noqa: BLE001 - the contract is that they never raise
        return "internal", f"raised {type(err).__name__}: {err}"
    for result in (once, linted):
        if result.status == "failed" and result.message.startswith("internal error"):
            return "internal", result.message
    if once.status == "failed":
        return "refused", once.message
    if once.output is not None and once.output != data:
        twice = convert_bytes(rel, once.output, settings)
        if twice.status == "failed":
            return ("internal" if twice.message.startswith("internal error") else "second-pass",
                    "second pass: " + twice.message)
        if twice.output != once.output:
            return "second-pass", "the second conversion changed the output"
    return "ok", ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--pattern", help="only the subfolders matching this glob")
    parser.add_argument("--mutants", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=25)
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per mutant: a hang")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)

    files = sources(args.folders, args.pattern)
    if not files:
        parser.error("no source files found")
    rng = random.Random(args.seed)
    names = list(SETTINGS)
    plan = []
    for number in range(args.mutants):
        path = rng.choice(files)
        plan.append((path, rng.randrange(2**32), names[number % len(names)]))
    counts = {"ok": 0, "refused": 0, "internal": 0, "second-pass": 0, "hang": 0}
    examples: dict[str, list[str]] = {kind: [] for kind in counts}
    refusals: dict[str, int] = {}  # the refusals by reason (the message up to its first detail)
    started = time.perf_counter()
    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(args.jobs, mp_context=context)
    pending = []
    for path, seed, setting in plan:
        data = mutate(path.read_bytes(), random.Random(seed))
        pending.append((path, seed, setting, pool.submit(check, path.name, data, setting)))
    for done, (path, seed, setting, future) in enumerate(pending, 1):
        try:
            outcome, detail = future.result(timeout=args.timeout)
        except FutureTimeout:
            outcome, detail = "hang", f"longer than {args.timeout} s"
            pool.shutdown(wait=False, cancel_futures=True)  # the stuck worker goes with it
            for process in list(getattr(pool, "_processes", {}).values()):
                process.kill()
            print(f"hang: {path} seed {seed} {setting}: remaining mutants not run", file=sys.stderr)
            counts[outcome] += 1
            examples[outcome].append(f"{path} seed={seed} {setting}")
            break
        counts[outcome] += 1
        if outcome == "refused":
            reason = detail.split(" (")[0].split(";")[0][:60]
            refusals[reason] = refusals.get(reason, 0) + 1
        if len(examples[outcome]) < 5:
            examples[outcome].append(f"{path} seed={seed} {setting}: {detail[:200]}")
        if done % 1000 == 0:
            print(f"{done} mutants, {time.perf_counter() - started:.0f} s: {counts}", file=sys.stderr,
                  flush=True)
    else:
        pool.shutdown()
    total = sum(counts.values())
    print(f"{total} mutants of {len(files)} files ({', '.join(names)} in turn), seed {args.seed}, "
          f"{time.perf_counter() - started:.0f} s")
    for kind, count in counts.items():
        print(f"  {kind:12s} {count}")
    for reason, count in sorted(refusals.items(), key=lambda item: -item[1]):
        print(f"    refused {count:5d}: {reason}")
    for kind in ("internal", "second-pass", "hang", "refused"):
        for example in examples[kind]:
            print(f"  e.g. {kind}: {example}")
    return 1 if counts["internal"] or counts["second-pass"] or counts["hang"] else 0


if __name__ == "__main__":
    sys.exit(main())
