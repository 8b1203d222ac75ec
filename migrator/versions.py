"""ROCm/HIP version numbers as comparable tuples."""

from __future__ import annotations

import re

# The releases rocmigrate knows: the oldest version in the API tables (rules/api) and the newest
# release the tables and rules were checked against. A target outside them is refused: the tables
# cannot say what exists there (tests/test_cli_config.py keeps these in step with the tables).
OLDEST_ROCM = "1.5"
NEWEST_ROCM = "6.4"
DEFAULT_ROCM = NEWEST_ROCM
_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?$")

# The AMD GPU architectures code is built for unless told otherwise: MI250 (CDNA2) and MI300
# (CDNA3), the Instinct generations the API tables' newest releases support.
DEFAULT_OFFLOAD_ARCHS = ("gfx90a", "gfx942")
# The first release that supports a default architecture (ROCm 6.0 added MI300; Debian's HIP 5.2
# compiler rejects gfx942 as an invalid target ID): a target before it leaves it out.
_OFFLOAD_ARCH_SINCE = {"gfx942": (6, 0, 0)}
# gfx + a generation and stepping (gfx906, gfx90a, gfx942, gfx1100), or a generic target
# (gfx9-generic, gfx10-3-generic), with optional target features (gfx90a:xnack-).
_OFFLOAD_ARCH = re.compile(r"^gfx(?:\d{2,3}[0-9a-f]|\d{1,2}(?:-\d)?-generic)"
                           r"(?::(?:sramecc|xnack)[+-])*$")


def parse_version(text: str) -> tuple[int, int, int]:
    match = _VERSION.match(text.strip())
    if not match:
        raise ValueError(f"not a version number: {text!r} (expected X.Y or X.Y.Z)")
    major, minor, patch = match.groups()
    return int(major), int(minor), int(patch or 0)


def parse_target(text: str) -> tuple[int, int, int]:
    """A target ROCm release (``--rocm``, ``rocm =`` in a config file): a version number within
    the releases rocmigrate knows, OLDEST_ROCM to NEWEST_ROCM (any patch release of either)."""
    version = parse_version(text)
    oldest, newest = parse_version(OLDEST_ROCM), parse_version(NEWEST_ROCM)
    if version[:2] > newest[:2]:
        raise ValueError(f"ROCm {text.strip()} is newer than the newest release rocmigrate knows "
                         f"({NEWEST_ROCM}): its API tables cannot say what {text.strip()} added "
                         f"or removed; target {NEWEST_ROCM} to convert with what {NEWEST_ROCM} has")
    if version[:2] < oldest[:2]:
        raise ValueError(f"ROCm {text.strip()} is older than the oldest release rocmigrate knows "
                         f"({OLDEST_ROCM}); known releases: {OLDEST_ROCM} to {NEWEST_ROCM}")
    return version


def format_version(version: tuple[int, int, int]) -> str:
    major, minor, patch = version
    return f"{major}.{minor}" if patch == 0 else f"{major}.{minor}.{patch}"


def parse_offload_archs(values) -> tuple[str, ...]:
    """AMD GPU architecture names (``--offload-arch``, ``offload-arch`` in a config file): each
    value may hold several, comma-separated; duplicates dropped, order kept. Raises ValueError
    naming the first value that is not an AMD architecture (an sm_80 left from CUDA, a typo)."""
    archs: list[str] = []
    for value in values:
        for name in (part.strip() for part in value.split(",")):
            if not name:
                continue
            if not _OFFLOAD_ARCH.match(name):
                hint = (" (a CUDA architecture: name the AMD GPU instead)"
                        if re.match(r"^(sm|compute)_\d+", name) or name.isdigit() else "")
                raise ValueError(f"{name!r} is not an AMD GPU architecture{hint}; expected "
                                 "gfx and its number, e.g. gfx90a (MI250), gfx942 (MI300), "
                                 "gfx1100 (RX 7900), optionally with :xnack+/- or :sramecc+/-")
            if name not in archs:
                archs.append(name)
    if not archs:
        raise ValueError("no architecture given (expected e.g. gfx90a)")
    return tuple(archs)


def default_offload_archs(rocm: tuple[int, int, int]) -> tuple[str, ...]:
    """The default architectures a target release supports (MI250 always; MI300 from 6.0)."""
    return tuple(arch for arch in DEFAULT_OFFLOAD_ARCHS
                 if rocm >= _OFFLOAD_ARCH_SINCE.get(arch, (0, 0, 0)))
