"""`rocmigrate report` on real git repositories made here with gitpython (two authors, several
commits, a CODEOWNERS file): owners from blame and CODEOWNERS, the history's figures against
reports of each commit's tree made independently, the blob cache, snapshots and the
regression exit code, and the awkward repositories (detached HEAD, shallow clone, merges,
renames)."""

from __future__ import annotations

import json
from pathlib import Path

import git
import pytest
from typer.testing import CliRunner

from migrator.cli import _register, app
from migrator.output.report_markdown import render_markdown
from migrator.report import HistoryOptions
from migrator.report.history import CACHE_NAME

from test_report import BLAS_CU, CMAKE, KERNEL_CU, UTIL_H, report_of

_register()
runner = CliRunner()
BOB_LINES = b"// Bob's notes on the launch\n// block size 64\n// one wavefront\n"
PTX_LINE = (b'__global__ void lane(int* p) { int v; asm("mov.u32 %0, %%laneid;" : "=r"(v)); '
            b'p[0] = v; }\n')


def commit(repo: git.Repo, files: dict[str, bytes], author: str, message: str,
           remove: tuple[str, ...] = ()) -> git.Commit:
    root = Path(repo.working_tree_dir)
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    if files:
        repo.index.add(list(files))
    if remove:
        repo.index.remove(list(remove), working_tree=True)
    actor = git.Actor(author, f"{author.lower()}@example.invalid")
    return repo.index.commit(message, author=actor, committer=actor)


def make_repository(root: Path) -> tuple[git.Repo, list[git.Commit]]:
    """Alice writes the kernel, its header and the build; Bob adds the cuBLAS program and
    three lines to the kernel, and a CODEOWNERS file gives b/ to a team; Alice removes the
    inline PTX."""
    repo = git.Repo.init(root)
    commits = [
        commit(repo, {"a/kernel.cu": KERNEL_CU, "common/util.h": UTIL_H,
                      "CMakeLists.txt": CMAKE}, "Alice", "kernel and build"),
        commit(repo, {"b/blas.cu": BLAS_CU, "a/kernel.cu": KERNEL_CU + BOB_LINES}, "Bob",
               "cuBLAS program"),
        commit(repo, {"CODEOWNERS": b"# owners\n/b/ @team-blas\n"}, "Bob", "owners"),
        commit(repo, {"a/kernel.cu": KERNEL_CU.replace(PTX_LINE, b"") + BOB_LINES}, "Alice",
               "no inline PTX"),
    ]
    return repo, commits


@pytest.fixture()
def repository(tmp_path) -> tuple[git.Repo, list[git.Commit]]:
    return make_repository(tmp_path / "repo")


def tree_of(commit_: git.Commit, into: Path) -> Path:
    """The files of a commit, written out (an independent view of that commit's tree)."""
    for blob in commit_.tree.traverse():
        if blob.type == "blob":
            (into / blob.path).parent.mkdir(parents=True, exist_ok=True)
            (into / blob.path).write_bytes(blob.data_stream.read())
    return into


def test_owners_from_blame_and_codeowners(repository, tmp_path):
    repo, _ = repository
    document = report_of(Path(repo.working_tree_dir), tmp_path / "report")
    files = {record["path"]: record for record in document["files"]}
    kernel = files["a/kernel.cu"]
    lines = {author["name"]: author["lines"] for author in kernel["authors"]}
    assert lines == {"Alice": KERNEL_CU.count(b"\n") - 1, "Bob": BOB_LINES.count(b"\n")}
    assert (kernel["owner"], kernel["owner_source"]) == ("Alice", "blame")
    assert {a["name"]: a["recent_commits"] for a in kernel["authors"]} == {"Alice": 2, "Bob": 1}
    assert (files["b/blas.cu"]["owner"], files["b/blas.cu"]["owner_source"]) == (
        "@team-blas", "CODEOWNERS")
    # one author ever: all her lines
    assert files["common/util.h"]["authors"] == [
        {"name": "Alice", "lines": UTIL_H.count(b"\n"), "recent_commits": 1}]
    people = {person["name"]: person for person in document["owners"]["people"]}
    assert set(people) == {"Alice", "@team-blas"}
    assert sorted(people["Alice"]["files"]) == ["CMakeLists.txt", "a/kernel.cu", "common/util.h"]
    assert people["Alice"]["hours"] == pytest.approx(sum(
        files[path]["hours"]["port"] for path in people["Alice"]["files"]), abs=0.01)
    assert document["owners"]["codeowners"] == "CODEOWNERS"
    assert document["commit"] == repo.head.commit.hexsha


