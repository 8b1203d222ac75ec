"""A converted tree as `rocmigrate build` reads it: which output came from which CUDA file, the
ROCm it was converted for, its translation units and include folders, and lines mapped back.

``OUT/.rocmigrate/cache.json`` is untrusted input (anyone can edit it): it is read without
following symlinks, every path in it must be a plain relative path (no ``..``, no absolute path,
nothing in the cache folder), entries that break this are dropped, and a cache that cannot be
read at all only means the outputs are not mapped to sources.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..fsutil import read_inside
from ..parsing.includes import LINE_INCLUDE
from ..workspace.discovery import OUTPUT_MARK, walk
from ..workspace.includes import resolve
from ..workspace.units import CXX_SUFFIXES, HEADER_SUFFIXES, SOURCE_SUFFIXES

CACHE_FOLDER = OUTPUT_MARK.split("/")[0]
# the settings fingerprint in the cache key opens with the target: "|((6, 4, 0), 'chevron', ..."
_KEY_TARGET = re.compile(r"\|\(\((\d+), (\d+), (\d+)\), ")


def plain_rel(value) -> bool:
    """A relative posix path that names something inside its root, outside the cache folder."""
    if type(value) is not str or not value or "\0" in value or "\\" in value:
        return False
    parts = value.split("/")
    return parts[0] != CACHE_FOLDER and all(part not in ("", ".", "..") for part in parts)


@dataclass
class ConvertedTree:
    root: Path
    sources: dict[str, str] = field(default_factory=dict)  # output rel -> CUDA source rel
    converted_for: tuple[int, int, int] | None = None  # the target ROCm of the conversion
    cache_note: str = ""  # what the cache said, or why it was not used

    def source_of(self, rel: str) -> str | None:
        return self.sources.get(rel)


def read_tree(out: Path) -> ConvertedTree:
    """The tree at ``out`` and what its cache says (see the module's note on trust)."""
    tree = ConvertedTree(out)
    try:
        raw = read_inside(out, OUTPUT_MARK)
    except OSError as err:
        tree.cache_note = f"{OUTPUT_MARK} cannot be read safely ({err}): outputs are not mapped"
        return tree
    if raw is None:
        tree.cache_note = f"no {OUTPUT_MARK}: not a rocmigrate output, outputs are not mapped"
        return tree
    try:
        stored = json.loads(raw)
    except (ValueError, RecursionError):
        tree.cache_note = f"{OUTPUT_MARK} is not valid JSON: outputs are not mapped"
        return tree
    files = stored.get("files") if type(stored) is dict else None
    if type(files) is not dict:
        tree.cache_note = f"{OUTPUT_MARK} holds no file table: outputs are not mapped"
        return tree
    dropped = 0
    for source, entry in files.items():
        output = entry.get("output") if type(entry) is dict else None
        if plain_rel(source) and plain_rel(output):
            tree.sources[output] = source
        else:
            dropped += 1
    key = stored.get("key")
    match = _KEY_TARGET.search(key) if type(key) is str else None
    if match:
        tree.converted_for = tuple(int(part) for part in match.groups())
    tree.cache_note = (f"{OUTPUT_MARK}: {len(tree.sources)} outputs mapped to their sources"
                       + (f"; {dropped} entries ignored (paths leaving the tree or not paths)"
                          if dropped else ""))
    return tree


def tree_files(root: Path) -> list[str]:
    """Every file under ``root`` (relative posix paths, sorted) as the walk every command shares
    finds it (no cache, version control or environment folder; symlinked folders not entered;
    a link to a file of the tree counts)."""
    return [entry.rel for entry in walk(root)
            if entry.kind == "file" or (entry.kind == "link" and entry.path.is_file())]


def include_folders(root: Path, files: list[str]) -> list[str]:
    """The folders of the tree (relative; "" is the root) that an -I must name so that its
    includes resolve: for each #include not found beside the including file, the folder a tree
    file of that path lies under. Sorted; the root first."""
    known = set(files)
    by_name: dict[str, list[str]] = {}
    for rel in files:
        by_name.setdefault(rel.rsplit("/", 1)[-1], []).append(rel)
    needed = {""}
    for rel in files:
        if not rel.endswith(SOURCE_SUFFIXES + CXX_SUFFIXES + HEADER_SUFFIXES):
            continue
        try:
            data = (root / rel).read_bytes()
        except OSError:
            continue
        for quote, name in LINE_INCLUDE.findall(data):
            include = name.decode("utf-8", "replace").strip()
            if quote == b'"' and resolve(rel, include, known, folders=()) is not None:
                continue
            for candidate in by_name.get(include.rsplit("/", 1)[-1], ()):
                if candidate == include or candidate.endswith("/" + include):
                    needed.add(candidate[: len(candidate) - len(include)].rstrip("/"))
    return sorted(needed, key=lambda folder: (folder != "", folder))


class LineMap:
    """Output lines mapped to the CUDA file's lines by a diff of the two files: a line the
    conversion kept maps exactly; a changed or added line maps to the source line it replaced
    or that follows it (``exact`` False)."""

    def __init__(self, source_lines: list[str], output_lines: list[str]) -> None:
        matcher = difflib.SequenceMatcher(None, source_lines, output_lines, autojunk=False)
        self.blocks = matcher.get_opcodes()
        self.source_count = len(source_lines)

    def source_line(self, line: int) -> tuple[int, bool] | None:
        """The 1-based source line of 1-based output ``line``, and whether it is exact."""
        index = line - 1
        for tag, i1, i2, j1, j2 in self.blocks:
            if j1 <= index < j2:
                if tag == "equal":
                    return i1 + index - j1 + 1, True
                if i2 > i1:  # replaced: the matching line of the replaced block
                    return i1 + min(index - j1, i2 - i1 - 1) + 1, False
                return min(i1 + 1, max(self.source_count, 1)), False  # added before line i1
        return None


def read_lines(path: Path) -> list[str] | None:
    try:
        return path.read_bytes().decode("utf-8", "replace").splitlines()
    except OSError:
        return None
