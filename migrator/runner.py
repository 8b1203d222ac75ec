"""Converting a whole tree: discovery, a process pool, atomic writes, an incremental cache.

Workers return ``FileResult`` values and never raise; results come back in path order, so output
is deterministic. A content-hash cache in ``OUT/.rocmigrate/cache.json`` lets a re-run convert only
what changed and remove outputs whose source is gone.

Everything written or removed in a tree goes through ``fsutil``'s ``*_inside`` helpers: never
through a symlink, never outside the output folder. The cache is untrusted input: a cache that is
not exactly what this module writes is ignored as a whole.
"""

from __future__ import annotations

import inspect
import json
import os
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from . import __version__, support
from .diagnostics import Finding
from .fsutil import (atomic_write, content_hash, read_inside, remove_inside, special_file_kind,
                     symlink_inside, write_inside)
from .pool import map_in_workers
from .buildfiles import language_of
from .results import (CONVERTIBLE_SUFFIXES, FileResult, PackedFindings, StringTable,
                      encode_findings, findings_json, file_summary, merge_file_summaries,
                      packed_findings_of, text_columns, valid_finding_summary)
from .settings import Settings
from .workspace.digest import ruleset_digest
from .workspace.discovery import OUTPUT_MARK, inside, walk
from .workspace.includes import Included, included_files
from .output.terminal import quoted

CACHE_DIR = ".rocmigrate"
CACHE_FILE = OUTPUT_MARK  # the cache marks an output tree
CACHE_FORMAT = 5  # 2: entries keep their file's findings; 3: as JSON text, and the run's summary; 4: findings carry their kind; 5: the hashes of the project files a file includes
POOL_THRESHOLD = 8  # below this many files, a process pool costs more than it saves


class ConvertError(Exception):
    """A usage problem with the whole run (bad paths, dirty git tree...)."""


@dataclass
class RunOptions:
    source: Path
    output: Path | None = None
    in_place: bool = False
    dry_run: bool = False
    diff: bool = False
    jobs: int = 0  # 0 = one per CPU
    force: bool = False
    progress: bool = False
    # False: the caller reads only the summary (text output), so an unchanged re-run may take
    # the finding part of it from the cache without loading any file's findings
    findings_wanted: bool = True


@dataclass
class RunResult:
    results: list[FileResult] = field(default_factory=list)
    diffs: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    support_written: list[str] = field(default_factory=list)  # support headers written beside outputs
    # the finding part of the summary when the cache holds it for exactly these results (made
    # this run, or loaded with the cache); an unchanged re-run without findings_wanted loads no
    # findings, and its cached results then carry none
    finding_summary: dict | None = None

    @property
    def failed(self) -> bool:
        return any(r.status == "failed" for r in self.results)


@dataclass
class _Item:
    rel: str
    path: Path
    out_rel: str
    kind: str  # convert / copy / link / skip / fail
    note: str = ""
    stat: list[int] | None = None  # [size, mtime_ns] of a regular file, read once by discover
    link: str = ""  # kind link: the relative target of the link recreated in the output


def output_name(rel: str, settings: Settings) -> str:
    if settings.rename_ext and rel.endswith(".cu"):
        return rel[:-3] + ".hip"
    return rel


def discover(root: Path, exclude: Path | None, settings: Settings) -> list[_Item]:
    """Every file under ``root`` (sorted; the workspace's walk), classified: sources are
    converted (those the configuration excludes are copied as they are), other files copied,
    links inside the tree recreated. Other rocmigrate output trees and ``exclude`` (this run's
    own output) are skipped; what cannot be read fails by name."""
    items: list[_Item] = []
    for entry in walk(root, settings.exclude, skip_folder=exclude, skip_outputs=True):
        rel = entry.rel
        if entry.kind in ("skip", "fail"):
            items.append(_Item(rel, entry.path, rel, entry.kind, entry.note))
        elif entry.kind == "link":
            out_rel = output_name(rel, settings)
            counterpart = (entry.target_rel if entry.target_is_dir
                           else output_name(entry.target_rel, settings))
            link = os.path.relpath(counterpart, os.path.dirname(out_rel) or ".")
            items.append(_Item(rel, entry.path, out_rel, "link", link=link))
        else:
            convert = ((rel.endswith(CONVERTIBLE_SUFFIXES) or language_of(rel) is not None)
                       and not entry.excluded)
            items.append(_Item(rel, entry.path, output_name(rel, settings) if convert else rel,
                               "convert" if convert else "copy",
                               stat=[entry.size, entry.mtime_ns]))
    _fail_clashing_outputs(items)
    return items


