"""Where hipcc and nvcc are, what a compiler says its version is, and the installed HIP.

Every command finds a compiler here: on PATH, else in the ``bin`` folder of the install its
variables name, else in its default prefix (hipcc: ``$ROCM_PATH``, ``$HIP_PATH``, ``/opt/rocm``;
nvcc: ``$CUDA_HOME``, ``$CUDA_PATH``, ``/usr/local/cuda``).

The installed HIP's release (``--rocm auto``, `rocmigrate build`) comes from ``hipconfig
--version`` beside hipcc (``5.2.21153-0``: major, minor and a build number, so only major.minor is
a ROCm release), else from ``hip/hip_version.h`` of the HIP that hipcc uses. A real ROCm install
also names its release in ``<rocm>/.info/version``.

AMD's HIP CPU runtime (a folder of headers) is named by an option, ``$ROCMIGRATE_HIP_CPU`` or the
configuration; the C++ compiler that builds for it is ``$CXX`` or g++.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from .process import run_process

QUERY_TIMEOUT = 60  # seconds for hipconfig to answer
PROBE_TIMEOUT = 300  # seconds for a compiler's --version or a test compile
ROCM_PREFIXES = ("/opt/rocm",)  # ROCm's default install prefix, tried after PATH
CUDA_PREFIXES = ("/usr/local/cuda",)  # CUDA's, likewise
HIPCC_PLACES = "on PATH, in $ROCM_PATH/bin, $HIP_PATH/bin or /opt/rocm/bin"  # for messages
HIP_CPU_ENV = "ROCMIGRATE_HIP_CPU"  # the folder of AMD's HIP CPU runtime
HIP_CPU_HOW = ("git clone https://github.com/ROCm/HIP-CPU; it needs a C++17 compiler and TBB: "
               "apt-get install g++ libtbb-dev")
_HIPCONFIG_VERSION = re.compile(r"^\s*(\d+)\.(\d+)(?:\.(\d+))?")
_HEADER_FIELD = re.compile(r"^\s*#\s*define\s+HIP_VERSION_(MAJOR|MINOR|PATCH)\s+(\d+)", re.M)


class HipError(Exception):
    """The installed HIP cannot be read (a usage error of ``--rocm auto``)."""


@dataclass(frozen=True)
class InstalledHip:
    hipcc: str
    version: tuple[int, int, int]  # the ROCm release (a patch release only where .info says)
    version_text: str  # as the installation reports it, e.g. 5.2.21153-0
    read_from: str  # where the version was read: hipconfig --version, a header, .info/version

    def describe(self) -> dict:
        from ..versions import format_version

        return {"hipcc": self.hipcc, "rocm": format_version(self.version),
                "hip_version": self.version_text, "read_from": self.read_from}


def find_hipcc() -> str | None:
    """hipcc on PATH, else in ``$ROCM_PATH/bin``, ``$HIP_PATH/bin`` or ROCm's default prefix."""
    return _find("hipcc", ("ROCM_PATH", "HIP_PATH"), ROCM_PREFIXES)


def find_nvcc() -> str | None:
    """nvcc on PATH, else in ``$CUDA_HOME/bin``, ``$CUDA_PATH/bin`` or CUDA's default prefix."""
    return _find("nvcc", ("CUDA_HOME", "CUDA_PATH"), CUDA_PREFIXES)


# a name a compiler or linker did not find, in the messages of clang (hipcc), then of g++ (HIP's
# CPU runtime): what build's error explanations and validate's verdicts read
MISSING_NAME = (re.compile(r"use of undeclared identifier '([^']+)'"),
                re.compile(r"unknown type name '([^']+)'"),
                re.compile(r"no member named '([^']+)' in"),
                re.compile(r"no (?:matching )?(?:template named|function for call to) '([^'(<]+)"),
                re.compile(r"undefined reference to [`']([^'`(]+)"),
                re.compile(r"[‘']([\w:]+)[’'] was not declared in this scope"),
                re.compile(r"[‘']([\w:]+)[’'] (?:is not a member of|has not been declared)"),
                re.compile(r"[‘']([\w:]+)[’'] does not name a type"))


def missing_names(output: str) -> list[str]:
    """The names a compiler's or linker's ``output`` says were not declared or defined, in
    order, each once (read from its error lines)."""
    names: dict[str, None] = {}
    for line in output.splitlines():
        if "error" not in line and "undefined reference" not in line:
            continue
        for pattern in MISSING_NAME:
            found = pattern.search(line)
            if found:
                names.setdefault(found.group(1).strip())
                break
    return list(names)


def find_cxx() -> str | None:
    """The C++ compiler HIP's CPU runtime is built with: ``$CXX``, else g++ on PATH."""
    named = os.environ.get("CXX", "").strip()
    return shutil.which(named) if named else shutil.which("g++")


