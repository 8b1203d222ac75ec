"""`rocmigrate lint`: options -> settings (config file, then flags) -> lint() -> renderer."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer

from . import app


class OutputFormat(str, Enum):
    text = "text"
    json = "json"
    sarif = "sarif"
    github = "github"


def _codes(values: Optional[List[str]]) -> tuple[str, ...]:
    return tuple(code.strip().upper() for value in values or () for code in value.split(",")
                 if code.strip())


@app.command()
def lint(
    paths: Optional[List[Path]] = typer.Argument(None, help="Files or folders (default: .)."),
    fix: bool = typer.Option(False, "--fix", help="Apply safe fixes in place."),
    unsafe_fixes: bool = typer.Option(False, "--unsafe-fixes", help="Apply unsafe fixes too."),
    diff: bool = typer.Option(False, "--diff", help="Show the fixes as a diff; write nothing."),
    select: Optional[List[str]] = typer.Option(None, "--select", help="Codes or prefixes to run."),
    ignore: Optional[List[str]] = typer.Option(None, "--ignore", help="Codes or prefixes to skip."),
    preview: bool = typer.Option(False, "--preview", help="Run preview rules too."),
    output_format: OutputFormat = typer.Option(OutputFormat.text, "--output-format"),
    statistics: bool = typer.Option(False, "--statistics", help="Count findings per code."),
    exit_zero: bool = typer.Option(False, "--exit-zero", help="Exit 0 even with findings."),
    rocm: Optional[str] = typer.Option(None, "--rocm", help="Target ROCm version X.Y."),
    config: Optional[Path] = typer.Option(None, "--config", help="Configuration file to use."),
    jobs: int = typer.Option(0, "--jobs", "-j", help="Worker processes (0: one per CPU)."),
) -> None:
    """Check HIP (and CUDA) sources; exit 0 clean or all fixed, 1 findings remain, 2 error."""
    from ..config import ConfigError, check_selectors, find_config, load_config
    from ..lint import LintError, lint as run_lint
    from ..settings import Settings
    from ..versions import DEFAULT_ROCM, parse_target
    from .progress import reporter_for

    targets = paths or [Path(".")]
    try:
        check_selectors(_codes(select), "--select")
        check_selectors(_codes(ignore), "--ignore")
        cfg = load_config(config if config else find_config(targets[0]))
        values = cfg.values
        target = parse_target(rocm or values.get("rocm", DEFAULT_ROCM))
        settings = Settings(
            rocm=target,
            select=_codes(select) or tuple(c.upper() for c in values.get("select", ())),
            ignore=_codes(ignore) + tuple(c.upper() for c in values.get("ignore", ())),
            unsafe_fixes=unsafe_fixes or values.get("unsafe-fixes", False),
            wavefront_size=values.get("wavefront-size", 64),
            preview=preview or values.get("preview", False),
            per_file_ignores=tuple((p, tuple(c.upper() for c in codes))
                                   for p, codes in values.get("per-file-ignores", {}).items()),
            exclude=tuple(values.get("exclude", ())),
        )
        progress = reporter_for("checking")
        try:
            result = run_lint(targets, settings, cfg.root, fix=fix, diff=diff, jobs=jobs,
                              report=progress)
        finally:
            if progress:
                progress.close()
    except (ConfigError, LintError) as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(2) from None
    except ValueError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(2) from None
    remaining = sorted(result.remaining, key=lambda f: (f.path, f.line, f.column, f.code))
    failures = result.failed
    # a JSON or SARIF document carries the diffs inside it (stdout stays one parseable
    # document); text and GitHub annotations print them first, as lines of their own
    diffs = result.diffs if diff else None
    if output_format in (OutputFormat.text, OutputFormat.github):
        for patch in result.diffs:
            sys.stdout.write(patch)
    if output_format is OutputFormat.json:
        from ..output.json import render_findings

        sys.stdout.write(render_findings(remaining, failures, len(result.fixed), diffs))
    elif output_format is OutputFormat.sarif:
        from .. import registry
        from ..output.sarif import render_findings

        sys.stdout.write(render_findings(remaining, failures, registry.all_rules(), diffs))
    elif output_format is OutputFormat.github:
        from ..output.github import render_findings

        sys.stdout.write(render_findings(remaining, failures))
    else:
        from ..output.text import render_findings

        stream = sys.stderr if diff else sys.stdout
        stream.write(render_findings(remaining, failures, len(result.fixed), statistics))
        for link in result.skipped:
            sys.stderr.write(f"skipped {link}: symlink, not followed (its target is checked "
                             "where it lives)\n")
    if failures:
        raise typer.Exit(2)
    raise typer.Exit(0 if exit_zero or not remaining else 1)
