"""Machine-readable report of a conversion run."""

from __future__ import annotations

import json

from .. import __version__


def render_report(summary: dict, files: list[dict], settings: dict,
                  diffs: list[str] | None = None) -> str:
    report = {"tool": "rocmigrate", "version": __version__, "settings": settings,
              "summary": summary, "files": files}
    if diffs is not None:
        report["diffs"] = diffs
    return json.dumps(report, indent=2, sort_keys=False) + "\n"


def render_findings(findings, failures, fixed_count: int, diffs: list[str] | None = None) -> str:
    """The lint report; with ``diffs`` (lint --diff), the unified diffs of the fixes too."""
    report = {"tool": "rocmigrate", "version": __version__,
              "findings": [f.as_dict() for f in findings],
              "fixed": fixed_count,
              "failures": [{"path": r.rel, "error": r.message} for r in failures]}
    if diffs is not None:
        report["diffs"] = diffs
    return json.dumps(report, indent=2) + "\n"
