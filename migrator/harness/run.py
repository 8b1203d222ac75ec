"""Specs, harnesses, builds, runs and comparisons: the library behind `rocmigrate harness`.

Steps, each its own function: ``generate`` reads the kernels of the CUDA files (the libclang
front end, ``migrator.clang.kernels``) and writes or keeps their specs; ``convert`` converts the
whole source tree into ``DIR/hip-src`` (the engine of `rocmigrate convert`), so local headers
come along; ``render`` writes both harnesses of each usable spec, and one source per side holding
every harness of a translation unit that has several; ``build`` compiles each unit once per side,
in parallel (nvcc for the CUDA side; the port as `rocmigrate validate` builds it:
``migrator.toolchain.sides``), and each harness of a unit that fails so on its own; ``run``
checks up front whether the GPUs each side needs are here, then runs the two sides interleaved,
run by run; ``judge`` compares outputs and timings. With ``--hip-compiler hip-cpu`` the port is
converted for AMD's HIP CPU runtime and runs on the CPU with 64-lane wavefronts; without an
NVIDIA GPU the HIP side runs alone and its outputs are compared with the CUDA outputs an earlier
harness run recorded (``--reference``), or reported not compared.
"""

from __future__ import annotations

import json
import re
import statistics
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from ..fsutil import MiB, read_regular
from ..settings import Settings
from ..toolchain.compilers import find_nvcc
from ..cluster import ClusterOptions
from ..cluster.gpus import gpu_check_for
from ..toolchain.process import run_process
from ..toolchain.sides import (TAIL, Build, Toolchain, ToolchainError, compile_binary,
                               NO_NVCC, cuda_description, cuda_toolchain, hip_toolchain,
                               runs_on)
from ..toolchain.timing import CONFIDENCE, TimingComparison, judge_timing, runs_needed
from ..versions import format_version
from .compare import (NONDETERMINISTIC_FACTOR, BufferComparison, compare_outputs,
                      within_variation)
from .outputs import OutputError, read_output
from .render import has_main, hip_spelling, render_harness, render_harnesses
from .spec import (HarnessSpec, SpecError, default_spec, load_spec, needs_edit_of,
                   write_spec)

CUDA_SUFFIXES = (".cu", ".cuh")
HIP_TREE = "hip-src"  # the converted tree, inside the output folder
REPORT_LIMIT = 64 * MiB  # the most read of a harness.json
BUILD_DIR = "build"
SOURCE_SUFFIXES = {"cuda": ".cuda.cu", "hip": ".hip.cpp"}

Progress = Callable[[str], None]


class HarnessError(Exception):
    """A usage problem with the whole run (missing source, no compiler, front end missing...)."""


@dataclass(frozen=True)
class HarnessOptions:
    source: Path
    output: Path
    kernels: tuple[str, ...] = ()  # names (plain or qualified); empty: all
    force: bool = False  # overwrite edited specs
    build_only: bool = False
    runs: int = 10  # timed runs of each side (a timing verdict needs 7 a side at 99.9%)
    warmup: int = 1  # untimed rounds first (their outputs are compared, their times not)
    timeout: float = 120.0  # seconds per run
    max_slowdown: float = 0.02  # "slower": significantly more than 1 + this times the original
    confidence: float = CONFIDENCE  # of the interval a timing verdict rests on
    gpu: str | None = None  # auto | none | nvidia | amd | nvidia,amd (None: $ROCMIGRATE_GPU)
    hip_compiler: str = "auto"
    hip_cpu: str | None = None  # HIP's CPU runtime's folder (None: $ROCMIGRATE_HIP_CPU)
    # an earlier harness output folder whose CUDA side ran: where the CUDA side cannot run here,
    # the HIP outputs are compared with the ones it recorded
    reference: Path | None = None
    cuda_arch: str = "sm_90"
    offload_arch: str = "gfx90a"
    include_paths: tuple[Path, ...] = ()
    compile_commands: Path | None = None
    build_flags: tuple[str, ...] = ()  # added to every compile, both sides (-D, -I, -L, -l...)
    settings: Settings = Settings()
    jobs: int = 0
    # where the harnesses are built and run: here, or one Slurm job per translation unit
    # (harness.cluster) with its records in ``work`` (every node must see it and the output)
    cluster: ClusterOptions = ClusterOptions()
    work: Path | None = None

    @property
    def conversion_settings(self) -> Settings:
        """The settings the port is converted (and its harness spelled) with: for the runtime
        that runs it (HIP's CPU runtime with --hip-compiler hip-cpu)."""
        if self.hip_compiler == "hip-cpu":
            return self.settings.for_runtime("hip-cpu")
        return self.settings

    def as_dict(self) -> dict:
        return {"source": str(self.source), "output": str(self.output),
                "kernels": list(self.kernels), "force": self.force,
                "build_only": self.build_only, "runs": self.runs, "warmup": self.warmup,
                "timeout": self.timeout, "max_slowdown": self.max_slowdown,
                "confidence": self.confidence,
                "hip_compiler": self.hip_compiler, "cuda_arch": self.cuda_arch,
                "offload_arch": self.offload_arch,
                "rocm": format_version(self.conversion_settings.rocm),
                "runtime": self.conversion_settings.runtime, "hip_cpu": self.hip_cpu,
                "reference": str(self.reference) if self.reference else None,
                "include_paths": [str(p) for p in self.include_paths],
                "build_flags": list(self.build_flags),
                "compile_commands": str(self.compile_commands) if self.compile_commands else None,
                "executor": self.cluster.as_dict() if self.cluster.slurm
                else {"executor": "local"},
                "work": str(self.work) if self.cluster.slurm and self.work else None}


@dataclass
class SideRun:
    rc: int | None
    seconds: float
    timed_out: bool
    kernel_ms: list[float] = field(default_factory=list)
    output: str = ""  # the output file, relative to the output folder
    stderr_tail: str = ""
    warmup: bool = False  # a warm-up run: its output counts, its times do not


