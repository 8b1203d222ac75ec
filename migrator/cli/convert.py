"""`rocmigrate convert`: options -> the workspace's settings -> run() -> renderer, exit code."""

from __future__ import annotations

import os
import sys
from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer

from . import app


class LaunchSyntax(str, Enum):
    chevron = "chevron"
    ggl = "ggl"


class Runtime(str, Enum):
    rocm = "rocm"
    hip_cpu = "hip-cpu"


class Dnn(str, Enum):
    report = "report"
    miopen = "miopen"


class Format(str, Enum):
    text = "text"
    json = "json"


@app.command()
def convert(
    src: Path = typer.Argument(..., help="CUDA source file or folder to convert."),
    output: Optional[str] = typer.Option(None, "-o", "--output", help="Output file or folder; "
                                         "- for standard output (one file; ./- names a file)."),
    in_place: bool = typer.Option(False, "--in-place", help="Rewrite the sources themselves."),
    rocm: str = typer.Option(None, "--rocm", help="Target ROCm version X.Y, or auto: the installed "
                             "HIP's (the default where hipcc is found; else 6.4)."),
    launch_syntax: Optional[LaunchSyntax] = typer.Option(
        None, "--launch-syntax", help="Kernel launches as <<<>>> (chevron, the default) or "
        "hipLaunchKernelGGL (ggl)."),
    runtime: Optional[Runtime] = typer.Option(
        None, "--runtime", help="What runs the port: rocm (an AMD GPU, the default) or hip-cpu "
        "(AMD's HIP CPU runtime, 64-lane wavefronts on any CPU: ROCm 5.2's API, "
        "hipLaunchKernelGGL launches, dynamic shared memory as HIP_DYNAMIC_SHARED)."),
    rename_ext: bool = typer.Option(False, "--rename-ext", help="Write .cu files as .hip."),
    roc: bool = typer.Option(False, "--roc", help="cuBLAS, cuRAND, cuSPARSE, cuSOLVER -> rocBLAS, "
                             "rocRAND, rocSPARSE, rocSOLVER (default: the hip* libraries)."),
    dnn: Optional[Dnn] = typer.Option(None, "--dnn", help="cuDNN reported, left as it is (report, "
                                      "the default) or renamed to MIOpen (miopen)."),
    offload_arch: Optional[List[str]] = typer.Option(
        None, "--offload-arch", help="AMD GPU architectures the converted build files target "
        "(repeatable or comma-separated; default gfx90a,gfx942: MI250 and MI300; gfx90a alone "
        "for a target before ROCm 6.0)."),
    no_optimize: bool = typer.Option(False, "--no-optimize",
                                     help="A pure port: no AMD optimisation rewrites."),
    unsafe_fixes: bool = typer.Option(False, "--unsafe-fixes", help="Apply the unsafe fixes "
                                      "(rewrites that need a person's review: `rocmigrate rule "
                                      "CODE`, Fix safety) instead of writing their markers."),
    diff: bool = typer.Option(False, "--diff", help="Print a unified diff of every change."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Write nothing."),
    jobs: int = typer.Option(0, "--jobs", "-j", help="Worker processes (0: one per CPU)."),
    fmt: Format = typer.Option(Format.text, "--format", help="Summary format."),
    force: bool = typer.Option(False, "--force", help="--in-place even with uncommitted changes; "
                               "-o even when it names the source file."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="List every location."),
    select: Optional[List[str]] = typer.Option(None, "--select", help="Codes or prefixes to run."),
    ignore: Optional[List[str]] = typer.Option(None, "--ignore", help="Codes or prefixes to skip."),
    config: Optional[Path] = typer.Option(None, "--config", help="Configuration file to use."),
    rules_dir: Optional[Path] = typer.Option(None, "--rules-dir",
                                             help="A folder of your team's own rule modules."),
    clang: bool = typer.Option(False, "--clang", help="Ask libclang for the types the rules "
                               "cannot prove (the pointer of a 16-bit atomic, a template's tile "
                               "sizes); slower."),
    compile_commands: Optional[Path] = typer.Option(
        None, "--compile-commands", help="A compile_commands.json: libclang's include paths and "
        "defines per file (implies --clang)."),
) -> None:
    """Convert a CUDA project (or one file) to HIP."""
    from ..runner import ConvertError, RunOptions, convert_file, run
    from ..summary import file_records, summarize
    from ..versions import format_version
    from ..workspace import Flags
    from . import workspace_of
    from .progress import reporter_for, say

    workspace = workspace_of([src], Flags(
        rocm=rocm, select=tuple(select or ()), ignore=tuple(ignore or ()),
        launch_syntax=launch_syntax.value if launch_syntax else None, rename_ext=rename_ext,
        runtime=runtime.value if runtime else None, unsafe_fixes=unsafe_fixes, no_optimize=no_optimize, roc=roc, dnn=dnn.value if dnn else None, rules_dir=rules_dir,
        config=config, offload_arch=tuple(offload_arch or ()), detect_hip=True))
    settings = workspace.settings
    if clang or compile_commands:
        from ..clang.types import ClangSetupError, with_clang

        try:
            settings = with_clang(settings, src if src.is_dir() else src.parent,
                                  compile_commands)
        except ClangSetupError as err:
            say(f"error: {err}")
            raise typer.Exit(2) from None
    to_stdout = output == "-"
    if to_stdout and (problem := _stdout_problem(src, diff)):
        say(f"error: {problem}")
        raise typer.Exit(2)
    captured = _Captured() if to_stdout else None
    options = RunOptions(source=src, output=Path(output) if output is not None else None,
                         in_place=in_place, dry_run=dry_run or to_stdout, diff=diff, jobs=jobs,
                         force=force, findings_wanted=fmt is Format.json)
    progress = reporter_for("converting")
    try:
        result = run(options, settings, report=progress, processor=captured or convert_file)
    except ConvertError as err:
        say(f"error: {err}")
        raise typer.Exit(2) from None
    finally:
        if progress:
            progress.close()
    summary = summarize(result)
    report_to = sys.stdout
    if captured is not None:  # the converted file on stdout, the summary on stderr
        if not dry_run and not result.failed:
            sys.stdout.flush()
            sys.stdout.buffer.write(captured.output)
            sys.stdout.flush()
        report_to = sys.stderr
    if fmt is Format.json:  # diffs travel inside the JSON document
        from ..output.json import render_report

        report_to.write(render_report(summary, file_records(result), {
            "rocm": format_version(settings.rocm), "rocm_reason": workspace.rocm_reason,
            "launch_syntax": settings.launch_syntax, "rename_ext": settings.rename_ext,
            "runtime": settings.runtime,
            "optimize": settings.optimize, "offload_archs": list(settings.offload_archs),
            "dry_run": dry_run}, result.diffs if diff else None))
    else:
        from ..output.text import render_summary

        for patch in result.diffs:
            sys.stdout.write(patch)
        (sys.stderr if diff else report_to).write(
            render_summary(summary, verbose) + f"target: {workspace.rocm_reason}\n")
    if captured is not None and captured.support and not result.failed:
        sys.stderr.write(f"note: the output includes {', '.join(captured.support)}, which -o - "
                         "does not write: convert into a folder (-o DIR) to get it\n")
    raise typer.Exit(1 if result.failed else 0)


def _stdout_problem(src: Path, diff: bool) -> str | None:
    """Why ``-o -`` (the converted file on standard output) cannot be, or None."""
    if os.path.isdir(src):
        return (f"-o - prints one converted file, and {src} is a folder: give an output "
                "folder (-o DIR)")
    if diff:
        return "-o - prints the converted file on standard output: --diff cannot share it"
    return None


class _Captured:
    """The conversion of one file, keeping its output (and the support headers it needs) for
    ``-o -``: the run itself writes nothing."""

    def __init__(self) -> None:
        self.output = b""
        self.support: tuple[str, ...] = ()

    def __call__(self, rel: str, data: bytes, settings):
        from ..runner import convert_file

        result = convert_file(rel, data, settings)
        self.output, self.support = result.output or b"", tuple(result.support)
        return result
