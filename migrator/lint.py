"""`lint` as a library: check HIP/CUDA files with the rule registry, optionally fix them.

Shares the engine, rules, suppressions and process pool with ``convert``; differs in what it
reports (every finding, with its fix availability) and in writing fixes back in place.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from fnmatch import fnmatch
from pathlib import Path

from . import support
from .fsutil import atomic_write
from .pool import map_in_workers
from .results import CONVERTIBLE_SUFFIXES, FileResult
from .settings import Settings

POOL_THRESHOLD = 16  # below this many files, lint runs in this process
SKIPPED_DIRS = {".git", ".hg", ".svn", ".rocmigrate", "__pycache__", ".venv", "node_modules"}


class LintError(Exception):
    """A usage problem with the whole run (a path that does not exist...)."""


@dataclass
class LintResult:
    results: list[FileResult] = field(default_factory=list)
    diffs: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # symlinked files, not followed

    @property
    def remaining(self):
        return [f for r in self.results for f in r.findings if not f.fixed]

    @property
    def fixed(self):
        return [f for r in self.results for f in r.findings if f.fixed]

    @property
    def failed(self) -> list[FileResult]:
        return [r for r in self.results if r.status == "failed"]


def _excluded(rel: str, patterns: tuple[str, ...]) -> bool:
    parts = rel.split("/")
    return any(fnmatch(rel, p) or any(fnmatch(part, p) for part in parts) for p in patterns)


def discover(paths: list[Path], settings: Settings, root: Path,
             skipped: list[str] | None = None) -> list[tuple[str, Path]]:
    """(display path, path) of every source file under ``paths``: folders recursively, files as
    given (an explicitly named file is checked whatever its suffix), excludes applied. Symlinked
    files inside folders are not followed (their targets are checked where they live); they are
    added to ``skipped``."""
    found: dict[Path, str] = {}
    for path in paths:
        if not path.exists():
            raise LintError(f"{path} does not exist")
        if path.is_file():
            found.setdefault(path.resolve(), _display(path, root))
            continue
        for dirpath, dirnames, filenames in os.walk(path):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS)
            for name in filenames:
                full = Path(dirpath) / name
                if not name.endswith(CONVERTIBLE_SUFFIXES):
                    continue
                if full.is_symlink():
                    if skipped is not None:
                        skipped.append(full.as_posix())
                    continue
                display = _display(full, root)
                if _excluded(display, settings.exclude):
                    continue
                found.setdefault(full.resolve(), display)
    return sorted(((display, path) for path, display in found.items()), key=lambda x: x[0])


def _display(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def lint_bytes(rel: str, data: bytes, settings: Settings, fix: bool) -> FileResult:
    """Check (and with ``fix``, fix) one file's bytes with its per-file settings; never raises."""
    from .convert import process_bytes

    return process_bytes(rel, data, settings.for_file(rel), apply_fixes=fix, reject_non_code=False)


def _job(job):
    rel, data, settings, fix = job
    return lint_bytes(rel, data, settings, fix)


def lint(paths: list[Path], settings: Settings, root: Path, fix: bool = False,
         diff: bool = False, jobs: int = 0, report=None) -> LintResult:
    """Lint ``paths``. With ``fix`` the fixed files are written back (atomically); with ``diff``
    the fixes are computed and returned as patches, and nothing is written. ``report(total,
    lines)`` is called after each file checked (as ``runner.run`` does)."""
    result = LintResult()
    files = discover(paths, settings, root, result.skipped)
    work = []
    for display, path in files:
        try:
            work.append((display, path, path.read_bytes()))
        except OSError as err:
            result.results.append(FileResult(display, "failed", f"cannot read: {err.strerror}"))
    settings = replace(settings, report_unused_suppressions=True, write_markers=False)
    payload = [(display, data, settings, fix or diff) for display, _, data in work]
    outcomes = []
    for (_, data, _, _), outcome in zip(payload, map_in_workers(_job, payload, jobs,
                                                                POOL_THRESHOLD)):
        outcomes.append(outcome)
        if report is not None:
            report(len(payload), data.count(b"\n"))
    for (display, path, data), outcome in zip(work, outcomes):
        output, outcome.output = outcome.output, None
        if outcome.status != "failed" and output is not None and output != data:
            if diff:
                from .runner import unified_diff

                result.diffs.append(unified_diff(display, display, data, output))
                for finding in outcome.findings:
                    finding.fixed = False  # shown, not applied
            elif fix:
                atomic_write(path, output, mode_from=path)
                support.write_beside(path.parent, outcome.support, settings)
        result.results.append(outcome)
    result.results.sort(key=lambda r: r.rel)
    return result
