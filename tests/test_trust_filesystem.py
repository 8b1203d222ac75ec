"""`rocmigrate convert` and the file system it is handed: an untrusted cache, symlinks in the
output, old output trees in the source, the in-place checks, loops, unreadable folders, output
name clashes, unwritable outputs, and findings kept by the cache."""

from __future__ import annotations

import errno
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import ROOT, git, require, require_path

from migrator import fsutil
from migrator.results import text_columns
from migrator.cli import _register, app

_register()
runner = CliRunner()

CUDA_FILE = b"""#include <cuda_runtime.h>
__global__ void k(float* p) { p[threadIdx.x] = 1.0f; }
int main() {
  float* d;
  cudaMalloc(&d, 64 * sizeof(float));
  k<<<1, 64>>>(d);
  cudaFree(d);
  return 0;
}
"""
HEADER = b"#pragma once\ninline void sync() { cudaDeviceSynchronize(); }\n"


def convert(*args: str):
    """Run `rocmigrate convert`; a traceback is a defect, whatever the exit code."""
    result = runner.invoke(app, ["convert", *map(str, args)])
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"traceback: {result.exception!r}\n{result.output}")
    return result


def convert_json(*args) -> tuple[int, dict]:
    result = convert(*args, "--format", "json")
    return result.exit_code, json.loads(result.output)


def make_tree(root: Path) -> Path:
    src = root / "src"
    (src / "sub").mkdir(parents=True)
    (src / "main.cu").write_bytes(CUDA_FILE)
    (src / "sub" / "util.cuh").write_bytes(HEADER)
    (src / "notes.txt").write_bytes(b"not code\n")
    return src


def statuses(report: dict) -> dict[str, tuple[str, str]]:
    return {f["path"]: (f["status"], f["message"]) for f in report["files"]}


def cache_of(out: Path) -> dict:
    return json.loads((out / ".rocmigrate" / "cache.json").read_text())


def write_cache(out: Path, cache) -> None:
    (out / ".rocmigrate" / "cache.json").write_text(json.dumps(cache))


# 1. the cache is untrusted input


@pytest.mark.parametrize("same_key", [True, False])
def test_a_poisoned_cache_deletes_nothing_outside_the_output(tmp_path: Path, same_key: bool):
    src, out = make_tree(tmp_path), tmp_path / "out"
    assert convert(src, "-o", out).exit_code == 0
    victims = [tmp_path / "victim_absolute.txt", tmp_path / "v2.txt", tmp_path / "v3.txt"]
    for victim in victims:
        victim.write_text("keep me")
    cache = cache_of(out)
    entry = dict(cache["files"]["notes.txt"])
    for name, output in (("gone1.txt", str(victims[0])), ("gone2.txt", "../v2.txt"),
                         ("gone3.txt", "sub/../../v3.txt")):
        cache["files"][name] = dict(entry, output=output)
    if not same_key:
        cache["key"] = "an older version"
    write_cache(out, cache)
    code, report = convert_json(src, "-o", out)
    assert code == 0
    assert all(victim.read_text() == "keep me" for victim in victims)
    assert report["summary"]["removed_stale_outputs"] == []
    assert (out / "main.cu").is_file()


def test_stale_outputs_are_never_removed_through_symlinks(tmp_path: Path):
    src, out = make_tree(tmp_path), tmp_path / "out"
    assert convert(src, "-o", out).exit_code == 0
    # out/sub now leads elsewhere; the source of its only output goes away
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "util.cuh").write_text("keep me")
    shutil.rmtree(out / "sub")
    os.symlink("../victim", out / "sub")
    shutil.rmtree(src / "sub")
    # and a stale output that is itself a symlink to a file outside
    (tmp_path / "outside.txt").write_text("keep me too")
    (src / "notes.txt").unlink()
    (out / "notes.txt").unlink()
    os.symlink(tmp_path / "outside.txt", out / "notes.txt")
    code, report = convert_json(src, "-o", out)
    assert code == 0
    assert (victim / "util.cuh").read_text() == "keep me"
    assert (tmp_path / "outside.txt").read_text() == "keep me too"
    assert report["summary"]["removed_stale_outputs"] == []