def test_work_lists_per_owner_follow_the_plan(repository, tmp_path):
    """Each owner's work list holds their files, each where the plan puts it (pilot or a
    batch of the full migration, read here from the plan's work items), with the findings a
    person must see in that file, in the plan's order."""
    repo, _ = repository
    document = report_of(Path(repo.working_tree_dir), tmp_path / "report")
    files = {record["path"]: record for record in document["files"]}
    place = {}
    for phase in document["plan"]["phases"]:
        for number, item in enumerate(phase["work_items"], 1):
            if phase["name"] in ("pilot", "full migration"):
                for path in item["paths"]:
                    place[path] = (0, 0) if phase["name"] == "pilot" else (1, number)
    for person in document["owners"]["people"]:
        work = person["work"]
        assert sorted(w["path"] for w in work) == sorted(person["files"])
        for entry in work:
            record = files[entry["path"]]
            expected_place = place[entry["path"]]
            assert (entry["phase"], entry["batch"]) == (
                ("pilot", 0) if expected_place == (0, 0) else ("full migration",
                                                               expected_place[1]))
            port = [(w["line"], w["code"], w["class"]) for w in record["work"]
                    if w["phase"] == "port"]
            assert [(f["line"], f["code"], f["class"]) for f in entry["findings"]] == port
            assert entry["blocker"] == record["findings"]["blocker"]
        assert [place[w["path"]] for w in work] == sorted(place[w["path"]] for w in work)
    alice = next(p for p in document["owners"]["people"] if p["name"] == "Alice")
    assert any(entry["findings"] for entry in alice["work"])
    full = render_markdown(document, full=True)
    assert "### Alice" in full and "`a/kernel.cu`" in full.split("### Alice")[1]


def test_history_matches_each_commit_and_uses_the_cache(repository, tmp_path):
    repo, commits = repository
    root = Path(repo.working_tree_dir)
    out = tmp_path / "report"
    document = report_of(root, out, history=HistoryOptions())
    points = document["history"]["commits"]
    assert [point["commit"] for point in points] == [c.hexsha for c in commits]
    for number, (point, commit_) in enumerate(zip(points, commits)):
        alone = report_of(tree_of(commit_, tmp_path / f"c{number}"), tmp_path / f"r{number}")
        assert point["hours_port"] == pytest.approx(alone["summary"]["hours_port"])
        assert point["findings"] == alone["summary"]["findings"]
        assert point["files"] == alone["summary"]["files"]
    # removing the inline PTX took its decision (PTX001: 8 h) and its site (0.5 h) off
    assert points[3]["delta_hours"] == pytest.approx(-8.5)
    assert points[1]["delta_hours"] > 0
    # the one commit that cut work (the others added programs or owners)
    assert [p["commit"] for p in document["history"]["moved_most"]] == [commits[3].hexsha]
    # only the files each commit changes are looked up: 3 + 2 + 0 + 1, each a new content
    assert document["history"]["cache"] == {"file": CACHE_NAME, "hits": 0, "misses": 6}
    again = report_of(root, out, history=HistoryOptions())
    assert again["history"]["cache"] == {"file": CACHE_NAME, "hits": 6, "misses": 0}
    assert [p["hours_port"] for p in again["history"]["commits"]] == [
        p["hours_port"] for p in points]
    (out / CACHE_NAME).write_text('{"format": 1, "key": "x", "results": [1]}')
    damaged = report_of(root, out, history=HistoryOptions())
    assert [p["hours_port"] for p in damaged["history"]["commits"]] == [
        p["hours_port"] for p in points]
    (out / CACHE_NAME).write_text("not json")
    unreadable = report_of(root, out, history=HistoryOptions())
    assert any(CACHE_NAME in note for note in unreadable["notes"])
    assert unreadable["history"]["cache"]["misses"] == 6


