"""Convert, build, run and judge: the library behind `rocmigrate validate`.

Each variant (``optimized``: the normal conversion; ``naive``: a pure port without the AMD
optimisation rules) converts the whole source tree into a temporary folder, so local headers
come along. The CUDA originals and every port are built in parallel; binaries run one at a time
(timings must not share the machine), the original and its ports interleaved run by run, the
warm-up round included, in an order that rotates from round to round (no side always runs
first). Whether each side can run here (a GPU of its platform, ``devices``) is known before
anything is built: without one everything is still built, and every run is reported skipped.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from ..cluster import ClusterOptions
from ..cluster.gpus import gpu_check_for
from ..fsutil import read_regular
from ..settings import Settings
from ..toolchain.compilers import find_nvcc, missing_names
from ..toolchain.devices import GPU_ENV, GpuCheck, gpu_setting
from ..toolchain.process import run_process
from ..toolchain.sides import (NO_NVCC, TAIL, Build, Toolchain, ToolchainError, compile_binary,
                               cuda_description, cuda_toolchain, hip_toolchain)
from ..toolchain.timing import CONFIDENCE, TimingComparison, runs_needed
from ..versions import format_version
from ..workspace.includes import local_includes
from .compare import (DerivedFigure, ResultComparison, Run, compare_results, compare_timings,
                      derived_figures, median)
from .programs import Program, arguments_for, find_programs, select_programs

VARIANTS = ("optimized", "naive")  # report order


class ValidateError(Exception):
    """A usage problem with the whole run (missing source or compiler, unknown program...)."""


@dataclass(frozen=True)
class ValidateOptions:
    source: Path
    variants: tuple[str, ...] = VARIANTS
    programs: tuple[str, ...] = ()  # names to validate; empty: all
    settings: Settings = Settings()  # the workspace's: target, launch syntax, rules...
    runs: int = 10  # timed runs of each binary (a timing verdict needs 7 a side at 99.9%)
    warmup: int = 1  # untimed runs of each binary first (their results are compared)
    timeout: float = 120.0  # seconds per run
    tolerance: float = 0.0  # relative, for float results
    max_slowdown: float = 0.02  # "slower": significantly more than 1 + this times the original
    confidence: float = CONFIDENCE  # of the interval a timing verdict rests on
    gpu: str | None = None  # auto | none | nvidia | amd | nvidia,amd (None: $ROCMIGRATE_GPU)
    hip_compiler: str = "auto"  # auto | hipcc | nvcc | hip-cpu
    hip_cpu: str | None = None  # HIP's CPU runtime's folder (None: $ROCMIGRATE_HIP_CPU)
    # an earlier validate.json whose CUDA originals ran (on an NVIDIA GPU): where the original
    # cannot run here, the ports' results are compared with the ones it recorded
    reference: Path | None = None
    # (program name, its command-line arguments) for both sides' runs: smaller problems where
    # the CPU runs every GPU thread as a fibre
    program_args: tuple[tuple[str, tuple[str, ...]], ...] = ()
    cuda_arch: str = "sm_90"
    offload_arch: str = "gfx90a"
    build_only: bool = False
    keep_build: bool = False
    jobs: int = 0  # parallel compiles and conversions (0: one per CPU)
    build_flags: tuple[str, ...] = ()  # added to every compile (both sides): -I, -L, -l...
    # where the programs are built and run: here, or one Slurm job each (validate.cluster)
    cluster: ClusterOptions = ClusterOptions()
    # the Slurm jobs' work folder (records, converted trees, builds): every node must see it
    work: Path | None = None

    def as_dict(self) -> dict:
        converted = self.conversion_settings
        return {"source": str(self.source), "variants": list(self.variants),
                "programs": list(self.programs), "rocm": format_version(converted.rocm),
                "launch_syntax": converted.launch_syntax, "runs": self.runs,
                "warmup": self.warmup, "timeout": self.timeout, "tolerance": self.tolerance,
                "max_slowdown": self.max_slowdown, "confidence": self.confidence,
                "hip_compiler": self.hip_compiler, "hip_cpu": self.hip_cpu,
                "runtime": converted.runtime, "cuda_arch": self.cuda_arch,
                "offload_arch": self.offload_arch, "build_only": self.build_only,
                "keep_build": self.keep_build, "build_flags": list(self.build_flags),
                "reference": str(self.reference) if self.reference else None,
                "program_args": {name: list(args) for name, args in self.program_args},
                "executor": self.cluster.as_dict() if self.cluster.slurm else {"executor": "local"},
                "work": str(self.work) if self.cluster.slurm and self.work else None}

    @property
    def conversion_settings(self) -> Settings:
        """The settings the ports are converted with: the workspace's, for the runtime that
        runs them (HIP's CPU runtime with --hip-compiler hip-cpu)."""
        if self.hip_compiler == "hip-cpu":
            return self.settings.for_runtime("hip-cpu")
        return self.settings


@dataclass
class Original:
    build: Build
    runs: list[Run] = field(default_factory=list)  # the timed runs
    warmups: list[Run] = field(default_factory=list)
    # where its runs were recorded, when they come from an earlier report (--reference)
    recorded: str | None = None


@dataclass
class VariantOutcome:
    conversion_errors: list[dict]  # {"path", "message"} for this program's files
    build: Build | None  # None: not built (its conversion failed)
    runs: list[Run] = field(default_factory=list)
    results: list[ResultComparison] = field(default_factory=list)
    timings: list[TimingComparison] = field(default_factory=list)
    derived: list[DerivedFigure] = field(default_factory=list)
    verdict: str = "failed"  # pass | slower | mismatch | failed | built | skipped
    problems: list[str] = field(default_factory=list)
    warmups: list[Run] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # timings that are noise or undecided


@dataclass
class VariantRatio:
    """A timing of the two variants side by side."""

    key: str
    naive_ms: float | None
    optimized_ms: float | None
    ratio: float | None  # optimized / naive
    interval: tuple[float, float] | None = None  # of optimized / naive, as a port's timings'
    p_value: float | None = None


@dataclass
class ProgramOutcome:
    name: str
    source: str
    original: Original
    variants: dict[str, VariantOutcome]
    naive_vs_optimized: list[VariantRatio] = field(default_factory=list)
    arguments: list[str] = field(default_factory=list)  # what each run of both sides was given
    # the optimized port's results against the naive port's (a pure port: what every
    # optimisation rule must keep), where both ran
    variants_agree: list[ResultComparison] = field(default_factory=list)
    job: dict | None = None  # its Slurm job (cluster.JobOutcome.as_dict()); None: built here
    not_run: str | None = None  # why its job ran nothing: its node lacked a GPU a side needs


@dataclass
class Conversion:
    files: int
    failed: list[dict]  # {"path", "message"}


@dataclass
class ValidationReport:
    settings: dict
    toolchains: dict[str, dict]
    conversions: dict[str, Conversion]
    programs: list[ProgramOutcome]
    build_dir: str | None  # kept build folder (--keep-build)
    gpus: dict[str, dict] = field(default_factory=dict)  # side -> devices.GpuCheck.as_dict()
    not_run: str | None = None  # why nothing was run (no GPU to run a side on)
    # why the CUDA original was not run while the ports were (HIP's CPU runtime without an
    # NVIDIA GPU or nvcc): the ports are judged by their self-checks and against each other
    original_not_run: str | None = None
    # validate --harness: the kernel harnesses' report (a migrator.harness HarnessReport)
    harness: object | None = None

    def verdicts(self) -> Counter:
        return Counter(outcome.verdict for program in self.programs
                       for outcome in program.variants.values())

    @property
    def ok(self) -> bool:
        """Every program passed (or was only built or skipped), and so did every kernel
        harness with --harness."""
        return all(verdict in ("pass", "built", "skipped") for verdict in self.verdicts()) \
            and (self.harness is None or self.harness.ok)


Progress = Callable[[str], None]


def validate(options: ValidateOptions, progress: Progress | None = None) -> ValidationReport:
    """Validate every selected program of ``options.source``; raises ValidateError for usage
    problems, reports everything else (conversion, build and run failures) per program."""
    say = progress or (lambda message: None)
    if not options.source.exists():
        raise ValidateError(f"{options.source} does not exist")
    unknown = [v for v in options.variants if v not in VARIANTS]
    if unknown or not options.variants:
        raise ValidateError(f"variants must be among {', '.join(VARIANTS)}")
    if options.runs < 1 or options.warmup < 0 or options.timeout <= 0:
        raise ValidateError("runs must be at least 1, warm-up runs at least 0 and the time limit "
                            "above 0 s")
    if not 0 < options.confidence < 1:
        raise ValidateError("the confidence must lie between 0 and 1")
    try:
        gpu_setting(options.gpu)
    except ValueError as err:
        raise ValidateError(str(err)) from None
    source = options.source.resolve()
    root, found = find_programs(source)
    try:
        programs = select_programs(found, options.programs)
    except ValueError as err:
        raise ValidateError(str(err)) from None
    if not programs:
        raise ValidateError(f"no program under {options.source} (a .cu, .cpp or .hip file with "
                            "int main()")
    nvcc = find_nvcc()
    if nvcc is None and options.hip_compiler != "hip-cpu":
        raise ValidateError("nvcc not found: put CUDA's bin folder on PATH or set CUDA_HOME "
                            "(--hip-compiler hip-cpu builds and runs the ports without it)")
    variants = tuple(v for v in VARIANTS if v in options.variants)
    recorded = read_reference(options.reference) if options.reference else {}
    scratch = _scratch(options)
    try:
        try:
            cuda = cuda_toolchain(nvcc, options.cuda_arch) if nvcc else None
            hip = hip_toolchain(options.hip_compiler, nvcc, options.cuda_arch,
                                options.offload_arch, scratch, options.build_flags,
                                options.hip_cpu)
        except ToolchainError as err:
            raise ValidateError(str(err)) from None
        say(f"port built with {hip.name}: {hip.reason}")
        checks = {platform: gpu_check_for(platform, options.gpu, options.cluster)
                  for platform in dict.fromkeys(("nvidia", hip.runs_on))}
        gpus = {"cuda": checks["nvidia"], "hip": checks[hip.runs_on]}
        if cuda is None:
            gpus["cuda"] = GpuCheck("nvidia", False, NO_NVCC)
        absent = list(dict.fromkeys(check.reason for check in gpus.values() if not check.present))
        original_not_run = None
        if hip.runs_on == "cpu" and not gpus["cuda"].present and not options.build_only:
            original_not_run, absent = gpus["cuda"].reason, []
            judged = (f"compared with its results recorded in {options.reference}"
                      if options.reference else "judged by their self-checks")
            say(f"the CUDA original is not run ({original_not_run}): the ports are {judged} "
                "and against each other")
        not_run = "; ".join(absent) if absent and not options.build_only else None
        if not_run:
            say(f"{not_run}: everything is built, nothing is run (every run is reported "
                f"skipped; --gpu or {GPU_ENV} overrides the detection)")
        elif not options.build_only:
            needed = runs_needed(options.confidence)
            if options.runs < needed:
                say(f"{options.runs} runs per binary: too few for a timing verdict at "
                    f"{options.confidence:.1%} (at least {needed}); a timing beyond "
                    "--max-slowdown is reported undecided")
        trees: dict[str, Path] = {}
        conversions: dict[str, Conversion] = {}
        for variant in variants:
            say(f"converting {options.source} ({variant})")
            trees[variant], conversions[variant] = _convert(source, scratch / variant,
                                                            variant, options)
        if options.cluster.slurm:
            outcomes = _on_cluster(programs, root, trees, conversions, cuda, hip, scratch,
                                   options, say, run=not options.build_only and not not_run,
                                   run_original=original_not_run is None)
        else:
            outcomes = _build(programs, root, trees, conversions, cuda, hip, scratch, options,
                              say)
        if not options.build_only and not not_run and not options.cluster.slurm:
            for program, outcome in zip(programs, outcomes):
                say(f"running {program.name} ({options.warmup} warm-up and {options.runs} "
                    "timed runs per binary)")
                _run_program(program, outcome, root, trees, scratch, options,
                             run_original=original_not_run is None)
        for outcome in outcomes:
            if original_not_run is not None and outcome.name in recorded:
                outcome.original.warmups, outcome.original.runs = recorded[outcome.name]
                outcome.original.recorded = str(options.reference)
            _judge(outcome, options, not_run or outcome.not_run, original_not_run)
        return ValidationReport(options.as_dict(),
                                {"cuda": cuda_description(cuda), "hip": hip.describe()},
                                conversions, outcomes,
                                str(scratch) if options.keep_build else None,
                                {side: check.as_dict() for side, check in gpus.items()}, not_run,
                                original_not_run)
    finally:
        if not options.keep_build:
            shutil.rmtree(scratch, ignore_errors=True)


def _scratch(options: ValidateOptions) -> Path:
    """The folder of the conversions and builds: a temporary one; with Slurm, one inside the
    work folder, which every node sees."""
    if options.cluster.slurm:
        from ..cluster.work import prepare

        try:
            return prepare(options.work, "scratch") / "scratch"
        except OSError as err:
            raise ValidateError(f"cannot use the work folder {options.work}: {err}") from None
    return Path(tempfile.mkdtemp(prefix="rocmigrate-validate-"))


def _on_cluster(programs: list[Program], root: Path, trees: dict[str, Path],
                conversions: dict[str, Conversion], cuda: Toolchain | None, hip: Toolchain,
                scratch: Path, options: ValidateOptions, say: Progress, run: bool,
                run_original: bool) -> list[ProgramOutcome]:
    """Build (and with ``run``, run) every program as a Slurm job of its own."""
    from ..cluster import run_jobs
    from .cluster import outcomes_from, program_jobs

    plan, errors = build_plan(programs, root, trees, conversions, cuda, hip)
    gpu_sides = {side: platform for side, platform in (("cuda", "nvidia"), ("hip", hip.runs_on))
                 if platform != "cpu"}
    jobs = program_jobs(programs, plan, root, trees, scratch, options, run, run_original,
                        gpu_sides)
    say(f"{len(jobs)} programs to build{' and run' if run else ''} as Slurm jobs (work folder "
        f"{options.work})")
    done = run_jobs(jobs, options.cluster, options.work, "validate", say, error=ValidateError)
    return outcomes_from(programs, jobs, done, errors, trees)


def _convert(source: Path, folder: Path, variant: str,
             options: ValidateOptions) -> tuple[Path, Conversion]:
    """Convert the source (a tree, or one file) into ``folder/src``: (that root, the outcome);
    failed paths are relative to the program root, as the runner's are."""
    from ..runner import ConvertError, RunOptions, run

    settings = replace(options.conversion_settings, optimize=variant == "optimized")
    tree = folder / "src"
    output = tree / source.name if source.is_file() else tree
    try:
        result = run(RunOptions(source=source, output=output, jobs=options.jobs), settings)
    except ConvertError as err:
        return tree, Conversion(0, [{"path": ".", "message": str(err)}])
    failed = [{"path": r.rel, "message": r.message} for r in result.results
              if r.status == "failed"]
    return tree, Conversion(len(result.results), failed)


REFERENCE_LIMIT = 64 * 1024 * 1024  # the most of a reference report read


def read_reference(path: Path) -> dict[str, tuple[list[Run], list[Run]]]:
    """The CUDA originals' runs (warm-ups, timed runs) an earlier validate.json recorded, by
    program: those of originals that were built and ran. Raises ValidateError for a file that
    is not such a report (read within bounds: it is untrusted input)."""
    try:
        document = json.loads(read_regular(path, REFERENCE_LIMIT))
    except (OSError, ValueError) as err:
        raise ValidateError(f"--reference {path}: not a readable validate.json ({err})") from None
    if not isinstance(document, dict) or document.get("tool") != "rocmigrate" or \
            not isinstance(document.get("programs"), list):
        raise ValidateError(f"--reference {path}: not a rocmigrate validate report")
    programs = document["programs"]
    recorded = {}
    for program in programs:
        try:
            original = program["original"]
            runs = ([_recorded_run(run, True) for run in original.get("warmups", [])],
                    [_recorded_run(run, False) for run in original.get("runs", [])])
            name = program["name"]
        except (KeyError, TypeError, AttributeError) as err:
            raise ValidateError(f"--reference {path}: a program entry is not as validate "
                                f"writes it ({err!r})") from None
        if isinstance(name, str) and (runs[0] or runs[1]):
            recorded[name] = runs
    return recorded


def _recorded_run(run: dict, warmup: bool) -> Run:
    return Run(run.get("rc"), float(run.get("seconds", 0.0)), bool(run.get("timed_out")),
               run.get("status"), run.get("json"), run.get("stdout"),
               str(run.get("stderr_tail", "")), warmup)


def _binary(scratch: Path, side: str, program: Program) -> Path:
    return scratch / side / "bin" / program.name.replace("/", "__")


Plan = list[tuple[Program, str, Toolchain, Path]]  # (program, side, toolchain, tree) to build


def build_plan(programs: list[Program], root: Path, trees: dict[str, Path],
               conversions: dict[str, Conversion], cuda: Toolchain | None,
               hip: Toolchain) -> tuple[Plan, dict[tuple[str, str], list[dict]]]:
    """What to build: the original of each program (not without nvcc: ``cuda`` None) and each
    port, unless a file of its program (the program file or a local header it includes) failed
    to convert; with those failures, by (program name, variant)."""
    plan: Plan = []
    errors: dict[tuple[str, str], list[dict]] = {}
    for program in programs:
        if cuda is not None:
            plan.append((program, "cuda", cuda, root))
        files = local_includes(root, program.rel)
        for variant, tree in trees.items():
            errors[program.name, variant] = [failure for failure in conversions[variant].failed
                                             if failure["path"] in files or failure["path"] == "."]
            if not errors[program.name, variant]:
                plan.append((program, variant, hip, tree))
    return plan, errors


def build_side(program: Program, side: str, toolchain: Toolchain, tree: Path, scratch: Path,
               build_flags: tuple[str, ...]) -> Build:
    """Build one side (the original, or a variant's port) of ``program`` into ``scratch``."""
    source = tree / program.rel
    return compile_binary(toolchain, source, _binary(scratch, side, program), (source.parent,),
                          build_flags)


def program_outcomes(programs: list[Program], builds: dict[tuple[str, str], Build],
                     errors: dict[tuple[str, str], list[dict]],
                     variants) -> list[ProgramOutcome]:
    """Each program's outcome so far: its builds (by program name and side) and its ports'
    conversion errors."""
    unbuilt = Build("nvcc", "", False, 0.0, NO_NVCC)
    return [ProgramOutcome(program.name, program.rel,
                           Original(builds.get((program.name, "cuda"), unbuilt)),
                           {variant: VariantOutcome(errors[program.name, variant],
                                                    builds.get((program.name, variant)))
                            for variant in variants})
            for program in programs]


def _build(programs: list[Program], root: Path, trees: dict[str, Path],
           conversions: dict[str, Conversion], cuda: Toolchain | None, hip: Toolchain,
           scratch: Path, options: ValidateOptions, say: Progress) -> list[ProgramOutcome]:
    """Build every original and port (``build_plan``) in parallel."""
    from ..pool import worker_count

    plan, errors = build_plan(programs, root, trees, conversions, cuda, hip)
    say(f"building {len(plan)} binaries (CUDA with {cuda.name if cuda else 'nothing: no nvcc'}, "
        f"HIP with {hip.name})")
    with ThreadPoolExecutor(max_workers=worker_count(options.jobs)) as pool:
        built = pool.map(lambda job: build_side(*job, scratch, options.build_flags), plan)
        builds = {(program.name, side): build for (program, side, *_), build in zip(plan, built)}
    return program_outcomes(programs, builds, errors, trees)


def _run_program(program: Program, outcome: ProgramOutcome, root: Path, trees: dict[str, Path],
                 scratch: Path, options: ValidateOptions, run_original: bool = True) -> None:
    """Run the original and every built port ``options.warmup`` then ``options.runs`` times,
    each in its own tree's copy of the program's folder (so relative data files are found).
    The sides take turns run by run, and the order rotates every round (original first, then
    a port first...), so that neither a drift of the machine nor the position in a round
    favours one side. A binary that timed out is not run again: its verdict is "failed".
    Without ``run_original`` (it cannot run here) the ports run alone."""
    if run_original and not outcome.original.build.ok:
        return
    folder = Path(program.rel).parent
    outcome.arguments = list(arguments_for(program, options.program_args))
    sides = [("cuda", root / folder, outcome.original)] if run_original else []
    sides += [(variant, trees[variant] / folder, port)
              for variant, port in outcome.variants.items() if port.build and port.build.ok]
    for number in range(options.warmup + options.runs if sides else 0):
        warmup = number < options.warmup
        shift = number % len(sides)
        for side, cwd, holder in sides[shift:] + sides[:shift]:
            if not any(run.timed_out for run in (*holder.warmups, *holder.runs)):
                run = run_binary(_binary(scratch, side, program), cwd, options.timeout,
                                 tuple(outcome.arguments))
                run.warmup = warmup
                (holder.warmups if warmup else holder.runs).append(run)


def run_binary(binary: Path, cwd: Path, timeout: float, arguments: tuple[str, ...] = ()) -> Run:
    """Run once with ``arguments``; past ``timeout`` seconds the program is killed, and every
    process it started with it (those that left its process group too); its output is read
    within bounds."""
    outcome = run_process([str(binary), *arguments], cwd, timeout)
    if outcome.error is not None:
        return Run(None, 0.0, False, None, None, None, outcome.error)
    stderr = outcome.stderr[-TAIL:]
    if outcome.timed_out:
        stderr += f"\n[rocmigrate] killed after the time limit of {timeout:g} s"
    elif outcome.left_running:
        stderr += (f"\n[rocmigrate] killed {outcome.left_running} process(es) the program left "
                   "running when it ended")
    return Run.from_output(outcome.rc, outcome.seconds, outcome.timed_out, outcome.stdout, stderr)


def _judge(outcome: ProgramOutcome, options: ValidateOptions, not_run: str | None = None,
           original_not_run: str | None = None) -> None:
    """Compare each port with the original (unless it was not run) and the optimized port
    with the naive one, and give each a verdict with its reasons."""
    original = outcome.original
    if outcome.job is not None and not outcome.job["ok"]:
        for port in outcome.variants.values():
            port.verdict = "failed"
            port.problems = [f"no result from its Slurm job: {outcome.job['error']}"]
        return
    for variant, port in outcome.variants.items():
        if original_not_run is None or original.recorded:
            port.results = compare_results(original.warmups + original.runs,
                                           port.warmups + port.runs, options.tolerance)
        # a port on the CPU is never timed against an original on a GPU
        against_gpu = original_not_run is None and options.hip_compiler == "hip-cpu"
        if original_not_run is None and not against_gpu:
            port.timings = compare_timings(original.runs, port.runs, options.max_slowdown,
                                           options.confidence)
            port.derived = derived_figures(original.runs, port.runs)
        port.verdict, port.problems = verdict(original, port, options, not_run,
                                              original_not_run)
        port.notes = [timing.reason for timing in port.timings
                      if timing.flag in ("noise", "undecided") and port.verdict == "pass"]
        if against_gpu and port.verdict == "pass":
            port.notes.append("timings not compared: the original ran on the NVIDIA GPU, the "
                              "port on the CPU (HIP's CPU runtime)")
        if original.recorded and port.verdict == "pass":
            port.notes.append(f"compared with the CUDA original's results recorded in "
                              f"{original.recorded}")
        elif original_not_run is not None and port.verdict == "pass":
            port.notes.append(f"not compared with the CUDA original: {original_not_run}")
    if "naive" in outcome.variants and "optimized" in outcome.variants:
        _compare_variants(outcome, options)
        naive, optimized = outcome.variants["naive"].runs, outcome.variants["optimized"].runs
        for both in compare_timings(naive, optimized, options.max_slowdown, options.confidence):
            slow, fast = median(naive, both.key), median(optimized, both.key)
            outcome.naive_vs_optimized.append(VariantRatio(
                both.key, slow, fast, fast / slow if slow and fast is not None else None,
                both.interval, both.p_value))


def _compare_variants(outcome: ProgramOutcome, options: ValidateOptions) -> None:
    """The optimized port's results against the naive port's: a difference makes the
    optimized port a mismatch (an optimisation rule changed what the program computes)."""
    naive, optimized = outcome.variants["naive"], outcome.variants["optimized"]
    outcome.variants_agree = compare_results(naive.warmups + naive.runs,
                                             optimized.warmups + optimized.runs,
                                             options.tolerance)
    differing = [f"result {r.key} differs from the naive port's: naive {_short(r.original)}, "
                 f"optimized {_short(r.port)}" for r in outcome.variants_agree if not r.equal]
    if differing and optimized.verdict in ("pass", "slower"):
        optimized.verdict = "mismatch"
        optimized.problems = differing + optimized.problems
        optimized.notes = []
    elif differing:
        optimized.problems += differing


def verdict(original: Original, port: VariantOutcome, options: ValidateOptions,
            not_run: str | None = None,
            original_not_run: str | None = None) -> tuple[str, list[str]]:
    """failed (convert, build or run), built (--build-only), skipped (``not_run``: no GPU to
    run on; or the original printed SKIP), mismatch, slower or pass; with the reasons. With
    ``original_not_run`` the port is judged by its own runs and self-check alone."""
    problems = [f"conversion failed: {e['path']}: {e['message']}" for e in port.conversion_errors]
    if not original.build.ok and original_not_run is None:
        problems.append("the CUDA original did not build")
    if port.build is not None and not port.build.ok:
        problems.append("the port did not build" + _lacking(port.build))
    if problems:
        return "failed", problems
    if options.build_only:
        return "built", []
    if not_run:
        return "skipped", [f"not run: {not_run}"]
    runs = {"port": _numbered(port)} if original_not_run is not None else {
        "original": _numbered(original), "port": _numbered(port)}
    for side, numbered in runs.items():
        for name, run in numbered:
            if run.timed_out:
                problems.append(f"{side} {name} timed out after {options.timeout:g} s")
            elif not run.completed:
                problems.append(f"{side} {name} {_ending(run.rc)} and printed no PASS/FAIL line")
    if problems:
        return "failed", problems
    ran = original.warmups + original.runs
    if ran and all(run.status == "SKIP" for run in ran):
        return "skipped", ["the original skipped itself (it printed SKIP): it cannot run here"]
    ported = port.warmups + port.runs
    if original_not_run is not None and ported and all(run.status == "SKIP" for run in ported):
        return "skipped", ["the port skipped itself (it printed SKIP): it cannot run here"]
    for side, numbered in runs.items():
        problems += [f"{side} {name} did not pass ({run.why_not_passed()})"
                     for name, run in numbered if not run.passed]
    recorded = " (recorded)" if original.recorded else ""
    problems += [f"result {r.key} differs: original{recorded} {_short(r.original)}, port "
                 f"{_short(r.port)}" for r in port.results if not r.equal]
    if problems:
        return "mismatch", problems
    slower = [timing.reason for timing in port.timings if timing.flag == "slower"]
    if slower:
        return "slower", slower
    return "pass", []


def _lacking(build: Build) -> str:
    """What a port built for HIP's CPU runtime needs that the runtime (and rocmigrate's
    prelude for it) lacks, read from the compiler's errors: ': it needs X, Y, which ...'."""
    if build.toolchain != "hip-cpu":
        return ""
    names = missing_names(build.output_tail)
    if not names:
        return ""
    shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
    return (f": it needs {shown}, which HIP's CPU runtime lacks (and rocmigrate's prelude for "
            "it does not provide): it cannot run there")


def _numbered(side: Original | VariantOutcome) -> list[tuple[str, Run]]:
    """A side's runs with the names the report gives them: warm-up run N, run N."""
    return [(f"warm-up run {number}", run) for number, run in enumerate(side.warmups, 1)] + \
        [(f"run {number}", run) for number, run in enumerate(side.runs, 1)]


def _ending(rc: int | None) -> str:
    if rc is None:
        return "could not start"
    return f"was killed by signal {-rc}" if rc < 0 else f"exited with {rc}"


def _short(value: object, width: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= width else text[:width - 3] + "..."