@pytest.mark.parametrize("cache", [
    [], {"files": []}, None, "text", {"key": 1, "files": {"main.cu": "x"}},
    {"files": {"main.cu": {"output": 5}}},
    {"files": {"main.cu": {"output": ["main.cu"]}}}, {"files": {"main.cu": None}}, [[[[[]]]]],
], ids=repr)
def test_a_malformed_cache_is_ignored(tmp_path: Path, cache):
    src, out = make_tree(tmp_path), tmp_path / "out"
    assert convert(src, "-o", out).exit_code == 0
    write_cache(out, cache)
    (out / "main.cu").unlink()
    code, report = convert_json(src, "-o", out)
    assert code == 0, report["summary"]["failures"]
    assert report["summary"]["files"]["converted"] == 2  # no cache: everything converted again
    assert b"hipMalloc" in (out / "main.cu").read_bytes()
    assert isinstance(cache_of(out)["files"], dict)  # and a good cache written in its place


@pytest.mark.parametrize("field, value", [
    ("stat", "12"), ("stat", [1, 2, 3]), ("stat", [True, 1]), ("source", {"size": 1}),
    ("input", 7), ("output", "/etc/passwd"), ("output", ".rocmigrate/cache.json"),
    ("findings", {}), ("findings", [["main.cu", "one", 1]]), ("findings", [[None]] * 12),
    ("findings", [[10**6], [1], [1], [0], [0], [0], [0], [0], [True], [0], [0], [False]]),
    ("findings", [[-1], [1], [1], [0], [0], [0], [0], [0], [True], [0], [0], [False]]),
    ("findings", [[0], [1], [1], [0], [0], [0], [0], [0], [1], [0], [0], [False]]),
    ("findings", [[0], [1], [1], [0], [0], [0], [0], [0], [True], [0], [0], []]),
    ("strings", [1]), ("strings", "abc"),
    ("support", "rocmigrate_atomics.h"), ("support", ["../rocmigrate_atomics.h"]),
    ("support", ["sub/../../rocmigrate_atomics.h"]), ("support", ["not_a_support_header.h"]),
])
def test_a_cache_entry_of_the_wrong_shape_means_no_cache(tmp_path: Path, field: str, value):
    src, out = make_tree(tmp_path), tmp_path / "out"
    assert convert(src, "-o", out).exit_code == 0
    cache = cache_of(out)
    if field == "strings":
        cache["strings"] = value
    else:
        cache["files"]["main.cu"][field] = value
    write_cache(out, cache)
    code, report = convert_json(src, "-o", out)
    assert code == 0, report["summary"]["failures"]
    assert report["summary"]["files"]["converted"] == 2
    assert Path("/etc/passwd").exists() and not (tmp_path / "rocmigrate_atomics.h").exists()
    assert report["summary"]["support_headers_written"] == []


def _mutated(value, rng: random.Random, junk: list):
    """``value`` (a JSON document) with one randomly chosen part replaced by a junk value."""
    if isinstance(value, (dict, list)) and value and rng.random() < 0.8:
        keys = list(value) if isinstance(value, dict) else list(range(len(value)))
        copy = dict(value) if isinstance(value, dict) else list(value)
        key = rng.choice(keys)
        copy[key] = _mutated(value[key], rng, junk)
        return copy
    return rng.choice(junk)


def test_randomly_damaged_caches_never_crash_nor_reach_outside(tmp_path: Path):
    """Any part of a good cache replaced by junk: the run converts as without a cache, nothing
    outside OUT is touched, and no traceback."""
    from migrator.runner import RunOptions, run
    from migrator.settings import Settings

    src, out = make_tree(tmp_path), tmp_path / "out"
    (src / "sub" / "atomics.cu").write_bytes(FINDINGS_FILE)
    settings = Settings()
    assert not run(RunOptions(src, out), settings).failed
    good = cache_of(out)
    victim = tmp_path / "victim.txt"
    junk = [None, True, False, 0, -1, 2**70, 1.5, "", ".", "..", "../victim.txt", str(victim),
            "sub/../../victim.txt", ".rocmigrate/cache.json", "rocmigrate_atomics.h", [], {},
            [1, 2], [-1, 10**6], ["a", "b"], {"output": "../victim.txt"}, [[0]] * 12]
    rng = random.Random(20261201)
    for _ in range(40):
        victim.write_text("keep me")
        damaged = _mutated(good, rng, junk)
        write_cache(out, damaged)
        result = run(RunOptions(src, out), settings)
        assert not result.failed, ([r.message for r in result.results], damaged)
        assert victim.read_text() == "keep me", damaged
        assert b"hipMalloc" in (out / "main.cu").read_bytes()
        assert cache_of(out)["files"].keys() == good["files"].keys()