def find_hip_cpu(folder: str | Path | None) -> Path:
    """AMD's HIP CPU runtime (github.com/ROCm/HIP-CPU): ``folder`` (an option or configuration
    key), else ``$ROCMIGRATE_HIP_CPU``; the folder that holds ``include/hip/hip_runtime.h``.
    Raises HipError saying where it looked and how to get it."""
    chosen = folder or os.environ.get(HIP_CPU_ENV, "").strip()
    if not chosen:
        raise HipError(f"HIP's CPU runtime not named: give --hip-cpu DIR, set {HIP_CPU_ENV} or "
                       f"hip-cpu in the configuration ({HIP_CPU_HOW})")
    root = Path(chosen).expanduser()
    header = root / "include" / "hip" / "hip_runtime.h"
    try:
        text = header.read_text(encoding="utf-8", errors="replace")[:65536]
    except OSError:
        raise HipError(f"{root}: no include/hip/hip_runtime.h: not HIP's CPU runtime "
                       f"({HIP_CPU_HOW})") from None
    if "__HIP_CPU_RT__" not in text:
        raise HipError(f"{header}: not HIP's CPU runtime (no __HIP_CPU_RT__) ({HIP_CPU_HOW})")
    return root.resolve()


def _find(name: str, variables: tuple[str, ...], prefixes: tuple[str, ...]) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    for root in filter(None, [*map(os.environ.get, variables), *prefixes]):
        candidate = Path(root) / "bin" / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def compiler_version(compiler: str, env: dict[str, str] | None = None) -> str:
    """The lines of ``compiler --version`` that name a version or release, joined by '; ' (else
    its first line: ``g++ (Debian 12.2.0-14) 12.2.0``)."""
    done = run_process([compiler, "--version"], None, PROBE_TIMEOUT, env=env)
    if done.error is not None or done.timed_out:
        return f"unknown ({done.error or f'no answer within {PROBE_TIMEOUT} s'})"
    output = [line.strip() for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    lines = [line for line in output if re.search(r"version|release", line, re.IGNORECASE)]
    return "; ".join(lines) or (output[0] if output else "unknown")


def amd_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """This process's environment with HIP's AMD platform chosen: without an AMD GPU, HIP's tools
    otherwise guess the NVIDIA platform where nvcc is installed."""
    return {**os.environ, "HIP_PLATFORM": "amd", **(extra or {})}


def installed_hip(hipcc: str | None = None) -> InstalledHip | None:
    """The HIP that ``hipcc`` (default: find_hipcc()) belongs to; None without hipcc. Raises
    HipError when hipcc is there but no version can be read."""
    hipcc = hipcc or find_hipcc()
    if hipcc is None:
        return None
    bin_dir = Path(hipcc).resolve().parent
    tried = []
    hipconfig = bin_dir / "hipconfig"
    if hipconfig.is_file():
        done = run_process([str(hipconfig), "--version"], None, QUERY_TIMEOUT, env=amd_env())
        text = (done.stdout or "").strip().splitlines()[-1:] or [""]
        match = _HIPCONFIG_VERSION.match(text[0])
        if done.rc == 0 and match:
            return InstalledHip(hipcc, _release(bin_dir.parent, match), text[0].strip(),
                                f"{hipconfig} --version")
        tried.append(f"{hipconfig} --version said {text[0]!r}" if done.rc == 0 else
                     f"{hipconfig} --version failed ({done.error or f'exit {done.rc}'})")
    header = bin_dir.parent / "include" / "hip" / "hip_version.h"
    try:
        fields = dict(_HEADER_FIELD.findall(header.read_text(errors="replace")))
    except OSError as err:
        fields = {}
        tried.append(f"{header}: {err.strerror}")
    if "MAJOR" in fields and "MINOR" in fields:
        text = ".".join(fields[key] for key in ("MAJOR", "MINOR", "PATCH") if key in fields)
        major_minor = _HIPCONFIG_VERSION.match(f"{fields['MAJOR']}.{fields['MINOR']}")
        return InstalledHip(hipcc, _release(bin_dir.parent, major_minor), text, str(header))
    if header.is_file():
        tried.append(f"{header} defines no HIP_VERSION_MAJOR/MINOR")
    raise HipError(f"hipcc found at {hipcc} but its HIP version cannot be read: "
                   f"{'; '.join(tried)}")


def _release(prefix: Path, hip_version: re.Match) -> tuple[int, int, int]:
    """The ROCm release: ``<prefix>/.info/version`` where a ROCm install has one and it agrees
    with HIP's major.minor (it carries the patch release), else HIP's major.minor."""
    major, minor = int(hip_version.group(1)), int(hip_version.group(2))
    try:
        info = _HIPCONFIG_VERSION.match((prefix / ".info" / "version").read_text())
    except OSError:
        info = None
    if info and (int(info.group(1)), int(info.group(2))) == (major, minor):
        return major, minor, int(info.group(3) or 0)
    return major, minor, 0


def rocm_root(hipcc: str) -> Path:
    """The ROCm prefix of ``hipcc``'s HIP: ``hipconfig --rocmpath``, else hipcc's own prefix."""
    hipconfig = Path(hipcc).resolve().parent / "hipconfig"
    if hipconfig.is_file():
        done = run_process([str(hipconfig), "--rocmpath"], None, QUERY_TIMEOUT, env=amd_env())
        said = (done.stdout or "").strip()
        if done.rc == 0 and said and Path(said).is_dir():
            return Path(said)
    return Path(hipcc).resolve().parent.parent
