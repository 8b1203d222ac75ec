"""Parsing HIP with libclang (``-fsyntax-only``) against a chosen HIP header tree.

The arguments follow what makes clang read *only* that tree: ``-nogpuinc`` (no ROCm found on
the machine) with clang's HIP wrapper included by hand, and the tree given with ``-isystem``,
which is searched before ``/usr/include`` (where a distribution's older HIP may live). A HIP
header that still comes from elsewhere (one the tree lacks) is reported as an error: the result
would not be about that tree. Host and device sides are parsed apart, as a compiler does.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

SIDES = ("host", "device")
_WRAPPER = "__clang_hip_runtime_wrapper.h"
_SEVERITIES = {2: "warning", 3: "error", 4: "fatal"}


class ClangError(Exception):
    """libclang or clang's builtin headers are missing: nothing could be checked."""


@dataclass(frozen=True)
class ClangMessage:
    """A diagnostic of one side's parse (warnings, errors and fatal errors)."""

    side: str
    severity: str  # warning / error / fatal
    file: str
    line: int
    column: int
    text: str

    @property
    def is_error(self) -> bool:
        return self.severity != "warning"

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}: {self.severity} [{self.side}]: {self.text}"


def find_resource_dir() -> Path | None:
    """A folder with clang's builtin headers for HIP (``include/__clang_hip_runtime_wrapper.h``):
    ``$ROCMIGRATE_CLANG_RESOURCE_DIR``, then what a ``clang`` on PATH says, then the LLVM
    installs of the Debian/Ubuntu layout (``/usr/lib/llvm-N/lib/clang/*``, newest first)."""
    candidates = []
    if os.environ.get("ROCMIGRATE_CLANG_RESOURCE_DIR"):
        candidates.append(os.environ["ROCMIGRATE_CLANG_RESOURCE_DIR"])
    clang = shutil.which("clang")
    if clang:
        try:
            candidates.append(subprocess.run([clang, "-print-resource-dir"], capture_output=True,
                                             text=True, timeout=30).stdout.strip())
        except (OSError, subprocess.SubprocessError):
            pass
    candidates += sorted(glob.glob("/usr/lib/llvm-*/lib/clang/*"), key=_version_key, reverse=True)
    for candidate in candidates:
        if candidate and (Path(candidate) / "include" / _WRAPPER).is_file():
            return Path(candidate)
    return None


def _version_key(path: str) -> tuple[int, ...]:
    return tuple(int(part) for part in path.replace("/", ".").replace("-", ".").split(".")
                 if part.isdigit())


def clang_arguments(hip_include: Path, resource_dir: Path, side: str, arch: str = "gfx90a",
                    extra: tuple[str, ...] = ()) -> list[str]:
    """The arguments of one side's parse."""
    return ["-x", "hip", "-std=c++17", f"--offload-arch={arch}", "-nogpulib", "-nogpuinc",
            "-include", _WRAPPER, "-D__HIP_PLATFORM_AMD__=1", "-D__HIP_PLATFORM_HCC__=1",
            "-resource-dir", str(resource_dir), "-isystem", str(hip_include),
            "--cuda-host-only" if side == "host" else "--cuda-device-only", "-fsyntax-only",
            *extra]


def check_hip(path: Path, hip_include: Path, sides: tuple[str, ...] = SIDES,
              arch: str = "gfx90a", extra: tuple[str, ...] = (),
              resource_dir: Path | None = None) -> list[ClangMessage]:
    """Clang's warnings and errors for the HIP file ``path`` on each of ``sides``, parsed
    against the HIP headers under ``hip_include``. Raises ClangError when libclang or clang's
    builtin headers are missing."""
    try:
        import clang.cindex as cindex
    except ImportError as err:
        raise ClangError(f"libclang is not installed ({err}): pip install libclang") from None
    resource_dir = resource_dir or find_resource_dir()
    if resource_dir is None:
        raise ClangError(f"no clang builtin headers ({_WRAPPER}) found: install an LLVM "
                         "(Debian: hipcc or libclang-common-N-dev) or set "
                         "ROCMIGRATE_CLANG_RESOURCE_DIR")
    tree = os.path.realpath(hip_include) + os.sep
    messages: list[ClangMessage] = []
    index = cindex.Index.create()
    for side in sides:
        try:
            unit = index.parse(str(path), args=clang_arguments(hip_include, resource_dir, side,
                                                               arch, extra))
        except cindex.TranslationUnitLoadError as err:
            raise ClangError(f"libclang could not parse {path}: {err}") from None
        for diagnostic in unit.diagnostics:
            if diagnostic.severity in _SEVERITIES:
                location = diagnostic.location
                messages.append(ClangMessage(
                    side, _SEVERITIES[diagnostic.severity],
                    location.file.name if location.file else str(path), location.line,
                    location.column, diagnostic.spelling))
        for included in sorted({os.path.realpath(i.include.name) for i in unit.get_includes()}):
            if "/hip/" in included and not included.startswith(tree):
                messages.append(ClangMessage(side, "error", included, 0, 0,
                                             "HIP header taken from outside the checked tree"))
    return messages