def test_a_symlinked_cache_folder_is_neither_read_nor_written_through(tmp_path: Path):
    src, out = make_tree(tmp_path), tmp_path / "out"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out.mkdir()
    os.symlink(elsewhere, out / ".rocmigrate")
    assert convert(src, "-o", out).exit_code == 0
    assert list(elsewhere.iterdir()) == []


def test_a_fifo_in_the_output_is_never_read(tmp_path: Path):
    src, out = make_tree(tmp_path), tmp_path / "out"
    (out / ".rocmigrate").mkdir(parents=True)
    os.mkfifo(out / ".rocmigrate" / "cache.json")
    os.mkfifo(out / "main.cu")
    done = subprocess.run([sys.executable, "-m", "migrator", "convert", str(src), "-o", str(out)],
                          capture_output=True, text=True, timeout=60)
    # nor replaced (issue 25): that output fails alone, the others are written
    assert done.returncode == 1, done.stderr
    assert "FAILED main.cu: cannot write output main.cu: it is a FIFO" in done.stdout
    assert (out / "main.cu").is_fifo()
    assert b"hipDeviceSynchronize" in (out / "sub" / "util.cuh").read_bytes()


# 2. writes never follow symlinks already in the output


def test_writes_never_go_through_a_symlinked_output_folder(tmp_path: Path):
    src, out = make_tree(tmp_path), tmp_path / "out"
    victim = tmp_path / "victim"
    victim.mkdir()
    out.mkdir()
    os.symlink("../victim", out / "sub")
    code, report = convert_json(src, "-o", out)
    assert code == 1
    status, message = statuses(report)["sub/util.cuh"]
    assert status == "failed" and "sub is a symlink" in message
    assert list(victim.iterdir()) == []
    assert b"hipMalloc" in (out / "main.cu").read_bytes()  # the other files are converted


def test_write_inside_refuses_a_symlinked_parent(tmp_path: Path):
    root, victim = tmp_path / "root", tmp_path / "victim"
    (root / "a").mkdir(parents=True)
    victim.mkdir()
    os.symlink(victim, root / "a" / "b")
    with pytest.raises(fsutil.UnsafePathError):
        fsutil.write_inside(root, "a/b/c.txt", b"x")
    (root / "file").write_text("x")
    with pytest.raises(fsutil.UnsafePathError):
        fsutil.write_inside(root, "file/c.txt", b"x")
    with pytest.raises(fsutil.UnsafePathError):
        fsutil.write_inside(root, "../escape.txt", b"x")
    assert list(victim.iterdir()) == [] and not (tmp_path / "escape.txt").exists()
    assert fsutil.remove_inside(root, "a/b/c.txt") is False
    # a symlink at the path itself is replaced, never written through
    (victim / "target.txt").write_text("keep")
    os.symlink(victim / "target.txt", root / "a" / "link.txt")
    fsutil.write_inside(root, "a/link.txt", b"new")
    assert (victim / "target.txt").read_text() == "keep"
    assert not (root / "a" / "link.txt").is_symlink()
    assert (root / "a" / "link.txt").read_bytes() == b"new"


def test_an_old_output_tree_inside_the_source_is_not_converted_again(tmp_path: Path):
    src = make_tree(tmp_path)
    assert convert(src, "-o", src / "out").exit_code == 0
    code, report = convert_json(src, "-o", tmp_path / "other")
    assert code == 0
    assert statuses(report)["out"][0] == "skipped"
    assert "rocmigrate output" in statuses(report)["out"][1]
    assert not (tmp_path / "other" / "out").exists()
    assert (tmp_path / "other" / "main.cu").is_file()


# 3. the in-place checks


def _dirty_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    make_tree(repo)
    (repo / "other").mkdir()
    (repo / "other" / "x.txt").write_text("x")
    git(repo, "init", "-q", check=True)
    git(repo, "add", ".", check=True)
    git(repo, "commit", "-qm", "init", check=True)
    return repo


