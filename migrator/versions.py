"""ROCm/HIP version numbers as comparable tuples."""

from __future__ import annotations

import re

DEFAULT_ROCM = "6.4"
_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?$")


def parse_version(text: str) -> tuple[int, int, int]:
    match = _VERSION.match(text.strip())
    if not match:
        raise ValueError(f"not a version number: {text!r} (expected X.Y or X.Y.Z)")
    major, minor, patch = match.groups()
    return int(major), int(minor), int(patch or 0)


def format_version(version: tuple[int, int, int]) -> str:
    major, minor, patch = version
    return f"{major}.{minor}" if patch == 0 else f"{major}.{minor}.{patch}"
