"""Who knows each file: a CODEOWNERS entry where one matches (the last matching line wins, as
on GitHub and GitLab), else the author with the most lines of HEAD (what ``git blame`` says;
``lineage`` computes it for most files at once), ties broken by commits among the
repository's recent ones that touch the file.

Authors are people, not spellings: git maps every commit's author through ``.mailmap`` (its
``%aN``/``%aE``, and blame's author lines), and identities that then share an email
(case-insensitive) are one person (``People``), named by the name the mailmap gives, else by
the one the person used last.

Read with gitpython; a tree outside git, a repository without commits, a shallow clone or a detached
HEAD each give a note in the report, never an error."""

from __future__ import annotations

import posixpath
from collections import Counter
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path

from ..fsutil import MiB, read_regular
from .lineage import lines_by_author

RECENT_COMMITS = 500  # the recent history read for "recent commits"
CODEOWNERS_PLACES = ("CODEOWNERS", ".github/CODEOWNERS", ".gitlab/CODEOWNERS", "docs/CODEOWNERS")
CODEOWNERS_LIMIT = 4 * MiB  # GitHub reads 3 MB of one


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


Author = tuple[str, str]  # (name, email), as .mailmap maps them


class People:
    """Who is who among the history's authors. Git applies ``.mailmap`` (the working tree's,
    as ``git log`` and ``git blame`` read it); the identities it gives that share an email
    (compared case-insensitively) are then one person, named by the newest name a mailmap
    entry gave, else by the newest name used. An identity without an email is its name's."""

    def __init__(self, commits: list[tuple[str, str, str, str]] = ()) -> None:
        """``commits``: (mapped name, mapped email, name, email) of each commit, newest
        first."""
        self._named: dict[str, tuple[tuple[int, int], str]] = {}  # person -> (rank, name)
        for order, (name, email, raw_name, raw_email) in enumerate(commits):
            mapped = name != raw_name or email != raw_email
            self.add((name, email), (0 if mapped else 1, order))

    @staticmethod
    def _person(author: Author) -> str:
        name, email = author
        return f"email:{email.strip().lower()}" if email.strip() else f"name:{name}"

    def add(self, author: Author, rank: tuple[int, int] = (2, 0)) -> None:
        """An identity seen; ``rank`` orders the names a person is known by, lowest first:
        (0 given by the mailmap, 1 used, 2 seen only by blame or the recent commits; then the
        commit's age, 0 the newest)."""
        person = self._person(author)
        known = self._named.get(person)
        if author[0] and (known is None or (rank, author[0]) < known):
            self._named[person] = (rank, author[0])

    def name_of(self, author: Author) -> str:
        """The person's name for an identity (its own name where the person is unknown)."""
        known = self._named.get(self._person(author))
        return known[1] if known else author[0] or author[1] or "?"

    def counts(self, by_author: Counter) -> Counter:
        """``by_author`` (keyed by identities) summed per person (keyed by name)."""
        people: Counter = Counter()
        for author, count in by_author.items():
            people[self.name_of(author)] += count
        return people


def read_people(repo, prefix: str) -> People:
    """The people among the authors of HEAD's history under ``prefix`` (mailmapped, newest
    first); an unreadable history gives an empty People (each identity then its own)."""
    try:
        text = repo.git(c="core.quotePath=false").log(
            "--use-mailmap", "--format=%aN%x09%aE%x09%an%x09%ae", "HEAD", "--", prefix or ".")
    except Exception:
        return People()
    return People([tuple(line.split("\t", 3)) for line in text.splitlines()
                   if line.count("\t") >= 3])


