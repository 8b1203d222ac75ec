"""Include directives and the project files a source includes: its ``#include "..."`` lines
resolved in the tree, and theirs in turn.

A few rules need to know what a file pulls in from the project (a macro that must come before
the first HIP header of the whole translation unit, when a header included later needs it). The
runner gives each file the texts of the files it includes; their hashes go into the file's cache
entry, so editing a header converts its includers again. ``validate`` and ``harness`` follow the
same includes on disk (``local_includes``): the local headers of a program or a kernel's file.
Only quoted includes are followed, and only to files of the tree: ``<...>`` names system and
toolkit headers.
"""

from __future__ import annotations

import posixpath
from collections import deque
from collections.abc import Callable, Container
from dataclasses import dataclass
from pathlib import Path

from ..parsing.includes import QUOTED

MAX_FILES = 256  # files followed from one source: enough for a real project, bounded for any
ROOT_FOLDERS = ("",)  # resolve's default: beside the includer, then from the tree's root


@dataclass(frozen=True)
class Included:
    """A project file a source includes, directly or through other project files."""

    rel: str  # its path in the tree (posix)
    data: bytes
    spelled: str  # the path of this source's own #include line that leads to it


class _AnyPath:
    """A container that holds every path: what an include names, whatever the tree holds."""

    def __contains__(self, item) -> bool:
        return True


ANY_PATH = _AnyPath()


def quoted_includes(data: bytes) -> list[str]:
    """The paths ``data``'s quoted includes spell, in order."""
    return [match.decode("utf-8", "surrogateescape").strip() for match in QUOTED.findall(data)]


def resolve(including: str, spelled: str, known: Container[str],
            folders: tuple[str, ...] = ROOT_FOLDERS) -> str | None:
    """The tree path ``#include "spelled"`` in the file ``including`` names: beside it, else
    from each of ``folders`` (default: the tree's root, a project's ``-I.``); None when none is
    in ``known`` (or the path leaves the tree)."""
    for base in (posixpath.dirname(including), *folders):
        rel = posixpath.normpath(posixpath.join(base, spelled))
        if not rel.startswith("../") and rel != ".." and rel in known:
            return rel
    return None


def included_files(rel: str, data: bytes, known: Container[str],
                   read: Callable[[str], bytes | None],
                   direct: dict[str, list[tuple[str, str]]] | None = None,
                   folders: tuple[str, ...] = ROOT_FOLDERS, limit: int | None = MAX_FILES
                   ) -> tuple[Included, ...]:
    """The project files ``rel`` includes, breadth first, each once (itself excluded), at most
    ``limit``; ``read`` gives a tree file's bytes (None: unreadable, then not followed);
    ``folders``: where resolve looks after the includer's folder. ``direct``, shared by the
    calls for one tree and one ``folders``, keeps each file's own includes (a header included
    everywhere is read for its includes once)."""
    if b"include" not in data:
        return ()
    direct = {} if direct is None else direct
    found: dict[str, Included] = {}
    queue = deque([(rel, data, None)])
    while queue and (limit is None or len(found) < limit):
        including, text, via = queue.popleft()
        for target, spelled in _direct_includes(including, text, known, direct, folders):
            if target == rel or target in found:
                continue
            content = read(target)
            if content is None:
                continue
            found[target] = Included(target, content, via or spelled)
            queue.append((target, content, via or spelled))
            if limit is not None and len(found) >= limit:
                break
    return tuple(found.values())


def local_includes(root: Path, rel: str) -> set[str]:
    """``rel`` and every file under the folder ``root`` it includes, transitively, found on disk
    as its compiler would (beside the including file, then in ``rel``'s folder, which the
    compile names with -I); a file that cannot be read is listed, not followed."""
    files = _OnDisk(root)
    included = included_files(rel, files.read(rel), files, files.read,
                              folders=(posixpath.dirname(rel),), limit=None)
    return {rel, *(file.rel for file in included)}


class _OnDisk:
    """The regular files (links followed) under a folder, as a container of relative paths."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def __contains__(self, rel) -> bool:
        return not posixpath.isabs(rel) and (self.root / rel).is_file()

    def read(self, rel: str) -> bytes:
        try:
            return (self.root / rel).read_bytes()
        except OSError:
            return b""


def _direct_includes(including: str, text: bytes, known: Container[str],
                     direct: dict[str, list[tuple[str, str]]],
                     folders: tuple[str, ...]) -> list[tuple[str, str]]:
    """(tree path, spelling) of each quoted include of ``including`` that names a tree file."""
    found = direct.get(including)
    if found is None:
        found = direct[including] = []
        for spelled in quoted_includes(text):
            target = resolve(including, spelled, known, folders)
            if target is not None:
                found.append((target, spelled))
    return found
