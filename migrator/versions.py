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
