"""Human-readable report of a `rocmigrate build` run (REPORT_DIR/build.md)."""

from __future__ import annotations

from .. import __version__
from .build_json import build_document


def render_markdown(report) -> str:
    from ..templating import render

    return render("build/report.md.j2", report=build_document(report), version=__version__,
                  where=where, code=code)


def where(error: dict) -> str:
    """Where an error is: the CUDA file and line it came from, else the converted file's."""
    if error["source_file"] and error["source_line"]:
        approximate = "" if error["line_exact"] else " (approximately: the line was converted)"
        return f"`{error['source_file']}:{error['source_line']}`{approximate}"
    if error["source_file"]:
        return f"`{error['source_file']}` (converted as `{error['output_file']}:{error['line']}`)"
    if error["output_file"] and error["line"] is not None:
        return f"`{error['output_file']}:{error['line']}`"
    if error["output_file"]:
        return f"`{error['output_file']}`"
    return f"`{error['file']}`" if error["file"] else "(the build)"


def code(text: str) -> str:
    """Text inside a Markdown code span (backticks replaced: they would end it)."""
    return "`" + text.replace("`", "'").replace("|", "\\|") + "`"
