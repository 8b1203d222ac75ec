"""`lint` as a library: check HIP/CUDA files with the rule registry, optionally fix them.

Shares the engine, rules, suppressions and process pool with ``convert``; differs in what it
reports (every finding, with its fix availability) and in writing fixes back in place.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace
from pathlib import Path

from . import support
from .fsutil import atomic_write
from .buildfiles import language_of
from .results import CONVERTIBLE_SUFFIXES, FileResult
from .runner import process_all, unified_diff
from .settings import Settings
from .workspace.discovery import walk

POOL_THRESHOLD = 16  # below this many files, lint runs in this process


class LintError(Exception):
    """A usage problem with the whole run (a path that does not exist...)."""


@dataclass
class LintResult:
    results: list[FileResult] = field(default_factory=list)
    diffs: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "path: why" of what was not checked

    @property
    def remaining(self):
        return [f for r in self.results for f in r.findings if not f.fixed]

    @property
    def fixed(self):
        return [f for r in self.results for f in r.findings if f.fixed]

    @property
    def failed(self) -> list[FileResult]:
        return [r for r in self.results if r.status == "failed"]


_LINK_NOTE = "symlink, not followed (its target is checked where it lives)"


def discover(paths: list[Path], settings: Settings, root: Path,
             skipped: list[str] | None = None
             ) -> tuple[list[tuple[str, str, Path]], list[FileResult]]:
    """(rel, shown, path) of every source file under ``paths`` (the workspace's walk of each
    folder; a file named explicitly is checked whatever its suffix), excludes applied, and the
    entries that cannot be read (failed results, named by their shown path). ``rel`` is the
    path relative to ``root`` (the configuration's folder), which ``exclude`` and
    ``per-file-ignores`` match; ``shown`` is the path that opens from the working directory
    (``shown_path``), which every output names. Symlinks inside folders are not followed
    (their targets are checked where they live): they, and what the walk skips, go to
    ``skipped``."""
    found: dict[Path, tuple[str, str]] = {}
    failed: list[FileResult] = []
    for path in paths:
        if not path.exists():
            raise LintError(f"{path} does not exist")
        if path.is_file():
            found.setdefault(path.resolve(), (_display(path, root), shown_path(path)))
            continue
        base = _display(path, root)
        prefix = "" if base == "." else base + "/"
        shown_base = shown_path(path)
        shown_prefix = "" if shown_base == "." else shown_base.rstrip("/") + "/"
        for entry in walk(path, settings.exclude, exclude_base=prefix):
            display = prefix + entry.rel
            shown = shown_prefix + entry.rel
            # sources, and build files (an nvcc left in a HIP project's Makefile)
            source = entry.rel.endswith(CONVERTIBLE_SUFFIXES) or language_of(entry.rel) is not None
            if entry.kind == "fail":
                failed.append(FileResult(shown, "failed", entry.note))
            elif entry.excluded or not (source or entry.folder or entry.target_is_dir):
                continue
            elif entry.kind == "file":
                found.setdefault(entry.path.resolve(), (display, shown))
            elif skipped is not None:
                skipped.append(f"{shown}: {entry.note or _LINK_NOTE}")
    return sorted(((display, shown, path) for path, (display, shown) in found.items()),
                  key=lambda x: x[1]), failed


def _display(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def shown_path(path: Path) -> str:
    """``path`` as lint's outputs name it: a path that opens from the working directory, as git
    and pre-commit give them. A relative path is kept as given (tidied: ``./a`` is ``a``); an
    absolute one inside the working directory becomes relative to it; one outside stays
    absolute."""
    if not path.is_absolute():
        return path.as_posix()
    try:
        return path.relative_to(Path.cwd()).as_posix()
    except ValueError:
        pass
    try:  # the working directory reached through a symlink
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except (ValueError, OSError):
        return path.as_posix()


def lint_bytes(rel: str, data: bytes, settings: Settings, fix: bool = False) -> FileResult:
    """Check (and with ``fix``, fix) one file's bytes; never raises: lint's per-file processor."""
    from .convert import process_bytes

    return process_bytes(rel, data, settings, apply_fixes=fix, reject_non_code=False)


def lint(paths: list[Path], settings: Settings, root: Path, fix: bool = False,
         diff: bool = False, jobs: int = 0, report=None) -> LintResult:
    """Lint ``paths``. With ``fix`` the fixed files are written back (atomically); with ``diff``
    the fixes are computed and returned as patches, and nothing is written. ``report(total,
    lines)`` is called after each file checked (as ``runner.run`` does)."""
    result = LintResult()
    files, result.results = discover(paths, settings, root, result.skipped)
    work = []
    for display, shown, path in files:
        try:
            work.append((display, shown, path, path.read_bytes()))
        except OSError as err:
            result.results.append(FileResult(shown, "failed", f"cannot read: {err.strerror}"))
    settings = replace(settings, report_unused_suppressions=True, write_markers=False)
    processor = functools.partial(lint_bytes, fix=fix or diff)
    # the rules see the path relative to the configuration's folder (per-file-ignores match
    # it); what lint shows is the path from the working directory
    outcomes = list(process_all([(display, data) for display, _, _, data in work], processor,
                                settings, jobs, report, POOL_THRESHOLD))
    for (display, shown, path, data), outcome in zip(work, outcomes):
        _show_as(outcome, shown)
        output, outcome.output = outcome.output, None
        if outcome.status != "failed" and output is not None and output != data:
            if diff:
                result.diffs.append(unified_diff(shown, shown, data, output))
                for finding in outcome.findings:
                    finding.fixed = False  # shown, not applied
            elif fix:
                atomic_write(path, output, mode_from=path)
                support.write_beside(path.parent, outcome.support, settings)
        result.results.append(outcome)
    result.results.sort(key=lambda r: r.rel)
    return result


def _show_as(outcome: FileResult, shown: str) -> None:
    """Name ``outcome`` and its findings by ``shown``, the path from the working directory."""
    rel, outcome.rel = outcome.rel, shown
    for finding in outcome.findings:
        if finding.path == rel:
            finding.path = shown
