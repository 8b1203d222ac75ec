"""`rocmigrate report`: options -> the workspace's settings and effort model -> build_report()
-> report.html, report.md, report.json (and a history snapshot) -> exit code."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from . import app
from .convert import Dnn
from .progress import say


@app.command()
def report(
    src: Path = typer.Argument(..., help="The CUDA tree (or a tree part-way through its port)."),
    report_dir: Path = typer.Option(Path("rocmigrate-report"), "-o", "--output",
                                    help="Folder for report.html, report.md and report.json."),
    rocm: Optional[str] = typer.Option(None, "--rocm", help="Target ROCm version X.Y, or auto "
                                       "(the default where hipcc is found; else 6.4)."),
    roc: bool = typer.Option(False, "--roc", help="Port to rocBLAS... instead of hipBLAS..."),
    dnn: Optional[Dnn] = typer.Option(None, "--dnn", help="cuDNN reported (report) or renamed "
                                      "to MIOpen (miopen)."),
    offload_arch: Optional[List[str]] = typer.Option(None, "--offload-arch",
                                                     help="AMD GPU architectures targeted."),
    converted: Optional[Path] = typer.Option(None, "--converted", help="The converted output "
                                             "(rocmigrate convert -o OUT): conversion progress."),
    build_report: Optional[Path] = typer.Option(None, "--build-report",
                                                help="A rocmigrate build JSON report."),
    validate_report: Optional[Path] = typer.Option(None, "--validate-report",
                                                   help="A rocmigrate validate JSON report."),
    history: bool = typer.Option(False, "--history", help="Walk the git history: remaining "
                                 "effort per commit (a burn-down)."),
    since: Optional[str] = typer.Option(None, "--since", help="--history: commits after this "
                                        "date (2024-01-31, '3 months ago')."),
    every: int = typer.Option(1, "--every", min=1, help="--history: every Nth commit."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="--history: at most "
                                        "this many commits (the newest; default: all)."),
    history_file: Optional[Path] = typer.Option(None, "--history-file", help="Append this "
                                                "report's snapshot to a JSON file (for CI)."),
    fail_on_regression: bool = typer.Option(False, "--fail-on-regression", help="Exit 1 when "
                                            "remaining work grew against the history file's "
                                            "last snapshot."),
    full: bool = typer.Option(False, "--full", help="Markdown with folders, files and each owner's work list too."),
    jobs: int = typer.Option(0, "--jobs", "-j", help="Worker processes (0: one per CPU)."),
    config: Optional[Path] = typer.Option(None, "--config", help="Configuration file to use."),
    rules_dir: Optional[Path] = typer.Option(None, "--rules-dir",
                                             help="A folder of your team's own rule modules."),
) -> None:
    """Migration phase report for a team lead: inventory, effort, phases, owners, progress."""
    from .. import registry
    from ..fsutil import atomic_write
    from ..output.report_html import render_html
    from ..output.report_json import render_json
    from ..output.report_markdown import render_markdown
    from ..report import HistoryOptions, ModelError, ReportError, ReportOptions
    from ..report import build_report as make_report
    from ..report.effort import load_model
    from ..report.history import (HistoryError, append_snapshot, incomparable, read_snapshots,
                                  regressed)
    from ..workspace import Flags
    from . import workspace_of

    if fail_on_regression and history_file is None:
        _fail("--fail-on-regression needs --history-file (the snapshots it compares)")
    workspace = workspace_of([src], Flags(
        rocm=rocm, roc=roc, dnn=dnn.value if dnn else None, rules_dir=rules_dir, config=config,
        offload_arch=tuple(offload_arch or ()), detect_hip=True))
    if workspace.target_warning:  # the figures follow this machine's HIP: said first
        sys.stdout.write(f"warning: {workspace.target_warning}\n")
        sys.stdout.flush()
    try:
        codes = [code for cls in registry.all_rules(workspace.settings.rules_dir)
                 for code in cls.codes()]
        model = load_model(workspace.config_path, codes)
    except ModelError as err:
        _fail(str(err))
    if report_dir.exists() and not report_dir.is_dir():
        _fail(f"{report_dir} exists and is not a folder")
    for given in (converted, build_report, validate_report):
        if given is not None and not given.exists():
            _fail(f"{given} does not exist")
    try:
        if history_file is not None:
            read_snapshots(history_file)  # a file that is not ours fails before the work
        options = ReportOptions(
            source=src, report_dir=report_dir, settings=workspace.settings, model=model,
            target_reason=workspace.rocm_reason, target_warning=workspace.target_warning,
            converted=converted, build_report=build_report,
            validate_report=validate_report, jobs=jobs,
            history=HistoryOptions(since, every, limit) if history else None)
        # progress lines on a terminal only (pipes and logs get none); errors always
        document = make_report(options, progress=say if sys.stderr.isatty() else None)
        report_dir.mkdir(parents=True, exist_ok=True)
        written = {"report.html": render_html(document), "report.md":
                   render_markdown(document, full), "report.json": render_json(document)}
        for name, text in written.items():
            atomic_write(report_dir / name, text.encode())
        reasons, unlike = [], ""
        if history_file is not None:
            previous, current = append_snapshot(history_file, document)
            reasons = regressed(previous, current)
            unlike = incomparable(previous, current)
    except (ReportError, HistoryError) as err:
        _fail(str(err))
    except OSError as err:
        _fail(f"cannot write the report: {err}")
    summary = document["summary"]
    pilot = document["plan"]["pilot"]
    sys.stdout.write(
        f"wrote {', '.join(str(report_dir / name) for name in written)}\n"
        f"{summary['files']} files, {summary['lines']} lines: port {summary['hours_port']:.1f} h "
        f"({summary['person_weeks']:.1f} person-weeks) = {summary['decisions']} decisions "
        f"({summary['blocker_decisions']} of them blockers) "
        f"{summary['hours_decisions']:.1f} h + sites {summary['hours_sites']:.1f} h; "
        f"{summary['blockers']} blocker sites; phase now: {summary['current_phase']}\n"
        f"pilot: {len(pilot['modules'])} units, {pilot['lines']} of {pilot['total_lines']} "
        f"lines ({100 * pilot['share']:.1f} %)"
        + (" (no smaller self-contained slice: over the pilot share)" if pilot["over_budget"]
           else "") + f"\n{document['model_line']}\n")
    if unlike:
        typer.echo(f"{history_file}: {unlike}", err=True)
    for reason in reasons:
        typer.echo(f"regression: {reason}", err=True)
    raise typer.Exit(1 if fail_on_regression and reasons else 0)


def _fail(message: str):
    say(f"error: {message}")
    raise typer.Exit(2)
