#!/usr/bin/env python3
"""HeCBench programs and kernels/ run on AMD's HIP CPU runtime: 64-lane wavefronts on the CPU.

Not a test (tests never read the corpus). For each HeCBench program ``NAME-cuda`` with its
human port ``NAME-hip`` beside it, with the rocmigrate of ``--checkout`` (``python -m migrator``
run with ``PYTHONPATH`` set to it, its toolchain imported from it):

- converts the CUDA folder twice with ``--runtime hip-cpu``: ``naive`` (``--no-optimize``, a
  pure port) and ``optimized`` (the default); the human port is converted with only what the
  CPU runtime's C++ compiler needs of any HIP source (``--select LCH001,SHM003``: launches as
  ``hipLaunchKernelGGL``, ``extern __shared__`` as ``HIP_DYNAMIC_SHARED``);
- builds each of the three with ``migrator.toolchain.sides.hip_cpu_toolchain`` and
  ``compile_binary`` (g++ against HIP-CPU after rocmigrate's prelude): the unit with ``main`` of
  the Makefile's ``source = ...`` list, the other units on the same command line, the
  Makefile's ``-D``/``-I`` flags (``corpus_share.makefile_build``);
- runs each binary in its tree's copy of the program folder (siblings the arguments name,
  ``../data/...``, linked beside it) with the Makefile ``run`` target's first arguments, made
  smaller (``SMALL_ARGUMENTS`` by hand, else ``shrink``), under ``--timeout`` seconds;
- records built / ran / self-check (``PASS``/``FAIL``/``ERROR`` words in the output, else
  none) and whether the naive and optimized outputs are equal, and the optimized and human
  ones, after dropping timing lines (``TIMING_LINE``) and trailing spaces.

kernels/ is run with ``rocmigrate validate kernels --hip-compiler hip-cpu --runs 1 --warmup 0``
and its verdicts join the same table. ``CAUSES`` holds what a person found when looking at a
program that differs or fails; the markdown table shows it.

Usage: python benchmarks/hip_cpu.py --hecbench CORPUS_SRC [--checkout DIR] [--hip-cpu DIR]
           [--workdir DIR] [--jobs 2] [--timeout 60] [--start K] [--programs N | --only NAME...]
           [--all] [--no-kernels | --no-hecbench] [--previous JSON...] [--json OUT]
           [--markdown OUT]
Results and causes: docs/hip_cpu.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from corpus_share import include_path, makefile_build

# beside the checkout, as CI has it (AMD's HIP CPU runtime, ../shared/data/hip-cpu)
DEFAULT_HIP_CPU = Path(__file__).resolve().parents[2] / "shared/data/hip-cpu"
SIDES = ("naive", "optimized", "human")
# what the CPU runtime's compiler needs of any HIP source: the human port gets only these
HUMAN_RULES = "LCH001,SHM003"
# programs that need a library or a feature the CPU runtime lacks altogether (left out unless
# --all): a CUDA library, CUB/Thrust, cooperative groups, WMMA
LIBRARY_USE = re.compile(r"cublas|thrust|cub/|curand|cusparse|cufft|nccl|cudnn|cusolver|nvml|"
                         r"cooperative_groups|mma\.h")
# an output line that carries a timing, a rate or the process's memory use (dslash prints its
# peak resident size): dropped before outputs are compared
TIMING_LINE = re.compile(r"time|timing|nanosecond|elapsed|memory usage|"
                         r"\b(?:ms|us|usec|msec|sec|secs|seconds|s)\b|GB/s|MB/s|"
                         r"G?FLOP|throughput|bandwidth|perf|speed|per second", re.I)
# a clock reading (milliseconds since 1970: 13 digits) at the start of a line, as langford
# prints before every line: dropped before outputs are compared
CLOCK_STAMP = re.compile(r"^\d{12,}\s+")
# a line that names the device a program ran on (the GPU's or the CPU's model): dropped before
# outputs are compared, as the CPU side and the recorded CUDA original differ there by design
DEVICE_LINE = re.compile(r"device name|\bNVIDIA\b|\bH[12]00\b|\bEPYC\b|\bXeon\b|\bRyzen\b",
                         re.I)
# the binary's own path, as programs print argv[0]: this script puts each at work/bin/SIDE/NAME
# (here and on the GPU machine); it becomes NAME before outputs are compared
BINARY_PATH = re.compile(r"(?:/[\w.+-]+)*/bin/(?:naive|optimized|human|cuda)/([\w.+-]+)")
SELF_CHECK_FAIL = re.compile(r"\b(?:FAIL(?:ED|URE)?|ERROR)\b")
SELF_CHECK_PASS = re.compile(r"\bPASS(?:ED)?\b")
# arguments chosen by hand after reading the program's main (sizes a CPU runs in seconds)
SMALL_ARGUMENTS: dict[str, list[str]] = {
    "aes": ["1", "0", "../urng-sycl/URNG_Input.bmp"],  # <iterations> <decrypt> <image>
    "d3q19-bgk": ["32"],  # <N>: the lattice's edge
    "gamma-correction": ["768", "432", "256", "1"],  # <width> <height> <block> <repeat>
    "memcpy": ["1"],  # <repeat>
    "lud": ["-s", "256"],  # matrix size
    "dslash": ["256"],  # the work-group size, not a repeat count
    "dense-embedding": ["66000", "256", "1"],  # <rows> <batch> <repeat>; rows > batch^2
    # rows, columns, padding, warm-ups, repeats (1000 x 1000 with 1005 runs: past 300 s)
    "pad": ["-a", "0.1", "-m", "100", "-n", "100", "-e", "3", "-w", "0", "-r", "1"],
}
# what a person found for a program that differs or fails (the markdown table's cause column)
_SLOW = "time limit on all three sides (the CPU runs every GPU thread as a fibre)"
_FIXED_SIZE = "time limit on all three sides: the problem size is fixed in the source"
CAUSES: dict[str, str] = {
    "ace": _FIXED_SIZE, "asta": _FIXED_SIZE, "atomicReduction": _FIXED_SIZE,
    "binomial": _FIXED_SIZE, "bspline-vgh": _FIXED_SIZE, "clenergy": _FIXED_SIZE,
    "ddbp": _FIXED_SIZE, "grrt": _FIXED_SIZE,
    "bitpermute": "time limit on all three sides: main loops over domain sizes up to 2^28",
    "compute-score": _SLOW, "dslash": _SLOW,
    "crossEntropy": _SLOW + ", at 90 s too", "d3q19-bgk": _SLOW + ", at 90 s too",
    "glu": _SLOW + ", at 90 s too",
    "adv": "ran within 90 s (30 s was too short)", "bonds": "ran within 90 s (30 s was too "
    "short); prints only timings", "extrema": "ran within 90 s (30 s was too short)",
    "crs": "time limit (naive, optimized); the human port does not link (its Makefile's "
           "units differ)",
    "atomicIntrinsics": "HIP-CPU's atomicInc/atomicDec ignore the wrap-around value "
                        "(include/hip/hip_atomic.h: 'FIXME: overflow handling is missing'): "
                        "FAIL on all three sides until the prelude corrected them (579c445)",
    "mdh": "did not build as a conversion (the human port did): the project's float4 "
           "operator+= collided with HIP-CPU's member; VEC001 keeps it off HIP-CPU since "
           "1672d59 (the human port ran past the time limit in that run)",
    "particles": "did not build as a conversion until VEC001's fix (1672d59), as mdh; then "
                 "it printed garbage grid sizes on every side: HIP-CPU passes a vector's element "
                 "to printf as its proxy object, not the int (fixtures/hip_cpu/"
                 "runtime_defects.cpp); the product it prints beside them is right",
    "distort": "the program prints its own device-vs-host error: 0 on the CPU (the 'device' is "
               "the host), 1 on the H100 (the GPU's float rounding)",
    "relu": "HIP-CPU names __hgt2 hgt2 (all three sides) until the prelude's __hgt2 (1a9ab04); "
            "the human port prints one PASS fewer than the original (its own code)",
    "scatterAdd": "ours: blocks of 32 x 16 from `int thread_x = 32; //warpSize;` for kernels "
                  "indexing threadIdx.y * warpSize + threadIdx.x: at 64 lanes past the shared "
                  "buffer (SIGSEGV). WAV001 (52c70ec) now takes a 32 its comment calls the warp "
                  "size: marked by default, asks the device with --unsafe-fixes (then PASS); "
                  "the human port's units in ../scatterAdd-cuda are not converted (link error)",
    "pad": "ours: a launch with #ifdef inside <<<>>> stayed <<<>>> (LCH001 skipped it; the "
           "human port has it too) until LCH001 converted such launches (4094c8d); smaller "
           "arguments by hand",
    "aes": "the corpus lacks ../include/SDKBitMap.h",
    "ced": "the corpus lacks the input frames (input/peppa, a DVC archive)",
    "d2q9-bgk": "the corpus lacks the input files (Inputs/, a DVC archive)",
    "haversine": "the corpus lacks ../geodesic-cuda/locations.txt",
    "cm": "the corpus lacks the queries/ input folder; the human port (units in ../cm-cuda) "
          "does not link",
    "fluidSim": "prints only timings (the human port reads main from ../fluidSim-cuda)",
    "kernels/peer_exchange": "needs two devices; HIP-CPU has one: the program prints SKIP",
    "hogbom": "the corpus lacks data/dirty_4096.img",
    "hotspot": "the corpus lacks ../data/hotspot",
    "lr": "the corpus lacks the dataset file; the human port (units shared with ../lr-cuda) "
          "does not link",
    "hungarian": "a __managed__ __device__ variable read by host code does not compile "
                 "under HIP-CPU (all three sides)",
    "intrinsics-cast": "the directed-rounding conversions (__ull2float_ru...) are beyond "
                       "HIP-CPU and the prelude (all three sides)",
    "loopback": _SLOW,
    "hypterm": "timed out at 30 s in a first run under load; ran in the second",
    "langford": "prints a clock reading before every line (CLOCK_STAMP drops it)",
    "diamond": "a whole application (main under src/, external data): not tried",
    "addBiasResidualLayerNorm": "HIP-CPU has no `half` type name (only __half); the human "
                                "port needs hip/hip_bf16.h, which HIP-CPU lacks",
    "attention-paged": "HIP-CPU lacks hipFuncSetAttribute; the human port needs "
                       "hip/hip_bf16.h",
    "attentionMergeState": "g++ against HIP-CPU's __half (a reference to a reinterpreted "
                           "element is an rvalue there); the human port needs hip/hip_bf16.h",
    "aligned-types": "uint4_aligned (an __align__(16) struct) is no type under HIP-CPU, on "
                     "all three sides",
    "complex": "HIP-CPU's hipCdivf leaves the imaginary part undivided: FAIL on all three "
               "sides until the prelude corrected it (579c445); before the prelude, HIP-CPU "
               "lacked hipCadd and the double-complex functions",
    "ert": "HIP-CPU's half2 is not the type the program's enable_if overloads tell apart "
           "(all three sides)",
    "hellinger": "HIP-CPU's device code has no global signbit (all three sides)",
    "dense-embedding": _SLOW + " (66000 rows: near the least its assert, rows > batch^2, "
                       "allows; 1000 rows, the first try, aborted on it)",
    # programs after lr (measured 2026-12-05 afternoon; the prelude as of then)
    **dict.fromkeys(("lrn", "matern", "md5hash", "perlin", "qrg", "rsbench", "sosfil",
                     "stencil3d"), _SLOW),
    "storeKVCache": _SLOW + "; the human port FAILs: its kernels take a 64-lane wavefront only "
                    "under __GFX8__/__GFX9__, which HIP-CPU does not define, while the host asks "
                    "the device (64): host and kernels disagree",
    "threadcpy": _SLOW + "; its CUDA original ran past 60 s on the H100 too",
    "rsc": _SLOW + " (naive, optimized); the human port exits on a file it cannot open",
    "meanshift": "the corpus lacks the input data (load_csv's assertion; the CUDA original "
                 "fails alike on the GPU)",
    "minibude": "the corpus lacks ../minibude-sycl/data",
    "mt": "the corpus lacks data/MersenneTwister.dat",
    "nn": "the corpus lacks the database file",
    "srad": "the corpus lacks ../data/srad/image.pgm",
    "svd3x3": "the corpus lacks Dataset_1M.txt",
    "tonemapping": "the corpus lacks ../tonemapping-sycl/input.hdr",
    "word2vec": "the corpus lacks the training data",
    "nlll": "HIP-CPU's __half has no conversion from int (`half h = 0`; all three sides)",
    "pitch": "HIP-CPU lacks hipExtent and 3D pitched memory (all three sides; beyond a prelude)",
    "romberg": "HIP-CPU: a wavefront's lanes do not run in lockstep; thread 0 reads shared "
               "values lanes 1-16 of its warp stored just before, with no barrier (a GPU's "
               "lanes move together); one __syncthreads there makes it PASS; all three sides "
               "(fixtures/hip_cpu/runtime_defects.cpp)",
    "wyllie": "HIP-CPU: __syncthreads inside a loop of data-dependent length ends the block "
              "while threads are mid-loop (or reruns the kernel); without that barrier, or with "
              "one block, it passes; all three sides (fixtures/hip_cpu/runtime_defects.cpp)",
    "split": "HIP-CPU: its barrier-free warp scan on a volatile shared array needs lanes in "
             "lockstep; garbage ranks scatter past the shared array (SIGSEGV); the same scan "
             "with barriers passes; all three sides",
    "spm": "the program prints its own device-vs-host difference: on the CPU the 'device' is "
           "the host (0); on the H100, 4 of 9932334 counts differ (the GPU's float rounding)",
    "sheath": "varies on the GPU too: two H100 recordings printed dphi 9.46 and 9.47 at step "
              "775 (float atomics in another order); the CPU differs alike at another step",
    "thomas": "close: maximum error 0 on the CPU, 1.1e-16 on the H100",
    "zerocopy": "the human port passes an unsigned int where HIP-CPU's hipHostMalloc takes its "
                "flags enum (g++ rejects it)",
}


@dataclass
class SideOutcome:
    built: bool = False
    build_seconds: float = 0.0
    build_error: str = ""  # the first compiler error, or why it was not built
    ran: bool = False  # exited with 0 within the time limit
    rc: int | None = None
    timed_out: bool = False
    run_seconds: float = 0.0
    self_check: str = "none"  # PASS | FAIL | none
    output: str = ""  # stdout without timing lines
    stdout_tail: str = ""  # the last lines of the output, timings included
    run_error: str = ""  # the last line of stderr of a failed run
    # a recorded CUDA original only: a second run's output differed from the first's
    varies: bool = False


@dataclass
class ProgramOutcome:
    name: str
    arguments: list[str]
    sides: dict[str, SideOutcome] = field(default_factory=dict)
    # equal | differ | empty (nothing but timing lines) | "-" (not both ran)
    naive_vs_optimized: str = "-"
    optimized_vs_human: str = "-"
    cause: str = ""
    # the CUDA original as recorded on an NVIDIA GPU (--cuda), and the ports against it:
    # equal | close | differ | varies | empty | "-" (see against_cuda)
    cuda: SideOutcome | None = None
    naive_vs_cuda: str = "-"
    optimized_vs_cuda: str = "-"


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def convert(checkout: Path, source: Path, output: Path, *options: str) -> str | None:
    """Converts ``source`` into ``output`` for HIP's CPU runtime; None when it worked."""
    if output.exists():
        shutil.rmtree(output)
    env = dict(os.environ, PYTHONPATH=str(checkout))
    proc = subprocess.run([sys.executable, "-m", "migrator", "convert", str(source), "-o",
                           str(output), "--runtime", "hip-cpu", *options], cwd=checkout,
                          env=env, capture_output=True, text=True, check=False)
    failed = re.search(r"(\d+) failed", proc.stdout)
    if proc.returncode != 0 or not output.is_dir() or (failed and failed[1] != "0"):
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or [""]
        return f"conversion: exit {proc.returncode}: {tail[0][:200]}"
    return None


