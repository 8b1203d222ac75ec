"""Human-readable report of a `rocmigrate validate` run (REPORT_DIR/validate.md)."""

from __future__ import annotations

import json

from .. import __version__
from .validate_json import validation_document

CELL_WIDTH = 80


def cell(value: object) -> str:
    """A value as one Markdown table cell: JSON notation, shortened, pipes escaped."""
    if value is None:
        return "–"
    if isinstance(value, float):
        text = f"{value:.6g}"
    else:
        text = json.dumps(value, ensure_ascii=False)
    if len(text) > CELL_WIDTH:
        text = text[:CELL_WIDTH - 1] + "…"
    return text.replace("|", "\\|")


def render_markdown(report) -> str:
    from ..templating import render

    return render("validate/report.md.j2", report=validation_document(report),
                  version=__version__, cell=cell)
