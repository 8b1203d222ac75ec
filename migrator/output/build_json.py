"""Machine-readable report of a `rocmigrate build` run (REPORT_DIR/build.json; docs/build.md
documents the schema). ``schema_version`` changes when a field changes meaning or goes away."""

from __future__ import annotations

import json
from dataclasses import asdict

from .. import __version__

SCHEMA_VERSION = 1


def build_document(report) -> dict:
    """The report as plain data: settings, the installed HIP, the tree, notices, a summary,
    the build roots with their targets, the missing libraries, the logs kept and every unit
    built (configure steps, CMake targets, make goals, translation units)."""
    units = [asdict(unit) for unit in report.units]
    counted = {id(unit) for unit in report.targets}  # the units that count as targets
    is_target = [id(unit) in counted for unit in report.units]
    targets = [unit for unit, target in zip(units, is_target) if target]
    translation = report.translation_units or {"total": 0, "with_errors": []}
    return {"tool": "rocmigrate", "report": "build", "schema_version": SCHEMA_VERSION,
            "version": __version__, "settings": report.settings, "hip": report.hip,
            "tree": report.tree, "method": report.method, "build_dir": report.build_dir,
            "notices": list(report.notices),
            "summary": {"ok": report.ok, "units": len(units),
                        "built": sum(unit["built"] for unit in units),
                        "failed": sum(not unit["built"] for unit in units),
                        "targets": len(targets),
                        "targets_built": sum(unit["built"] for unit in targets),
                        "translation_units": translation["total"],
                        "translation_units_with_errors": len(translation["with_errors"]),
                        "errors": sum(unit["error_count"] for unit in units),
                        "codes": _codes(report),
                        "missing_libraries": [entry["library"] for entry in report.missing]},
            "roots": [_root(root, units, is_target) for root in report.roots],
            "missing_libraries": list(report.missing),
            "translation_units_with_errors": list(translation["with_errors"]),
            "logs": sorted(report.logs),
            "units": units,
            "cluster": report.cluster}


def _root(root: dict, units: list[dict], is_target: list[bool]) -> dict:
    """A build root: its method, log, whether it configured (CMake), its targets and how many
    built, and its units by name."""
    mine = [units[index] for index in root["units"]]
    targets = [units[index] for index in root["units"] if is_target[index]]
    configure = next((unit for unit in mine if unit["kind"] == "configure"), None)
    return {"path": root["path"], "method": root["method"], "log": root["log"],
            "configured": configure["built"] if configure else None,
            "targets": len(targets), "built": sum(unit["built"] for unit in targets),
            "units": [unit["name"] for unit in mine]}


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
