"""The tables of what HIP declares (rules/portability/*.tsv, scripts/gen_hip_declared.py), read
once, and which release's column a target reads."""

from __future__ import annotations

import functools
from pathlib import Path

_HERE = Path(__file__).resolve().parent
HIP_6_4 = (6, 4, 0)


@functools.lru_cache(maxsize=None)
def table(name: str) -> tuple[dict[str, str], ...]:
    """The rows of ``name`` as dicts (comment lines skipped)."""
    lines = [line for line in (_HERE / name).read_text(encoding="utf-8").split("\n")
             if line.strip() and not line.startswith("#")]
    header = lines[0].split("\t")
    return tuple(dict(zip(header, line.split("\t"))) for line in lines[1:])


def has(row: dict[str, str], rocm: tuple[int, int, int]) -> bool:
    """Does the target's HIP have the row's name? Only HIP 5.2.3 and 6.4.3 were read: a target
    older than 6.4 is taken to have what 5.2 has (a name added in between is reported there)."""
    return row["hip_6_4" if rocm >= HIP_6_4 else "hip_5_2"] == "yes"
