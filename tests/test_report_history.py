"""`rocmigrate report --history` along HEAD's first-parent line, on real git repositories made
here: each commit's change against its first parent (a README commit: 0; a merge: what it
brought in, its side branch's commits not walked), a rename, --limit/--since/--every, the whole
history by default, the includes dependency (a header changed, shadowed, removed) against
reports of each commit's tree made independently, and progress only on a terminal."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import git
import pytest
from typer.testing import CliRunner

from migrator.cli import _register, app
from migrator.output.report_html import render_html
from migrator.output.report_markdown import render_markdown
from migrator.report import HistoryOptions

from test_report import KERNEL_CU, UTIL_H, report_of
from test_report_git import commit, tree_of

_register()
runner = CliRunner()
ROOT = Path(__file__).resolve().parent.parent
# a file of one kernel with inline PTX: a PTX001 site (0.5 h; its decision, 8 h, is counted
# once for the tree) and the runtime include HDR003 (0.02 h)
PTX_LINE = (b'__global__ void lane(int* p) { int v; asm("mov.u32 %0, %%laneid;" : "=r"(v)); '
            b'p[0] = v; }\n')
PTX_HOURS = 0.52  # another file of inline PTX where the tree has some: its sites only
PTX_DECISION = 8.0


def dated(repo: git.Repo, files: dict, message: str, date: str, remove=()) -> git.Commit:
    """A commit made at ``date`` (ISO 8601, UTC)."""
    stamp = datetime.fromisoformat(date).timestamp()
    os.environ["GIT_AUTHOR_DATE"] = os.environ["GIT_COMMITTER_DATE"] = f"{stamp:.0f} +0000"
    try:
        return commit(repo, files, "Alice", message, remove)
    finally:
        del os.environ["GIT_AUTHOR_DATE"], os.environ["GIT_COMMITTER_DATE"]


def site_hours(tree: Path, out: Path) -> float:
    """The port hours of a report of ``tree`` on its own (decisions and sites)."""
    return report_of(tree, out)["summary"]["hours_port"]


@pytest.fixture()
def branched(tmp_path):
    """main: import (2020), README (2020), then from 2024: a PTX file, a merge of a side
    branch that added two PTX files, a rename of the header, the first PTX file removed."""
    repo = git.Repo.init(tmp_path / "repo", initial_branch="main")
    with repo.config_writer() as config:  # settings that change what git log prints
        config.set_value("color", "ui", "always")
        config.set_value("diff", "renames", "copies")
        config.set_value("log", "decorate", "full")
    c = {}
    c["import"] = dated(repo, {"a/kernel.cu": KERNEL_CU, "common/util.h": UTIL_H},
                        "import", "2020-01-01T10:00:00+00:00")
    c["readme"] = dated(repo, {"README.md": b"# demo\n\nTwo lines.\n"}, "readme",
                        "2020-02-01T10:00:00+00:00")
    repo.git.checkout("-b", "side")
    c["side1"] = dated(repo, {"side/x.cu": PTX_LINE}, "side x", "2024-01-02T10:00:00+00:00")
    c["side2"] = dated(repo, {"side/y.cu": PTX_LINE}, "side y", "2024-01-04T10:00:00+00:00")
    repo.git.checkout("main")
    c["main"] = dated(repo, {"m/z.cu": PTX_LINE}, "main z", "2024-01-03T10:00:00+00:00")
    env = {"GIT_AUTHOR_DATE": "2024-01-05T10:00:00+00:00",
           "GIT_COMMITTER_DATE": "2024-01-05T10:00:00+00:00"}
    with repo.git.custom_environment(**env):
        repo.git.merge("side", "--no-ff", "--no-edit", "-m", "merge side")
    c["merge"] = repo.head.commit
    repo.git.mv("common/util.h", "common/warp.h")
    root = Path(repo.working_tree_dir)
    moved = (root / "a/kernel.cu").read_bytes().replace(b"util.h", b"warp.h")
    c["rename"] = dated(repo, {"a/kernel.cu": moved}, "rename the header",
                        "2024-01-06T10:00:00+00:00")
    c["remove"] = dated(repo, {}, "remove z", "2024-01-07T10:00:00+00:00", remove=("m/z.cu",))
    return repo, c


MAIN_LINE = ["import", "readme", "main", "merge", "rename", "remove"]


def test_first_parent_burn_down_credits_each_commit(branched, tmp_path):
    repo, c = branched
    root = Path(repo.working_tree_dir)
    document = report_of(root, tmp_path / "r", history=HistoryOptions())
    history = document["history"]
    points = history["commits"]
    # the side branch's own commits are not on the line: the merge brings them in
    assert [p["commit"] for p in points] == [c[name].hexsha for name in MAIN_LINE]
    base = site_hours(tree_of(c["import"], tmp_path / "t0"), tmp_path / "o0")
    assert base > PTX_DECISION  # the kernel's own inline PTX, at least
    expected = [base, base, base + PTX_HOURS, base + 3 * PTX_HOURS, base + 3 * PTX_HOURS,
                base + 2 * PTX_HOURS]
    assert [p["hours_port"] for p in points] == pytest.approx(expected)
    assert [p["delta_hours"] for p in points] == pytest.approx(
        [0.0, 0.0, PTX_HOURS, 2 * PTX_HOURS, 0.0, -PTX_HOURS])
    for number, (name, point) in enumerate(zip(MAIN_LINE, points)):
        assert point["hours_port"] == pytest.approx(site_hours(
            tree_of(c[name], tmp_path / f"t{number}x"), tmp_path / f"o{number}x"))
    merge = points[3]
    assert (merge["merge"], merge["merged_commits"], merge["parent"]) == (
        True, 2, c["main"].hexsha)
    assert [p["merge"] for p in points] == [False, False, False, True, False, False]
    assert merge["files"] == 5 and merge["files_changed"] == 2
    assert (points[1]["files_changed"], points[1]["files"]) == (0, 2)  # README only
    assert points[4]["files_changed"] == 3  # the rename: one removed, one added, the includer
    assert points[4]["files"] == 5
    assert [p["commit"] for p in history["moved_most"]] == [c["remove"].hexsha]
    assert any("1 merge commits walked" in note and "2 side-branch commits" in note
               for note in history["notes"])
    # shown as a merge in the Markdown, the page's table and the burn-down's dot
    short = c["merge"].hexsha[:10]
    assert f"| `{short}` merge (2 commits) | 2024-01-05 |" in render_markdown(document, full=True)
    page = render_html(document)
    assert "merge side <span class=\"model\">(merge: 2 commits brought in)</span>" in page
    assert f"<title>{short} 2024-01-05 merge:" in page
    assert page.count("commits brought in)") == 1


def test_limit_since_and_every_keep_first_parent_deltas(branched, tmp_path):
    repo, c = branched
    root = Path(repo.working_tree_dir)

    def walked(out: str, **options) -> list[tuple[str, float]]:
        history = report_of(root, tmp_path / out, history=HistoryOptions(**options))["history"]
        names = {c[name].hexsha: name for name in c}
        return [(names[p["commit"]], pytest.approx(p["delta_hours"]))
                for p in history["commits"]]

    # the first commit walked is still measured against its first parent (not walked)
    assert walked("l3", limit=3) == [("merge", 2 * PTX_HOURS), ("rename", 0.0),
                                     ("remove", -PTX_HOURS)]
    assert walked("l1", limit=1) == [("remove", -PTX_HOURS)]
    assert walked("s", since="2023-01-01") == [("main", PTX_HOURS), ("merge", 2 * PTX_HOURS),
                                               ("rename", 0.0), ("remove", -PTX_HOURS)]
    # every 2nd from the newest; each against its own first parent, not the one shown before
    assert walked("e", every=2) == [("readme", 0.0), ("merge", 2 * PTX_HOURS),
                                    ("remove", -PTX_HOURS)]
    future = report_of(root, tmp_path / "f", history=HistoryOptions(since="2090-01-01"))
    assert future["history"]["commits"] == []


def test_the_whole_history_by_default(tmp_path):
    """60 commits: all walked by default (the limit was 50), each a first parent's change."""
    repo = git.Repo.init(tmp_path / "repo")
    root = Path(repo.working_tree_dir)
    # (a file named HEAD: the ref and the file name must not be ambiguous to git log)
    commit(repo, {"k.cu": KERNEL_CU, "HEAD": b"a file named like the ref\n"}, "Alice", "kernel")
    for number in range(59):
        name = f"p{number % 3}.cu"
        data = PTX_LINE if number % 2 == 0 else b"// no kernel\n"
        commit(repo, {name: data}, "Bob", f"step {number}")
    history = report_of(root, tmp_path / "r", history=HistoryOptions())["history"]
    assert len(history["commits"]) == 60
    points = history["commits"]
    # files p0..p2 alternate between a PTX kernel (0.52 h: k.cu has PTX) and a comment
    for point, previous in zip(points[1:], points):
        assert point["delta_hours"] == pytest.approx(
            point["hours_port"] - previous["hours_port"])
        assert abs(point["delta_hours"]) in (pytest.approx(0.0), pytest.approx(PTX_HOURS))
    assert points[-1]["hours_port"] == pytest.approx(site_hours(root, tmp_path / "alone"))
    result = runner.invoke(app, ["report", str(root), "-o", str(tmp_path / "cli"), "--rocm",
                                 "6.4", "--history"])
    assert result.exit_code == 0, result.output
    document = json.loads((tmp_path / "cli" / "report.json").read_text())
    assert len(document["history"]["commits"]) == 60
    # 60 files changed, 3 distinct contents (the kernel, the PTX file, the comment) converted
    assert (document["history"]["cache"]["hits"], document["history"]["cache"]["misses"]) == (
        57, 3)
    assert "history:" not in result.output  # CliRunner's stderr is no terminal


