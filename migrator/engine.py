"""The fix loop: parse, run rules, drop suppressed findings, apply non-overlapping fixes in one
forward pass, insert requested includes once, re-parse, repeat until nothing applies.

The loop stops early when every applicable fix was applied and none of them came from a rule
that declares ``chains`` (fixes that can create findings for other rules): re-running the
rules would find nothing. Of two fixes that overlap, one waits a round; but a fix whose edits
cover renames (an optimisation rewriting ``cudaStreamCreate(&s)``) carries them: the renaming
rule renames the fix's text (``Rule.rename_text``) and both apply in the round that found them.
Two guards keep bad output from being written. A round's fixes must leave no more parse errors
than the input had in a region they edited (the input's own errors allowed; see _ParseGuard):
the fixes blamed for new ones (those that wrote there; if several, those that break the parse
alone) are refused, each replaced by a marker at its site, and the round is made again without
them; where no fix can be blamed, the file fails. If the loop does not settle within
``MAX_ROUNDS``, the file fails. A file that fails is written nothing.
A UTF-8 byte-order mark is set aside while fixing and put back; findings ignore it.
"""

from __future__ import annotations

import bisect
import functools
import operator
import re
from itertools import compress
from dataclasses import dataclass, field

from .apitables import ApiTables
from .diagnostics import Applicability, Diagnostic, Edit, Finding, Fix, Renames
from .parsing import treesitter
from .parsing.includes import LINE_INCLUDE
from .parsing.tokens import (DirectiveSpans, LiteralSpans, blank_spans, continued_line,
                             directive_hashes, in_directive)
from .rule import LINE_NUMBER, CodeTable, Rule, RuleContext, code_table
from .settings import Settings
from .source import Source
from .suppression import parse_suppressions, unused_suppressions

MAX_ROUNDS = 20
_BOM = b"\xef\xbb\xbf"  # UTF-8 byte-order mark


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


_diagnostic_order = operator.attrgetter("start", "end", "code", "message", "symbol")


_FIX_SPAN = operator.attrgetter("fix.start", "fix.end")
_FIX = operator.attrgetter("fix")
_START = operator.attrgetter("start")


def fixable_flags(fixes: list[Fix | None], unsafe: bool) -> list[bool]:
    """Does each of ``fixes`` apply: a safe one always, an unsafe one with ``unsafe`` (one
    test per finding, without a call each)."""
    if unsafe:
        return [fix is not None for fix in fixes]
    safe = Applicability.SAFE
    return [fix is not None and fix.applicability is safe for fix in fixes]


def choose_fixes(diagnostics: list[Diagnostic], unsafe: bool) -> list[Diagnostic]:
    """Fixes to apply this round: sorted by position; one that overlaps or touches an accepted
    fix waits for the next round (where it is recomputed on the new text)."""
    return _choose(list(compress(diagnostics, fixable_flags(list(map(_FIX, diagnostics)), unsafe))))


def _choose(with_fix: list[Diagnostic]) -> list[Diagnostic]:
    """choose_fixes among diagnostics whose fixes all apply."""
    with_fix = sorted(with_fix, key=_FIX_SPAN)  # an include request alone (-1, -1) first
    chosen: list[Diagnostic] = []
    last_end = -1
    for diag in with_fix:
        fix = diag.fix
        if not fix.edits:  # include request only
            chosen.append(diag)
            continue
        if len(fix.edits) > 1 and _overlapping(sorted(fix.edits)):
            continue  # a malformed fix (its own edits overlap) is never applied
        if fix.start <= last_end and not _marker_beside(fix, chosen, last_end):
            continue
        chosen.append(diag)
        last_end = fix.end
    return chosen


def _overlapping(edits: list[Edit]) -> bool:
    """Do any of ``edits`` (sorted) overlap, or insert where the one before inserted?"""
    return any(a.end > b.start or (a.end == b.start and a.start == a.end == b.start)
               for a, b in zip(edits, edits[1:]))


def _marker_beside(fix: Fix, chosen: list[Diagnostic], last_end: int) -> bool:
    """Is ``fix`` a marker inserted where the last chosen fixes, markers too, inserted theirs,
    and unlike each of them? They all apply, in order: markers of two findings on one line
    would otherwise wait a round each, and be reported at the lines of a later round's text.
    A marker the same as one of them waits (the next round finds it written)."""
    if not fix.marker or fix.start != fix.end or fix.start != last_end:
        return False
    beside = False
    for diag in reversed(chosen):
        last = diag.fix
        if not (last.marker and last.start == last.end == last_end):
            break
        if last.edits[0].text == fix.edits[0].text:
            return False
        beside = True
    return beside


def _chosen_edits(chosen: list[Diagnostic]) -> list[Edit]:
    """The chosen fixes' edits, sorted: _choose keeps fixes apart and in order, so each fix's
    own edits in order, one fix after the other, are all of them in order (found without
    comparing every pair of edits again)."""
    return [edit for diag in chosen
            for edit in (diag.fix.edits if len(diag.fix.edits) < 2 else sorted(diag.fix.edits))]


def apply_edits(data: bytes, diagnostics: list[Diagnostic]) -> bytes:
    """Apply the chosen fixes' edits in one forward pass over the original offsets."""
    return _apply_sorted(data, sorted(edit for diag in diagnostics for edit in diag.fix.edits))


def _apply_sorted(data: bytes, edits: list[Edit], renames: Renames | None = None) -> bytes:
    """Apply ``edits`` (sorted, apart) and ``renames`` (none touching an edit)."""
    parts = []
    append = parts.append
    pos = 0
    starts, ends, texts = _rename_columns(renames)
    done = 0  # renames applied
    for edit in edits:
        upto = bisect.bisect_left(starts, edit.start, done)
        for start, end, text in zip(starts[done:upto], ends[done:upto], texts[done:upto]):
            append(data[pos:start])
            append(text)
            pos = end
        done = upto
        append(data[pos : edit.start])
        append(edit.text)
        pos = edit.end
    for start, end, text in zip(starts[done:], ends[done:], texts[done:]):
        append(data[pos:start])
        append(text)
        pos = end
    append(data[pos:])
    return b"".join(parts)


def _rename_columns(renames: Renames | None) -> tuple[list[int], list[int], list[bytes]]:
    if not renames:
        return [], [], []
    return renames.starts, renames.ends, [record.text for record in renames.records]


_DIRECTIVE_WORDS = re.compile(rb"[ \t]*(\w+)[ \t]*(\w*)")  # after a directive's '#'
# lines about the line below them: a marker the rules write (rules/markers.py), a suppression
# comment standing alone (migrator/suppression.py)
_ATTACHED_LINE = re.compile(rb"[ \t]*//[ \t]*rocmigrate(?: [A-Z]{3}[0-9]{3}: |:[ \t]*ignore(?!-))")
_BLANKS = re.compile(rb"[ \t\r\n\f\v]*")
_LINE_REST = re.compile(rb"[ \t]*\r?\n?")


def include_insertion_point(data: bytes, literals: LiteralSpans | None = None) -> int:
    """Where the engine inserts an #include: before the first unconditional #include that no
    code comes before (what the code uses must come first), else after a header guard /
    #pragma once, else at the top (after a leading comment block); never between marker or
    suppression lines and the line they are about, and never where it would be part of a
    comment, a literal or a continued line (then at the very top)."""
    literals = literals or LiteralSpans(data)
    directives = _directives(data, literals)
    baseline, guard_end = _header_guard(data, literals, directives)
    depth = 0
    at = None
    previous = 0
    for start, directive, argument in directives:
        if depth >= baseline and _code_between(data, literals, previous, start):
            break
        if directive in (b"if", b"ifdef", b"ifndef"):
            depth += 1
        elif directive == b"endif":
            depth -= 1
        elif directive == b"pragma" and argument == b"once":
            guard_end = max(guard_end, _directive_end(data, start))
        elif directive == b"include" and depth == baseline:
            at = start
            break
        previous = _directive_end(data, start)
    if at is None:
        at = guard_end or _after_leading_comments(data, literals)
    at = _before_attached_lines(data, at)
    return at if _at_code_line_start(data, literals, at) else 0


