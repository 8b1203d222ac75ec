"""`rocmigrate lint` names files by paths that open from the working directory, whichever
folder the configuration file is in (issue 29): text, JSON, SARIF, GitHub annotations and
--diff; ``exclude`` and ``per-file-ignores`` still match paths relative to the configuration's
folder."""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from typer.testing import CliRunner

from migrator.cli import _register, app

from test_lint import BAD

_register()

CONFIG = """rocm = "6.4"
exclude = ["skip/*"]
[per-file-ignores]
"src/q*.hip" = ["WAV", "WRP"]
"""


def lint(cwd: Path, *args: str):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(app, ["lint", *args])
    finally:
        os.chdir(old)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    for rel in ("src/bad.hip", "src/quiet.hip", "skip/bad.hip"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(BAD)
    (root / ".rocmigrate.toml").write_text(CONFIG)
    return root


def outputs(cwd: Path, *args: str) -> dict[str, list[tuple[str, str]]]:
    """(path, code) of every finding, as each output format names them."""
    found = {}
    text = lint(cwd, *args)
    assert text.exit_code == 1, text.output
    found["text"] = [(line.split(":")[0], line.split()[1]) for line in text.output.splitlines()
                     if line.count(":") >= 3 and not line.startswith("Found")]
    document = json.loads(lint(cwd, *args, "--output-format", "json").output)
    found["json"] = [(f["path"], f["code"]) for f in document["findings"]]
    sarif = json.loads(lint(cwd, *args, "--output-format", "sarif").output)
    run = sarif["runs"][0]
    base = run["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    assert Path(unquote(urlparse(base).path)).resolve() == cwd.resolve()
    found["sarif"] = []
    for result in run["results"]:
        location = result["locations"][0]["physicalLocation"]["artifactLocation"]
        uri = unquote(location["uri"])
        if location.get("uriBaseId") == "%SRCROOT%":
            assert not uri.startswith("/")
        else:
            assert "uriBaseId" not in location and uri.startswith("file:///")
            uri = urlparse(uri).path
        found["sarif"].append((uri, result["ruleId"]))
    github = lint(cwd, *args, "--output-format", "github").output.splitlines()
    found["github"] = [(line.split("file=", 1)[1].split(",", 1)[0],
                        line.split("title=", 1)[1].split("::", 1)[0])
                       for line in github if "file=" in line]
    return found


def check(found: dict, cwd: Path, expected_paths: set[str]) -> None:
    for output, pairs in found.items():
        paths = {path for path, _ in pairs}
        assert paths == expected_paths, output
        for path in paths:
            assert (cwd / path).is_file(), (output, path)  # opens from the working directory
        quiet = {code for path, code in pairs if path.endswith("quiet.hip")}
        loud = {code for path, code in pairs if path.endswith("src/bad.hip")
                or path == "bad.hip"}
        # per-file-ignores matched src/quiet.hip relative to the configuration's folder
        assert {"WAV001", "WRP003"} <= loud and not any(code[:3] in ("WAV", "WRP")
                                                         for code in quiet), output
        assert "API001" in quiet, output


def test_from_a_subfolder_of_the_configuration_folder(project: Path):
    src = project / "src"
    check(outputs(src, "."), src, {"bad.hip", "quiet.hip"})
    check(outputs(src, "bad.hip", "./quiet.hip"), src, {"bad.hip", "quiet.hip"})
    assert {path for path, _ in outputs(src, "../skip/bad.hip")["text"]} == {"../skip/bad.hip"}


def test_from_a_parent_of_the_configuration_folder(project: Path):
    parent = project.parent
    expected = {"proj/src/bad.hip", "proj/src/quiet.hip"}  # proj/skip: excluded by the config
    check(outputs(parent, "proj"), parent, expected)
    check(outputs(parent, "proj/src/"), parent, expected)
    check(outputs(parent, str(project)), parent, expected)  # absolute inside cwd: relative


def test_a_path_outside_the_working_directory_stays_absolute(project: Path, tmp_path: Path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    found = outputs(elsewhere, str(project / "src"))
    check(found, elsewhere, {str(project / "src" / "bad.hip"), str(project / "src" / "quiet.hip")})


def test_diff_names_the_paths_from_the_working_directory(project: Path):
    shown = lint(project.parent, "proj/src/bad.hip", "--diff")
    heads = [line for line in shown.output.splitlines() if line.startswith(("--- ", "+++ "))]
    assert heads and all(line.split()[1].endswith("proj/src/bad.hip") for line in heads)
    assert not any(line.split()[1].startswith(("src/", "a/src", "b/src")) for line in heads)
