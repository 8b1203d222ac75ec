"""Human-readable report of a `rocmigrate harness` run (DIR/harness.md)."""

from __future__ import annotations

from .. import __version__
from .harness_json import harness_document
from .validate_markdown import cell


def render_markdown(report) -> str:
    from ..templating import render

    return render("harness/report.md.j2", report=harness_document(report),
                  version=__version__, cell=cell)
