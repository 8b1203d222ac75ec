"""Loads the API tables (TSV data in the rules directory) into lookup structures.

The engine knows no CUDA API by heart: every name comes from these files. Files are read once
per process and shared by all rules (they are read-only).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import NamedTuple
from pathlib import Path

from .versions import parse_version

Version = tuple[int, int, int]


class ApiEntry(NamedTuple):
    """One CUDA name and what HIP has for it (a tuple: thousands are built per process)."""

    cuda: str
    hip: str
    kind: str
    library: str
    hip_added: Version | None
    hip_removed: Version | None
    signature: str
    status: str  # supported / unsupported / report_only / arguments_differ (marked, not renamed)
    experimental: bool = False


@dataclass(frozen=True)
class HeaderEntry:
    cuda_header: str
    hip_header: str  # "" = drop the include, "-" = no equivalent
    library: str
    hip_added: Version | None
    note: str


@dataclass(frozen=True)
class HeaderGuard:
    """A macro a CUDA header defines and the one the HIP header it becomes defines
    (rules/api/header_guards.tsv)."""

    cuda_macro: str
    cuda_header: str
    hip_header: str  # what cuda_header becomes: "" = dropped, "-" = no counterpart
    hip_macro: str  # "-" = none to test
    note: str


@dataclass(frozen=True)
class ArgumentRewrite:
    """One argument change of rules/api/argument_rewrites.tsv (its header says what each action
    does with ``arg`` and ``value``)."""

    cuda: str
    arg: int
    action: str  # one of REWRITE_ACTIONS
    value: str
    below: Version | None = None  # applies when the target is older than this (None: every target)

    def applies(self, rocm: Version, arguments: int, attribute: str = "") -> bool:
        """Does this change apply to a call with ``arguments`` arguments for the target (and,
        for the attribute actions, whose argument 1 is written ``attribute``)?"""
        if self.below is not None and rocm >= self.below:
            return False
        if self.action in ATTRIBUTE_ACTIONS and self.value.split()[0] != attribute:
            return False
        return self.action not in ARITY_ACTIONS or arguments == self.arg


REWRITE_ACTIONS = frozenset({"wrap_symbol", "cast", "disambiguate", "append_argument",
                             "append_argument_of", "insert_argument", "remove_argument", "rename",
                             "mark", "fold_into", "mark_attribute", "replace_value"})
# actions for the calls with exactly `arg` arguments
ARITY_ACTIONS = frozenset({"append_argument", "append_argument_of", "rename", "mark", "fold_into",
                           "mark_attribute"})
# actions for the calls whose argument 1 is the attribute their value names first
ATTRIBUTE_ACTIONS = frozenset({"fold_into", "mark_attribute"})


@dataclass(frozen=True)
class Lowering:
    """A CUDA name (or header) whose HIP counterpart the target ROCm lacks, lowered onto an older
    HIP API (rules/api/lowerings.tsv)."""

    cuda: str
    below: Version | None  # applies when the target is older than this (None: every target)
    rule: str  # the rule that applies it (WRP001, LOW001; header rows: HDR001)
    kind: str  # call (the callee is replaced) / name (every use as code) / header (#include)
    replacement: str
    drop_argument: int | None
    exact: str  # when it keeps CUDA's meaning: always / full_mask / literal / bf16
    note: str

    def applies(self, rocm: Version) -> bool:
        return self.below is None or rocm < self.below

    def lacking(self) -> str:
        """Which releases lack the CUDA name's HIP counterpart, for messages."""
        from .versions import NEWEST_ROCM, format_version

        if self.below is None:
            return f"does not exist in HIP up to ROCm {NEWEST_ROCM}"
        return f"does not exist before ROCm {format_version(self.below)}"


LOWERING_KINDS = frozenset({"call", "name", "header"})
LOWERING_EXACT = frozenset({"always", "full_mask", "literal", "bf16"})


@functools.lru_cache(maxsize=None)
def _version(text: str) -> Version | None:
    text = text.strip()
    return parse_version(text) if text else None


def _table(path: Path) -> tuple[list[str], list[list[str]]]:
    """A TSV table's header and its rows' cells ('#' lines and blank lines skipped): split
    once, with no dict per row (the name tables have ~9000 rows)."""
    text = path.read_text(encoding="utf-8")  # universal newlines: '\r\n' and '\r' read as '\n'
    lines = [line for line in text.split("\n") if line.strip() and not line.startswith("#")]
    header = lines[0].split("\t")
    width = len(header)
    rows = [line.split("\t") for line in lines[1:]]
    for number, cells in enumerate(rows, start=2):
        if len(cells) != width:
            raise ValueError(f"{path.name}: row {number} has {len(cells)} cells, expected {width}")
    return header, rows


