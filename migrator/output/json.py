"""Machine-readable report of a conversion run."""

from __future__ import annotations

import json

from .. import __version__
from ..results import finding_records

# lists whose items are written one per line, each compact: a run may report 100,000 findings,
# which json.dumps(indent=...) encodes in pure Python at a tenth of the C encoder's speed
_RECORD_LISTS = ("files", "findings")


def dumps(document: dict) -> str:
    """``document`` as JSON text: the top level indented, the items of ``files`` and ``findings``
    lists one per line (compact). Parses to the same value as ``json.dumps(document)``."""
    lines = ["{"]
    items = list(document.items())
    for index, (key, value) in enumerate(items):
        comma = "," if index < len(items) - 1 else ""
        name = json.dumps(key)
        if key in _RECORD_LISTS and isinstance(value, list) and value:
            records = [json.dumps(record) for record in value]
            lines.append(f"  {name}: [")
            lines.append(",\n".join("    " + record for record in records))
            lines.append(f"  ]{comma}")
        else:
            text = json.dumps(value, indent=2).replace("\n", "\n  ")
            lines.append(f"  {name}: {text}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def render_report(summary: dict, files: list[dict], settings: dict,
                  diffs: list[str] | None = None) -> str:
    report = {"tool": "rocmigrate", "version": __version__, "settings": settings,
              "summary": summary, "files": files}
    if diffs is not None:
        report["diffs"] = diffs
    return dumps(report)


def render_findings(findings, failures, fixed_count: int, diffs: list[str] | None = None,
                    target: dict | None = None) -> str:
    """The lint report; with ``diffs`` (lint --diff), the unified diffs of the fixes too.
    ``target``: {rocm, reason, warning} (``warning`` "" unless an unpinned target followed the
    installed HIP: Workspace.target_warning)."""
    report = {"tool": "rocmigrate", "version": __version__,
              **({"target": target} if target is not None else {}),
              "findings": finding_records(findings),
              "fixed": fixed_count,
              "failures": [{"path": r.rel, "error": r.message} for r in failures]}
    if diffs is not None:
        report["diffs"] = diffs
    return dumps(report)