@dataclass
class Timing:
    median_ms: float | None
    min_ms: float | None
    max_ms: float | None
    spread: float | None  # (max - min) / median over every timed launch of every run
    launches: int


@dataclass
class HarnessOutcome:
    name: str  # <kernel>[-<n>]
    kernel: str
    file: str  # the kernel's file, relative to the source root
    spec: str  # relative to the output folder
    spec_status: str  # written | unchanged | kept (edited by hand)
    needs_edit: str = ""
    spec_error: str = ""
    sources: dict[str, str] = field(default_factory=dict)  # side -> harness file (relative)
    builds: dict[str, Build] = field(default_factory=dict)
    # side -> the binary holding this harness (relative), run as ``binary SELECTOR OUTPUT``
    # (SELECTOR: ``spec`` without .toml); none: a report from before, ``build/<selector>.<side>``
    # run as ``binary OUTPUT``
    binaries: dict[str, str] = field(default_factory=dict)
    runs: dict[str, list[SideRun]] = field(default_factory=dict)
    buffers: list[BufferComparison] = field(default_factory=list)
    consistent: dict[str, bool] = field(default_factory=dict)  # each side's runs gave one output
    timings: dict[str, Timing] = field(default_factory=dict)
    ratio: float | None = None  # port / original, medians
    # the timing verdict over the timed launches (validate's test): flag, interval, p-value
    timing: TimingComparison | None = None
    # pass | nondeterministic-ok | slower | mismatch | failed | built | skipped | not-compared |
    # needs-edit | spec-error
    verdict: str = "failed"
    problems: list[str] = field(default_factory=list)
    loaded: HarnessSpec | None = field(default=None, repr=False)  # the spec as read back
    unit: str = ""  # the file the harnesses include: ``file`` (when not given), or its includer
    # the earlier harness output whose recorded CUDA outputs the HIP side was compared with
    recorded: str = ""

    def __post_init__(self) -> None:
        self.unit = self.unit or self.file


@dataclass
class HarnessReport:
    settings: dict
    toolchains: dict[str, dict]
    gpus: dict[str, dict]  # side -> {"usable": bool, "seen": what was found, or why not}
    conversion: dict  # {"files", "failed": [{"path", "message"}]}
    files: list[dict]  # {"path", "reader_notes": [...]} per CUDA file read
    harnesses: list[HarnessOutcome]
    original_not_run: str | None = None  # why the CUDA side did not run (the HIP side ran alone)
    # with Slurm: {"work": folder, "jobs": [cluster.JobOutcome.as_dict()]}; None: built here
    cluster: dict | None = None

    def verdicts(self) -> Counter:
        return Counter(outcome.verdict for outcome in self.harnesses)

    @property
    def ok(self) -> bool:
        return all(v in ("pass", "nondeterministic-ok", "built", "skipped", "not-compared",
                         "needs-edit")
                   for v in self.verdicts())


def harness(options: HarnessOptions, progress: Progress | None = None) -> HarnessReport:
    """Every step for every selected kernel of ``options.source``."""
    say = progress or (lambda message: None)
    if not options.source.exists():
        raise HarnessError(f"{options.source} does not exist")
    if options.runs < 1 or options.warmup < 0 or options.timeout <= 0:
        raise HarnessError("runs must be at least 1, warm-up rounds at least 0 and the time "
                           "limit above 0 s")
    if options.output.exists() and not options.output.is_dir():
        raise HarnessError(f"{options.output} exists and is not a folder")
    source = options.source.resolve()
    root = source.parent if source.is_file() else source
    if source.is_dir() and _inside(options.output.resolve(), source):
        raise HarnessError(f"the output folder {options.output} is inside the source folder "
                           f"{options.source}: its harnesses and builds would be converted with "
                           "the sources; give an output folder outside it")
    recorded = read_reference(options.reference) if options.reference else {}
    outcomes, files = generate(options, say)
    nvcc = find_nvcc()
    if nvcc is None and options.hip_compiler != "hip-cpu":
        raise HarnessError("nvcc not found: put CUDA's bin folder on PATH or set CUDA_HOME "
                           "(--hip-compiler hip-cpu builds and runs the HIP side without it)")
    scratch = options.output / BUILD_DIR
    try:
        cuda = cuda_toolchain(nvcc, options.cuda_arch) if nvcc else None
        hip = hip_toolchain(options.hip_compiler, nvcc, options.cuda_arch, options.offload_arch,
                            scratch.resolve(), (*(f"-I{p}" for p in options.include_paths),
                                                *options.build_flags), options.hip_cpu)
    except ToolchainError as err:
        raise HarnessError(str(err)) from None
    say(f"port built with {hip.name}: {hip.reason}")
    gpus = gpus_for(hip.name, options.gpu, options.cluster)  # known before anything is built
    if cuda is None:
        gpus["cuda"] = {"usable": False, "seen": NO_NVCC}
    original_not_run = None
    if hip.runs_on == "cpu" and not gpus["cuda"]["usable"] and not options.build_only:
        original_not_run = gpus["cuda"]["seen"]
        say(f"the CUDA side is not run ({original_not_run}): the HIP side runs alone, "
            + (f"compared with the CUDA outputs recorded in {options.reference}"
               if options.reference else "not compared (--reference names an earlier harness "
               "output whose CUDA side ran)"))
    if not options.build_only:
        for side, gpu in gpus.items():
            if not gpu["usable"] and not original_not_run:
                say(f"runs will be skipped: the {side} side needs a GPU ({gpu['seen']})")
    usable = [o for o in outcomes if not o.needs_edit and not o.spec_error]
    conversion = convert(source, options, say) if usable else {"files": 0, "failed": []}
    render(usable, root, options, conversion)
    node_gpus, failed, jobs = {}, {}, None
    if options.cluster.slurm:
        node_gpus, failed, jobs = _on_cluster(usable, root, options, cuda, hip, gpus,
                                              original_not_run, say)
    else:
        build(usable, root, options, cuda, hip, say)
        if not options.build_only:
            run(usable, options, gpus, say, original_not_run)
    for outcome in outcomes:
        judge(outcome, options, node_gpus.get(outcome.unit, gpus), original_not_run, recorded)
        if outcome.unit in failed and outcome in usable:
            outcome.verdict = "failed"
            outcome.problems = [f"no result from its Slurm job: {failed[outcome.unit]}"]
    return HarnessReport(options.as_dict(), {"cuda": cuda_description(cuda),
                                             "hip": hip.describe()},
                         gpus, conversion, files, outcomes, original_not_run,
                         {"work": str(options.work), "jobs": jobs} if jobs is not None else None)