def _directives(data: bytes, literals: LiteralSpans) -> list[tuple[int, bytes, bytes]]:
    """(line start, directive name, first word after it) of each directive line in code."""
    words = _DIRECTIVE_WORDS.match
    return [(line, m.group(1), m.group(2)) for line, hash_at in directive_hashes(data)
            if (m := words(data, hash_at + 1)) and _at_code_line_start(data, literals, line)]


def _header_guard(data: bytes, literals: LiteralSpans, directives) -> tuple[int, int]:
    """(1, offset after its #define) when the file starts with an include guard, else (0, 0):
    the depth of the file's top level, and where the guard ends."""
    if (len(directives) > 1 and directives[0][1] == b"ifndef" and directives[1][1] == b"define"
            and _leading_comments(data, literals)[1] == directives[0][0]):
        return 1, _directive_end(data, directives[1][0])
    return 0, 0


def _top_level_includes(data: bytes, literals: LiteralSpans) -> set[bytes]:
    """The paths the file includes unconditionally (inside its include guard, under no #if)."""
    directives = _directives(data, literals)
    baseline, _ = _header_guard(data, literals, directives)
    depth = 0
    found = set()
    for start, directive, _ in directives:
        if directive in (b"if", b"ifdef", b"ifndef"):
            depth += 1
        elif directive == b"endif":
            depth -= 1
        elif directive == b"include" and depth == baseline:
            match = LINE_INCLUDE.match(data, start)
            if match is not None:
                found.add(match.group(2))
    return found


def _at_code_line_start(data: bytes, literals: LiteralSpans, at: int) -> bool:
    """Is ``at`` the start of a line of code (a comment or literal may start there): not inside
    a comment or literal, and not the continuation of a line ending in a backslash, where a
    directive or a // comment goes on? The end of a file that ends inside a comment is not."""
    if at == 0:
        return True
    if data[at - 1 : at] != b"\n" or continued_line(data, at - 1):
        return False
    index = bisect.bisect_right(literals.starts, at) - 1
    if index < 0 or literals.starts[index] == at:
        return True
    end = literals.ends[index]
    # a comment that ends just after a newline is one that runs to the end of the file
    return not (at < end or (at == end and literals.kinds[index] == "comment"))


def _directive_end(data: bytes, start: int) -> int:
    """The offset after the newline ending the directive at ``start`` (continuations included)."""
    end = data.find(b"\n", start)
    while end != -1 and continued_line(data, end):
        end = data.find(b"\n", end + 1)
    return len(data) if end == -1 else end + 1


def _leading_comments(data: bytes, literals: LiteralSpans) -> tuple[int, int]:
    """(end of the last comment the file starts with, or 0; offset of the first byte that is
    neither one of those comments nor blank space)."""
    pos = last_end = 0
    while True:
        pos = _BLANKS.match(data, pos).end()
        index = bisect.bisect_right(literals.starts, pos) - 1
        if index < 0 or literals.starts[index] != pos or literals.kinds[index] != "comment":
            return last_end, pos
        pos = last_end = literals.ends[index]


def _after_leading_comments(data: bytes, literals: LiteralSpans) -> int:
    """The offset after the comments a file starts with and the newline ending the last one."""
    last_end, _ = _leading_comments(data, literals)
    return _LINE_REST.match(data, last_end).end()


def _before_attached_lines(data: bytes, at: int) -> int:
    """``at`` moved above the marker and suppression lines right before it: an inserted line
    must not separate them from the line they are about (a marker would be written again, a
    suppression would apply to the inserted line)."""
    while at > 0:
        above = data.rfind(b"\n", 0, at - 1) + 1
        if not _ATTACHED_LINE.match(data, above):
            break
        at = above
    return at


def has_define(data: bytes, name: str, literals: LiteralSpans | None = None) -> bool:
    """Does ``data`` define the macro ``name`` in code (a ``#define NAME`` directive line)?"""
    wanted = name.encode()
    return any(directive == b"define" and argument == wanted for _, directive, argument
               in _directives(data, literals or LiteralSpans(data)))


def include_edit(data: bytes, headers: list[str], newline: bytes,
                 defines: list[str] = ()) -> Edit | None:
    """The insertion that adds the requested headers the file does not include yet (an include
    under ``#if`` does not count), after the requested macros it does not define yet. A name in
    double quotes (``'"rocmigrate_atomics.h"'``, a support header) is included with quotes,
    others with angle brackets."""
    literals = _head_literals(data)
    included = _top_level_includes(data, literals) if headers else set()
    missing = [h for h in dict.fromkeys(headers) if h.strip('"').encode() not in included]
    undefined = [d for d in dict.fromkeys(defines) if not has_define(data, d, literals)]
    if not missing and not undefined:
        return None
    at = include_insertion_point(data, literals)
    block = b"".join(b"#define " + name.encode() + newline for name in undefined)
    block += b"".join(b"#include " + (h.encode() if h.startswith('"') else b"<" + h.encode() + b">")
                      + newline for h in missing)
    if at > 0 and data[at - 1 : at] != b"\n":
        block = newline + block
    return Edit(at, at, block)


def _head_literals(data: bytes) -> LiteralSpans:
    """The literal spans include_edit reads: those starting up to the end of the file's last
    line that starts with ``#`` (the rest of a long file is not scanned), or all of them where
    the comments the file starts with run on past it. Every offset it asks about is up to
    there: directive lines, the text between them, the comments the file starts with (whose
    walk ends before the first directive in code, else past the last line checked here)."""
    hashes = directive_hashes(data)
    stop = _directive_end(data, hashes[-1][0]) if hashes else 0
    literals = LiteralSpans(data, stop)
    if _leading_comments(data, literals)[1] >= stop:
        return LiteralSpans(data)
    return literals


def insert_includes(data: bytes, headers: list[str], newline: bytes) -> bytes:
    return _inserted(data, include_edit(data, headers, newline))


def _run_rules(rules: list[Rule], ctx: RuleContext
               ) -> tuple[list[Diagnostic], Renames | None, tuple[int, int]]:
    """Every rule's diagnostics, in rule order, each rule's in one order whatever order it
    found them in (some walk sets, whose order changes from run to run): that decides which
    of two fixes at one place waits for the next round, and the order of the findings.

    The renames a rule reports in bulk come apart, with the bounds of that rule's block of
    diagnostics: each of them stands in that block, at its place in the block's order."""
    diagnostics: list[Diagnostic] = []
    bulk, block = None, (0, 0)
    for rule in rules:
        found, renames = rule.check_renames(ctx)
        found = sorted(found, key=_diagnostic_order)
        if renames is not None and bulk is None:
            bulk, block = renames, (len(diagnostics), len(diagnostics) + len(found))
        elif renames is not None:  # one rule at a time reports in bulk
            found = sorted(found + renames.diagnostics(), key=_diagnostic_order)
        diagnostics.extend(found)
    return diagnostics, bulk, block


def _with_renames(diagnostics: list[Diagnostic], block: tuple[int, int], renames: Renames,
                  indexes=None) -> tuple[list[Diagnostic], tuple[int, int]]:
    """The diagnostics with those of the renames at ``indexes`` (else all) in their block."""
    lo, hi = block
    own = sorted(diagnostics[lo:hi] + renames.diagnostics(indexes), key=_diagnostic_order)
    return diagnostics[:lo] + own + diagnostics[hi:], (lo, lo + len(own))


def _kept(diagnostics: list[Diagnostic], keep: list[bool], block: tuple[int, int]
          ) -> tuple[list[Diagnostic], tuple[int, int]]:
    """The diagnostics ``keep`` marks, and the bounds of the block [lo, hi) among them."""
    lo, hi = block
    kept_before = keep[:lo].count(True)
    return list(compress(diagnostics, keep)), (kept_before,
                                               kept_before + keep[lo:hi].count(True))


def _enabled(codes: list[str], settings: Settings) -> list[bool]:
    """Is each of ``codes`` selected?"""
    from .registry import code_enabled

    return [code_enabled(code, settings.select, settings.ignore) for code in codes]


def _in_code(diagnostics: list[Diagnostic], literals: LiteralSpans) -> list[bool]:
    """Is each finding located in code? A rule never matches inside a comment or a literal (an
    include's path is code here), whatever its tree says (tree-sitter reads the text after an
    unterminated ``/*`` as code)."""
    covering = literals.covering
    return [covering(d.start) in (None, "include") for d in diagnostics]


