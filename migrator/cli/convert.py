"""`rocmigrate convert`: parse options, build settings, one library call, render, exit code."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from . import app


class LaunchSyntax(str, Enum):
    chevron = "chevron"
    ggl = "ggl"


class Format(str, Enum):
    text = "text"
    json = "json"


@app.command()
def convert(
    src: Path = typer.Argument(..., help="CUDA source file or folder to convert."),
    output: Optional[Path] = typer.Option(None, "-o", "--output", help="Output file or folder."),
    in_place: bool = typer.Option(False, "--in-place", help="Rewrite the sources themselves."),
    rocm: str = typer.Option(None, "--rocm", help="Target ROCm version X.Y (default: see README)."),
    launch_syntax: LaunchSyntax = typer.Option(LaunchSyntax.chevron, "--launch-syntax",
                                               help="Kernel launches as <<<>>> or hipLaunchKernelGGL."),
    rename_ext: bool = typer.Option(False, "--rename-ext", help="Write .cu files as .hip."),
    no_optimize: bool = typer.Option(False, "--no-optimize",
                                     help="A pure port: no AMD optimisation rewrites."),
    diff: bool = typer.Option(False, "--diff", help="Print a unified diff of every change."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Write nothing."),
    jobs: int = typer.Option(0, "--jobs", "-j", help="Worker processes (0: one per CPU)."),
    fmt: Format = typer.Option(Format.text, "--format", help="Summary format."),
    force: bool = typer.Option(False, "--force", help="--in-place even with uncommitted changes; "
                               "-o even when it names the source file."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="List every location."),
) -> None:
    """Convert a CUDA project (or one file) to HIP."""
    from ..runner import ConvertError, RunOptions, run
    from ..settings import Settings
    from ..summary import file_records, summarize
    from ..versions import DEFAULT_ROCM, format_version, parse_target
    from .progress import reporter_for

    try:
        target = parse_target(rocm or DEFAULT_ROCM)
    except ValueError as err:
        raise typer.BadParameter(str(err), param_hint="--rocm") from None
    settings = Settings(rocm=target, launch_syntax=launch_syntax.value, rename_ext=rename_ext,
                        optimize=not no_optimize)
    options = RunOptions(source=src, output=output, in_place=in_place, dry_run=dry_run,
                         diff=diff, jobs=jobs, force=force, findings_wanted=fmt is Format.json)
    progress = reporter_for("converting")
    try:
        result = run(options, settings, report=progress)
    except ConvertError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(2) from None
    finally:
        if progress:
            progress.close()
    summary = summarize(result)
    if fmt is Format.json:  # diffs travel inside the JSON document
        from ..output.json import render_report

        sys.stdout.write(render_report(summary, file_records(result), {
            "rocm": format_version(target), "launch_syntax": launch_syntax.value,
            "rename_ext": rename_ext, "optimize": not no_optimize, "dry_run": dry_run}, result.diffs if diff else None))
    else:
        from ..output.text import render_summary

        for patch in result.diffs:
            sys.stdout.write(patch)
        (sys.stderr if diff else sys.stdout).write(render_summary(summary, verbose))
    raise typer.Exit(1 if result.failed else 0)
