"""The generic fixture test: every rule fixture's findings, fixed output, snapshot, idempotence,
parse guard and (with hipcc) compilation of the fixed output for AMD.

Beside each fixture ``NAME.cu`` lie ``NAME.fixed.cu`` (the output with fixes applied) and
``NAME.snapshot``: each finding's ``line:col CODE message``, its fix's title, applicability and
edits, and whether it applied (tests/fixture_format.py writes it). A changed message or fix text
fails here and shows in review as a change to the snapshot. One command rewrites the fixed
outputs and snapshots of every rule fixture, build files too (then read the diff)::

    UPDATE_FIXTURES=1 .venv/bin/python -m pytest tests/test_rule_fixtures.py tests/test_build_file_fixtures.py
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from unittest import mock

import pytest

from conftest import ROOT, hipcc_compile, updating_fixtures
from fixture_format import (SNAPSHOT_SUFFIX, DiagnosticLog, check_snapshot, compare_snapshot,
                            load_fixture, runs_and_snapshot, snapshot_block)
from migrator import apitables, engine, registry, support
from migrator.buildfiles import language_of
from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.parsing import treesitter
from migrator.source import Source

FIXTURES = sorted(p for p in (ROOT / "fixtures" / "rules").glob("[!_]*/*")
                  if p.is_file() and ".fixed." not in p.name and p.suffix in (".cu", ".cuh", ".cpp", ".h", ".hip"))
# build files (CMake, Makefiles, shell scripts): tests/test_build_file_fixtures.py
BUILD_FIXTURES = sorted(p for p in (ROOT / "fixtures" / "rules").glob("[!_]*/*")
                        if p.is_file() and ".fixed." not in p.name and language_of(p.name)
                        and p.suffix != SNAPSHOT_SUFFIX)


def _rule_for(code: str):
    cls = registry.find(code)
    assert cls is not None, f"fixture folder {code} names no rule"
    return cls


def _run(fixture, data: bytes, apply_fixes: bool = True, log: DiagnosticLog | None = None):
    """The fix loop over ``data`` with the fixture's rules; ``log`` records their diagnostics
    (and the unused suppressions')."""
    classes = [_rule_for(code) for code in (fixture.code, *fixture.also)]
    codes = tuple(code for cls in classes for code in cls.codes())
    settings = dataclasses.replace(fixture.settings, select=codes, report_unused_suppressions=True)
    source = Source(fixture.path.name, data)
    log = DiagnosticLog() if log is None else log
    rules = [log.watch(cls()) for cls in classes]
    tables = apitables.load(variants=settings.table_variants)
    with mock.patch.object(engine, "unused_suppressions", log.logged(engine.unused_suppressions)):
        return engine.fix_source(source, rules, settings, tables, apply_fixes=apply_fixes)


def test_every_rule_has_fixtures():
    folders = {p.name for p in (ROOT / "fixtures" / "rules").iterdir() if p.is_dir()}
    for cls in registry.all_rules():
        assert cls.code in folders, f"rule {cls.code} has no fixtures/rules/{cls.code}/"


def test_every_rule_code_is_in_some_fixture():
    """Each code a rule can report (API002-API004 beside API001, ...) is expected somewhere:
    a code no fixture produces is a path no test has seen."""
    expected = {code for path in FIXTURES + BUILD_FIXTURES
                for _, code in load_fixture(path).expectations}
    codes = {code for cls in registry.all_rules() for code in cls.codes()}
    assert codes - expected == set(), "codes no fixture expects"


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixture(path: Path, tmp_path: Path):
    fixture = load_fixture(path)
    data = path.read_bytes()
    report, result, text = runs_and_snapshot(_run, fixture, data)
    found = sorted((f.line, f.code) for f in report.findings)
    assert found == fixture.expectations, "findings differ from the // expect: annotations"

    if updating_fixtures():
        fixture.expected_path.write_bytes(result.output)
    assert fixture.expected_path.exists(), f"missing {fixture.expected_path.name}"
    assert result.output == fixture.expected_path.read_bytes()
    check_snapshot(fixture, text)

    # one more single pass over the fixed output changes nothing (no oscillation)
    cls = _rule_for(fixture.code)
    again = _run(fixture, result.output)
    assert again.output == result.output, "fixing the fixed output changed it again"
    assert not [f for f in again.findings if f.fixed]

    # fixes never make the file parse worse
    assert treesitter.error_count(treesitter.parse(result.output)) <= treesitter.error_count(
        treesitter.parse(data))
    # the rule's declared fix availability holds
    fixed_any = any(f.fixed and f.kind != "attention" for f in result.findings)
    if cls.fix == "never":
        assert not fixed_any


def test_a_changed_message_or_fix_fails_the_snapshot(tmp_path: Path):
    """The snapshot pins each finding's message (PTX001's is checked nowhere else) and its
    fix's text: a snapshot that differs in either from what the rules report fails."""
    for case, old, new in (("PTX001/asm.cu", "AMD GPUs cannot run PTX", "AMD cannot run PTX"),
                           ("LOW001/unsafe.cu", '-> "static_cast<float>"', '-> "float"')):
        path = ROOT / "fixtures" / "rules" / case
        fixture = load_fixture(path)
        text = runs_and_snapshot(_run, fixture, path.read_bytes())[2]
        compare_snapshot(fixture.snapshot_path, text)
        assert old in text
        changed = tmp_path / fixture.snapshot_path.name
        changed.write_text(text.replace(old, new, 1))
        line = next(line for line in text.splitlines() if old in line)
        with pytest.raises(pytest.fail.Exception, match=re.escape(f"\n+{line}\n")):
            compare_snapshot(changed, text)


def test_a_snapshot_escapes_what_is_not_utf8_text():
    """A snapshot is UTF-8 text of one line per edit: other bytes, newlines, quotes escaped."""
    source = Source("x.cu", b"int caf\xe9 = 1;\tcudaFoo();\n")
    diag = Diagnostic("API002", "cudaFoo: none in HIP", 14, 21, Fix("mark", (
        Edit(0, 0, b"// \"no\" \\ HIP\n"), Edit(4, 8, b"cafe"))))
    assert snapshot_block(source, diag, False) == [
        "1:15 API002 cudaFoo: none in HIP",
        "  fix (safe, not applied): mark",
        '  1:1 insert "// \\"no\\" \\\\ HIP\\n"',
        '  1:5-1:9 "caf\\xe9" -> "cafe"']


COMPILED = [path for path in FIXTURES if load_fixture(path).compile]


@pytest.mark.slow
@pytest.mark.parametrize("path", COMPILED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixed_fixture_compiles_for_amd(path: Path, tmp_path: Path):
    """The expected output of a fixture compiles with hipcc for gfx90a (with the support
    headers it includes, as a run writes them beside its output); where the fixture says the
    fix is what makes it build, the input does not."""
    fixture = load_fixture(path)
    result = _run(fixture, path.read_bytes())
    assert result.output == fixture.expected_path.read_bytes()
    for name in support.referenced(result.output):
        (tmp_path / name).write_bytes(support.render(name, fixture.settings))
    include = ("-I", str(tmp_path))
    compiled = hipcc_compile(fixture.expected_path, tmp_path, include)
    assert compiled.returncode == 0, compiled.stderr[-3000:]
    if not fixture.input_compiles:  # the fix is what makes it build: prove the input fails
        assert hipcc_compile(fixture.path, tmp_path, include).returncode != 0
