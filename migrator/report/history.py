"""Progress over time: the remaining effort and findings at each selected commit of HEAD's
first-parent line (the tree's files as that commit has them, read from git's objects; the working
tree is not touched), each with its change against its first parent: a merge is credited with
what it brought in, and the side branch's commits are not walked on their own.

One ``git log --first-parent --raw`` pass names the blobs each commit changes; the walk keeps
the tree's files (path -> blob) and, at each state it evaluates, looks only at the files that
changed and those whose includes reach one. A file's results are cached per blob: its content
hash (git's object id) plus those of the project files it includes, under a key of the tool's
rules and the settings; a file unchanged between commits is converted once for the whole walk,
and again only after an upgrade or with other settings. Files to convert are batched to the
worker processes; each state's totals are the previous one's with the changed files' counts
swapped. The cache lives in the report folder (``history-cache.json``); it is untrusted on
read: anything but exactly what this module writes is ignored as a whole.

``--history-file`` keeps a list of snapshots (one per CI run); ``regressed`` compares the new
one with the last.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

from .. import __version__
from ..buildfiles import language_of
from ..fsutil import UnreadableFileError, atomic_write, read_regular
from ..results import CONVERTIBLE_SUFFIXES
from ..workspace.digest import ruleset_digest
from ..workspace.includes import ANY_PATH, included_files, resolve
from .effort import EffortModel, tree_hours
from .owners import open_repository, repository_notes

CACHE_NAME = "history-cache.json"
CACHE_FORMAT = 3  # 3: rows name their symbol and library (what makes a decision)
SNAPSHOT_FORMAT = 1
_MAX_CACHE_BYTES = 256 * 1024 * 1024
_MAX_HISTORY_BYTES = 64 * 1024 * 1024  # a --history-file: some 300,000 snapshots
CHUNK = 1024  # files handed to the worker processes at once (bounds the blobs held)
PROGRESS_EVERY = 2.0  # seconds between the walk's progress lines


class HistoryError(Exception):
    """A history file that cannot be used (it is not overwritten then)."""


def _cache_key(settings) -> str:
    return f"{__version__}|{CACHE_FORMAT}|{ruleset_digest(settings.rules_dir)}|" \
           f"{settings.fingerprint()}"


class BlobCache:
    """Per blob: the quoted includes it spells (``direct``), and per blob-with-its-includes
    the counts of its findings (``results``: lines, whether it failed, and rows of code, kind,
    fixed, severity, symbol, library, count)."""

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
            and all(type(row) is list and len(row) == 7 and type(row[0]) is str
                    and type(row[1]) is str and type(row[2]) is bool and type(row[3]) is str
                    and type(row[4]) is str and type(row[5]) is str and type(row[6]) is int
                    for row in rows))


def _tracked_file(rel: str) -> bool:
    return rel.endswith(CONVERTIBLE_SUFFIXES) or language_of(rel) is not None


@dataclass
class Step:
    """A commit of HEAD's first-parent line and what it changes against its first parent (a
    merge: what it brought in): the tree's tracked files, path -> new blob id (None: gone)."""

    sha: str
    parents: list[str]
    changes: dict[str, str | None]
    touched: bool  # it changes some file under the tree, tracked or not (a README)
    date: str = ""  # committed, ISO 8601
    author: str = ""  # as .mailmap names them
    summary: str = ""


def first_parent_line(repo, prefix: str) -> list[Step]:
    """HEAD's first-parent line, oldest first, from one ``git log --raw`` pass (no tree is
    listed: each commit names only the blobs it changes), with each commit's date, author and
    subject."""
    out = repo.git(c="log.showSignature=false").log(
        "--first-parent", "-m", "--root", "--reverse", "--raw", "--no-renames", "--no-abbrev",
        "--no-color", "--no-ext-diff",
        "-z", "--format=%x01%H %P%x1f%cI%x1f%aN%x1f%s", "HEAD", "--", stdout_as_string=False)
    inside = prefix + "/" if prefix else ""
    steps: list[Step] = []
    tokens = out.split(b"\0")
    index = 0
    while index < len(tokens):
        token = tokens[index].lstrip(b"\n")
        index += 1
        if token.startswith(b"\x01"):  # the commit's header: ids, date, author, subject
            ids, date, author, summary = token[1:].decode("utf-8", "replace").split("\x1f", 3)
            ids = ids.split()
            steps.append(Step(ids[0], ids[1:], {}, False, date, author, summary))
        elif token.startswith(b":") and steps and index < len(tokens):
            path = tokens[index].decode("utf-8", "surrogateescape")
            index += 1
            if not path.startswith(inside):
                continue
            step, rel = steps[-1], path[len(inside):]
            step.touched = True
            if _tracked_file(rel):
                # ":old-mode new-mode old-id new-id status"; a regular file's mode is 100xxx;
                # deleted (000000), a symlink (120000, not followed) or a submodule: not a file
                _, new_mode, _, new_id = token[1:].decode("ascii").split()[:4]
                step.changes[rel] = new_id if new_mode.startswith("100") else None
    return steps