def test_in_place_sees_uncommitted_changes_from_any_folder(tmp_path: Path, monkeypatch):
    repo = _dirty_repo(tmp_path)
    (repo / "src" / "main.cu").write_bytes(CUDA_FILE + b"// edited\n")
    monkeypatch.chdir(tmp_path)  # SRC is relative to this folder, not to the repository's top
    refused = convert("repo/src", "--in-place")
    assert refused.exit_code == 2 and "uncommitted changes" in refused.output
    assert b"cudaMalloc" in (repo / "src" / "main.cu").read_bytes()
    monkeypatch.chdir(repo / "src" / "sub")
    refused = convert("..", "--in-place")
    assert refused.exit_code == 2 and "uncommitted changes" in refused.output
    refused = convert("../main.cu", "--in-place")
    assert refused.exit_code == 2 and "uncommitted changes" in refused.output


def test_in_place_ignores_changes_outside_the_source(tmp_path: Path, monkeypatch):
    repo = _dirty_repo(tmp_path)
    (repo / "other" / "x.txt").write_text("edited")
    monkeypatch.chdir(repo / "src")
    assert convert(".", "--in-place").exit_code == 0
    assert b"hipMalloc" in (repo / "src" / "main.cu").read_bytes()


@pytest.mark.parametrize("broken", ["no git on PATH", "GitPython cannot load"])
def test_in_place_without_a_working_git_is_refused_with_a_message(tmp_path: Path, monkeypatch,
                                                                   broken: str):
    repo = _dirty_repo(tmp_path)
    (repo / "src" / "main.cu").write_bytes(CUDA_FILE + b"// edited\n")
    if broken == "no git on PATH":
        monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    else:  # what importing GitPython does when it finds no git
        monkeypatch.setitem(sys.modules, "git", None)
    refused = convert(repo / "src", "--in-place")
    assert refused.exit_code == 2 and "cannot tell whether" in refused.output
    assert b"cudaMalloc" in (repo / "src" / "main.cu").read_bytes()
    monkeypatch.setitem(sys.modules, "git", None)
    outside = make_tree(tmp_path / "no_repo")  # no work tree: nothing to ask git
    assert convert(outside, "--in-place").exit_code == 0


@pytest.mark.parametrize("spelling", ["same", "dot", "hardlink", "symlink", "folder"])
def test_single_file_output_that_is_the_source_is_refused(tmp_path: Path, monkeypatch,
                                                          spelling: str):
    monkeypatch.chdir(tmp_path)
    source = tmp_path / "a.cu"
    source.write_bytes(CUDA_FILE)
    output = {"same": "a.cu", "dot": "./a.cu", "hardlink": "b.cu", "symlink": "c.cu",
              "folder": "."}[spelling]
    if spelling == "hardlink":
        os.link(source, tmp_path / "b.cu")
    if spelling == "symlink":
        os.symlink("a.cu", tmp_path / "c.cu")
    refused = convert("a.cu", "-o", output)
    assert refused.exit_code == 2 and "is the source file itself" in refused.output
    assert source.read_bytes() == CUDA_FILE
    forced = convert("a.cu", "-o", output, "--force")
    assert forced.exit_code == 0
    assert b"hipMalloc" in (tmp_path / output / "a.cu" if spelling == "folder"
                            else tmp_path / output).read_bytes()


# 4. loops, unreadable folders, name clashes, absolute links


def test_symlink_loops_are_skipped_one_by_one(tmp_path: Path):
    src, out = make_tree(tmp_path), tmp_path / "out"
    os.symlink("self.cu", src / "self.cu")
    os.symlink("pong", src / "ping")
    os.symlink("ping", src / "pong")
    os.symlink("..", src / "sub" / "loop")
    os.symlink(".", src / "here")
    code, report = convert_json(src, "-o", out)
    assert code == 0
    skipped = {s["path"]: s["reason"] for s in report["summary"]["skipped"]}
    assert set(skipped) == {"self.cu", "ping", "pong", "sub/loop", "here"}
    assert all("loop" in reason for reason in skipped.values())
    assert b"hipMalloc" in (out / "main.cu").read_bytes()