def _on_cluster(usable: list[HarnessOutcome], root: Path, options: HarnessOptions,
                cuda: Toolchain | None, hip: Toolchain, gpus: dict[str, dict],
                original_not_run: str | None, say: Progress):
    """Build and run every translation unit's harnesses as a Slurm job of its own: (the GPUs
    each unit's node had, the units without a result with why, the jobs for the report)."""
    from ..cluster import run_jobs
    from .cluster import gather, unit_jobs

    jobs = unit_jobs(usable, root, options, cuda, hip, gpus, original_not_run)
    say(f"{len(jobs)} translation units to build{'' if options.build_only else ' and run'} as "
        f"Slurm jobs (work folder {options.work})")
    done = run_jobs(jobs, options.cluster, options.work, "harness", say, error=HarnessError)
    node_gpus = gather(usable, jobs, done)
    failed = {job.key: outcome.error for job, outcome in zip(jobs, done)
              if job.key not in node_gpus}
    return node_gpus, failed, [outcome.as_dict() for outcome in done]


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


# --- specs ---------------------------------------------------------------------------------------


def cuda_files(source: Path, output: Path) -> tuple[Path, list[str]]:
    """(root, the CUDA files under it, relative): ``source`` itself when it is a file; then the
    local headers (any suffix: .h, .hpp, .inc...) a CUDA file includes that define a kernel
    (HeCBench keeps many kernels in a kernels.h its main.cu includes)."""
    from ..workspace.discovery import walk
    from ..workspace.includes import local_includes

    if source.is_file():
        return source.parent, [source.name]
    entries = walk(source, skip_folder=output.resolve(), skip_outputs=True)
    rels = [e.rel for e in entries if e.kind == "file" and e.rel.endswith(CUDA_SUFFIXES)]
    included = set().union(*(local_includes(source, rel) for rel in rels)) - set(rels)
    headers = [rel for rel in sorted(included)
               if b"__global__" in (_read(source / rel) or b"")]
    return source, rels + headers


def generate(options: HarnessOptions, say: Progress) -> tuple[list[HarnessOutcome], list[dict]]:
    """Read every CUDA file's kernels; write (or keep) one spec per selected instantiation and
    load it back. Raises HarnessError when the front end is missing or --kernel names none."""
    from ..clang.kernels import ReadOptions, read_kernels
    from ..workspace.includes import local_includes
    from ..workspace.units import compiled_in
    from .sitevalues import SiteValues

    root, rels = cuda_files(options.source.resolve(), options.output)
    read = ReadOptions(include_paths=tuple(options.include_paths),
                       compile_commands=options.compile_commands)
    outcomes: list[HarnessOutcome] = []
    files: list[dict] = []
    units = compiled_in(root, rels)
    for rel in rels:
        unit = units.get(rel, rel)
        try:
            reading = read_kernels(root / rel, read if unit == rel else replace(
                read, includer=root / unit))
        except NotImplementedError as err:
            raise HarnessError(f"the libclang kernel reader is not available: {err}") from None
        files.append({"path": rel, "kernels": len(reading.kernels), "notes": reading.notes})
        chosen = [k for k in reading.kernels
                  if not options.kernels or k.name in options.kernels
                  or k.qualified_name in options.kernels]
        if not chosen:
            continue
        headers = tuple(data for header in sorted(local_includes(root, unit) - {unit})
                        if (data := _read(root / header)) is not None)
        values = SiteValues((root / unit).read_bytes(), unit, headers)
        stem = rel.rsplit(".", 1)[0]
        if sum(other.rsplit(".", 1)[0] == stem for other in rels) > 1:
            stem = rel  # kernels.cu and kernels.h: each its own folder of specs
        pairs = [(k, i) for k in chosen for i in (k.instantiations or (None,))]
        for kernel, instantiation in pairs:
            same = [p for p in pairs if p[0].name == kernel.name]
            number = same.index((kernel, instantiation)) + 1
            name = kernel.name if len(same) == 1 else f"{kernel.name}-{number}"
            spec_rel = f"{stem}/{name}.toml"
            specialization = not kernel.template_parameters and any(
                other.name == kernel.name and other.template_parameters
                for other in reading.kernels)
            document = default_spec(kernel, instantiation, rel, values, name, specialization)
            status = write_spec(options.output / spec_rel, document, options.force)
            if status == "kept":
                say(f"kept {spec_rel}: edited by hand (--force writes the defaults over it)")
            outcome = HarnessOutcome(name, kernel.qualified_name or kernel.name, rel, spec_rel,
                                     status, unit=unit)
            try:
                spec = load_spec(options.output / spec_rel)
            except SpecError as err:  # waiting for its edit, or edited wrongly
                outcome.needs_edit = needs_edit_of(options.output / spec_rel)
                outcome.spec_error = "" if outcome.needs_edit else str(err)
            else:
                outcome.needs_edit, outcome.loaded = spec.needs_edit, spec
            outcomes.append(outcome)
    if options.kernels:
        found = {o.kernel for o in outcomes} | {o.kernel.rsplit("::", 1)[-1] for o in outcomes}
        missing = [name for name in options.kernels if name not in found]
        if missing:
            raise HarnessError(f"no kernel {', '.join(missing)} under {options.source}")
    say(f"{len(outcomes)} harness spec(s) under {options.output}")
    return outcomes, files


