"""`rocmigrate validate`: options -> ValidateOptions -> validate() -> JSON + Markdown reports."""

from __future__ import annotations

import os
import shlex
from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer

from ..toolchain.compilers import HIP_CPU_ENV
from . import app, write_reports
from .progress import say
from .cluster import cluster_options, executor_options, work_folder
from .convert import LaunchSyntax


class Variant(str, Enum):
    optimized = "optimized"
    naive = "naive"


class HipCompiler(str, Enum):
    auto = "auto"
    hipcc = "hipcc"
    nvcc = "nvcc"
    hip_cpu = "hip-cpu"


# the timing test's and the GPU check's options, the same for validate and harness
MAX_SLOWDOWN_OPTION = typer.Option(
    0.02, "--max-slowdown", min=0.0, help="Call a port slower when it is significantly more "
    "than (1 + this) x the original (docs/validate.md).")
CONFIDENCE_OPTION = typer.Option(0.999, "--confidence", min=0.5, max=0.999999,
                                 help="Confidence of the interval a timing verdict rests on.")
HIP_CPU_OPTION = typer.Option(
    None, "--hip-cpu", help="AMD's HIP CPU runtime's folder (a clone of "
    "github.com/ROCm/HIP-CPU; default: $ROCMIGRATE_HIP_CPU, then hip-cpu in the "
    "configuration).")
GPU_OPTION = typer.Option("auto", "--gpu", envvar="ROCMIGRATE_GPU",
                          help="auto (detect), none, nvidia, amd or nvidia,amd: the GPUs to take "
                          "as present; without one for a side, runs are skipped.")


@app.command()
@executor_options
def validate(
    src: Path = typer.Argument(..., help="CUDA source folder (or one program file)."),
    report_dir: Path = typer.Option(Path("rocmigrate-validate"), "-o", "--output",
                                    help="Folder for validate.json and validate.md."),
    rocm: Optional[str] = typer.Option(None, "--rocm", help="Target ROCm version X.Y."),
    launch_syntax: Optional[LaunchSyntax] = typer.Option(
        None, "--launch-syntax", help="<<<>>> (chevron, the default) or hipLaunchKernelGGL "
        "(ggl) launches."),
    variants: Optional[List[Variant]] = typer.Option(
        None, "--variant", help="optimized (normal conversion) and/or naive (--no-optimize); "
        "default both."),
    runs: int = typer.Option(10, "--runs", min=1, help="Timed runs of each binary (a timing "
                             "verdict needs 7 a side at the default confidence)."),
    warmup: int = typer.Option(1, "--warmup", min=0,
                               help="Untimed runs of each binary first (results still compared)."),
    timeout: float = typer.Option(120.0, "--timeout", min=0.001, help="Seconds per run."),
    tolerance: float = typer.Option(0.0, "--tolerance", min=0.0,
                                    help="Relative tolerance for float results."),
    max_slowdown: float = MAX_SLOWDOWN_OPTION,
    confidence: float = CONFIDENCE_OPTION,
    gpu: str = GPU_OPTION,
    hip_compiler: HipCompiler = typer.Option(HipCompiler.auto, "--hip-compiler",
                                             help="How the port is built (auto: see README; "
                                             "hip-cpu: against AMD's HIP CPU runtime, run on "
                                             "the CPU with 64-lane wavefronts)."),
    hip_cpu: Optional[Path] = HIP_CPU_OPTION,
    reference: Optional[Path] = typer.Option(
        None, "--reference", help="An earlier validate.json whose CUDA originals ran (on an "
        "NVIDIA GPU): where the original cannot run here (--hip-compiler hip-cpu without an "
        "NVIDIA GPU), the ports' results are compared with the ones it recorded."),
    cuda_arch: str = typer.Option("sm_90", "--cuda-arch", help="nvcc -arch for NVIDIA builds."),
    offload_arch: str = typer.Option("gfx90a", "--offload-arch", help="hipcc AMD target."),
    build_only: bool = typer.Option(False, "--build-only", help="Build everything, run nothing."),
    keep_build: bool = typer.Option(False, "--keep-build", help="Keep the temporary build folder."),
    programs: Optional[List[str]] = typer.Option(None, "--program",
                                                 help="Validate only this program (repeatable)."),
    program_args: Optional[List[str]] = typer.Option(
        None, "--program-args", help="NAME=ARGS: run program NAME (both sides) with these "
        "command-line arguments (shell words; repeatable): smaller problems for the CPU side."),
    build_flags: Optional[List[str]] = typer.Option(
        None, "--build-flag", help="Add a flag to every compile, both sides (repeatable; e.g. "
        "-I/opt/nccl/include, -lnccl)."),
    with_harness: bool = typer.Option(
        False, "--harness", help="Also test every kernel with a generated harness (rocmigrate "
        "harness) into REPORT_DIR/harness: one report, the exit status covers both."),
    config: Optional[Path] = typer.Option(None, "--config", help="Configuration file to use."),
    rules_dir: Optional[Path] = typer.Option(None, "--rules-dir",
                                             help="A folder of your team's own rule modules."),
    executor_flags: dict = None,
) -> None:
    """Build the CUDA original and the HIP port, run both, compare results and timings."""
    from ..validate.run import ValidateError, ValidateOptions, validate as run_validation
    from ..output.validate_harness import render_json, render_markdown, render_summary
    from ..workspace import Flags
    from . import workspace_of

    workspace = workspace_of([src], Flags(
        rocm=rocm, launch_syntax=launch_syntax.value if launch_syntax else None,
        rules_dir=rules_dir, config=config))
    settings = workspace.settings
    cluster = cluster_options(workspace, executor_flags)
    try:
        given = tuple(_program_args(text) for text in program_args or ())
    except ValueError as err:
        say(f"error: --program-args: {err}")
        raise typer.Exit(2) from None
    options = ValidateOptions(
        source=src, variants=tuple(v.value for v in variants or list(Variant)),
        programs=tuple(programs or ()), settings=settings,
        runs=runs, warmup=warmup, timeout=timeout, tolerance=tolerance,
        max_slowdown=max_slowdown, confidence=confidence, gpu=gpu,
        hip_compiler=hip_compiler.value, cuda_arch=cuda_arch, offload_arch=offload_arch,
        hip_cpu=hip_cpu_folder(hip_cpu, settings),
        reference=reference, program_args=given, build_only=build_only, keep_build=keep_build,
        build_flags=tuple(build_flags or ()), cluster=cluster,
        work=work_folder(cluster, report_dir, "validate"))
    if report_dir.exists() and not report_dir.is_dir():
        say(f"error: {report_dir} exists and is not a folder")
        raise typer.Exit(2)
    try:
        report = run_validation(options, progress=say)
    except ValidateError as err:
        say(f"error: {err}")
        raise typer.Exit(2) from None
    except KeyboardInterrupt:
        say("interrupted")
        raise typer.Exit(130) from None
    if with_harness:
        report.harness = _kernel_harnesses(options, report_dir / "harness", say)
    write_reports(report_dir, "validate", report, render_json, render_markdown, render_summary)


