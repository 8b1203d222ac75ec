"""The libraries and packages a build lacks, named, with what showed each and the targets that
need it.

Four kinds of error name one: a missing header of a GPU library (``'hipblas/hipblas.h' file not
found``: the API tables' header rows say which library it belongs to), the linker's ``cannot
find -lNAME``, CMake's ``Could not find a package configuration file provided by "NAME"`` and a
project's own ``Could not find NAME`` / ``Could NOT find NAME`` (FindPackageHandleStandardArgs).
A CUDA library is named by its AMD counterpart (rules/build/libraries.tsv: NCCL is RCCL), and
the installed HIP is searched for it (headers, libraries, CMake packages under its ROCm root).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..apitables import Library, libraries, library_named
from .errors import BuildError

# clang: "'x/y.h' file not found"; gcc: "x/y.h: No such file or directory"
_HEADER = re.compile(r"^'(?P<clang>[^']+)' file not found|^(?P<gcc>[^\s:']+): No such file or "
                     r"directory$")
_LINK = re.compile(r"cannot find -l(?P<name>[\w.+-]+)")
_PACKAGE = re.compile(r'Could not find a package configuration file provided by "(?P<name>[^"]+)"'
                      r'|By not providing "Find(?P<module>[^"]+)\.cmake"')
_PROJECT_SEARCH = re.compile(r"\bCould (?:not|NOT) find (?:the )?(?:package )?\"?"
                             r"(?P<name>[A-Za-z][\w+-]*(?:\.[\w+-]+)*)")
# what "Could not find ..." names that is no library ("a package configuration file", "compiler")
_NOT_NAMES = frozenset({"a", "an", "any", "compiler", "file", "files", "program", "include",
                        "library", "module", "toolchain", "source", "directory", "suitable"})


@dataclass
class MissingLibrary:
    library: str  # the AMD name (hipblas, rccl), else the name the build asked for
    asked_as: set[str] = field(default_factory=set)  # names the build used (NCCL, hipblas)
    evidence: list[str] = field(default_factory=list)  # what showed it, each once
    targets: list[str] = field(default_factory=list)  # the units that need it
    installed: bool | None = None  # does the installed HIP have it (None: no ROCm library
    # rocmigrate knows, not looked up)
    note: str = ""  # the AMD library's note (no drop-in counterpart...)

    def as_dict(self) -> dict:
        return {"library": self.library, "asked_as": sorted(self.asked_as),
                "evidence": self.evidence, "targets": self.targets,
                "installed": self.installed, "note": self.note}


class MissingLibraries:
    """Collects the missing libraries of every unit built; ``tables``: the API tables (their
    header rows), loaded when a header error first needs them."""

    def __init__(self, rocm: Path | None, tables=None) -> None:
        self.rocm = rocm
        self.tables = tables
        self.found: dict[str, MissingLibrary] = {}

    def add(self, target: str, errors: list[BuildError]) -> None:
        for error in errors:
            named = self._named(error)
            if named is None:
                continue
            asked, library, evidence = named
            name = library.link or library.package if library else asked
            entry = self.found.setdefault(name, MissingLibrary(name))
            entry.asked_as.add(asked)
            if library is not None and not library.mapped:
                entry.note = library.note
            if evidence not in entry.evidence:
                entry.evidence.append(evidence)
            if target not in entry.targets:
                entry.targets.append(target)
            if entry.installed is None and self.rocm is not None and library is not None:
                entry.installed = self._installed(name, library)
            if library is not None and error.explanation is None:
                error.explanation = f"{name} is a ROCm library" + {
                    True: " the installed HIP has; the build did not find it",
                    False: " the installed HIP does not have", None: ""}[entry.installed] + (
                    f" ({library.note})" if entry.note else "")

    def result(self) -> list[dict]:
        return [entry.as_dict() for _, entry in sorted(self.found.items())]

    def merge(self, entries: list[dict]) -> None:
        """Add what another collector found (its ``result()``, from a build elsewhere: a Slurm
        job's), as if its units had been added here after those added so far."""
        for item in entries:
            entry = self.found.setdefault(item["library"], MissingLibrary(item["library"]))
            entry.asked_as.update(item["asked_as"])
            entry.evidence += [text for text in item["evidence"] if text not in entry.evidence]
            entry.targets += [target for target in item["targets"]
                              if target not in entry.targets]
            if entry.installed is None:
                entry.installed = item["installed"]
            entry.note = item["note"] or entry.note

    def _named(self, error: BuildError) -> tuple[str, Library | None, str] | None:
        message = error.message
        header = _HEADER.search(message) if error.kind == "compiler" else None
        if header:
            name = header.group("clang") or header.group("gcc")
            library = self._library_of_header(name)
            return (name, library, f"header <{name}> not found") if library else None
        link = _LINK.search(message) if error.kind == "linker" else None
        if link:
            name = link.group("name")
            return name, _by_amd_name(name), f"ld: cannot find -l{name}"
        if error.kind != "cmake":
            return None
        package = _PACKAGE.search(message)
        if package:
            name = package.group("name") or package.group("module")
            return name, _by_amd_name(name), f"CMake: no package {name} (find_package)"
        search = _PROJECT_SEARCH.search(message)
        if search and search.group("name").lower() not in _NOT_NAMES:
            name = search.group("name")
            return name, _by_amd_name(name), f"CMake: Could not find {name}"
        return None

    def _library_of_header(self, header: str) -> Library | None:
        """The library a header belongs to: a header row with that HIP (or CUDA) header, else
        one whose HIP header lies in the same library folder (``hipblas/...``)."""
        if self.tables is None:
            from .. import apitables

            self.tables = apitables.load()
        rows = list(self.tables.headers.values())
        exact = next((row for row in rows if header in (row.hip_header, row.cuda_header)), None)
        if exact is None and "/" in header:
            folder = header.split("/", 1)[0] + "/"
            exact = next((row for row in rows if row.hip_header.startswith(folder)), None)
        if exact is not None:
            library = library_named(exact.library, roc=False)
        elif "/" in header:  # a library that keeps its folder (thrust/, cub/, nvtx3/)
            library = library_named(header.split("/", 1)[0], roc=False)
        else:
            library = None
        if library is None or library.link == "amdhip64":
            return None  # not a library's header, or HIP's own
        return library

    def _installed(self, name: str, library: Library) -> bool:
        """Is what a build uses of it under the ROCm root: a header folder, a library to link
        (``libNAME.so``, not only a runtime's ``libNAME.so.1``; ``libNAME.a``) or a CMake
        package?"""
        names = {name, *filter(None, (library.link, library.package))}
        root = self.rocm
        for each in names:
            patterns = [f"include/{each}", f"include/{each.lower()}"]
            for lib in ("lib", "lib64", "lib/*"):
                patterns += [f"{lib}/lib{each}.so", f"{lib}/lib{each}.a",
                             f"{lib}/cmake/{each}", f"{lib}/cmake/{each.lower()}"]
            if any(next(root.glob(pattern), None) is not None for pattern in patterns):
                return True
        return False


def _by_amd_name(name: str) -> Library | None:
    """The libraries.tsv row a build's name stands for: the AMD link or package name (hipblas),
    else a CUDA library's name (NCCL, cublas) whose counterpart it is."""
    lowered = name.lower()
    for library in libraries(roc=False):
        if lowered in (library.link.lower(), library.package.lower()):
            return library
    return library_named(lowered, roc=False)