# --- conversion and sources ----------------------------------------------------------------------


def convert(source: Path, options: HarnessOptions, say: Progress) -> dict:
    """Convert the source (a tree, or one file) into DIR/hip-src with the normal conversion."""
    from ..runner import ConvertError, RunOptions, output_name, run as convert_tree

    say(f"converting {options.source} into {options.output / HIP_TREE}")
    tree = options.output / HIP_TREE
    settings = options.conversion_settings
    target = tree / output_name(source.name, settings) if source.is_file() else tree
    try:
        result = convert_tree(RunOptions(source=source, output=target, jobs=options.jobs),
                              settings)
    except ConvertError as err:
        return {"files": 0, "failed": [{"path": ".", "message": str(err)}]}
    return {"files": len(result.results),
            "failed": [{"path": r.rel, "message": r.message} for r in result.results
                       if r.status == "failed"]}


def render(outcomes: list[HarnessOutcome], root: Path, options: HarnessOptions,
           conversion: dict) -> None:
    """Both harness sources of every usable spec (the HIP one only where its file converted),
    and, for a translation unit with several harnesses, one source per side holding them all
    (``unit_source``): what is built, the unit being compiled once per side."""
    from ..fsutil import atomic_write
    from ..runner import output_name

    failed = {f["path"] for f in conversion["failed"]}
    settings = options.conversion_settings
    mains: dict[str, bool] = {}
    units: dict[tuple[str, str], list[tuple[str, HarnessSpec]]] = {}
    for outcome in outcomes:
        unit = outcome.unit
        if unit not in mains:
            mains[unit] = has_main((root / unit).read_bytes())
        for side, suffix in SOURCE_SUFFIXES.items():
            if side == "hip" and ({outcome.file, unit, "."} & failed):
                continue
            spelled = outcome.loaded if side == "cuda" else hip_spelling(outcome.loaded,
                                                                         settings)
            include = unit if side == "cuda" else output_name(unit, settings)
            rel = selector(outcome) + suffix
            atomic_write(options.output / rel, render_harness(
                spelled, side, include, mains[unit], selector(outcome),
                settings.launch_syntax).encode())
            outcome.sources[side] = rel
            units.setdefault((unit, side), []).append((selector(outcome), spelled))
    for (unit, side), harnesses in units.items():
        if len(harnesses) > 1:
            include = unit if side == "cuda" else output_name(unit, settings)
            atomic_write(options.output / unit_source(unit, side),
                         render_harnesses(harnesses, side, include, mains[unit],
                                          settings.launch_syntax).encode())


def selector(outcome: HarnessOutcome) -> str:
    """The name a harness binary runs this harness by: its spec's path without .toml."""
    return outcome.spec[:-len(".toml")]


def unit_source(unit: str, side: str) -> str:
    """The source holding every harness of ``unit`` on ``side`` (relative to the output)."""
    return unit + SOURCE_SUFFIXES[side]


# --- building ------------------------------------------------------------------------------------


def build(outcomes: list[HarnessOutcome], root: Path, options: HarnessOptions,
          cuda: Toolchain | None, hip: Toolchain, say: Progress) -> None:
    """One binary per translation unit and side: the unit's source of all its harnesses, or a
    harness's own source where the unit has one. A unit whose binary does not build has each of
    its harnesses built alone, so that one bad spec fails only its own harness. Without nvcc
    (``cuda`` None: --hip-compiler hip-cpu) only the HIP side is built."""
    from ..pool import worker_count

    toolchains = {"cuda": cuda, "hip": hip}
    units: dict[tuple[str, str], list[HarnessOutcome]] = {}
    for outcome in outcomes:
        for side in outcome.sources:
            if toolchains[side] is not None:
                units.setdefault((outcome.unit, side), []).append(outcome)
    if not units:
        return
    trees = {"cuda": root, "hip": (options.output / HIP_TREE).resolve()}
    flags = {unit: unit_flags(root, unit, options) for unit in {unit for unit, _ in units}}

    def compile_all(jobs: list[tuple[list[HarnessOutcome], str, str, str]]) -> list[Build]:
        with ThreadPoolExecutor(max_workers=worker_count(options.jobs)) as pool:
            return list(pool.map(lambda job: compile_harness(
                toolchains[job[1]], options.output / job[2], options.output / job[3],
                trees[job[1]], options.include_paths,
                (*flags[job[0][0].unit][job[1]], *options.build_flags)), jobs))

    def alone(outcome: HarnessOutcome, side: str) -> tuple:
        return [outcome], side, outcome.sources[side], f"{BUILD_DIR}/{selector(outcome)}.{side}"

    jobs = [alone(members[0], side) if len(members) == 1 else
            (members, side, unit_source(unit, side), f"{BUILD_DIR}/{unit}.{side}")
            for (unit, side), members in units.items()]
    say(f"building {len(jobs)} binaries for {sum(bool(o.sources) for o in outcomes)} harnesses "
        f"(one per file and side; CUDA with {cuda.name if cuda else 'nothing'}, HIP with "
        f"{hip.name})")
    retry = []
    for (members, side, source, binary), result in zip(jobs, compile_all(jobs)):
        if result.ok or len(members) == 1:
            for outcome in members:
                outcome.builds[side], outcome.binaries[side] = result, binary
        elif not errors_in(result.output_tail, Path(source).name):
            # every error is in the kernel's file or its headers: alone, each would repeat them
            for outcome in members:
                outcome.builds[side] = _noted(result, "not built alone: the errors are in "
                                              f"{members[0].unit} itself, "
                                              "not in a harness")
                outcome.binaries[side] = binary
        else:
            retry += [alone(outcome, side) for outcome in members]
    if not retry:
        return
    say(f"building {len(retry)} harnesses alone: their file's harnesses did not build together")
    for (members, side, _, binary), result in zip(retry, compile_all(retry)):
        (outcome,) = members
        outcome.builds[side] = _noted(result, "built alone: the harnesses of "
                                      f"{outcome.unit} did not build together")
        outcome.binaries[side] = binary


