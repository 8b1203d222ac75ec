"""An unpinned target that follows the machine's HIP (issue 29): `report` and `lint` default to
the configured target (`rocm` in the configuration, or --rocm); where none is configured and
`--rocm auto` picks an installed HIP older than the newest release the tables know, every
output says so first (lint: text, JSON, SARIF, GitHub; report: terminal, report.json, .md,
.html), telling the team to pin it. Pinned, nothing is said and the figures are those of a
machine without hipcc."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from migrator.cli import _register, app
from migrator.versions import NEWEST_ROCM
from migrator.workspace import Flags, open_workspace

from test_lint import BAD
from test_report import make_tree
from test_toolchain import _fake_hip, only  # noqa: F401 (a fixture)

_register()

WARNING = (f"target ROCm 5.2 from the installed HIP 5.2.21153-0 (--rocm auto, the default where "
           f"hipcc is found); the tables know up to {NEWEST_ROCM}: figures differ on machines "
           f"with another HIP or none; pin it: rocm = \"{NEWEST_ROCM}\" in [tool.rocmigrate] of "
           f"pyproject.toml or in .rocmigrate.toml (or --rocm {NEWEST_ROCM})")


def invoke(*args: str):
    return CliRunner().invoke(app, list(args))


@pytest.fixture
def hip52(tmp_path_factory, only):  # noqa: F811
    """An installed HIP 5.2 (Debian 12's), and nothing else on PATH."""
    only(_fake_hip(tmp_path_factory.mktemp("hip") / "hip52", "5.2.21153-0"))
    return only


def test_the_workspace_says_it_once_where_auto_follows_an_older_hip(tmp_path, hip52):
    project = tmp_path / "project"
    project.mkdir()
    detected = open_workspace([project], Flags(detect_hip=True))
    assert detected.settings.rocm == (5, 2, 0) and detected.target_warning == WARNING
    assert open_workspace([project], Flags(rocm="auto")).target_warning.startswith(
        "target ROCm 5.2 from the installed HIP 5.2.21153-0 (--rocm auto);")
    for pinned in (Flags(rocm="6.4", detect_hip=True), Flags(rocm="5.2", detect_hip=True),
                   Flags()):
        assert open_workspace([project], pinned).target_warning == ""
    (project / ".rocmigrate.toml").write_text('rocm = "6.4"\n')
    configured = open_workspace([project], Flags(detect_hip=True))
    assert configured.settings.rocm == (6, 4, 0) and configured.target_warning == ""
    hip52(_fake_hip(tmp_path / "hip64", "6.4.43483-a187df25c"))
    (project / ".rocmigrate.toml").unlink()
    newest = open_workspace([project], Flags(detect_hip=True))
    assert newest.settings.rocm == (6, 4, 0) and newest.target_warning == ""


def lint_outputs(folder: Path) -> dict:
    outputs = {}
    for output_format in ("text", "json", "sarif", "github"):
        done = invoke("lint", str(folder), "--output-format", output_format)
        assert done.exit_code == 1, done.output
        outputs[output_format] = done.stdout
    return outputs


def test_lint_says_it_first_in_every_format(tmp_path, hip52):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "bad.hip").write_bytes(BAD)
    out = lint_outputs(tmp_path / "src")
    assert out["text"].splitlines()[0] == f"warning: {WARNING}"
    document = json.loads(out["json"])
    assert document["target"] == {"rocm": "5.2", "warning": WARNING, "reason": (
        "ROCm 5.2, the installed HIP 5.2.21153-0 (--rocm auto, the default where hipcc is "
        "found)")}
    run = json.loads(out["sarif"])["runs"][0]
    assert run["properties"]["target"]["warning"] == WARNING
    first = run["invocations"][0]["toolExecutionNotifications"][0]
    assert first["level"] == "warning" and first["message"]["text"] == WARNING
    assert run["invocations"][0]["executionSuccessful"] is True
    github = out["github"].splitlines()
    assert github[0] == f"::warning title=rocmigrate target::{WARNING}"
    assert github[1].startswith("::notice file=")
    # --diff: stdout stays the patch, the text (warning first) goes to stderr
    shown = CliRunner().invoke(app, ["lint", str(tmp_path / "src"), "--diff"])
    assert shown.stdout.startswith("---") and shown.stderr.startswith(f"warning: {WARNING}\n")


