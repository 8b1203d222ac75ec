"""Machine-readable report of a `rocmigrate harness` run (DIR/harness.json)."""

from __future__ import annotations

import json
from dataclasses import asdict

from .. import __version__


def harness_document(report) -> dict:
    """The report as plain data: settings, toolchains, GPUs, the conversion, the files read, a
    summary and every harness (its spec as a path: the file is the spec; its timing verdict
    with the reason in words)."""
    harnesses = []
    for outcome in report.harnesses:
        entry = asdict(outcome)
        del entry["loaded"]
        if outcome.timing is not None:
            entry["timing"]["reason"] = outcome.timing.reason
        harnesses.append(entry)
    return {"tool": "rocmigrate", "version": __version__, "settings": report.settings,
            "toolchains": report.toolchains, "gpus": report.gpus,
            "original_not_run": report.original_not_run,
            "summary": {"ok": report.ok, "verdicts": dict(sorted(report.verdicts().items()))},
            "conversion": report.conversion, "files": report.files, "harnesses": harnesses,
            "cluster": report.cluster}


def render_json(report) -> str:
    return json.dumps(harness_document(report), indent=2) + "\n"
