"""Edits, fixes and diagnostics: everything in byte offsets of the buffer a rule looked at."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import NamedTuple


class Applicability(enum.Enum):
    """How far a fix may be trusted: safe fixes apply by default, unsafe ones on request."""

    SAFE = "safe"
    UNSAFE = "unsafe"


@dataclass(frozen=True, order=True, slots=True)  # slots: rules make one per finding
class Edit:
    """Replace bytes [start, end) with ``text``; an insertion has start == end."""

    start: int
    end: int
    text: bytes = b""

    # __init__ written out here and below (the dataclass keeps a class's own): a frozen
    # dataclass's looks up object.__setattr__ for each field, which makes one a fifth slower,
    # and rules make one of each per finding
    def __init__(self, start: int, end: int, text: bytes = b"", _set=object.__setattr__) -> None:
        if not 0 <= start <= end:
            raise ValueError(f"bad edit range {start}..{end}")
        _set(self, "start", start)
        _set(self, "end", end)
        _set(self, "text", text)


@dataclass(frozen=True, slots=True)
class Fix:
    """Edits applied all together or not at all, plus the headers (and macros) they need."""

    title: str
    edits: tuple[Edit, ...]
    applicability: Applicability = Applicability.SAFE
    includes: tuple[str, ...] = ()
    # macros the edits need defined before the file's headers: the engine writes ``#define NAME``
    # once, before the first #include (a file that defines NAME already gets none)
    defines: tuple[str, ...] = ()
    # The rule vouches that these edits cannot change how the file parses (an argument appended
    # to a parenthesised list, an attribute added to a declaration): the engine then needs no
    # parse to guard the output, as for identifier renames. tests/test_engine.py checks it.
    keeps_syntax: bool = False
    # the edits only write a marker comment for a person (``// rocmigrate CODE: ...``): the
    # finding is reported as needing attention, whatever its rule does otherwise
    marker: bool = False
    # where the edits begin and end (-1 for an include request alone, which the engine takes
    # first): set once when made, since the engine orders every fix by them in every round
    start: int = field(init=False, repr=False, compare=False)
    end: int = field(init=False, repr=False, compare=False)

    def __init__(self, title: str, edits: tuple[Edit, ...],
                 applicability: Applicability = Applicability.SAFE, includes: tuple[str, ...] = (),
                 keeps_syntax: bool = False, marker: bool = False,
                 defines: tuple[str, ...] = (), _set=object.__setattr__) -> None:
        if len(edits) == 1:
            start, end = edits[0].start, edits[0].end
        elif edits:
            start, end = min(e.start for e in edits), max(e.end for e in edits)
        else:
            start = end = -1
        _set(self, "title", title)
        _set(self, "edits", edits)
        _set(self, "applicability", applicability)
        _set(self, "includes", includes)
        _set(self, "defines", defines)
        _set(self, "keeps_syntax", keeps_syntax)
        _set(self, "marker", marker)
        _set(self, "start", start)
        _set(self, "end", end)


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One finding: a rule code, a message, a byte span and an optional fix.

    ``library`` and ``symbol`` let reports count what was converted per library and list
    unsupported APIs by name.
    """

    code: str
    message: str
    start: int
    end: int
    fix: Fix | None = None
    library: str = ""
    symbol: str = ""
    severity: str = "warning"  # "info" for plain conversions, "warning", "error"

    def __init__(self, code: str, message: str, start: int, end: int, fix: Fix | None = None,
                 library: str = "", symbol: str = "", severity: str = "warning",
                 _set=object.__setattr__) -> None:
        _set(self, "code", code)
        _set(self, "message", message)
        _set(self, "start", start)
        _set(self, "end", end)
        _set(self, "fix", fix)
        _set(self, "library", library)
        _set(self, "symbol", symbol)
        _set(self, "severity", severity)


@dataclass
class Finding:
    """A diagnostic placed in a file with a line/column, ready for renderers."""

    path: str
    line: int
    column: int
    code: str
    message: str
    severity: str
    library: str
    symbol: str
    fixed: bool
    fix_title: str = ""  # empty when the finding has no fix
    fix_applicability: str = ""  # safe / unsafe
    # where the summary lists it (Rule.kind_of): conversion (a reference ported), optimization
    # (an AMD rewrite), attention (a person must act: a name HIP lacks, a marker), check
    kind: str = "check"

    def as_dict(self) -> dict:
        return {
            "fix": {"title": self.fix_title, "applicability": self.fix_applicability}
            if self.fix_title else None,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "code": self.code,
            "message": self.message,
            "severity": self.severity,
            "library": self.library,
            "symbol": self.symbol,
            "fixed": self.fixed,
        }


class Renames:
    """Identifier renames a rule reports in bulk, as columns: the name at [starts[i], ends[i])
    becomes ``records[i].text``, each one finding of ``code`` (severity info) with a safe fix
    that keeps the syntax. Starts are sorted and no two renames touch. A file has hundreds of
    them, and the engine takes them as chosen without a Diagnostic, Fix and Edit each;
    ``diagnostics`` makes those objects where it needs them."""

    __slots__ = ("code", "starts", "ends", "records")

    def __init__(self, code: str) -> None:
        self.code = code
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.records: list[RenameRecord] = []  # one shared by every rename of one name

    def __len__(self) -> int:
        return len(self.starts)

    def diagnostics(self, indexes=None) -> list[Diagnostic]:
        """The diagnostics these renames stand for (those at ``indexes``, else all), as the
        rule would make them one by one."""
        if indexes is None:
            indexes = range(len(self.starts))
        safe = Applicability.SAFE
        found = []
        for index in indexes:
            start, end = self.starts[index], self.ends[index]
            message, title, text, library, symbol = self.records[index]
            found.append(Diagnostic(self.code, message, start, end,
                                    Fix(title, (Edit(start, end, text),), safe, (), True),
                                    library, symbol, "info"))
        return found

    def edits(self) -> list[Edit]:
        return list(map(Edit, self.starts, self.ends, [record.text for record in self.records]))

    def without(self, indexes: set[int]) -> None:
        """Leave out the renames at ``indexes``."""
        kept = [index for index in range(len(self.starts)) if index not in indexes]
        self.starts = [self.starts[index] for index in kept]
        self.ends = [self.ends[index] for index in kept]
        self.records = [self.records[index] for index in kept]


class RenameRecord(NamedTuple):
    """What every rename of one name reports: the finding's message, the fix's title, the new
    name, the library and the symbol (the old name)."""

    message: str
    title: str
    text: bytes
    library: str
    symbol: str
