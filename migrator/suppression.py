"""Suppression comments.

- ``// rocmigrate: ignore[CODE1,CODE2]`` on a line, or alone on the line above, silences those
  codes (or prefixes) on that line; ``// rocmigrate: ignore`` silences every code there.
- ``// rocmigrate: off`` ... ``// rocmigrate: on`` silences a region.
- ``// rocmigrate: ignore-file[CODES]`` anywhere silences the codes in the whole file.
Only real comments count (a directive inside a string literal is not one).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from .diagnostics import Diagnostic
from .parsing.tokens import LiteralSpans
from .source import Source

_DIRECTIVE = re.compile(rb"rocmigrate:\s*(ignore-file|ignore|off|on)\b(?:\[([A-Za-z0-9_,\s]*)\])?")


@dataclass
class Suppression:
    kind: str
    codes: tuple[str, ...]  # empty = all
    line: int  # 1-based line of the comment
    start: int = 0  # byte range of the directive text
    end: int = 0
    applies_to: tuple[int, ...] = ()
    used: bool = False

    def covers(self, code: str) -> bool:
        return not self.codes or any(code.startswith(c) for c in self.codes)


@dataclass
class Suppressions:
    by_line: dict[int, list[Suppression]] = field(default_factory=dict)
    file_level: list[Suppression] = field(default_factory=list)
    regions: list[tuple[int, int]] = field(default_factory=list)  # [start_line, end_line]
    all: list[Suppression] = field(default_factory=list)

    def suppresses(self, code: str, line: int) -> bool:
        for region_start, region_end in self.regions:
            if region_start <= line <= region_end:
                return True
        for sup in self.file_level:
            if sup.covers(code):
                sup.used = True
                return True
        for sup in self.by_line.get(line, ()):
            if sup.covers(code):
                sup.used = True
                return True
        return False

    def filter(self, source: Source, diagnostics: list[Diagnostic]) -> list[Diagnostic]:
        if not self.all:
            return diagnostics
        starts = source.line_starts
        kept = []
        for diag in diagnostics:
            line = bisect.bisect_right(starts, diag.start)
            if not self.suppresses(diag.code, line):
                kept.append(diag)
        return kept


def parse_suppressions(source: Source, literals: LiteralSpans) -> Suppressions:
    data = source.data
    result = Suppressions()
    if b"rocmigrate:" not in data:
        return result
    region_start: int | None = None
    for match in _DIRECTIVE.finditer(data):
        if literals.covering(match.start()) != "comment":
            continue
        kind = match.group(1).decode()
        codes = tuple(c.strip().decode() for c in (match.group(2) or b"").split(b",") if c.strip())
        line, _ = source.position(match.start())
        sup = Suppression(kind, codes, line, match.start(), match.end())
        result.all.append(sup)
        if kind == "ignore-file":
            result.file_level.append(sup)
        elif kind == "off":
            region_start = line if region_start is None else region_start
        elif kind == "on":
            if region_start is not None:
                result.regions.append((region_start, line))
                region_start = None
        else:
            line_start = source.line_start(match.start())
            before = data[line_start : match.start()]
            comment_only = (before.strip() in (b"//", b"/*", b"#")
                            or before.strip().endswith(b"//"))
            own_line = not re.sub(rb"/\*.*?\*/|//.*|^[ \t]*#", b"", before).strip()
            targets = (line, line + 1) if own_line and comment_only else (line,)
            sup.applies_to = targets
            for target in targets:
                result.by_line.setdefault(target, []).append(sup)
    if region_start is not None:
        result.regions.append((region_start, len(source.line_starts) + 1))
    return result


UNUSED_CODE = "RMG001"


def unused_suppressions(source: Source, literals: LiteralSpans, suppressions: Suppressions,
                        settings) -> list[Diagnostic]:
    """RMG001 for each ignore directive that silenced nothing, with a fix that removes it.

    Only directives whose codes all ran are judged (a suppression for a rule that was not
    selected may well be needed)."""
    from .diagnostics import Fix
    from .registry import code_enabled

    found = []
    for sup in suppressions.all:
        if sup.used or sup.kind not in ("ignore", "ignore-file"):
            continue
        if sup.codes and not all(code_enabled(c, settings.select, settings.ignore) for c in sup.codes):
            continue
        if not code_enabled(UNUSED_CODE, settings.select, settings.ignore):
            continue
        what = f"[{','.join(sup.codes)}]" if sup.codes else ""
        fix = Fix("remove the unused suppression", (_removal(source, literals, sup),))
        found.append(Diagnostic(UNUSED_CODE, f"unused suppression 'rocmigrate: {sup.kind}{what}'",
                                sup.start, sup.end, fix))
    return found


def _removal(source: Source, literals: LiteralSpans, sup: Suppression):
    """The edit that deletes a directive: the whole comment when it says nothing else, the whole
    line when the comment stood alone on it."""
    from .diagnostics import Edit

    data = source.data
    index = bisect.bisect_right(literals.starts, sup.start) - 1
    start, end = literals.starts[index], literals.ends[index]
    body = data[start:end]
    rest = body.replace(data[sup.start : sup.end], b"", 1)
    if rest.strip(b"/* \t") not in (b"",):
        return Edit(sup.start, sup.end, b"")
    line_start = source.line_start(start)
    line_end = data.find(b"\n", end)
    line_end = len(data) if line_end == -1 else line_end + 1
    if not data[line_start:start].strip() and not data[end:line_end].strip():
        return Edit(line_start, line_end, b"")
    while start > line_start and data[start - 1 : start] in (b" ", b"\t"):
        start -= 1
    return Edit(start, end, b"")
