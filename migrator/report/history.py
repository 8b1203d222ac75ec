"""Progress over time: the remaining effort and findings at each selected commit (the tree's
files as that commit has them, read from git's objects; the working tree is not touched).

A file's results are cached per blob: its content hash (git's object id) plus those of the
project files it includes, under a key of the tool's rules and the settings; a file unchanged
between commits is converted once for the whole walk, and again only after an upgrade or with
other settings. The cache lives in the report folder (``history-cache.json``); it is untrusted
on read: anything but exactly what this module writes is ignored as a whole. Only per-commit
totals stay in memory, so memory does not grow with the number of commits.

``--history-file`` keeps a list of snapshots (one per CI run); ``regressed`` compares the new
one with the last.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

from .. import __version__
from ..buildfiles import language_of
from ..fsutil import UnreadableFileError, atomic_write, read_regular
from ..results import CONVERTIBLE_SUFFIXES
from ..workspace.digest import ruleset_digest
from ..workspace.includes import ANY_PATH, included_files, resolve
from .effort import CLASSES, EffortModel
from .owners import open_repository, repository_notes

CACHE_NAME = "history-cache.json"
CACHE_FORMAT = 1
SNAPSHOT_FORMAT = 1
_MAX_CACHE_BYTES = 256 * 1024 * 1024
_MAX_HISTORY_BYTES = 64 * 1024 * 1024  # a --history-file: some 300,000 snapshots
_SYMLINK = 0o120000  # git's mode of a symbolic link


class HistoryError(Exception):
    """A history file that cannot be used (it is not overwritten then)."""


def _cache_key(settings) -> str:
    return f"{__version__}|{CACHE_FORMAT}|{ruleset_digest(settings.rules_dir)}|" \
           f"{settings.fingerprint()}"


class BlobCache:
    """Per blob: the quoted includes it spells (``direct``), and per blob-with-its-includes
    the counts of its findings (``results``: lines, kernels and rows of code, kind, fixed,
    severity, count)."""

    def __init__(self, path: Path, key: str) -> None:
        self.path, self.key = path, key
        self.direct: dict[str, list[str]] = {}
        self.results: dict[str, dict] = {}
        self.note = ""
        self.hits = self.misses = 0
        self._load()

    def _load(self) -> None:
        try:
            if not self.path.is_file() or self.path.is_symlink():
                return
            stored = json.loads(read_regular(self.path, _MAX_CACHE_BYTES))
        except UnreadableFileError as err:
            self.note = f"{self.path.name}: {err.strerror}: ignored (rebuilt)"
            return
        except (OSError, ValueError, RecursionError):
            self.note = f"{self.path.name} cannot be read: ignored (rebuilt)"
            return
        if type(stored) is not dict or stored.get("format") != CACHE_FORMAT:
            self.note = f"{self.path.name} is not a history cache of this version: rebuilt"
            return
        if stored.get("key") != self.key:
            return  # other rules or settings: nothing in it applies
        direct, results = stored.get("direct"), stored.get("results")
        if not (type(direct) is dict and type(results) is dict
                and all(type(v) is list and all(type(s) is str for s in v)
                        for v in direct.values())
                and all(_valid_result(v) for v in results.values())):
            self.note = f"{self.path.name} is damaged: ignored (rebuilt)"
            return
        self.direct, self.results = direct, results

    def save(self) -> None:
        payload = json.dumps({"format": CACHE_FORMAT, "key": self.key, "direct": self.direct,
                              "results": self.results}, separators=(",", ":"), sort_keys=True)
        try:
            atomic_write(self.path, payload.encode())
        except OSError:
            pass  # the report is written; the next run converts again


def _valid_result(value) -> bool:
    if type(value) is not dict or set(value) != {"lines", "failed", "rows"}:
        return False
    rows = value["rows"]
    return (type(value["lines"]) is int and type(value["failed"]) is bool and type(rows) is list
            and all(type(row) is list and len(row) == 5 and type(row[0]) is str
                    and type(row[1]) is str and type(row[2]) is bool and type(row[3]) is str
                    and type(row[4]) is int for row in rows))


def _tracked_file(rel: str) -> bool:
    return rel.endswith(CONVERTIBLE_SUFFIXES) or language_of(rel) is not None


def select_commits(repo, prefix: str, since: str | None, every: int, limit: int) -> list:
    """The commits to walk, oldest first: those touching the tree (``--since``), every Nth
    from the newest, at most ``limit`` (the newest kept)."""
    kwargs = {"since": since} if since else {}
    commits = list(repo.iter_commits("HEAD", paths=prefix or None, **kwargs))
    chosen = commits[::max(1, every)][:max(1, limit)]
    return list(reversed(chosen))


def walk_history(source: Path, options, model: EffortModel, family_of: dict,
                 optimizing: frozenset, say) -> dict:
    """Per selected commit: remaining effort (port hours), findings per class, files, lines,
    and what changed against the previous commit walked."""
    repo, prefix = open_repository(source)
    if repo is None:
        return {"commits": [], "notes": [prefix], "cache": None}
    notes = repository_notes(repo)
    if not repo.head.is_valid():
        return {"commits": [], "notes": notes, "cache": None}
    history = options.history
    try:
        commits = select_commits(repo, prefix, history.since, history.every, history.limit)
    except Exception as err:
        return {"commits": [], "notes": notes + [f"the history cannot be read: {err}"],
                "cache": None}
    if not commits and history.since:
        notes.append(f"no commit touches the tree since {history.since!r} (as git reads the "
                     "date)")
    merges = sum(len(commit.parents) > 1 for commit in commits)
    if merges:
        notes.append(f"{merges} merge commits walked: each counted with its merged tree")
    options.report_dir.mkdir(parents=True, exist_ok=True)
    cache = BlobCache(options.report_dir / CACHE_NAME, _cache_key(options.settings))
    if cache.note:
        notes.append(cache.note)
    points = []
    previous = None
    for number, commit in enumerate(commits, 1):
        say(f"history: commit {number}/{len(commits)} {commit.hexsha[:10]}")
        totals = _commit_totals(commit, prefix, options, cache, model, family_of, optimizing)
        point = {"commit": commit.hexsha, "short": commit.hexsha[:10],
                 "date": commit.committed_datetime.isoformat(),
                 "author": commit.author.name, "summary": commit.summary[:120],
                 "merge": len(commit.parents) > 1, **totals}
        point["delta_hours"] = round(point["hours_port"] - previous["hours_port"], 3) \
            if previous else 0.0
        points.append(point)
        previous = point
    cache.save()
    return {"commits": points, "notes": notes,
            "cache": {"file": CACHE_NAME, "hits": cache.hits, "misses": cache.misses},
            "moved_most": sorted((p for p in points[1:] if p["delta_hours"] < 0),
                                 key=lambda p: p["delta_hours"])[:5]}


def _commit_totals(commit, prefix: str, options, cache: BlobCache, model: EffortModel,
                   family_of: dict, optimizing: frozenset) -> dict:
    from ..runner import process_all

    try:
        tree = commit.tree / prefix if prefix else commit.tree
    except KeyError:
        return _empty_totals()
    blobs = {}
    for item in tree.traverse():
        # a symlink's blob holds its target's path: not followed, as the runner does not
        if item.type == "blob" and item.mode != _SYMLINK and _tracked_file(
                item.path[len(prefix) + 1:] if prefix else item.path):
            blobs[item.path[len(prefix) + 1:] if prefix else item.path] = item
    data: dict[str, bytes] = {}

    def read(rel: str) -> bytes | None:
        if rel not in blobs:
            return None
        if rel not in data:
            data[rel] = blobs[rel].data_stream.read()
        return data[rel]

    def direct_targets(rel: str) -> list[str]:
        sha = blobs[rel].hexsha
        if sha not in cache.direct:
            # what the file spells, found the runner's way: its own includes, resolved
            spelled: dict = {}
            included_files(rel, read(rel), ANY_PATH, lambda _: None, spelled)
            cache.direct[sha] = [text for _, text in spelled.get(rel, [])]
        return [target for text in cache.direct[sha]
                if (target := resolve(rel, text, blobs)) is not None]

    keys, misses = {}, []
    for rel in blobs:
        closure, queue = set(), [rel]
        while queue:
            for target in direct_targets(queue.pop()):
                if target != rel and target not in closure:
                    closure.add(target)
                    queue.append(target)
        key = blobs[rel].hexsha
        if closure:
            key += "+" + hashlib.blake2b("\n".join(
                f"{path}:{blobs[path].hexsha}" for path in sorted(closure)).encode(),
                digest_size=12).hexdigest()
        keys[rel] = key
        if key in cache.results:
            cache.hits += 1
        else:
            cache.misses += 1
            misses.append(rel)
    work = []
    for rel in misses:
        content = read(rel)
        work.append((rel, content, included_files(rel, content, blobs, read)))
    for rel, entry in zip(misses, process_all(work, count_file, options.settings, options.jobs)):
        cache.results[keys[rel]] = entry
    totals = _empty_totals()
    classes: Counter = Counter()
    for rel, key in keys.items():
        entry = cache.results[key]
        totals["files"] += 1
        totals["lines"] += entry["lines"]
        totals["failed_files"] += entry["failed"]
        for code, kind, fixed, severity, count in entry["rows"]:
            klass = model.classify(code, kind, fixed, severity, family_of.get(code, ""))
            classes[klass] += count
            phase = "hours_optimisation" if code in optimizing else "hours_port"
            totals[phase] += model.cost(code, klass) * count
    totals["findings"] = {name: classes[name] for name in CLASSES}
    totals["hours_port"] = round(totals["hours_port"], 3)
    totals["hours_optimisation"] = round(totals["hours_optimisation"], 3)
    return totals


def count_file(rel: str, content: bytes, settings, included: tuple = ()) -> dict:
    """A file's cache entry, made where it is converted (a worker process): its lines, whether
    it failed, and its findings counted by code, kind, fixed and severity."""
    from ..runner import convert_file

    result = convert_file(rel, content, settings, included)
    counts = Counter((f.code, f.kind, f.fixed, f.severity) for f in result.findings)
    return {"lines": content.count(b"\n"), "failed": result.status == "failed",
            "rows": [[*key, count] for key, count in sorted(counts.items())]}


def _empty_totals() -> dict:
    return {"files": 0, "lines": 0, "failed_files": 0, "hours_port": 0.0,
            "hours_optimisation": 0.0, "findings": {name: 0 for name in CLASSES}}


# -- snapshots for CI ---------------------------------------------------------------------------

def snapshot_of(document: dict) -> dict:
    """What a CI run records of a report: when, which commit, what remains."""
    summary = document["summary"]
    return {"generated": document["generated"], "commit": document.get("commit") or "",
            "hours_port": summary["hours_port"], "findings": summary["findings"],
            "blockers": summary["blockers"], "files": summary["files"],
            "lines": summary["lines"]}


def read_snapshots(path: Path) -> list[dict]:
    """The snapshots a history file holds (none when it does not exist); HistoryError for a
    file that is not one (it is then left as it is)."""
    if not path.exists():
        return []
    try:
        stored = json.loads(read_regular(path, _MAX_HISTORY_BYTES))
    except OSError as err:
        raise HistoryError(f"{path}: cannot read: {err.strerror}") from None
    except (ValueError, RecursionError):
        raise HistoryError(f"{path}: not a rocmigrate history file (not JSON); not "
                           "overwritten") from None
    ours = type(stored) is dict and stored.get("format") == SNAPSHOT_FORMAT
    snapshots = stored.get("snapshots") if ours else None
    if type(snapshots) is not list or not all(
            type(s) is dict and isinstance(s.get("hours_port"), (int, float))
            and type(s.get("blockers")) is int for s in snapshots):
        raise HistoryError(f"{path}: not a rocmigrate history file of this version; not "
                           "overwritten")
    return snapshots


def append_snapshot(path: Path, document: dict) -> tuple[dict | None, dict]:
    """Append the report's snapshot to the history file: (the previous one or None, the new)."""
    snapshots = read_snapshots(path)
    current = snapshot_of(document)
    try:
        atomic_write(path, (json.dumps({"format": SNAPSHOT_FORMAT,
                                        "snapshots": snapshots + [current]},
                                       indent=1) + "\n").encode())
    except OSError as err:
        raise HistoryError(f"{path}: cannot write: {err.strerror}") from None
    return (snapshots[-1] if snapshots else None), current


def regressed(previous: dict | None, current: dict) -> list[str]:
    """Why the remaining work grew against the previous snapshot (empty: it did not)."""
    if previous is None:
        return []
    reasons = []
    if current["hours_port"] > previous["hours_port"] + 1e-6:
        reasons.append(f"remaining effort grew from {previous['hours_port']:g} h to "
                       f"{current['hours_port']:g} h")
    if current["blockers"] > previous["blockers"]:
        reasons.append(f"blockers grew from {previous['blockers']} to {current['blockers']}")
    return reasons
