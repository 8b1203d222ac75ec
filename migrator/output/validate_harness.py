"""`rocmigrate validate --harness`: validate's report with the kernel harnesses' report as one
more section (JSON key ``harness``; Markdown: the harness report, its headings one level down;
terminal: both summaries). The exit status covers both (ValidationReport.ok)."""

from __future__ import annotations

import json

from . import harness_json, harness_markdown, harness_text
from . import validate_json, validate_markdown, validate_text


def render_json(report) -> str:
    document = validate_json.validation_document(report)
    if report.harness is not None:
        document["harness"] = harness_json.harness_document(report.harness)
    return json.dumps(document, indent=2) + "\n"


def render_markdown(report) -> str:
    text = validate_markdown.render_markdown(report)
    if report.harness is None:
        return text
    return text.rstrip("\n") + "\n\n" + _demoted(
        harness_markdown.render_markdown(report.harness))


def render_summary(report, written: list[str]) -> str:
    text = validate_text.render_summary(report, written)
    if report.harness is None:
        return text
    return text + harness_text.render_summary(report.harness, written)


def _demoted(markdown: str) -> str:
    """Every heading one level down (outside fenced blocks, where a line may start with #)."""
    lines, fenced = [], False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        lines.append("#" + line if line.startswith("#") and not fenced else line)
    return "\n".join(lines) + "\n"
