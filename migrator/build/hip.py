"""The installed HIP: where hipcc is, which release it is (``--rocm auto``), and how CMake's HIP
language finds it.

The version comes from ``hipconfig --version`` beside hipcc (``5.2.21153-0``: major, minor and a
build number, so only major.minor is a ROCm release), else from ``hip/hip_version.h`` of the HIP
that hipcc uses. A real ROCm install also names its release in ``<rocm>/.info/version``.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from ..validate.process import run_process

PROBE_TIMEOUT = 60  # seconds for hipconfig or a test compile
DEFAULT_PREFIXES = ("/opt/rocm",)  # ROCm's default install prefix, tried after PATH
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
    found = shutil.which("hipcc")
    if found:
        return found
    roots = [os.environ.get("ROCM_PATH"), os.environ.get("HIP_PATH"), *DEFAULT_PREFIXES]
    for root in filter(None, roots):
        candidate = Path(root) / "bin" / "hipcc"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


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
        done = run_process([str(hipconfig), "--version"], None, PROBE_TIMEOUT, env=amd_env())
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
        done = run_process([str(hipconfig), "--rocmpath"], None, PROBE_TIMEOUT, env=amd_env())
        said = (done.stdout or "").strip()
        if done.rc == 0 and said and Path(said).is_dir():
            return Path(said)
    return Path(hipcc).resolve().parent.parent


def hipcc_clang_command(hipcc: str, folder: Path, arch: str) -> list[str] | None:
    """The clang command hipcc runs for a HIP compile (``HIPCC_VERBOSE=1`` prints it as
    ``hipcc-cmd: ...``), from a test compile in ``folder``; None when hipcc prints none."""
    import shlex

    folder.mkdir(parents=True, exist_ok=True)
    source = folder / "probe.hip"
    source.write_text("#include <hip/hip_runtime.h>\n__global__ void probe(int* x) { *x = 1; }\n")
    done = run_process([hipcc, f"--offload-arch={arch}", "-c", str(source), "-o",
                        str(folder / "probe.o")], folder, PROBE_TIMEOUT,
                       env=amd_env({"HIPCC_VERBOSE": "1", "TMPDIR": str(folder)}))
    for line in (done.stdout + done.stderr).splitlines():
        if line.startswith("hipcc-cmd:"):
            try:
                return shlex.split(line[len("hipcc-cmd:"):])
            except ValueError:
                return None
    return None


@dataclass(frozen=True)
class CMakeSetup:
    """What CMake's HIP language needs to find this HIP: configure arguments, environment, and
    what was done (empty: the plain ROCm layout, nothing needed)."""

    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    note: str = ""


def cmake_setup(hipcc: str, folder: Path, arch: str) -> CMakeSetup:
    """CMake finds HIP's language support in ``<rocm>/lib/cmake/hip-lang``. A distribution that
    installs it elsewhere (Debian: ``/usr/lib/<multiarch>/cmake/hip-lang``) gets a shim ROCm
    root in ``folder``: ``lib/cmake/<package>`` links to each package folder beside
    hip-lang, and the compiler and device-library flags hipcc itself uses."""
    root = rocm_root(hipcc)
    if (root / "lib" / "cmake" / "hip-lang" / "hip-lang-config.cmake").is_file():
        return CMakeSetup()
    found = sorted(root.glob("lib/*/cmake/hip-lang/hip-lang-config.cmake"))
    if not found:
        return CMakeSetup(note=f"no hip-lang-config.cmake under {root}/lib: CMake's HIP "
                               "language may not find this HIP")
    packages = found[0].parent.parent
    shim = folder / "rocm-shim"
    links = shim / "lib" / "cmake"
    links.mkdir(parents=True, exist_ok=True)
    for package in sorted(packages.iterdir()):
        link = links / package.name
        if package.is_dir() and not link.is_symlink():
            link.symlink_to(package)
    args = [f"-DCMAKE_HIP_COMPILER_ROCM_ROOT={shim}"]
    command = hipcc_clang_command(hipcc, folder / "probe", arch)
    flags = [arg for arg in command or () if arg.startswith(("--rocm-path=",
                                                             "--hip-device-lib-path="))]
    if command:
        args.append(f"-DCMAKE_HIP_COMPILER={command[0]}")
    if flags:
        args.append(f"-DCMAKE_HIP_FLAGS={' '.join(flags)}")
    prefix = os.pathsep.join(filter(None, (str(shim), os.environ.get("CMAKE_PREFIX_PATH"))))
    return CMakeSetup(tuple(args), (("CMAKE_PREFIX_PATH", prefix),),
                      f"{root}/lib/cmake/hip-lang is missing (this HIP keeps its CMake packages "
                      f"in {packages}): configured through a ROCm root made in the build folder "
                      f"({shim}: links to those packages) with the compiler and flags hipcc uses "
                      f"({' '.join(args[1:]) or 'hipcc printed none'})")
