"""The command line: a thin typer app, one module per command."""

from __future__ import annotations

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="rocmigrate: migrate CUDA projects to HIP for AMD GPUs.")


def _register() -> None:
    from . import convert, rule  # noqa: F401  (commands register themselves on ``app``)


def main() -> None:
    _register()
    app()
