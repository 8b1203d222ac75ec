"""How CMake's HIP language finds the installed HIP (``migrator.toolchain.compilers`` finds hipcc
and reads its release): where a distribution keeps HIP's CMake packages apart from its ROCm
root, a shim root in the build folder with the compiler and flags hipcc itself uses.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..toolchain.compilers import PROBE_TIMEOUT, amd_env, rocm_root
from ..toolchain.process import run_process


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
