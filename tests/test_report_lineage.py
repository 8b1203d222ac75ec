"""The history replay that gives the report its lines per author (migrator/report/lineage.py)
against ``git blame --line-porcelain`` of each file, on repositories made here with several
authors: random edits (inserts, deletes, changes, files without a final newline, names with
spaces), side branches merged, renames, binary and empty files, files removed and added again.
A file the replay traces must have exactly blame's counts per (name, email); the files it cannot
trace (renamed, changed by a merge, binary) are left to blame."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import git
import pytest

from migrator.report.lineage import lines_by_author
from migrator.report.owners import find_owners

AUTHORS = ("Ann", "Bob", "Cy")
NAMES = ("a.cu", "b.cu", "dir/c.cu", "my file.cu", "d.cu")


def email(name: str) -> str:
    return f"{name.lower()}@example.invalid"


def blame_counts(repo: git.Repo, path: str) -> Counter:
    """Lines per author (name, email) of HEAD's ``path``, read from ``--line-porcelain``
    (every line's author repeated)."""
    text = repo.git.blame("--line-porcelain", "HEAD", "--", path).splitlines()
    names = [line[7:] for line in text if line.startswith("author ")]
    mails = [line[12:].strip("<>") for line in text if line.startswith("author-mail ")]
    return Counter(zip(names, mails))


class RandomHistory:
    def __init__(self, root: Path, seed: int) -> None:
        self.rng = random.Random(seed)
        self.root = root
        self.repo = git.Repo.init(root, initial_branch="main")

    def commit(self, message: str) -> None:
        name = self.rng.choice(AUTHORS)
        actor = git.Actor(name, email(name))
        self.repo.index.commit(message, author=actor, committer=actor)

    def edit(self, name: str) -> None:
        path = self.root / name
        lines = path.read_text().split("\n") if path.exists() else []
        for _ in range(self.rng.randint(1, 4)):
            at = self.rng.randint(0, len(lines))
            roll = self.rng.random()
            if roll < 0.4 or not lines:
                lines[at:at] = [f"line {self.rng.randint(0, 30)}"
                                for _ in range(self.rng.randint(1, 5))]
            elif roll < 0.7:
                del lines[at:at + self.rng.randint(1, 3)]
            else:
                lines[min(at, len(lines) - 1)] = f"changed {self.rng.randint(0, 9)}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + ("\n" if self.rng.random() < 0.5 else ""))
        self.repo.index.add([name])

    def merge_side_branch(self, number: int) -> None:
        side = self.repo.create_head(f"side{number}", self.repo.head.commit)
        side.checkout()
        self.edit(self.rng.choice(NAMES[:3]))
        self.commit("on a side branch")
        self.repo.heads.main.checkout()
        self.edit(self.rng.choice(NAMES[:4]))
        self.commit("on main")
        author = self.rng.choice(AUTHORS)
        environment = {"GIT_AUTHOR_NAME": author, "GIT_AUTHOR_EMAIL": email(author),
                       "GIT_COMMITTER_NAME": author, "GIT_COMMITTER_EMAIL": email(author)}
        try:
            self.repo.git.merge(f"side{number}", "--no-edit", env=environment)
        except git.GitCommandError:  # a conflict: no merge this time
            self.repo.git.merge("--abort")

    def build(self, steps: int) -> git.Repo:
        for name in NAMES[:4]:
            self.edit(name)
        self.commit("first")
        for step in range(steps):
            roll = self.rng.random()
            if roll < 0.08 and (self.root / "d.cu").exists() and \
                    not (self.root / "e.cu").exists():
                self.repo.git.mv("d.cu", "e.cu")
                self.commit("rename")
            elif roll < 0.15:
                self.merge_side_branch(step)
            elif roll < 0.19:
                (self.root / "data.bin").write_bytes(bytes(self.rng.randrange(256)
                                                           for _ in range(40)) + b"\0")
                self.repo.index.add(["data.bin"])
                self.commit("binary")
            elif roll < 0.21:
                (self.root / "empty.cu").write_text("")
                self.repo.index.add(["empty.cu"])
                self.commit("empty")
            elif roll < 0.26 and (self.root / "b.cu").exists():
                self.repo.index.remove(["b.cu"], working_tree=True)
                self.commit("remove")
            else:
                for name in self.rng.sample(NAMES, self.rng.randint(1, 3)):
                    self.edit(name)
                self.commit(f"change {step}")
        return self.repo


@pytest.mark.parametrize("seed", range(12))
def test_replay_agrees_with_git_blame(tmp_path, seed):
    repo = RandomHistory(tmp_path / "repo", seed).build(30)
    traced = lines_by_author(repo, "", 5000)
    assert traced is not None
    tracked = repo.git.ls_tree("-r", "--name-only", "HEAD").splitlines()
    for path in tracked:
        if path in traced:
            assert +traced[path] == +blame_counts(repo, path), path
    assert any(path in traced for path in tracked)


def test_what_the_replay_leaves_to_blame(tmp_path):
    """A renamed file, a file a merge changed and a binary file are not traced; a file only
    the first-parent chain changed is, even after a merge elsewhere; a file removed and
    added again starts afresh."""
    history = RandomHistory(tmp_path / "repo", 0)
    repo, root = history.repo, history.root

    def put(files: dict[str, str], author: str, message: str) -> None:
        for name, text in files.items():
            (root / name).write_text(text)
        repo.index.add(list(files))
        repo.index.commit(message, author=git.Actor(author, email(author)),
                          committer=git.Actor(author, email(author)))

    put({"plain.cu": "a\nb\nc\n", "moved.cu": "m\n" * 20, "merged.cu": "x\ny\n",
         "again.cu": "1\n2\n"}, "Ann", "first")
    repo.index.remove(["again.cu"], working_tree=True)
    ann, bob = git.Actor("Ann", email("Ann")), git.Actor("Bob", email("Bob"))
    repo.index.commit("remove", author=ann, committer=ann)
    put({"again.cu": "3\n"}, "Bob", "added again")
    side = repo.create_head("side", repo.head.commit)
    side.checkout()
    put({"merged.cu": "x\ny\nz\n"}, "Cy", "side change")
    repo.heads.main.checkout()
    put({"plain.cu": "a\nB\nc\nd\n"}, "Bob", "main change")
    repo.git.merge("side", "--no-edit", env={
        "GIT_AUTHOR_NAME": "Bob", "GIT_AUTHOR_EMAIL": email("Bob"), "GIT_COMMITTER_NAME": "Bob",
        "GIT_COMMITTER_EMAIL": email("Bob")})
    repo.git.mv("moved.cu", "renamed.cu")
    repo.index.commit("rename", author=bob, committer=bob)
    (root / "blob.bin").write_bytes(b"\0\1\2")
    repo.index.add(["blob.bin"])
    repo.index.commit("binary", author=bob, committer=bob)

    traced = lines_by_author(repo, "", 5000)
    ann_id, bob_id = ("Ann", email("Ann")), ("Bob", email("Bob"))
    assert traced["plain.cu"] == Counter({ann_id: 2, bob_id: 2}) == blame_counts(repo, "plain.cu")
    assert traced["again.cu"] == Counter({bob_id: 1})
    assert "renamed.cu" not in traced and "merged.cu" not in traced
    assert "blob.bin" not in traced
    # the owners fall back to blame there: the rename keeps Ann, the merge gives Cy a line
    owners = find_owners(root, ["plain.cu", "renamed.cu", "merged.cu"])
    lines = {rel: {a["name"]: a["lines"] for a in entry["authors"] if a["lines"]}
             for rel, entry in owners.files.items()}
    assert lines["renamed.cu"] == {"Ann": 20}
    assert lines["merged.cu"] == {"Ann": 2, "Cy": 1}
    assert lines["plain.cu"] == {"Ann": 2, "Bob": 2}


def test_subfolder_and_limit(tmp_path):
    repo = RandomHistory(tmp_path / "repo", 3).build(12)
    commits = int(repo.git.rev_list("--count", "--first-parent", "HEAD", "--", "dir"))
    traced = lines_by_author(repo, "dir", 5000)
    assert set(traced) <= {"dir/c.cu"}
    if "dir/c.cu" in traced:
        assert traced["dir/c.cu"] == blame_counts(repo, "dir/c.cu")
    # a history longer than the limit is not replayed (blame then reads every file)
    assert lines_by_author(repo, "dir", commits) is not None
    assert lines_by_author(repo, "dir", commits - 1) is None


def test_a_file_moved_into_the_subfolder_is_left_to_blame(tmp_path):
    """Read for a subfolder, the history shows a file moved in from outside as added; blame
    follows the rename, so the replay leaves that file to it."""
    history = RandomHistory(tmp_path / "repo", 5)
    repo, root = history.repo, history.root
    ann, bob = git.Actor("Ann", email("Ann")), git.Actor("Bob", email("Bob"))
    (root / "top.cu").write_text("1\n2\n3\n")
    (root / "sub").mkdir()
    (root / "sub" / "own.cu").write_text("x\n")
    repo.index.add(["top.cu", "sub/own.cu"])
    repo.index.commit("first", author=ann, committer=ann)
    repo.git.mv("top.cu", "sub/top.cu")
    repo.index.commit("move", author=bob, committer=bob)
    traced = lines_by_author(repo, "sub", 5000)
    assert "sub/top.cu" not in traced
    assert traced["sub/own.cu"] == Counter({("Ann", email("Ann")): 1})
    owners = find_owners(root / "sub", ["top.cu", "own.cu"])
    assert [(a["name"], a["lines"]) for a in owners.files["top.cu"]["authors"]
            if a["lines"]] == [("Ann", 3)]
    assert blame_counts(repo, "sub/top.cu") == Counter({("Ann", email("Ann")): 3})