def _rows(path: Path) -> list[dict[str, str]]:
    """Rows of a TSV table as dicts (the small tables)."""
    header, rows = _table(path)
    return [dict(zip(header, cells)) for cells in rows]


class ApiTables:
    """All API data of one rules directory, with the library choices in ``variants`` (its
    subfolders, such as ``roc``: their name and header rows replace the default ones for the
    same CUDA names)."""

    def __init__(self, api_dir: Path, variants: tuple[str, ...] = ()) -> None:
        self.api_dir = api_dir
        self.names: dict[str, ApiEntry] = {}
        self.headers: dict[str, HeaderEntry] = {}
        self.argument_rewrites: dict[str, list[ArgumentRewrite]] = {}
        self.call_renames: dict[str, list[ArgumentRewrite]] = {}
        self.lowerings: dict[str, Lowering] = {}
        self.header_guards: dict[str, list[HeaderGuard]] = {}  # by cuda_macro, one per hip_header
        self._lowerings_of: dict[tuple[str, Version], tuple] = {}  # lowerings_of's answers
        special = {"headers.tsv", "header_guards.tsv", "argument_rewrites.tsv", "lowerings.tsv",
                   "manual.tsv"}
        table_files = sorted(p for p in api_dir.glob("*.tsv") if p.name not in special)
        manual = api_dir / "manual.tsv"
        for path in table_files + ([manual] if manual.exists() else []):
            self._load_names(path, override=path == manual)
        for variant in variants:
            folder = api_dir / variant
            if not folder.is_dir():
                raise ValueError(f"no API tables for {variant!r} in {api_dir}")
            tables = sorted(p for p in folder.glob("*.tsv") if p.name not in special)
            for path in tables + [p for p in (folder / "manual.tsv",) if p.exists()]:
                self._load_names(path, override=True)  # (manual.tsv: its corrections, last)
        for folder in (api_dir, *(api_dir / variant for variant in variants)):
            if (folder / "headers.tsv").exists():
                for row in _rows(folder / "headers.tsv"):
                    self.headers[row["cuda_header"]] = HeaderEntry(
                        row["cuda_header"], row["hip_header"], row["library"],
                        _version(row["hip_added"]), row.get("note") or "",
                    )
        if (api_dir / "header_guards.tsv").exists():
            for row in _rows(api_dir / "header_guards.tsv"):
                self.header_guards.setdefault(row["cuda_macro"], []).append(HeaderGuard(
                    row["cuda_macro"], row["cuda_header"], row["hip_header"], row["hip_macro"],
                    row["note"]))
        if (api_dir / "argument_rewrites.tsv").exists():
            self._load_argument_rewrites(api_dir / "argument_rewrites.tsv")
        if (api_dir / "lowerings.tsv").exists():
            for row in _rows(api_dir / "lowerings.tsv"):
                drop = row["drop_argument"].strip()
                if row["kind"] not in LOWERING_KINDS or row["exact"] not in LOWERING_EXACT:
                    raise ValueError(f"lowerings.tsv: {row['cuda']}: unknown kind or exact value")
                self.lowerings[row["cuda"]] = Lowering(
                    row["cuda"], None if row["below"] == "-" else parse_version(row["below"]),
                    row["rule"], row["kind"],
                    row["replacement"], int(drop) if drop else None, row["exact"],
                    row.get("note") or "",
                )

    def _load_argument_rewrites(self, path: Path) -> None:
        """``argument_rewrites``: the names whose every call ARG001 renames (API001 leaves them
        to it); ``call_renames``: the names whose rows all rename the calls of one arity, keyed
        by their CUDA and their HIP name (API001 renames each call, ARG001 then renames those
        few again: their thousands of other calls stay API001's plain renames)."""
        rewrites: dict[str, list[ArgumentRewrite]] = {}
        for row in _rows(path):
            if row["action"] not in REWRITE_ACTIONS:
                raise ValueError(f"{path.name}: {row['cuda']}: unknown action {row['action']!r}")
            rewrites.setdefault(row["cuda"], []).append(ArgumentRewrite(
                row["cuda"], int(row["arg"]), row["action"], row["value"],
                _version(row["below"])))
        for cuda, rows in rewrites.items():
            if all(row.action == "rename" for row in rows):
                self.call_renames[cuda] = rows
                entry = self.names.get(cuda)
                if entry is not None and entry.hip:
                    self.call_renames.setdefault(entry.hip, rows)
            else:
                self.argument_rewrites[cuda] = rows

    @functools.cached_property
    def attribute_calls(self) -> dict[str, frozenset[str]]:
        """Attribute constant -> the functions (CUDA and HIP names) whose calls with it as
        argument 1 ARG001 folds or marks (``fold_into``, ``mark_attribute``): API001 leaves
        it there."""
        calls: dict[str, set[str]] = {}
        for cuda, rows in self.argument_rewrites.items():
            entry = self.names.get(cuda)
            for row in rows:
                if row.action in ATTRIBUTE_ACTIONS:
                    calls.setdefault(row.value.split()[0], set()).update(
                        {cuda, entry.hip} if entry is not None and entry.hip else {cuda})
        return {attribute: frozenset(names) for attribute, names in calls.items()}

    def lowerings_of(self, rule: str, rocm: Version) -> tuple[tuple[str, bytes, Lowering], ...]:
        """The lowering rows of ``rule`` that apply to the ``rocm`` target, in table order, as
        (CUDA name, its bytes, row): what a rule reads of them for every file, made once."""
        key = (rule, rocm)
        rows = self._lowerings_of.get(key)
        if rows is None:
            rows = self._lowerings_of[key] = tuple(
                (name, name.encode(), low) for name, low in self.lowerings.items()
                if low.rule == rule and low.applies(rocm))
        return rows

    @functools.cached_property
    def report_only_libraries(self) -> frozenset[str]:
        """Libraries that are reported, never converted (their HIP-side API differs)."""
        return frozenset(e.library for e in self.names.values() if e.status == "report_only")

    def _load_names(self, path: Path, override: bool) -> None:
        names = self.names
        header, rows = _table(path)
        columns = {column: index for index, column in enumerate(header)}  # the last one wins
        cuda, hip, kind, library, added, removed, signature, status = (
            columns[name] for name in ("cuda", "hip", "kind", "library", "hip_added",
                                       "hip_removed", "signature", "status"))
        experimental = columns.get("experimental")
        version, entry = _version, tuple.__new__  # (the NamedTuple's __new__ is a Python call)
        for cells in rows:
            name = cells[cuda]
            if not override and name in names and names[name].status == "supported":
                continue  # the first table that maps a name wins (runtime before driver...)
            names[name] = entry(ApiEntry, (
                name, cells[hip], cells[kind], cells[library], version(cells[added]),
                version(cells[removed]), cells[signature] or "identical", cells[status],
                experimental is not None and cells[experimental] == "1"))