def select_steps(repo, steps: list[Step], since: str | None, every: int,
                 limit: int | None) -> list[int]:
    """Indexes of the commits to show, oldest first: those of the line touching the tree
    (``--since``: committed since then, as git reads the date), every Nth from the newest, at
    most ``limit`` (the newest kept; None: all)."""
    chosen = [index for index, step in enumerate(steps) if step.touched]
    if since:
        recent = set(repo.git.rev_list("--first-parent", f"--since={since}", "HEAD",
                                     "--").split())
        chosen = [index for index in chosen if steps[index].sha in recent]
    chosen = chosen[::-1][::max(1, every)]
    if limit is not None:
        chosen = chosen[:max(1, limit)]
    return chosen[::-1]


def _merged_commits(repo, step: Step) -> int:
    """How many commits a merge brings in: reachable from it, not from its first parent."""
    try:
        return int(repo.git.rev_list("--count", step.sha, f"^{step.parents[0]}")) - 1
    except Exception:  # a shallow clone may lack the side branch
        return 0


def walk_history(source: Path, options, model: EffortModel, family_of: dict,
                 optimizing: frozenset, say) -> dict:
    """Per selected commit of HEAD's first-parent line: remaining effort (port hours),
    findings per class, files, lines, and what changed against its first parent."""
    repo, prefix = open_repository(source)
    if repo is None:
        return {"commits": [], "notes": [prefix], "cache": None}
    notes = repository_notes(repo)
    if not repo.head.is_valid():
        return {"commits": [], "notes": notes, "cache": None}
    history = options.history
    try:
        steps = first_parent_line(repo, prefix)
        chosen = select_steps(repo, steps, history.since, history.every, history.limit)
        merged = {index: _merged_commits(repo, steps[index]) for index in chosen
                  if len(steps[index].parents) > 1}
    except Exception as err:
        return {"commits": [], "notes": notes + [f"the history cannot be read: {err}"],
                "cache": None}
    if not chosen and history.since:
        notes.append(f"no commit touches the tree since {history.since!r} (as git reads the "
                     "date)")
    if merged:
        notes.append(f"{len(merged)} merge commits walked: each credited with what it brought "
                     f"in against its first parent (the {sum(merged.values())} side-branch "
                     "commits they merge are not walked on their own)")
    options.report_dir.mkdir(parents=True, exist_ok=True)
    cache = BlobCache(options.report_dir / CACHE_NAME, _cache_key(options.settings))
    if cache.note:
        notes.append(cache.note)
    say(f"history: {len(chosen)} commits of the {len(steps)} on HEAD's first-parent line")
    walk = _Walk(repo, cache, options, say)
    wanted = set(chosen)
    before, after = {}, {}  # step index -> evaluation of the state before / after it
    shown = time.monotonic()
    for index, step in enumerate(steps[:chosen[-1] + 1] if chosen else ()):
        if index in wanted and step.parents:
            before[index] = walk.evaluation()
        walk.apply(step)
        if index in wanted:
            after[index] = walk.evaluation()
            if time.monotonic() - shown >= PROGRESS_EVERY:
                shown = time.monotonic()
                say(f"history: commit {len(after)}/{len(chosen)} {step.sha[:10]}, "
                    f"{cache.misses} files to convert so far")
    totals = walk.totals(model, family_of, optimizing)
    cache.save()
    points = []
    for index in chosen:
        step = steps[index]
        point = {"commit": step.sha, "short": step.sha[:10], "date": step.date,
                 "author": step.author, "summary": step.summary[:120], "merge": len(step.parents) > 1,
                 **totals[after[index]]}
        point["delta_hours"] = round(point["hours_port"] - totals[before[index]]["hours_port"],
                                     3) + 0.0 if index in before else 0.0
        point.update(parent=step.parents[0] if step.parents else "",
                     merged_commits=merged.get(index, 0), files_changed=len(step.changes))
        points.append(point)
    return {"commits": points, "notes": notes,
            "cache": {"file": CACHE_NAME, "hits": cache.hits, "misses": cache.misses},
            "moved_most": sorted((p for p in points if p["delta_hours"] < 0),
                                 key=lambda p: p["delta_hours"])[:5]}


