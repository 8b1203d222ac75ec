"""Machine-readable report of a `rocmigrate build` run (REPORT_DIR/build.json; docs/build.md
documents the schema). ``schema_version`` changes when a field changes meaning or goes away."""

from __future__ import annotations

import json
from dataclasses import asdict

from .. import __version__

SCHEMA_VERSION = 1


def build_document(report) -> dict:
    """The report as plain data: settings, the installed HIP, the tree, notices, a summary and
    every unit built (CMake targets, the Makefile's build, or translation units)."""
    units = [asdict(unit) for unit in report.units]
    return {"tool": "rocmigrate", "report": "build", "schema_version": SCHEMA_VERSION,
            "version": __version__, "settings": report.settings, "hip": report.hip,
            "tree": report.tree, "method": report.method, "build_dir": report.build_dir,
            "notices": list(report.notices),
            "summary": {"ok": report.ok, "units": len(units),
                        "built": sum(unit["built"] for unit in units),
                        "failed": sum(not unit["built"] for unit in units),
                        "errors": sum(unit["error_count"] for unit in units),
                        "codes": _codes(report)},
            "units": units}


def _codes(report) -> dict[str, int]:
    """How many reported errors each rule code explains."""
    counts: dict[str, int] = {}
    for unit in report.units:
        for error in unit.errors:
            if error.code:
                counts[error.code] = counts.get(error.code, 0) + 1
    return dict(sorted(counts.items()))


def render_json(report) -> str:
    return json.dumps(build_document(report), indent=2) + "\n"
