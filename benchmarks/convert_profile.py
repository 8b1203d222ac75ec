#!/usr/bin/env python3
"""Where `rocmigrate convert`'s time goes, per phase: one process converts a tree under
cProfile and the run's CPU is split into the phases of issue 30.

Not a test. The tree is a folder (``--tree``) or one of the generated benchmark trees
(``--corpus mixed|dense|probe|samples --lines N``, as convert_bench.py makes them). Every file
is converted in this process (``runner.convert_file``, as a worker does), at ``--rocm``, after
one warm-up file (the engine, tables and rules loaded: what a worker inherits). Then, outside
the profiler, what crosses from a worker to the parent (each FileResult pickled and unpickled,
findings as columns) and what the parent does with it (the cache entry and the summary's
share: ``runner._Cache.record``'s encoding) are timed on the same results.

Phases (CPU seconds; "rules" is timed rule by rule in a first pass without the profiler; the
other rows are inclusive times from a second, profiled pass, scaled to the first pass's CPU,
so they are approximate and the rows below "rules" may overlap it):

- read: the files' bytes, timed apart;
- rules, per family: each rule's ``check`` (the engine's ``_run_rules``, timed per rule);
- semantic queries: time inside ``migrator/semantic`` (own time of its functions, whoever
  called them), part of the rules';
- tree-sitter for rules: the trees rules ask for (``RuleContext.tree``);
- literal and token scans (``LiteralSpans``);
- fix application (``_FixLoop.apply``: choosing fixes, edits, includes);
- parse guard (``_FixLoop._guard``: incremental re-parse and the error comparison);
- findings (``_findings``, ``_rename_findings``: Finding objects and their positions);
- build files: Makefiles and CMake files, converted by their own rules and loop
  (``buildfiles.fixer.fix_build_file``), not counted under "rules";
- the rest of the per-file engine (``fix_source`` less the above);
- pickling (worker -> parent) and the parent's encoding of the findings for the cache and
  the summary.

Usage: python benchmarks/convert_profile.py (--tree DIR | --corpus dense [--lines 200000])
                                            [--rocm 6.4] [--top 15] [--json OUT]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pickle
import pstats
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from convert_bench import GENERATORS, SOURCE_SUFFIXES  # noqa: E402


def _tree_files(root: Path) -> list[tuple[str, bytes]]:
    return [(p.relative_to(root).as_posix(), p.read_bytes()) for p in sorted(root.rglob("*"))
            if p.is_file() and not p.is_symlink()
            and (p.name.endswith(SOURCE_SUFFIXES) or p.name in ("Makefile", "CMakeLists.txt"))]


def _inclusive(stats: pstats.Stats, where: str, name: str) -> float:
    """The inclusive time of the functions called ``name`` in files ending ``where``."""
    return sum(entry[3] for (path, _, func), entry in stats.stats.items()
               if path.endswith(where) and func == name)


def _own(stats: pstats.Stats, folder: str) -> float:
    return sum(entry[2] for (path, _, _), entry in stats.stats.items() if folder in path)


def profile(files: list[tuple[str, bytes]], rocm: str) -> dict:
    import migrator.engine as engine
    from migrator import registry
    from migrator.runner import _Cache, convert_file
    from migrator.settings import Settings
    from migrator.versions import parse_target

    settings = Settings(rocm=parse_target(rocm))
    convert_file("warm.cu", b"int x;\n", settings)
    family_of = {cls.__name__: cls.family or "other" for cls in registry.all_rules()}
    by_family: dict[str, float] = defaultdict(float)
    by_rule: dict[str, float] = defaultdict(float)
    original = engine._run_rules

    def timed_rules(rules, ctx):
        diagnostics, bulk, block = [], None, (0, 0)
        for rule in rules:
            started = time.process_time()
            found, renames = rule.check_renames(ctx)
            found = sorted(found, key=engine._diagnostic_order)
            spent = time.process_time() - started
            name = type(rule).__name__
            by_family[family_of.get(name, "other")] += spent
            by_rule[f"{name} ({', '.join(type(rule).codes())})"] += spent
            if renames is not None and bulk is None:
                bulk, block = renames, (len(diagnostics), len(diagnostics) + len(found))
            elif renames is not None:
                found = sorted(found + renames.diagnostics(), key=engine._diagnostic_order)
            diagnostics.extend(found)
        return diagnostics, bulk, block

    engine._run_rules = timed_rules
    try:  # pass 1, not profiled: the run's CPU and each rule's
        started = time.process_time()
        results = [convert_file(rel, data, settings) for rel, data in files]
        total = time.process_time() - started
    finally:
        engine._run_rules = original
    # pass 2, profiled: the phases, scaled to pass 1's CPU (the profiler slows Python code
    # about alike, tree-sitter's C parser not: the shares are approximate)
    profiler = cProfile.Profile(time.process_time)
    started = time.process_time()
    profiler.enable()
    for rel, data in files:
        convert_file(rel, data, settings)
    profiler.disable()
    profiled = time.process_time() - started
    stats = pstats.Stats(profiler)
    scale = total / profiled if profiled else 0.0
    phases = {
        "semantic queries (in the rules)": _own(stats, "migrator/semantic/"),
        "tree-sitter for rules": _inclusive(stats, "migrator/rule.py", "tree"),
        "literal and token scans": _inclusive(stats, "migrator/parsing/tokens.py", "__init__"),
        "fix application": _inclusive(stats, "migrator/engine.py", "apply"),
        "parse guard": _inclusive(stats, "migrator/engine.py", "_guard"),
        "findings": _inclusive(stats, "migrator/engine.py", "_findings")
        + _inclusive(stats, "migrator/engine.py", "_rename_findings"),
        "build files (their own rules and loop)": _inclusive(
            stats, "migrator/buildfiles/fixer.py", "fix_build_file"),
    }
    phases = {"rules (timed, not profiled)": sum(by_family.values()),
              **{name: value * scale for name, value in phases.items()}}
    started = time.process_time()
    for result in results:
        pickle.loads(pickle.dumps(result))
    pickling = time.process_time() - started
    started = time.process_time()
    with tempfile.TemporaryDirectory() as scratch:
        cache = _Cache(None, settings)
        out = Path(scratch) / "o"
        out.write_bytes(b"")
        for (rel, _), result in zip(files, results):
            cache.record(rel, result.input_hash or "x", rel, out, None, None,
                         pickle.loads(pickle.dumps(result)).findings)
    parent = time.process_time() - started
    return {"files": len(files), "cpu_s": round(total, 3),
            "profiler_slowdown": round(1 / scale, 2) if scale else None,
            "rules_by_family_s": dict(sorted(((k, round(v, 3)) for k, v in by_family.items()),
                                             key=lambda kv: -kv[1])),
            "rules_s": dict(sorted(((k, round(v, 3)) for k, v in by_rule.items()),
                                   key=lambda kv: -kv[1])),
            "phases_s": {k: round(v, 3) for k, v in phases.items()},
            "pickling_s": round(pickling, 3), "parent_encoding_s": round(parent, 3),
            "findings": sum(len(r.findings) for r in results)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = ap.add_mutually_exclusive_group(required=True)
    source.add_argument("--tree", type=Path)
    source.add_argument("--corpus", choices=tuple(GENERATORS))
    ap.add_argument("--lines", type=int, default=200_000)
    ap.add_argument("--rocm", default="6.4")
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        root = args.tree
        if root is None:
            root = Path(scratch) / "tree"
            GENERATORS[args.corpus](root, args.lines)
        started = time.process_time()
        files = _tree_files(root)
        read = time.process_time() - started
        result = profile(files, args.rocm)
    result["read_s"] = round(read, 3)
    result["tree"] = str(args.tree) if args.tree else f"{args.corpus}, {args.lines} lines"
    print(f"{result['tree']}: {result['files']} files, {result['findings']} findings; "
          f"CPU {result['cpu_s']} s in one process (the profiled pass "
          f"{result['profiler_slowdown']}x slower; its phases scaled back)")
    print(f"  read {result['read_s']} s; pickling worker -> parent {result['pickling_s']} s; "
          f"parent's cache and summary encoding {result['parent_encoding_s']} s")
    for name, value in result["phases_s"].items():
        print(f"  {name:<34} {value:7.3f} s")
    print("  rules by family:")
    for name, value in result["rules_by_family_s"].items():
        print(f"    {name:<32} {value:7.3f} s")
    print(f"  costliest rules (top {args.top}):")
    for name, value in list(result["rules_s"].items())[:args.top]:
        print(f"    {name:<48} {value:7.3f} s")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
