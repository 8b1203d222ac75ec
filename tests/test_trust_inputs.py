"""What a tree and the files named on the command line may make rocmigrate do: a tree's own
configuration never has it import the tree's code unless the user opts in from outside the
tree (issue 25, item 1), and every file read by path is a regular file read with a bound: a
device, a FIFO, a folder or an oversized file is a clear error, never a hang or a 23 GB read
(item 3)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import ROOT

from migrator import fsutil
from migrator.cli import _register, app

_register()
runner = CliRunner()

KERNEL = b"__global__ void k(float* p) { p[threadIdx.x] = 1.0f; }\n"
TRUST = "ROCMIGRATE_TRUST_RULES_DIR"


# -- item 1: a cloned tree's rules directory ----------------------------------------------------

def _clone(tmp_path: Path, config_name: str = ".rocmigrate.toml") -> tuple[Path, Path]:
    """A tree as cloned: a configuration naming rules/, whose module writes a marker file when
    imported. Returns (tree, marker)."""
    tree, marker = tmp_path / "clone", tmp_path / "imported"
    (tree / "rules").mkdir(parents=True)
    (tree / "a.cu").write_bytes(KERNEL)
    (tree / "rules" / "evil.py").write_text(
        f"open({str(marker)!r}, 'w').write('the tree ran code')\n")
    text = 'rules-dir = "rules"\n'
    if config_name == "pyproject.toml":
        text = "[tool.rocmigrate]\n" + text
    (tree / config_name).write_text(text)
    return tree, marker


@pytest.fixture
def user(tmp_path, monkeypatch) -> Path:
    """No opt-in of the person running the tests leaks in: an empty XDG_CONFIG_HOME."""
    monkeypatch.delenv(TRUST, raising=False)
    home = tmp_path / "xdg"
    home.mkdir()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    return home


def _commands(tree: Path, out: Path) -> list[list[str]]:
    return [["lint", str(tree / "a.cu")], ["lint", str(tree)],
            ["convert", str(tree), "-o", str(out / "converted")],
            ["report", str(tree), "-o", str(out / "report")],
            ["validate", str(tree), "--build-only", "-o", str(out / "validated")],
            ["harness", str(tree), "--build-only", "-o", str(out / "harness")]]


@pytest.mark.parametrize("config_name", [".rocmigrate.toml", "pyproject.toml"])
def test_a_trees_rules_dir_is_refused_without_opt_in(tmp_path, user, config_name):
    tree, marker = _clone(tmp_path, config_name)
    for args in _commands(tree, tmp_path / "out"):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        message = " ".join(result.output.split())
        assert f"{tree / config_name}: rules-dir 'rules' would import this tree's own" in message
        for how in ("--rules-dir", f"{TRUST}={tree.resolve()}",
                    f"roots = [...] of {user / 'rocmigrate' / 'trusted.toml'}"):
            assert how in message, (args, how)
        assert not marker.exists(), args
    # --config naming the tree's file is not an opt-in either
    result = runner.invoke(app, ["lint", str(tree), "--config", str(tree / config_name)])
    assert result.exit_code == 2 and not marker.exists()


def test_an_opt_in_for_another_tree_trusts_none_of_this_one(tmp_path, user, monkeypatch):
    tree, marker = _clone(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    monkeypatch.setenv(TRUST, f"{other}{os.pathsep}0")
    (user / "rocmigrate").mkdir()
    (user / "rocmigrate" / "trusted.toml").write_text(f'roots = ["{other}"]\n')
    assert runner.invoke(app, ["lint", str(tree)]).exit_code == 2
    assert not marker.exists()


def _opt_in(how: str, tree: Path, user: Path, monkeypatch) -> list[str]:
    """Set up the opt-in ``how``; returns the extra command-line arguments it needs."""
    if how == "flag":
        return ["--rules-dir", str(tree / "rules")]
    if how == "variable=1":
        monkeypatch.setenv(TRUST, "1")
    elif how == "variable=folder":
        monkeypatch.setenv(TRUST, f"/nowhere{os.pathsep}{tree.parent}")  # a folder above it
    else:
        (user / "rocmigrate").mkdir()
        (user / "rocmigrate" / "trusted.toml").write_text(f'roots = ["{tree}"]\n')
    return []


@pytest.mark.parametrize("how", ["flag", "variable=1", "variable=folder", "trusted.toml"])
@pytest.mark.parametrize("command", ["lint", "convert", "report"])
def test_each_kind_of_opt_in_loads_the_rules(tmp_path, user, monkeypatch, how, command):
    tree, marker = _clone(tmp_path)
    extra = _opt_in(how, tree, user, monkeypatch)
    args = {"lint": ["lint", str(tree)],
            "convert": ["convert", str(tree), "-o", str(tmp_path / "out")],
            "report": ["report", str(tree), "-o", str(tmp_path / "report")]}[command]
    result = runner.invoke(app, args + extra + ["--rocm", "6.4"])
    assert result.exit_code in (0, 1), result.output
    assert marker.read_text() == "the tree ran code"


@pytest.mark.parametrize("text, said", [
    ('roots = "/x"\n', "roots must be a list of absolute folders"),
    ("roots = 5\n", "roots must be a list of absolute folders"),
    (None, "cannot read: not a regular file (a FIFO)"),
    ('roots = ["relative/x"]\n', "roots must be a list of absolute folders"),
    ('trusted = ["/x"]\n', "unknown key 'trusted'"),
    ("roots = [\n", "not valid TOML"),
])
def test_a_bad_trusted_file_is_an_error_naming_it(tmp_path, user, text, said):
    tree, marker = _clone(tmp_path)
    (user / "rocmigrate").mkdir()
    if text is None:
        os.mkfifo(user / "rocmigrate" / "trusted.toml")
    else:
        (user / "rocmigrate" / "trusted.toml").write_text(text)
    result = runner.invoke(app, ["lint", str(tree)])
    assert result.exit_code == 2 and said in result.output
    assert str(user / "rocmigrate" / "trusted.toml") in " ".join(result.output.split())
    assert not marker.exists()


# -- item 3: reads by path are bounded -----------------------------------------------------------

def _rocmigrate(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """The command line in a process of its own: a hang fails the test after 60 s."""
    return subprocess.run([sys.executable, "-m", "migrator", *args], cwd=cwd or ROOT,
                          capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))


def _odd_file(kind: str, tmp_path: Path, limit: int) -> Path:
    """A path that is not a usable input: a device, a FIFO, a folder, or a sparse regular file
    one byte over ``limit`` (it takes no disk)."""
    if kind == "device":
        return Path("/dev/zero")
    path = tmp_path / f"odd-{kind}"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    else:
        with open(path, "wb") as handle:
            handle.truncate(limit + 1)
    return path


KINDS = {"device": "not a regular file (a character device)",
         "fifo": "not a regular file (a FIFO)", "folder": "not a regular file (a folder)",
         "oversized": "larger than"}


@pytest.mark.parametrize("kind", KINDS)
def test_read_regular_refuses_what_is_not_a_bounded_regular_file(tmp_path, kind):
    path = _odd_file(kind, tmp_path, 1000)
    with pytest.raises(fsutil.UnreadableFileError, match=KINDS[kind].replace("(", r"\(")
                       .replace(")", r"\)")):
        fsutil.read_regular(path, 1000)
    with pytest.raises(fsutil.UnreadableFileError):
        fsutil.check_regular(path, 1000)
    fine = tmp_path / "fine"
    fine.write_bytes(b"x" * 1000)
    assert fsutil.read_regular(fine, 1000) == b"x" * 1000


def _tree(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "a.cu").write_bytes(KERNEL)
    return tree


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("option, limit", [("--build-report", 64 * fsutil.MiB),
                                           ("--validate-report", 64 * fsutil.MiB),
                                           ("--history-file", 64 * fsutil.MiB)])
def test_report_refuses_an_odd_evidence_or_history_file(tmp_path, kind, option, limit):
    tree = _tree(tmp_path)
    odd = _odd_file(kind, tmp_path, limit)
    result = _rocmigrate("report", str(tree), "-o", str(tmp_path / "r"), "--rocm", "6.4",
                         option, str(odd))
    assert result.returncode == 2, result.stderr
    assert f"{odd}: cannot read: {KINDS[kind]}" in result.stderr
    assert "Traceback" not in result.stderr
    if kind == "oversized":
        assert os.path.getsize(odd) == limit + 1  # left as it was


@pytest.mark.parametrize("kind", KINDS)
def test_a_config_file_that_is_not_one_is_an_error(tmp_path, kind):
    tree = _tree(tmp_path)
    odd = _odd_file(kind, tmp_path, 8 * fsutil.MiB)
    result = _rocmigrate("lint", str(tree), "--config", str(odd))
    assert result.returncode == 2 and f"{odd}: cannot read: {KINDS[kind]}" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("kind", ["device", "fifo", "folder"])
def test_compile_commands_that_is_not_a_file_is_an_error(tmp_path, kind):
    tree = _tree(tmp_path)
    odd = _odd_file(kind, tmp_path, 0)
    result = _rocmigrate("lint", str(tree), "--compile-commands", str(odd))
    assert result.returncode == 2, result.stderr
    assert f"--compile-commands {odd}: {KINDS[kind]}" in result.stderr or \
        "libclang" in result.stderr  # no libclang here: refused before the file is read


def test_odd_caches_are_ignored_not_read(tmp_path):
    """A FIFO or an oversized file where convert's cache or the report's history cache is
    makes the run start afresh: no hang, no read."""
    tree = _tree(tmp_path)
    out = tmp_path / "out"
    (out / ".rocmigrate").mkdir(parents=True)
    os.mkfifo(out / ".rocmigrate" / "cache.json")
    result = _rocmigrate("convert", str(tree), "-o", str(out), "--rocm", "6.4")
    assert result.returncode == 0, result.stderr
    assert (out / "a.cu").exists()
    big = tmp_path / "out2"
    (big / ".rocmigrate").mkdir(parents=True)
    with open(big / ".rocmigrate" / "cache.json", "wb") as handle:
        handle.truncate(fsutil.CACHE_LIMIT + 1)
    result = _rocmigrate("convert", str(tree), "-o", str(big), "--rocm", "6.4")
    assert result.returncode == 0, result.stderr
    from migrator.report.history import BlobCache

    cache = tmp_path / "history-cache.json"
    with open(cache, "wb") as handle:
        handle.truncate(256 * fsutil.MiB + 1)
    loaded = BlobCache(cache, "key")
    assert "larger than 256 MiB" in loaded.note and not loaded.results


def test_harness_files_that_are_not_files_are_errors(tmp_path):
    from migrator.harness.run import HarnessError, run_again
    from migrator.harness.spec import SpecError, load_spec, needs_edit_of

    folder = tmp_path / "built"
    folder.mkdir()
    os.mkfifo(folder / "harness.json")
    with pytest.raises(HarnessError, match=r"harness\.json is not the report of a harness "
                                           r"build: cannot read: not a regular file \(a FIFO\)"):
        run_again(folder)
    spec = tmp_path / "k.toml"
    os.mkfifo(spec)
    with pytest.raises(SpecError, match=r"cannot read: not a regular file \(a FIFO\)"):
        load_spec(spec)
    assert needs_edit_of(spec) == ""
    result = subprocess.run([sys.executable, "-m", "migrator.harness", str(folder)], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "not a regular file (a FIFO)" in result.stderr


def test_a_codeowners_fifo_does_not_hang_the_report(tmp_path):
    from conftest import git

    tree = _tree(tmp_path)
    git(tree, "init", "-q", check=True)
    git(tree, "add", "a.cu", check=True)
    git(tree, "commit", "-qm", "a", check=True)
    os.mkfifo(tree / "CODEOWNERS")
    result = _rocmigrate("report", str(tree), "-o", str(tmp_path / "r"), "--rocm", "6.4")
    assert result.returncode == 0, result.stderr
    assert json.loads((tmp_path / "r" / "report.json").read_text())["summary"]["files"] == 1


@pytest.mark.slow
def test_the_pre_commit_hook_in_a_clone_imports_nothing_of_it(tmp_path):
    """The hook `rocmigrate lint`, run by the real pre-commit in a cloned repository whose
    configuration names its own rules, refuses and says how to opt in."""
    from conftest import git, require_command

    pre_commit = require_command("pre-commit", "pre-commit")
    tree, marker = _clone(tmp_path)
    git(tree, "init", "-q")
    git(tree, "add", ".")
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"),
               XDG_CONFIG_HOME=str(tmp_path / "xdg"))
    env.pop("PYTHONPATH", None)
    env.pop(TRUST, None)
    result = subprocess.run([pre_commit, "try-repo", str(ROOT), "rocmigrate-lint"], cwd=tree,
                            capture_output=True, text=True, env=env, timeout=900)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "would import this tree's own" in result.stdout and TRUST in result.stdout
    assert not marker.exists()
