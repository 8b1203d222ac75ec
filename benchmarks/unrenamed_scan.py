#!/usr/bin/env python3
"""CUDA names left in converted code that the target ROCm has a HIP name for, with no marker.

Not a test of the corpus (tests never read it): the scan itself is also run by
tests/test_unrenamed.py on kernels/ and the rule fixtures. It reads converted files on its own
terms, not through the rules that renamed them (a rule that skips a name would skip it again
when asked whether it did): every identifier in code (comments, string literals and
``#include`` lines blanked) that the API tables map to a different HIP name that exists at the
target is a finding, unless it is a member or a qualified name (``obj.cudaMalloc``,
``ns::cudaMalloc``: not the API), a project's own variable or member of that name (``int
cudaMalloc;``), or its line or the comment lines right above it carry a ``rocmigrate CODE:``
marker or a suppression of API001.

Usage: python benchmarks/unrenamed_scan.py CONVERTED_DIR... [--rocm 6.4] [--show 30]
   or: python benchmarks/unrenamed_scan.py --convert CORPUS_SRC [--rocm X.Y] (converts each
       NAME-cuda program of a HeCBench-layout corpus into a temporary folder first)
Prints the findings (file:line: name -> hip name) and a count per name; exit status 0.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from migrator import apitables, support  # noqa: E402
from migrator.parsing.tokens import LiteralSpans, blank_literals  # noqa: E402
from migrator.versions import DEFAULT_ROCM, parse_target  # noqa: E402
from rules.cuda_context import compiler_macro  # noqa: E402
from rules.target_names import renamable  # noqa: E402

SUFFIXES = (".cu", ".cuh", ".hip", ".h", ".hpp", ".hh", ".cpp", ".cc", ".cxx", ".inl")
_WORD = re.compile(rb"[A-Za-z_]\w*")
_MARKER = re.compile(rb"rocmigrate [A-Z]{3}[0-9]{3}: ")
_QUALIFIED = re.compile(rb"[\w>]\s*::\s*\Z")  # ns::name, T<...>::name (::name is the API)
_SUPPRESSION = re.compile(rb"rocmigrate: ignore\[[^\]]*API001")
_LAST_WORD = re.compile(rb"([A-Za-z_]\w*)[ \t\n*&]*\Z")
_NOT_TYPES = {b"return", b"case", b"throw", b"else", b"do", b"sizeof", b"co_return", b"goto",
              b"new", b"delete", b"typedef", b"using", b"define"}


def renamable_names(tables, rocm) -> dict[bytes, str]:
    """CUDA name -> HIP name, for the names the target has a different HIP name for (but the
    compiler tests, ``__CUDACC__``: a C or C++ library header keeps them, rightly)."""
    return {entry.cuda.encode(): entry.hip for entry in tables.names.values()
            if entry.hip and entry.hip != entry.cuda and renamable(entry, rocm)
            and not compiler_macro(entry.cuda)}


def unrenamed(data: bytes, names: dict[bytes, str]) -> list[tuple[int, str, str]]:
    """(line, CUDA name, HIP name) of each unmarked CUDA name left in ``data``'s code."""
    code = blank_literals(data, LiteralSpans(data))
    lines = data.split(b"\n")
    found = []
    for match in _WORD.finditer(code):
        word = match.group()
        hip = names.get(word)
        if hip is None:
            continue
        before = code[max(0, match.start() - 200) : match.start()].rstrip()
        if before.endswith((b".", b"->")) or _QUALIFIED.search(before) or \
                _declared_name(before, code, match.end()):
            continue
        line = data.count(b"\n", 0, match.start())
        if _marked(lines, line):
            continue
        found.append((line + 1, word.decode(), hip))
    return found


def _declared_name(before: bytes, code: bytes, end: int) -> bool:
    """A project's own variable or member that carries an API name (``int cudaMalloc;``): a
    type word before it, a declarator's end after it."""
    previous = _LAST_WORD.search(before)
    after = code[end : end + 200].lstrip()[:1]
    return (previous is not None and previous.group(1) not in _NOT_TYPES
            and after in (b";", b"=", b",", b"[", b"{"))


def _marked(lines: list[bytes], line: int) -> bool:
    """A marker (or a suppression) on the line, or in the comment lines right above it."""
    if _MARKER.search(lines[line]) or _SUPPRESSION.search(lines[line]):
        return True
    above = line - 1
    while above >= 0 and lines[above].lstrip().startswith(b"//"):
        if _MARKER.search(lines[above]):
            return True
        above -= 1
    return False


def scan(folders: list[Path], rocm) -> list[tuple[str, int, str, str]]:
    names = renamable_names(apitables.load(), rocm)
    found = []
    for folder in folders:
        files = [folder] if folder.is_file() else sorted(
            p for p in folder.rglob("*") if p.is_file() and p.suffix in SUFFIXES
            and ".rocmigrate" not in p.parts)
        for path in files:
            if path.read_bytes().startswith(support.GENERATED_MARK):
                continue  # a support header rocmigrate writes: CUDA names on purpose
            for line, name, hip in unrenamed(path.read_bytes(), names):
                found.append((str(path), line, name, hip))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="*", type=Path)
    parser.add_argument("--convert", type=Path, help="a corpus of NAME-cuda programs to convert")
    parser.add_argument("--rocm", default=DEFAULT_ROCM)
    parser.add_argument("--show", type=int, default=30)
    args = parser.parse_args()
    rocm = parse_target(args.rocm)
    folders = list(args.folders)
    with tempfile.TemporaryDirectory() as work:
        if args.convert:
            for program in sorted(args.convert.glob("*-cuda")):
                out = Path(work) / program.name
                subprocess.run([sys.executable, "-m", "migrator", "convert", str(program), "-o",
                                str(out), "--rocm", args.rocm], capture_output=True,
                               cwd=Path(__file__).resolve().parents[1])
                folders.append(out)
        found = scan(folders, rocm)
        for path, line, name, hip in found[: args.show]:
            print(f"{path}:{line}: {name} -> {hip}")
        counts = Counter(name for _, _, name, _ in found)
        files = len({path for path, *_ in found})
        print(f"unmarked CUDA names with a HIP name at ROCm {args.rocm}: {len(found)} in {files} "
              f"files; by name: {counts.most_common(15)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