def _touching(renames: Renames, diagnostics: list[Diagnostic]) -> set[int]:
    """The renames whose span touches or overlaps an edit of a fix: only those can change
    which fixes _choose takes (any other rename it takes, leaving the others' choice as it
    is). A rename between two edits of one fix (XFR001 rewrites a buffer's allocation and its
    free, the copies between them keep their names) is applied with it: it writes no byte
    the fix reads or writes, and waiting would only report it in a later round's lines."""
    starts, ends = renames.starts, renames.ends  # the ends are sorted too: renames are apart
    touching = set()
    for diag in diagnostics:
        fix = diag.fix
        if fix is None:
            continue
        for edit in fix.edits:
            index = bisect.bisect_left(ends, edit.start)
            while index < len(starts) and starts[index] <= edit.end:
                touching.add(index)
                index += 1
    return touching


def _carry_renames(found: _Round, fixable: list[bool]) -> dict[int, tuple]:
    """The fixes that carry the renames their edits cover, instead of waiting a round for
    them: a fix carries them when every other fix it overlaps or touches is a rename (of the
    renamer's code, one identifier edit) inside one of its edits, and the renamer
    (``found.renamer.rename_text``) can rename each of its texts. Returns, by the index of
    each such fix's diagnostic: (the fix with its texts renamed, the renames it covers)."""
    diagnostics, code = found.diagnostics, found.renamer.code
    # by start, the longest first, a rename after another fix of the same span: a fix before
    # the renames that start where it does
    spans = sorted((diag.fix.start, -diag.fix.end, _is_rename(diag, code), index)
                   for index, (diag, applies) in enumerate(zip(diagnostics, fixable))
                   if applies and diag.fix.edits)
    starts = [start for start, _, _, _ in spans]
    carriers = {}
    reach = -1  # the furthest end of the fixes before the one looked at
    for position, (start, end, _, index) in enumerate(spans):
        end = -end
        diag = diagnostics[index]
        if reach < start and not _is_rename(diag, code):
            inside = [diagnostics[other] for _, _, _, other in
                      spans[position + 1 : bisect.bisect_right(starts, end)]]
            carrier = _carrier(found, diag, inside, code) if inside else None
            if carrier is not None:
                carriers[index] = (carrier, inside)
        reach = max(reach, end)
    return carriers


def _is_rename(diag: Diagnostic, code: str) -> bool:
    fix = diag.fix
    return diag.code == code and len(fix.edits) == 1 and fix.keeps_syntax and not fix.marker


def _carrier(found: _Round, diag: Diagnostic, inside: list[Diagnostic], code: str
             ) -> Diagnostic | None:
    """``diag`` with its edits' texts renamed, to carry ``inside`` (the fixes its span
    overlaps, after it); None unless each of them is a rename inside one of its edits, its
    edits are apart, and every text can be renamed."""
    edits = sorted(diag.fix.edits)
    if _overlapping(edits):
        return None  # malformed: _choose never applies it
    for rename in inside:
        if not _is_rename(rename, code) or not any(
                edit.start <= rename.start and rename.end <= edit.end for edit in edits):
            return None
    rename_text, ctx = found.renamer.rename_text, found.ctx
    renamed = []
    for edit in edits:
        text = rename_text(ctx, edit.start, edit.end, edit.text)
        if text is None:
            return None
        renamed.append(Edit(edit.start, edit.end, text))
    fix = diag.fix
    return Diagnostic(diag.code, diag.message, diag.start, diag.end,
                      Fix(fix.title, tuple(renamed), fix.applicability, fix.includes,
                          fix.keeps_syntax, fix.marker, fix.defines),
                      diag.library, diag.symbol, diag.severity)


def _carried_or_superseded(found: _Round, fixable: list[bool], carriers: dict[int, tuple]
                           ) -> tuple[set[int], set[int]]:
    """Split the renames the ``carriers`` cover into those reported as fixed with them and
    those superseded (reported by no one), as the rounds would have had it without carrying:
    a rename that took its place before the fix (it waited a round) is fixed, as is one whose
    name the fix writes again (the next round renamed it there); one whose name the fix
    replaced (ARG001's ``cudaEventCreate`` -> ``hipEventCreateWithFlags``) is superseded.
    Each carrier replaces its fix in ``found.diagnostics``; ``found.carried`` and
    ``found.superseded`` list what each carries. Returns the ids of both kinds."""
    diagnostics, data = found.diagnostics, found.ctx.data
    first = {id(diag) for diag in _choose(list(compress(diagnostics, fixable)))}
    carried, superseded = set(), set()
    for index, (carrier, inside) in carriers.items():
        written = b"\n".join(edit.text for edit in diagnostics[index].fix.edits)
        kept, gone = [], []
        for rename in inside:
            name = data[rename.start : rename.end]
            if id(rename) in first or re.search(rb"\b" + re.escape(name) + rb"\b", written):
                kept.append(rename)
            else:
                gone.append(rename)
        diagnostics[index] = carrier
        found.carried[id(carrier)] = kept
        found.superseded[id(carrier)] = gone
        carried.update(map(id, kept))
        superseded.update(map(id, gone))
    return carried, superseded


def _findings(path: str, source: Source, diagnostics: list[Diagnostic], fixed: list[bool],
              kinds: dict[str, str]) -> list[Finding]:
    """The findings reporting ``diagnostics``, placed in ``source``; ``kinds``: where the
    summary lists each code's findings (a marker's: attention)."""
    positions = source.positions([diag.start for diag in diagnostics])
    findings = []
    append = findings.append
    for diag, fixed_it, (line, column) in zip(diagnostics, fixed, positions):
        fix = diag.fix
        code = diag.code
        # the applicability's _value_: its .value is a property, slow for every finding
        append(Finding(path, line, column, code, diag.message, diag.severity, diag.library,
                       diag.symbol, fixed_it, fix.title if fix else "",
                       fix.applicability._value_ if fix else "",
                       "attention" if fix is not None and fix.marker else kinds[code]))
    return findings


def _rename_findings(path: str, source: Source, renames: Renames, fixed: bool,
                     kinds: dict[str, str]) -> list[Finding]:
    """The findings reporting ``renames``, placed in ``source``, as _findings makes them."""
    code = renames.code
    kind = kinds[code]
    safe = Applicability.SAFE._value_
    return [Finding(path, line, column, code, message, "info", library, symbol, fixed, title,
                    safe, kind)
            for (line, column), (message, title, _, library, symbol)
            in zip(source.positions(renames.starts), renames.records)]


def _with_rename_findings(findings: list[Finding], diagnostics: list[Diagnostic],
                          block: tuple[int, int], rename_findings: list[Finding],
                          rename_starts: list[int]) -> list[Finding]:
    """``findings`` (of ``diagnostics``) with ``rename_findings`` in the block [lo, hi), each
    at its place in the block's order (by start: no other diagnostic of the block starts at a
    rename)."""
    lo, hi = block
    merged = findings[:lo]
    done = 0
    for finding, diag in zip(findings[lo:hi], diagnostics[lo:hi]):
        upto = bisect.bisect_left(rename_starts, diag.start, done)
        merged += rename_findings[done:upto]
        merged.append(finding)
        done = upto
    merged += rename_findings[done:]
    merged += findings[hi:]
    return merged


def fix_source(
    source: Source, rules: list[Rule], settings: Settings, tables: ApiTables,
    apply_fixes: bool = True, tree=None, included: tuple = (), codes: CodeTable | None = None,
) -> EngineResult:
    """Run the rules over one file until nothing changes; returns the output and findings.
    ``included``: the project files the file includes, as rules see them (RuleContext);
    ``codes``: the rules' code_table, when the caller made it already.

    Findings are placed in the input file's coordinates for the first round; fixes made in later
    rounds (rare: a fix that had to wait) are reported at their position in that round's text.
    """
    if source.data.startswith(_BOM):
        # the byte-order mark is no text: fix the file as if it were not there, then put it back
        result = fix_source(Source(source.path, source.data[len(_BOM):]), rules, settings,
                            tables, apply_fixes, None, included, codes)
        result.output = _BOM + result.output
        return result
    loop = _FixLoop(source, rules, settings, tables, apply_fixes, tree, included,
                    codes or code_table(rules))
    for round_index in range(MAX_ROUNDS):
        found = loop.diagnose(round_index)
        loop.drop_unwanted(found)
        loop.choose(found)
        loop.report(found)
        result = loop.apply(found)
        if result is not None:
            return result
    raise EngineError(f"fixes did not converge after {MAX_ROUNDS} rounds "
                      f"(rules involved: {loop.involved()}); nothing was written")


