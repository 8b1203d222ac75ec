"""How `rocmigrate validate` and `rocmigrate harness` build each side: nvcc for the CUDA
original, and the port's compiler, found by ``migrator.toolchain.compilers``; ``compile_binary``
compiles one program with a side's ``Toolchain`` within the time limit.

The port, with ``--hip-compiler auto``: hipcc for AMD when an AMD GPU is present
(``devices.amd_gpu``: ``/dev/kfd`` and a gfx agent in ``rocminfo``); else hipcc on its NVIDIA
platform when a test compile shows that it works (a platform name proves nothing: Debian's HIP
5.2 NVIDIA headers do not compile against CUDA 13); else nvcc through rocmigrate's own NVIDIA
headers (``migrator.nvidia``). With ``--hip-compiler hip-cpu``: a C++17 compiler against AMD's
HIP CPU runtime, whose binaries run on the CPU with 64-lane wavefronts (``hip_cpu_toolchain``).
"""

from __future__ import annotations

import os
import shlex
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .compilers import (HIP_CPU_HOW, HIPCC_PLACES, PROBE_TIMEOUT, HipError, compiler_version,
                        find_cxx, find_hip_cpu, find_hipcc)
from .devices import amd_gpu
from .process import run_process

HIP_COMPILERS = ("auto", "hipcc", "nvcc", "hip-cpu")
BUILD_TIMEOUT = 900  # seconds for one compile
TAIL = 2000  # characters of compiler or stderr output kept in a report
_PROBE_SOURCE = ("#include <hip/hip_runtime.h>\n"
                 "int main() { hipError_t status = hipSuccess; return (int)status; }\n")


class ToolchainError(Exception):
    """A compiler the run needs is missing (a usage error)."""


@dataclass(frozen=True)
class Toolchain:
    """One way of building a program: compiler, flags, environment, and why it was chosen."""

    name: str  # nvcc | hipcc-amd | hipcc-nvidia | nvcc-nvidia-headers
    compiler: str
    version: str
    reason: str
    arch_flags: tuple[str, ...]
    language: str  # the -x language every source is compiled as (cu or hip)
    env: tuple[tuple[str, str], ...] = ()
    include_dirs: tuple[str, ...] = ()  # the toolchain's own headers, before the program's
    link_flags: tuple[str, ...] = ()  # the toolchain's own libraries, after the user's flags
    optimization: str = "-O3"

    def command(self, source: Path, binary: Path, include_dirs: tuple[Path, ...] = (),
                extra: tuple[str, ...] = ()) -> list[str]:
        """The compile-and-link line; ``extra`` (the user's flags: -I, -L, -l...) comes after
        the source so that libraries resolve its symbols."""
        includes = [arg for folder in (*self.include_dirs, *map(str, include_dirs))
                    for arg in ("-I", folder)]
        return [self.compiler, self.optimization, "-std=c++17", *self.arch_flags, *includes,
                "-x", self.language, "-o", str(binary), str(source), *extra, *self.link_flags]

    @property
    def runs_on(self) -> str:
        """What its binaries need to run (a devices.gpu_check platform: cpu, amd or nvidia)."""
        return runs_on(self.name)

    def environment(self) -> dict[str, str]:
        return {**os.environ, **dict(self.env)}

    def display(self, command: list[str]) -> str:
        """The command as a shell line, with the environment it runs under."""
        return shlex.join([f"{key}={value}" for key, value in self.env] + command)

    def describe(self) -> dict:
        return {"name": self.name, "compiler": self.compiler, "version": self.version,
                "env": dict(self.env), "arch_flags": list(self.arch_flags),
                "include_dirs": list(self.include_dirs), "link_flags": list(self.link_flags),
                "reason": self.reason}


def runs_on(name: str) -> str:
    """What the binaries of the toolchain named ``name`` need to run (a devices.gpu_check
    platform: cpu, amd or nvidia); a report keeps only the name."""
    return {"hipcc-amd": "amd", "hip-cpu": "cpu"}.get(name, "nvidia")


NO_NVCC = "nvcc not found: the CUDA side is not built"  # (--hip-compiler hip-cpu needs no nvcc)


