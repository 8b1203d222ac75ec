"""Machine-readable report of a conversion run."""

from __future__ import annotations

import json

from .. import __version__


def render_report(summary: dict, files: list[dict], settings: dict) -> str:
    return json.dumps({"tool": "rocmigrate", "version": __version__, "settings": settings,
                       "summary": summary, "files": files}, indent=2, sort_keys=False) + "\n"
