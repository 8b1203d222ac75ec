"""Converting a whole tree: discovery, a process pool, atomic writes, an incremental cache.

Workers return ``FileResult`` values and never raise; results come back in path order, so output
is deterministic. A content-hash cache in ``OUT/.rocmigrate/cache.json`` lets a re-run convert only
what changed and remove outputs whose source is gone.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from . import __version__
from .fsutil import atomic_write, content_hash
from .results import CONVERTIBLE_SUFFIXES, FileResult
from .settings import Settings

CACHE_DIR = ".rocmigrate"
SKIPPED_DIRS = {".git", ".hg", ".svn", CACHE_DIR}
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


@dataclass
class RunResult:
    results: list[FileResult] = field(default_factory=list)
    diffs: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    support_written: list[str] = field(default_factory=list)  # support headers written beside outputs

    @property
    def failed(self) -> bool:
        return any(r.status == "failed" for r in self.results)


@dataclass
class _Item:
    rel: str
    path: Path
    out_rel: str
    kind: str  # convert / copy / link / skip
    note: str = ""
    stat: list[int] | None = None  # [size, mtime_ns] of the source, read once per run


def output_name(rel: str, settings: Settings) -> str:
    if settings.rename_ext and rel.endswith(".cu"):
        return rel[:-3] + ".hip"
    return rel


def _inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
        return True
    except ValueError:
        return False


def discover(root: Path, exclude: Path | None, settings: Settings) -> list[_Item]:
    """Every file under ``root`` (sorted), classified; symlinks are never followed out of it."""
    items: list[_Item] = []
    real_root = root.resolve()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        current = Path(dirpath)
        kept = []
        for name in sorted(dirnames):
            full = current / name
            if name in SKIPPED_DIRS or (exclude is not None and full.resolve() == exclude):
                continue
            if full.is_symlink():
                filenames.append(name)  # handled as a link below
                continue
            kept.append(name)
        dirnames[:] = kept
        for name in filenames:
            full = current / name
            rel = full.relative_to(root).as_posix()
            if full.is_symlink():
                target = full.resolve()
                if not _inside(target, real_root):
                    items.append(_Item(rel, full, rel, "skip",
                                       f"symlink to {os.readlink(full)} points outside the source "
                                       "tree; not followed"))
                else:
                    items.append(_Item(rel, full, output_name(rel, settings), "link"))
                continue
            if not full.is_file():
                items.append(_Item(rel, full, rel, "skip", "not a regular file"))
                continue
            kind = "convert" if name.endswith(CONVERTIBLE_SUFFIXES) else "copy"
            out_rel = output_name(rel, settings) if kind == "convert" else rel
            items.append(_Item(rel, full, out_rel, kind))
    items.sort(key=lambda item: item.rel)
    return items


def _convert_job(job: tuple[str, bytes, Settings]) -> FileResult:
    from .convert import convert_bytes  # the engine loads only when a file needs converting

    rel, data, settings = job
    return convert_bytes(rel, data, settings)


class _Cache:
    """Per output tree: for each written file, the source's hash and stat, and the output's stat
    (all under a key of the tool version and settings).

    A source whose size and modification time are unchanged is not even read; one whose stat
    changed is read and compared by content hash, so touching a file costs a hash, not a
    conversion."""

    def __init__(self, out_root: Path | None, settings: Settings) -> None:
        self.path = out_root / CACHE_DIR / "cache.json" if out_root else None
        self.key = f"{__version__}|{settings.fingerprint()}"
        self.entries: dict[str, dict] = {}
        self.previous: dict[str, dict] = {}
        if self.path and self.path.exists():
            try:
                stored = json.loads(self.path.read_text(encoding="utf-8"))
                if stored.get("key") == self.key:
                    self.previous = stored.get("files", {})
                else:
                    self.previous = {rel: {"output": e.get("output")}
                                     for rel, e in stored.get("files", {}).items()}
            except (OSError, ValueError):
                self.previous = {}

    def hit(self, rel: str, input_hash: str | None, out_path: Path,
            source_stat: list[int] | None = None) -> bool:
        """Is the output up to date? By source stat when ``input_hash`` is None, else by hash."""
        entry = self.previous.get(rel)
        if not entry:
            return False
        if input_hash is None:
            if source_stat is None or entry.get("source") != source_stat:
                return False
        elif entry.get("input") != input_hash:
            return False
        try:
            stat = out_path.stat()
        except OSError:
            return False
        return [stat.st_size, stat.st_mtime_ns] == entry.get("stat")

    def record(self, rel: str, input_hash: str, out_rel: str, out_path: Path,
               source_stat: list[int] | None, support: list[str] | None = None) -> None:
        stat = out_path.stat()
        self.entries[rel] = {"input": input_hash, "output": out_rel, "source": source_stat,
                             "stat": [stat.st_size, stat.st_mtime_ns]}
        if support:
            self.entries[rel]["support"] = support

    @staticmethod
    def _written(entries) -> set[str]:
        return {path for e in entries for path in (e.get("output"), *e.get("support", ())) if path}

    def stale_outputs(self) -> list[str]:
        """Outputs and support headers the last run wrote that this run did not."""
        return sorted(self._written(self.previous.values()) - self._written(self.entries.values()))

    def save(self) -> None:
        if self.path is None or (self.entries == self.previous and self.path.exists()):
            return  # an unchanged re-run rewrites nothing
        payload = {"key": self.key, "files": self.entries}
        atomic_write(self.path, json.dumps(payload, separators=(",", ":"), sort_keys=True).encode())


def _check_in_place(source: Path, force: bool) -> None:
    if force:
        return
    try:
        import git
    except ImportError:  # pragma: no cover - gitpython is a dependency
        return
    try:
        repo = git.Repo(source if source.is_dir() else source.parent, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return
    if repo.is_dirty(untracked_files=True, path=str(source)):
        raise ConvertError(f"{source} is in a git work tree with uncommitted changes; commit or "
                           "stash them first (or pass --force): --in-place rewrites files")


def run(options: RunOptions, settings: Settings, report=None) -> RunResult:
    """Convert ``options.source`` (a file or a tree) into the output or in place."""
    source = options.source
    if not source.exists():
        raise ConvertError(f"{source} does not exist")
    if options.in_place:
        if options.output is not None:
            raise ConvertError("--in-place and -o/--output exclude each other")
        if not options.dry_run:
            _check_in_place(source, options.force)
    elif options.output is None:
        raise ConvertError("give an output with -o/--output, or --in-place")
    if source.is_file():
        return _run_single(options, settings)
    out_root = source if options.in_place else options.output
    if out_root.exists() and not out_root.is_dir():
        raise ConvertError(f"{out_root} exists and is not a folder")
    if not options.in_place and out_root.resolve() == source.resolve():
        raise ConvertError("the output folder is the source folder: use --in-place for that")
    exclude = out_root.resolve() if not options.in_place and _inside(out_root.resolve(),
                                                                      source.resolve()) else None
    items = discover(source, exclude, settings)
    cache = _Cache(None if options.in_place or options.dry_run else out_root, settings)
    result = RunResult()
    pending: list[tuple[_Item, bytes, str]] = []
    outcomes: dict[str, FileResult] = {}
    for item in items:
        if item.kind == "skip":
            outcomes[item.rel] = FileResult(item.rel, "skipped", item.note)
            continue
        if item.kind == "link":
            outcomes[item.rel] = _link(item, out_root, options)
            continue
        out_path = out_root / item.out_rel
        try:
            stat = item.path.stat()
            item.stat = [stat.st_size, stat.st_mtime_ns]
        except OSError:
            item.stat = None
        if cache.hit(item.rel, None, out_path, item.stat):  # unchanged since last run: not read
            cache.entries[item.rel] = cache.previous[item.rel]
            _restore_support(cache.entries[item.rel], out_root, settings, result)
            outcomes[item.rel] = FileResult(item.rel, "cached" if item.kind == "convert"
                                            else "copied", input_hash=cache.previous[item.rel]["input"])
            continue
        try:
            data = item.path.read_bytes()
        except OSError as err:
            outcomes[item.rel] = FileResult(item.rel, "failed", f"cannot read: {err.strerror}")
            continue
        digest = content_hash(data)
        if item.kind == "copy":
            outcomes[item.rel] = _copy(item, data, digest, out_path, cache, options)
            continue
        if cache.hit(item.rel, digest, out_path):
            _restore_support(cache.previous[item.rel], out_root, settings, result)
            cache.record(item.rel, digest, item.out_rel, out_path, item.stat,
                         cache.previous[item.rel].get("support"))
            outcomes[item.rel] = FileResult(item.rel, "cached", input_hash=digest)
            continue
        pending.append((item, data, digest))
    taken = {item.out_rel for item in items if not _generated_support(item)}
    for (item, data, digest), converted in zip(pending, _convert_all(pending, settings, options,
                                                                     report)):
        converted.input_hash = digest
        outcomes[item.rel] = _store(item, data, converted, out_root, cache, options, result,
                                    settings, taken)
    if not options.dry_run and not options.in_place:
        for stale in cache.stale_outputs():
            path = out_root / stale
            if path.is_file() and not any(i.out_rel == stale for i in items):
                path.unlink()
                result.removed.append(stale)
        cache.save()
    result.results = [outcomes[item.rel] for item in items]
    return result


def _convert_all(pending, settings: Settings, options: RunOptions, report):
    from .pool import map_in_workers

    work = [(item.rel, data, settings) for item, data, _ in pending]
    for (_, data, _), converted in zip(work, map_in_workers(_convert_job, work, options.jobs,
                                                            POOL_THRESHOLD)):
        if report is not None:
            report(len(work), data.count(b"\n"))  # files converted in this run, this one's lines
        yield converted


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


def _write_support(folder: Path, names: tuple[str, ...], settings: Settings, shown: str,
                   result: RunResult) -> None:
    from . import support

    for path in support.write_beside(folder, names, settings):
        result.support_written.append(f"{shown}/{path.name}" if shown else path.name)


def _restore_support(entry: dict, out_root: Path, settings: Settings, result: RunResult) -> None:
    """A cached output's support headers: rewritten if someone deleted or changed them."""
    for rel in entry.get("support", ()):
        folder, _, name = rel.rpartition("/")
        _write_support(out_root / folder if folder else out_root, (name,), settings, folder, result)