def test_history_every_nth_and_limit(repository, tmp_path):
    repo, commits = repository
    root = Path(repo.working_tree_dir)
    every = report_of(root, tmp_path / "r1", history=HistoryOptions(every=2))["history"]
    assert [p["commit"] for p in every["commits"]] == [commits[1].hexsha, commits[3].hexsha]
    limited = report_of(root, tmp_path / "r2", history=HistoryOptions(limit=2))["history"]
    assert [p["commit"] for p in limited["commits"]] == [commits[2].hexsha, commits[3].hexsha]
    future = report_of(root, tmp_path / "r3", history=HistoryOptions(since="2090-01-01"))
    assert future["history"]["commits"] == []
    assert any("no commit touches the tree since '2090-01-01'" in n for n in future["notes"])
    past = report_of(root, tmp_path / "r4", history=HistoryOptions(since="2000-01-01"))
    assert len(past["history"]["commits"]) == 4
    result = runner.invoke(app, ["report", str(root), "-o", str(tmp_path / "cli"), "--rocm",
                                 "6.4", "--history", "--every", "2", "--limit", "1"])
    assert result.exit_code == 0, result.output
    walked = json.loads((tmp_path / "cli" / "report.json").read_text())["history"]["commits"]
    assert [p["commit"] for p in walked] == [commits[3].hexsha]
    assert "Burn-down" in (tmp_path / "cli" / "report.html").read_text()


def test_history_file_and_regression_exit(repository, tmp_path):
    repo, _ = repository
    root = Path(repo.working_tree_dir)
    history = tmp_path / "snapshots.json"

    def run():
        return runner.invoke(app, ["report", str(root), "-o", str(tmp_path / "out"),
                                   "--rocm", "6.4", "--history-file", str(history),
                                   "--fail-on-regression"])

    first = run()
    assert first.exit_code == 0, first.output
    same = run()
    assert same.exit_code == 0, same.output
    commit(repo, {"c/extra.cu": PTX_LINE}, "Bob", "more PTX")
    grew = run()
    assert grew.exit_code == 1
    assert "regression: remaining effort grew" in grew.output
    assert "blockers grew" in grew.output
    snapshots = json.loads(history.read_text())["snapshots"]
    assert len(snapshots) == 3
    # PTX001's decision (8 h) and site (0.5 h), and the runtime include HDR003 adds (0.02 h)
    assert snapshots[2]["hours_port"] == pytest.approx(snapshots[1]["hours_port"] + 8.52)
    assert snapshots[2]["commit"] == repo.head.commit.hexsha
    assert snapshots[2]["rocm"] == "6.4" and snapshots[2]["model"].startswith("effort model")
    commit(repo, {}, "Bob", "back out", remove=("c/extra.cu",))
    assert run().exit_code == 0
    # a snapshot made at another target, or under another model, is not compared with: the
    # figures would differ without any work done (here: more work, yet no regression)
    commit(repo, {"c/extra.cu": PTX_LINE}, "Bob", "PTX again")
    stored = json.loads(history.read_text())
    stored["snapshots"][-1]["rocm"] = "5.2"
    history.write_text(json.dumps(stored))
    other = run()
    assert other.exit_code == 0, other.output
    assert "made under another target ROCm (5.2): not compared" in other.output
    stored = json.loads(history.read_text())
    stored["snapshots"][-1]["model"] = "effort model (old): per finding blocker 4 h"
    stored["snapshots"][-1]["hours_port"] = 0.0
    history.write_text(json.dumps(stored))
    assert "another effort model" in run().output
    history.write_text("[1, 2]")
    broken = run()
    assert broken.exit_code == 2 and "not a rocmigrate history file" in broken.output
    assert history.read_text() == "[1, 2]"  # left as it was