def hip_cpu_folder(option: Optional[Path], settings) -> Optional[str]:
    """HIP's CPU runtime's folder: the option, else (None) $ROCMIGRATE_HIP_CPU where set, else
    the configuration's hip-cpu."""
    if option:
        return str(option)
    return None if os.environ.get(HIP_CPU_ENV) or settings.hip_cpu is None \
        else str(settings.hip_cpu)


def _program_args(text: str) -> tuple[str, tuple[str, ...]]:
    """NAME=ARGS as (name, the shell words of ARGS); ValueError for anything else."""
    name, equals, arguments = text.partition("=")
    if not equals or not name.strip():
        raise ValueError(f"{text!r} is not NAME=ARGS")
    return name.strip(), tuple(shlex.split(arguments))


def _kernel_harnesses(options, output: Path, say):
    """validate --harness: every kernel of the source through `rocmigrate harness`, with
    validate's runs, warm-up, timing test, GPU setting, compilers (HIP's CPU runtime too),
    flags and executor (Slurm: one job per kernel file); its own harness.json and harness.md in ``output`` too (for ``python -m
    migrator.harness``). With validate's --reference, the harness output beside that
    validate.json (its REPORT_DIR/harness, where it has one) is the harness's reference."""
    from ..fsutil import atomic_write
    from ..harness import HarnessError, HarnessOptions, harness as run_harness
    from ..output.harness_json import render_json
    from ..output.harness_markdown import render_markdown

    say(f"kernel harnesses into {output}")
    try:
        report = run_harness(HarnessOptions(
            source=options.source, output=output, build_only=options.build_only,
            runs=options.runs, warmup=options.warmup, timeout=options.timeout,
            max_slowdown=options.max_slowdown, confidence=options.confidence, gpu=options.gpu,
            hip_compiler=options.hip_compiler, hip_cpu=options.hip_cpu,
            reference=_harness_reference(options.reference), cuda_arch=options.cuda_arch,
            offload_arch=options.offload_arch, build_flags=options.build_flags,
            settings=options.settings, jobs=options.jobs, cluster=options.cluster,
            work=work_folder(options.cluster, output, "harness")), progress=say)
    except HarnessError as err:
        say(f"error: --harness: {err}")
        raise typer.Exit(2) from None
    except KeyboardInterrupt:
        say("interrupted")
        raise typer.Exit(130) from None
    atomic_write(output / "harness.json", render_json(report).encode())
    atomic_write(output / "harness.md", render_markdown(report).encode())
    return report


def _harness_reference(validate_json: Optional[Path]) -> Optional[Path]:
    """The harness output an earlier `validate --harness` wrote beside ``validate_json``."""
    if validate_json is None:
        return None
    folder = validate_json.parent / "harness"
    return folder if (folder / "harness.json").is_file() else None
