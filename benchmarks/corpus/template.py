"""What the corpus generators share: line templates, weighted tables and writing the tree.

A template is C/C++ text with ``$name`` / ``${name}`` placeholders (``string.Template``; the
generated code has no ``$``). Two line prefixes are understood as well:

* ``?flag|`` keeps the line only when ``values["flag"]`` is true, ``?!flag|`` only when false;
* a line ``*name`` stands for the lines of the list ``values["name"]`` (none when it is empty).

A text that ends with a newline ends with an empty line, the blank line after a section.
"""

from __future__ import annotations

import random
from pathlib import Path
from string import Template


class LineTemplate:
    """A template parsed once into lines: (flag or None, list name or None, text)."""

    __slots__ = ("lines",)

    def __init__(self, text: str) -> None:
        self.lines = []
        for line in text.split("\n"):
            flag = None
            if line.startswith("?"):
                flag, line = line[1:].split("|", 1)
            if line.startswith("*"):
                self.lines.append((flag, line[1:], None))
            else:
                self.lines.append((flag, None, Template(line) if "$" in line else line))

    def render(self, values: dict) -> list[str]:
        out: list[str] = []
        for flag, many, text in self.lines:
            if flag is not None and (flag[0] == "!") == bool(values[flag.lstrip("!")]):
                continue
            if many is not None:
                out += values[many]
            else:
                out.append(text if isinstance(text, str) else text.substitute(values))
        return out


def weighted(rng: random.Random, table):
    """One entry of a table of (entry, weight) pairs, drawn by weight."""
    entries, weights = zip(*table)
    return rng.choices(entries, weights=weights, k=1)[0]


def write_tree(root: Path, files: dict[str, str]) -> dict:
    """Write ``files`` (relative path: text) under ``root``; returns the tree's counts."""
    root.mkdir(parents=True, exist_ok=True)
    by_ext: dict[str, int] = {}
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        ext = Path(rel).suffix
        by_ext[ext] = by_ext.get(ext, 0) + 1
    return {"files": len(files), "lines": sum(t.count("\n") for t in files.values()),
            "bytes": sum(len(t) for t in files.values()), "by_ext": dict(sorted(by_ext.items())),
            "folders": len({str(Path(r).parent) for r in files})}
