"""Whole-tree conversion fixtures: fixtures/convert/<case>/{input, expected, case.json}.

For each case: the converted tree equals ``expected`` (files, bytes, symlinks); file statuses and
the exit code are as recorded; converting the output again changes nothing; an unchanged re-run
converts nothing and an edit re-converts exactly the edited file; inputs compile with nvcc and
outputs with hipcc for AMD where the case lists them."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import ROOT, hipcc_compile, nvcc_compile, updating_fixtures
from migrator.cli import _register, app
from migrator.runner import output_name
from migrator.settings import Settings
from migrator.versions import DEFAULT_ROCM
from migrator.workspace.includes import included_files

_register()
CASES = sorted(p for p in (ROOT / "fixtures" / "convert").iterdir() if (p / "case.json").exists())


def _tree(root: Path) -> dict[str, tuple[str, bytes | str]]:
    found = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".rocmigrate"]
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                found[rel] = ("link", os.readlink(path))
            elif path.is_file():
                found[rel] = ("file", path.read_bytes())
    return found


def _convert(source: Path, out: Path, args: list[str]):
    """Convert as case.json says; a case that names no target is recorded at the library's
    default, not at the ROCm of the HIP this machine has (the command's default)."""
    target = [] if any(arg.startswith("--rocm") for arg in args) else ["--rocm", DEFAULT_ROCM]
    result = CliRunner().invoke(app, ["convert", str(source), "-o", str(out), "--format", "json",
                                      *target, *args])
    return result.exit_code, json.loads(result.stdout)


@pytest.fixture(params=CASES, ids=lambda p: p.name)
def case(request, tmp_path):
    folder = request.param
    spec = json.loads((folder / "case.json").read_text())
    work = tmp_path / "work"
    shutil.copytree(folder / "input", work, symlinks=True)
    return folder, spec, work


def test_converted_tree_matches_expected(case, tmp_path):
    folder, spec, work = case
    out = tmp_path / "out"
    code, report = _convert(work / spec["source"], out, spec["args"])
    assert code == spec["exit_code"]
    assert {f["path"]: f["status"] for f in report["files"]} == spec["statuses"]
    expected = folder / "expected"
    if updating_fixtures():
        shutil.rmtree(expected, ignore_errors=True)
        shutil.copytree(out, expected, symlinks=True, ignore=shutil.ignore_patterns(".rocmigrate"))
    assert _tree(out) == _tree(expected)


def test_idempotent_and_incremental(case, tmp_path):
    folder, spec, work = case
    source = work / spec["source"]
    out = tmp_path / "out"
    _convert(source, out, spec["args"])
    # converting the output again changes nothing
    code, again = _convert(out, tmp_path / "again", spec["args"])
    assert again["summary"]["files"]["converted"] == 0
    before, after = _tree(out), _tree(tmp_path / "again")
    assert {k: v for k, v in after.items() if k in before} == {k: v for k, v in before.items() if k in after}
    # an unchanged re-run converts nothing
    _, rerun = _convert(source, out, spec["args"])
    assert rerun["summary"]["files"]["converted"] == 0
    converted = [p for p, s in spec["statuses"].items() if s == "converted"]
    # editing one source re-converts exactly that file and the sources that include it
    edited = source / converted[0]
    includers = sorted(rel for rel in converted if converted[0] in _includes(source, rel))
    edited.write_bytes(edited.read_bytes() + b"\n// edited\n")
    _, incremental = _convert(source, out, spec["args"])
    assert sorted(f["path"] for f in incremental["files"] if f["status"] == "converted") == \
        sorted([converted[0], *includers])
    out_name = output_name(converted[0], Settings(rename_ext="--rename-ext" in spec["args"]))
    assert (out / out_name).read_bytes().endswith(b"\n// edited\n")


def _includes(root: Path, rel: str) -> set[str]:
    """The tree files ``rel`` includes (its #include "..." lines, followed)."""
    files = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
    return {inc.rel for inc in included_files(rel, (root / rel).read_bytes(), files,
                                              lambda r: (root / r).read_bytes())}


@pytest.mark.slow
def test_inputs_compile_with_nvcc(case, tmp_path):
    folder, spec, work = case
    for rel in spec.get("compile_cuda", []):
        compiled = nvcc_compile(work / spec["source"] / rel, tmp_path)
        assert compiled.returncode == 0, f"{rel}: {compiled.stderr[-3000:]}"


@pytest.mark.slow
def test_expected_outputs_compile_with_hipcc(case, tmp_path):
    folder, spec, work = case
    for rel in spec.get("compile_hip", []):
        compiled = hipcc_compile(folder / "expected" / rel, tmp_path)
        assert compiled.returncode == 0, f"{rel}: {compiled.stderr[-3000:]}"
