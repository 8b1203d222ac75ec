"""The fix loop of build files (see the package's docs)."""

from __future__ import annotations

from ..apitables import ApiTables
from ..diagnostics import Diagnostic
from ..engine import EngineError, EngineResult, apply_edits, choose_fixes, fixable_flags
from ..registry import code_enabled
from ..results import Finding
from ..rule import CodeTable, code_table
from ..settings import Settings
from ..source import Source
from ..suppression import parse_suppressions
from .cmake import Script, read
from .context import BuildContext

MAX_ROUNDS = 10
BUILD_LIBRARY = "build files"  # the library of a build-file finding that names none


def fix_build_file(source: Source, rules: list, settings: Settings, tables: ApiTables,
                   language: str, apply_fixes: bool = True, related: tuple = (),
                   codes: CodeTable | None = None) -> EngineResult:
    """Run the build rules of ``language`` over one file until nothing changes (``codes``:
    the rules' code_table, when the caller made it already)."""
    table = codes or code_table(rules)
    kinds, chaining = table.kinds, table.chaining
    findings: list[Finding] = []
    reported: set[tuple[str, str, str]] = set()
    current = source
    script = None  # a CMake file's commands, read once per text
    for round_index in range(MAX_ROUNDS):
        ctx = BuildContext(current, settings, tables, language, related)
        if script is not None:
            ctx.script = script  # (a cached property: the guard below read this text)
        diagnostics = [diag for rule in rules for diag in rule.check(ctx)
                       if code_enabled(diag.code, settings.select, settings.ignore)]
        diagnostics = parse_suppressions(current, ctx.comments).filter(current, diagnostics)
        chosen = choose_fixes(diagnostics, settings.unsafe_fixes) if apply_fixes else []
        chosen_ids = {id(diag) for diag in chosen}
        applicable = fixable_flags([diag.fix for diag in diagnostics], settings.unsafe_fixes)
        waiting = {id(diag) for diag, applies in zip(diagnostics, applicable) if applies} \
            - chosen_ids if apply_fixes else ()
        earlier = set(reported)  # an unfixed finding repeats every round: reported once
        for diag in diagnostics:
            if id(diag) in waiting:
                continue  # its fix waits for the next round, which reports it
            fixed = id(diag) in chosen_ids
            key = (diag.code, diag.symbol, diag.message)
            if fixed or key not in earlier:
                reported.add(key)
                findings.append(_finding(current, diag, fixed, kinds))
        if not chosen:
            return EngineResult(current.data, findings, round_index)
        new_data = apply_edits(current.data, chosen)
        if new_data == current.data:
            return EngineResult(current.data, findings, round_index)
        chosen_codes = {d.code for d in chosen}
        if language == "cmake":
            script = _balanced(ctx.script, new_data, chosen_codes)
        if not waiting and chaining.isdisjoint(chosen_codes):
            # every fix that applies was applied and none creates work for another rule (the
            # rules read a build file's CUDA and HIP spellings alike): the rules would find
            # nothing more to fix in the new text
            return EngineResult(new_data, findings, round_index + 1)
        current = Source(source.path, new_data)
    raise EngineError(f"fixes did not converge after {MAX_ROUNDS} rounds; nothing was written")


def _finding(source: Source, diag: Diagnostic, fixed: bool, kinds: dict[str, str]) -> Finding:
    line, column = source.position(diag.start)
    fix = diag.fix
    # a library's link or package counts under the library; other edits apart from the
    # sources' API references ("build files N" in the summary)
    return Finding(source.path, line, column, diag.code, diag.message, diag.severity,
                   diag.library or BUILD_LIBRARY, diag.symbol, fixed, fix.title if fix else "",
                   fix.applicability._value_ if fix else "",
                   "attention" if fix is not None and fix.marker else kinds[diag.code])


def _balanced(before: Script, after: bytes, codes: set[str]) -> Script:
    """The guard the source engine's parse gives: a CMake file whose commands all closed must
    still close them all after the fixes. Returns the fixed text's commands."""
    script = read(after)
    if _unclosed(script) > _unclosed(before):
        raise EngineError(f"the fixed CMake file has an unclosed command (rules involved: "
                          f"{', '.join(sorted(codes))}); nothing was written")
    return script


def _unclosed(script: Script) -> int:
    return sum(1 for command in script.commands if not command.closed)
