"""The fix loop: parse, run rules, drop suppressed findings, apply non-overlapping fixes in one
forward pass, insert requested includes once, re-parse, repeat until nothing applies.

Two guards keep bad output from being written: if the fixed text parses worse than the input did,
or if the loop does not settle within ``MAX_ROUNDS``, the file fails and nothing is written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .apitables import ApiTables
from .diagnostics import Applicability, Diagnostic, Finding, Fix
from .parsing import treesitter
from .rule import Rule, RuleContext
from .settings import Settings
from .source import Source
from .suppression import parse_suppressions

MAX_ROUNDS = 20


class EngineError(Exception):
    """The file could not be fixed safely; nothing must be written for it."""


@dataclass
class EngineResult:
    output: bytes
    findings: list[Finding] = field(default_factory=list)
    rounds: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.findings) and any(f.fixed for f in self.findings)


def _applicable(fix: Fix | None, unsafe: bool) -> bool:
    if fix is None:
        return False
    if fix.applicability is Applicability.SAFE:
        return True
    return unsafe and fix.applicability is Applicability.UNSAFE


def choose_fixes(diagnostics: list[Diagnostic], unsafe: bool) -> list[Diagnostic]:
    """Fixes to apply this round: sorted by position; one that overlaps or touches an accepted
    fix waits for the next round (where it is recomputed on the new text)."""
    with_fix = [d for d in diagnostics if _applicable(d.fix, unsafe)]
    with_fix.sort(key=lambda d: (d.fix.start, d.fix.end) if d.fix.edits else (-1, -1))
    chosen: list[Diagnostic] = []
    last_end = -1
    for diag in with_fix:
        if not diag.fix.edits:  # include request only
            chosen.append(diag)
            continue
        edits = sorted(diag.fix.edits)
        if any(a.end > b.start or (a.end == b.start and a.start == a.end == b.start)
               for a, b in zip(edits, edits[1:])):
            continue  # a malformed fix (its own edits overlap) is never applied
        if diag.fix.start <= last_end:
            continue
        chosen.append(diag)
        last_end = diag.fix.end
    return chosen


def apply_edits(data: bytes, diagnostics: list[Diagnostic]) -> bytes:
    edits = sorted(edit for diag in diagnostics for edit in diag.fix.edits)
    parts = []
    pos = 0
    for edit in edits:
        parts.append(data[pos : edit.start])
        parts.append(edit.text)
        pos = edit.end
    parts.append(data[pos:])
    return b"".join(parts)


_INCLUDE_LINE = re.compile(rb"^[ \t]*#[ \t]*include\b", re.MULTILINE)
_DIRECTIVE_LINE = re.compile(rb"^[ \t]*#[ \t]*(\w+)[ \t]*(\w*)", re.MULTILINE)


def has_include(data: bytes, header: str) -> bool:
    pattern = rb'^[ \t]*#[ \t]*include[ \t]*[<"]' + re.escape(header.encode()) + rb'[>"]'
    return re.search(pattern, data, re.MULTILINE) is not None


def include_insertion_point(data: bytes) -> int:
    """Where the engine inserts an #include: before the first unconditional #include, else after
    a header guard / #pragma once, else at the top (after a leading comment block)."""
    directives = [(m.start(), m.group(1), m.group(2)) for m in _DIRECTIVE_LINE.finditer(data)]
    baseline = 0
    guard_end = 0
    if (len(directives) > 1 and directives[0][1] == b"ifndef" and directives[1][1] == b"define"
            and _only_comments(data[: directives[0][0]])):
        baseline = 1
        guard_end = _line_end(data, directives[1][0])
    depth = 0
    for start, directive, argument in directives:
        if directive in (b"if", b"ifdef", b"ifndef"):
            depth += 1
        elif directive == b"endif":
            depth -= 1
        elif directive == b"pragma" and argument == b"once":
            guard_end = max(guard_end, _line_end(data, start))
        elif directive == b"include" and depth == baseline:
            return start
    return guard_end or _after_leading_comments(data)


