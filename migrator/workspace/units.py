"""Translation units: the files of a tree a compiler builds one by one, and the one that builds
each file another file includes (``build`` compiles a converted tree file by file; ``harness``
reads the kernels of an included file through the unit that includes it)."""

from __future__ import annotations

import re
from pathlib import Path

from ..parsing.tokens import LAUNCH_OPENING
from .includes import local_includes

SOURCE_SUFFIXES = (".hip", ".cu")  # always translation units
CXX_SUFFIXES = (".cpp", ".cc", ".cxx", ".c++", ".C")  # translation units when they hold GPU code
HEADER_SUFFIXES = (".h", ".hpp", ".hh", ".hxx", ".cuh", ".inl", ".inc", ".tpp")
_GPU_CODE = re.compile(rb"hip/hip_runtime|__global__|\bhip[A-Z]\w*\s*\(|" + LAUNCH_OPENING)


def translation_units(root: Path, files: list[str]) -> list[str]:
    """The files of ``files`` (relative to ``root``) compiled one by one: .hip and .cu files,
    and C++ files that hold GPU code (a kernel, a launch, a hip* call, hip_runtime.h)."""
    units = []
    for rel in files:
        if rel.endswith(SOURCE_SUFFIXES):
            units.append(rel)
        elif rel.endswith(CXX_SUFFIXES):
            try:
                if _GPU_CODE.search((root / rel).read_bytes()):
                    units.append(rel)
            except OSError:
                continue
    return units


def compiled_in(root: Path, files: list[str]) -> dict[str, str]:
    """file -> the translation unit compiled for it, for the files another one includes
    (HeCBench's main.cu includes kernels.cu or kernels.h, which do not compile alone): the
    first unit (by path) that no other file includes and that includes it, directly or through
    another header; the file itself when none does. One per file, however many include it."""
    included = {rel: local_includes(root, rel) - {rel} for rel in files}
    reached = set().union(*included.values())
    tops = sorted(translation_units(root, [rel for rel in files if rel not in reached]))
    return {rel: next((top for top in tops if rel in included[top]), rel)
            for rel in files if rel in reached}
