"""The command line: a thin typer app, one module per command."""

from __future__ import annotations

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="rocmigrate: migrate CUDA projects to HIP for AMD GPUs.")


def _version(value: bool) -> None:
    if value:
        from .. import __version__

        typer.echo(f"rocmigrate {__version__}")
        raise typer.Exit()


@app.callback()
def _options(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")) -> None:
    """rocmigrate: migrate CUDA projects to HIP for AMD GPUs."""


def workspace_of(paths, flags):
    """The workspace of a command's paths and flags; a bad flag, configuration file or rules
    directory ends the command with its message (exit 2)."""
    from ..workspace import WorkspaceError, open_workspace

    try:
        return open_workspace(list(paths), flags)
    except WorkspaceError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(2) from None


def _register() -> None:
    # (they register on ``app``)
    from . import build, convert, lint, nvidia, report, rule, validate  # noqa: F401


def main() -> None:
    _register()
    app()