def run_arguments(program: Path) -> list[str] | None:
    """The arguments of the first ``./$(program)`` line of the Makefile's ``run`` target
    (None: no such line, e.g. a script runs it)."""
    makefile = program / "Makefile"
    if not makefile.is_file():
        return None
    text = makefile.read_text(errors="replace").replace("\\\n", " ")
    target = re.search(r"^run\s*:.*\n((?:\t.*\n?|\s*\n)*)", text, re.M)
    if not target:
        return None
    for line in target[1].splitlines():
        if m := re.search(r"\./\$[({](?:program|EXE)[)}](.*)$", line):
            return shlex.split(m[1].split("#", 1)[0])
    return None


def shrink(arguments: list[str]) -> list[str]:
    """Smaller arguments for a CPU that runs every GPU thread as a fibre: the last number, a
    repeat count in most HeCBench programs (``100``, ``1000``), becomes 1 when it is at least
    10 (a lone number: when it is 10, 100, 1000 or 10000); a power of two of 2^20 or more is
    divided by 256, one of 2048 or more by 16; another number of 10^5 or more by 100."""
    numbers = [i for i, a in enumerate(arguments) if re.fullmatch(r"\d+", a)]
    small = list(arguments)
    for i in numbers:
        value = int(arguments[i])
        power_of_two = value & (value - 1) == 0
        if i == numbers[-1] and len(numbers) > 1 and value >= 10 or \
                len(numbers) == 1 and value in (10, 100, 1000, 10000):
            small[i] = "1"
        elif power_of_two and value >= 1 << 20:
            small[i] = str(value // 256)
        elif power_of_two and value >= 2048:
            small[i] = str(value // 16)
        elif value >= 100_000:
            small[i] = str(value // 100)
    return small


def program_arguments(name: str, cuda: Path) -> list[str]:
    """What a program runs with, on the CPU and when its CUDA original is recorded on a GPU."""
    arguments = SMALL_ARGUMENTS.get(name)
    return arguments if arguments is not None else shrink(run_arguments(cuda) or [])


def main_unit(tree: Path, original: Path,
              sources: list[str]) -> tuple[Path | None, list[Path]]:
    """The unit that defines ``main`` and the other units, of a converted or human tree: the
    Makefile's sources, else (none of them defines ``main``) every unit file at the tree's
    top. A human port's unit that is not in its folder is the CUDA folder's
    (``../NAME-cuda/main.cpp``), read there."""
    shared = original.parent / f"{original.name.removesuffix('-hip')}-cuda"
    named = []
    for source in sources:
        places = (tree / source, original / source, shared / source)
        if found := next((place for place in places if place.is_file()), None):
            named.append(found.resolve() if found != tree / source else found)
    every = sorted(p for p in tree.iterdir() if p.suffix in (".cu", ".cpp", ".hip"))
    for units in (named, every):
        mains = [u for u in units
                 if re.search(r"\bint\s+main\s*\(", u.read_text(errors="replace"))]
        if mains:
            return mains[0], [u for u in units if u != mains[0]]
    return None, named


def first_error(text: str) -> str:
    """The first ``error:`` line of a compiler's output (else its last line)."""
    for line in text.splitlines():
        if re.search(r": (?:fatal )?error:", line):
            return line.strip()[:240]
    return (text.strip().splitlines() or [""])[-1][:240]


def comparable(stdout: str) -> str:
    """The output without timing lines, device names, trailing spaces and the binary's path
    (what two ports, and a port and its original, must agree on)."""
    return "\n".join(BINARY_PATH.sub(r"\1", CLOCK_STAMP.sub("", line.rstrip()))
                     for line in stdout.splitlines()
                     if line.strip() and not TIMING_LINE.search(line)
                     and not DEVICE_LINE.search(line))


def self_check(stdout: str) -> str:
    if SELF_CHECK_FAIL.search(stdout):
        return "FAIL"
    return "PASS" if SELF_CHECK_PASS.search(stdout) else "none"


class Bench:
    def __init__(self, args: argparse.Namespace, toolchain, work: Path) -> None:
        self.args = args
        self.toolchain = toolchain
        self.work = work
        self.corpus = args.hecbench.resolve()
        self.checkout = args.checkout.resolve()

    def program(self, name: str) -> ProgramOutcome:
        from migrator.toolchain.process import run_process
        from migrator.toolchain.sides import compile_binary

        cuda = self.corpus / f"{name}-cuda"
        arguments = program_arguments(name, cuda)
        outcome = ProgramOutcome(name, arguments, cause=CAUSES.get(name, ""))
        started = time.monotonic()
        for side in SIDES:
            result = outcome.sides[side] = SideOutcome()
            original = cuda if side != "human" else self.corpus / f"{name}-hip"
            tree = self.work / side / original.name
            options = {"naive": ("--no-optimize",), "optimized": (),
                       "human": ("--no-optimize", "--select", HUMAN_RULES)}[side]
            why = convert(self.checkout, original, tree, *options)
            if why:
                result.build_error = why
                continue
            sources, flags = makefile_build(original)
            main, others = main_unit(tree, original, sources)
            if main is None:
                result.build_error = "no unit with int main()"
                continue
            flags = [f"-I{tree / Path(f[2:]).relative_to(original)}"
                     if f.startswith("-I") and Path(f[2:]).is_relative_to(original) else f
                     for f in flags]
            folders = tuple(Path(include_path(main, tree)[i + 1])
                            for i in range(0, len(include_path(main, tree)), 2))
            binary = self.work / "bin" / side / name
            build = compile_binary(self.toolchain, main, binary, folders,
                                   (*map(str, others), *flags))
            result.built, result.build_seconds = build.ok, build.seconds
            if not build.ok:
                result.build_error = first_error(build.output_tail)
                continue
            self.link_siblings(tree, arguments)
            done = run_process([str(binary), *arguments], main.parent, self.args.timeout)
            record_run(result, done, self.args.timeout)
        sides = outcome.sides
        outcome.naive_vs_optimized = agreement(sides["naive"], sides["optimized"])
        outcome.optimized_vs_human = agreement(sides["optimized"], sides["human"])
        log(f"{name}: " + ", ".join(f"{side} {summary(sides[side])}" for side in SIDES)
            + f" ({time.monotonic() - started:.0f} s)")
        return outcome

    def link_siblings(self, tree: Path, arguments: list[str]) -> None:
        """Link the corpus folders that ``../X/...`` arguments name beside ``tree``."""
        for argument in arguments:
            if m := re.match(r"\.\./([^/]+)/", argument):
                link = tree.parent / m[1]
                if not link.exists() and (self.corpus / m[1]).is_dir():
                    link.symlink_to(self.corpus / m[1])


def record_run(side: SideOutcome, done, timeout: float) -> None:
    """What one run of a side's binary (run_process's outcome) gave, into ``side``."""
    side.rc, side.timed_out = done.rc, done.timed_out
    side.run_seconds = round(done.seconds, 2)
    side.ran = done.rc == 0 and not done.timed_out and done.error is None
    side.self_check = self_check(done.stdout + done.stderr)
    side.output = comparable(done.stdout)
    side.stdout_tail = "\n".join(done.stdout.splitlines()[-6:])[-600:]
    if not side.ran:
        side.run_error = (f"timed out after {timeout:g} s" if done.timed_out
                          else done.error or first_error(done.stderr or done.stdout)
                          or f"exit {done.rc}")


def agreement(first: SideOutcome, second: SideOutcome) -> str:
    if not (first.ran and second.ran):
        return "-"
    if not first.output and not second.output:
        return "empty"
    return "equal" if first.output == second.output else "differ"


# a number as programs print them (what against_cuda compares with a tolerance)
NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf)", re.I)
# how far a number printed on the CPU may be from the GPU's and count as "close"
RELATIVE_TOLERANCE, ABSOLUTE_TOLERANCE = 1e-4, 1e-6


def numerically_close(first: str, second: str) -> bool:
    """Whether two outputs are equal but for their numbers, each within
    ``RELATIVE_TOLERANCE`` (or ``ABSOLUTE_TOLERANCE`` near zero) of the other's."""
    lines, others = first.splitlines(), second.splitlines()
    if len(lines) != len(others):
        return False
    for line, other in zip(lines, others):
        if NUMBER.split(line) != NUMBER.split(other):
            return False
        numbers, other_numbers = NUMBER.findall(line), NUMBER.findall(other)
        for x, y in zip(map(float, numbers), map(float, other_numbers)):
            if not (x == y or (math.isnan(x) and math.isnan(y)) or
                    math.isclose(x, y, rel_tol=RELATIVE_TOLERANCE, abs_tol=ABSOLUTE_TOLERANCE)):
                return False
    return True


def against_cuda(port: SideOutcome, cuda: SideOutcome | None) -> str:
    """A port run on the CPU against its CUDA original recorded on a GPU: ``equal``;
    ``close`` (every number within the tolerance, e.g. a float sum in another order);
    ``varies`` (it differs, and so did the original's two runs: its output is not a function
    of its input, e.g. a clock-seeded random generator); ``differ``; ``empty`` (both printed
    only timings); ``-`` (one of them did not run)."""
    if cuda is None or not (port.ran and cuda.ran):
        return "-"
    if not port.output and not cuda.output:
        return "empty"
    if port.output == cuda.output:
        return "equal"
    if numerically_close(port.output, cuda.output):
        return "close"
    return "varies" if cuda.varies else "differ"


def recorded_again(earlier: dict, later: dict) -> dict:
    """``later``'s records, each marked ``varies`` where an ``earlier`` recording of the same
    program with the same arguments ran and printed something else (a GPU's output that is not
    a function of the input shows in two recordings as well as in two runs of one)."""
    records = {}
    for name, row in later.items():
        before = earlier.get(name)
        if before and before.get("arguments") == row.get("arguments") and before["ran"] and \
                row["ran"] and comparable(before["output"]) != comparable(row["output"]):
            row = {**row, "varies": True}
        records[name] = row
    return records


def attach_cuda(outcome: ProgramOutcome, recorded: dict) -> None:
    """The CUDA original's recorded run (``--record-cuda``'s report), where it ran with the
    same arguments, and the naive and optimized ports against it."""
    row = recorded.get(outcome.name)
    if row is None or row.get("arguments") != outcome.arguments:
        return
    outcome.cuda = SideOutcome(**{k: v for k, v in row.items() if k != "arguments"})
    outcome.cuda.output = comparable(outcome.cuda.output)
    outcome.naive_vs_cuda = against_cuda(outcome.sides["naive"], outcome.cuda)
    outcome.optimized_vs_cuda = against_cuda(outcome.sides["optimized"], outcome.cuda)


def summary(side: SideOutcome) -> str:
    if not side.built:
        return "not built"
    if not side.ran:
        return "timed out" if side.timed_out else f"failed (exit {side.rc})"
    return side.self_check


def record_cuda(args: argparse.Namespace, names: list[str], work: Path, report: Path) -> None:
    """``--record-cuda``, on an NVIDIA machine: each program's CUDA original built with nvcc
    (the same units and Makefile flags as the ports; ``-x cu``) and run twice on the GPU with
    the arguments the CPU side uses (``program_arguments``), in its corpus folder. The report
    is what ``--cuda`` reads later on any machine, written to ``report`` after each program (a
    run cut short keeps what it recorded)."""
    from migrator.toolchain.process import run_process

    corpus = args.hecbench.resolve()
    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version",
                          "--format=csv,noheader"], capture_output=True, text=True,
                         check=False).stdout.strip() if shutil.which("nvidia-smi") else "none"
    nvcc = subprocess.run(["nvcc", "--version"], capture_output=True, text=True,
                          check=False).stdout.strip().splitlines()[-1:]
    document = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="minutes"),
                "gpu": gpu, "nvcc": nvcc[0] if nvcc else "", "arch": args.cuda_arch,
                "timeout": args.timeout, "programs": {}}
    lock = threading.Lock()

    def recorded(name: str, record: SideOutcome, arguments: list[str]) -> None:
        with lock:
            document["programs"][name] = {"arguments": arguments, **asdict(record)}
            partial = report.with_name(report.name + ".part")
            partial.write_text(json.dumps(document, indent=1))
            partial.replace(report)

    def one(name: str) -> None:
        cuda = corpus / f"{name}-cuda"
        arguments = program_arguments(name, cuda)
        record = SideOutcome()
        sources, flags = makefile_build(cuda)
        main, others = main_unit(cuda, cuda, sources)
        if main is None:
            record.build_error = "no unit with int main()"
            return recorded(name, record, arguments)
        makefile = (cuda / "Makefile").read_text(errors="replace")
        openmp = ["-Xcompiler", "-fopenmp", "-lgomp"] if "fopenmp" in makefile else []
        binary = work / "bin" / "cuda" / name
        binary.parent.mkdir(parents=True, exist_ok=True)
        build = run_process(["nvcc", "-std=c++17", "-O3", f"-arch={args.cuda_arch}",
                             "--extended-lambda", *openmp, "-x", "cu", str(main),
                             *map(str, others), *flags, "-o", str(binary)], cuda, 600)
        record.build_seconds = round(build.seconds, 1)
        record.built = build.rc == 0 and binary.is_file()
        if not record.built:
            record.build_error = first_error(build.stderr + build.stdout) or f"exit {build.rc}"
            return recorded(name, record, arguments)
        command = [str(binary), *arguments]
        record_run(record, run_process(command, main.parent, args.timeout), args.timeout)
        if record.ran:
            again = comparable(run_process(command, main.parent, args.timeout).stdout)
            record.varies = again != record.output
        log(f"{name}: cuda {summary(record)}{' (varies)' if record.varies else ''}")
        recorded(name, record, arguments)

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        list(pool.map(one, names))


