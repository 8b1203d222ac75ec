"""Programs to validate: every ``.cu``/``.cpp``/``.hip`` file with an ``int main(`` under a tree."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..workspace.discovery import walk

PROGRAM_SUFFIXES = (".cu", ".cpp", ".hip")
_MAIN = re.compile(rb"\bint\s+main\s*\(")
_LOCAL_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.MULTILINE)


@dataclass(frozen=True)
class Program:
    name: str  # the path without its suffix (with it where two programs would share a name)
    rel: str  # posix path relative to the source root


def find_programs(source: Path) -> tuple[Path, list[Program]]:
    """(root, programs): ``source`` itself when it is a program file (root: its folder), else
    every program file under the folder ``source``, sorted by path."""
    if source.is_file():
        root, files = source.parent, [source] if _is_program(source) else []
    else:
        # what cannot be read there is a failure of the conversion, which validate reports
        root = source
        files = [entry.path for entry in walk(source)
                 if entry.kind == "file" and _is_program(entry.path)]
    rels = sorted(path.relative_to(root).as_posix() for path in files)
    stems = [rel.rsplit(".", 1)[0] for rel in rels]
    return root, [Program(stem if stems.count(stem) == 1 else rel, rel)
                  for rel, stem in zip(rels, stems)]


def select_programs(programs: list[Program], names: tuple[str, ...]) -> list[Program]:
    """The programs named (by name, path or file name); all of them when ``names`` is empty."""
    if not names:
        return programs
    unknown = [name for name in names if not any(_matches(p, name) for p in programs)]
    if unknown:
        known = ", ".join(p.name for p in programs) or "none"
        raise ValueError(f"no program {', '.join(unknown)} (programs: {known})")
    return [p for p in programs if any(_matches(p, name) for name in names)]


def local_includes(root: Path, rel: str) -> set[str]:
    """``rel`` and every file under ``root`` it includes with ``#include "..."``, transitively
    (resolved next to the including file, then in the program's folder)."""
    program_dir = (root / rel).parent
    seen: set[str] = set()
    pending = [rel]
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        try:
            data = (root / current).read_bytes()
        except OSError:
            continue
        for match in _LOCAL_INCLUDE.finditer(data):
            name = match.group(1).decode("utf-8", "replace")
            for folder in ((root / current).parent, program_dir):
                candidate = Path(os.path.normpath(folder / name))
                if candidate.is_file():
                    try:
                        pending.append(candidate.relative_to(root).as_posix())
                    except ValueError:
                        pass  # outside the tree: not converted, not ours to report
                    break
    return seen


def _is_program(path: Path) -> bool:
    if path.suffix not in PROGRAM_SUFFIXES or path.is_symlink() or not path.is_file():
        return False
    try:
        return _MAIN.search(path.read_bytes()) is not None
    except OSError:
        return False


def _matches(program: Program, name: str) -> bool:
    name = name.strip("/")
    return name in (program.name, program.rel, program.rel.rsplit("/", 1)[-1],
                    program.name.rsplit("/", 1)[-1])
