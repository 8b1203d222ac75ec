"""The generic fixture test: every rule fixture's findings, fixed output, idempotence, parse
guard and (with hipcc) compilation of the fixed output for AMD."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from conftest import ROOT, hipcc_compile, updating_fixtures
from fixture_format import load_fixture
from migrator import apitables, registry, support
from migrator.buildfiles import language_of
from migrator.engine import fix_source
from migrator.parsing import treesitter
from migrator.source import Source

FIXTURES = sorted(p for p in (ROOT / "fixtures" / "rules").glob("[!_]*/*")
                  if p.is_file() and ".fixed." not in p.name and p.suffix in (".cu", ".cuh", ".cpp", ".h", ".hip"))
# build files (CMake, Makefiles, shell scripts): tests/test_build_file_fixtures.py
BUILD_FIXTURES = sorted(p for p in (ROOT / "fixtures" / "rules").glob("[!_]*/*")
                        if p.is_file() and ".fixed." not in p.name and language_of(p.name))


def _rule_for(code: str):
    cls = registry.find(code)
    assert cls is not None, f"fixture folder {code} names no rule"
    return cls


def _run(fixture, data: bytes, apply_fixes: bool = True):
    classes = [_rule_for(code) for code in (fixture.code, *fixture.also)]
    codes = tuple(code for cls in classes for code in cls.codes())
    settings = dataclasses.replace(fixture.settings, select=codes, report_unused_suppressions=True)
    source = Source(fixture.path.name, data)
    return fix_source(source, [cls() for cls in classes], settings,
                      apitables.load(variants=settings.table_variants), apply_fixes=apply_fixes)


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
    report = _run(fixture, data, apply_fixes=False)
    found = sorted((f.line, f.code) for f in report.findings)
    assert found == fixture.expectations, "findings differ from the // expect: annotations"

    result = _run(fixture, data)
    if updating_fixtures():
        fixture.expected_path.write_bytes(result.output)
    assert fixture.expected_path.exists(), f"missing {fixture.expected_path.name}"
    assert result.output == fixture.expected_path.read_bytes()

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
