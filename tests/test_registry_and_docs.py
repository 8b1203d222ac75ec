"""Rule identity, documentation and the `rule` command."""

from __future__ import annotations

from typer.testing import CliRunner

from migrator import registry
from migrator.cli import _register, app
from migrator.rule import DOC_SECTIONS

_register()


def test_codes_are_unique_and_docs_complete():
    rules = registry.all_rules()
    codes = [code for cls in rules for code in cls.codes()]
    assert len(codes) == len(set(codes))
    for cls in rules:
        assert cls.validate() == []
        doc = cls.documentation()
        positions = [doc.index(f"## {section}") for section in DOC_SECTIONS]
        assert positions == sorted(positions), f"{cls.code}: doc sections out of order"


def test_select_by_prefix_and_ignore():
    rules = registry.all_rules()
    chosen = registry.select(rules, ("API", "WRP001"), ())
    assert {cls.code for cls in chosen} == {"API001", "WRP001"}
    assert "HDR001" not in {cls.code for cls in registry.select(rules, (), ("HDR",))}
    # an extra code selects its rule
    assert [cls.code for cls in registry.select(rules, ("ARG002",), ())] == ["ARG001"]


def test_rule_command():
    runner = CliRunner()
    listing = runner.invoke(app, ["rule", "--all"])
    assert listing.exit_code == 0
    for cls in registry.all_rules():
        assert cls.name in listing.output
    doc = runner.invoke(app, ["rule", "API003"])
    assert doc.exit_code == 0
    assert "# API001: cuda-api-rename" in doc.output and "## Fix safety" in doc.output
    assert runner.invoke(app, ["rule", "XYZ999"]).exit_code == 2


def test_user_rules_directory(tmp_path):
    (tmp_path / "team_rule.py").write_text('''
from migrator.rule import Rule
from migrator.diagnostics import Diagnostic

class NoPrintf(Rule):
    """Flag printf in kernels.

    ## What it does
    Reports printf.
    ## Why is this bad on AMD
    Slow.
    ## Example
    printf("x");
    ## Use instead
    Nothing.
    ## Fix safety
    No fix.
    """
    code = "TEA001"
    name = "no-printf"
    summary = "printf in device code"

    def check(self, ctx):
        start = ctx.data.find(b"printf")
        if start >= 0:
            yield Diagnostic("TEA001", "printf", start, start + 6)
''')
    rules = registry.all_rules(tmp_path)
    assert "TEA001" in {cls.code for cls in rules}
