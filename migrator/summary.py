"""The end-of-run summary as plain data, shared by every renderer."""

from __future__ import annotations

from collections import Counter, defaultdict

from .results import finding_records, summarize_findings
from .runner import RunResult


def summarize(run: RunResult) -> dict:
    statuses = Counter(r.status for r in run.results)
    found = run.finding_summary  # the one the cache holds (made this run, or loaded with it)
    if found is None:
        found = summarize_findings(result.findings for result in run.results)
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
        "converted_references": found["converted_references"],
        "optimized": found["optimized"],
        "fixed": found["fixed"],
        "attention": found["attention"],
        "failures": [{"path": r.rel, "error": r.message} for r in run.results if r.status == "failed"],
        "skipped": [{"path": r.rel, "reason": r.message} for r in run.results if r.status == "skipped"],
        # what a converted file's reader should know (how a file that is not UTF-8 was read)
        "notes": [{"path": r.rel, "note": r.message} for r in run.results
                  if r.status in ("converted", "unchanged") and r.message],
        "removed_stale_outputs": run.removed,
        "support_headers_written": sorted(set(run.support_written)),
    }


def file_records(run: RunResult) -> list[dict]:
    grouped = defaultdict(list)
    for result in run.results:
        grouped[result.rel] = finding_records(result.findings)
    return [{"path": r.rel, "status": r.status, "message": r.message,
             "findings": grouped[r.rel]} for r in run.results]