def test_an_unreadable_folder_is_reported(tmp_path: Path, monkeypatch):
    src, out = make_tree(tmp_path), tmp_path / "out"
    (src / "private").mkdir()
    (src / "private" / "k.cu").write_bytes(CUDA_FILE)
    real_scandir = os.scandir

    def scandir(path="."):  # what a folder without read permission does (root reads anything)
        if Path(path).name == "private":
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    code, report = convert_json(src, "-o", out)
    assert code == 1
    assert statuses(report)["private"] == ("failed", "cannot read folder: Permission denied")
    assert b"hipMalloc" in (out / "main.cu").read_bytes()


def test_an_entry_that_cannot_be_examined_fails_alone(tmp_path: Path, monkeypatch):
    """A folder that can be listed but not searched (r without x): its entries cannot be
    examined; a link into a folder that cannot be read."""
    src, out = make_tree(tmp_path), tmp_path / "out"
    (src / "listed").mkdir()
    (src / "listed" / "k.cu").write_bytes(CUDA_FILE)
    os.symlink("listed/k.cu", src / "alias.cu")
    real_lstat, real_stat = os.lstat, os.stat

    def refused(path) -> bool:
        return isinstance(path, (str, Path)) and Path(path).parent.name == "listed"

    def lstat(path, *args, **kwargs):  # what such a folder does (root searches anything)
        if refused(path):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_lstat(path, *args, **kwargs)

    def stat(path, *args, **kwargs):
        if refused(path):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "lstat", lstat)
    monkeypatch.setattr(os, "stat", stat)
    code, report = convert_json(src, "-o", out)
    monkeypatch.undo()
    assert code == 1
    assert statuses(report)["listed/k.cu"] == ("failed", "cannot read: Permission denied")
    assert statuses(report)["alias.cu"][0] == "copied"  # recreated: its target is in the tree
    assert os.readlink(out / "alias.cu") == "listed/k.cu"
    assert b"hipMalloc" in (out / "main.cu").read_bytes()


def test_an_unreadable_folder_is_reported_for_real(tmp_path: Path):
    """A folder the user cannot list and a file they cannot read fail, by name, and the rest
    is converted. Root reads any
    folder, so as root the run drops to an unprivileged user (setpriv) in a world-writable
    folder: the check runs the same in CI, which is root."""
    base = tmp_path
    command = [sys.executable, "-m", "migrator"]
    if os.geteuid() == 0:
        base = Path(tempfile.mkdtemp(prefix="rocmigrate-perm-", dir="/tmp"))
        base.chmod(0o777)
        command = [shutil.which("setpriv") or "setpriv", "--reuid=65534", "--regid=65534",
                   "--clear-groups", *command]
    try:
        src, out = make_tree(base), base / "out"
        (src / "private").mkdir()
        (src / "private" / "k.cu").write_bytes(CUDA_FILE)
        (src / "private").chmod(0)
        (src / "secret.cu").write_bytes(CUDA_FILE)
        (src / "secret.cu").chmod(0)
        try:
            result = subprocess.run([*command, "convert", str(src), "-o", str(out),
                                     "--format", "json"], capture_output=True, text=True,
                                    cwd=base, timeout=120,
                                    env=dict(os.environ, PYTHONPATH=str(ROOT)))
        finally:
            (src / "private").chmod(0o755)
        report = json.loads(result.stdout)
        assert result.returncode == 1, result.stderr
        assert statuses(report)["private"][0] == "failed"
        assert "Permission denied" in statuses(report)["private"][1]
        assert statuses(report)["secret.cu"] == ("failed", "cannot read: Permission denied")
        assert b"hipMalloc" in (out / "main.cu").read_bytes()
    finally:
        if base != tmp_path:
            shutil.rmtree(base, ignore_errors=True)