def _noted(build: Build, note: str) -> Build:
    """The build with a line of rocmigrate's first in the output the report keeps."""
    return replace(build, output_tail=(f"[rocmigrate] {note}\n" + build.output_tail)[-TAIL:])


def errors_in(output: str, source_name: str) -> bool:
    """Whether a failed compile may be the harness source's doing (``source_name``: a spec's
    init or template arguments): a line names it other than as the includer of the kernel's
    file (an error, or the instantiation it was detected in), or no error line names a file."""
    lines = output.splitlines()
    errors = [line for line in lines if re.search(r"\berror\b", line)]
    located = [line for line in errors
               if re.match(r"\s*[^\s:(]+(?::\d+|\(\d+\))", line)]
    return not located or any(
        source_name in line and not re.match(r"\s*(?:In file included from|from)\s", line)
        for line in lines)


def unit_flags(root: Path, unit: str, options: HarnessOptions) -> dict[str, tuple[str, ...]]:
    """side -> the flags of ``unit``'s entry in ``options.compile_commands`` that its build
    needs: include folders, defines, forced includes, the language standard, as the kernel
    reader takes them (``migrator.clang.kernels``: relative paths against the entry's
    directory). The HIP side includes the converted tree: a folder or file of the source tree
    there is its twin under DIR/hip-src, where that exists; anything else stays as given."""
    from ..clang.kernels import PATH_FLAGS, compile_command_flags
    from ..runner import output_name

    cuda = tuple(compile_command_flags(root / unit, options.compile_commands) or ())
    tree = (options.output / HIP_TREE).resolve()
    hip, index = list(cuda), 0
    while index < len(cuda):  # -std=X stands alone; every other flag is followed by its value
        flag = cuda[index]
        index += 1 if flag.startswith("-std=") else 2
        if flag not in PATH_FLAGS or not _inside(where := Path(cuda[index - 1]).resolve(),
                                                  root):
            continue
        rel = where.relative_to(root).as_posix()
        twin = tree / (output_name(rel, options.conversion_settings) if flag == "-include" else rel)
        if twin.exists():
            hip[index - 1] = str(twin)
    return {"cuda": cuda, "hip": tuple(hip)}


def compile_harness(toolchain: Toolchain, source: Path, binary: Path, tree: Path,
                    include_paths: tuple[Path, ...], build_flags: tuple[str, ...] = ()) -> Build:
    """Compile and link one harness; the tree it includes its kernel file from comes first on
    the include path, then the user's folders; ``build_flags`` come after the source. The
    kernel's file may call host code of other
    files the harness does not build (an option parser, a timer): when the link misses symbols,
    it is linked again keeping only the sections the harness uses, so that what it never calls
    needs no definition."""
    first = _compile(toolchain, source, binary, tree, include_paths, build_flags)
    if first.ok or "undefined reference" not in first.output_tail:
        return first
    again = _compile(toolchain, source, binary, tree, include_paths,
                     (*build_flags, *_unused_sections(toolchain)))
    if again.ok:
        return replace(_noted(again, "linked without the unused host code of the kernel's file "
                                     "(its first link missed symbols)"),
                       seconds=round(again.seconds + first.seconds, 3))
    return first


def _unused_sections(toolchain: Toolchain) -> tuple[str, ...]:
    """Flags that drop the functions and data nothing calls at link time."""
    if Path(toolchain.compiler).name.startswith("nvcc") or toolchain.name == "hipcc-nvidia":
        return ("-Xcompiler", "-ffunction-sections,-fdata-sections", "-Xlinker", "--gc-sections")
    return ("-ffunction-sections", "-fdata-sections", "-Wl,--gc-sections")


def _compile(toolchain: Toolchain, source: Path, binary: Path, tree: Path,
             include_paths: tuple[Path, ...], extra: tuple[str, ...]) -> Build:
    build = compile_binary(toolchain, source.resolve(), binary.resolve(),
                           (tree, *(p.resolve() for p in include_paths)), extra,
                           shown=compiler_errors)
    return replace(build, output_tail="" if build.ok else build.output_tail)


def compiler_errors(output: str) -> str:
    """A failed compile's output for the report: its first error lines (warnings can bury
    them: hipcc prints hundreds for a converted file), then its last lines."""
    lines = output.splitlines()
    errors = [line for line in lines if re.search(r"\berror\b", line, re.IGNORECASE)]
    tail = output[-TAIL:]
    if not errors or all(line in tail for line in errors):
        return tail
    return "\n".join(["[rocmigrate] the first errors:", *errors[:15], "[rocmigrate] the end:",
                      tail])


# --- running -------------------------------------------------------------------------------------


def gpus_for(hip_toolchain: str, assume: str | None = None,
             cluster: ClusterOptions | None = None) -> dict[str, dict]:
    """side -> {"usable": whether its binaries can run here, "seen": the GPU, or why not}; the
    port needs what ``hip_toolchain`` (a Toolchain's name) builds for: an AMD GPU, the CPU
    (HIP's CPU runtime) or an NVIDIA GPU. ``assume``: validate's --gpu override (None:
    ROCMIGRATE_GPU, else detection). With Slurm (``cluster``) and no override, a GPU is taken
    as present: each job checks its node."""
    cluster = cluster or ClusterOptions()
    try:
        nvidia = gpu_check_for("nvidia", assume, cluster)
        platform = runs_on(hip_toolchain)
        port = nvidia if platform == "nvidia" else gpu_check_for(platform, assume, cluster)
    except ValueError as err:
        raise HarnessError(str(err)) from None
    return {side: {"usable": check.present, "seen": check.reason}
            for side, check in (("cuda", nvidia), ("hip", port))}


