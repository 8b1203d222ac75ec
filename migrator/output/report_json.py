"""The report as JSON (REPORT_DIR/report.json): the report document as it is. Its schema is
versioned (``schema``) and documented in docs/report.md."""

from __future__ import annotations

import json


def render_json(document: dict) -> str:
    return json.dumps(document, indent=1, ensure_ascii=False) + "\n"