def _name(spelled: str) -> str:
    """The file name an include spelled so can resolve to ("": any, for a spelling that ends
    in no name, such as ``..``)."""
    name = posixpath.basename(posixpath.normpath(spelled))
    return "" if name in (".", "..") else name


class _Walk:
    """The tree's files along the line (path -> blob id), and per evaluated state the files
    whose key (blob plus the blobs of the project files it includes) changed since the last.

    An evaluation looks only at the files changed since the last one, those whose includes
    reach one of them (``users``), and, when a file came or went, those spelling an include of
    its name (``spellers``: what such an include resolves to may have changed). New keys are
    queued for conversion and converted in batches by the worker processes; totals are
    summed afterwards, the changed files' old counts subtracted and the new added."""

    def __init__(self, repo, cache: BlobCache, options, say) -> None:
        self.repo, self.cache, self.options, self.say = repo, cache, options, say
        self.state: dict[str, str] = {}  # tree path -> blob id, now
        self.dirty: set[str] = set()  # paths changed since the last evaluation
        self.keys: dict[str, str] = {}  # tree path -> key, at the last evaluation
        self.closure: dict[str, set[str]] = {}  # tree path -> project files it includes
        self.users: defaultdict[str, set[str]] = defaultdict(set)  # path -> who includes it
        self.spells: dict[str, set[str]] = {}  # tree path -> the names its includes spell
        self.spellers: defaultdict[str, set[str]] = defaultdict(set)  # name -> who spells it
        self.evaluations: list[list[tuple[str, str | None]]] = []  # (path, new key or None)
        self.pending: dict[str, tuple] = {}  # key -> (path, bytes, included files): to convert
        self.blobs: dict[str, bytes] = {}
        self.converted = 0

    def apply(self, step: Step) -> None:
        for rel, blob in step.changes.items():
            if blob is None:
                self.state.pop(rel, None)
            else:
                self.state[rel] = blob
            self.dirty.add(rel)

    def read(self, blob: str) -> bytes:
        if blob not in self.blobs:
            self.blobs[blob] = self.repo.odb.stream(bytes.fromhex(blob)).read()
        return self.blobs[blob]

    def spelled(self, rel: str) -> list[str]:
        """What the file's own quoted includes spell (cached per blob)."""
        blob = self.state[rel]
        if blob not in self.cache.direct:
            found: dict = {}
            included_files(rel, self.read(blob), ANY_PATH, lambda _: None, found)
            self.cache.direct[blob] = [text for _, text in found.get(rel, [])]
        return self.cache.direct[blob]

    def evaluation(self) -> int:
        """The index of the evaluation of the state now (the last one when nothing changed)."""
        if self.evaluations and not self.dirty:
            return len(self.evaluations) - 1
        dirty, self.dirty = self.dirty, set()
        seeds = set(dirty)
        for rel in dirty:
            if (rel in self.keys) != (rel in self.state):  # came or went
                seeds |= self.spellers.get(posixpath.basename(rel), set())
                seeds |= self.spellers.get("", set())
        affected = set(seeds)
        for rel in seeds:
            affected |= self.users.get(rel, set())
        targets: dict[str, list[str]] = {}  # this evaluation's resolved includes, per path
        changes = []
        for rel in sorted(affected):
            for path in self.closure.pop(rel, ()):
                self.users[path].discard(rel)
            for name in self.spells.pop(rel, ()):
                self.spellers[name].discard(rel)
            old = self.keys.get(rel)
            if rel not in self.state:
                if old is not None:
                    del self.keys[rel]
                    changes.append((rel, None))
                continue
            closure, queue = set(), [rel]
            while queue:
                path = queue.pop()
                if path not in targets:
                    targets[path] = [target for text in self.spelled(path)
                                     if (target := resolve(path, text, self.state)) is not None]
                for target in targets[path]:
                    if target != rel and target not in closure:
                        closure.add(target)
                        queue.append(target)
            self.closure[rel] = closure
            for path in closure:
                self.users[path].add(rel)
            self.spells[rel] = names = {_name(text) for text in self.spelled(rel)}
            for name in names:
                self.spellers[name].add(rel)
            key = self.state[rel]
            if closure:
                key += "+" + hashlib.blake2b("\n".join(
                    f"{path}:{self.state[path]}" for path in sorted(closure)).encode(),
                    digest_size=12).hexdigest()
            if key != old:
                self.keys[rel] = key
                changes.append((rel, key))
                self._need(rel, key, closure)
        self.evaluations.append(changes)
        if len(self.pending) >= CHUNK:
            self.flush()
        elif len(self.blobs) > 4 * CHUNK:
            self.blobs.clear()
        return len(self.evaluations) - 1

    def _need(self, rel: str, key: str, closure: set[str]) -> None:
        if key in self.cache.results or key in self.pending:
            self.cache.hits += 1
            return
        self.cache.misses += 1
        # the files it includes, found the runner's way among those its key names (the same:
        # an include resolves to the first candidate that exists, which the closure holds)
        known = {path: self.state[path] for path in closure}
        known[rel] = self.state[rel]
        content = self.read(known[rel])
        self.pending[key] = (rel, content, included_files(
            rel, content, known, lambda path: self.read(known[path]) if path in known else None))

    def flush(self) -> None:
        """Convert the queued files, in the worker processes."""
        from ..runner import process_all

        if self.pending:
            self.say(f"history: converting {len(self.pending)} files")
            keys, work = list(self.pending), list(self.pending.values())
            for key, entry in zip(keys, process_all(work, count_file, self.options.settings,
                                                    self.options.jobs)):
                self.cache.results[key] = entry
            self.converted += len(keys)
        self.pending.clear()
        self.blobs.clear()

    def totals(self, model: EffortModel, family_of: dict, optimizing: frozenset) -> list[dict]:
        """Each evaluation's totals, from the last one's: the changed files' old counts out,
        their new ones in; hours as the report's summary counts them (``tree_hours``: per
        site, plus each distinct decision once)."""
        self.flush()
        results = self.cache.results
        current: dict[str, str] = {}
        files = lines = failed = 0
        rows: Counter = Counter()
        made = []
        for changes in self.evaluations:
            for rel, key in changes:
                for sign, entry_key in ((-1, current.pop(rel, None)), (1, key)):
                    if entry_key is None:
                        continue
                    entry = results[entry_key]
                    files += sign
                    lines += sign * entry["lines"]
                    failed += sign * int(entry["failed"])
                    for *row, count in entry["rows"]:
                        rows[tuple(row)] += sign * count
                if key is not None:
                    current[rel] = key
            figures = tree_hours([(*row, count) for row, count in rows.items() if count],
                                 model, family_of, optimizing)
            made.append({"files": files, "lines": lines, "failed_files": failed,
                         "hours_port": figures["hours_port"],
                         "hours_optimisation": figures["hours_optimisation"],
                         "findings": figures["findings"], "decisions": figures["decisions"]})
        return made