def _fail_clashing_outputs(items: list[_Item]) -> None:
    """Sources whose outputs would take the same path (``a.cu`` and ``a.hip`` with
    ``--rename-ext``), or where one output needs a folder at another's path, all fail, each
    naming the others: none is written, so none silently overwrites another."""
    writers: dict[str, list[_Item]] = defaultdict(list)
    for item in items:
        if item.kind in ("convert", "copy", "link"):
            writers[item.out_rel].append(item)
    clashes: dict[int, list[_Item]] = defaultdict(list)
    for out_rel, group in writers.items():
        others = list(group)
        parts = out_rel.split("/")
        for depth in range(1, len(parts)):
            for folder_item in writers.get("/".join(parts[:depth]), ()):
                others.append(folder_item)
                clashes[id(folder_item)].extend(group)
        if len(others) > 1:
            for item in group:
                clashes[id(item)].extend(other for other in others if other is not item)
    for item in items:
        if clashes.get(id(item)):
            names = ", ".join(sorted({f"{o.rel} (output {o.out_rel})" for o in clashes[id(item)]}))
            item.kind = "fail"
            item.note = (f"its output {item.out_rel} clashes with the output of {names}; "
                         "nothing written for either: rename one of them")


# A per-file processor: one file's bytes (and its path, for messages) -> its result; never
# raises. ``convert_file`` is the conversion; lint passes its own; build, report and harness
# steps can pass theirs. A processor with an ``included`` keyword also gets the project files
# the file includes (workspace.includes), when there are any.
Processor = Callable[[str, bytes, Settings], FileResult]


def convert_file(rel: str, data: bytes, settings: Settings,
                 included: tuple[Included, ...] = ()) -> FileResult:
    """The conversion of one file (the runner's default processor)."""
    from .convert import convert_bytes  # the engine loads only when a file needs converting

    return convert_bytes(rel, data, settings, included)


def _takes_included(processor: Processor) -> bool:
    try:
        return "included" in inspect.signature(processor).parameters
    except (TypeError, ValueError):
        return False


def _processor_name(processor: Processor) -> str:
    """A name of ``processor`` that is the same in every run (a partial: its function and
    arguments)."""
    function = getattr(processor, "func", processor)
    name = f"{function.__module__}.{function.__qualname__}"
    if function is not processor:
        name += repr((processor.args, sorted(processor.keywords.items())))
    return name


def _job(job: tuple[Processor, str, bytes, Settings, tuple[Included, ...]]) -> FileResult:
    processor, rel, data, settings, included = job
    if included:
        return processor(rel, data, settings, included=included)
    return processor(rel, data, settings)


def process_all(work: list[tuple], processor: Processor, settings: Settings,
                jobs: int, report=None, threshold: int = POOL_THRESHOLD) -> Iterator[FileResult]:
    """``processor`` over each (path, bytes) or (path, bytes, included files) of ``work``,
    results in order: in worker processes when there are at least ``threshold`` files (run once
    here first, on an empty file, so that the forked workers start with the engine, tables and
    rules loaded); ``report(total, lines)`` after each file."""
    if not work:
        return
    processor("warm-up.cu", b"", settings)
    jobs_of = [(processor, rel, data, settings, included[0] if included else ())
               for rel, data, *included in work]
    for (_, _, data, _, _), result in zip(jobs_of, map_in_workers(_job, jobs_of, jobs, threshold)):
        if report is not None:
            report(len(work), data.count(b"\n"))  # files processed in this run, this one's lines
        yield result


def _entry_json(entry: dict) -> str:
    """A cache entry as stored: its findings as the JSON text of their columns (numbered in the
    cache's table), which a run parses only when it needs findings."""
    findings = entry["findings"]
    if not isinstance(findings, PackedFindings):
        return json.dumps(entry, separators=(",", ":"), sort_keys=True)
    # columns of ints and booleans: their JSON text needs no escape inside a JSON string, so it
    # is quoted as it is ("findings" sorts first among the keys)
    rest = json.dumps(dict(entry, findings=None), separators=(",", ":"), sort_keys=True)
    return '{"findings":"' + findings_json(findings) + '"' + rest[len('{"findings":null'):]


def _plain_rel(value) -> bool:
    """A relative posix path that stays inside its root and outside the cache folder."""
    if type(value) is not str or not value or "\0" in value:
        return False
    parts = value.split("/")
    return parts[0] != CACHE_DIR and all(part not in ("", ".", "..") for part in parts)


def _pair_of_ints(value) -> bool:
    return type(value) is list and len(value) == 2 and all(type(v) is int for v in value)


def _valid_outputs(entry) -> bool:
    """Does a cache entry name its output and support headers as plain paths inside OUT?"""
    written = entry.get("support", []) if type(entry) is dict else None
    return (type(entry) is dict and _plain_rel(entry.get("output")) and type(written) is list
            and all(_plain_rel(rel) and rel.rpartition("/")[2] in support.available()
                    for rel in written))


