"""The report's one view of a tree: every file converted in memory by the engine (nothing is
written), its findings kept as rows, plus what the file's text says about its size and shape.

The findings are the engine's, from the same per-file processor ``convert`` runs (with the
project files each source includes, as the runner gives them): the report counts what the
conversion would do; it re-implements no rule. What no rule reports (kernels, launch sites, a
marker left in a tree part-way through a migration) is counted from the text, comments and
literals blanked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from ..buildfiles import language_of
from ..parsing.includes import DIRECTIVE, LINE_START
from ..parsing.tokens import LAUNCH_OPENING
from ..results import FileResult
from ..settings import Settings
from ..workspace.discovery import other_repositories
from ..workspace.includes import included_files, resolve


class Row(NamedTuple):
    """One finding, as the report reads it."""

    code: str
    kind: str  # conversion / optimization / attention / check (Finding.kind)
    fixed: bool  # the conversion settles it (a marker written counts: kind attention)
    severity: str
    library: str
    symbol: str
    line: int
    message: str


@dataclass
class FileScan:
    rel: str
    kind: str  # source | build
    lines: int
    status: str  # converted | unchanged | failed (FileResult.status)
    note: str = ""  # why it failed, or the conversion's note
    kernels: int = 0  # __global__ functions
    launches: int = 0  # <<<...>>> launches and launch API calls
    markers: int = 0  # rocmigrate markers already in the file (a tree part-way through)
    patterns: tuple[str, ...] = ()  # what the text uses that no finding names (thrust, ...)
    rows: list[Row] = field(default_factory=list)
    includes: tuple[str, ...] = ()  # project files it includes directly (tree paths)

    def __getstate__(self) -> dict:
        """Pickled with the rows as columns, each text once (a worker's scan crosses to the
        parent so: a dense file's thousands of findings repeat a few texts)."""
        texts: dict[str, int] = {}
        columns = [list(column) for column in zip(*self.rows)] if self.rows else []
        for index in _TEXT_FIELDS:
            if columns:
                columns[index] = [texts.setdefault(text, len(texts)) for text in columns[index]]
        return dict(self.__dict__, rows=(columns, list(texts)))

    def __setstate__(self, state: dict) -> None:
        columns, texts = state["rows"]
        for index in _TEXT_FIELDS:
            if columns:
                columns[index] = list(map(texts.__getitem__, columns[index]))
        self.__dict__.update(state, rows=list(map(Row, *columns)) if columns else [])


_TEXT_FIELDS = tuple(index for index, name in enumerate(Row._fields)
                     if name not in ("fixed", "line"))


@dataclass
class TreeScan:
    root: Path
    files: list[FileScan]
    skipped: list[str]  # "path: why" of what the walk did not read


_KERNEL = re.compile(rb"\b__global__\b")
_LAUNCH = re.compile(LAUNCH_OPENING + rb"|\b(?:hipLaunchKernelGGL|cudaLaunchKernel|hipLaunchKernel|"
                     rb"cudaLaunchCooperativeKernel|hipLaunchCooperativeKernel|cuLaunchKernel|"
                     rb"hipModuleLaunchKernel)\s*\(")
_MARKER = re.compile(rb"\brocmigrate [A-Z]{3}[0-9]{3}: ")
# what a port needs that no API table names (rocThrust keeps thrust's names and headers)
_TEXT_PATTERNS = {"thrust": re.compile(LINE_START + DIRECTIVE + rb'[<"]thrust/', re.M),
                  "cooperative-groups": re.compile(rb"\bcooperative_groups\b")}


def scan_tree(root: Path, settings: Settings, jobs: int = 0, exclude: Path | None = None,
              report=None, started=None) -> TreeScan:
    """Every source and build file under ``root`` (the runner's discovery, its excludes), each
    converted in memory, but for those of another git repository inside it (a submodule: named
    in ``skipped``). ``exclude``: a folder not to read (the report's own, inside ``root``).
    ``report(total, lines)`` after each file, as the runner calls it. ``started(paths)`` is
    called once, when the first result is back: work a thread may do meanwhile starts then,
    after the worker processes are forked (a fork copies no other thread)."""
    from ..runner import discover, process_all

    items = discover(root, exclude, settings)
    skipped = [f"{item.rel}: {item.note}" for item in items if item.kind in ("skip", "fail")]
    files = {item.rel: item for item in items if item.kind in ("convert", "copy")}
    data: dict[str, bytes | None] = {}

    def read(rel: str) -> bytes | None:
        if rel not in data:
            try:
                data[rel] = files[rel].path.read_bytes() if rel in files else None
            except OSError:
                data[rel] = None
        return data[rel]

    # another repository's files (a submodule) are not the project's own: named, not counted
    nested = other_repositories(root, files)
    for folder in nested:
        count = sum(item.kind == "convert" and item.rel.startswith(folder + "/")
                    for item in items)
        skipped.append(f"{folder}: another git repository (a submodule); its {count} source "
                       "and build files are not counted as the project's own")
    work, scans = [], []
    direct: dict = {}
    for item in items:
        if item.kind != "convert" or any(item.rel.startswith(f + "/") for f in nested):
            continue
        content = read(item.rel)
        if content is None:
            skipped.append(f"{item.rel}: cannot be read")
            continue
        included = included_files(item.rel, content, files, read, direct)
        work.append((item.rel, content, included))
    waiting = [started] if started is not None else []

    def progress(total: int, lines: int) -> None:
        if waiting:
            waiting.pop()([rel for rel, _, _ in work])
        if report is not None:
            report(total, lines)

    for (rel, _, included), scan in zip(work, process_all(work, scan_file, settings, jobs,
                                                          progress)):
        scan.includes = _direct(rel, included, files)
        scans.append(scan)
    return TreeScan(root, scans, skipped)


def scan_file(rel: str, content: bytes, settings: Settings, included: tuple = ()) -> FileScan:
    """One file's scan, made where it is converted (a worker process): only the scan comes
    back, not the converted text."""
    from ..runner import convert_file

    return scan_result(rel, content, convert_file(rel, content, settings, included))


def _direct(rel: str, included, known) -> tuple[str, ...]:
    """The project files ``rel`` names in its own #include lines, among all it reaches."""
    return tuple(sorted({file.rel for file in included
                         if resolve(rel, file.spelled, known) == file.rel}))


def scan_result(rel: str, content: bytes, result: FileResult,
                includes: tuple[str, ...] = ()) -> FileScan:
    """A file's scan from its bytes and the conversion's result."""
    from ..parsing.tokens import LiteralSpans, blank_literals

    build = language_of(rel) is not None
    lines = content.count(b"\n") + (1 if content and not content.endswith(b"\n") else 0)
    scan = FileScan(rel, "build" if build else "source", lines, result.status,
                    result.message, includes=includes)
    scan.markers = len(_MARKER.findall(content))
    if result.status == "failed":
        return scan
    if not build:
        code = blank_literals(content, LiteralSpans(content))
        scan.kernels = len(_KERNEL.findall(code))
        scan.launches = len(_LAUNCH.findall(code))
        scan.patterns = tuple(name for name, pattern in _TEXT_PATTERNS.items()
                              if pattern.search(code if name != "thrust" else content))
    scan.rows = [Row(f.code, f.kind, f.fixed, f.severity, f.library, f.symbol, f.line, f.message)
                 for f in result.findings]
    return scan