def test_rename_ext_output_name_clashes_fail_and_overwrite_nothing(tmp_path: Path):
    src, out = make_tree(tmp_path), tmp_path / "out"
    (src / "main.hip").write_bytes(b"// the HIP version, written by hand\n")
    (src / "k.cu").write_bytes(CUDA_FILE)
    (src / "k.hip").mkdir()
    (src / "k.hip" / "inner.cuh").write_bytes(HEADER)
    code, report = convert_json(src, "-o", out, "--rename-ext")
    assert code == 1
    files = statuses(report)
    for rel, other in (("main.cu", "main.hip"), ("main.hip", "main.cu"),
                       ("k.cu", "k.hip/inner.cuh"), ("k.hip/inner.cuh", "k.cu")):
        assert files[rel][0] == "failed" and other in files[rel][1], (rel, files[rel])
    assert not (out / "main.hip").exists() and not (out / "k.hip").exists()
    assert (out / "sub" / "util.cuh").is_file()


def test_an_absolute_symlink_inside_the_tree_becomes_a_relative_link(tmp_path: Path):
    src, out = make_tree(tmp_path), tmp_path / "out"
    os.symlink(src / "main.cu", src / "alias.cu")
    os.symlink((src / "main.cu").resolve(), src / "sub" / "up.cu")
    os.symlink(src / "sub", src / "subdir")
    assert convert(src, "-o", out, "--rename-ext").exit_code == 0
    assert os.readlink(out / "alias.hip") == "main.hip"
    assert os.readlink(out / "sub" / "up.hip") == "../main.hip"
    assert os.readlink(out / "subdir") == "sub"
    assert b"hipMalloc" in (out / "sub" / "up.hip").read_bytes()  # the converted counterpart


# 5. unwritable outputs and /proc: messages, not tracebacks


def test_an_output_folder_that_cannot_be_created_is_a_usage_error(tmp_path: Path):
    src = make_tree(tmp_path)
    result = convert(src, "-o", src / "notes.txt" / "out")
    assert result.exit_code == 2 and "cannot create the output folder" in result.output


def test_a_folder_in_the_way_of_an_output_fails_that_file(tmp_path: Path):
    src, out = make_tree(tmp_path), tmp_path / "out"
    (out / "main.cu" / "x").mkdir(parents=True)
    (out / "notes.txt").mkdir(parents=True)
    os.symlink("main.cu", src / "alias.cu")
    (out / "alias.cu").mkdir()
    code, report = convert_json(src, "-o", out)
    assert code == 1
    files = statuses(report)
    assert {rel for rel, (status, _) in files.items() if status == "failed"} == {
        "main.cu", "notes.txt", "alias.cu"}
    assert all("cannot write output" in files[rel][1]
               for rel in ("main.cu", "notes.txt", "alias.cu"))
    assert b"hipDeviceSynchronize" in (out / "sub" / "util.cuh").read_bytes()


def test_an_unwritable_output_fails_each_file(tmp_path: Path, monkeypatch):
    src, out = make_tree(tmp_path), tmp_path / "out"
    real_replace = os.replace

    def replace(*args, **kwargs):  # a read-only output folder (root writes anything)
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(os, "replace", replace)
    code, report = convert_json(src, "-o", out)
    monkeypatch.setattr(os, "replace", real_replace)
    assert code == 1
    assert {f["path"] for f in report["summary"]["failures"]} == {"main.cu", "sub/util.cuh",
                                                                  "notes.txt"}
    assert all("Permission denied" in f["error"] for f in report["summary"]["failures"])
    single = convert(src / "main.cu", "-o", tmp_path / "one.cu")
    assert single.exit_code == 0  # the patch is gone: the single-file path writes
    monkeypatch.setattr(os, "replace", replace)
    single = convert(src / "main.cu", "-o", tmp_path / "two.cu")
    assert single.exit_code == 1 and "Permission denied" in single.output


def test_a_stale_output_that_cannot_be_removed_is_left(tmp_path: Path, monkeypatch):
    src, out = make_tree(tmp_path), tmp_path / "out"
    assert convert(src, "-o", out).exit_code == 0
    (src / "notes.txt").unlink()

    def unlink(*args, **kwargs):  # a read-only output folder (root removes anything)
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(os, "unlink", unlink)
    code, report = convert_json(src, "-o", out)
    monkeypatch.undo()
    assert code == 0 and report["summary"]["removed_stale_outputs"] == []
    assert (out / "notes.txt").is_file()


