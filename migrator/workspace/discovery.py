"""The one walk of a source tree every command shares: which folders are never entered, what a
symlink is, what cannot be read. Commands decide what to do with each entry (``convert`` copies
what it does not convert and recreates links; ``lint`` checks source files only)."""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path

from ..fsutil import MiB, read_regular

OUTPUT_MARK = ".rocmigrate/cache.json"  # a folder holding it is a rocmigrate output tree
# never entered, never listed: version control and tools' own caches and environments
QUIET_DIRS = frozenset({".git", ".hg", ".svn", ".rocmigrate", "__pycache__", ".venv",
                        "node_modules", ".tox", ".mypy_cache", ".pytest_cache", ".ruff_cache"})
BUILD_MARK = "CMakeCache.txt"  # a folder holding it is a CMake build tree
_GITMODULES_PATH = re.compile(rb"^[ \t]*path[ \t]*=[ \t]*(.*?)[ \t\r]*$", re.M)


@dataclass
class Entry:
    """One thing found in the tree, by its posix path ``rel`` below the root.

    kind: ``file`` (a regular file; ``size``/``mtime_ns`` from the walk's own lstat), ``link``
    (a symlink to ``target_rel`` inside the tree, ``target_is_dir`` saying what it names),
    ``skip`` (not followed or not entered, ``note`` says why) or ``fail`` (cannot be read).
    ``excluded``: a file or link the configuration's ``exclude`` names; ``folder``: the entry
    is a folder (skipped, or unreadable)."""

    rel: str
    path: Path
    kind: str
    note: str = ""
    size: int = 0
    mtime_ns: int = 0
    target_rel: str = ""
    target_is_dir: bool = False
    excluded: bool = False
    folder: bool = False


def excluded(rel: str, patterns: tuple[str, ...]) -> bool:
    """Does an ``exclude`` glob match ``rel`` or one of its parts (``third_party`` excludes
    every path through such a folder)?"""
    parts = rel.split("/")
    return any(fnmatch(rel, p) or any(fnmatch(part, p) for part in parts) for p in patterns)


def walk(root: Path, exclude: tuple[str, ...] = (), skip_folder: Path | None = None,
         skip_outputs: bool = False, exclude_base: str = "") -> list[Entry]:
    """Every entry under the folder ``root``, sorted by path. Symlinks are never followed: a
    link is an entry of its own, resolved to a path inside the tree, or skipped (it points
    outside, or makes a loop). Folders of ``QUIET_DIRS`` and ``skip_folder`` (a run's own
    output) are not entered; CMake build trees and, with ``skip_outputs``, rocmigrate output
    trees (``convert`` does not convert its output again; ``lint`` checks it) are skipped and
    listed. A folder or entry that cannot be read is a ``fail`` entry. ``exclude`` globs are
    matched against ``exclude_base`` + ``rel``."""
    entries: list[Entry] = []
    real_root = root.resolve()

    def unreadable(err: OSError) -> None:
        folder = Path(err.filename) if err.filename else root
        rel = folder.relative_to(root).as_posix() if inside(folder, root) else str(folder)
        entries.append(Entry(rel, folder, "fail", f"cannot read folder: {err.strerror}",
                             folder=True))

    for dirpath, dirnames, filenames in os.walk(root, onerror=unreadable, followlinks=False):
        current = Path(dirpath)
        folder_rel = current.relative_to(root).as_posix()
        prefix = "" if folder_rel == "." else folder_rel + "/"
        kept = []
        for name in sorted(dirnames):
            full = current / name
            if name in QUIET_DIRS or (skip_folder is not None and _resolved(full) == skip_folder):
                continue
            if os.path.islink(full):
                filenames.append(name)  # an entry of its own, below
                continue
            if skip_outputs and os.path.lexists(full / OUTPUT_MARK):
                entries.append(Entry(prefix + name, full, "skip", f"a rocmigrate output folder "
                                     f"(it holds {OUTPUT_MARK}); not converted again",
                                     folder=True))
                continue
            if os.path.lexists(full / BUILD_MARK):
                entries.append(Entry(prefix + name, full, "skip", f"a CMake build folder (it "
                                     f"holds {BUILD_MARK}); not entered", folder=True))
                continue
            kept.append(name)
        dirnames[:] = kept
        for name in filenames:
            full = current / name
            rel = prefix + name
            try:
                found = os.lstat(full)
            except OSError as err:
                entries.append(Entry(rel, full, "fail", f"cannot read: {err.strerror}"))
                continue
            if stat.S_ISLNK(found.st_mode):
                entry = _link(full, rel, real_root)
            elif stat.S_ISREG(found.st_mode):
                entry = Entry(rel, full, "file", size=found.st_size, mtime_ns=found.st_mtime_ns)
            else:
                entry = Entry(rel, full, "skip", "not a regular file")
            entry.excluded = bool(exclude) and excluded(exclude_base + rel, exclude)
            entries.append(entry)
    entries.sort(key=lambda entry: entry.rel)
    return entries


def other_repositories(root: Path, rels) -> list[str]:
    """The folders below ``root`` holding some of the files ``rels`` (tree paths) that are
    another git repository: a submodule (a ``.git`` file, or a ``path`` of the root's
    ``.gitmodules``) or a clone (a ``.git`` folder). Sorted; one inside another is left out."""
    folders = {rel.rsplit("/", 1)[0] for rel in rels if "/" in rel}
    for folder in list(folders):
        while "/" in folder:
            folder = folder.rsplit("/", 1)[0]
            folders.add(folder)
    found = {folder for folder in folders if os.path.lexists(root / folder / ".git")}
    try:
        listed = read_regular(root / ".gitmodules", MiB)
    except OSError:  # none, or not a regular file
        listed = b""
    for match in _GITMODULES_PATH.finditer(listed):
        folder = match.group(1).decode("utf-8", "replace").strip("/")
        if folder in folders:
            found.add(folder)
    return [folder for folder in sorted(found)
            if not any(folder.startswith(other + "/") for other in found)]


def _link(full: Path, rel: str, real_root: Path) -> Entry:
    """A symlink: an entry naming its target inside the tree, or skipped where it points
    outside or makes a loop."""
    target = _resolved(full)
    if target is None:
        return Entry(rel, full, "skip", f"symlink to {_link_text(full)} is a loop (or cannot "
                     "be resolved); not followed")
    if not inside(target, real_root):
        return Entry(rel, full, "skip", f"symlink to {_link_text(full)} points outside the "
                     "source tree; not followed")
    target_is_dir = os.path.isdir(target)  # False, not an error, where it cannot be read
    if target_is_dir and inside(full.parent.resolve(), target):
        return Entry(rel, full, "skip", f"symlink to {_link_text(full)} is a loop (it points "
                     "to a folder that contains it); not followed")
    return Entry(rel, full, "link", target_rel=target.relative_to(real_root).as_posix(),
                 target_is_dir=target_is_dir)


def inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
        return True
    except ValueError:
        return False


def _resolved(path: Path) -> Path | None:
    """``path`` with every symlink resolved, or None for a symlink loop or an unreadable path."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # RuntimeError: Python < 3.13's "Symlink loop"
        return None


def _link_text(path: Path) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return "?"
