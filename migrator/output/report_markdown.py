"""The report as Markdown (REPORT_DIR/report.md), for a wiki page or a pull-request comment:
short by default (summary, phases with their exit criteria, the pilot, the ten costliest
decisions, owners, the last commits of the history); ``full`` lists every decision and adds the folders and every file with work for a person. Rendered from
templates/report/report.md.j2."""

from __future__ import annotations

from ..templating import render
from .report_html import who


def render_markdown(document: dict, full: bool = False) -> str:
    return render("report/report.md.j2", d=document, full=full, cell=cell, who=who)


def cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return str(text).replace("|", "\\|").replace("\n", " ")
