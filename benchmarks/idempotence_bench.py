#!/usr/bin/env python3
"""Idempotence benchmark: convert a tree, convert the output again, count what changes.

Not a test. README promises that converting the output again changes nothing. This converts
every convertible file (sources and build files) under each FOLDER (CUDA's own headers, a real project, or the generated
mixed corpus of ``corpus/`` with ``--generate LINES``) with ``migrator.convert.convert_bytes``,
then converts each output again, and prints the files whose second pass differs (with the first
differing line), for each settings variant asked for.

Usage: python benchmarks/idempotence_bench.py FOLDER [FOLDER...] [--pattern '*-cuda']
                                             [--variant default --variant rocm52-ggl-noopt]
                                             [--generate 200000] [--limit N]
"""

from __future__ import annotations

import argparse
import difflib
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import generate_corpus  # noqa: E402

from migrator.buildfiles import language_of  # noqa: E402
from migrator.convert import convert_bytes  # noqa: E402
from migrator.results import CONVERTIBLE_SUFFIXES  # noqa: E402
from migrator.settings import Settings  # noqa: E402
from migrator.versions import parse_version  # noqa: E402

VARIANTS = {
    "default": Settings(),
    "rocm52": Settings(rocm=parse_version("5.2")),
    "ggl": Settings(launch_syntax="ggl"),
    "noopt": Settings(optimize=False),
    "rocm52-ggl-noopt": Settings(rocm=parse_version("5.2"), launch_syntax="ggl", optimize=False),
}


def sources(folders: list[Path], pattern: str | None) -> list[tuple[Path, Path]]:
    """(root, file) for every convertible file under the folders (or their children that match
    ``pattern``), sorted."""
    found = []
    for folder in folders:
        roots = sorted(p for p in folder.glob(pattern) if p.is_dir()) if pattern else [folder]
        for root in roots:
            found += [(folder, path) for path in sorted(root.rglob("*"))
                      if path.is_file() and (path.name.endswith(CONVERTIBLE_SUFFIXES)
                                             or language_of(path.name) is not None)]
    return found


def first_difference(first: bytes, second: bytes) -> str:
    """The first changed line of the second pass, as a short unified-diff excerpt."""
    diff = difflib.unified_diff(first.decode("utf-8", "replace").splitlines(),
                                second.decode("utf-8", "replace").splitlines(), lineterm="", n=0)
    lines = [line for line in diff if not line.startswith(("---", "+++"))]
    return " | ".join(line[:140] for line in lines[:3])


def run(files: list[tuple[Path, Path]], settings: Settings) -> dict:
    """Convert each file twice; the files whose second pass differs, and those that failed."""
    changed, failed, converted = [], [], 0
    started = time.perf_counter()
    for folder, path in files:
        rel = path.relative_to(folder).as_posix()
        data = path.read_bytes()
        once = convert_bytes(rel, data, settings)
        if once.status == "failed":
            failed.append((rel, once.message))
            continue
        converted += once.status == "converted"
        twice = convert_bytes(rel, once.output, settings)
        if twice.status == "failed":
            failed.append((rel, "second pass: " + twice.message))
        elif twice.output != once.output:
            changed.append((rel, first_difference(once.output, twice.output)))
    return {"files": len(files), "converted": converted, "changed": changed, "failed": failed,
            "seconds": time.perf_counter() - started}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", type=Path, nargs="*")
    ap.add_argument("--pattern", help="convert only the subfolders matching this glob ('*-cuda')")
    ap.add_argument("--variant", action="append", choices=sorted(VARIANTS),
                    help="settings to convert with (repeatable; default: default)")
    ap.add_argument("--generate", type=int, metavar="LINES",
                    help="also convert a mixed corpus (corpus/) of this many lines")
    ap.add_argument("--limit", type=int, help="convert at most this many files")
    ap.add_argument("--quiet", action="store_true", help="print counts only")
    args = ap.parse_args(argv)
    folders = list(args.folders)
    scratch = None
    if args.generate:
        scratch = tempfile.TemporaryDirectory(prefix="rocmigrate-idempotence-")
        generate_corpus(Path(scratch.name), args.generate)
        folders.append(Path(scratch.name))
    if not folders:
        ap.error("give a folder or --generate")
    files = sources(folders, args.pattern)[: args.limit]
    worst = 0
    for name in args.variant or ["default"]:
        result = run(files, VARIANTS[name])
        print(f"[{name}] {result['files']} files, {result['converted']} converted, "
              f"{len(result['changed'])} change on the second pass, {len(result['failed'])} "
              f"failed ({result['seconds']:.1f} s)")
        if not args.quiet:
            for rel, excerpt in result["changed"]:
                print(f"  changed: {rel}: {excerpt}")
            for rel, message in result["failed"]:
                print(f"  failed: {rel}: {message}")
        worst = max(worst, len(result["changed"]))
    if scratch is not None:
        scratch.cleanup()
    return 1 if worst else 0


if __name__ == "__main__":
    sys.exit(main())