@dataclass
class _Round:
    """One round of the fix loop: its diagnostics as the steps narrow them down (``renames``,
    a rule's reported in bulk, stand in the diagnostics' ``block``; see _run_rules), then the
    fixes that apply and those chosen."""

    index: int
    ctx: RuleContext
    diagnostics: list[Diagnostic]
    renames: Renames | None
    block: tuple[int, int]
    fixable: list[bool] = field(default_factory=list)  # per diagnostic: its fix applies
    chosen: list[Diagnostic] = field(default_factory=list)
    deferred: bool = False  # a fix that applies waits for a later round
    fixed: list[bool] = field(default_factory=list)  # per diagnostic: fixed this round
    # the rule whose renames (of its code) a fix may carry this round (_carry_renames)
    renamer: Rule | None = None
    # fixes carrying renames (_carry_renames), by the id of the fix's diagnostic: the renames
    # reported fixed with it, and those it superseded (no longer among the diagnostics)
    carried: dict[int, list[Diagnostic]] = field(default_factory=dict)
    superseded: dict[int, list[Diagnostic]] = field(default_factory=dict)


class _FixLoop:
    """One file's fix loop (fix_source): what its rounds share, and each round's steps."""

    def __init__(self, source: Source, rules: list[Rule], settings: Settings,
                 tables: ApiTables, apply_fixes: bool, tree, included: tuple,
                 codes: CodeTable) -> None:
        self.source = source
        self.current = source  # the text of this round
        self.rules, self.settings, self.tables = rules, settings, tables
        self.apply_fixes = apply_fixes
        self.tree = tree  # the current text's tree, None while none was parsed
        self.included = included
        self.findings: list[Finding] = []
        self.reported: set[tuple[str, str]] = set()
        self.applied_rules: set[str] = set()
        self.guard = _ParseGuard()
        self.kinds = codes.kinds
        self.chaining = codes.chaining
        # what a chaining code's fixes can make work for: the codes of Rule.chains_into (None:
        # any rule)
        self.chained = codes.chained
        self.rounds: list = []  # each applied round's fixes, for RuleContext.origin_offset
        # fixes the guard refused (they broke the parse): (code, start in the current text),
        # marked at their site instead in every round that finds them again
        self.refused: set[tuple[str, int]] = set()
        self.round_findings = 0  # where the findings of the current round begin
        # the rules the next round runs: those that acted this round (see _acting_rules), and
        # after a fix that chains, those it can make work for (_next_rules)
        self.next_rules = rules
        # the rule that renames names in text a fix writes (Rule.rename_text), if selected
        self.renamer = next((rule for rule in rules
                             if type(rule).rename_text is not Rule.rename_text), None)
        if self.renamer is not None and not _enabled([self.renamer.code], settings)[0]:
            self.renamer = None

    def involved(self) -> str:
        return ", ".join(sorted(self.applied_rules))

    def diagnose(self, index: int) -> _Round:
        """Run the rules over the current text."""
        ctx = RuleContext(self.current, self.settings, self.tables, self.tree, self.included,
                          self.source, tuple(self.rounds))
        scanned = self.guard.literals_of(self.current.data)
        if scanned is not None:
            ctx.literals = scanned  # a cached property: the guard's scan of this text serves
        diagnostics, renames, block = _run_rules(self.next_rules, ctx)
        self.tree = ctx.parsed_tree  # None while no rule needed the tree: parsing is lazy
        renamer = self.renamer if self.renamer in self.next_rules else None
        return _Round(index, ctx, diagnostics, renames, block, renamer=renamer)

    def drop_unwanted(self, found: _Round) -> None:
        """Drop the diagnostics of codes not selected, those outside code and those suppressed;
        lint's unused suppressions join the first round's."""
        settings, current, literals = self.settings, self.current, found.ctx.literals
        diagnostics, renames, block = found.diagnostics, found.renames, found.block
        suppressions = parse_suppressions(current, literals)
        if renames is not None and (found.index > 0 or suppressions.all):
            # the few renames of a later round, and those of a file with suppressions, are
            # judged one by one like any finding
            diagnostics, block = _with_renames(diagnostics, block, renames)
            renames = None
        if settings.select or settings.ignore:
            codes = [diag.code for diag in diagnostics]
            diagnostics, block = _kept(diagnostics, _enabled(codes, settings), block)
            if renames is not None and not _enabled([renames.code], settings)[0]:
                renames = None
        diagnostics, block = _kept(diagnostics, _in_code(diagnostics, literals), block)
        diagnostics = suppressions.filter(current, diagnostics)
        if suppressions.all:
            found.renamer = None  # a rename it would carry may be suppressed
        if found.index == 0 and settings.report_unused_suppressions:
            diagnostics += unused_suppressions(current, literals, suppressions, settings)
        found.diagnostics, found.renames, found.block = diagnostics, renames, block

    def choose(self, found: _Round) -> None:
        """Choose the fixes to apply this round: those that apply and overlap no other."""
        apply_fixes = self.apply_fixes
        renames = found.renames
        if apply_fixes and (self.refused or _REFUSED_BYTES in self.current.data):
            # a refused fix found again, in this run or where an earlier one marked it: its
            # marker instead (or nothing, once marked), so that a second pass changes nothing
            literals = found.ctx.literals
            found.diagnostics = [self._marked_instead(diag, literals)
                                 if self._refused_here(diag, literals) else diag
                                 for diag in found.diagnostics]
        if renames and apply_fixes:
            # renames touching another fix compete with it in _choose; the others are chosen
            touching = _touching(renames, found.diagnostics)
            if touching:
                found.diagnostics, found.block = _with_renames(found.diagnostics, found.block,
                                                               renames, sorted(touching))
                renames.without(touching)
        diagnostics = found.diagnostics
        fixable = fixable_flags(list(map(_FIX, diagnostics)), self.settings.unsafe_fixes)
        carriers = _carry_renames(found, fixable) if apply_fixes and found.renamer else None
        carried: set[int] = set()
        if carriers:
            carried, superseded = _carried_or_superseded(found, fixable, carriers)
            if superseded:
                keep = [id(diag) not in superseded for diag in diagnostics]
                found.diagnostics, found.block = _kept(diagnostics, keep, found.block)
                fixable = list(compress(fixable, keep))
        diagnostics = found.diagnostics
        # the renames carried are taken with the fixes that carry them
        chosen = _choose([diag for diag, applies in zip(diagnostics, fixable)
                          if applies and id(diag) not in carried]) if apply_fixes else []
        deferred = len(chosen) + len(carried) < fixable.count(True)
        if not apply_fixes:
            fixed = [False] * len(diagnostics)
        elif deferred or carried:
            fixed_ids = {id(d) for d in chosen} | carried
            fixed = [id(d) in fixed_ids for d in diagnostics]
        else:  # every fix that applies was chosen
            fixed = fixable
        found.fixable, found.chosen, found.deferred, found.fixed = fixable, chosen, deferred, fixed

    def report(self, found: _Round) -> None:
        """Add the round's findings: in the first round each one as found, in a later round
        those fixed and those not reported yet; a fix deferred is reported in the round that
        applies it."""
        if found.index == 1:
            self.reported = {(f.code, f.symbol) for f in self.findings}
        self.round_findings = len(self.findings)
        reporting, reporting_fixed, block = found.diagnostics, found.fixed, found.block
        if found.index > 0 or self.apply_fixes and found.deferred:
            keep = self._reporting(found)
            reporting, block = _kept(reporting, keep, block)
            reporting_fixed = list(compress(found.fixed, keep))
        path, renames = self.source.path, found.renames
        findings = _findings(path, self.current, reporting, reporting_fixed, self.kinds)
        if renames:
            findings = _with_rename_findings(findings, reporting, block, _rename_findings(
                path, self.current, renames, self.apply_fixes, self.kinds), renames.starts)
        self.findings += findings

    def _reporting(self, found: _Round) -> list[bool]:
        """Which of the round's diagnostics ``report`` adds, where not all of them."""
        apply_fixes, later, reported = self.apply_fixes, found.index > 0, self.reported
        keep = []
        for diag, fixed, applicable in zip(found.diagnostics, found.fixed, found.fixable):
            if apply_fixes and not fixed and applicable:
                keep.append(False)  # deferred: recomputed, and reported, in a later round
            elif later and not fixed and (diag.code, diag.symbol) in reported:
                # unfixed findings repeat every round: report them from the first round only
                keep.append(False)
            else:
                if later:
                    reported.add((diag.code, diag.symbol))
                keep.append(True)
        return keep

    def apply(self, found: _Round) -> EngineResult | None:
        """Apply the chosen fixes and the includes they request; the result when the loop is
        done, else None (the next round runs on the new text)."""
        current, index = self.current, found.index
        if not (found.chosen or self.apply_fixes and found.renames):
            return EngineResult(current.data, self.findings, index)
        for attempt in range(_REFUSALS + 1):
            edits, new_data, extra, chosen_codes = self._edit(found)
            if new_data == current.data and extra is None:
                return EngineResult(current.data, self.findings, index)
            settled = not found.deferred and self.chaining.isdisjoint(chosen_codes)
            guarded = _guarded(found.chosen, current, found.ctx.literals)
            if settled and not guarded:
                # every fix applied, none creates work for another rule, and no edit can change
                # the parse: the output's tree has the input's shape, so no parse is needed. The
                # engine's own insertion is whole #define / #include lines at the start of a
                # line of code (include_insertion_point): a preprocessor line there changes no
                # parse.
                self._moved_refusals(extra)
                return EngineResult(_inserted(new_data, extra), self.findings, index + 1)
            try:
                self._guard(found, edits, new_data, extra, guarded, settled)
                break
            except _SyntaxLost as lost:
                self.rounds.pop()  # the round is made again without the fixes that broke it
                if attempt == _REFUSALS or not self._refuse(found, lost, edits, extra):
                    raise EngineError(
                        f"the fixed output no longer parses as the input did ({lost}; rules "
                        f"involved: {self.involved()}); nothing was written") from None
        self._moved_refusals(extra)
        if settled:
            return EngineResult(self.current.data, self.findings, index + 1)
        self.next_rules = self._next_rules(found, chosen_codes)
        return None

    def _next_rules(self, found: _Round, chosen_codes: set[str]) -> list[Rule]:
        """The rules the next round runs: those that acted this round (_acting_rules), and
        after fixes that chain, the rules they can make work for (all, unless each of their
        rules names those in ``chains_into``)."""
        acting = self._acting_rules(found)
        fed: set[str] = set()
        for code in chosen_codes & self.chaining:
            into = self.chained[code]
            if into is None:
                return self.rules
            fed |= into
        if not fed:
            return acting
        return [rule for rule in self.rules
                if rule in acting or not fed.isdisjoint(rule.codes())]

    def _acting_rules(self, found: _Round) -> list[Rule]:
        """The rules that acted this round, in rule order: those whose fixes waited (deferred,
        or a marker instead of a refused fix) and those whose fixes it applied (a fix can
        uncover more sites: RDF001 guards the definitions that HIP compiles once the round
        rewrote the #if around them). After a round whose fixes chain into nothing, a rule that
        acted on nothing would find what it found: its findings were reported in the first
        round (a later round reports only what it fixes and what is new)."""
        # every fix that applied, chosen or waiting, and the markers that replaced refused ones
        acted = {diag.code for diag, applies in zip(found.diagnostics, found.fixable) if applies}
        acted |= {diag.code for diag in found.chosen}
        if found.renames:
            acted.add(found.renames.code)
        return [rule for rule in self.rules if not acted.isdisjoint(rule.codes())]

    def _edit(self, found: _Round) -> tuple[list[Edit], bytes, Edit | None, set[str]]:
        """(the chosen fixes' edits, the text they and the renames make, the engine's insertion
        of the includes and macros they request, their codes)."""
        chosen, renames, current = found.chosen, found.renames, self.current
        chosen_codes = {d.code for d in chosen}
        if renames:
            chosen_codes.add(renames.code)
        self.applied_rules |= chosen_codes
        edits = _chosen_edits(chosen)
        new_data = _apply_sorted(current.data, edits, renames)
        includes = [h for diag in chosen for h in diag.fix.includes]
        defines = [d for diag in chosen for d in diag.fix.defines]
        extra = (include_edit(new_data, includes, current.newline, defines)
                 if includes or defines else None)
        self.rounds.append((edits, renames, extra))
        return edits, new_data, extra, chosen_codes

    def _guard(self, found: _Round, edits: list[Edit], new_data: bytes, extra: Edit | None,
               guarded: list[Edit], settled: bool) -> None:
        """Move on to the round's new text (``new_data`` with the engine's insertion
        ``extra``), raising _SyntaxLost where the guard finds it parses worse (the text of
        the round stays as it was)."""
        previous, literals, renames = self.current, found.ctx.literals, found.renames
        if renames:  # (their starts are none of the other edits')
            edits = sorted(edits + renames.edits(), key=_START)
        tree = self.tree
        if tree is None and (
                not guarded or _items_parse_alone(found.ctx, edits, new_data, guarded)):
            # no rule parsed the input, and the round's guarded edits (if any) lie in top-level
            # items that parse alone without an error once edited: nothing can have more errors
            # than before, so the whole file is not parsed (the next round parses it lazily).
            # The engine's insertion ``extra`` is whole preprocessor lines at the start of a
            # line of code, which change no parse (as where apply settles without a guard).
            self.guard.forget()
            self.current = Source(self.source.path, _inserted(new_data, extra))
            return
        if tree is None:  # first round, no rule parsed: the guard needs the input's tree
            tree = treesitter.parse(previous.data)
        # re-parse incrementally: the old tree learns the edits, unchanged subtrees are reused
        steps = [_Step(previous, edits, new_data, set(edits).difference(guarded))]
        if extra is not None:
            middle = Source(self.source.path, new_data)
            new_data = _inserted(new_data, extra)
            steps.append(_Step(middle, [extra], new_data, set()))
        try:
            self.tree = self.guard.reparse(tree, steps, literals, need_tree=not settled)
        except _SyntaxLost:
            self.guard.forget()
            if not _kept_without_neutral(steps[0], literals):
                self.tree = None  # told of the edits refused: the input is parsed again
                raise
            self.tree = None if settled else treesitter.parse(new_data)
        self.current = Source(self.source.path, new_data)

    def _refuse(self, found: _Round, lost: _SyntaxLost, edits: list[Edit],
                extra: Edit | None) -> bool:
        """Take the fixes that made the round parse worse (``lost``) out of its chosen ones,
        each replaced by a marker at its site; False when no fix can be blamed (the round then
        fails the file). The blamed: the guarded fixes that wrote into a region whose errors
        grew, narrowed to those that break the parse applied alone where there are several."""
        current, literals = self.current, found.ctx.literals
        written = _written_ranges(edits, found.renames, extra)
        suspects = [diag for diag in found.chosen
                    if _guarded([diag], current, literals)
                    and any(start <= region_end and region_start <= end
                            for edit in diag.fix.edits for start, end in [written[edit]]
                            for region_start, region_end in lost.regions)]
        if not suspects:
            return False
        if len(suspects) > 1:
            tree = treesitter.parse(current.data)
            blamed = [diag for diag in suspects
                      if not _parses_alone(diag, current, literals, tree)]
            suspects = blamed or suspects  # (together they break it, none alone)
        self._mark_instead(found, suspects)
        return True

    def _mark_instead(self, found: _Round, refused: list[Diagnostic]) -> None:
        """Replace the ``refused`` fixes of the round by markers at their sites (a marker that
        would fall inside another chosen fix waits for the next round), and their findings
        by what the markers say."""
        literals = found.ctx.literals
        refused_ids = {id(diag) for diag in refused}
        kept = [diag for diag in found.chosen if id(diag) not in refused_ids]
        # the renames a refused fix carried are made as renames (reported fixed already); those
        # it superseded are found again in the next round
        kept += [rename for diag in refused for rename in found.carried.pop(id(diag), ())]
        if any(found.superseded.pop(id(diag), ()) for diag in refused):
            found.deferred = True
        spans = [(diag.fix.start, diag.fix.end) for diag in kept if diag.fix.edits]
        marked, waiting = [], []
        for diag in refused:
            self.refused.add((diag.code, diag.start))
            instead = self._marked_instead(diag, literals)
            if instead.fix is not None:
                at = instead.fix.start
                if any(start < at < end for start, end in spans) or any(
                        other.fix.edits == instead.fix.edits for other in marked):
                    waiting.append((diag, instead, True))  # a marker for the next round
                    found.deferred = True
                    continue
                marked.append(instead)
            waiting.append((diag, instead, False))
        found.chosen = sorted(kept + marked, key=_FIX_SPAN)
        self._refusal_findings(waiting)

    def _refusal_findings(self, refused) -> None:
        """Rewrite the round's findings of ``refused`` fixes: (diagnostic, its replacement,
        whether the replacement's marker waits for the next round)."""
        round_findings = self.findings[self.round_findings:]
        dropped = []
        for diag, instead, waits in refused:
            line, column = self.current.position(diag.start)
            for finding in round_findings:
                if (finding.line, finding.column, finding.code, finding.message, finding.fixed
                        ) == (line, column, diag.code, diag.message, True):
                    break
            else:
                continue
            if waits:
                dropped.append(id(finding))  # reported with its marker in the next round
                continue
            finding.message, finding.kind = instead.message, "attention"
            fix = instead.fix
            finding.fixed = fix is not None
            finding.fix_title = fix.title if fix is not None else ""
            finding.fix_applicability = fix.applicability._value_ if fix is not None else ""
        if dropped:
            self.findings[self.round_findings:] = [f for f in round_findings
                                                   if id(f) not in dropped]

    def _refused_here(self, diag: Diagnostic, literals: LiteralSpans) -> bool:
        """Was ``diag``'s fix refused, in this run or (its marker says so) in an earlier one?"""
        fix = diag.fix
        if fix is None or fix.marker:
            return False
        return ((diag.code, diag.start) in self.refused
                or _refusal_marked(self.current, literals, diag.start, diag.code))

    def _marked_instead(self, diag: Diagnostic, literals: LiteralSpans) -> Diagnostic:
        """``diag`` with a marker at its site for its fix, which the guard refused (no fix
        where markers are off, where the site has that marker already, and for a marker)."""
        message = f"{diag.message} ({_REFUSED})"
        fix = None
        if self.settings.write_markers and not diag.fix.marker:
            fix = _refusal_marker(self.current, literals, diag.start, diag.code, diag.message)
        return Diagnostic(diag.code, message, diag.start, diag.end, fix, diag.library,
                          diag.symbol, diag.severity)

    def _moved_refusals(self, extra: Edit | None) -> None:
        """Move the refused fixes' sites to the round's new text."""
        if not self.refused:
            return
        edits, renames, _ = self.rounds[-1]
        if renames:
            edits = sorted(edits + renames.edits(), key=_START)
        steps = [edits] if extra is None else [edits, [extra]]
        moved = set()
        for code, start in self.refused:
            for step in steps:
                start = _site_moved(start, step)
            moved.add((code, start))
        self.refused = moved


