"""What build-file rules read (one file in one round) and how they mark what needs a person."""

from __future__ import annotations

import bisect
import functools

from ..apitables import ApiTables
from ..diagnostics import Edit, Fix
from ..rule import Marker
from ..settings import Settings
from ..source import Source
from . import cmake, make


class BuildContext:
    """One build file as rules see it: its bytes, its language (``cmake``, ``make`` or
    ``shell``) and the parsed view of that language, made on first use."""

    def __init__(self, source: Source, settings: Settings, tables: ApiTables,
                 language: str, related: tuple = ()) -> None:
        self.source = source
        self.data = source.data
        self.path = source.path
        self.settings = settings
        self.tables = tables
        self.language = language
        self.cache: dict = {}  # per-file derived data rules may share
        # the make files it includes or that include it (Included: rel, data): a fragment's
        # variables are used by its includer's commands
        self.related = tuple(related) if language == "make" else ()

    @functools.cached_property
    def script(self) -> cmake.Script:
        """The CMake commands and comments (CMake files)."""
        return cmake.read(self.data)

    @functools.cached_property
    def lines(self) -> list[make.Line]:
        """The logical lines (Makefiles and shell scripts), classified."""
        if self.language == "shell":
            return make.read_script(self.data)
        return make.read_makefile(self.data)

    def words(self, start: int, end: int) -> list[make.Word]:
        """The shell-like words of ``data[start:end]`` (a command, a value)."""
        return make.words(self.data, start, end)

    @functools.cached_property
    def comments(self) -> "CommentSpans":
        """Where the comments are (what suppression comments are read from)."""
        if self.language == "cmake":
            return CommentSpans(self.script.comments)
        spans = []
        for line in self.lines:
            if line.kind == "comment":
                spans.append((line.start, line.end))
            elif line.kind in ("assignment", "directive", "rule") and line.value_end < line.end:
                hash_at = self.data.find(b"#", line.value_end, line.end)
                if hash_at >= 0:
                    spans.append((hash_at, line.end))
        return CommentSpans(tuple(spans))

    def logical_line_start(self, offset: int) -> int:
        """Where the logical line holding ``offset`` starts: a CMake command's first line, a
        Makefile line before its backslash-newline continuations."""
        if self.language == "cmake":
            commands = self.script.commands
            index = bisect.bisect_right(self.script.starts, offset) - 1
            if index >= 0 and offset < commands[index].end:
                return self.source.line_start(commands[index].start)
            return self.source.line_start(offset)
        starts = [line.start for line in self.lines]
        index = bisect.bisect_right(starts, offset) - 1
        return starts[index] if index >= 0 else 0


class CommentSpans:
    """Comment spans, answering as migrator.parsing.tokens.LiteralSpans does for the readers
    of suppression comments."""

    def __init__(self, spans: tuple[tuple[int, int], ...]) -> None:
        self.spans = sorted(spans)
        self.starts = [start for start, _ in self.spans]

    def covering(self, offset: int) -> str | None:
        index = bisect.bisect_right(self.starts, offset) - 1
        if index >= 0 and offset < self.spans[index][1]:
            return "comment"
        return None


def line_indent(data: bytes, offset: int) -> bytes:
    """The spaces and tabs that start the line holding ``offset``."""
    start = data.rfind(b"\n", 0, offset) + 1
    end = start
    while end < len(data) and data[end] in b" \t":
        end += 1
    return data[start:end]


def render_marker(marker: Marker) -> bytes:
    return f"# rocmigrate {marker.code}: {marker.text}".encode()


def marker_fix(ctx: BuildContext, offset: int, marker: Marker) -> Fix | None:
    """A fix writing ``marker`` as a ``# rocmigrate CODE: ...`` comment line above the logical
    line holding ``offset`` (a CMake command's first line keeps its indent; in a Makefile the
    comment starts the line, which make ignores even among recipe lines). None when that
    marker is already there, or when markers are off."""
    if not ctx.settings.write_markers:
        return None
    data = ctx.data
    source = ctx.source
    at = ctx.logical_line_start(offset)
    text = render_marker(marker)
    scan = at
    while scan > 0:  # the run of marker lines above
        above_start = source.line_start(scan - 1)
        above = data[above_start:scan].strip()
        if above == text:
            return None
        if not above.startswith(b"# rocmigrate "):
            break
        scan = above_start
    indent = line_indent(data, at) if ctx.language == "cmake" else b""
    return Fix(f"mark {marker.code}", (Edit(at, at, indent + text + source.newline),),
               marker=True)
