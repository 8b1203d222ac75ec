"""Owners are people, not spellings (issue 29): a real repository made here where one person
committed as "karpathy" <k@old.example> and as "Andrej Karpathy" <andrej@new.example>, joined
by its .mailmap, and another as "Bob" and "Robert" with one email in two cases (no mailmap).
Per-file owners and authors (the history replay, and blame for a renamed file) and the
report's owners table count each person once, by the name the mailmap or the newest commit
gives."""

from __future__ import annotations

from pathlib import Path

import git
import pytest

from migrator.report.owners import People, find_owners

from test_report import report_of

MAILMAP = b"Andrej Karpathy <andrej@new.example> karpathy <k@old.example>\n"
KERNEL = b"__global__ void k(float* p) { p[threadIdx.x] = 1.0f; }\n"


def lines(count: int, word: str) -> bytes:
    return b"".join(b"// %s %d\n" % (word.encode(), n) for n in range(count))


def commit(repo: git.Repo, files: dict[str, bytes], name: str, email: str,
           move: tuple[str, str] | None = None) -> None:
    root = Path(repo.working_tree_dir)
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    if files:
        repo.index.add(list(files))
    if move:
        repo.git.mv(*move)
    actor = git.Actor(name, email)
    repo.index.commit(f"by {name}", author=actor, committer=actor)


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    """a.cu: 5 lines by karpathy, then 3 by Andrej Karpathy; moved.cu: 4 lines by karpathy,
    renamed by Bob (blame follows it, the replay does not); b.cu: 2 lines by Bob, then 6 by
    Robert (Bob@EXAMPLE.org: Bob's email, his newest name) and 1 by Andrej Karpathy."""
    root = tmp_path / "repo"
    repo = git.Repo.init(root)
    old, new = ("karpathy", "k@old.example"), ("Andrej Karpathy", "andrej@new.example")
    bob, robert = ("Bob", "bob@example.org"), ("Robert", "Bob@EXAMPLE.org")
    commit(repo, {"a.cu": KERNEL + lines(4, "old"), "before.cu": KERNEL + lines(3, "m")}, *old)
    commit(repo, {"b.cu": KERNEL + lines(1, "bob")}, *bob)
    commit(repo, {}, *bob, move=("before.cu", "moved.cu"))
    commit(repo, {"a.cu": KERNEL + lines(4, "old") + lines(3, "new")}, *new)
    commit(repo, {"b.cu": KERNEL + lines(1, "bob") + lines(6, "robert")}, *robert)
    commit(repo, {"b.cu": KERNEL + lines(1, "bob") + lines(6, "robert") + lines(1, "a")}, *new)
    commit(repo, {".mailmap": MAILMAP}, *new)
    return root


def authors(entry: dict) -> dict[str, int]:
    """Lines per author (those with lines of HEAD; one who only renamed a file has none)."""
    return {author["name"]: author["lines"] for author in entry["authors"] if author["lines"]}


def test_aliases_are_one_owner_per_file(repository: Path):
    owners = find_owners(repository, ["a.cu", "b.cu", "moved.cu"])
    assert authors(owners.files["a.cu"]) == {"Andrej Karpathy": 8}
    assert authors(owners.files["moved.cu"]) == {"Andrej Karpathy": 4}  # blame, mailmapped
    assert [(a["name"], a["recent_commits"]) for a in owners.files["moved.cu"]["authors"]] == [
        ("Andrej Karpathy", 0), ("Robert", 1)]  # Bob's rename, under his newer name
    assert authors(owners.files["b.cu"]) == {"Robert": 8, "Andrej Karpathy": 1}
    assert {rel: entry["owner"] for rel, entry in owners.files.items()} == {
        "a.cu": "Andrej Karpathy", "b.cu": "Robert", "moved.cu": "Andrej Karpathy"}
    recent = {a["name"]: a["recent_commits"] for a in owners.files["b.cu"]["authors"]}
    assert recent == {"Robert": 2, "Andrej Karpathy": 1}


def test_without_the_mailmap_the_two_emails_are_two_people(repository: Path):
    (repository / ".mailmap").unlink()  # git reads the working tree's .mailmap
    owners = find_owners(repository, ["a.cu"])
    assert authors(owners.files["a.cu"]) == {"karpathy": 5, "Andrej Karpathy": 3}


def test_the_owners_table_counts_each_person_once(repository: Path, tmp_path: Path):
    document = report_of(repository, tmp_path / "report")
    people = {person["name"]: person for person in document["owners"]["people"]}
    assert sorted(people) == ["Andrej Karpathy", "Robert"]
    assert sorted(people["Andrej Karpathy"]["files"]) == ["a.cu", "moved.cu"]
    assert people["Robert"]["files"] == ["b.cu"]
    assert people["Andrej Karpathy"]["lines"] == 8 + 4
    records = {record["path"]: record for record in document["files"]}
    assert records["a.cu"]["owner"] == "Andrej Karpathy"
    assert authors(records["a.cu"]) == {"Andrej Karpathy": 8}


def test_people_name_a_person_by_the_mailmap_else_the_newest_name():
    commits = [  # newest first: (mapped name, mapped email, name, email)
        ("Ann Lee", "ann@x.org", "Ann Lee", "ann@x.org"),
        ("Ann Lee", "ann@x.org", "alee", "ANN@x.org"),  # the mailmap renamed this one
        ("Ann L.", "Ann@X.org", "Ann L.", "Ann@X.org"),
        ("Cy", "cy@x.org", "Cy", "cy@x.org"),
        ("C. Young", "CY@x.org", "C. Young", "CY@x.org"),
        ("Dee", "", "Dee", ""),
    ]
    people = People(commits)
    assert people.name_of(("Ann L.", "ann@X.ORG")) == "Ann Lee"
    assert people.name_of(("C. Young", "cy@x.org")) == "Cy"  # the newest name used
    assert people.name_of(("Dee", "")) == "Dee"
    assert people.name_of(("Eve", "eve@x.org")) == "Eve"  # never seen: as it is
    people.add(("Eve", "eve@x.org"))
    assert people.name_of(("E.", "EVE@x.org")) == "Eve"
    assert people.counts({("Cy", "cy@x.org"): 2, ("C. Young", "CY@X.org"): 3,
                          ("Dee", ""): 1}) == {"Cy": 5, "Dee": 1}