_REFUSALS = 4  # rounds of refusing fixes the guard blames, before the file fails
_REFUSED = "not fixed: the fix would not parse"
_REFUSED_BYTES = _REFUSED.encode()
# what the engine writes for a refused fix, as marker_fix (rules/markers.py) writes markers
_REFUSAL_LINE = re.compile(rb"[ \t]*// rocmigrate ([A-Z]{3}[0-9]{3}): [^\n]*\(" + _REFUSED.encode()
                           + rb"\)\r?\n")
_INDENT = re.compile(rb"[ \t]*")


def _refusal_marker(source: Source, literals: LiteralSpans, offset: int, code: str,
                    message: str) -> Fix | None:
    """The marker that stands for a refused fix of ``code`` at ``offset``: a comment line
    above the line (same indent; above the marker and suppression lines there), or a block
    comment before the site where the line is no line of code of its own (a macro's continued
    line, inside a comment or literal). None where that code's refusal marker is there."""
    if _refusal_marked(source, literals, offset, code):
        return None
    data = source.data
    text = (f"// rocmigrate {code}: "
            f"{' '.join(LINE_NUMBER.sub('', message).split())} ({_REFUSED})").encode()
    line_start = source.line_start(offset)
    if not _at_code_line_start(data, literals, line_start):
        inline = b"/* " + text[3:].replace(b"*/", b"* /") + b" */ "
        return Fix(f"mark {code}", (Edit(offset, offset, inline),), marker=True)
    at = _before_attached_lines(data, line_start)
    indent = data[line_start : _INDENT.match(data, line_start).end()]
    return Fix(f"mark {code}", (Edit(at, at, indent + text + source.newline),), marker=True)


