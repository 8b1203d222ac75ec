"""The repository's own inputs (kernels/, fixtures/) that tests convert two ways and compare:
every CUDA source, every build file."""

from __future__ import annotations

from pathlib import Path

from migrator import buildfiles

ROOT = Path(__file__).resolve().parent.parent
_FOLDERS = ("kernels", "fixtures")
_CUDA_SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".cpp")


def cuda_sources() -> list[Path]:
    return [path for folder in _FOLDERS for path in sorted((ROOT / folder).rglob("*"))
            if path.suffix in _CUDA_SUFFIXES and path.is_file()]


def build_files() -> list[Path]:
    return [path for folder in _FOLDERS for path in sorted((ROOT / folder).rglob("*"))
            if path.is_file() and buildfiles.language_of(path.name)]
