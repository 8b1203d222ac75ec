"""GitHub Actions workflow commands: one annotation per finding."""

from __future__ import annotations


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_findings(findings, failures, warning: str = "") -> str:
    """One annotation per finding and failure; a ``warning`` (an unpinned target:
    Workspace.target_warning) first, as an annotation of the run."""
    lines = [f"::warning title=rocmigrate target::{_escape_data(warning)}"] if warning else []
    for f in findings:
        level = "notice" if f.severity == "info" else "warning"
        lines.append(f"::{level} file={_escape_property(f.path)},line={f.line},col={f.column},"
                     f"title={_escape_property(f.code)}::{_escape_data(f.code + ' ' + f.message)}")
    for r in failures:
        lines.append(f"::error file={_escape_property(r.rel)}::{_escape_data(r.message)}")
    return "\n".join(lines) + ("\n" if lines else "")