def _refusal_marked(source: Source, literals: LiteralSpans, offset: int, code: str) -> bool:
    """Does the site at ``offset`` have a marker of ``code`` for a refused fix, as
    _refusal_marker writes it: on a marker line above its line, or right before it?"""
    data = source.data
    line_start = source.line_start(offset)
    if not _at_code_line_start(data, literals, line_start):
        before = data[max(0, offset - 4096) : offset]
        end = b"(" + _REFUSED_BYTES + b") */ "
        return before.endswith(end) and (b"/* rocmigrate " + code.encode() + b": ") in before
    line = _before_attached_lines(data, line_start)
    while line < line_start:
        marker = _REFUSAL_LINE.match(data, line)
        if marker is not None and marker.group(1) == code.encode():
            return True
        line = data.index(b"\n", line) + 1
    return False


def _written_ranges(edits: list[Edit], renames: Renames | None, extra: Edit | None
                    ) -> dict[Edit, tuple[int, int]]:
    """Where each of a round's ``edits`` wrote its text, in the offsets of the round's last
    text (after the ``renames`` and the engine's insertion ``extra``)."""
    every = sorted(edits + renames.edits(), key=_START) if renames else edits
    written = {}
    shift = 0
    for edit in every:
        start = edit.start + shift
        written[edit] = (start, start + len(edit.text))
        shift += len(edit.text) - (edit.end - edit.start)
    if extra is not None:
        written = {edit: (_moved(start, [extra]), _moved(end, [extra]))
                   for edit, (start, end) in written.items()}
    return written


def _parses_alone(diag: Diagnostic, source: Source, literals: LiteralSpans, tree) -> bool:
    """Does ``source`` (whose tree is ``tree``) keep its parse with ``diag``'s fix alone?"""
    edits = sorted(diag.fix.edits)
    neutral = set(edits).difference(_guarded([diag], source, literals))
    after = _apply_sorted(source.data, edits)
    try:
        _ParseGuard().reparse(tree.copy(), [_Step(source, edits, after, neutral)], literals,
                              False)
    except _SyntaxLost:
        return False
    return True


def _site_moved(offset: int, edits: list[Edit]) -> int:
    """Where the site at ``offset`` lands once ``edits`` (sorted) are applied: after an
    insertion made there, at the start of a replacement starting there."""
    shift = 0
    for edit in edits:
        if edit.start > offset or edit.end > offset:
            break
        shift += len(edit.text) - (edit.end - edit.start)
    return offset + shift


def _guarded(chosen: list[Diagnostic], source: Source, literals: LiteralSpans) -> list[Edit]:
    """The edits that may change the parse: those of fixes that do not vouch otherwise,
    unless _neutral shows they cannot."""
    return [edit for diag in chosen if not diag.fix.keeps_syntax for edit in diag.fix.edits
            if not _neutral(edit, source, literals)]


def _inserted(data: bytes, extra: Edit | None) -> bytes:
    """``data`` with the engine's insertion ``extra`` (if any)."""
    return data if extra is None else data[: extra.start] + extra.text + data[extra.end :]


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
    if _same_token_kind(old, edit.text):
        return literals.covering(edit.start) is None
    if old and literals.covering(edit.start) == "include" and _INCLUDE_PATH.fullmatch(edit.text):
        return _INCLUDE_PATH.fullmatch(old) is not None and literals.covering(edit.end - 1) == "include"
    if old and _INCLUDE_PATH.fullmatch(edit.text) and _INCLUDE_PATH.fullmatch(old):
        return _in_has_include(data, literals, edit)
    if not old and _COMMENT_LINE.fullmatch(edit.text):
        return _at_code_line_start(data, literals, edit.start)
    return False