def kernels_validate(args: argparse.Namespace, work: Path) -> dict:
    """``rocmigrate validate kernels --hip-compiler hip-cpu``: its report (validate.json)."""
    folder = work / "kernels-validate"
    env = dict(os.environ, PYTHONPATH=str(args.checkout.resolve()))
    command = [sys.executable, "-m", "migrator", "validate", "kernels", "--hip-compiler",
               "hip-cpu", "--hip-cpu", str(args.hip_cpu.resolve()), "--runs", "1", "--warmup",
               "0", "--timeout", str(args.timeout), "-o", str(folder)]
    if args.kernels_reference:  # the CUDA originals' runs recorded on a GPU (comparison 2)
        command += ["--reference", str(args.kernels_reference.resolve())]
    proc = subprocess.run(command, cwd=args.checkout.resolve(), env=env, capture_output=True,
                          text=True, check=False)
    report = folder / "validate.json"
    if not report.is_file():
        return {"error": (proc.stderr or proc.stdout).strip()[-500:]}
    return json.loads(report.read_text())


def kernel_rows(report: dict) -> list[dict]:
    rows = []
    for program in report.get("programs", []):
        variants = program.get("variants", {})
        agree = program.get("variants_agree") or []
        rows.append({
            "name": f"kernels/{program['name']}",
            "verdicts": {v: variants.get(v, {}).get("verdict") for v in ("naive", "optimized")},
            "output_checks": {v: [r.get("verdict") for r in variants.get(v, {}).get("results", [])]
                              for v in ("naive", "optimized")},
            "naive_vs_optimized": ("equal" if all(r["equal"] for r in agree) else "differ")
                                  if agree else "-",
            # the ports' results against the CUDA original's recorded on a GPU (--reference)
            "vs_cuda": {v: _against_recorded(program, variants.get(v, {}))
                        for v in ("naive", "optimized")},
            "problems": {v: variants.get(v, {}).get("problems", []) for v in variants},
            "cause": CAUSES.get(f"kernels/{program['name']}", ""),
        })
    return rows


