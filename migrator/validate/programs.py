"""Programs to validate: every ``.cu``/``.cpp``/``.hip`` file with an ``int main(`` under a tree."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..workspace.discovery import walk

PROGRAM_SUFFIXES = (".cu", ".cpp", ".hip")
_MAIN = re.compile(rb"\bint\s+main\s*\(")


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


def _is_program(path: Path) -> bool:
    if path.suffix not in PROGRAM_SUFFIXES or path.is_symlink() or not path.is_file():
        return False
    try:
        return _MAIN.search(path.read_bytes()) is not None
    except OSError:
        return False


def arguments_for(program: Program, given: tuple[tuple[str, tuple[str, ...]], ...]) -> tuple[str, ...]:
    """The command-line arguments ``given`` (``(name, arguments)`` pairs, the last match wins)
    name for ``program``: none where no pair names it."""
    chosen: tuple[str, ...] = ()
    for name, arguments in given:
        if _matches(program, name):
            chosen = arguments
    return chosen


def _matches(program: Program, name: str) -> bool:
    name = name.strip("/")
    return name in (program.name, program.rel, program.rel.rsplit("/", 1)[-1],
                    program.name.rsplit("/", 1)[-1])
