"""Per-file results: pickled from workers with findings as columns, findings read by rows, the
cache's column codec and entries, and the finding summary made whole or from per-file shares."""

import json
import pickle

from migrator.diagnostics import Finding
from migrator.results import (FileResult, StringTable, encode_findings, file_summary,
                              finding_records, finding_rows, findings_json, merge_file_summaries,
                              packed_findings, summarize_findings, valid_finding_summary)


def _finding(line: int, code: str, fixed: bool) -> Finding:
    return Finding("a.cu", line, 3, code, f"message {code}", "info", "runtime", "cudaMalloc",
                   fixed, "rename" if fixed else "", "safe" if fixed else "", line % 2 == 0)


def test_pickled_result_keeps_every_finding_and_field():
    findings = [_finding(line, ("API001", "STM001")[line % 2], line % 3 == 0) for line in range(50)]
    result = FileResult("a.cu", "converted", "", findings, b"out", "hash", ("x.h",))
    back = pickle.loads(pickle.dumps(result))
    assert back == result
    assert back.findings is not result.findings
    assert pickle.loads(pickle.dumps(FileResult("b.cu", "failed", "why"))) == \
        FileResult("b.cu", "failed", "why")


def test_a_string_table_numbers_texts_in_order_of_first_use():
    table = StringTable(["a", "b"])
    assert table.numbers(["b", "c", "a", "d", "c"]) == [1, 2, 0, 3, 2]
    assert table.texts == ["a", "b", "c", "d"]
    assert table.numbers([]) == [] and table.number("d") == 3


def test_columns_share_one_string_table_and_refuse_damage():
    table = StringTable()
    columns = encode_findings([_finding(1, "API001", True), _finding(2, "API001", True)], table)
    strings = table.texts
    assert len(strings) == len(set(strings))  # each text once
    packed = packed_findings(columns, list(strings))
    assert packed == [_finding(1, "API001", True), _finding(2, "API001", True)]
    assert list(finding_rows(packed, ("line", "code"))) == [(1, "API001"), (2, "API001")]
    assert encode_findings(packed, StringTable()) == columns  # renumbered from the columns alone
    assert encode_findings(packed_findings(columns, table.texts), table) is columns
    assert packed_findings(columns, list(strings)[:-1]) is None  # an index past the table
    assert packed_findings(columns[:-1], list(strings)) is None  # a column missing
    damaged = [list(column) for column in columns]
    damaged[1][0] = "one"  # a line that is no int
    assert packed_findings(damaged, list(strings)) is None


def test_rows_read_alike_from_objects_and_columns():
    findings = [_finding(line, "API001", line % 2 == 0) for line in range(5)]
    table = StringTable()
    packed = packed_findings(encode_findings(findings, table), table.texts)
    names = ("path", "line", "fixed", "fix_title", "kind")
    assert list(finding_rows(findings, names)) == list(finding_rows(packed, names))
    assert list(finding_rows(findings, ("code",))) == [("API001",)] * 5


def test_json_records_read_alike_from_objects_and_columns():
    findings = [_finding(1, "API001", True), _finding(2, "API002", False)]
    table = StringTable()
    packed = packed_findings(encode_findings(findings, table), table.texts)
    assert finding_records(findings) == finding_records(packed) == [
        {"fix": {"title": "rename", "applicability": "safe"}, "path": "a.cu", "line": 1,
         "column": 3, "code": "API001", "message": "message API001", "severity": "info",
         "library": "runtime", "symbol": "cudaMalloc", "fixed": True},
        {"fix": None, "path": "a.cu", "line": 2, "column": 3, "code": "API002",
         "message": "message API002", "severity": "info", "library": "runtime",
         "symbol": "cudaMalloc", "fixed": False}]


def test_a_cache_entry_holds_its_findings_as_the_json_text_of_their_columns():
    from migrator.runner import _entry_json

    table = StringTable()
    findings = [_finding(1, "API001", True), _finding(2, 'quote " and \\ backslash', False)]
    entry = {"input": "h", "output": "o", "source": [1, 2], "stat": [3, 4], "support": ["x.h"],
             "findings": packed_findings(encode_findings(findings, table), table.texts)}
    text = _entry_json(entry)
    columns = json.dumps(entry["findings"].columns, separators=(",", ":"))
    assert text == json.dumps(dict(entry, findings=columns), separators=(",", ":"),
                              sort_keys=True)
    assert packed_findings(json.loads(json.loads(text)["findings"]), table.texts) == findings


def test_the_summary_merged_from_each_file_share_is_the_summary_of_all():
    def finding(path, line, code, fixed, title="", kind="conversion", severity="info"):
        return Finding(path, line, 1, code, f"message {code}", severity, "runtime",
                       f"symbol{line % 2}", fixed, title, "safe" if title else "", kind)

    files = [[finding("a.cu", 1, "API001", True, "rename"),
              finding("a.cu", 2, "API002", False, kind="attention"),
              finding("a.cu", 3, "STM001", True, "make non-blocking", "optimization")],
             [],
             [finding("b.cu", 4, "API002", False, kind="attention"),
              finding("b.cu", 5, "STM001", True, "other", "optimization"),
              finding("b.cu", 6, "ATM003", False, severity="info", kind="optimization"),
              finding("b.cu", 7, "API001", True, "mark API001", "attention")]]  # a marker
    shares = [file_summary(findings) for findings in files]
    table = StringTable()  # by columns, one table for all files, as the cache keeps them
    assert [file_summary(packed_findings(encode_findings(findings, table), table.texts))
            for findings in files] == shares
    before = repr(shares)
    merged = merge_file_summaries(shares)
    assert repr(shares) == before  # the shares are left as they were
    whole = merge_file_summaries([file_summary([f for findings in files for f in findings])])
    assert merged == whole == summarize_findings(files)
    # one entry per code and title (a title of another site is not repeated for it)
    assert [(e["title"], e["locations"]) for e in merged["optimized"]] == [
        ("make non-blocking", ["a.cu:3:1"]), ("other", ["b.cu:5:1"])]
    assert valid_finding_summary(merged)


def test_a_worker_s_columns_are_renumbered_into_the_cache_s_table():
    findings = [_finding(line, ("API001", "STM001")[line % 2], line % 3 == 0) for line in range(9)]
    own, shared = StringTable(), StringTable(["already", "there"])
    sent = pickle.loads(pickle.dumps(FileResult("a.cu", "converted", findings=findings))).findings
    assert sent.own_table  # a file's own table: renumbered text by text
    columns = encode_findings(sent, shared)
    assert packed_findings(columns, shared.texts) == findings
    assert shared.texts[:2] == ["already", "there"]
    assert packed_findings(encode_findings(findings, own), own.texts) == findings


def test_findings_json_is_the_compact_json_of_their_columns():
    table = StringTable()
    for count in (0, 1, 40):  # new text numbers as the table grows, and none
        findings = [Finding(f"f{line % 3}.cu", line * 97, line % 7, f"API00{line % 4}",
                            f"message {line}", "info", "", f"s{line}", line % 2 == 0,
                            "" if line % 5 else "rename", "",
                            "conversion" if line % 3 == 0 else "check")
                    for line in range(count)]
        columns = encode_findings(findings, table)
        assert findings_json(packed_findings(columns, table.texts)) == \
            json.dumps(columns, separators=(",", ":"))