def _store(item: _Item, data: bytes, converted: FileResult, out_root: Path, cache: _Cache,
           options: RunOptions, result: RunResult, settings: Settings,
           taken: set[str]) -> FileResult:
    out_path = out_root / item.out_rel
    blocked = [rel for rel in _support_rels(item.out_rel, converted.support) if rel in taken]
    if blocked and converted.status != "failed":
        converted = FileResult(item.rel, "failed",
                               f"its output needs rocmigrate's support header {blocked[0]}, but "
                               "the source tree has a file of that name; rename that file")
    if converted.status == "failed":
        if not options.dry_run and not options.in_place and out_path.is_file():
            out_path.unlink()  # an output of an older version of this source would be stale
        converted.output = None
        return converted
    output = converted.output
    converted.output = None
    if options.diff and output != data:
        result.diffs.append(unified_diff(item.rel, item.out_rel, data, output))
    if options.dry_run:
        return converted
    folder = item.out_rel.rpartition("/")[0]
    if options.in_place:
        if output != data:
            atomic_write(item.path, output, mode_from=item.path)
        _write_support(item.path.parent, converted.support, settings, folder, result)
        return converted
    if not (out_path.is_file() and out_path.read_bytes() == output):
        atomic_write(out_path, output, mode_from=item.path)
    _write_support(out_path.parent, converted.support, settings, folder, result)
    cache.record(item.rel, converted.input_hash, item.out_rel, out_path, item.stat,
                 _support_rels(item.out_rel, converted.support))
    return converted


