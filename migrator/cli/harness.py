"""`rocmigrate harness`: options -> HarnessOptions -> harness() -> JSON + Markdown reports."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from . import app, write_reports
from .cluster import cluster_options, executor_options, work_folder
from .progress import say
from .validate import (CONFIDENCE_OPTION, GPU_OPTION, HIP_CPU_OPTION, MAX_SLOWDOWN_OPTION,
                       HipCompiler, hip_cpu_folder)


@app.command()
@executor_options
def harness(
    src: Path = typer.Argument(..., help="CUDA source folder (or one file) whose kernels to test."),
    output: Path = typer.Option(..., "-o", "--output", help="Folder for the specs, harnesses, "
                                "converted tree, builds and harness.json / harness.md."),
    kernels: Optional[List[str]] = typer.Option(None, "--kernel", help="Only this kernel "
                                                "(plain or qualified name; repeatable)."),
    force: bool = typer.Option(False, "--force", help="Write the default specs over specs "
                               "edited by hand (kept otherwise)."),
    build_only: bool = typer.Option(False, "--build-only", help="Build everything, run nothing."),
    runs: int = typer.Option(10, "--runs", min=1, help="Timed runs of each side, interleaved "
                             "(a timing verdict needs 7 a side at the default confidence)."),
    warmup: int = typer.Option(1, "--warmup", min=0, help="Untimed rounds first (outputs "
                               "still compared)."),
    max_slowdown: float = MAX_SLOWDOWN_OPTION,
    confidence: float = CONFIDENCE_OPTION,
    gpu: str = GPU_OPTION,
    timeout: float = typer.Option(120.0, "--timeout", min=0.001, help="Seconds per run."),
    hip_compiler: HipCompiler = typer.Option(HipCompiler.auto, "--hip-compiler",
                                             help="How the port is built (as for validate; "
                                             "hip-cpu: converted for AMD's HIP CPU runtime, "
                                             "run on the CPU with 64-lane wavefronts)."),
    hip_cpu: Optional[Path] = HIP_CPU_OPTION,
    reference: Optional[Path] = typer.Option(
        None, "--reference", help="An earlier harness output folder whose CUDA side ran (on an "
        "NVIDIA GPU): where the CUDA side cannot run here (--hip-compiler hip-cpu without an "
        "NVIDIA GPU), the HIP outputs are compared with the ones it recorded."),
    cuda_arch: str = typer.Option("sm_90", "--cuda-arch", help="nvcc -arch for NVIDIA builds."),
    offload_arch: str = typer.Option("gfx90a", "--offload-arch", help="hipcc AMD target."),
    include: Optional[List[Path]] = typer.Option(None, "-I", "--include", help="An include "
                                                 "folder, for reading and building (repeatable)."),
    build_flags: Optional[List[str]] = typer.Option(
        None, "--build-flag", help="Add a flag to every compile, both sides (repeatable; e.g. "
        "--build-flag=--expt-relaxed-constexpr, -DUSE_FLOAT)."),
    compile_commands: Optional[Path] = typer.Option(
        None, "--compile-commands", help="A compile_commands.json: each file's include folders, "
        "defines and standard read its kernels and build its harnesses."),
    rocm: Optional[str] = typer.Option(None, "--rocm", help="Target ROCm version X.Y of the "
                                       "conversion, or auto: the installed HIP's (the default "
                                       "where hipcc is found; else 6.4)."),
    jobs: int = typer.Option(0, "--jobs", "-j", min=0, help="Parallel compiles (0: one per CPU)."),
    config: Optional[Path] = typer.Option(None, "--config", help="Configuration file to use."),
    rules_dir: Optional[Path] = typer.Option(None, "--rules-dir", help="A folder of your "
                                             "team's own rule modules (for the conversion)."),
    executor_flags: dict = None,
) -> None:
    """Generate a harness per kernel, build it on the CUDA original and on the HIP port, run
    both and compare their outputs and timings."""
    from ..harness import HarnessError, HarnessOptions, harness as run_harness
    from ..output.harness_json import render_json
    from ..output.harness_markdown import render_markdown
    from ..output.harness_text import render_summary
    from ..workspace import Flags
    from . import workspace_of

    # the port may be built with the installed hipcc: without --rocm, convert for its HIP
    workspace = workspace_of([src], Flags(rocm=rocm, config=config, rules_dir=rules_dir,
                                          detect_hip=True))
    settings = workspace.settings
    cluster = cluster_options(workspace, executor_flags)
    options = HarnessOptions(
        source=src, output=output, kernels=tuple(kernels or ()), force=force,
        build_only=build_only, runs=runs, warmup=warmup, timeout=timeout,
        max_slowdown=max_slowdown, confidence=confidence, gpu=gpu,
        hip_compiler=hip_compiler.value, hip_cpu=hip_cpu_folder(hip_cpu, settings),
        reference=reference, cuda_arch=cuda_arch, offload_arch=offload_arch,
        include_paths=tuple(include or ()),
        compile_commands=compile_commands, build_flags=tuple(build_flags or ()),
        settings=settings, jobs=jobs, cluster=cluster,
        work=work_folder(cluster, output, "harness"))
    try:
        report = run_harness(options, progress=say)
    except HarnessError as err:
        say(f"error: {err}")
        raise typer.Exit(2) from None
    except KeyboardInterrupt:
        say("interrupted")
        raise typer.Exit(130) from None
    write_reports(output, "harness", report, render_json, render_markdown, render_summary)
