#!/usr/bin/env python3
"""How many kernels of a CUDA corpus the libclang front end reads, and why the others fall back.

Not a test. For every ``.cu`` file of each ``src/*-cuda`` program of CORPUS (HeCBench's
layout), runs ``migrator.clang.read_kernels`` with the program folder as include path and the
shipped CUDA declarations, and counts kernels read by clang and kernels that fell back to
tree-sitter, grouping the fallbacks by their note with file names, line numbers and quoted
names taken out (so "'foo.h' file not found" and "'bar.h' file not found" count together).
A ``.cu`` file that another file of its program includes (``#include "kernels.cu"``) is no
translation unit of its own: it may use names its includer declares first, so its figures
are given apart.

With ``--toolkit INCLUDE`` (a CUDA toolkit's include folder), every file is read a second time
through that toolkit (``ReadOptions.cuda_include``) and the kernels both readings give to clang
are compared: parameters and instantiations should be the same, whichever declarations.

Usage: python benchmarks/clang_kernels.py CORPUS [--list] [--json FILE] [--toolkit INCLUDE].
CORPUS holds src/.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from migrator.clang import ReadOptions, read_kernels  # noqa: E402


_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+\.cu)"', re.MULTILINE)


def reason(note: str) -> str:
    """A fallback note with what varies per file taken out."""
    note = re.sub(r"^libclang: [^:]+:\d+: ", "libclang: ", note)
    note = re.sub(r"'[^']*'", "'…'", note)
    return re.sub(r"\bline \d+", "line N", note)


def compare(path: Path, reading, toolkit: Path, counts, show: bool) -> None:
    """Count the kernels clang reads the same through ``toolkit`` as with the shipped
    declarations."""
    other = read_kernels(path, ReadOptions(include_paths=(path.parent,), cuda_include=toolkit))
    found = {(kernel.name, kernel.line): kernel for kernel in other.kernels}
    for kernel in reading.kernels:
        twin = found.get((kernel.name, kernel.line))
        if twin is not None and kernel.reader != "clang" and twin.reader == "clang":
            counts["toolkit only"] += 1
        if kernel.reader != "clang" or twin is None:
            continue
        if twin.reader != "clang":
            counts["toolkit fallback"] += 1
        elif (twin.parameters, twin.instantiations) == (kernel.parameters,
                                                        kernel.instantiations):
            counts["toolkit same"] += 1
        else:
            counts["toolkit different"] += 1
            if show:
                print(f"{path}:{kernel.line}: {kernel.name} reads differently through the toolkit")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--list", action="store_true", help="print every fallback kernel")
    parser.add_argument("--json", type=Path, help="write the per-kernel results here")
    parser.add_argument("--toolkit", type=Path, help="compare with a reading through this CUDA "
                        "include folder")
    args = parser.parse_args()
    files = sorted(args.corpus.glob("src/*-cuda/*.cu"))
    if not files:
        print(f"no src/*-cuda/*.cu under {args.corpus}", file=sys.stderr)
        return 2
    included = set()
    for program in {path.parent for path in files}:
        for source in program.iterdir():
            if source.suffix in (".cu", ".cuh", ".h", ".hpp", ".cpp") and source.is_file():
                text = source.read_text(errors="replace")
                included.update(program / name for name in _INCLUDE.findall(text))
    counts = collections.Counter()
    notes = collections.Counter()
    reasons = collections.Counter()
    file_notes = collections.Counter()
    programs = set()
    rows = []
    started = time.perf_counter()
    slowest = (0.0, "")
    for path in files:
        began = time.perf_counter()
        reading = read_kernels(path, ReadOptions(include_paths=(path.parent,)))
        took = time.perf_counter() - began
        if args.toolkit:
            compare(path, reading, args.toolkit, counts, args.list)
        slowest = max(slowest, (took, str(path.relative_to(args.corpus))))
        for note in reading.notes:
            file_notes[reason(note).split(", first:")[0]] += 1
        programs.add(path.parent.name)
        part = "included" if path in included else "standalone"
        for kernel in reading.kernels:
            counts[kernel.reader] += 1
            counts[part, kernel.reader] += 1
            counts["templates"] += bool(kernel.template_parameters)
            counts["instantiated templates"] += bool(kernel.template_parameters) and any(
                i.template_arguments for i in kernel.instantiations)
            counts["with a note"] += bool(kernel.note)
            counts["launched"] += any(i.launches for i in kernel.instantiations)
            if kernel.reader == "clang" and kernel.note:
                for note in kernel.note.split("; "):
                    notes[reason(note)] += 1
            if kernel.reader != "clang":
                reasons[reason(kernel.note)] += 1
                if args.list:
                    print(f"{path.relative_to(args.corpus)}:{kernel.line}: {kernel.name}: "
                          f"{kernel.note}")
            rows.append({"file": str(path.relative_to(args.corpus)), "kernel": kernel.name,
                         "line": kernel.line, "reader": kernel.reader, "note": kernel.note})
    total = counts["clang"] + counts["tree-sitter"]
    seconds = time.perf_counter() - started
    print(f"{len(files)} files of {len(programs)} programs, {total} kernels "
          f"({counts['templates']} templates, {counts['instantiated templates']} of them "
          f"instantiated there or in the file that includes theirs)")
    if total:
        print(f"read by clang: {counts['clang']} ({100 * counts['clang'] / total:.1f}%), "
              f"tree-sitter fallback: {counts['tree-sitter']}, with a note: "
              f"{counts['with a note']}; with a launch site read: {counts['launched']}")
    for part in ("standalone", "included"):
        print(f"  in {part} files: clang {counts[part, 'clang']}, tree-sitter "
              f"{counts[part, 'tree-sitter']}")
    if args.toolkit:
        print(f"through {args.toolkit}: {counts['toolkit same']} kernels read the same, "
              f"{counts['toolkit different']} differently, {counts['toolkit fallback']} "
              f"read by clang only with the shipped declarations, {counts['toolkit only']} only "
              "through the toolkit")
    print(f"{seconds:.1f} s in all, {1000 * seconds / len(files):.0f} ms per file, slowest "
          f"{slowest[0]:.2f} s ({slowest[1]})")
    print("fallback reasons:")
    for text, count in reasons.most_common(25):
        print(f"  {count:5d}  {text}")
    print("notes of kernels read by clang:")
    for text, count in notes.most_common(10):
        print(f"  {count:5d}  {text}")
    print("file notes (errors outside the kernels, kept by clang):")
    for text, count in file_notes.most_common(10):
        print(f"  {count:5d}  {text}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
