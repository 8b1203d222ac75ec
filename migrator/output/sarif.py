"""SARIF 2.1.0 for code-scanning tools; rule metadata comes from the registry."""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath
from urllib.parse import quote

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


def artifact_location(path: str) -> dict:
    """Where a file lint names is: a path relative to the working directory is a URI relative
    to ``%SRCROOT%``, which the run says is the working directory; an absolute one (a file
    outside it) is a ``file://`` URI of its own."""
    if PurePosixPath(path).is_absolute():
        return {"uri": Path(path).as_uri()}
    return {"uri": quote(path), "uriBaseId": "%SRCROOT%"}


def _source_root() -> dict:
    """``%SRCROOT%``: the working directory lint ran in (its paths are relative to it)."""
    return {"uri": Path.cwd().as_uri() + "/",
            "description": {"text": "the working directory rocmigrate lint ran in"}}


def render_findings(findings, failures, rule_classes, diffs: list[str] | None = None,
                    target: dict | None = None) -> str:
    """A SARIF log of one run; with ``diffs`` (lint --diff), the unified diffs of the fixes go
    in the run's property bag (``properties.diffs``), where SARIF allows tool-specific data.
    ``target`` ({rocm, reason, warning}) goes there too; its ``warning`` (an unpinned target:
    Workspace.target_warning) is also the invocation's first notification."""
    rules, index = _rule_entries(rule_classes)
    results = []
    for f in findings:
        result = {
            "ruleId": f.code,
            "level": "note" if f.severity == "info" else "warning",
            "message": {"text": f.message},
            "locations": [{"physicalLocation": {
                "artifactLocation": artifact_location(f.path),
                "region": {"startLine": f.line, "startColumn": f.column}}}],
        }
        if f.code in index:
            result["ruleIndex"] = index[f.code]
        if f.fix_title:
            result["properties"] = {"fix": f.fix_title, "applicability": f.fix_applicability}
        results.append(result)
    notifications = [{"level": "error", "message": {"text": f"{r.rel}: {r.message}"}}
                     for r in failures]
    if target and target.get("warning"):
        notifications.insert(0, {"level": "warning", "message": {"text": target["warning"]},
                                 "descriptor": {"id": "rocmigrate-target"}})
    run = {
        "tool": {"driver": {"name": "rocmigrate", "version": __version__,
                            "semanticVersion": __version__, "rules": rules}},
        "originalUriBaseIds": {"%SRCROOT%": _source_root()},
        "results": results,
        "invocations": [{"executionSuccessful": not failures,
                         "toolExecutionNotifications": notifications}],
    }
    properties = {}
    if target is not None:
        properties["target"] = target
    if diffs is not None:
        properties["diffs"] = diffs
    if properties:
        run["properties"] = properties
    return json.dumps({"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}, indent=2) + "\n"
