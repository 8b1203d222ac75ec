"""`rocmigrate build`: options -> BuildOptions -> build() -> JSON + Markdown reports, summary."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from . import app, write_reports
from .cluster import cluster_options, executor_options, work_folder
from .progress import say


@app.command()
@executor_options
def build(
    out: Path = typer.Argument(..., help="A converted tree (the output folder of convert)."),
    source: Optional[Path] = typer.Option(None, "--source", help="The CUDA tree it was converted "
                                          "from: errors are mapped to its files and lines."),
    offload_arch: Optional[List[str]] = typer.Option(
        None, "--offload-arch", help="AMD GPU architectures (repeatable or comma-separated; "
        "default gfx90a)."),
    build_dir: Optional[Path] = typer.Option(None, "--build-dir", help="Build in this folder "
                                             "and keep it (default: a temporary folder)."),
    keep_build: bool = typer.Option(False, "--keep-build", help="Keep the temporary build folder."),
    jobs: int = typer.Option(0, "--jobs", "-j", min=0, help="Parallel compiles (0: one per CPU)."),
    timeout: float = typer.Option(600.0, "--timeout", min=0.001, help="Seconds per compile."),
    method: str = typer.Option("auto", "--method", help="auto (CMake, else Makefile, else file "
                               "by file), cmake, make or files."),
    report_dir: Path = typer.Option(Path("rocmigrate-build"), "--report", help="Folder for "
                                    "build.json, build.md and the builds' logs (logs/)."),
    cmake_arg: Optional[List[str]] = typer.Option(
        None, "--cmake-arg", help="Passed to CMake's configure step (repeatable): a cache entry "
        "such as -DMODEL=cuda, -UNAME, or a warning/log switch."),
    make_var: Optional[List[str]] = typer.Option(
        None, "--make-var", help="NAME=VALUE on make's command line (repeatable)."),
    config: Optional[Path] = typer.Option(None, "--config", help="Configuration file to use "
                                          "(its executor and slurm table)."),
    executor_flags: dict = None,
) -> None:
    """Build a converted tree with hipcc; map its errors back to the CUDA sources."""
    from ..build import BuildFailure, BuildOptions, build as run_build
    from ..output.build_json import render_json
    from ..output.build_markdown import render_markdown
    from ..output.build_text import render_summary
    from ..versions import parse_offload_archs

    try:
        archs = parse_offload_archs(offload_arch) if offload_arch else ("gfx90a",)
    except ValueError as err:
        typer.echo(f"error: --offload-arch: {err}", err=True)
        raise typer.Exit(2) from None
    if report_dir.exists() and not report_dir.is_dir():
        say(f"error: {report_dir} exists and is not a folder")
        raise typer.Exit(2)
    resolved = report_dir.resolve()
    if out.is_dir() and (resolved == out.resolve() or out.resolve() in resolved.parents):
        say(f"error: --report {report_dir} is inside {out}: the build never writes into the "
            "converted tree")
        raise typer.Exit(2)
    from ..workspace import Flags
    from . import workspace_of

    cluster = cluster_options(workspace_of([out], Flags(config=config)), executor_flags)
    options = BuildOptions(out=out, source=source, offload_archs=archs, build_dir=build_dir,
                           keep_build=keep_build, jobs=jobs, timeout=timeout, method=method,
                           cmake_args=tuple(cmake_arg or ()), make_vars=tuple(make_var or ()),
                           cluster=cluster, work=work_folder(cluster, report_dir, "build"))
    try:
        report = run_build(options, progress=say)
    except BuildFailure as err:
        say(f"error: {err}")
        raise typer.Exit(2) from None
    except KeyboardInterrupt:
        say("interrupted")
        raise typer.Exit(130) from None
    _write_logs(report_dir, report.logs)
    write_reports(report_dir, "build", report, render_json, render_markdown, render_summary)


def _write_logs(report_dir: Path, logs: dict[str, str]) -> None:
    """Each build's full log into the report folder (``logs/NAME.log``, named in build.json);
    a log an earlier run left there, under a name this run did not use, is removed."""
    from ..fsutil import remove_inside, write_inside

    try:
        report_dir.mkdir(parents=True, exist_ok=True)
        for rel, text in logs.items():
            write_inside(report_dir, rel, text.encode(errors="replace"), if_changed=False)
        folder = report_dir / "logs"
        if folder.is_dir() and not folder.is_symlink():
            for old in sorted(folder.glob("*.log")):
                if f"logs/{old.name}" not in logs:
                    remove_inside(report_dir, f"logs/{old.name}")
    except OSError as err:
        say(f"error: cannot write the build logs into {report_dir}: {err}")
        raise typer.Exit(2) from None