def test_lint_pinned_says_nothing_and_counts_as_without_hipcc(tmp_path, hip52):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "bad.hip").write_bytes(BAD)
    unpinned = lint_outputs(tmp_path / "src")
    (tmp_path / ".rocmigrate.toml").write_text(f'rocm = "{NEWEST_ROCM}"\n')
    pinned = lint_outputs(tmp_path / "src")
    assert not any("warning:" in text or "rocmigrate target" in text or WARNING in text
                   for text in pinned.values())
    assert json.loads(pinned["json"])["target"]["warning"] is None
    assert "toolExecutionNotifications" in pinned["sarif"]
    assert json.loads(pinned["sarif"])["runs"][0]["invocations"][0][
        "toolExecutionNotifications"] == []
    hip52(None)  # a CI runner without hipcc
    without = lint_outputs(tmp_path / "src")
    assert pinned == without
    findings = [f["code"] for f in json.loads(pinned["json"])["findings"]]
    at_52 = [f["code"] for f in json.loads(unpinned["json"])["findings"]]
    assert findings != at_52  # what the pin is for: HIP 5.2 counts other findings
    assert "WRP003" in findings and "WRP003" not in at_52


def report_files(tree: Path, out: Path) -> tuple[str, dict, str, str]:
    done = invoke("report", str(tree), "-o", str(out))
    assert done.exit_code == 0, done.output
    return (done.stdout, json.loads((out / "report.json").read_text()),
            (out / "report.md").read_text(), (out / "report.html").read_text())


def test_report_says_it_first_everywhere(tmp_path, hip52):
    tree = make_tree(tmp_path / "src")
    terminal, document, markdown, html = report_files(tree, tmp_path / "out")
    assert terminal.splitlines()[0] == f"warning: {WARNING}"
    assert document["target"]["rocm"] == "5.2" and document["target"]["warning"] == WARNING
    lines = markdown.splitlines()
    assert lines[0].startswith("# Migration report: src") and lines[1] == ""
    assert lines[2] == f"> **Warning:** {WARNING}"
    banner = re.search(r'<body>\s*<div id="target-warning" role="alert"[^>]*>Warning: (.*?)'
                       r'</div>\s*<header>', html)
    assert banner is not None
    assert banner.group(1) == WARNING.replace('"', "&#34;")


def test_report_pinned_says_nothing_and_counts_as_without_hipcc(tmp_path, hip52):
    tree = make_tree(tmp_path / "src")
    unpinned = report_files(tree, tmp_path / "o1")[1]
    (tree / ".rocmigrate.toml").write_text(f'rocm = "{NEWEST_ROCM}"\n')
    terminal, document, markdown, html = report_files(tree, tmp_path / "o2")
    assert "warning" not in terminal.lower()
    assert document["target"]["warning"] is None and document["target"]["rocm"] == NEWEST_ROCM
    assert "Warning" not in markdown and "target-warning" not in html
    hip52(None)  # a CI runner without hipcc
    without = report_files(tree, tmp_path / "o3")[1]
    assert document["summary"] == without["summary"]
    assert document["summary"] != unpinned["summary"]  # what the pin is for


def test_the_pre_commit_hooks_show_it_and_their_docs_say_pin_it(tmp_path, hip52):
    """The hooks run `rocmigrate lint` on the staged files from the repository's root: unpinned,
    their output starts with the warning; they are verbose, so pre-commit shows it even when
    they pass; the manifest and the README tell the team to pin rocm."""
    import yaml

    from conftest import ROOT

    hooks = {hook["id"]: hook for hook in yaml.safe_load(
        (ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert {hook_id: hook.get("verbose") for hook_id, hook in hooks.items()} == {
        "rocmigrate-lint": True, "rocmigrate-lint-fix": True}
    assert all("pin rocm" in hook["description"] for hook in hooks.values())
    (tmp_path / "good.hip").write_text('#include <hip/hip_runtime.h>\n')
    for hook in hooks.values():
        args = hook["entry"].split()[1:]
        old = os.getcwd()
        os.chdir(tmp_path)
        try:
            done = invoke(*args, "good.hip")
        finally:
            os.chdir(old)
        assert done.exit_code == 0, done.output
        assert done.stdout.splitlines()[0] == f"warning: {WARNING}"
    readme = (ROOT / "README.md").read_text()
    assert "**Pin `rocm` in the project's configuration before adopting the hooks**" in readme