# `__has_include(<` or `__has_include("` (and _next) on a directive line, up to a header name
_HAS_INCLUDE_OPEN = re.compile(rb'__has_include(?:_next)?[ \t]*\([ \t]*[<"]\Z')


def _in_has_include(data: bytes, literals, edit: Edit) -> bool:
    """Is ``edit`` the whole header name of a ``__has_include(<name>)`` or ``("name")`` in a
    directive? A path for a path there is as neutral as in an #include (tree-sitter reads
    neither form of the test; its line parses with the same error whatever the name)."""
    opening, closing = data[edit.start - 1 : edit.start], data[edit.end : edit.end + 1]
    if (opening, closing) not in ((b"<", b">"), (b'"', b'"')):
        return False
    line_start = data.rfind(b"\n", 0, edit.start) + 1
    if not _HAS_INCLUDE_OPEN.search(data, max(line_start, edit.start - 64), edit.start):
        return False
    return literals.covering(edit.start - 1) in (None, "string") and in_directive(
        data, edit.start)


@functools.lru_cache(maxsize=4096)
def _same_token_kind(old: bytes, new: bytes) -> bool:
    """Are both identifiers, or both integer literals? (A rename of one name recurs hundreds
    of times in a file.)"""
    return bool((_IDENTIFIER.fullmatch(old) and _IDENTIFIER.fullmatch(new))
                or (_NUMBER.fullmatch(old) and _NUMBER.fullmatch(new)))


class _SyntaxLost(Exception):
    """A round of fixes gained parse errors; the message says where, ``regions`` (in the
    offsets of the round's last text) where the errors grew."""

    def __init__(self, message: str, regions: list[tuple[int, int]] = ()) -> None:
        super().__init__(message)
        self.regions = list(regions)


@dataclass
class _Step:
    """Edits applied to ``before`` giving ``after``; ``neutral`` holds those that cannot change
    how the code parses (they are applied and re-parsed, but not held to the guard)."""

    before: Source
    edits: list[Edit]
    after: bytes
    neutral: set[Edit]


def _items_parse_alone(ctx: RuleContext, edits: list[Edit], new_data: bytes,
                       guarded: list[Edit]) -> bool:
    """Does each top-level item (``tokens.top_level_items``) holding a guarded edit of the round
    parse without an error on its own, edited (``edits``, sorted, make ``new_data``)? Then the round
    cannot leave more errors than the input in a region it edited: a complete item parses the
    same wherever it stands between complete items, and the edits changed no text around
    it. False where that cannot be told so (a guarded edit outside such an item or across
    its bounds, unbalanced braces, a block comment in a directive: the guard's view differs
    from the text) or an item parses with an error: the whole file is judged then."""
    if _has_directive_comment(ctx.data) or _has_directive_comment(new_data):
        return False
    touched = set()
    for edit in guarded:
        index = ctx.item_holding(edit.start, edit.end)
        if index is None:
            return False  # outside every item, or an insertion after one's closing brace
        touched.add(index)
    items = ctx.top_level_items
    edit_starts = [edit.start for edit in edits]
    shifts = [0]  # shifts[k]: how far the first k edits move the text after them
    for edit in edits:
        shifts.append(shifts[-1] + len(edit.text) - (edit.end - edit.start))
    for index in sorted(touched):
        start, end = items[index]
        first = bisect.bisect_left(edit_starts, start)  # edits before the item: start < start
        last = bisect.bisect_left(edit_starts, end)  # edits that start in it
        if (first and edits[first - 1].end > start) or (last and edits[last - 1].end > end):
            return False  # an edit across the item's bounds
        if treesitter.parse(new_data[start + shifts[first] : end + shifts[last]]
                            ).root_node.has_error:
            return False
    return True


class _ParseGuard:
    """Re-parses after each round of fixes and refuses a round whose output has more parse
    errors than its input in a region an edit of the round touched (the edited range, grown to
    the ranges tree-sitter reports as changed around it). The input's own errors are allowed
    where they are, whatever their number: a file that does not parse cleanly is guarded like
    any other. Regions that only neutral edits touched (identifier renames, comment lines...)
    are not judged: in a region tree-sitter could not parse, a comment alone can move its error
    recovery around.

    The trees compared are those of :func:`guard_view`, which differs from the text only where
    a block comment stands inside a directive's body; while both texts of a round are their own
    views, the engine's own incremental re-parse serves and the guard parses nothing more.
    Where no tree was parsed yet, a round whose guarded edits lie in top-level items that parse
    alone once edited is judged by those items only (_items_parse_alone, in _FixLoop._guard)."""

    def __init__(self) -> None:
        self.view_tree = None  # the tree of the current text's view, when that view differs
        self.views: tuple[bytes, bytes] = (b"", b"")  # the last text viewed, and its view
        self.literals: LiteralSpans | None = None  # that text's, when they were needed

    def forget(self) -> None:
        """Drop what the guard kept of the last round (a round it judged in another way)."""
        self.view_tree, self.views, self.literals = None, (b"", b""), None

    def literals_of(self, data: bytes) -> LiteralSpans | None:
        """The literal spans of ``data`` if the guard scanned that very text, else None."""
        return self.literals if self.views[0] is data else None

    def reparse(self, tree, steps: list[_Step], literals: LiteralSpans, need_tree: bool):
        """Re-parse the text after ``steps`` incrementally from ``tree`` (the first step's text,
        whose ``literals`` are given); raise _SyntaxLost when the new text parses worse. Returns
        the new text's tree (None without ``need_tree`` when the guard did not need it)."""
        first, final = steps[0].before.data, steps[-1].after
        first_view = self.views[1] if self.views[0] is first else guard_view(first, literals)
        final_view, self.literals = _guard_view(final, None)
        self.views = (final, final_view)
        if first_view is first and final_view is final and self.view_tree is None:
            for step in steps:
                treesitter.edit_tree(tree, step.before, step.edits)
            new_tree = treesitter.parse(final, tree)
            _compare(tree, new_tree, steps)
            return new_tree
        view_tree = self.view_tree
        if view_tree is None:
            view_tree = tree.copy() if first_view is first else treesitter.parse(first_view)
        view_steps = _view_steps(steps, first_view)
        for step in view_steps:
            treesitter.edit_tree(view_tree, step.before, step.edits)
        new_view_tree = treesitter.parse(final_view, view_tree)
        _compare(view_tree, new_view_tree, view_steps)
        self.view_tree = None if final_view is final else new_view_tree
        if not need_tree:
            return None
        for step in steps:
            treesitter.edit_tree(tree, step.before, step.edits)
        return treesitter.parse(final, tree)


def _kept_without_neutral(step: _Step, literals: LiteralSpans) -> bool:
    """Does the round keep the parse once its neutral edits (marker lines, renames) are left
    out? In a region tree-sitter cannot parse (code inside a macro's arguments), a comment line
    moves its error recovery around, and the errors a guarded edit beside it is held to with
    them; the guarded edits alone are what the guard is for. Checked only where the whole
    round failed."""
    if not step.neutral:
        return False
    guarded = [edit for edit in step.edits if edit not in step.neutral]
    after = _apply_sorted(step.before.data, guarded)
    try:
        _ParseGuard().reparse(treesitter.parse(step.before.data),
                              [_Step(step.before, guarded, after, set())], literals, False)
    except _SyntaxLost:
        return False
    return True


def _view_steps(steps: list[_Step], first_view: bytes) -> list[_Step]:
    """``steps`` restated on the guard views: each edit writes the view of what it wrote, and
    a step whose view changed elsewhere too (an edit that opened or closed a directive or a
    comment) gets one more edit covering that difference."""
    view_steps = []
    view = first_view
    for step in steps:
        after_view = guard_view(step.after)
        mapped = []
        neutral = set()
        shift = 0
        for edit in sorted(step.edits):
            start = edit.start + shift
            moved = Edit(edit.start, edit.end, after_view[start : start + len(edit.text)])
            mapped.append(moved)
            if edit in step.neutral:
                neutral.add(moved)
            shift += len(edit.text) - (edit.end - edit.start)
        middle = apply_edits(view, [Diagnostic("", "", 0, 0, Fix("", tuple(mapped)))])
        view_steps.append(_Step(Source("", view), mapped, middle, neutral))
        rest = _difference(middle, after_view)
        if rest is not None:
            view_steps.append(_Step(Source("", middle), [rest], after_view, set()))
        view = after_view
    return view_steps