def test_detached_head_shallow_clone_merges_and_renames(repository, tmp_path):
    repo, commits = repository
    root = Path(repo.working_tree_dir)
    repo.git.checkout("-b", "side", commits[1].hexsha)
    commit(repo, {"b/blas2.cu": BLAS_CU}, "Bob", "second program")
    repo.git.checkout("master" if "master" in repo.heads else "main")
    repo.git.merge("side", "--no-edit")
    repo.git.mv("common/util.h", "common/warp.h")
    moved = (root / "a/kernel.cu").read_bytes().replace(b"util.h", b"warp.h")
    commit(repo, {"a/kernel.cu": moved}, "Alice", "rename the header")
    document = report_of(root, tmp_path / "r", history=HistoryOptions())
    assert any("merge commits walked" in note for note in document["notes"])
    last = document["history"]["commits"][-1]
    files = {record["path"] for record in document["files"]}
    assert "common/warp.h" in files and last["files"] == len(files)
    assert last["hours_port"] == pytest.approx(document["summary"]["hours_port"])
    repo.git.checkout(commits[2].hexsha)
    detached = report_of(root, tmp_path / "d", history=HistoryOptions())
    assert any("HEAD is detached" in note for note in detached["notes"])
    assert detached["history"]["commits"][-1]["commit"] == commits[2].hexsha
    shallow = git.Repo.clone_from(f"file://{root}", tmp_path / "shallow", depth=1,
                                  branch="side")
    clone = report_of(Path(shallow.working_tree_dir), tmp_path / "s",
                      history=HistoryOptions())
    assert any("shallow clone" in note for note in clone["notes"])
    assert len(clone["history"]["commits"]) == 1


def test_subfolder_of_a_repository(repository, tmp_path):
    """SRC inside a repository: owners and history of that folder's files only."""
    repo, commits = repository
    document = report_of(Path(repo.working_tree_dir) / "a", tmp_path / "r",
                         history=HistoryOptions())
    assert [record["path"] for record in document["files"]] == ["kernel.cu"]
    assert document["files"][0]["owner"] == "Alice"
    points = document["history"]["commits"]
    # the commits that touch a/: the first, Bob's and the PTX removal
    assert [p["commit"] for p in points] == [commits[0].hexsha, commits[1].hexsha,
                                             commits[3].hexsha]
    assert all(p["files"] == 1 for p in points)


def test_repository_without_commits(tmp_path):
    root = tmp_path / "empty"
    git.Repo.init(root)
    (root / "k.cu").write_bytes(KERNEL_CU)
    document = report_of(root, tmp_path / "r", history=HistoryOptions())
    assert document["owners"]["available"] is False
    assert any("no commits yet" in note for note in document["notes"])
    assert document["history"]["commits"] == []


def test_a_renamed_file_keeps_its_author(tmp_path):
    """Bob renames Alice's file: blame (which follows the rename) still gives her every line."""
    repo = git.Repo.init(tmp_path / "repo")
    commit(repo, {"x.cu": KERNEL_CU}, "Alice", "kernel")
    repo.git.mv("x.cu", "y.cu")
    commit(repo, {}, "Bob", "rename")
    document = report_of(Path(repo.working_tree_dir), tmp_path / "r")
    (record,) = document["files"]
    assert record["path"] == "y.cu" and record["owner"] == "Alice"
    assert record["authors"][0] == {"name": "Alice", "lines": KERNEL_CU.count(b"\n"),
                                    "recent_commits": 0}


def test_symlinks_and_binary_files_in_history(tmp_path):
    """A committed symlink is not converted (as in the working tree's scan); a binary file
    that looks like a source is a failed file in each commit, not a crash."""
    repo = git.Repo.init(tmp_path / "repo")
    root = Path(repo.working_tree_dir)
    commit(repo, {"k.cu": KERNEL_CU, "blob.cu": bytes(range(256)) * 64}, "Alice", "files")
    (root / "link.cu").symlink_to("k.cu")
    repo.index.add(["link.cu"])
    repo.index.commit("link")
    document = report_of(root, tmp_path / "r", history=HistoryOptions())
    last = document["history"]["commits"][-1]
    assert [record["path"] for record in document["files"]] == ["blob.cu", "k.cu"]
    assert (last["files"], last["failed_files"]) == (2, 1)
    assert last["hours_port"] == pytest.approx(document["summary"]["hours_port"])