def test_an_immutable_output_folder_fails_each_file(tmp_path: Path):
    chattr = shutil.which("chattr")
    src, out = make_tree(tmp_path), tmp_path / "out"
    (out / "sub").mkdir(parents=True)
    if chattr is None or subprocess.run([chattr, "+i", str(out), str(out / "sub")],
                                        capture_output=True).returncode != 0:
        if chattr is not None:
            subprocess.run([chattr, "-i", str(out), str(out / "sub")], capture_output=True)
        require(False, "chattr +i (an ext4-like filesystem and CAP_LINUX_IMMUTABLE)")
    try:
        code, report = convert_json(src, "-o", out)
    finally:
        subprocess.run([chattr, "-i", str(out), str(out / "sub")], check=True)
    assert code == 1 and len(report["summary"]["failures"]) == 3


def test_proc_paths_give_messages(tmp_path: Path):
    require_path(Path("/proc/self/status"), "Linux's /proc")
    source = tmp_path / "a.cu"
    source.write_bytes(CUDA_FILE)
    assert convert("/proc/self/status", "-o", tmp_path / "status.cu").exit_code in (0, 1)
    written = convert(source, "-o", "/proc/rocmigrate-test.cu")
    assert written.exit_code == 1 and "cannot write /proc/rocmigrate-test.cu" in written.output
    tree = convert(make_tree(tmp_path), "-o", "/proc/rocmigrate-test")
    assert tree.exit_code == 2 and "cannot create the output folder" in tree.output
    assert convert("/proc/self/mem", "-o", tmp_path / "mem.cu").exit_code == 1


def test_a_source_that_is_neither_file_nor_folder_is_a_usage_error(tmp_path: Path):
    fifo = tmp_path / "pipe.cu"
    os.mkfifo(fifo)
    result = convert(fifo, "-o", tmp_path / "out")
    assert result.exit_code == 2 and "neither a regular file nor a folder" in result.output


# 6. a cached re-run reports what the full run reported


FINDINGS_FILE = b"""#include <cuda_fp16.h>
__global__ void k(__half* grads, float* loss, const float* x) {
  extern __shared__ float4 smem[];
  int i = threadIdx.x;
  smem[i] = make_float4(x[i], x[i], x[i], x[i]);
  atomicAdd(&grads[i % 64], __float2half(1.0f));
  atomicAdd(loss, x[i]);
}
void g(float* p) {
  cudaFree(p);
  cudaGraphInstantiateWithParams(0, 0, 0);
}
"""


def test_a_cached_rerun_reports_the_same_findings(tmp_path: Path):
    src, out = make_tree(tmp_path), tmp_path / "out"
    (src / "sub" / "atomics.cu").write_bytes(FINDINGS_FILE)
    runs = [convert_json(src, "-o", out, "--rocm", "5.2") for _ in range(2)]
    os.utime(src / "main.cu", ns=(1_000_000_000, 1_000_000_000))  # touched: the hash path
    os.utime(src / "sub" / "atomics.cu", ns=(1_000_000_000, 1_000_000_000))
    runs.append(convert_json(src, "-o", out, "--rocm", "5.2"))
    (out / "sub" / "rocmigrate_atomics.h").unlink()  # rewritten beside its cached output
    runs.append(convert_json(src, "-o", out, "--rocm", "5.2"))
    (first_code, first), *reruns = runs
    assert first_code == 0 and first["summary"]["files"]["converted"] == 3
    assert first["summary"]["attention"] and first["summary"]["converted_references"]
    assert first["summary"]["optimized"]
    for code, again in reruns:
        assert code == 0 and again["summary"]["files"]["cached"] == 3
        for key in ("converted_references", "optimized", "attention", "failures", "skipped"):
            assert again["summary"][key] == first["summary"][key], key
        assert ([(f["path"], f["findings"]) for f in again["files"]]
                == [(f["path"], f["findings"]) for f in first["files"]])
    assert (out / "sub" / "rocmigrate_atomics.h").is_file()