HEADER = b"#pragma once\n__device__ inline float warp(float v) { return v; }\n"
SHUFFLE = (b"#pragma once\n__device__ inline float warp(float v) {\n"
           b"  return v + __shfl_down_sync(0xffffffff, v, 1);\n}\n")
PLAIN = b"#pragma once\ninline float warp(float v) { return v; }\n"  # no finding
INCLUDER = b'#include "util.h"\n__global__ void f(float* p) { p[0] = warp(p[0]); }\n'


def test_includes_dependency_is_kept(tmp_path):
    """A file's findings depend on the headers it includes (WRP003: an included header calls
    a warp-sync builtin): a header changed, shadowed by a new one beside the includer, and
    removed again recounts the includer; every commit equals a report of its own tree."""
    repo = git.Repo.init(tmp_path / "repo")
    root = Path(repo.working_tree_dir)
    steps = [
        commit(repo, {"k/kernel.cu": INCLUDER, "util.h": HEADER}, "Alice", "import"),
        commit(repo, {"util.h": SHUFFLE}, "Alice", "header calls a shuffle"),
        commit(repo, {"k/util.h": PLAIN}, "Bob", "a header beside the kernel shadows it"),
        commit(repo, {"other.cu": PTX_LINE}, "Bob", "unrelated"),
        commit(repo, {}, "Bob", "the shadow goes", remove=("k/util.h",)),
        commit(repo, {"util.h": HEADER}, "Alice", "header without the shuffle"),
    ]
    expected = [site_hours(tree_of(step, tmp_path / f"t{n}"), tmp_path / f"o{n}")
                for n, step in enumerate(steps)]
    # the includer's own WRP003 (0.02 h) comes and goes with the header it resolves to; the
    # header's shuffle adds WRP003 and WAV002 (0.27 h) to it; the PTX file its decision too
    assert expected == pytest.approx([0.04, 0.33, 0.31, 8.83, 8.85, 8.56])
    out = tmp_path / "r"
    cold = report_of(root, out, history=HistoryOptions())["history"]
    assert [p["hours_port"] for p in cold["commits"]] == pytest.approx(expected)
    assert [p["delta_hours"] for p in cold["commits"]][1:] == pytest.approx(
        [b - a for a, b in zip(expected, expected[1:])])
    warm = report_of(root, out, history=HistoryOptions())["history"]
    assert warm["cache"]["misses"] == 0
    assert [p["hours_port"] for p in warm["commits"]] == pytest.approx(expected)
    for number in range(1, len(steps)):  # a walk starting anywhere: the same figures
        repo.git.checkout(steps[number].hexsha)
        one = report_of(root, tmp_path / f"l{number}", history=HistoryOptions(limit=1))
        (point,) = one["history"]["commits"]
        assert point["hours_port"] == pytest.approx(expected[number])
        assert point["delta_hours"] == pytest.approx(expected[number] - expected[number - 1])


