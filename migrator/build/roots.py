"""The build roots of a converted tree: where its own build systems start.

A tree with a build file at the top is one root (its CMake project, else its Makefile). A tree
without one (NVIDIA's code samples: one Makefile per post; a benchmark with a CMake project per
backend) has a root wherever a folder's ``CMakeLists.txt`` calls ``project()`` and no other
root's ``add_subdirectory`` reaches it, or a folder's Makefile is neither included by nor
recursed into (``$(MAKE) -C dir``, ``cd dir && $(MAKE)``) from another Makefile. A folder with
both builds through CMake. Translation units under no root are compiled file by file.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from pathlib import Path

from ..buildfiles import cmake
from ..buildfiles.make import included_names, read_makefile

MAKEFILES = ("GNUmakefile", "makefile", "Makefile")  # the order make looks for them
BUILD_FILES = ("CMakeLists.txt", *MAKEFILES)
# a recipe that runs make in another folder: $(MAKE) -C dir, make -C dir, cd dir && $(MAKE)
_RECURSE = (re.compile(r"(?:\$[({]MAKE[)}]|\bmake\b)[^;&|]*?(?:\s-C\s*|--directory=)(\S+)"),
            re.compile(r"\bcd\s+(\S+)\s*(?:&&|;)\s*(?:\$[({]MAKE[)}]|make\b)"))


@dataclass(frozen=True)
class Root:
    path: str  # relative posix folder; "" is the tree's top
    method: str  # cmake | make

    @property
    def label(self) -> str:
        return self.path or "."


def calls_project(data: bytes) -> bool:
    """Does a CMakeLists.txt call project()? One without it is part of a larger project (HeCBench's
    per-program files call the suite's own functions) and cannot be configured on its own."""
    return any(command.lower == "project" for command in cmake.read(data).commands)


def _read(root: Path, rel: str) -> bytes:
    try:
        return (root / rel).read_bytes()
    except OSError:
        return b""


def _folder(rel: str) -> str:
    return posixpath.dirname(rel)


def _inside(folder: str, base: str) -> str:
    return posixpath.normpath(posixpath.join(base, folder)) if base else posixpath.normpath(folder)


def find_roots(root: Path, files: list[str]) -> list[Root]:
    """Every build root of the tree at ``root`` (``files``: its files, relative), by path."""
    cmake_projects: dict[str, bytes] = {}
    reached: set[str] = set()
    makefiles: dict[str, bytes] = {}
    for rel in files:
        name = rel.rsplit("/", 1)[-1]
        if name == "CMakeLists.txt":
            data = _read(root, rel)
            script = cmake.read(data)
            if any(command.lower == "project" for command in script.commands):
                cmake_projects[_folder(rel)] = data
            for command in script.commands:
                if command.lower == "add_subdirectory" and command.args:
                    reached.add(_inside(command.args[0].value, _folder(rel)))
        elif name in MAKEFILES or rel.endswith(".mk"):
            makefiles[rel] = _read(root, rel)
    cmake_roots = {folder for folder in cmake_projects if folder not in reached}
    included: set[str] = set()
    recursed: set[str] = set()
    for rel, data in makefiles.items():
        here = _folder(rel)
        for name in included_names(data):
            included.add(_inside(name, here))
        for line in read_makefile(data):
            if line.kind != "recipe":
                continue
            recipe = data[line.value_start:line.value_end].decode("utf-8", "replace")
            for pattern in _RECURSE:
                for folder in pattern.findall(recipe):
                    if "$" not in folder:
                        recursed.add(_inside(folder.strip("'\""), here))
    make_roots = set()
    for rel in makefiles:
        name, here = rel.rsplit("/", 1)[-1], _folder(rel)
        if name not in MAKEFILES or rel in included or here in recursed:
            continue
        if any(f"{here}/{other}" in makefiles if here else other in makefiles
               for other in MAKEFILES[:MAKEFILES.index(name)]):
            continue  # make reads the first of GNUmakefile, makefile, Makefile
        make_roots.add(here)
    roots = [Root(folder, "cmake") for folder in cmake_roots]
    roots += [Root(folder, "make") for folder in make_roots - cmake_roots]
    return sorted(roots, key=lambda found: found.path)


def root_of(rel: str, roots: list[Root]) -> Root | None:
    """The root a file of the tree lies under (the deepest), or None."""
    best = None
    for found in roots:
        if found.path == "" or rel.startswith(found.path + "/"):
            if best is None or len(found.path) > len(best.path):
                best = found
    return best