def find_owners(root: Path, rels: list[str], jobs: int = 0) -> Owners:
    """Owners of the tree's files ``rels``. Lines per author come from one replay of the
    history's diffs (``lineage``); ``git blame`` runs, in ``jobs`` threads (0: one per CPU),
    only for the files the replay cannot trace (renamed, changed by a merge, binary)."""
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
    people = read_people(repo, prefix)
    recent = _recent_commits(repo, prefix)
    tracked = _tracked(repo, prefix)
    traced = lines_by_author(repo, prefix, HISTORY_LIMIT) or {}
    blamed = [path for path in full.values() if path in tracked and path not in traced]
    lines_of = dict(zip(blamed, _in_threads(lambda path: _blame(repo, path), blamed, jobs)))
    lines_of.update(traced)
    for by_author in [*lines_of.values(), *recent.values()]:
        for author in by_author:  # an identity only blame saw (a file renamed from elsewhere)
            people.add(author)
    lines_of = {path: people.counts(by_author) for path, by_author in lines_of.items()}
    recent = {path: people.counts(by_author) for path, by_author in recent.items()}
    untracked = []
    for rel, path in full.items():
        touched = recent.get(path, Counter())
        if path not in tracked:
            untracked.append(rel)
        lines = lines_of.get(path, Counter()) if path in tracked else Counter()
        authors = sorted(set(lines) | set(touched),
                         key=lambda a: (-lines[a], -touched.get(a, 0), a))
        owners = _codeowner_of(rules, path)
        entry = {"owner": owners or (authors[0] if authors else ""),
                 "source": "CODEOWNERS" if owners else ("blame" if authors else ""),
                 "authors": [{"name": a, "lines": lines[a], "recent_commits": touched.get(a, 0)}
                             for a in authors[:5]]}
        result.files[rel] = entry
    if untracked:
        result.notes.append(f"{len(untracked)} files are not committed (first: {untracked[0]}): "
                            "no blame for them")
    return result


def _in_threads(function, items: list, jobs: int) -> list:
    """``function`` over ``items`` in threads (each call waits on a git process)."""
    if len(items) < 4:
        return list(map(function, items))
    from concurrent.futures import ThreadPoolExecutor

    from ..pool import worker_count

    with ThreadPoolExecutor(max_workers=min(worker_count(jobs), 16)) as pool:
        return list(pool.map(function, items))


def _tracked(repo, prefix: str) -> set[str]:
    try:
        listed = repo.git.ls_tree("-r", "--name-only", "HEAD", "--", prefix or ".")
    except Exception:
        return set()
    return set(listed.splitlines())


def _blame(repo, path: str) -> Counter:
    """Lines of HEAD's ``path`` per author (name, email; blame applies ``.mailmap``), from
    ``git blame --incremental`` (each group of lines: ``<commit> <line> <line> <count>``, the
    commit's author given once)."""
    try:
        text = repo.git.blame("--incremental", "HEAD", "--", path)
    except Exception:
        return Counter()
    name_of: dict[str, str] = {}
    mail_of: dict[str, str] = {}
    counts: Counter = Counter()
    commit = ""
    for line in text.splitlines():
        fields = line.split(" ")
        if len(fields) == 4 and len(fields[0]) >= 40 and fields[3].isdigit():
            commit = fields[0]
            counts[commit] += int(fields[3])
        elif line.startswith("author ") and commit not in name_of:
            name_of[commit] = line[7:]
        elif line.startswith("author-mail ") and commit not in mail_of:
            mail_of[commit] = line[12:].strip().removeprefix("<").removesuffix(">")
    lines: Counter = Counter()
    for commit, count in counts.items():
        lines[(name_of.get(commit, "?"), mail_of.get(commit, ""))] += count
    return lines


HISTORY_LIMIT = 5000  # commits the replay reads; beyond, every file is blamed


def _recent_commits(repo, prefix: str) -> dict[str, Counter]:
    """Commits per author (name, email after ``.mailmap``) touching each file among the
    RECENT_COMMITS newest (renames followed, merges shown against each parent)."""
    recent: dict[str, Counter] = {}
    try:
        text = repo.git.log(f"-n{RECENT_COMMITS}", "-M", "-m", "--name-only",
                            "--format=%x00%H%x09%aN%x09%aE", "--", prefix or ".")
    except Exception:
        return recent
    seen: set[tuple[str, str]] = set()
    for block in text.split("\x00")[1:]:
        header, _, changes = block.partition("\n")
        commit, _, identity = header.partition("\t")
        name, _, email = identity.partition("\t")
        for path in changes.split("\n"):
            if path and (commit, path) not in seen:
                seen.add((commit, path))
                recent.setdefault(path, Counter())[(name, email)] += 1
    return recent


def _codeowners(repo) -> tuple[list[tuple[str, str]], str]:
    """(pattern, owners) lines of the repository's CODEOWNERS file at HEAD's working tree."""
    base = Path(repo.working_tree_dir)
    for place in CODEOWNERS_PLACES:
        try:
            text = read_regular(base / place, CODEOWNERS_LIMIT).decode("utf-8", "replace")
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