def default_rules_dir() -> Path:
    """The rules directory shipped with the package (found the same way when installed)."""
    import rules

    return Path(rules.__file__).resolve().parent


@functools.lru_cache(maxsize=8)
def load(api_dir: Path | None = None, variants: tuple[str, ...] = ()) -> ApiTables:
    return ApiTables(api_dir or default_rules_dir() / "api", variants)


@dataclass(frozen=True)
class Library:
    """One row of rules/build/libraries.tsv (each CUDA library's HIP counterpart for build
    files) as the settings choose it (--roc picks the roc* columns)."""

    cuda_names: tuple[str, ...]  # link names; ``npp*`` matches a prefix
    link: str  # -l name on AMD, '' when nothing is linked
    package: str  # find_package() name, '' when none
    target: str  # imported target, '' when none
    mapped: bool  # status ``mapped`` (a build uses it as it is), else ``marked`` (port the sources)
    note: str
    added: tuple[int, int, int] | None = None  # the ROCm release that added it (None: any)
    before: str = ""  # below ``added``: the CUDA name of the row whose HIP library held it


@functools.lru_cache(maxsize=2)
def libraries(roc: bool) -> tuple[Library, ...]:
    """rules/build/libraries.tsv, with the roc* columns where ``roc`` and the row has them."""
    found = []
    for row in _rows(default_rules_dir() / "build" / "libraries.tsv"):
        use_roc = roc and row["roc_target"]
        link = row["roc_link"] if use_roc else row["hip_link"]
        found.append(Library(tuple(row["cuda"].split("|")), "" if link == "-" else link,
                             row["roc_package"] if use_roc else row["package"],
                             row["roc_target"] if use_roc else row["target"],
                             row["status"] == "mapped", row["note"],
                             parse_version(row["hip_added"]) if row.get("hip_added") else None,
                             row.get("hip_before") or ""))
    return tuple(found)


def library_at(library: Library, rocm: tuple[int, ...], roc: bool) -> Library:
    """The library as a build at ROCm ``rocm`` links it: below the release that added it, the
    row that held it before (hiprtc was part of the HIP runtime before ROCm 6.0), if any."""
    if library.added is not None and rocm < library.added and library.before:
        return library_named(library.before, roc) or library
    return library


def library_named(name: str, roc: bool) -> Library | None:
    """The library a CUDA link name (``cublas``, ``nppc``: ``npp*`` rows match a prefix)
    stands for, or None."""
    for library in libraries(roc):
        for cuda in library.cuda_names:
            if cuda == name or (cuda.endswith("*") and name.startswith(cuda[:-1])):
                return library
    return None
