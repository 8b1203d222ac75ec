"""Reading rule fixtures: settings header, ``// expect: CODE`` annotations (``# expect: CODE`` in
build files); writing and checking their snapshots (``NAME.snapshot``: each finding's
``line:col CODE message`` and its fix's edits)."""

from __future__ import annotations

import difflib
import re
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from conftest import updating_fixtures
from migrator.diagnostics import Diagnostic, Finding
from migrator.settings import Settings
from migrator.source import Source
from migrator.versions import parse_version

# in a source fixture's comments, or a build file's ('#')
_SETTINGS = re.compile(rb"(?://|#)\s*rocmigrate-fixture:\s*(.*)")
_EXPECT = re.compile(rb"(?://|/\*|#)\s*expect:\s*([A-Z0-9, ]+)")


@dataclass
class RuleFixture:
    path: Path
    expected_path: Path
    code: str
    settings: Settings
    compile: bool
    expectations: list[tuple[int, str]]  # (line, code), sorted
    input_compiles: bool = True
    hip64: bool = True  # converted at ROCm 6.4 it parses against HIP 6.4 (no: written for HIP 5.x)
    also: tuple[str, ...] = ()  # further rule codes run with the fixture's rule
    # hip64=yes written out: parsed against HIP 6.4 even where hipcc 5.2 cannot compile it
    hip64_only: bool = False

    @property
    def snapshot_path(self) -> Path:
        return self.path.with_name(self.path.name[: -len("".join(self.path.suffixes))]
                                   + SNAPSHOT_SUFFIX)


def load_fixture(path: Path) -> RuleFixture:
    data = path.read_bytes()
    options = {}
    match = _SETTINGS.search(data)
    if match:
        for item in match.group(1).decode().split():
            key, _, value = item.partition("=")
            options[key] = value
    settings = Settings(
        rocm=parse_version(options.get("rocm", "6.4")),
        launch_syntax=options.get("launch_syntax", "chevron"),
        rename_ext=options.get("rename_ext") == "yes",
        unsafe_fixes=options.get("unsafe") == "yes",
        wavefront_size=int(options.get("wavefront", "64")),
        roc=options.get("roc") == "yes",
        dnn=options.get("dnn", "report"),
        runtime=options.get("runtime", "rocm"),
    )
    if options.get("clang") == "yes":  # --clang: libclang reads the fixture in its folder
        settings = replace(settings, clang_root=path.parent.resolve())
    if "offload_arch" in options:  # build-file rules map CUDA architectures to these
        settings = replace(settings, offload_archs=tuple(options["offload_arch"].split(",")))
    expectations = []
    for number, line in enumerate(data.split(b"\n"), start=1):
        found = _EXPECT.search(line)
        if found:
            for code in found.group(1).decode().split(","):
                if code.strip():
                    expectations.append((number + 1, code.strip()))
    stem = path.name[: -len("".join(path.suffixes))]
    expected = path.with_name(stem + ".fixed" + "".join(path.suffixes))
    return RuleFixture(path, expected, path.parent.name, settings,
                       options.get("compile", "yes") == "yes", sorted(expectations),
                       options.get("input_compiles", "yes") == "yes",
                       options.get("hip64", "yes") == "yes",
                       tuple(c for c in options.get("also", "").split(",") if c),
                       hip64_only=options.get("hip64") == "yes")


# --- snapshots ------------------------------------------------------------------------------

SNAPSHOT_SUFFIX = ".snapshot"
UPDATE_COMMAND = ("UPDATE_FIXTURES=1 .venv/bin/python -m pytest tests/test_rule_fixtures.py "
                  "tests/test_build_file_fixtures.py")


class DiagnosticLog:
    """Every diagnostic a fix loop's rules made, round by round with the text each round read:
    a finding carries its fix's title only, its diagnostic has the edits."""

    def __init__(self) -> None:
        self.rounds: list[tuple[Source, list[Diagnostic]]] = []

    def add(self, source: Source, diagnostics: list[Diagnostic]) -> None:
        if not self.rounds or self.rounds[-1][0] is not source:
            self.rounds.append((source, []))
        self.rounds[-1][1].extend(diagnostics)

    def watch(self, rule, method: str = "check_renames"):
        """``rule``, logging what its ``method`` reports (check_renames: the bulk renames too;
        the build-file fix loop calls check)."""
        check = getattr(rule, method)

        def logged(ctx):
            found = check(ctx)
            if method == "check_renames":
                found, renames = list(found[0]), found[1]
                self.add(ctx.source, found + (renames.diagnostics() if renames else []))
                return found, renames
            found = list(found)
            self.add(ctx.source, found)
            return found

        setattr(rule, method, logged)
        return rule

    def logged(self, function):
        """``function(source, ...)`` logging the diagnostics it returns (the engine's unused
        suppressions)."""
        def logged(source, *args):
            found = function(source, *args)
            self.add(source, found)
            return found
        return logged

    def placed(self, findings: list[Finding]) -> list[tuple[int, Source, Diagnostic, Finding]]:
        """Each finding with its round, the text that round read and its diagnostic (the fix
        loop reports round by round)."""
        placed, used, index = [], set(), 0
        for finding in findings:
            key = (finding.line, finding.column, finding.code, finding.message, finding.fix_title)
            while True:
                assert index < len(self.rounds), f"no logged diagnostic reports {finding}"
                source, diagnostics = self.rounds[index]
                match = next((n for n, diag in enumerate(diagnostics) if (index, n) not in used
                              and (*source.position(diag.start), diag.code, diag.message,
                                   diag.fix.title if diag.fix else "") == key), None)
                if match is not None:
                    break
                index += 1
            used.add((index, match))
            placed.append((index, source, diagnostics[match], finding))
        return placed


