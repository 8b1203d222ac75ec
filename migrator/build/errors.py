"""The errors of a build log, and what explains them.

``parse_errors`` reads compiler (clang/hipcc: ``file:line:col: error: ...``, with the translation
unit from the ``In file included from`` chain above it), linker and CMake errors from a log.
``Explainer`` maps each to the CUDA file and line it came from and, where a rule explains it, to
the rule's code: a ``// rocmigrate CODE:`` marker on the failing line or in the comment lines
just above it, or an API the installed ROCm lacks (the API tables' ``hip_added`` and lowerings:
the tree was converted for a newer ROCm).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..toolchain.compilers import MISSING_NAME
from ..versions import format_version
from .tree import ConvertedTree, LineMap, read_lines

_DIAGNOSTIC = re.compile(r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):(?:(?P<column>\d+):)?\s*"
                         r"(?P<fatal>fatal )?error: (?P<message>.*)$")
# clang: one "In file included from F:N:" line per level, the outermost first; gcc: the
# innermost first, then "                 from F:N," lines, the outermost last
_INCLUDED_FROM = re.compile(r"^In file included from (?P<file>[^:]+):\d+[:,]$|^\s+from "
                            r"(?P<more>[^:]+):\d+[:,]$")
_DRIVER = re.compile(r"^(?P<tool>\S*(?:clang|hipcc|ld\.lld|ld|collect2|nvcc)\S*): "
                     r"(?:fatal )?error: (?P<message>.*)$")
# "main.o:main.hip:(.text+0x2a): undefined reference to `f'"; a section alone names no file:
# "(.text+0x17): undefined reference to `main'" (crt1.o's _start: the link has no main)
_UNDEFINED = re.compile(r"^(?:(?P<file>(?!\()[^\s:][^:]*?):)?(?:\([^)]*\):)? ?(?P<message>"
                        r"undefined reference to [`'](?P<symbol>[^'`]+)')")
# the linker's own lines ("/usr/bin/ld: cannot find -lomp"); not its "in function" context
# ("/usr/bin/ld: ./lib.a(x.o):(.section+0x8): undefined reference to `f'": where, then what)
_LINKER = re.compile(r"^(?:\S*/)?(?:ld|ld\.lld|ld\.gold|collect2)(?:-[\w.]+)?: "
                     r"(?:(?!error:)(?P<file>[^\s:][^:]*?):(?:\([^)]*\):)? ?)?"
                     r"(?P<message>(?:error: )?(?:cannot find|multiple definition|undefined "
                     r"(?:symbol|reference)).*)$")
# make's own errors; "*** [target] Error N" only repeats a command's failure
_MAKE = re.compile(r"^(?:g?make(?:\[\d+\])?|(?P<file>[^\s:]+):(?P<line>\d+)): \*\*\* "
                   r"(?P<message>(?!\[).*?)\.?(?:  Stop\.)?$")
# a recipe's program that is not installed: make runs it itself ("make: pgcc: No such file or
# directory") or through the shell ("/bin/sh: 1: pgcc: not found", bash's "command not found")
_NOT_INSTALLED = re.compile(r"^(?:g?make(?:\[\d+\])?|(?:/usr)?(?:/bin/)?(?:ba|da)?sh)(?:: \d+|: "
                            r"line \d+)?: (?P<tool>[^\s:*][^:]*): (?:No such file or directory|"
                            r"(?:command )?not found)$")
# make -w, and every recursive make: "make[1]: Entering directory '/b/src'" (and Leaving); in
# make -p's database the same lines start with "# " (build.goals reads those)
MAKE_DIRECTORY = re.compile(r"^(?:# )?g?make(?:\[(?P<level>\d+)\])?: (?P<way>Entering|Leaving) "
                            r"directory [`'](?P<folder>[^']+)'$")
_CMAKE = re.compile(r"^CMake Error(?: at (?P<file>[^:()]+):(?P<line>\d+))?.*:$")
_NOT_CAUSES = ("linker command failed", "ld returned", "errors generated",
               "too many errors emitted")
_MARKER = re.compile(r"//\s*rocmigrate ([A-Z]{3}\d{3}):\s*(.*)$")
# the names an error says are missing
_MISSING = MISSING_NAME
_MISSING_HEADER = re.compile(r"'([^']+)' file not found")
_NO_MAIN = re.compile(r"undefined reference to [`']main'")
_INVALID_TARGET = re.compile(r"invalid target ID '([^']+)'")


@dataclass
class BuildError:
    message: str
    kind: str  # compiler | linker | driver | make | cmake
    file: str | None = None  # as the build printed it
    line: int | None = None
    column: int | None = None
    unit: str | None = None  # the translation unit being compiled (outermost includer)
    output_file: str | None = None  # the file in the converted tree (relative)
    source_file: str | None = None  # the CUDA file it was converted from (relative)
    source_line: int | None = None
    line_exact: bool | None = None  # the output line is unchanged from the source line
    code: str | None = None  # the rule that explains it
    explanation: str | None = None
    directory: str | None = None  # the folder make said it was in (a recursive make's)


def parse_errors(log: str) -> list[BuildError]:
    """Every error of a build log, in order, duplicates (the same place and message) once."""
    found: list[BuildError] = []
    seen: set[tuple] = set()
    includer: str | None = None
    folders: list[str] = []  # make's "Entering directory" stack
    lines = log.splitlines()
    for index, line in enumerate(lines):
        line = line.rstrip()
        moved = MAKE_DIRECTORY.match(line)
        if moved:
            if moved.group("way") == "Entering":
                folders.append(moved.group("folder"))
            elif folders:
                folders.pop()
            continue
        included = _INCLUDED_FROM.match(line)
        if included:
            includer = included.group("more") or includer or included.group("file")
            continue
        error = _parse_line(line, lines, index)
        if error is None:
            if not line.startswith(" ") and ": note: " not in line and ": warning: " not in line:
                includer = None  # the chain belongs to the next diagnostic only
            continue
        if error.kind == "compiler":
            error.unit = includer or error.file
        error.directory = folders[-1] if folders else None
        includer = None
        key = (error.file, error.line, error.column, error.message)
        if key not in seen and not any(text in error.message for text in _NOT_CAUSES):
            seen.add(key)
            found.append(error)
    return found


def _parse_line(line: str, lines: list[str], index: int) -> BuildError | None:
    match = _DIAGNOSTIC.match(line)
    if match:
        column = match.group("column")
        return BuildError(match.group("message").strip(), "compiler", match.group("file"),
                          int(match.group("line")), int(column) if column else None)
    match = _UNDEFINED.match(line)
    if match:
        return BuildError(match.group("message").strip(), "linker", match.group("file"))
    match = _LINKER.match(line)
    if match:
        message = match.group("message")
        return BuildError(message[len("error: "):] if message.startswith("error: ") else message,
                          "linker", match.group("file"))
    match = _NOT_INSTALLED.match(line)
    if match:
        return BuildError(f"{match.group('tool')}: command not found (a recipe runs a program "
                          "that is not installed)", "make")
    match = _MAKE.match(line)
    if match:
        return BuildError(match.group("message").strip(), "make", match.group("file"),
                          int(match.group("line")) if match.group("line") else None)
    match = _DRIVER.match(line)
    if match:
        kind = "linker" if re.search(r"ld|collect2", Path(match.group("tool")).name) else "driver"
        return BuildError(match.group("message").strip(), kind)
    match = _CMAKE.match(line)
    if match:
        message = []
        for following in lines[index + 1:index + 12]:
            if following and not following.startswith(" "):
                break
            if following.strip():
                message.append(following.strip())
        return BuildError(" ".join(message) or line, "cmake", match.group("file"),
                          int(match.group("line")) if match.group("line") else None)
    return None


class Explainer:
    """Maps errors to the CUDA tree and to the rules that explain them.

    ``roots``: the folders the build's paths may start with (the converted tree, its copy in the
    build folder), each standing for the converted tree. ``source_root``: the CUDA tree (None:
    lines are not mapped). ``installed``: the ROCm release of the compiler (None: unknown)."""

    def __init__(self, tree: ConvertedTree, roots: list[Path], source_root: Path | None,
                 installed: tuple[int, int, int] | None, tables=None) -> None:
        self.tree = tree
        self.roots = [root.resolve() for root in roots]
        self.source_root = source_root.resolve() if source_root else None
        self.installed = installed
        self.tables = tables
        self._maps: dict[str, LineMap | None] = {}
        self._outputs: dict[str, list[str] | None] = {}
        self._by_hip: dict | None = None

    def relative(self, printed: str | None, cwd: Path | None = None) -> str | None:
        """A path the build printed, relative to the converted tree, or None outside it."""
        if not printed:
            return None
        path = Path(printed)
        if not path.is_absolute() and cwd is not None:
            path = cwd / path
        for candidate in (Path(os.path.normpath(path)), path.resolve()):
            for root in self.roots:
                try:
                    return candidate.relative_to(root).as_posix()
                except ValueError:
                    continue
        return None

    def explain(self, error: BuildError, cwd: Path | None = None) -> BuildError:
        if error.directory:  # relative paths are a recursive make's
            cwd = Path(error.directory)
        error.output_file = self.relative(error.file, cwd)
        unit = self.relative(error.unit, cwd)
        if unit is not None:
            error.unit = unit
        if error.output_file is not None:
            error.source_file = self.tree.source_of(error.output_file)
            if error.source_file is not None and error.line is not None:
                mapped = self._line_map(error.output_file, error.source_file)
                if mapped is not None:
                    error.source_line, error.line_exact = mapped.source_line(error.line) or \
                        (None, None)
            if error.line is not None:
                self._by_marker(error)
        if error.code is None:
            self._by_missing_api(error)
        if error.kind == "linker" and _NO_MAIN.search(error.message):
            error.explanation = ("no object of this link defines main(): the command links a "
                                 "program where it should compile (-c) or write a code object "
                                 "(hipcc --genco: a CUDA -fatbin/-cubin step, MKF005)")
        target = _INVALID_TARGET.search(error.message)
        if target and self.installed is not None:
            error.explanation = (f"{target.group(1)} is not a target of the installed HIP's "
                                 f"compiler (ROCm {format_version(self.installed)}): build for "
                                 "one it knows (rocmigrate build --offload-arch; convert "
                                 "--offload-arch for the converted build files)")
        return error

    def _output_lines(self, rel: str) -> list[str] | None:
        if rel not in self._outputs:
            self._outputs[rel] = read_lines(self.tree.root / rel)
        return self._outputs[rel]

    def _line_map(self, output_rel: str, source_rel: str) -> LineMap | None:
        if output_rel not in self._maps:
            output = self._output_lines(output_rel)
            source = read_lines(self.source_root / source_rel) if self.source_root else None
            self._maps[output_rel] = LineMap(source, output) if output is not None and \
                source is not None else None
        return self._maps[output_rel]

    def _by_marker(self, error: BuildError) -> None:
        """A marker on the failing line, or in the comment lines right above it."""
        lines = self._output_lines(error.output_file) or []
        index = error.line - 1
        if not 0 <= index < len(lines):
            return
        candidates = [lines[index]]
        above = index - 1
        while above >= 0 and lines[above].lstrip().startswith("//"):
            candidates.append(lines[above])
            above -= 1
        for text in candidates:
            marker = _MARKER.search(text)
            if marker:
                error.code, error.explanation = marker.group(1), (
                    f"marked by rocmigrate: {marker.group(2).strip()}")
                return

    def _by_missing_api(self, error: BuildError) -> None:
        """An API or header the installed ROCm lacks, that the API tables date."""
        if self.installed is None:
            return
        tables = self.tables
        if tables is None:
            from .. import apitables

            tables = self.tables = apitables.load()
        have = format_version(self.installed)
        header = _MISSING_HEADER.search(error.message)
        if header:
            name = header.group(1)
            for entry in tables.headers.values():
                added = entry.hip_added
                if entry.hip_header == name and added and added > self.installed:
                    error.code = "HDR001"
                    error.explanation = (
                        f"<{name}> exists from ROCm {format_version(entry.hip_added)}; the "
                        f"installed HIP is ROCm {have}: convert for it (--rocm auto or --rocm "
                        f"{have}) and HDR001 maps <{entry.cuda_header}> to what {have} has")
                    return
            return
        for pattern in _MISSING:
            found = pattern.search(error.message)
            if not found:
                continue
            name = found.group(1).split("<")[0].split("::")[-1].strip()
            lowering = tables.lowerings.get(name)
            if lowering is not None and lowering.below and lowering.below > self.installed:
                error.code = lowering.rule
                error.explanation = (
                    f"{name} exists in HIP from ROCm {format_version(lowering.below)}; the "
                    f"installed HIP is ROCm {have}: convert for it (--rocm auto or --rocm "
                    f"{have}) and {lowering.rule} lowers it ({lowering.replacement})")
                return
            entry = self._hip_names().get(name)
            if entry is not None and entry.hip_added and entry.hip_added > self.installed:
                error.code = "API002"
                error.explanation = (
                    f"{name} exists in HIP from ROCm {format_version(entry.hip_added)}; the "
                    f"installed HIP is ROCm {have}: convert for it (--rocm auto or --rocm "
                    f"{have}) and API002 marks the call for a rewrite")
                return
            return

    def _hip_names(self) -> dict:
        """The API tables' entries by HIP name: of the CUDA names mapped to one, the entry with
        the earliest ``hip_added`` (when the HIP name first existed)."""
        if self._by_hip is None:
            self._by_hip = {}
            for entry in self.tables.names.values():
                if entry.hip and entry.status == "supported":
                    known = self._by_hip.get(entry.hip)
                    if known is None or (entry.hip_added or (0, 0, 0)) < (known.hip_added
                                                                          or (0, 0, 0)):
                        self._by_hip[entry.hip] = entry
        return self._by_hip
