"""Machine-readable report of a `rocmigrate validate` run (REPORT_DIR/validate.json)."""

from __future__ import annotations

import json
from dataclasses import asdict

from .. import __version__


def validation_document(report) -> dict:
    """The report as plain data: settings, toolchains, the GPU each side runs on (and why
    nothing was run without one, or why the CUDA original was not), conversions, a summary,
    every program."""
    return {"tool": "rocmigrate", "version": __version__, "settings": report.settings,
            "toolchains": report.toolchains, "gpus": report.gpus, "not_run": report.not_run,
            "original_not_run": report.original_not_run,
            "build_dir": report.build_dir,
            "summary": {"ok": report.ok, "verdicts": dict(sorted(report.verdicts().items()))},
            "conversions": {variant: asdict(c) for variant, c in report.conversions.items()},
            "programs": [asdict(program) for program in report.programs]}


def render_json(report) -> str:
    return json.dumps(validation_document(report), indent=2) + "\n"