def runs_and_snapshot(run, fixture: RuleFixture, data: bytes):
    """The fix loop ``run(fixture, data, apply_fixes, log)`` without fixes (as lint) and with
    them (as convert), and the snapshot of both."""
    unfixed, fixed = DiagnosticLog(), DiagnosticLog()
    report = run(fixture, data, False, unfixed)
    result = run(fixture, data, True, fixed)
    return report, result, snapshot((fixed, result.findings), (unfixed, report.findings))


def snapshot(fixed: tuple[DiagnosticLog, list[Finding]],
             unfixed: tuple[DiagnosticLog, list[Finding]]) -> str:
    """The snapshot of a fixture: the findings of the run that applies fixes (convert), round
    by round, then those the run without fixes (lint) reports besides; each ``line:col CODE
    message``, then its fix: title, applicability, whether applied, and its edits."""
    lines = ["# with fixes applied (convert)"]
    seen: Counter = Counter()
    last_round = 0
    for index, source, diag, finding in sorted(fixed[0].placed(fixed[1]), key=_order):
        if index != last_round:
            lines.append(f"# round {index + 1}: in the text the fixes of round {index} wrote")
            last_round = index
        lines += snapshot_block(source, diag, finding.fixed)
        if index == 0:
            seen[tuple(snapshot_block(source, diag, None))] += 1
    besides = []
    for _, source, diag, _ in sorted(unfixed[0].placed(unfixed[1]), key=_order):
        block = snapshot_block(source, diag, None)
        if seen[tuple(block)]:
            seen[tuple(block)] -= 1
        else:
            besides += block
    if besides:
        lines += ["# without fixes (lint), besides the above", *besides]
    return "\n".join(lines) + "\n"


def _order(placed: tuple[int, Source, Diagnostic, Finding]):
    index, _, diag, finding = placed
    return index, finding.line, finding.column, diag.code, diag.message


def snapshot_block(source: Source, diag: Diagnostic, applied: bool | None) -> list[str]:
    """A finding's lines; ``applied`` None: a run that applies no fix."""
    line, column = source.position(diag.start)
    block = [f"{line}:{column} {diag.code} {_escaped(diag.message, quote=False)}"]
    fix = diag.fix
    if fix is None:
        return block
    status = "" if applied is None else (", applied" if applied else ", not applied")
    block.append(f"  fix ({fix.applicability.value}{status}): {_escaped(fix.title, quote=False)}")
    for edit in sorted(fix.edits):
        start = "{}:{}".format(*source.position(edit.start))
        old = source.data[edit.start : edit.end]
        if not old:
            block.append(f"  {start} insert {_escaped(edit.text)}")
            continue
        span = start + "-{}:{}".format(*source.position(edit.end))
        block.append(f"  {span} {_escaped(old)} -> {_escaped(edit.text)}" if edit.text
                     else f"  {span} delete {_escaped(old)}")
    block += [f"  include {header}" for header in fix.includes]
    block += [f"  define {name}" for name in fix.defines]
    return block


_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escaped(text: str | bytes, quote: bool = True) -> str:
    """``text`` on one line: newlines, tabs and other unprintable characters escaped, bytes
    that are not UTF-8 as ``\\xNN``; ``quote``: in double quotes, with ``\\`` and ``"``
    escaped too."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "surrogateescape")
    escapes = {**_ESCAPES, "\\": "\\\\", '"': '\\"'} if quote else _ESCAPES
    out = []
    for char in text:
        if char in escapes:
            out.append(escapes[char])
        elif "\udc80" <= char <= "\udcff":  # a byte that is not UTF-8
            out.append(f"\\x{ord(char) - 0xdc00:02x}")
        elif not char.isprintable():
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return f'"{"".join(out)}"' if quote else "".join(out)


def check_snapshot(fixture: RuleFixture, text: str) -> None:
    """The fixture's snapshot is ``text`` (rewritten first under ``UPDATE_FIXTURES=1``)."""
    path = fixture.snapshot_path
    if updating_fixtures():
        path.write_bytes(text.encode())
    if not path.exists():
        pytest.fail(f"missing {path.name}: {UPDATE_COMMAND} writes it")
    compare_snapshot(path, text)


def compare_snapshot(path: Path, text: str) -> None:
    """Fail with the difference when the snapshot at ``path`` is not ``text``."""
    expected = path.read_bytes().decode()
    if expected != text:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), text.splitlines(True),
                                            path.name, "now"))
        pytest.fail(f"{path.name} differs from what the rules report now (if intended: "
                    f"{UPDATE_COMMAND}):\n{diff}", pytrace=False)
