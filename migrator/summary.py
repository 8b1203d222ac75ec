"""The end-of-run summary as plain data, shared by every renderer."""

from __future__ import annotations

from collections import Counter, defaultdict

from .results import finding_records, finding_rows
from .runner import RunResult

UNSUPPORTED_CODES = ("API002", "API003", "API004", "HDR002", "ARG002", "WRP002", "LOW002")
CONVERSION_CODES = ("API001", "ARG001", "HDR001", "HDR003", "WRP001", "LOW001", "LCH001",
                    "ATM001")
# the fields of a finding the summary reads, in the order summarize unpacks them
_SUMMARY_FIELDS = ("code", "fixed", "fix_title", "library", "optimization", "severity", "symbol",
                   "message", "path", "line", "column")


def summarize(run: RunResult) -> dict:
    statuses = Counter(r.status for r in run.results)
    by_library: Counter = Counter()
    unsupported: dict[str, dict] = {}
    optimized: dict[str, dict] = {}
    for result in run.results:
        for (code, fixed, title, library, optimization, severity, symbol, message, path, line,
             column) in finding_rows(result.findings, _SUMMARY_FIELDS):
            marked = title.startswith("mark ")
            if code in CONVERSION_CODES and fixed and not marked:
                by_library[library or "other"] += 1
            elif optimization and fixed and not marked:
                entry = optimized.setdefault(code, {
                    "code": code, "title": title, "count": 0, "locations": []})
                entry["count"] += 1
                entry["locations"].append(f"{path}:{line}:{column}")
            elif code in UNSUPPORTED_CODES or severity != "info" or marked or optimization:
                key = f"{code} {symbol}"
                entry = unsupported.setdefault(key, {
                    "code": code, "symbol": symbol, "message": message, "count": 0,
                    "locations": []})
                entry["count"] += 1
                entry["locations"].append(f"{path}:{line}:{column}")
    return {
        "files": {
            "converted": statuses["converted"],
            "unchanged": statuses["unchanged"],
            "cached": statuses["cached"],
            "copied": statuses["copied"],
            "skipped": statuses["skipped"],
            "failed": statuses["failed"],
            "total": len(run.results),
        },
        "converted_references": dict(sorted(by_library.items())),
        "optimized": sorted(optimized.values(), key=lambda e: e["code"]),
        "attention": sorted(unsupported.values(), key=lambda e: (-e["count"], e["code"], e["symbol"])),
        "failures": [{"path": r.rel, "error": r.message} for r in run.results if r.status == "failed"],
        "skipped": [{"path": r.rel, "reason": r.message} for r in run.results if r.status == "skipped"],
        "removed_stale_outputs": run.removed,
        "support_headers_written": sorted(set(run.support_written)),
    }


def file_records(run: RunResult) -> list[dict]:
    grouped = defaultdict(list)
    for result in run.results:
        grouped[result.rel] = finding_records(result.findings)
    return [{"path": r.rel, "status": r.status, "message": r.message,
             "findings": grouped[r.rel]} for r in run.results]