def cuda_description(cuda: Toolchain | None) -> dict:
    """A report's description of the CUDA side's toolchain, also where there is none (no nvcc:
    the port on HIP's CPU runtime is built alone)."""
    if cuda is not None:
        return cuda.describe()
    return {"name": "nvcc", "compiler": "", "version": "", "env": {}, "arch_flags": [],
            "include_dirs": [], "link_flags": [], "reason": NO_NVCC}


def cuda_toolchain(nvcc: str, cuda_arch: str) -> Toolchain:
    return Toolchain("nvcc", nvcc, compiler_version(nvcc), "the CUDA original is built with nvcc",
                     (f"-arch={cuda_arch}",), "cu")


def hip_toolchain(choice: str, nvcc: str | None, cuda_arch: str, offload_arch: str,
                  scratch: Path, build_flags: tuple[str, ...] = (),
                  hip_cpu: str | Path | None = None) -> Toolchain:
    """The toolchain that builds the port (``choice``: auto | hipcc | nvcc | hip-cpu); test
    compiles and generated headers go under ``scratch``; ``hip_cpu``: the CPU runtime's folder
    (None: $ROCMIGRATE_HIP_CPU)."""
    if choice not in HIP_COMPILERS:
        raise ToolchainError(f"unknown HIP compiler {choice!r} (expected one of "
                             f"{', '.join(HIP_COMPILERS)})")
    if choice == "hip-cpu":
        return hip_cpu_toolchain(hip_cpu, scratch)
    if nvcc is None:
        raise ToolchainError("nvcc not found: put CUDA's bin folder on PATH or set CUDA_HOME "
                             "(--hip-compiler hip-cpu builds and runs the port without it)")
    if choice == "nvcc":
        return _nvcc_with_headers(nvcc, cuda_arch, scratch, "--hip-compiler nvcc", build_flags)
    hipcc = find_hipcc()
    if hipcc is None:
        if choice == "hipcc":
            raise ToolchainError(f"hipcc not found ({HIPCC_PLACES}; --hip-compiler hipcc)")
        return _nvcc_with_headers(nvcc, cuda_arch, scratch, "hipcc not found", build_flags)
    has_gpu, seen = amd_gpu()
    if has_gpu:
        return _hipcc_amd(hipcc, offload_arch, seen)
    works, detail = _probe_hipcc_nvidia(hipcc, nvcc, cuda_arch, scratch / "probe")
    if works:
        return _hipcc_nvidia(hipcc, nvcc, cuda_arch, f"{seen}; hipcc's NVIDIA platform compiles")
    failure = f"hipcc's NVIDIA platform failed a test compile ({detail})"
    if choice == "hipcc":  # asked for: build for AMD, which runs only where an AMD GPU is
        return _hipcc_amd(hipcc, offload_arch, f"--hip-compiler hipcc; {seen}; {failure}; "
                          "binaries run only on an AMD GPU")
    return _nvcc_with_headers(nvcc, cuda_arch, scratch, f"{seen}; {failure}", build_flags)


def hip_cpu_toolchain(folder: str | Path | None, scratch: Path) -> Toolchain:
    """The port built with a C++17 compiler against AMD's HIP CPU runtime, which runs kernels
    on the CPU with 64-lane wavefronts, after rocmigrate's prelude for what the runtime lacks
    (``templates/hip_cpu/prelude.h.j2``, written under ``scratch``, included first)."""
    from ..templating import render

    try:
        root = find_hip_cpu(folder)
    except HipError as err:
        raise ToolchainError(str(err)) from None
    compiler = find_cxx()
    if compiler is None:
        raise ToolchainError(f"no C++ compiler for HIP's CPU runtime: set CXX or install g++ "
                             f"({HIP_CPU_HOW})")
    prelude = scratch / "hip-cpu" / "rocmigrate_hip_cpu.h"
    prelude.parent.mkdir(parents=True, exist_ok=True)
    prelude.write_text(render("hip_cpu/prelude.h.j2"), encoding="utf-8")
    return Toolchain("hip-cpu", compiler, compiler_version(compiler),
                     f"--hip-compiler hip-cpu: AMD's HIP CPU runtime at {root} (64-lane "
                     "wavefronts on the CPU)", ("-include", str(prelude)), "c++",
                     include_dirs=(str(root / "include"),), link_flags=("-ltbb", "-lpthread"),
                     optimization="-O1")