def _line_end(data: bytes, offset: int) -> int:
    end = data.find(b"\n", offset)
    return len(data) if end == -1 else end + 1


def _only_comments(text: bytes) -> bool:
    return not re.sub(rb"/\*[\s\S]*?\*/|//[^\n]*", b"", text).strip()


def _after_leading_comments(data: bytes) -> int:
    match = re.match(rb"(?:[ \t\r\n]*(?:/\*[\s\S]*?\*/|//[^\n]*))*[ \t]*\r?\n?", data)
    return match.end() if match else 0


def insert_includes(data: bytes, headers: list[str], newline: bytes) -> bytes:
    missing = [h for h in dict.fromkeys(headers) if not has_include(data, h)]
    if not missing:
        return data
    at = include_insertion_point(data)
    block = b"".join(b"#include <" + h.encode() + b">" + newline for h in missing)
    if at > 0 and data[at - 1 : at] != b"\n":
        block = newline + block
    return data[:at] + block + data[at:]


def _run_rules(rules: list[Rule], ctx: RuleContext) -> list[Diagnostic]:
    diagnostics: list[Diagnostic] = []
    for rule in rules:
        diagnostics.extend(rule.check(ctx))
    return diagnostics


def _enabled(diagnostics: list[Diagnostic], settings: Settings) -> list[Diagnostic]:
    from .registry import code_enabled

    if not settings.select and not settings.ignore:
        return diagnostics
    return [d for d in diagnostics if code_enabled(d.code, settings.select, settings.ignore)]


def fix_source(
    source: Source, rules: list[Rule], settings: Settings, tables: ApiTables,
    apply_fixes: bool = True, tree=None,
) -> EngineResult:
    """Run the rules over one file until nothing changes; returns the output and findings.

    Findings are placed in the input file's coordinates for the first round; fixes made in later
    rounds (rare: a fix that had to wait) are reported at their position in that round's text.
    """
    data = source.data
    tree = tree if tree is not None else treesitter.parse(data)
    errors_before = treesitter.error_count(tree)
    findings: list[Finding] = []
    reported: set[tuple[str, str]] = set()
    current = source
    applied_rules: set[str] = set()
    for round_index in range(MAX_ROUNDS):
        ctx = RuleContext(current, settings, tables, tree)
        diagnostics = _enabled(_run_rules(rules, ctx), settings)
        suppressions = parse_suppressions(current, ctx.literals)
        diagnostics = suppressions.filter(current, diagnostics)
        chosen = choose_fixes(diagnostics, settings.unsafe_fixes) if apply_fixes else []
        chosen_ids = {id(d) for d in chosen}
        for diag in diagnostics:
            fixed = id(diag) in chosen_ids
            # unfixed findings repeat every round: report them from the first round only
            if not fixed and round_index > 0 and (diag.code, diag.symbol) in reported:
                continue
            reported.add((diag.code, diag.symbol))
            line, column = current.position(diag.start)
            findings.append(Finding(source.path, line, column, diag.code, diag.message,
                                    diag.severity, diag.library, diag.symbol, fixed))
        if not chosen:
            if apply_fixes and errors_before == 0 and treesitter.error_count(tree) > 0:
                raise EngineError(
                    "the fixed output no longer parses (rules involved: "
                    + ", ".join(sorted(applied_rules)) + "); nothing was written")
            return EngineResult(current.data, findings, round_index)
        applied_rules.update(d.code for d in chosen)
        new_data = apply_edits(current.data, [d for d in chosen if d.fix.edits])
        includes = [h for d in chosen for h in d.fix.includes]
        if includes:
            new_data = insert_includes(new_data, includes, current.newline)
        if new_data == current.data:
            return EngineResult(current.data, findings, round_index)
        current = Source(source.path, new_data)
        tree = treesitter.parse(new_data)
    raise EngineError(f"fixes did not converge after {MAX_ROUNDS} rounds "
                      f"(rules involved: {', '.join(sorted(applied_rules))}); nothing was written")