def _difference(old: bytes, new: bytes) -> Edit | None:
    """The one edit that turns ``old`` into ``new`` (from their first to their last difference)."""
    if old == new:
        return None
    low, high = 0, min(len(old), len(new))  # longest common prefix, by halving
    while low < high:
        middle = (low + high + 1) // 2
        if old[:middle] == new[:middle]:
            low = middle
        else:
            high = middle - 1
    prefix = low
    low, high = 0, min(len(old), len(new)) - prefix  # longest common suffix after it
    while low < high:
        middle = (low + high + 1) // 2
        if old[len(old) - middle :] == new[len(new) - middle :]:
            low = middle
        else:
            high = middle - 1
    return Edit(prefix, len(old) - low, new[prefix : len(new) - low])


def _compare(old_tree, new_tree, steps: list[_Step]) -> None:
    """Raise _SyntaxLost when ``new_tree`` has more parse errors than ``old_tree`` (already told
    of the edits, so both are in the new text's offsets) in a region a guarded edit touched."""
    if not new_tree.root_node.has_error:
        return
    edited = _edited_ranges(steps)
    guarded = [(start, end) for start, end, neutral in edited if not neutral]
    if not guarded:
        return
    regions = _merge([(r.start_byte, r.end_byte) for r in old_tree.changed_ranges(new_tree)]
                     + [(start, end) for start, end, _ in edited])
    starts = [start for start, _ in regions]
    regions = [regions[index] for index in sorted(_count_by_region(guarded, regions, starts))]
    starts = [start for start, _ in regions]
    old_counts = _count_by_region(_error_spans(old_tree, regions, starts), regions, starts)
    new_counts = _count_by_region(_error_spans(new_tree, regions, starts), regions, starts)
    worse = [regions[index] for index, count in sorted(new_counts.items())
             if count > old_counts.get(index, 0)]
    if worse:
        line = steps[-1].after.count(b"\n", 0, worse[0][0]) + 1
        raise _SyntaxLost(f"near line {line}", worse)


def _error_spans(tree, regions, starts) -> list[tuple[int, int]]:
    """(start, end) of the ERROR and MISSING nodes of ``tree`` that touch one of ``regions``
    (sorted, disjoint; ``starts`` their starts)."""
    spans = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        start, end = node.start_byte, node.end_byte
        index = bisect.bisect_right(starts, end) - 1
        if not node.has_error or index < 0 or regions[index][1] < start:
            continue
        if node.is_error or node.is_missing:
            spans.append((start, end))
        stack.extend(node.children)
    return spans


def _count_by_region(spans, regions, starts) -> dict[int, int]:
    """How many of ``spans`` touch each region (sorted, disjoint), by region index."""
    counts: dict[int, int] = {}
    for start, end, *_ in spans:
        index = bisect.bisect_right(starts, end) - 1
        while index >= 0 and regions[index][1] >= start:
            if regions[index][0] <= end:
                counts[index] = counts.get(index, 0) + 1
            index -= 1
    return counts


def _edited_ranges(steps: list[_Step]) -> list[tuple[int, int, bool]]:
    """(start, end, neutral) of what the steps' edits wrote, in the last step's offsets."""
    ranges: list[tuple[int, int, bool]] = []
    for step in steps:
        written = []
        shift = 0
        for edit in sorted(step.edits):
            start = edit.start + shift
            written.append((start, start + len(edit.text), edit in step.neutral))
            shift += len(edit.text) - (edit.end - edit.start)
        ranges = [(_moved(start, step.edits), _moved(end, step.edits), neutral)
                  for start, end, neutral in ranges] + written
    return ranges


def _moved(offset: int, edits) -> int:
    """Where ``offset`` lands once ``edits`` are applied (after an insertion made there)."""
    shift = 0
    for edit in edits:
        if edit.start <= offset:
            shift += len(edit.text) - (min(edit.end, offset) - edit.start)
    return offset + shift


def _merge(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


_DIRECTIVE_WITH_BODY = re.compile(
    rb"[ \t]*#[ \t]*(?:define[ \t]+\w+(?:\([^)\n]*\))?|(?!(?:if|ifdef|ifndef|elif|else|endif|"
    rb"include|include_next|import)\b)\w+)")
_SPLICE = re.compile(rb"\\\r?\n")
# a block comment followed by more text on its line (or left open there), on a directive line
# other than a conditional or an include, or on a continuation line: what guard_view may blank
_DIRECTIVE_COMMENT = re.compile(
    rb"(?:^[ \t]*#[ \t]*(?!(?:if|ifdef|ifndef|elif|else|endif|include)\b)|\\\r?\n)[^\n]*?"
    rb"/\*(?:[^*\n]|\*+[^*/\n])*(?:\*+/[^\n]*?\S|\**$)",
    re.MULTILINE)


def _has_directive_comment(data: bytes) -> bool:
    """``_DIRECTIVE_COMMENT.search(data) is not None``, tried only on the lines that hold a
    ``/*`` (a match stays on one line, from its start or from the line splice ending the line
    before): the pattern's search would try every byte of the file."""
    at = data.find(b"/*")
    while at != -1:
        line = data.rfind(b"\n", 0, at) + 1
        if _DIRECTIVE_COMMENT.match(data, line):
            return True
        if data.endswith(b"\\\n", 0, line):
            splice = line - 2
        elif data.endswith(b"\\\r\n", 0, line):
            splice = line - 3
        else:
            splice = -1
        if splice >= 0 and _DIRECTIVE_COMMENT.match(data, splice):
            return True
        end = data.find(b"\n", at)
        if end == -1:
            return False
        at = data.find(b"/*", end)
    return False


def guard_view(data: bytes, literals: LiteralSpans | None = None) -> bytes:
    """``data`` as the parse guard reads it: a block comment standing between text of a
    directive's body is blanked to spaces (same length; the compiler reads a comment as a
    space). tree-sitter's grammar ends a directive's body at a block comment, so
    ``#define F(x) do { /* note */ f(x); } while (0)`` parses with errors that are not in the
    code, and markers are written into macros as such comments. Returns ``data`` itself
    (the same object) when nothing is blanked."""
    return _guard_view(data, literals)[0]


def _guard_view(data: bytes, literals: LiteralSpans | None) -> tuple[bytes, LiteralSpans | None]:
    """guard_view, and the literal spans of ``data`` when they were needed (else ``literals``)."""
    if not _has_directive_comment(data):
        return data, literals
    literals = literals or LiteralSpans(data)
    # the directive around each comment from one index, not a walk over its lines per comment
    directives = DirectiveSpans(data)
    blanked: list[tuple[int, int]] = []
    for start, end in literals.comments():
        if data[start + 1 : start + 2] != b"*":
            continue
        directive = bisect.bisect_right(directives.starts, start) - 1
        if directive < 0 or start > directives.ends[directive]:
            continue  # on a line that is no directive
        line = data.rfind(b"\n", 0, directives.starts[directive] - 1) + 1
        head = _DIRECTIVE_WITH_BODY.match(data, line)
        if head is None or head.end() > start or literals.covering(line) not in (None, "include"):
            continue
        directive_end = (min(directives.ends[directive] + 1, len(data))
                         if end <= directives.ends[directive] else _directive_end(data, end))
        body_before = _code_between(data, literals, head.end(), start)
        body_after = _code_between(data, literals, end, directive_end)
        if body_before and body_after:
            blanked.append((start, end))
    if not blanked:
        return data, literals
    return blank_spans(data, blanked), literals


def _code_between(data: bytes, literals: LiteralSpans, start: int, end: int) -> bool:
    """Is there text other than blanks, line splices and comments in data[start:end]?"""
    pos = start
    while pos < end:  # a comment may run past ``end``: then nothing after it counts
        pos = _BLANKS.match(data, pos, end).end()
        if pos >= end:
            return False
        splice = _SPLICE.match(data, pos, end)
        if splice is not None:
            pos = splice.end()
            continue
        index = bisect.bisect_right(literals.starts, pos) - 1
        if index < 0 or literals.starts[index] != pos or literals.kinds[index] != "comment":
            return True
        pos = literals.ends[index]
    return False
