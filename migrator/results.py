"""Per-file results, shared by the runner, its workers and the renderers (no engine imports, so a
fully cached run never loads the parser)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from operator import attrgetter

from .diagnostics import Finding

CONVERTIBLE_SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".hh", ".hxx", ".cpp", ".cc", ".cxx", ".c",
                        ".inl", ".hip")


@dataclass
class FileResult:
    """What happened to one file. Workers return these; they never raise."""

    rel: str
    status: str  # converted / unchanged / copied / cached / skipped / failed
    message: str = ""
    findings: list[Finding] = field(default_factory=list)
    output: bytes | None = None
    input_hash: str = ""
    support: tuple[str, ...] = ()  # support headers the output includes (written beside it)

    def __getstate__(self) -> dict:
        """Pickled with the findings as columns: a worker's result crosses to the parent process
        as a few lists of ints and strings instead of thousands of objects, which the parent
        (that writes every output, alone) would otherwise spend most of its time unpickling."""
        strings: dict[str, int] = {}
        state = dict(self.__dict__)
        state["findings"] = (encode_findings(self.findings, strings), list(strings))
        return state

    def __setstate__(self, state: dict) -> None:
        columns, strings = state["findings"]
        self.__dict__.update(state, findings=decode_findings(columns, strings))


# Findings as columns: one list per field of Finding, in order, text fields as indexes into a
# table of strings (a few hundred texts serve thousands of findings): the cache stores them so,
# and worker processes send them so. Columns check and decode with a few calls each, however
# many findings they hold.
_FINDING_COLUMNS = tuple((attrgetter(f.name), f.type == "str", bool if f.type == "bool" else int)
                         for f in fields(Finding))


def encode_findings(findings: list[Finding], strings: dict[str, int]) -> list[list]:
    """The columns of ``findings``, adding their texts to ``strings`` (text -> index)."""
    columns = []
    for get, text, _ in _FINDING_COLUMNS:
        values = list(map(get, findings))
        if text:  # each distinct text looked up once (findings repeat a few texts)
            index = {value: strings.setdefault(value, len(strings)) for value in dict.fromkeys(values)}
            values = list(map(index.__getitem__, values))
        columns.append(values)
    return columns


def decode_findings(columns, strings: list[str]) -> list[Finding] | None:
    """The findings ``encode_findings`` made into ``columns`` with the table ``strings``, or
    None when the columns are not what it writes (wrong types or lengths, a string index out of
    the table): the cache that holds them is untrusted."""
    if type(columns) is not list or len(columns) != len(_FINDING_COLUMNS):
        return None
    decoded = []
    for column, (_, text, kind) in zip(columns, _FINDING_COLUMNS):
        if type(column) is not list or len(column) != len(columns[0]):
            return None
        if column and set(map(type, column)) != {kind}:
            return None
        if text and column:
            if min(column) < 0 or max(column) >= len(strings):
                return None
            column = list(map(strings.__getitem__, column))
        decoded.append(column)
    return list(map(Finding, *decoded))