def run(outcomes: list[HarnessOutcome], options: HarnessOptions, gpus: dict[str, dict],
        say: Progress, original_not_run: str | None = None) -> None:
    """Run the two sides of each built harness ``options.warmup`` untimed then ``options.runs``
    timed rounds, interleaved: each round runs both sides, in an order that rotates from round
    to round (the CUDA side first, then the port first...), so that neither a drift of the GPU
    nor the place in a round favours one side (as validate runs programs). With
    ``original_not_run`` (the port on HIP's CPU runtime, no NVIDIA GPU) the HIP side runs
    alone."""
    sides = ("hip",) if original_not_run else ("cuda", "hip")
    runnable = [o for o in outcomes
                if all(side in o.builds and o.builds[side].ok for side in sides)]
    if not runnable or not all(gpus[side]["usable"] for side in sides):
        return
    for outcome in runnable:
        say(f"running {selector(outcome)} ({options.warmup} warm-up and "
            f"{options.runs} timed runs per side)")
        for number in range(options.warmup + options.runs):
            order = ("cuda", "hip") if number % 2 == 0 else ("hip", "cuda")
            for side in (side for side in order if side in sides):
                runs = outcome.runs.setdefault(side, [])
                if not any(r.timed_out for r in runs):
                    side_run = run_side(outcome, side, options, number + 1)
                    side_run.warmup = number < options.warmup
                    runs.append(side_run)


def run_side(outcome: HarnessOutcome, side: str, options: HarnessOptions,
             number: int) -> SideRun:
    """Run number ``number`` of ``side``'s binary for this harness; its output file is
    ``build/<selector>.<side>.<number>.out``."""
    output = options.output / BUILD_DIR / f"{selector(outcome)}.{side}.{number}.out"
    output.unlink(missing_ok=True)
    # a binary shared by the harnesses of a file lies above its spec's folder under build/
    output.parent.mkdir(parents=True, exist_ok=True)
    if outcome.binaries:
        command = [str((options.output / outcome.binaries[side]).resolve()), selector(outcome)]
    else:  # a report from before binaries held several harnesses: one binary, one argument
        command = [str((options.output / BUILD_DIR / f"{selector(outcome)}.{side}").resolve())]
    done = run_process([*command, str(output.resolve())], None, options.timeout)
    stderr = (done.error or done.stderr)[-TAIL:]
    if done.timed_out:
        stderr += f"\n[rocmigrate] killed after the time limit of {options.timeout:g} s"
    timings = []
    for line in done.stdout.splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict) and isinstance(value.get("kernel_ms"), (int, float)):
            timings.append(float(value["kernel_ms"]))
    return SideRun(done.rc, done.seconds, done.timed_out, timings,
                   output.relative_to(options.output).as_posix() if output.is_file() else "",
                   stderr)


def run_again(output: Path, runs: int = 10, timeout: float = 120.0,
              progress: Progress | None = None, warmup: int = 1,
              gpu: str | None = None) -> HarnessReport:
    """Run and judge the harnesses that ``rocmigrate harness --build-only`` built into
    ``output``, from its harness.json and specs: on a machine with the GPUs but without the
    compilers or rocmigrate's other dependencies (this needs the standard library and numpy;
    ``python -m migrator.harness DIR``)."""
    say = progress or (lambda message: None)
    try:
        document = json.loads(read_regular(output / "harness.json", REPORT_LIMIT))
        settings, harnesses = document["settings"], document["harnesses"]
        toolchains = document["toolchains"]
        outcomes = [HarnessOutcome(
            h["name"], h["kernel"], h["file"], h["spec"], h["spec_status"], h["needs_edit"],
            h["spec_error"], h["sources"], {side: Build(**b) for side, b in h["builds"].items()},
            binaries=dict(h.get("binaries", {})), unit=h.get("unit", h["file"]))
            for h in harnesses]
    except OSError as err:
        raise HarnessError(f"{output / 'harness.json'} is not the report of a harness build: "
                           f"cannot read: {err.strerror}") from None
    except (ValueError, KeyError, TypeError) as err:
        raise HarnessError(f"{output / 'harness.json'} is not the report of a harness build: "
                           f"{err}") from None
    inside = output.resolve()
    for outcome in outcomes:
        if outcome.needs_edit or outcome.spec_error:
            continue
        # harness.json is input: a spec, the binaries and the outputs named after the spec must
        # lie in this folder, or nothing of it runs or is written
        where = (output / outcome.spec).resolve()
        if not outcome.spec.endswith(".toml") or not where.is_relative_to(inside) or \
                not (output / BUILD_DIR / outcome.spec).resolve().is_relative_to(inside):
            outcome.spec_error = f"{outcome.spec}: not a spec inside {output}"
            continue
        outside = [str(binary) for binary in outcome.binaries.values()
                   if not (output / str(binary)).resolve().is_relative_to(inside)]
        if outside or (outcome.binaries and set(outcome.binaries) != set(outcome.builds)):
            outcome.spec_error = (f"{', '.join(outside)}: not a binary inside {output}" if outside
                                  else f"{outcome.spec}: a binary for each side built expected")
            continue
        try:
            outcome.loaded = load_spec(output / outcome.spec)
        except SpecError as err:
            outcome.spec_error = str(err)
    reference = Path(settings["reference"]) if settings.get("reference") else None
    options = HarnessOptions(source=Path(settings["source"]), output=output, runs=runs,
                             warmup=warmup, timeout=timeout, gpu=gpu,
                             max_slowdown=settings.get("max_slowdown", 0.02),
                             confidence=settings.get("confidence", CONFIDENCE),
                             hip_compiler=settings.get("hip_compiler", "auto"),
                             reference=reference)
    gpus = gpus_for(toolchains["hip"]["name"], gpu)
    if toolchains["cuda"].get("reason") == NO_NVCC:  # built without nvcc (hip-cpu)
        gpus["cuda"] = {"usable": False, "seen": NO_NVCC}
    original_not_run = None
    if runs_on(toolchains["hip"]["name"]) == "cpu" and not gpus["cuda"]["usable"]:
        original_not_run = gpus["cuda"]["seen"]
    for side, gpu in gpus.items():
        if not gpu["usable"] and not original_not_run:
            say(f"runs will be skipped: the {side} side needs a GPU ({gpu['seen']})")
    recorded = read_reference(reference) if reference and original_not_run else {}
    run([o for o in outcomes if o.loaded is not None], options, gpus, say, original_not_run)
    for outcome in outcomes:
        judge(outcome, options, gpus, original_not_run, recorded)
    settings = {**settings, "runs": runs, "warmup": warmup, "timeout": timeout,
                "max_slowdown": options.max_slowdown, "confidence": options.confidence,
                "build_only": False}
    return HarnessReport(settings, toolchains, gpus, document.get("conversion", {}),
                         document.get("files", []), outcomes, original_not_run)


