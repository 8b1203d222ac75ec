"""SARIF 2.1.0 for code-scanning tools; rule metadata comes from the registry."""

from __future__ import annotations

import json

from .. import __version__

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _rule_entries(rule_classes) -> tuple[list[dict], dict[str, int]]:
    entries, index = [], {}
    for cls in rule_classes:
        doc = cls.documentation()
        for code in cls.codes():
            index[code] = len(entries)
            entries.append({
                "id": code,
                "name": cls.name,
                "shortDescription": {"text": cls.summary},
                "fullDescription": {"text": doc.split("\n\n", 1)[0]},
                "help": {"text": doc, "markdown": doc},
                "defaultConfiguration": {"level": "warning"},
                "properties": {"fix": cls.fix, "family": cls.family},
            })
    return entries, index


def render_findings(findings, failures, rule_classes, diffs: list[str] | None = None) -> str:
    """A SARIF log of one run; with ``diffs`` (lint --diff), the unified diffs of the fixes go
    in the run's property bag (``properties.diffs``), where SARIF allows tool-specific data."""
    rules, index = _rule_entries(rule_classes)
    results = []
    for f in findings:
        result = {
            "ruleId": f.code,
            "level": "note" if f.severity == "info" else "warning",
            "message": {"text": f.message},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": f.path, "uriBaseId": "%SRCROOT%"},
                "region": {"startLine": f.line, "startColumn": f.column}}}],
        }
        if f.code in index:
            result["ruleIndex"] = index[f.code]
        if f.fix_title:
            result["properties"] = {"fix": f.fix_title, "applicability": f.fix_applicability}
        results.append(result)
    notifications = [{"level": "error", "message": {"text": f"{r.rel}: {r.message}"}}
                     for r in failures]
    run = {
        "tool": {"driver": {"name": "rocmigrate", "version": __version__,
                            "semanticVersion": __version__, "rules": rules}},
        "results": results,
        "invocations": [{"executionSuccessful": not failures,
                         "toolExecutionNotifications": notifications}],
    }
    if diffs is not None:
        run["properties"] = {"diffs": diffs}
    return json.dumps({"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}, indent=2) + "\n"
