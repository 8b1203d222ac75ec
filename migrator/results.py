"""Per-file results, shared by the runner, its workers and the renderers (no engine imports, so a
fully cached run never loads the parser)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from itertools import chain, compress
from operator import attrgetter, itemgetter

from .diagnostics import Finding

CONVERTIBLE_SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".hh", ".hxx", ".cpp", ".cc", ".cxx", ".c",
                        ".inl", ".hip")


@dataclass
class FileResult:
    """What happened to one file. Workers return these; they never raise."""

    rel: str
    status: str  # converted / unchanged / copied / cached / skipped / failed
    message: str = ""  # why it failed or was skipped; a converted file's note (summary "notes")
    findings: list[Finding] = field(default_factory=list)
    output: bytes | None = None
    input_hash: str = ""
    support: tuple[str, ...] = ()  # support headers the output includes (written beside it)

    def __getstate__(self) -> dict:
        """Pickled with the findings as columns: a worker's result crosses to the parent process
        as a few lists of ints and strings instead of thousands of objects, which the parent
        (that writes every output, alone) would otherwise spend most of its time unpickling."""
        table = StringTable()
        state = dict(self.__dict__)
        state["findings"] = (encode_findings(self.findings, table), table.texts)
        return state

    def __setstate__(self, state: dict) -> None:
        columns, strings = state["findings"]
        self.__dict__.update(state, findings=PackedFindings(columns, strings, own_table=True))


# Findings as columns: one list per field of Finding, in order, text fields as indexes into a
# table of strings (a few hundred texts serve thousands of findings): the cache stores them so,
# and worker processes send them so. Columns check and decode with a few calls each, however
# many findings they hold.
_FINDING_COLUMNS = tuple((f.name, f.type == "str", bool if f.type == "bool" else int)
                         for f in fields(Finding))
_COLUMN_INDEX = {name: index for index, (name, _, _) in enumerate(_FINDING_COLUMNS)}


class PackedFindings(Sequence):
    """A file's findings kept as columns until something reads them one by one: a re-run served
    from the cache summarises them by columns (``finding_rows``) without building an object per
    finding."""

    __slots__ = ("columns", "strings", "own_table", "_findings")

    def __init__(self, columns: list[list], strings: list[str], own_table: bool = False) -> None:
        self.columns, self.strings, self._findings = columns, strings, None
        self.own_table = own_table  # ``strings`` holds these findings' texts and no other

    def rows(self, names: tuple[str, ...]):
        """Tuples of the fields ``names`` of each finding, in order."""
        picked = []
        for name in names:
            index = _COLUMN_INDEX[name]
            column = self.columns[index]
            picked.append(map(self.strings.__getitem__, column) if _FINDING_COLUMNS[index][1]
                          else column)
        return zip(*picked)

    def unpacked(self) -> list[Finding]:
        if self._findings is None:
            self._findings = list(map(Finding, *(
                list(map(self.strings.__getitem__, column)) if text else column
                for column, (_, text, _) in zip(self.columns, _FINDING_COLUMNS))))
        return self._findings

    def __len__(self) -> int:
        return len(self.columns[0])

    def __getitem__(self, index):
        return self.unpacked()[index]

    def __iter__(self):
        return iter(self.unpacked())

    def __eq__(self, other) -> bool:
        return isinstance(other, (list, PackedFindings)) and list(self) == list(other)

    def __repr__(self) -> str:
        return repr(self.unpacked())


def finding_rows(findings, names: tuple[str, ...]):
    """Tuples of the fields ``names`` of each of ``findings`` (a list or PackedFindings)."""
    if isinstance(findings, PackedFindings):
        return findings.rows(names)
    getter = attrgetter(*names)
    return map(getter, findings) if len(names) > 1 else zip(map(getter, findings))


# the fields of a finding its JSON record holds, in the order finding_records unpacks them
_RECORD_FIELDS = ("fix_title", "fix_applicability", "path", "line", "column", "code", "message",
                  "severity", "library", "symbol", "fixed")


def finding_records(findings) -> list[dict]:
    """``findings`` (a list or PackedFindings) as the JSON reports write them: read by rows, so
    a re-run served from the cache builds no object per finding."""
    return [{"fix": {"title": title, "applicability": applicability} if title else None,
             "path": path, "line": line, "column": column, "code": code, "message": message,
             "severity": severity, "library": library, "symbol": symbol, "fixed": fixed}
            for (title, applicability, path, line, column, code, message, severity, library,
                 symbol, fixed) in finding_rows(findings, _RECORD_FIELDS)]


# the fields that decide where a finding counts in the summary: files repeat a few combinations
_KIND_FIELDS = ("code", "fixed", "fix_title", "kind", "severity", "library")
_LOCATED_FIELDS = ("symbol", "message", "path", "line", "column")  # and those of its entry


def summarize_findings(findings_of_files) -> dict:
    """The part of a run's summary that comes from its findings (each file's, in order):
    references converted per library, optimisations applied, other fixes applied, and what
    needs attention (``marked`` where this run wrote a marker in the output), each with its
    locations. An entry groups the findings of one code with the same text (a fix's title, an
    attention finding's message)."""
    return merge_file_summaries(map(file_summary, findings_of_files))


def file_summary(findings) -> tuple[Counter, dict, dict, dict]:
    """One file's share of ``summarize_findings``: references converted per library, and the
    optimisations, other fixes and attention entries it adds (by code and text).

    Worked out by columns: each distinct combination of the fields that decide a finding's
    place is classified once (most findings are converted references, only counted), and only
    the findings with a location in the summary are visited one by one."""
    packed = isinstance(findings, PackedFindings)
    if packed:  # texts as their numbers in findings.strings
        text = findings.strings.__getitem__
        kinds = list(zip(*(findings.columns[_COLUMN_INDEX[name]] for name in _KIND_FIELDS)))
    else:
        text = _as_it_is
        kinds = list(map(attrgetter(*_KIND_FIELDS), findings))
    by_library: Counter = Counter()
    located: dict[tuple, str] = {}  # combination -> optimized, fixed or attention
    for key, count in Counter(kinds).items():
        code, fixed, title, kind, severity, library = key
        kind = text(kind)  # Rule.kind_of: the rules say where their findings belong
        if kind == "conversion" and fixed:
            by_library[text(library) or "other"] += count
        elif kind == "optimization" and fixed:
            located[key] = "optimized"
        elif kind == "check" and fixed:  # fixed by the conversion: nothing left to do
            located[key] = "fixed"
        elif kind in ("attention", "optimization") or text(severity) != "info":
            located[key] = "attention"
    unsupported: dict[tuple, dict] = {}
    optimized: dict[tuple, dict] = {}
    corrected: dict[tuple, dict] = {}
    if not located:
        return by_library, optimized, corrected, unsupported
    indexes = list(compress(range(len(kinds)), map(located.__contains__, kinds)))
    if packed:
        rows = zip(*(map(findings.columns[_COLUMN_INDEX[name]].__getitem__, indexes)
                     for name in _LOCATED_FIELDS))
    else:
        rows = map(attrgetter(*_LOCATED_FIELDS), map(findings.__getitem__, indexes))
    for index, (symbol, message, path, line, column) in zip(indexes, rows):
        key = kinds[index]
        code = text(key[0])
        place = located[key]
        if place != "attention":
            group = optimized if place == "optimized" else corrected
            title = text(key[2])
            entry = group.get((code, title))
            if entry is None:
                entry = group[(code, title)] = {"code": code, "title": title, "count": 0,
                                                "locations": []}
        else:
            # a finding a fix settled here is one this run marked (Fix.marker: its kind is
            # attention); an unfixed one has no marker from this run
            message = text(message)
            marked = bool(key[1])
            entry = unsupported.get((code, message, marked))
            if entry is None:
                entry = unsupported[(code, message, marked)] = {
                    "code": code, "symbol": text(symbol), "message": message,
                    "marked": marked, "count": 0, "locations": []}
        entry["count"] += 1
        entry["locations"].append(f"{text(path)}:{line}:{column}")
    return by_library, optimized, corrected, unsupported


def _as_it_is(value):
    return value


def merge_file_summaries(parts) -> dict:
    """``summarize_findings`` from the files' ``file_summary`` shares, in file order (the
    shares are not changed)."""
    by_library: Counter = Counter()
    merged: tuple[dict, dict, dict] = ({}, {}, {})
    for counts, *groups in parts:
        by_library.update(counts)
        for group, into in zip(groups, merged):
            for key, entry in group.items():
                target = into.get(key)
                if target is None:
                    target = into[key] = dict(entry, locations=list(entry["locations"]))
                else:
                    target["count"] += entry["count"]
                    target["locations"] += entry["locations"]
    optimized, corrected, unsupported = merged
    return {
        "converted_references": dict(sorted(by_library.items())),
        "optimized": sorted(optimized.values(), key=lambda e: e["code"]),
        "fixed": sorted(corrected.values(), key=lambda e: e["code"]),
        "attention": sorted(unsupported.values(),
                            key=lambda e: (-e["count"], e["code"], e["symbol"])),
    }


def valid_finding_summary(value) -> bool:
    """Is ``value`` what ``summarize_findings`` returns (checked: the cache that stores one is
    untrusted)?"""
    if type(value) is not dict or set(value) != {"converted_references", "optimized", "fixed",
                                                 "attention"}:
        return False
    counts = value["converted_references"]
    if type(counts) is not dict or not all(type(k) is str and type(n) is int
                                           for k, n in counts.items()):
        return False
    for name, texts in (("optimized", ("code", "title")), ("fixed", ("code", "title")),
                        ("attention", ("code", "symbol", "message"))):
        entries = value[name]
        if type(entries) is not list:
            return False
        flags = ("marked",) if name == "attention" else ()
        for entry in entries:
            if (type(entry) is not dict or set(entry) != {*texts, *flags, "count", "locations"}
                    or not all(type(entry[flag]) is bool for flag in flags)
                    or not all(type(entry[text]) is str for text in texts)
                    or type(entry["count"]) is not int or type(entry["locations"]) is not list
                    or not all(type(location) is str for location in entry["locations"])):
                return False
    return True


class StringTable:
    """Texts numbered in order of first use: the text fields of findings stored as columns."""

    __slots__ = ("texts", "_numbers")

    def __init__(self, texts: list[str] = ()) -> None:
        self.texts = list(texts)
        self._numbers = {text: number for number, text in enumerate(self.texts)}

    def number(self, text: str) -> int:
        number = self._numbers.get(text)
        if number is None:
            number = self._numbers[text] = len(self.texts)
            self.texts.append(text)
        return number

    def numbers(self, texts: list[str]) -> list[int]:
        """``number`` of each of ``texts`` (looked up together: most are in the table)."""
        found = list(map(self._numbers.get, texts))
        if None in found:
            for index, number in enumerate(found):
                if number is None:
                    found[index] = self.number(texts[index])
        return found


def encode_findings(findings, table: StringTable) -> list[list]:
    """The columns of ``findings`` (a list or PackedFindings), their texts numbered in
    ``table``. Columns already numbered in ``table`` are returned as they are."""
    packed = isinstance(findings, PackedFindings)
    if packed and findings.strings is table.texts:
        return findings.columns
    if packed and findings.own_table:  # every text of the table is one of these findings
        numbers = table.numbers(findings.strings)
        return [list(map(numbers.__getitem__, column)) if text else column
                for column, (_, text, _) in zip(findings.columns, _FINDING_COLUMNS)]
    columns = []
    for position, (name, text, _) in enumerate(_FINDING_COLUMNS):
        values = findings.columns[position] if packed else list(map(attrgetter(name), findings))
        if text:  # each distinct text looked up once (findings repeat a few texts)
            texts = findings.strings if packed else None
            numbers = {value: table.number(texts[value] if packed else value)
                       for value in dict.fromkeys(values)}
            values = list(map(numbers.__getitem__, values))
        columns.append(list(values))
    return columns


def text_columns(columns: list[list]):
    """The columns of ``columns`` (from ``encode_findings``) that hold text numbers."""
    return (column for column, (_, text, _) in zip(columns, _FINDING_COLUMNS) if text)


_DECIMALS: list[str] = []  # str(n) for the text numbers findings_json has met so far


def findings_json(findings: PackedFindings) -> str:
    """The columns of ``findings`` as compact JSON text. Text numbers are joined from their
    decimal texts, made once per number of the table: json spells out every int, twice as
    slowly, and a file's findings repeat a few texts."""
    if len(findings.strings) > len(_DECIMALS):
        _DECIMALS.extend(map(str, range(len(_DECIMALS), len(findings.strings))))
    decimal = _DECIMALS.__getitem__
    return "[" + ",".join("[" + ",".join(map(decimal, column)) + "]" if text
                          else json.dumps(column, separators=(",", ":"))
                          for column, (_, text, _) in zip(findings.columns,
                                                          _FINDING_COLUMNS)) + "]"


def packed_findings(columns, strings: list[str]) -> PackedFindings | None:
    """The findings ``encode_findings`` made into ``columns`` with the table ``strings``, or
    None when the columns are not what it writes (see ``packed_findings_of``)."""
    found = packed_findings_of([columns], strings)
    return found[0] if found is not None else None


def packed_findings_of(files: list, strings: list[str]) -> list[PackedFindings] | None:
    """The findings of many files (each a list of columns from ``encode_findings``, numbered in
    the table ``strings``), or None when any is not what it writes: wrong types or lengths, a
    text number out of the table (the cache that holds them is untrusted). Each field is
    checked across all files at once: a cache of thousands of files with a few findings each
    costs a few calls per field, not per file."""
    width = len(_FINDING_COLUMNS)
    for columns in files:
        if type(columns) is not list or len(columns) != width or \
                set(map(type, columns)) != {list} or len(set(map(len, columns))) != 1:
            return None
    for position, (_, text, kind) in enumerate(_FINDING_COLUMNS):
        values = list(chain.from_iterable(map(itemgetter(position), files)))
        if values and set(map(type, values)) != {kind}:
            return None
        if text and values and (min(values) < 0 or max(values) >= len(strings)):
            return None
    return [PackedFindings(columns, strings) for columns in files]
