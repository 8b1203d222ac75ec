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
        from .progress import say

        say(f"error: {err}")
        raise typer.Exit(2) from None


def write_reports(report_dir, stem: str, report, render_json, render_markdown,
                  render_summary) -> None:
    """Write ``report`` as STEM.json and STEM.md into ``report_dir``, print its text summary
    and end the command: exit 0 when the report is ok, else 1 (build and validate)."""
    import sys

    from ..fsutil import atomic_write
    from .progress import say

    written = [report_dir / f"{stem}.json", report_dir / f"{stem}.md"]
    try:
        atomic_write(written[0], render_json(report).encode())
        atomic_write(written[1], render_markdown(report).encode())
    except OSError as err:  # a FIFO or device at a report's path, a read-only folder
        say(f"error: cannot write the report into {report_dir}: {err.strerror}")
        raise typer.Exit(2) from None
    sys.stdout.write(render_summary(report, [str(path) for path in written]))
    raise typer.Exit(0 if report.ok else 1)


def _register() -> None:
    # (they register on ``app``)
    from . import build, convert, harness, lint, nvidia, report, rule, validate  # noqa: F401


def main() -> None:
    _register()
    app()
