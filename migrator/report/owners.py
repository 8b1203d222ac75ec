"""Who knows each file: a CODEOWNERS entry where one matches (the last matching line wins, as
on GitHub and GitLab), else the author with the most lines in ``git blame`` of HEAD, ties
broken by commits among the repository's recent ones that touch the file. Read with
gitpython; a tree outside git, a repository without commits, a shallow clone or a detached
HEAD each give a note in the report, never an error."""

from __future__ import annotations

import posixpath
from collections import Counter
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path

RECENT_COMMITS = 500  # the recent history read for "recent commits"
CODEOWNERS_PLACES = ("CODEOWNERS", ".github/CODEOWNERS", ".gitlab/CODEOWNERS", "docs/CODEOWNERS")


@dataclass
class Owners:
    available: bool  # a git repository with commits was read
    notes: list[str] = field(default_factory=list)
    files: dict[str, dict] = field(default_factory=dict)  # tree path -> owner, source, authors
    codeowners: str = ""  # the CODEOWNERS file read (repository path), if any
    head: str = ""  # the commit HEAD names

    def owner_of(self, rel: str) -> str:
        entry = self.files.get(rel)
        return entry["owner"] if entry and entry["owner"] else ""


def open_repository(root: Path):
    """(repository, its path from the repository root to ``root``) or (None, why not)."""
    try:
        import git
    except Exception as err:  # gitpython refuses to load without a git executable
        return None, f"git cannot be used ({type(err).__name__}): no owners"
    try:
        repo = git.Repo(root, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return None, "the tree is not in a git repository: no owners and no history"
    except Exception as err:
        return None, f"the git repository cannot be read ({type(err).__name__}: {err})"
    if repo.bare or repo.working_tree_dir is None:
        return None, "the repository is bare: no owners"
    try:
        prefix = root.resolve().relative_to(Path(repo.working_tree_dir).resolve()).as_posix()
    except ValueError:
        return None, "the tree is outside its repository's working tree: no owners"
    return repo, "" if prefix == "." else prefix


def repository_notes(repo) -> list[str]:
    """What limits what the history and blame can say."""
    notes = []
    try:
        if not repo.head.is_valid():
            return ["the repository has no commits yet: no owners and no history"]
        if repo.head.is_detached:
            notes.append(f"HEAD is detached at {repo.head.commit.hexsha[:10]}: owners and "
                         "history are those of that commit")
        if repo.git.rev_parse("--is-shallow-repository").strip() == "true":
            notes.append("shallow clone: the history stops at the clone's depth, and blame "
                          "gives the oldest commit there every line older than it")
    except Exception as err:
        notes.append(f"the repository's state cannot be read fully ({type(err).__name__})")
    return notes


def find_owners(root: Path, rels: list[str]) -> Owners:
    repo, prefix = open_repository(root)
    if repo is None:
        return Owners(False, [prefix])
    notes = repository_notes(repo)
    if not repo.head.is_valid():
        return Owners(False, notes)
    result = Owners(True, notes, head=repo.head.commit.hexsha)
    full = {rel: posixpath.normpath(posixpath.join(prefix, rel)) if prefix else rel
            for rel in rels}
    rules, result.codeowners = _codeowners(repo)
    recent = _recent_commits(repo, prefix)
    tracked = _tracked(repo, prefix)
    untracked = []
    for rel, path in full.items():
        lines = _blame(repo, path) if path in tracked else Counter()
        if path not in tracked:
            untracked.append(rel)
        authors = sorted(set(lines) | set(recent.get(path, {})),
                         key=lambda a: (-lines[a], -recent.get(path, {}).get(a, 0), a))
        owners = _codeowner_of(rules, path)
        entry = {"owner": owners or (authors[0] if authors else ""),
                 "source": "CODEOWNERS" if owners else ("blame" if authors else ""),
                 "authors": [{"name": a, "lines": lines[a],
                              "recent_commits": recent.get(path, {}).get(a, 0)}
                             for a in authors[:5]]}
        result.files[rel] = entry
    if untracked:
        result.notes.append(f"{len(untracked)} files are not committed (first: {untracked[0]}): "
                            "no blame for them")
    return result


def _tracked(repo, prefix: str) -> set[str]:
    try:
        listed = repo.git.ls_tree("-r", "--name-only", "HEAD", "--", prefix or ".")
    except Exception:
        return set()
    return set(listed.splitlines())


def _blame(repo, path: str) -> Counter:
    """Lines of HEAD's ``path`` per author (``Name <email>`` kept as the name)."""
    try:
        text = repo.git.blame("--line-porcelain", "HEAD", "--", path)
    except Exception:
        return Counter()
    return Counter(line[7:] for line in text.splitlines() if line.startswith("author "))


def _recent_commits(repo, prefix: str) -> dict[str, Counter]:
    """Commits per author per file among the last RECENT_COMMITS touching the tree."""
    try:
        text = repo.git.log(f"-n{RECENT_COMMITS}", "--no-renames", "--format=%x00%aN",
                            "--name-only", "--", prefix or ".")
    except Exception:
        return {}
    touched: dict[str, Counter] = {}
    for block in text.split("\x00")[1:]:
        author, _, names = block.partition("\n")
        for name in names.split("\n"):
            if name.strip():
                touched.setdefault(name.strip(), Counter())[author.strip()] += 1
    return touched


def _codeowners(repo) -> tuple[list[tuple[str, str]], str]:
    """(pattern, owners) lines of the repository's CODEOWNERS file at HEAD's working tree."""
    base = Path(repo.working_tree_dir)
    for place in CODEOWNERS_PLACES:
        try:
            text = (base / place).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        rules = []
        for line in text.splitlines():
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            pattern, *names = line.split()
            rules.append((pattern, " ".join(names)))
        return rules, place
    return [], ""


def _codeowner_of(rules: list[tuple[str, str]], path: str) -> str:
    """The owners of the last CODEOWNERS line matching ``path`` (an empty owner list there
    means no owner)."""
    found = ""
    for pattern, names in rules:
        if codeowners_match(pattern, path):
            found = names
    return found


def codeowners_match(pattern: str, path: str) -> bool:
    """Does a CODEOWNERS pattern match a repository path? gitignore's rules: a pattern with a
    slash at the start (or inside) is anchored at the root, one without matches at any depth;
    a pattern names a file or a folder and everything under it."""
    anchored = "/" in pattern.rstrip("/")
    body = pattern.strip("/")
    if body in ("*", "**"):
        return True
    parts = path.split("/")
    starts = [0] if anchored else range(len(parts))
    for start in starts:
        tail = "/".join(parts[start:])
        if pattern.endswith("/"):
            if fnmatch(tail, body + "/*"):
                return True
        elif fnmatch(tail, body) or fnmatch(tail, body + "/*"):
            return True
    return False
