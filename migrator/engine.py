"""The fix loop: parse, run rules, drop suppressed findings, apply non-overlapping fixes in one
forward pass, insert requested includes once, re-parse, repeat until nothing applies.

The loop stops early when every applicable fix was applied and none of them came from a rule
that declares ``chains`` (fixes that can create findings for other rules): re-running the
rules would find nothing.
Two guards keep bad output from being written: if the fixed text parses worse than the input did,
or if the loop does not settle within ``MAX_ROUNDS``, the file fails and nothing is written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .apitables import ApiTables
from .diagnostics import Applicability, Diagnostic, Edit, Finding, Fix
from .parsing import treesitter
from .rule import Rule, RuleContext
from .settings import Settings
from .source import Source
from .suppression import parse_suppressions, unused_suppressions

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
    """Apply the chosen fixes' edits in one forward pass over the original offsets."""
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


def include_edit(data: bytes, headers: list[str], newline: bytes) -> Edit | None:
    """The insertion that adds the requested headers the file does not include yet. A name in
    double quotes (``'"rocmigrate_atomics.h"'``, a support header) is included with quotes,
    others with angle brackets."""
    missing = [h for h in dict.fromkeys(headers) if not has_include(data, h.strip('"'))]
    if not missing:
        return None
    at = include_insertion_point(data)
    block = b"".join(b"#include " + (h.encode() if h.startswith('"') else b"<" + h.encode() + b">")
                     + newline for h in missing)
    if at > 0 and data[at - 1 : at] != b"\n":
        block = newline + block
    return Edit(at, at, block)


def insert_includes(data: bytes, headers: list[str], newline: bytes) -> bytes:
    edit = include_edit(data, headers, newline)
    return data if edit is None else data[: edit.start] + edit.text + data[edit.end :]


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
    errors_before = None if tree is None else treesitter.error_count(tree)
    findings: list[Finding] = []
    reported: set[tuple[str, str]] = set()
    current = source
    applied_rules: set[str] = set()
    optimizing = {code for rule in rules if rule.optimization for code in rule.codes()}
    chaining = {code for rule in rules if rule.chains for code in rule.codes()}
    for round_index in range(MAX_ROUNDS):
        ctx = RuleContext(current, settings, tables, tree)
        diagnostics = _enabled(_run_rules(rules, ctx), settings)
        tree = ctx.parsed_tree  # None while no rule needed the tree: parsing is lazy
        if errors_before is None and tree is not None:
            errors_before = treesitter.error_count(tree)
        suppressions = parse_suppressions(current, ctx.literals)
        diagnostics = suppressions.filter(current, diagnostics)
        if round_index == 0 and settings.report_unused_suppressions:
            diagnostics += unused_suppressions(current, ctx.literals, suppressions, settings)
        chosen = choose_fixes(diagnostics, settings.unsafe_fixes) if apply_fixes else []
        chosen_ids = {id(d) for d in chosen}
        for diag in diagnostics:
            fixed = id(diag) in chosen_ids
            if apply_fixes and not fixed and _applicable(diag.fix, settings.unsafe_fixes):
                continue  # deferred: recomputed, and reported, in a later round
            # unfixed findings repeat every round: report them from the first round only
            if not fixed and round_index > 0 and (diag.code, diag.symbol) in reported:
                continue
            reported.add((diag.code, diag.symbol))
            line, column = current.position(diag.start)
            fix = diag.fix
            findings.append(Finding(source.path, line, column, diag.code, diag.message,
                                    diag.severity, diag.library, diag.symbol, fixed,
                                    fix.title if fix else "",
                                    fix.applicability.value if fix else "",
                                    diag.code in optimizing))
        if not chosen:
            if round_index:
                _guard(errors_before, tree, applied_rules, apply_fixes)
            return EngineResult(current.data, findings, round_index)
        applied_rules.update(d.code for d in chosen)
        edits = sorted(e for d in chosen for e in d.fix.edits)
        new_data = apply_edits(current.data, chosen)
        includes = [h for d in chosen for h in d.fix.includes]
        extra = include_edit(new_data, includes, current.newline) if includes else None
        previous = current
        if new_data == current.data and extra is None:
            return EngineResult(current.data, findings, round_index)
        deferred = len(chosen) < sum(1 for d in diagnostics if _applicable(d.fix, settings.unsafe_fixes))
        settled = not deferred and not any(d.code in chaining for d in chosen)
        if settled and extra is None and all(
                d.fix.keeps_syntax or all(_neutral(e, previous, ctx.literals) for e in d.fix.edits)
                for d in chosen):
            # every fix applied, none creates work for another rule, and no edit can change
            # the parse: the output's tree has the input's shape, so no parse is needed
            return EngineResult(new_data, findings, round_index + 1)
        if tree is None:  # first round, no rule parsed: the guard needs the input's tree
            tree = treesitter.parse(previous.data)
            errors_before = treesitter.error_count(tree)
        # re-parse incrementally: the old tree learns the edits, unchanged subtrees are reused
        treesitter.edit_tree(tree, previous, edits)
        if extra is not None:
            middle = Source(source.path, new_data)
            new_data = new_data[: extra.start] + extra.text + new_data[extra.end :]
            treesitter.edit_tree(tree, middle, [extra])
        tree = treesitter.parse(new_data, tree)
        current = Source(source.path, new_data)
        if settled:
            _guard(errors_before, tree, applied_rules, apply_fixes)
            return EngineResult(current.data, findings, round_index + 1)
    raise EngineError(f"fixes did not converge after {MAX_ROUNDS} rounds "
                      f"(rules involved: {', '.join(sorted(applied_rules))}); nothing was written")


_IDENTIFIER = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(rb"(?:0[xX][0-9a-fA-F']+|[0-9][0-9']*)[uUlL]*")
_COMMENT_LINE = re.compile(rb"[ \t]*//[^\n]*\r?\n")
_INCLUDE_PATH = re.compile(rb"[^<>\"\n\\]*")


def _neutral(edit: Edit, source: Source, literals) -> bool:
    """True for an edit that cannot change how the text parses: an identifier replaced by an
    identifier, an integer literal by an integer literal, a path inside an #include by a path, or a whole // comment line inserted
    at the start of a line that does not continue a directive."""
    data = source.data
    old = data[edit.start : edit.end]
    if (_IDENTIFIER.fullmatch(old) and _IDENTIFIER.fullmatch(edit.text)) or (
            _NUMBER.fullmatch(old) and _NUMBER.fullmatch(edit.text)):
        return literals.covering(edit.start) is None
    if old and literals.covering(edit.start) == "include" and _INCLUDE_PATH.fullmatch(edit.text):
        return _INCLUDE_PATH.fullmatch(old) is not None and literals.covering(edit.end - 1) == "include"
    if not old and _COMMENT_LINE.fullmatch(edit.text):
        at_line_start = edit.start == 0 or data[edit.start - 1 : edit.start] == b"\n"
        continued = data[: max(0, edit.start - 1)].rstrip(b"\r").endswith(b"\\")
        return at_line_start and not continued and literals.covering(edit.start) in (None, "include")
    return False


def _guard(errors_before: int, tree, applied_rules: set[str], apply_fixes: bool) -> None:
    """Refuse output that parses worse than a cleanly parsing input."""
    if apply_fixes and errors_before == 0 and treesitter.error_count(tree) > 0:
        raise EngineError("the fixed output no longer parses (rules involved: "
                          + ", ".join(sorted(applied_rules)) + "); nothing was written")