def _small_repository(root: Path) -> Path:
    repo = git.Repo.init(root)
    commit(repo, {"k.cu": KERNEL_CU}, "Alice", "kernel")
    commit(repo, {"p.cu": PTX_LINE}, "Alice", "ptx")
    return root


def _report_command(tree: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "migrator", "report", str(tree), "-o", str(out), "--rocm",
            "6.4", "--history"]


def test_progress_only_on_a_terminal(tmp_path):
    tree = _small_repository(tmp_path / "repo")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    piped = subprocess.run(_report_command(tree, tmp_path / "p"), capture_output=True,
                           cwd=ROOT, env=env)
    assert piped.returncode == 0, piped.stderr
    assert piped.stderr == b""  # no progress into a pipe
    assert b"wrote " in piped.stdout
    # errors still go to stderr
    failed = subprocess.run(_report_command(tree, tmp_path / "p") + ["--fail-on-regression"],
                            capture_output=True, cwd=ROOT, env=env)
    assert failed.returncode == 2 and b"error: --fail-on-regression needs" in failed.stderr
    # on a terminal: the steps and the history's lines
    leader, follower = pty.openpty()
    try:
        shown = subprocess.run(_report_command(tree, tmp_path / "t"), stdout=subprocess.PIPE,
                               stderr=follower, cwd=ROOT, env=env)
        os.close(follower)
        follower = -1
        said = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            said += chunk
    finally:
        os.close(leader)
        if follower >= 0:
            os.close(follower)
    assert shown.returncode == 0
    assert b"walking the history" in said
    assert b"history: 2 commits of the 2 on HEAD's first-parent line" in said
