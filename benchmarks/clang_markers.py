#!/usr/bin/env python3
"""What ``--clang`` does to the ATM001 and SHM002 markers of a CUDA corpus, and what it costs.

Not a test (tests never read the corpus). For every ``NAME-cuda`` program of CORPUS (HeCBench's
layout: CORPUS/src/NAME-cuda, or CORPUS/NAME-cuda), converts it in-process (``--dry-run``, one
worker: CPU time comparable) at each target (the default, ROCm 6.4, and ``--rocm 5.2``), once
without and once with ``--clang``, and compares the findings of the two rules:

- a marker that stands for a type rocmigrate could not prove (``UNPROVEN``: a 16-bit atomic's
  pointer, a template tile's row length; other markers are counted apart) of the run without ``--clang`` is *fixed* when the run with it fixes that call or tile
  at the same place, *silent* when it reports nothing there (libclang proved a type that needs
  nothing), *kept* when it is still a marker;
- findings the ``--clang`` run has that the other does not are counted as *new* (there should be
  none: libclang is only asked where the rule's own proof ends in a marker).

Also prints the conversion time of the corpus with and without ``--clang`` (the faster of
``--repeat`` runs each) and the programs whose output changed, for a compile check with
``benchmarks/corpus_share.py --only NAME...``.

With ``--parse-cost``, also times what a file that a rule asks about pays: libclang's reading
of every ``.cu`` file (parse, index, one question), since a run pays it only for such files.

With ``--coverage``, also asks libclang about every site where the rules' own reading proves no
type, marker or not: atomic calls whose pointer type is not proven (ATM001 reports a ``T*`` only
in files that use 16-bit types), template tiles whose visible instantiations do not decide.

Usage: python benchmarks/clang_markers.py CORPUS [--programs N | --only NAME...]
           [--repeat 1] [--parse-cost] [--coverage] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from migrator.clang.types import with_clang  # noqa: E402
from migrator.runner import RunOptions, run  # noqa: E402
from migrator.workspace import Flags, open_workspace  # noqa: E402

CODES = ("ATM001", "SHM002")
# what the markers that stand for an unproven type say (the others: a tile whose layout is
# used, a call inside a macro, a bf16 type the target lacks... are no question of types)
UNPROVEN = {"ATM001": ("in template code", "cannot see"),
            "SHM002": ("is not a constant here", "no instantiation is visible",
                       "the instantiations disagree")}
TARGETS = ("6.4", "5.2")


def programs(corpus: Path) -> list[Path]:
    """The NAME-cuda programs of a corpus; in a folder without any, each of its subfolders
    (``fixtures/rules``: one per rule)."""
    root = corpus / "src" if (corpus / "src").is_dir() else corpus
    found = sorted(path for path in root.glob("*-cuda") if path.is_dir())
    return found or sorted(path for path in root.iterdir() if path.is_dir())


def parse_cost(chosen: list[Path]) -> tuple[int, float, float, int]:
    """(files, total seconds, slowest seconds, files libclang could not read) of reading every
    .cu file of the programs with migrator.clang.types: what --clang costs a file that needs it
    (one parse, its index, one question)."""
    from migrator.clang.kernels import ReadOptions
    from migrator.clang.types import FileTypes

    files, total, slowest, unread = 0, 0.0, 0.0, 0
    for program in chosen:
        for path in sorted(program.rglob("*.cu")):
            data = path.read_bytes()
            started = time.perf_counter()
            types = FileTypes(path, data, ReadOptions())
            types.declared_types(0)
            seconds = time.perf_counter() - started
            files += 1
            total += seconds
            slowest = max(slowest, seconds)
            unread += bool(types.note)
    return files, total, slowest, unread


def convert(program: Path, rocm: str, clang: bool) -> tuple[dict, dict, float]:
    """(findings of CODES by (file, line, code): (fixed, marker, message); outputs by file;
    seconds) of one dry-run conversion."""
    settings = open_workspace([program], Flags(rocm=rocm)).settings
    if clang:
        settings = with_clang(settings, program, None)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:  # dry run: nothing is written there
        result = run(RunOptions(source=program, output=Path(scratch) / program.name,
                                dry_run=True, jobs=1), settings)
    seconds = time.perf_counter() - started
    findings, outputs = {}, {}
    for file in result.results:
        outputs[file.rel] = (file.status, file.output)
        for finding in file.findings or ():
            if finding.code in CODES:
                findings[(file.rel, finding.line, finding.code)] = (
                    finding.fixed and finding.kind != "attention", finding.kind == "attention",
                    finding.message)
    return findings, outputs, seconds


def compare(before: dict, after: dict, counts: Counter, changes: list, name: str) -> None:
    for key, (_, marker, message) in sorted(before.items()):
        if not marker:
            continue
        code = key[2]
        if not any(words in message for words in UNPROVEN[code]):
            counts[f"{code} other markers"] += 1
            continue
        counts[f"{code} markers"] += 1
        now = after.get(key)
        outcome = "silent" if now is None else "fixed" if now[0] else "kept" if now[1] else \
            "reported without a marker"
        counts[f"{code} {outcome}"] += 1
        changes.append((name, *key, outcome, message))
    for key, (fixed, marker, _) in after.items():
        if key not in before:
            counts[f"{key[2]} new"] += 1
        if marker and any(words in after[key][2] for words in UNPROVEN[key[2]]):
            counts[f"{key[2]} markers with --clang"] += 1


_SOURCES = (".cu", ".cuh", ".h", ".hpp", ".cpp")


def coverage(chosen: list[Path]) -> tuple[Counter, list[str]]:
    """What libclang says of the sites where the rules' own reading proves no type, whether or
    not the rule writes a marker there (ATM001 reports a ``T*`` only in files that use 16-bit
    types): every atomic call whose pointer type is not proven, every template tile whose row
    length the visible instantiations do not decide."""
    from dataclasses import replace

    from migrator import apitables
    from migrator.clang.types import pointee_types_at
    from migrator.rule import RuleContext
    from migrator.semantic.calls import find_name, lexical_call
    from migrator.settings import Settings
    from migrator.source import Source
    from rules.atomics.half_precision import OPERATIONS
    from rules.atomics.operands import pointer_operand
    from rules.cuda_types import SIXTEEN_BIT
    from rules.shared_memory import padded_tile

    tables = apitables.load()
    counts: Counter = Counter()
    sites: list[str] = []
    for program in chosen:
        settings = replace(Settings(), clang_root=program.resolve())
        for path in sorted(p for p in program.rglob("*") if p.suffix in _SOURCES):
            data = path.read_bytes()
            ctx = RuleContext(Source(path.relative_to(program).as_posix(), data), settings,
                              tables)
            names = {name.encode() for name in OPERATIONS if name.encode() in data}
            for _, start, end in find_name(ctx, names):
                call = lexical_call(ctx, start, end)
                if call is None or call == "macro" or not call.arguments:
                    continue
                operand = pointer_operand(ctx, *call.arguments[0])
                if operand.kind == "known":
                    continue
                pointees = pointee_types_at(ctx, *call.arguments[0])
                sixteen = [t for t in pointees or () if t in SIXTEEN_BIT]
                outcome = ("unknown" if not pointees else "16-bit" if len(sixteen) ==
                           len(pointees) else "not 16-bit" if not sixteen else "mixed")
                counts[f"ATM001 {operand.kind} pointer: {outcome}"] += 1
                line = data.count(b"\n", 0, start) + 1
                sites.append(f"{program.name}/{ctx.path}:{line} ATM001 {operand.kind} "
                             f"{operand.type or '?'}*: {', '.join(pointees or ()) or outcome}")
            for match in padded_tile.code_matches(ctx, padded_tile._TILE, 0, len(data)):
                body = padded_tile.function_at(ctx, match.start())
                start, end = (body.open, body.close) if body else (0, len(data))
                if padded_tile._column_access(ctx, match.group("name").decode(), start,
                                              end) is None:
                    continue  # read along rows only: the rule asks nothing
                cols = match.group("cols").decode().strip()
                sizes = padded_tile._instantiated(ctx, match.start(), cols) \
                    if padded_tile.constant_value(ctx, cols) is None else None
                if sizes is None:
                    continue
                size = padded_tile.type_bytes(match.group("type").decode()) or 4
                _, undecided = padded_tile._template_rows(cols, sizes, size)
                if not undecided:
                    counts["SHM002 template tile: decided without libclang"] += 1
                    continue
                clang = padded_tile._clang_sizes(ctx, match.start(), match.start("name"), sizes)
                _, still = padded_tile._template_rows(cols, clang, size)
                counts[f"SHM002 template tile: {'undecided' if still else 'decided'} "
                       "by libclang"] += 1
                line = data.count(b"\n", 0, match.start()) + 1
                sites.append(f"{program.name}/{ctx.path}:{line} SHM002 {cols}: "
                             f"{still or 'decided'}")
    return counts, sites


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--programs", type=int, default=0, help="the first N programs only")
    parser.add_argument("--only", nargs="*", default=[], help="these programs (NAME-cuda)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per timing (the fastest)")
    parser.add_argument("--parse-cost", action="store_true",
                        help="also time libclang's reading of every .cu file")
    parser.add_argument("--coverage", action="store_true",
                        help="also ask libclang about every site the rules cannot type")
    parser.add_argument("--json", type=Path, help="write the figures and each marker's outcome")
    args = parser.parse_args()
    chosen = programs(args.corpus)
    if args.only:
        chosen = [p for p in chosen if p.name in args.only]
    if args.programs:
        chosen = chosen[: args.programs]
    if not chosen:
        print(f"no NAME-cuda programs under {args.corpus}", file=sys.stderr)
        return 2
    report = {"programs": len(chosen), "targets": {}}
    convert(chosen[0], TARGETS[0], True)  # warm-up: rules, tables and libclang loaded
    for rocm in TARGETS:
        counts: Counter = Counter()
        times = {False: 0.0, True: 0.0}
        changes: list = []
        changed_programs = []
        for program in chosen:
            runs = {}
            for clang in (False, True):
                best = None
                for _ in range(max(1, args.repeat)):
                    findings, outputs, seconds = convert(program, rocm, clang)
                    best = seconds if best is None else min(best, seconds)
                runs[clang] = (findings, outputs)
                times[clang] += best
            compare(runs[False][0], runs[True][0], counts, changes, program.name)
            if runs[False][1] != runs[True][1]:
                changed_programs.append(program.name)
        label = f"ROCm {rocm}" + (" (the default)" if rocm == "6.4" else "")
        print(f"== {label}: {len(chosen)} programs")
        for code in CODES:
            print(f"  {code}: {counts[f'{code} markers']} markers without --clang -> "
                  f"{counts[f'{code} markers with --clang']} with it "
                  f"(fixed {counts[f'{code} fixed']}, silent {counts[f'{code} silent']}, "
                  f"kept {counts[f'{code} kept']}; new findings {counts[f'{code} new']}; "
                  f"other markers, not about types: {counts[f'{code} other markers']})")
        extra = times[True] - times[False]
        print(f"  conversion time: {times[False]:.1f} s without --clang, {times[True]:.1f} s "
              f"with it ({extra:+.1f} s, {times[True] / max(times[False], 1e-9):.2f}x)")
        print(f"  programs whose output changed: {', '.join(changed_programs) or 'none'}")
        for name, rel, line, code, outcome, message in changes:
            print(f"    {name}/{rel}:{line} {code} {outcome}: {message[:100]}")
        report["targets"][rocm] = {"counts": dict(counts), "seconds": times,
                                   "changed_programs": changed_programs,
                                   "markers": [list(change) for change in changes]}
    if args.parse_cost:
        files, total, slowest, unread = parse_cost(chosen)
        print(f"== libclang's reading, per .cu file that a rule would ask about: {files} files, "
              f"{total:.1f} s in all, {total / max(files, 1) * 1000:.0f} ms each on average, "
              f"slowest {slowest * 1000:.0f} ms; {unread} not read (a fatal error)")
        report["parse_cost"] = {"files": files, "seconds": total, "slowest": slowest,
                                "unread": unread}
    if args.coverage:
        counts, sites = coverage(chosen)
        print("== sites whose type the rules' own reading does not prove, and libclang's answer")
        for key, count in sorted(counts.items()):
            print(f"  {key}: {count}")
        for site in sites:
            print(f"    {site}")
        report["coverage"] = {"counts": dict(counts), "sites": sites}
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