def _valid_entry(entry) -> bool:
    """Is a cache entry (of this version and settings) what ``_Cache.record`` writes, findings
    aside?"""
    deps = entry.get("includes", {}) if type(entry) is dict else None
    return (_valid_outputs(entry) and type(entry.get("input")) is str
            and (entry.get("source") is None or _pair_of_ints(entry.get("source")))
            and _pair_of_ints(entry.get("stat")) and type(deps) is dict
            and all(_plain_rel(rel) and type(digest) is str for rel, digest in deps.items()))


class _Cache:
    """Per output tree: for each written file, the source's hash and stat, the output's stat and
    the file's findings (all under a key of the tool version, cache format and settings).

    A source whose size and modification time are unchanged is not even read; one whose stat
    changed is read and compared by content hash, so touching a file costs a hash, not a
    conversion. The file is untrusted input: it is read without following symlinks and checked
    in one pass; anything unexpected (bad JSON, wrong types, paths leaving OUT) means no cache."""

    def __init__(self, out_root: Path | None, settings: Settings,
                 processor: Processor = convert_file) -> None:
        self.root = out_root
        made_by = _processor_name(processor)  # another step's outputs: another key
        self.key = (f"{__version__}|{CACHE_FORMAT}|{ruleset_digest(settings.rules_dir)}"
                    f"|{made_by}|{settings.fingerprint()}")
        # in memory, an entry's "findings" are PackedFindings numbered in ``table``
        self.entries: dict[str, dict] = {}
        self.previous: dict[str, dict] = {}
        self.table = StringTable()
        self.stored: dict[str, str] = {}  # entries as JSON, written as each was recorded
        self.summaries: dict[str, tuple] = {}  # their shares of the summary (file_summary)
        self.finding_summary: dict | None = None  # the stored run's, valid for its entries
        self.current = False  # the stored cache has this key
        if out_root is not None:
            self.previous = self._load(out_root)

    def _load(self, out_root: Path) -> dict[str, dict]:
        try:
            raw = read_inside(out_root, CACHE_FILE)
            stored = json.loads(raw) if raw is not None else None
        except (OSError, ValueError, RecursionError):
            return {}
        files = stored.get("files") if type(stored) is dict else None
        if type(files) is not dict:
            return {}
        if stored.get("key") != self.key:  # other settings: only what to clean up counts
            if not all(_valid_outputs(entry) for entry in files.values()):
                return {}
            return {rel: {"output": e["output"], "support": e.get("support", [])}
                    for rel, e in files.items()}
        strings = stored.get("strings")
        if type(strings) is not list or not all(type(text) is str for text in strings):
            return {}
        if not all(_valid_entry(entry) and type(entry.get("findings")) is str
                   for entry in files.values()):
            return {}
        # each entry's findings stay JSON text until unpack_findings (most re-runs need none)
        self.table = StringTable(strings)
        summary = stored.get("summary")
        self.finding_summary = summary if valid_finding_summary(summary) else None
        self.current = True
        return files

    def unpack_findings(self) -> set[str]:
        """Parse and check the findings of every entry loaded from the cache. Returns the files
        whose findings are lost because some entry's are damaged (then none is kept: those
        entries stay with no findings, and a converted file among them must be converted
        again); empty when all is well."""
        loaded = [entry for entry in self.previous.values()
                  if type(entry.get("findings")) is str]
        if not loaded:
            return set()
        try:
            columns = [json.loads(entry["findings"]) for entry in loaded]
        except (ValueError, RecursionError):
            columns = None
        packed = packed_findings_of(columns, self.table.texts) if columns is not None else None
        if packed is not None:
            for entry, findings in zip(loaded, packed):
                entry["findings"] = findings  # the same dict as in entries for stat-hit files
        lost = set()
        for rel, entry in self.entries.items():
            if type(entry["findings"]) is str:  # recorded again (hash hits), or damaged
                if packed is not None:
                    entry["findings"] = self.previous[rel]["findings"]
                else:
                    entry["findings"] = PackedFindings(encode_findings([], self.table),
                                                       self.table.texts)
                    lost.add(rel)
        if packed is None:
            self.previous, self.current = {}, False
        return lost

    def hit(self, rel: str, input_hash: str | None, out_path: Path,
            source_stat: list[int] | None = None) -> bool:
        """Is the output up to date? By source stat when ``input_hash`` is None, else by hash."""
        entry = self.previous.get(rel)
        if not entry or not self.current:
            return False
        if input_hash is None:
            if source_stat is None or entry["source"] != source_stat:
                return False
        elif entry["input"] != input_hash:
            return False
        try:
            stat = os.lstat(out_path)
        except OSError:
            return False
        return [stat.st_size, stat.st_mtime_ns] == entry["stat"]

    def record(self, rel: str, input_hash: str, out_rel: str, out_path: Path,
               source_stat: list[int] | None, support: list[str] | None = None,
               findings: list[Finding] | PackedFindings | str | None = None,
               deps: dict[str, str] | None = None) -> None:
        """Record a written output; ``findings`` may be an entry's still unparsed text (the
        entry loaded for ``rel``, whose findings unpack_findings parses for both); ``deps``:
        the hashes of the project files the source includes, which the output depends on."""
        stat = os.lstat(out_path)
        if type(findings) is not str:
            findings = PackedFindings(encode_findings(findings or [], self.table), self.table.texts)
        entry = self.entries[rel] = {"input": input_hash, "output": out_rel, "source": source_stat,
                                     "stat": [stat.st_size, stat.st_mtime_ns], "findings": findings}
        if support:
            entry["support"] = support
        if deps:
            entry["includes"] = deps  # (a key after "findings": _entry_json)
        # as JSON now, and its share of the summary: while workers convert the next files,
        # this process has time to spare
        self.stored[rel] = _entry_json(entry)
        if type(findings) is not str:
            self.summaries[rel] = file_summary(findings)

    @staticmethod
    def _written(entries) -> set[str]:
        return {path for e in entries for path in (e.get("output"), *e.get("support", ())) if path}

    def stale_outputs(self) -> list[str]:
        """Outputs and support headers the last run wrote that this run did not."""
        return sorted(self._written(self.previous.values()) - self._written(self.entries.values()))

    def save(self) -> None:
        if self.root is None or (self.current and self.entries == self.previous
                                 and self.finding_summary is not None):
            return  # an unchanged re-run rewrites nothing
        if any(self.entries.get(rel) is not entry for rel, entry in self.previous.items()):
            self._drop_unused_texts()  # some entries were replaced or removed
        stored = self.stored
        files = ",".join(f"{json.dumps(rel)}:{stored.get(rel) or _entry_json(self.entries[rel])}"
                         for rel in sorted(self.entries))
        shares = self.summaries
        summary = self.finding_summary = merge_file_summaries(
            shares.get(rel) or file_summary(self.entries[rel]["findings"])
            for rel in sorted(self.entries))
        payload = (f'{{"files":{{{files}}},"key":{json.dumps(self.key)},'
                   f'"strings":{json.dumps(self.table.texts, separators=(",", ":"))},'
                   f'"summary":{json.dumps(summary, separators=(",", ":"))}}}')
        try:
            write_inside(self.root, CACHE_FILE, payload.encode(), if_changed=False)
        except OSError:
            pass  # the outputs are written; without a cache the next run just converts again

    def _drop_unused_texts(self) -> None:
        """Renumber the entries' texts when the table holds some that none uses any more (they
        would otherwise pile up over runs)."""
        used: set[int] = set()
        for entry in self.entries.values():
            for column in text_columns(entry["findings"].columns):
                used.update(column)
        if len(used) == len(self.table.texts):
            return
        table = StringTable()
        for entry in self.entries.values():
            entry["findings"] = PackedFindings(encode_findings(entry["findings"], table), table.texts)
        self.table, self.stored = table, {}