def cuda_cell(cuda: dict | None) -> str:
    if cuda is None:
        return "-"
    if not cuda["built"]:
        return "not built"
    if not cuda["ran"]:
        return "timed out" if cuda["timed_out"] else f"failed (exit {cuda['rc']})"
    return f"y, {cuda['self_check']}" + (" (varies)" if cuda.get("varies") else "")


def _against_recorded(program: dict, variant: dict) -> str:
    results = variant.get("results") or []
    if not program.get("original", {}).get("recorded") or not results:
        return "-"
    equal = sum(bool(r.get("equal")) for r in results)
    return f"equal ({equal} results)" if equal == len(results) else \
        f"differ ({len(results) - equal} of {len(results)} results)"


def bold(agreement: str) -> str:
    return f"**{agreement}**" if agreement == "differ" else agreement


def agreements(counted: dict) -> str:
    both = sum(n for key, n in counted.items() if key != "-")
    close = f"{counted['close']} close, " if counted.get("close") else ""
    varies = f"{counted['varies']} vary on the GPU too, " if counted.get("varies") else ""
    return f"{counted.get('equal', 0)} equal, {close}{counted.get('differ', 0)} differ, " \
           f"{varies}{counted.get('empty', 0)} print only timings, of {both}"


def markdown(report: dict) -> str:
    rows = report["programs"]
    counts = report["counts"]
    lines = [f"HeCBench programs tried: {counts['tried']} (naive / optimized / human port)",
             "",
             "| | naive | optimized | human |", "| --- | --- | --- | --- |"]
    for key in ("built", "ran", "self_check_pass", "self_check_fail"):
        lines.append(f"| {key.replace('_', ' ')} | " + " | ".join(
            str(counts[key][side]) for side in SIDES) + " |")
    lines += ["", "naive vs optimized where both ran: " + agreements(counts["naive_vs_optimized"])
              + "; optimized vs human where both ran: "
              + agreements(counts["optimized_vs_human"]), ""]
    if counts.get("cuda_recorded"):
        lines += [f"CUDA originals recorded on the GPU with the same arguments: "
                  f"{counts['cuda_recorded']}, of which ran {counts['cuda_ran']}; naive port vs "
                  f"CUDA where both ran: {agreements(counts['naive_vs_cuda'])}; optimized port "
                  f"vs CUDA: {agreements(counts['optimized_vs_cuda'])}", ""]
    lines += ["| program | arguments | built n/o/h | ran n/o/h | self-check n/o/h | "
              "naive = opt | opt = human | CUDA ran, self-check | vs CUDA n/o | cause |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for row in rows:
        sides = [row["sides"][side] for side in SIDES]
        lines.append(
            f"| {row['name']} | `{shlex.join(row['arguments']) or '(none)'}` | "
            + "/".join("y" if s["built"] else "n" for s in sides) + " | "
            + "/".join("y" if s["ran"] else ("t" if s["timed_out"] else "n") if s["built"]
                       else "-" for s in sides) + " | "
            + "/".join(s["self_check"] if s["ran"] or s["self_check"] != "none" else "-"
                       for s in sides)
            + f" | {bold(row['naive_vs_optimized'])} | {bold(row['optimized_vs_human'])}"
            f" | {cuda_cell(row.get('cuda'))} | {bold(row.get('naive_vs_cuda', '-'))}/"
            f"{bold(row.get('optimized_vs_cuda', '-'))} | {row['cause']} |")
    if report.get("kernels"):
        lines += ["", "| kernels/ program | naive | optimized | naive = opt | vs CUDA n/o | "
                      "cause |", "| --- | --- | --- | --- | --- | --- |"]
        for row in report["kernels"]:
            against = row.get("vs_cuda", {})
            lines.append(f"| {row['name']} | {row['verdicts']['naive']} | "
                         f"{row['verdicts']['optimized']} | {bold(row['naive_vs_optimized'])}"
                         f" | {against.get('naive', '-')} / {against.get('optimized', '-')}"
                         f" | {row['cause']} |")
    return "\n".join(lines) + "\n"


def count(outcomes: list[ProgramOutcome]) -> dict:
    def per_side(test) -> dict:
        return {side: sum(bool(test(o.sides[side])) for o in outcomes) for side in SIDES}

    return {
        "tried": len(outcomes),
        "built": per_side(lambda s: s.built),
        "ran": per_side(lambda s: s.ran),
        "self_check_pass": per_side(lambda s: s.ran and s.self_check == "PASS"),
        "self_check_fail": per_side(lambda s: s.self_check == "FAIL"),
        "naive_vs_optimized": Counter(o.naive_vs_optimized for o in outcomes),
        "optimized_vs_human": Counter(o.optimized_vs_human for o in outcomes),
        "cuda_recorded": sum(o.cuda is not None for o in outcomes),
        "cuda_ran": sum(o.cuda is not None and o.cuda.ran for o in outcomes),
        "naive_vs_cuda": Counter(o.naive_vs_cuda for o in outcomes),
        "optimized_vs_cuda": Counter(o.optimized_vs_cuda for o in outcomes),
    }


def select(corpus: Path, args: argparse.Namespace) -> list[str]:
    if args.only:
        return [n.removesuffix("-cuda").removesuffix("-hip") for n in args.only]
    names = []
    for folder in sorted(corpus.iterdir()):
        name = folder.name.removesuffix("-cuda")
        if not folder.name.endswith("-cuda") or not (corpus / f"{name}-hip").is_dir():
            continue
        if run_arguments(folder) is None and name not in SMALL_ARGUMENTS:
            continue  # no ./$(program) line: a script runs it
        if not args.all and any(LIBRARY_USE.search(path.read_text(errors="replace"))
                                for path in folder.rglob("*") if path.is_file()
                                and path.suffix in (".cu", ".cpp", ".h", ".hpp", ".cuh")):
            continue
        names.append(name)
    names = names[args.start:]
    return names[:args.programs] if args.programs else names


def restored(row: dict) -> ProgramOutcome:
    """A program of an earlier report, with today's cause and comparison rules."""
    row = {key: value for key, value in row.items()
           if key not in ("cuda", "naive_vs_cuda", "optimized_vs_cuda")}
    outcome = ProgramOutcome(**{**row, "sides": {side: SideOutcome(**value) for side, value
                                                 in row["sides"].items()}})
    outcome.cause = CAUSES.get(outcome.name, outcome.cause)
    for side in outcome.sides.values():
        side.output = comparable(side.output)
    outcome.naive_vs_optimized = agreement(outcome.sides["naive"], outcome.sides["optimized"])
    outcome.optimized_vs_human = agreement(outcome.sides["optimized"], outcome.sides["human"])
    return outcome


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hecbench", type=Path, required=True,
                        help="HeCBench's src folder (NAME-cuda and NAME-hip programs)")
    parser.add_argument("--checkout", type=Path, default=Path(__file__).resolve().parents[1],
                        help="rocmigrate source folder that converts (default: this tree)")
    parser.add_argument("--hip-cpu", type=Path, default=DEFAULT_HIP_CPU,
                        help="AMD's HIP CPU runtime's folder")
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--jobs", type=int, default=2, help="programs handled at once")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per run")
    parser.add_argument("--programs", type=int, help="only the first N programs")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="only these programs")
    parser.add_argument("--all", action="store_true",
                        help="also programs that use a CUDA library, CUB/Thrust, cooperative "
                             "groups or WMMA")
    parser.add_argument("--start", type=int, default=0,
                        help="leave out the first K selected programs (a later batch)")
    parser.add_argument("--no-kernels", action="store_true", help="leave kernels/ out")
    parser.add_argument("--no-hecbench", action="store_true", help="only kernels/")
    parser.add_argument("--previous", type=Path, nargs="+", default=[], metavar="JSON",
                        help="earlier reports (--json) whose programs and kernels this one "
                             "keeps where it does not run them again (a later report's "
                             "replace an earlier one's)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--markdown", type=Path)
    parser.add_argument("--record-cuda", type=Path, metavar="JSON",
                        help="on an NVIDIA machine: build the CUDA originals with nvcc, run "
                             "them on the GPU and write what they printed (for --cuda)")
    parser.add_argument("--cuda-arch", default="sm_90", help="nvcc's -arch for --record-cuda")
    parser.add_argument("--kernels-reference", type=Path, metavar="VALIDATE_JSON",
                        help="kernels/: validate's --reference, a validate.json of a run on an "
                             "NVIDIA GPU (the CUDA originals' recorded results)")
    parser.add_argument("--cuda", type=Path, nargs="+", default=[], metavar="JSON",
                        help="--record-cuda reports (a program in a later one replaces its "
                             "record in an earlier one: a re-run): the ports are compared "
                             "with them")
    args = parser.parse_args()
    sys.path.insert(0, str(args.checkout.resolve()))
    work = (args.workdir or Path(tempfile.mkdtemp(prefix="hip-cpu-bench-"))).resolve()
    work.mkdir(parents=True, exist_ok=True)
    if args.record_cuda:
        names = select(args.hecbench.resolve(), args)
        log(f"{len(names)} CUDA originals, work folder {work}")
        record_cuda(args, names, work, args.record_cuda)
        return 0
    from migrator.toolchain.sides import hip_cpu_toolchain

    toolchain = hip_cpu_toolchain(args.hip_cpu.resolve(), work / "scratch")
    names = [] if args.no_hecbench else select(args.hecbench.resolve(), args)
    log(f"{len(names)} programs, work folder {work}")
    started = time.monotonic()
    bench = Bench(args, toolchain, work)
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        outcomes = list(pool.map(bench.program, names))
    kernels = [] if args.no_kernels else kernel_rows(kernels_validate(args, work))
    kept: dict[str, ProgramOutcome] = {}
    for earlier in map(json.loads, map(Path.read_text, args.previous)):
        # a program of a later report replaces the same program of an earlier one (a re-run)
        kept.update((row["name"], restored(row)) for row in earlier["programs"]
                    if row["name"] not in names)
        if args.no_kernels and earlier.get("kernels"):
            kernels = earlier["kernels"]
    outcomes += kept.values()
    outcomes.sort(key=lambda outcome: outcome.name.lower())
    recorded: dict = {"programs": {}}
    for report in map(json.loads, map(Path.read_text, args.cuda)):
        recorded = {**report, "programs": {**recorded["programs"],
                                           **recorded_again(recorded["programs"],
                                                            report["programs"])}}
    for outcome in outcomes:
        attach_cuda(outcome, recorded["programs"])
    for row in kernels:
        row["cause"] = CAUSES.get(row["name"], row["cause"])
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=args.checkout,
                            capture_output=True, text=True, check=False).stdout.strip()
    report = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="minutes"),
              "commit": commit, "toolchain": toolchain.describe(), "timeout": args.timeout,
              "seconds": round(time.monotonic() - started),
              "cuda": {key: recorded[key] for key in ("date", "gpu", "nvcc", "arch")
                       if key in recorded},
              "counts": count(outcomes), "programs": [asdict(o) for o in outcomes],
              "kernels": kernels}
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    text = markdown(report)
    if args.markdown:
        args.markdown.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
