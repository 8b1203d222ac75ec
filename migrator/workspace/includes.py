"""The project files a source includes: its ``#include "..."`` lines resolved in the tree, and
theirs in turn.

A few rules need to know what a file pulls in from the project (a macro that must come before
the first HIP header of the whole translation unit, when a header included later needs it). The
runner gives each file the texts of the files it includes; their hashes go into the file's cache
entry, so editing a header converts its includers again. Only quoted includes are followed, and
only to files of the tree being converted: ``<...>`` names system and toolkit headers.
"""

from __future__ import annotations

import posixpath
import re
from collections import deque
from collections.abc import Callable, Container
from dataclasses import dataclass

# a quoted include at the start of a line (a commented-out one starts with // and is not read;
# one inside /* */ is, which at worst adds a file to read)
_QUOTED = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.M)
MAX_FILES = 256  # files followed from one source: enough for a real project, bounded for any


@dataclass(frozen=True)
class Included:
    """A project file a source includes, directly or through other project files."""

    rel: str  # its path in the tree (posix)
    data: bytes
    spelled: str  # the path of this source's own #include line that leads to it


def resolve(including: str, spelled: str, known: Container[str]) -> str | None:
    """The tree path ``#include "spelled"`` in the file ``including`` names: beside it, else
    from the tree's root (a project's ``-I.``); None when neither is a file of the tree (or the
    path leaves the tree)."""
    folder = posixpath.dirname(including)
    for base in (folder, ""):
        rel = posixpath.normpath(posixpath.join(base, spelled))
        if not rel.startswith("../") and rel != ".." and rel in known:
            return rel
    return None


def included_files(rel: str, data: bytes, known: Container[str],
                   read: Callable[[str], bytes | None],
                   direct: dict[str, list[tuple[str, str]]] | None = None
                   ) -> tuple[Included, ...]:
    """The project files ``rel`` includes, breadth first, each once (itself excluded), at most
    MAX_FILES; ``read`` gives a tree file's bytes (None: unreadable, then not followed).
    ``direct``, shared by the calls for one tree, keeps each file's own includes (a header
    included everywhere is read for its includes once)."""
    if b"include" not in data:
        return ()
    direct = {} if direct is None else direct
    found: dict[str, Included] = {}
    queue = deque([(rel, data, None)])
    while queue and len(found) < MAX_FILES:
        including, text, via = queue.popleft()
        for target, spelled in _direct_includes(including, text, known, direct):
            if target == rel or target in found:
                continue
            content = read(target)
            if content is None:
                continue
            found[target] = Included(target, content, via or spelled)
            queue.append((target, content, via or spelled))
            if len(found) >= MAX_FILES:
                break
    return tuple(found.values())


def _direct_includes(including: str, text: bytes, known: Container[str],
                     direct: dict[str, list[tuple[str, str]]]) -> list[tuple[str, str]]:
    """(tree path, spelling) of each quoted include of ``including`` that names a tree file."""
    found = direct.get(including)
    if found is None:
        found = direct[including] = []
        for match in _QUOTED.finditer(text):
            spelled = match.group(1).decode("utf-8", "surrogateescape").strip()
            target = resolve(including, spelled, known)
            if target is not None:
                found.append((target, spelled))
    return found
