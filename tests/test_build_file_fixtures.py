"""The generic fixture test of build-file rules (CMake scripts ``*.cmake``, Makefiles ``*.mk``,
shell scripts ``*.sh`` under fixtures/rules/CODE/): findings equal the ``# expect: CODE``
annotations, the fixed output equals ``NAME.fixed.EXT``, the findings and their fixes equal
``NAME.snapshot`` (tests/test_rule_fixtures.py says how both are rewritten), one more pass
changes nothing, and a rule that never fixes writes nothing but markers."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from conftest import updating_fixtures
from fixture_format import DiagnosticLog, check_snapshot, load_fixture, runs_and_snapshot
from migrator import apitables, registry
from migrator.buildfiles import fix_build_file, language_of
from migrator.source import Source
from test_rule_fixtures import BUILD_FIXTURES


def _run(fixture, data: bytes, apply_fixes: bool = True, log: DiagnosticLog | None = None):
    """The build-file fix loop over ``data`` with the fixture's rules; ``log`` records their
    diagnostics."""
    classes = [registry.find(code) for code in (fixture.code, *fixture.also)]
    assert None not in classes, f"fixture folder {fixture.code} names no rule"
    codes = tuple(code for cls in classes for code in cls.codes())
    settings = dataclasses.replace(fixture.settings, select=codes)
    language = language_of(fixture.path.name)
    log = DiagnosticLog() if log is None else log
    rules = [log.watch(cls(), "check") for cls in classes if language in cls.languages]
    assert rules, f"{fixture.code} reads no {language} files"
    return fix_build_file(Source(fixture.path.name, data), rules, settings,
                          apitables.load(variants=settings.table_variants), language,
                          apply_fixes)


@pytest.mark.parametrize("path", BUILD_FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_build_fixture(path: Path):
    fixture = load_fixture(path)
    data = path.read_bytes()
    report, result, text = runs_and_snapshot(_run, fixture, data)
    found = sorted((f.line, f.code) for f in report.findings)
    assert found == fixture.expectations, "findings differ from the # expect: annotations"

    if updating_fixtures():
        fixture.expected_path.write_bytes(result.output)
    assert fixture.expected_path.exists(), f"missing {fixture.expected_path.name}"
    assert result.output == fixture.expected_path.read_bytes()
    check_snapshot(fixture, text)

    again = _run(fixture, result.output)
    assert again.output == result.output, "fixing the fixed output changed it again"
    assert not [f for f in again.findings if f.fixed]
    if registry.find(fixture.code).fix == "never":
        assert not any(f.fixed and f.kind != "attention" for f in result.findings)