# --- judging -------------------------------------------------------------------------------------


def read_reference(folder: Path) -> dict[str, tuple[str, list[str]]]:
    """The CUDA side's runs an earlier harness output folder recorded, by spec path: (the spec
    they ran, as a path inside ``folder``; their output files, relative to it), for each harness
    whose CUDA side ran. Raises HarnessError for a folder that holds no harness report; its
    paths must lie inside it (harness.json is untrusted input)."""
    try:
        document = json.loads(read_regular(folder / "harness.json", REPORT_LIMIT))
        entries = document["harnesses"]
        inside = folder.resolve()
        recorded = {}
        for entry in entries:
            spec, runs = entry["spec"], entry.get("runs", {}).get("cuda", [])
            outputs = [str(r["output"]) for r in runs]
            paths = [spec, *outputs]
            if not runs or not all(isinstance(p, str) and p for p in paths):
                continue
            if all((folder / p).resolve().is_relative_to(inside) for p in paths) and all(
                    r.get("rc") == 0 and not r.get("timed_out") for r in runs):
                recorded[spec] = (spec, outputs)
    except OSError as err:
        raise HarnessError(f"--reference {folder}: no harness report to read "
                           f"({folder / 'harness.json'}: {err.strerror})") from None
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        raise HarnessError(f"--reference {folder}: not a rocmigrate harness report "
                           f"({err!r})") from None
    return recorded


def recorded_outputs(outcome: HarnessOutcome, reference: Path | None,
                     recorded: dict[str, tuple[str, list[str]]]) -> list | str:
    """The CUDA outputs ``reference`` recorded for this harness's spec (a list of runs'
    outputs), or why there are none to compare with (a string)."""
    if reference is None:
        return "no CUDA outputs recorded to compare with (--reference: an earlier harness " \
               "output whose CUDA side ran)"
    if outcome.spec not in recorded:
        return f"{reference} recorded no CUDA run of {outcome.spec}"
    spec, outputs = recorded[outcome.spec]
    try:
        earlier = load_spec(reference / spec)
    except SpecError as err:
        return f"the spec {reference / spec} of the recorded run cannot be read: {err}"
    if earlier != outcome.loaded:
        return (f"the spec {outcome.spec} differs from the one the CUDA run recorded in "
                f"{reference} ran: other inputs")
    try:
        return [read_output(reference / output) for output in outputs]
    except OutputError as err:
        return f"a recorded CUDA output cannot be read: {err}"


def judge(outcome: HarnessOutcome, options: HarnessOptions, gpus: dict[str, dict],
          original_not_run: str | None = None,
          recorded: dict[str, tuple[str, list[str]]] | None = None) -> None:
    """The verdict of one harness, with its reasons. With ``original_not_run`` the HIP side ran
    alone (HIP's CPU runtime; the CUDA side cannot run here): its outputs are compared with the
    CUDA outputs ``recorded`` (read_reference of ``options.reference``) for the same spec as a
    CUDA run here would be, else it is ``not-compared``, never a pass."""
    if outcome.spec_error:
        outcome.verdict, outcome.problems = "spec-error", [outcome.spec_error]
        return
    if outcome.needs_edit:
        outcome.verdict, outcome.problems = "needs-edit", [outcome.needs_edit]
        return
    problems = [f"the {side} harness did not build" for side, b in outcome.builds.items()
                if not b.ok and not (original_not_run and side == "cuda")]
    if "hip" not in outcome.sources:
        problems.append(f"{outcome.unit} did not convert: no HIP harness")
    if problems:
        outcome.verdict, outcome.problems = "failed", problems
        return
    if options.build_only:
        outcome.verdict = "built"
        return
    not_here = {gpu["seen"] for side, gpu in gpus.items()
                if not gpu["usable"] and not (original_not_run and side == "cuda")}
    if not_here:
        outcome.verdict, outcome.problems = "skipped", [f"not run: {'; '.join(sorted(not_here))}"]
        return
    for side, runs in outcome.runs.items():
        for number, side_run in enumerate(runs, 1):
            if side_run.timed_out or side_run.rc != 0 or not side_run.output:
                why = ("timed out" if side_run.timed_out
                       else f"exited with {side_run.rc}" if side_run.rc != 0
                       else "wrote no output")
                problems.append(f"{side} run {number} {why}")
    if problems:
        outcome.verdict, outcome.problems = "failed", problems
        return
    try:
        outputs = {side: [read_output(options.output / r.output) for r in runs]
                   for side, runs in outcome.runs.items()}
    except OutputError as err:
        outcome.verdict, outcome.problems = "failed", [str(err)]
        return
    if original_not_run:  # the HIP side ran alone: the CUDA side's outputs are recorded ones
        originals = recorded_outputs(outcome, options.reference, recorded or {})
        if isinstance(originals, str):
            outcome.verdict = "not-compared"
            outcome.problems = [f"not compared with CUDA: the HIP side ran "
                                f"{len(outputs['hip'])} time(s) at 64 lanes on HIP's CPU "
                                f"runtime, the CUDA side not here ({original_not_run}), and "
                                f"{originals}"]
            outputs = {"hip": outputs["hip"]}
        else:
            outcome.recorded = str(options.reference)
            outputs = {"cuda": originals, "hip": outputs["hip"]}
    if "cuda" in outputs:
        outcome.buffers = compare_outputs(outputs["cuda"][0], outputs["hip"][0],
                                          outcome.loaded.tolerances)
    for side, results in outputs.items():
        outcome.consistent[side] = all(r == results[0] for r in results[1:])
    timed = {side: [r.kernel_ms for r in runs if not r.warmup]
             for side, runs in outcome.runs.items()}
    for side, launches in timed.items():
        outcome.timings[side] = timing([ms for run_ms in launches for ms in run_ms])
    # a CPU's times say nothing of a GPU's: no verdict on HIP's CPU runtime, nor against a
    # recording (its times are another machine's)
    if not original_not_run and options.hip_compiler != "hip-cpu":
        cuda_ms, hip_ms = outcome.timings["cuda"].median_ms, outcome.timings["hip"].median_ms
        outcome.ratio = hip_ms / cuda_ms if cuda_ms and hip_ms is not None else None
        outcome.timing = timing_verdict(timed["cuda"], timed["hip"], options.max_slowdown,
                                        options.confidence)
    if "cuda" in outputs:
        problems = [_difference(b) for b in outcome.buffers if not b.equal]
        outcome.verdict, outcome.problems = ("mismatch" if problems else "pass"), problems
        if problems and not outcome.consistent["cuda"]:
            _judge_against_variation(outcome, outputs)
    if outcome.verdict in ("pass", "nondeterministic-ok") and outcome.timing and \
            outcome.timing.flag == "slower":
        outcome.verdict, outcome.problems = "slower", [outcome.timing.reason, *outcome.problems]
    for side, same in outcome.consistent.items():
        if not same:
            outcome.problems.append(f"the {side} side's own runs gave different outputs "
                                    "(a kernel that is not deterministic: atomics, races)")