def _hipcc_amd(hipcc: str, offload_arch: str, reason: str) -> Toolchain:
    env = (("HIP_PLATFORM", "amd"),)
    return Toolchain("hipcc-amd", hipcc, compiler_version(hipcc, {**os.environ, **dict(env)}),
                     reason, (f"--offload-arch={offload_arch}",), "hip", env)


def _nvidia_env(nvcc: str) -> tuple[tuple[str, str], ...]:
    return (("HIP_PLATFORM", "nvidia"), ("CUDA_PATH", str(Path(nvcc).resolve().parent.parent)))


def _hipcc_nvidia(hipcc: str, nvcc: str, cuda_arch: str, reason: str) -> Toolchain:
    env = _nvidia_env(nvcc)
    return Toolchain("hipcc-nvidia", hipcc, compiler_version(hipcc, {**os.environ, **dict(env)}),
                     reason, (f"-arch={cuda_arch}",), "cu", env)


def _probe_hipcc_nvidia(hipcc: str, nvcc: str, cuda_arch: str, folder: Path) -> tuple[bool, str]:
    """Compile a tiny HIP program with hipcc on the NVIDIA platform: (works, what went wrong)."""
    folder.mkdir(parents=True, exist_ok=True)
    source = folder / "probe.cpp"
    source.write_text(_PROBE_SOURCE)
    env = {**os.environ, **dict(_nvidia_env(nvcc))}
    done = run_process([hipcc, f"-arch={cuda_arch}", "-o", str(folder / "probe"), str(source)],
                       None, PROBE_TIMEOUT, env=env)
    if done.error is not None or done.timed_out:
        return False, done.error or f"no answer within {PROBE_TIMEOUT} s"
    if done.rc == 0:
        return True, ""
    output = (done.stdout + done.stderr).splitlines()
    errors = [line.strip() for line in output if "error" in line.lower()]
    return False, f"exit {done.rc}: {(errors or output or ['no output'])[0][:200]}"


def _nvcc_with_headers(nvcc: str, cuda_arch: str, scratch: Path, reason: str,
                       build_flags: tuple[str, ...] = ()) -> Toolchain:
    from .. import apitables
    from ..nvidia import header_search_path, write_nvidia_headers

    headers = scratch / "nvidia-headers"
    folders = tuple(Path(flag[2:] or following) for flag, following
                    in zip(build_flags, (*build_flags[1:], "")) if flag.startswith("-I"))
    write_nvidia_headers(apitables.load(), headers, header_search_path(folders, nvcc))
    return Toolchain("nvcc-nvidia-headers", nvcc, compiler_version(nvcc),
                     f"{reason}: nvcc with rocmigrate's NVIDIA headers (rocmigrate nvidia-headers)",
                     (f"-arch={cuda_arch}",), "cu", include_dirs=(str(headers),))


@dataclass
class Build:
    toolchain: str  # the Toolchain's name
    command: str  # the shell line, environment included
    ok: bool
    seconds: float
    output_tail: str = ""


def compile_binary(toolchain: Toolchain, source: Path, binary: Path,
                   include_dirs: tuple[Path, ...], build_flags: tuple[str, ...] = (),
                   shown: Callable[[str], str] = lambda output: output[-TAIL:]) -> Build:
    """Compile ``source`` into ``binary``; the report keeps ``shown(output)`` of a compile.
    The compiler's temporary files go beside the binary (HIP 5.2's hipcc leaves an empty folder
    in TMPDIR per compile); like a program, the compiler and every process it starts are
    killed at the time limit."""
    binary.parent.mkdir(parents=True, exist_ok=True)
    command = toolchain.command(source, binary, include_dirs, build_flags)
    start = time.perf_counter()
    done = run_process(command, None, BUILD_TIMEOUT,
                       env={**toolchain.environment(), "TMPDIR": str(binary.parent)})
    if done.error is not None:
        ok, output = False, done.error
    elif done.timed_out:
        ok, output = False, f"the compile took longer than {BUILD_TIMEOUT} s and was stopped"
    else:
        ok, output = done.rc == 0 and binary.is_file(), done.stdout + done.stderr
    return Build(toolchain.name, toolchain.display(command), ok,
                 round(time.perf_counter() - start, 3), shown(output))
