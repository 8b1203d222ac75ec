"""The report as JSON (REPORT_DIR/report.json): the report document as it is. Its schema is
versioned (``schema``) and documented in docs/report.md."""

from __future__ import annotations

import json


def render_json(document: dict) -> str:
    """Compact (the C encoder: a large tree's report holds a hundred thousand entries)."""
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n"