def count_file(rel: str, content: bytes, settings, included: tuple = ()) -> dict:
    """A file's cache entry, made where it is converted (a worker process): its lines, whether
    it failed, and its findings counted by code, kind, fixed, severity, symbol and library."""
    from ..runner import convert_file

    result = convert_file(rel, content, settings, included)
    counts = Counter((f.code, f.kind, f.fixed, f.severity, f.symbol, f.library)
                     for f in result.findings)
    return {"lines": content.count(b"\n"), "failed": result.status == "failed",
            "rows": [[*key, count] for key, count in sorted(counts.items())]}


# -- snapshots for CI ---------------------------------------------------------------------------

def snapshot_of(document: dict) -> dict:
    """What a CI run records of a report: when, which commit, what remains."""
    summary = document["summary"]
    return {"generated": document["generated"], "commit": document.get("commit") or "",
            "hours_port": summary["hours_port"], "findings": summary["findings"],
            "blockers": summary["blockers"], "files": summary["files"],
            "lines": summary["lines"], "decisions": summary["decisions"],
            "rocm": document["target"]["rocm"], "model": document["model_line"]}


def incomparable(previous: dict | None, current: dict) -> str:
    """Why two snapshots' figures cannot be compared (empty: they can): another target ROCm
    or another effort model (a snapshot from before they were recorded counts as another)."""
    if previous is None:
        return ""
    for key, what in (("rocm", "target ROCm"), ("model", "effort model")):
        if previous.get(key) != current[key]:
            return (f"the previous snapshot was made under another {what} "
                    f"({previous.get(key) or 'not recorded'}): not compared")
    return ""


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
    """Why the remaining work grew against the previous snapshot (empty: it did not, or the
    two cannot be compared: ``incomparable``)."""
    if previous is None or incomparable(previous, current):
        return []
    reasons = []
    if current["hours_port"] > previous["hours_port"] + 1e-6:
        reasons.append(f"remaining effort grew from {previous['hours_port']:g} h to "
                       f"{current['hours_port']:g} h")
    if current["blockers"] > previous["blockers"]:
        reasons.append(f"blockers grew from {previous['blockers']} to {current['blockers']}")
    return reasons