def _check_in_place(source: Path, force: bool) -> None:
    """Refuse to rewrite ``source`` in place when git shows uncommitted changes in it, or when
    it is in a git work tree and git cannot tell."""
    if force:
        return
    real = source.resolve()
    start = real if real.is_dir() else real.parent
    if not any(os.path.lexists(folder / ".git") for folder in (start, *start.parents)):
        return  # not in a git work tree
    try:
        import git
    except ImportError as err:  # GitPython finds no working git (or is missing)
        _cannot_tell(source, str(err).strip().splitlines()[0] if str(err).strip() else "")
    try:
        repo = git.Repo(start, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return
    if repo.working_tree_dir is None:
        return
    # git takes a pathspec relative to the work tree's top, not to this process's folder
    pathspec = os.path.relpath(real, Path(repo.working_tree_dir).resolve())
    try:
        dirty = repo.is_dirty(untracked_files=True, path=pathspec)
    except git.CommandError as err:  # git failed, or is not installed
        _cannot_tell(source, (err.stderr or "").strip() or str(err))
    if dirty:
        raise ConvertError(f"{source} is in a git work tree with uncommitted changes; commit or "
                           "stash them first (or pass --force): --in-place rewrites files")


def _cannot_tell(source: Path, why: str) -> None:
    raise ConvertError(f"cannot tell whether {source} has uncommitted changes: git failed "
                       f"({why}); pass --force to convert in place anyway")


def run(options: RunOptions, settings: Settings, report=None,
        processor: Processor = convert_file) -> RunResult:
    """Convert ``options.source`` (a file or a tree) into the output or in place: each source
    file through ``processor``, the rest copied, with the cache and the output's safety rules."""
    if _checked_source(options):
        return _run_single(options, settings, processor)
    tree_run = _TreeRun(options, settings, processor, _output_root(options))
    tree_run.sort_out()
    tree_run.convert_includers_again()
    tree_run.load_findings()
    tree_run.convert_pending(report)
    return tree_run.finish()


def _checked_source(options: RunOptions) -> bool:
    """Is the source a file (else a folder)? Raises ConvertError for a source that is neither,
    or options that exclude each other, or in place, a source git shows changes in."""
    source = options.source
    try:
        if not source.exists():
            raise ConvertError(f"{source} does not exist")
        is_file, is_dir = source.is_file(), source.is_dir()
    except OSError as err:
        raise ConvertError(f"cannot read {source}: {err.strerror}") from None
    if options.in_place:
        if options.output is not None:
            raise ConvertError("--in-place and -o/--output exclude each other")
        if not options.dry_run:
            _check_in_place(source, options.force)
    elif options.output is None:
        raise ConvertError("give an output with -o/--output, or --in-place")
    if not is_file and not is_dir:
        raise ConvertError(f"{source} is neither a regular file nor a folder")
    return is_file


def _output_root(options: RunOptions) -> Path:
    """The folder a tree's outputs go to (the source itself in place), created if need be.
    An output folder that is the source folder or holds it is refused: an output could land
    on a source (``convert src -o .`` writes ``src/src/a.cu`` to ``src/a.cu``); one inside the
    source is fine (discovery skips it)."""
    source = options.source
    out_root = source if options.in_place else options.output
    try:
        if out_root.exists() and not out_root.is_dir():
            raise ConvertError(f"{quoted(out_root)} exists and is not a folder")
        if not options.in_place and out_root.resolve() == source.resolve():
            raise ConvertError("the output folder is the source folder: use --in-place for that")
        if not options.in_place and inside(source.resolve(), out_root.resolve()):
            raise ConvertError(f"the output folder {quoted(out_root)} holds the source folder "
                               f"{quoted(source)}, so an output could overwrite a source: choose "
                               "an output folder beside the source or inside it")
        if not options.in_place and not options.dry_run:
            out_root.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ConvertError(f"cannot create the output folder {out_root}: {err.strerror}") from None
    return out_root


class _TreeRun:
    """A tree's run (``run``): its files, their outcomes so far, those pending conversion and
    the cache; each step a method."""

    def __init__(self, options: RunOptions, settings: Settings, processor: Processor,
                 out_root: Path) -> None:
        self.options, self.settings, self.processor = options, settings, processor
        self.out_root = out_root
        source = options.source
        exclude = out_root.resolve() if not options.in_place and inside(out_root.resolve(),
                                                                         source.resolve()) else None
        self.items = discover(source, exclude, settings)
        self.cache = _Cache(None if options.in_place or options.dry_run else out_root, settings,
                            processor)
        self.result = RunResult()
        self.pending: list[tuple[_Item, bytes, str]] = []  # (file, its bytes, their hash)
        self.outcomes: dict[str, FileResult] = {}
        self.tree = _TreeFiles(self.items)

    def sort_out(self) -> None:
        """Each file's outcome where it needs no converting (skipped, failed, a link, copied,
        cached); the others are pending."""
        outcomes = self.outcomes
        for item in self.items:
            outcome = self._without_converting(item)
            if outcome is not None:
                outcomes[item.rel] = outcome

    def _without_converting(self, item: _Item) -> FileResult | None:
        """The outcome of ``item`` if it needs no converting, else None (and it is pending)."""
        cache, out_root, settings = self.cache, self.out_root, self.settings
        if item.kind in ("skip", "fail"):
            return FileResult(item.rel, "skipped" if item.kind == "skip" else "failed", item.note)
        if item.kind == "link":
            return _link(item, out_root, self.options)
        if _generated_support(item):  # converting an output again: written fresh, not converted
            return FileResult(item.rel, "skipped", "a support header rocmigrate writes: written "
                              "anew where a converted file includes it")
        out_path = out_root / item.out_rel
        if cache.hit(item.rel, None, out_path, item.stat):  # unchanged since last run: not read
            cache.entries[item.rel] = cache.previous[item.rel]
            self.tree.digests[item.rel] = cache.previous[item.rel]["input"]
            return _cached(item, cache, out_root, settings, self.result)
        try:
            data = item.path.read_bytes()
        except OSError as err:
            return FileResult(item.rel, "failed", f"cannot read: {err.strerror}")
        digest = content_hash(data)
        self.tree.known(item.rel, data, digest)
        if item.kind == "copy":
            return _copy(item, data, digest, out_root, cache, self.options)
        if cache.hit(item.rel, digest, out_path):
            previous = cache.previous[item.rel]
            cache.record(item.rel, digest, item.out_rel, out_path, item.stat,
                         previous.get("support"), previous["findings"], previous.get("includes"))
            return _cached(item, cache, out_root, settings, self.result)
        self.pending.append((item, data, digest))
        return None

    def convert_includers_again(self) -> None:
        """An included project file changed: its includers are converted again."""
        cache, outcomes, tree = self.cache, self.outcomes, self.tree
        for item in self.items:
            deps = cache.entries[item.rel].get("includes") if item.rel in cache.entries else None
            if deps and outcomes[item.rel].status == "cached" and any(
                    tree.digest(rel) != digest for rel, digest in deps.items()):
                del outcomes[item.rel], cache.entries[item.rel]
                data = tree.read(item.rel)
                if data is None:
                    outcomes[item.rel] = FileResult(item.rel, "failed", "cannot read it")
                    continue
                self.pending.append((item, data, content_hash(data)))

    def load_findings(self) -> None:
        """The cached files' findings, from the cache (or only its summary of them, where the
        caller reads no findings and nothing changed); files whose findings the cache lost
        are converted again."""
        cache, outcomes, result = self.cache, self.outcomes, self.result
        unchanged = not self.pending and cache.current and cache.entries == cache.previous
        if unchanged and not self.options.findings_wanted and cache.finding_summary is not None:
            result.finding_summary = cache.finding_summary  # no file's findings are read
        elif lost := cache.unpack_findings():  # damaged: convert the files they belong to again
            for item in self.items:
                if item.rel in lost and outcomes[item.rel].status == "cached":
                    del outcomes[item.rel], cache.entries[item.rel]
                    try:
                        data = item.path.read_bytes()
                    except OSError as err:
                        outcomes[item.rel] = FileResult(item.rel, "failed",
                                                        f"cannot read: {err.strerror}")
                        continue
                    self.pending.append((item, data, content_hash(data)))
        if result.finding_summary is None:
            for rel, outcome in outcomes.items():
                if outcome.status == "cached":
                    outcome.findings = cache.entries[rel]["findings"]

    def convert_pending(self, report) -> None:
        """Convert the pending files (``report`` after each) and write their outputs."""
        items, pending, tree, settings = self.items, self.pending, self.tree, self.settings
        taken = {item.out_rel for item in items if not _generated_support(item)}
        # read before anything is written (--in-place rewrites the tree as results come)
        direct: dict[str, list[tuple[str, str]]] = {}  # each file's own includes, read once
        included = {item.rel: included_files(item.rel, data, tree.files, tree.read, direct)
                    for item, data, _ in pending} if _takes_included(self.processor) else {}
        if included:  # a make file: those it includes and those including it (their variables)
            included.update(_related_makefiles(pending, tree))
        converted_all = process_all([(item.rel, data, included.get(item.rel, ()))
                                     for item, data, _ in pending], self.processor,
                                    settings, self.options.jobs, report)
        for (item, data, digest), converted in zip(pending, converted_all):
            converted.input_hash = digest
            deps = {file.rel: tree.digest(file.rel) for file in included.get(item.rel, ())}
            if settings.clang_root is not None:
                deps.update(_clang_includer(item, tree))
            self.outcomes[item.rel] = _store(item, data, converted, self.out_root, self.cache,
                                             self.options, self.result, settings, taken, deps)

    def finish(self) -> RunResult:
        """Remove the outputs of sources gone, save the cache; the run's result."""
        options, cache, items, result = self.options, self.cache, self.items, self.result
        if not options.dry_run and not options.in_place:
            outputs = {item.out_rel for item in items}
            for stale in cache.stale_outputs():
                if stale not in outputs and remove_inside(self.out_root, stale):
                    result.removed.append(stale)
            cache.save()
        result.results = [self.outcomes[item.rel] for item in items]
        if result.finding_summary is None and cache.root is not None and all(
                r.rel in cache.entries for r in result.results if r.findings):
            # the entries hold exactly the results' findings, in the same order: their summary
            # (made for the cache, or loaded with it) is this run's
            result.finding_summary = cache.finding_summary
        return result


def _related_makefiles(pending, tree: "_TreeFiles") -> dict[str, tuple[Included, ...]]:
    """Each pending make file's includers and included make files (buildfiles.make)."""
    wanted = [(item, data) for item, data, _ in pending if language_of(item.rel) == "make"]
    if not wanted:
        return {}
    from .buildfiles.make import MakeIncludes, related_makefiles

    makefiles = {rel: data for rel in tree.files if language_of(rel) == "make"
                 and (data := tree.read(rel)) is not None}
    shared = MakeIncludes(makefiles)  # each make file's includes, read once for the tree
    return {item.rel: tuple(Included(rel, makefiles[rel], name) for rel, name in
                            related_makefiles(item.rel, data, makefiles, shared))
            for item, data in wanted}


def _clang_includer(item: _Item, tree: "_TreeFiles") -> dict[str, str | None]:
    """Under --clang libclang reads a file that another file of its folder includes as part of
    that file (``migrator.clang.kernels.includer_of``: its types, its instantiations): the
    output depends on that file too, by its hash."""
    from .clang.kernels import includer_of

    found = includer_of(item.path)
    if found is None:
        return {}
    folder = item.rel.rpartition("/")[0]
    rel = f"{folder}/{found[0].name}" if folder else found[0].name
    return {rel: tree.digest(rel)} if rel in tree.files else {}


class _TreeFiles:
    """The source tree's files as this run reads them: each read once, hashed once (a file
    the cache knows unchanged by its stat is not read for its hash)."""

    def __init__(self, items: list[_Item]) -> None:
        # a support header rocmigrate wrote (converting its own output again) is no project
        # file: rules must not learn from it what the first conversion could not see
        self.files = {item.rel: item for item in items if item.kind in ("convert", "copy")
                      and not _generated_support(item)}
        self.data: dict[str, bytes | None] = {}
        self.digests: dict[str, str | None] = {}

    def known(self, rel: str, data: bytes, digest: str) -> None:
        self.data[rel], self.digests[rel] = data, digest

    def read(self, rel: str) -> bytes | None:
        if rel not in self.data:
            try:
                self.data[rel] = self.files[rel].path.read_bytes() if rel in self.files else None
            except OSError:
                self.data[rel] = None
        return self.data[rel]

    def digest(self, rel: str) -> str | None:
        if rel not in self.digests:
            data = self.read(rel)
            self.digests[rel] = content_hash(data) if data is not None else None
        return self.digests[rel]


def _cached(item: _Item, cache: _Cache, out_root: Path, settings: Settings,
            result: RunResult) -> FileResult:
    """The result of a file whose output is up to date: its recorded findings, and its support
    headers rewritten if someone deleted or changed them."""
    entry = cache.entries[item.rel]
    for rel in entry.get("support", ()):
        folder, _, name = rel.rpartition("/")
        try:
            _write_support(out_root, folder, (name,), settings, result)
        except OSError as err:
            del cache.entries[item.rel]
            return FileResult(item.rel, "failed", f"cannot write its support header {rel}: "
                              f"{err.strerror}")
    if item.kind != "convert":
        return FileResult(item.rel, "copied", input_hash=entry["input"])
    return FileResult(item.rel, "cached", input_hash=entry["input"])  # findings: see run


def _generated_support(item: _Item) -> bool:
    """Is this source file a support header rocmigrate wrote (converting its own output again)?
    Then the support header written beside the outputs takes its place."""
    from . import support

    if item.kind != "convert" or item.rel.rpartition("/")[2] not in support.available():
        return False
    try:
        with open(item.path, "rb") as handle:
            return handle.read(64).startswith(support.GENERATED_MARK)
    except OSError:
        return False


def _support_rels(out_rel: str, names: tuple[str, ...]) -> list[str]:
    folder = out_rel.rpartition("/")[0]
    return [f"{folder}/{name}" if folder else name for name in names]


def _write_support(root: Path, folder: str, names: tuple[str, ...], settings: Settings,
                   result: RunResult) -> None:
    """Write the support headers ``names`` into ``root/folder`` (those that differ) and list
    them in the run's result."""
    result.support_written.extend(support.write_beside(root, names, settings, folder))


def _store(item: _Item, data: bytes, converted: FileResult, out_root: Path, cache: _Cache,
           options: RunOptions, result: RunResult, settings: Settings,
           taken: set[str], deps: dict[str, str] | None = None) -> FileResult:
    out_path = out_root / item.out_rel
    blocked = [rel for rel in _support_rels(item.out_rel, converted.support) if rel in taken]
    if blocked and converted.status != "failed":
        converted = FileResult(item.rel, "failed",
                               f"its output needs rocmigrate's support header {blocked[0]}, but "
                               "the source tree has a file of that name; rename that file")
    if converted.status == "failed":
        if not options.dry_run and not options.in_place:
            remove_inside(out_root, item.out_rel)  # an output of an older version would be stale
        converted.output = None
        return converted
    output = converted.output
    converted.output = None
    if options.diff and output != data:
        result.diffs.append(unified_diff(item.rel, item.out_rel, data, output))
    if options.dry_run:
        return converted
    folder = item.out_rel.rpartition("/")[0]
    try:
        if options.in_place:
            if output != data:
                write_inside(out_root, item.rel, output, mode_from=item.path, if_changed=False)
            _write_support(out_root, folder, converted.support, settings, result)
            return converted
        write_inside(out_root, item.out_rel, output, mode_from=item.path)
        _write_support(out_root, folder, converted.support, settings, result)
        cache.record(item.rel, converted.input_hash, item.out_rel, out_path, item.stat,
                     _support_rels(item.out_rel, converted.support),
                     converted.findings, deps)
    except OSError as err:
        return FileResult(item.rel, "failed", f"cannot write output {item.out_rel}: "
                          f"{err.strerror}")
    return converted


def _copy(item: _Item, data: bytes, digest: str, out_root: Path, cache: _Cache,
          options: RunOptions) -> FileResult:
    if options.dry_run or options.in_place:
        return FileResult(item.rel, "copied" if not options.in_place else "unchanged")
    out_path = out_root / item.out_rel
    try:
        if not cache.hit(item.rel, digest, out_path):
            write_inside(out_root, item.out_rel, data, mode_from=item.path)
        cache.record(item.rel, digest, item.out_rel, out_path, item.stat)
    except OSError as err:
        return FileResult(item.rel, "failed", f"cannot write output {item.out_rel}: "
                          f"{err.strerror}")
    return FileResult(item.rel, "copied", input_hash=digest)


def _link(item: _Item, out_root: Path, options: RunOptions) -> FileResult:
    """A symlink inside the tree is recreated in the output as a relative link to the output's
    counterpart of its target."""
    if options.dry_run or options.in_place:
        return FileResult(item.rel, "copied", "symlink inside the source tree")
    try:
        symlink_inside(out_root, item.out_rel, item.link)
    except OSError as err:
        return FileResult(item.rel, "failed", f"cannot write output {item.out_rel}: "
                          f"{err.strerror}")
    return FileResult(item.rel, "copied", "symlink inside the source tree")


def unified_diff(rel: str, out_rel: str, before: bytes, after: bytes) -> str:
    """The diff of a file, its names quoted as git quotes them where they hold control
    characters."""
    import difflib

    return "".join(difflib.unified_diff(
        before.decode("utf-8", "replace").splitlines(keepends=True),
        after.decode("utf-8", "replace").splitlines(keepends=True),
        fromfile=quoted(f"a/{rel}"), tofile=quoted(f"b/{out_rel}")))


def _single_target(options: RunOptions, settings: Settings) -> Path:
    """Where a single file's output goes: the output, or a file in it when it is a folder."""
    path = options.source
    if options.in_place:
        return path
    out = options.output
    try:
        into_folder = out.is_dir()
    except OSError as err:
        raise ConvertError(f"cannot use the output {out}: {err.strerror}") from None
    if into_folder or str(out).endswith(os.sep):
        target = out / output_name(path.name, settings)
    else:
        target = out
    if not options.dry_run and not options.force and _same_file(target, path):
        raise ConvertError(f"the output {quoted(target)} is the source file itself: use "
                           "--in-place to rewrite it (it checks git for uncommitted changes), "
                           "or --force")
    kind = special_file_kind(target)
    if kind and not options.dry_run:
        raise ConvertError(f"the output {quoted(target)} is {kind}, not a regular file: "
                           "rocmigrate writes only regular files (--dry-run writes nothing; "
                           "-o - prints the converted file)")
    return target


def _same_file(first: Path, second: Path) -> bool:
    """Do both paths name one file (the same path spelt differently, a hard link, a symlink)?"""
    try:
        return os.path.samefile(first, second)
    except OSError:
        return False


def _run_single(options: RunOptions, settings: Settings, processor: Processor) -> RunResult:
    path = options.source
    rel = path.name
    result = RunResult()
    target = _single_target(options, settings)
    try:
        data = path.read_bytes()
    except OSError as err:
        result.results = [FileResult(rel, "failed", f"cannot read: {err.strerror}")]
        return result
    converted = processor(rel, data, settings)
    if converted.status != "failed":
        output = converted.output
        converted.output = None
        if options.diff and output != data:
            result.diffs.append(unified_diff(rel, target.name, data, output))
        try:
            if not options.dry_run and (target != path or output != data):
                atomic_write(target, output, mode_from=path)
            if not options.dry_run:
                _write_support(target.parent, "", converted.support, settings, result)
        except OSError as err:
            converted = FileResult(rel, "failed", f"cannot write {target}: {err.strerror}")
    result.results = [converted]
    return result