def test_the_cache_keeps_only_the_texts_its_entries_use(tmp_path: Path):
    src, out = make_tree(tmp_path), tmp_path / "out"
    (src / "sub" / "atomics.cu").write_bytes(FINDINGS_FILE)
    _, first = convert_json(src, "-o", out)
    for before, name in (("cudaGraphInstantiateWithParams", "cudaDeviceReset"),
                         ("cudaDeviceReset", "cudaGetDevice")):
        (src / "sub" / "atomics.cu").write_bytes(  # this file's texts change every run
            FINDINGS_FILE.replace(b"cudaGraphInstantiateWithParams(0, 0, 0)", name.encode()
                                  + b"()"))
        code, edited = convert_json(src, "-o", out)
        assert code == 0 and edited["summary"]["files"]["converted"] == 1
        stored = json.loads((out / ".rocmigrate" / "cache.json").read_bytes())
        used = {number for entry in stored["files"].values()
                for column in text_columns(json.loads(entry["findings"])) for number in column}
        assert used == set(range(len(stored["strings"]))), "texts no entry uses are dropped"
        assert any(name in text for text in stored["strings"])
        assert not any(before in text for text in stored["strings"])
    _, cached = convert_json(src, "-o", out)
    assert cached["summary"]["files"]["cached"] == 3
    assert ([(f["path"], f["findings"]) for f in cached["files"]]
            == [(f["path"], f["findings"]) for f in edited["files"]])
    assert [f["findings"] for f in cached["files"] if f["path"] == "main.cu"] == \
        [f["findings"] for f in first["files"] if f["path"] == "main.cu"]


def _summary_lines(output: str) -> list[str]:
    """The summary's lines but the file counts and the support headers written this run."""
    return [line for line in output.splitlines()[1:] if not line.startswith("wrote support")]


def test_an_unchanged_text_rerun_reads_no_findings(tmp_path: Path, monkeypatch):
    src, out = make_tree(tmp_path), tmp_path / "out"
    (src / "sub" / "atomics.cu").write_bytes(FINDINGS_FILE)
    first = convert(src, "-o", out, "-v")
    import migrator.runner

    def unread(*args):
        raise AssertionError("an unchanged text re-run parsed the cache's findings")

    with monkeypatch.context() as patch:
        patch.setattr(migrator.runner, "packed_findings_of", unread)
        again = convert(src, "-o", out, "-v")
    assert again.exit_code == 0 and "3 up to date (cached)" in again.output
    assert _summary_lines(again.output) == _summary_lines(first.output)
    _, report = convert_json(src, "-o", out)  # a report that lists findings reads them
    assert sum(len(f["findings"]) for f in report["files"]) > 10


def test_damaged_findings_in_the_cache_mean_converting_their_files_again(tmp_path: Path):
    src, out = make_tree(tmp_path), tmp_path / "out"
    (src / "sub" / "atomics.cu").write_bytes(FINDINGS_FILE)
    _, first = convert_json(src, "-o", out)
    good = cache_of(out)
    for junk in ("[[", "[]", "[[0],[1]]", json.dumps([["x"]] * 12), "null"):
        damaged = json.loads(json.dumps(good))
        damaged["files"]["sub/atomics.cu"]["findings"] = junk
        write_cache(out, damaged)
        code, again = convert_json(src, "-o", out)
        assert code == 0, junk
        statuses = {f["path"]: f["status"] for f in again["files"]}
        assert statuses["sub/atomics.cu"] == statuses["main.cu"] == "converted", junk
        assert statuses["notes.txt"] == "copied"
        assert [(f["path"], f["findings"]) for f in again["files"]] == \
            [(f["path"], f["findings"]) for f in first["files"]], junk
        assert again["summary"]["attention"] == first["summary"]["attention"]
        assert cache_of(out)["files"].keys() == good["files"].keys()


@pytest.mark.parametrize("summary", [None, [], {"converted_references": {"runtime": "1"},
                                                "optimized": [], "attention": []},
                                     {"converted_references": {}, "optimized": [{}],
                                      "attention": []}])
def test_a_damaged_stored_summary_is_made_again_from_the_findings(tmp_path: Path, summary):
    src, out = make_tree(tmp_path), tmp_path / "out"
    (src / "sub" / "atomics.cu").write_bytes(FINDINGS_FILE)
    first = convert(src, "-o", out, "-v")
    damaged = cache_of(out)
    damaged["summary"] = summary
    write_cache(out, damaged)
    again = convert(src, "-o", out, "-v")
    assert again.exit_code == 0 and _summary_lines(again.output) == _summary_lines(first.output)
    assert cache_of(out)["summary"] == cache_of(out)["summary"] != summary  # written again