def _judge_against_variation(outcome: HarnessOutcome, outputs: dict[str, list]) -> None:
    """The original's own runs differ (float atomics: the order of the additions changes the
    rounding): the port passes as ``nondeterministic-ok`` when no port run is further from the
    original's first run than NONDETERMINISTIC_FACTOR times the original's runs are from it
    (compare.within_variation)."""
    checks = within_variation(outputs["cuda"], outputs["hip"])
    runs = len(outputs["cuda"])

    def figures(check) -> str:
        if check.original is None or check.port is None:
            return f"{check.name}: not comparable (a NaN, or another type or length)"
        unit = f" {check.unit}" if check.unit else ""
        return (f"{check.name}: port up to {check.port}{unit} from the original's first run, "
                f"the original's {runs} runs up to {check.original}{unit}")

    outside = [check for check in checks if not check.within]
    if outside:
        outcome.problems.append(
            f"the original's own runs differ, and the port differs more (more than "
            f"{NONDETERMINISTIC_FACTOR}x): " + "; ".join(figures(c) for c in outside))
        return
    outcome.verdict = "nondeterministic-ok"
    outcome.problems = [
        f"the original's own runs differ, and the port no more than {NONDETERMINISTIC_FACTOR}x "
        f"as much: " + "; ".join(figures(c) for c in checks) + "; the exact differences: " +
        "; ".join(outcome.problems)]


# A difference in a launch's median below this is not called slower or faster: two binaries of
# one kernel (PTX identical) differed by 0.8-1.0 us a launch on an H200 for kernels of 7-13 us
# (HeCBench gd's update, pcc's ker2: the harness's host code around the launch is not the same
# on both sides), above the ~0.5 us resolution CUDA documents for event timing
LAUNCH_RESOLUTION_MS = 0.0015


def timing_verdict(original: list[list[float]], port: list[list[float]], max_slowdown: float,
                   confidence: float = CONFIDENCE) -> TimingComparison:
    """Validate's timing test (``migrator.toolchain.timing.judge_timing``) on the launches'
    kernel_ms, one list per timed run of each side: the ``confidence`` interval of port /
    original from every launch, the threshold the larger of ``1 + max_slowdown`` and what the
    original shows against itself between runs (its odd runs' launches against its even
    runs'), so that identical kernels are not called slower because the GPU's speed drifted from
    run to run, and at least LAUNCH_RESOLUTION_MS over the original's median launch.
    With fewer timed runs a side than an interval needs at that confidence (7 at 99.9%), no
    interval: a ratio beyond the allowed one is ``undecided``, never slower."""
    def launches(runs: list[list[float]]) -> list[float]:
        return [ms for run_ms in runs for ms in run_ms]

    originals = launches(original)
    halves = (launches(original[1::2]), launches(original[0::2])) if len(original) >= 4 \
        else None
    return judge_timing("kernel_ms", originals, launches(port), max_slowdown, confidence,
                        spread=timing(originals).spread, runs=(len(original), len(port)),
                        halves=halves,
                        with_interval=min(len(original), len(port)) >= runs_needed(confidence),
                        resolution=LAUNCH_RESOLUTION_MS)


def timing(values: list[float]) -> Timing:
    if not values:
        return Timing(None, None, None, None, 0)
    middle = statistics.median(values)
    spread = (max(values) - min(values)) / middle if middle else None
    return Timing(middle, min(values), max(values), spread, len(values))


def _difference(buffer: BufferComparison) -> str:
    if buffer.problem:
        return f"{buffer.name}: {buffer.problem}"
    return (f"{buffer.name}: {buffer.mismatches} value(s) differ, first at {buffer.first_index}: "
            f"original {buffer.first_original}, port {buffer.first_port}")