def _copy(item: _Item, data: bytes, digest: str, out_path: Path, cache: _Cache,
          options: RunOptions) -> FileResult:
    if options.dry_run or options.in_place:
        return FileResult(item.rel, "copied" if not options.in_place else "unchanged")
    if not cache.hit(item.rel, digest, out_path):
        try:
            if not (out_path.is_file() and out_path.read_bytes() == data):
                atomic_write(out_path, data, mode_from=item.path)
        except OSError as err:
            return FileResult(item.rel, "failed", f"cannot write output: {err.strerror}")
    cache.record(item.rel, digest, item.out_rel, out_path, item.stat)
    return FileResult(item.rel, "copied", input_hash=digest)


def _link(item: _Item, out_root: Path, options: RunOptions) -> FileResult:
    """A symlink inside the tree is recreated as the same relative link in the output."""
    if options.dry_run or options.in_place:
        return FileResult(item.rel, "copied", "symlink inside the source tree")
    target = os.readlink(item.path)
    if target.endswith(".cu") and item.out_rel != item.rel:
        target = target[:-3] + ".hip"
    link = out_root / item.out_rel
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.is_symlink() or link.exists():
        if link.is_symlink() and os.readlink(link) == target:
            return FileResult(item.rel, "copied", "symlink inside the source tree")
        if link.is_dir() and not link.is_symlink():
            return FileResult(item.rel, "failed", f"output {item.out_rel} is a folder")
        link.unlink()
    os.symlink(target, link)
    return FileResult(item.rel, "copied", "symlink inside the source tree")


def unified_diff(rel: str, out_rel: str, before: bytes, after: bytes) -> str:
    import difflib

    return "".join(difflib.unified_diff(
        before.decode("utf-8", "replace").splitlines(keepends=True),
        after.decode("utf-8", "replace").splitlines(keepends=True),
        fromfile=f"a/{rel}", tofile=f"b/{out_rel}"))


def _run_single(options: RunOptions, settings: Settings) -> RunResult:
    path = options.source
    rel = path.name
    result = RunResult()
    try:
        data = path.read_bytes()
    except OSError as err:
        result.results = [FileResult(rel, "failed", f"cannot read: {err.strerror}")]
        return result
    converted = _convert_job((rel, data, settings))
    if options.in_place:
        target = path
    else:
        out = options.output
        if out.is_dir() or str(out).endswith(os.sep):
            target = out / output_name(rel, settings)
        else:
            target = out
    if converted.status != "failed":
        output = converted.output
        converted.output = None
        if options.diff and output != data:
            result.diffs.append(unified_diff(rel, target.name, data, output))
        if not options.dry_run and (target != path or output != data):
            atomic_write(target, output, mode_from=path)
        if not options.dry_run:
            _write_support(target.parent, converted.support, settings, "", result)
    result.results = [converted]
    return result
