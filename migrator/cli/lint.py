"""`rocmigrate lint`: options -> the workspace's settings -> lint() -> renderer."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer

from . import app
from .convert import Dnn
from .progress import say


class OutputFormat(str, Enum):
    text = "text"
    json = "json"
    sarif = "sarif"
    github = "github"


@app.command()
def lint(
    paths: Optional[List[Path]] = typer.Argument(None, help="Files or folders (default: .)."),
    fix: bool = typer.Option(False, "--fix", help="Apply safe fixes in place."),
    unsafe_fixes: bool = typer.Option(False, "--unsafe-fixes", help="Apply unsafe fixes too."),
    diff: bool = typer.Option(False, "--diff", help="Show the fixes as a diff; write nothing."),
    select: Optional[List[str]] = typer.Option(None, "--select", help="Codes or prefixes to run."),
    ignore: Optional[List[str]] = typer.Option(None, "--ignore", help="Codes or prefixes to skip."),
    output_format: OutputFormat = typer.Option(OutputFormat.text, "--output-format"),
    statistics: bool = typer.Option(False, "--statistics", help="Count findings per code."),
    exit_zero: bool = typer.Option(False, "--exit-zero", help="Exit 0 even with findings."),
    rocm: Optional[str] = typer.Option(None, "--rocm", help="Target ROCm version X.Y, or auto: the "
                                       "installed HIP's (the default where hipcc is found)."),
    roc: bool = typer.Option(False, "--roc", help="--fix renames cuBLAS, cuRAND, cuSPARSE, cuSOLVER "
                             "to rocBLAS, rocRAND, rocSPARSE, rocSOLVER (default: hip* libraries)."),
    dnn: Optional[Dnn] = typer.Option(None, "--dnn", help="cuDNN reported (report, the default) "
                                      "or renamed to MIOpen by --fix (miopen)."),
    offload_arch: Optional[List[str]] = typer.Option(
        None, "--offload-arch", help="AMD GPU architectures build files target (repeatable or "
        "comma-separated; as convert's)."),
    config: Optional[Path] = typer.Option(None, "--config", help="Configuration file to use."),
    rules_dir: Optional[Path] = typer.Option(None, "--rules-dir",
                                             help="A folder of your team's own rule modules."),
    jobs: int = typer.Option(0, "--jobs", "-j", help="Worker processes (0: one per CPU)."),
    clang: bool = typer.Option(False, "--clang", help="Ask libclang for the types the rules "
                               "cannot prove (as convert --clang); slower."),
    compile_commands: Optional[Path] = typer.Option(
        None, "--compile-commands", help="A compile_commands.json: libclang's include paths and "
        "defines per file (implies --clang)."),
) -> None:
    """Check HIP (and CUDA) sources and build files; exit 0 clean or all fixed, 1 findings
    remain, 2 error."""
    from ..lint import LintError, lint as run_lint
    from ..versions import format_version
    from ..workspace import Flags
    from . import workspace_of
    from .progress import reporter_for

    targets = paths or [Path(".")]
    workspace = workspace_of(targets, Flags(
        rocm=rocm, select=tuple(select or ()), ignore=tuple(ignore or ()),
        unsafe_fixes=unsafe_fixes, roc=roc, dnn=dnn.value if dnn else None, rules_dir=rules_dir,
        config=config, offload_arch=tuple(offload_arch or ()), detect_hip=True))
    settings = workspace.settings
    if clang or compile_commands:
        from ..clang.types import ClangSetupError, with_clang

        try:
            settings = with_clang(settings, workspace.root, compile_commands)
        except ClangSetupError as err:
            say(f"error: {err}")
            raise typer.Exit(2) from None
    try:
        progress = reporter_for("checking")
        try:
            result = run_lint(targets, settings, workspace.root, fix=fix, diff=diff,
                              jobs=jobs, report=progress)
        finally:
            if progress:
                progress.close()
    except LintError as err:
        say(f"error: {err}")
        raise typer.Exit(2) from None
    remaining = sorted(result.remaining, key=lambda f: (f.path, f.line, f.column, f.code))
    failures = result.failed
    # a JSON or SARIF document carries the diffs inside it (stdout stays one parseable
    # document); text and GitHub annotations print them first, as lines of their own
    diffs = result.diffs if diff else None
    # an unpinned target that followed the machine's HIP: said first, in every format
    warning = workspace.target_warning
    target = {"rocm": format_version(settings.rocm), "reason": workspace.rocm_reason,
              "warning": warning or None}
    if output_format is OutputFormat.github:
        from ..output.github import render_findings

        annotations = render_findings(remaining, failures, warning)
        if warning:  # the warning's annotation before the diffs too
            first, _, annotations = annotations.partition("\n")
            sys.stdout.write(first + "\n")
        for patch in result.diffs:
            sys.stdout.write(patch)
        sys.stdout.write(annotations)
    elif output_format is OutputFormat.json:
        from ..output.json import render_findings

        sys.stdout.write(render_findings(remaining, failures, len(result.fixed), diffs, target))
    elif output_format is OutputFormat.sarif:
        from .. import registry
        from ..output.sarif import render_findings

        sys.stdout.write(render_findings(remaining, failures,
                                         registry.all_rules(workspace.settings.rules_dir), diffs,
                                         target))
    else:
        from ..output.text import render_findings

        stream = sys.stderr if diff else sys.stdout
        for patch in result.diffs:  # stdout: the patches alone (the text goes to stderr)
            sys.stdout.write(patch)
        stream.write(render_findings(remaining, failures, len(result.fixed), statistics, warning))
        for skipped in result.skipped:
            say(f"skipped {skipped}")
    if failures:
        raise typer.Exit(2)
    raise typer.Exit(0 if exit_zero or not remaining else 1)
