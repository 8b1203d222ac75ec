"""Immutable settings passed down from the CLI (and, later, configuration files)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .versions import DEFAULT_ROCM, parse_version


@dataclass(frozen=True)
class Settings:
    rocm: tuple[int, int, int] = parse_version(DEFAULT_ROCM)
    launch_syntax: str = "chevron"  # chevron | ggl
    rename_ext: bool = False
    select: tuple[str, ...] = ()  # rule codes or prefixes; empty = all
    ignore: tuple[str, ...] = ()
    unsafe_fixes: bool = False
    wavefront_size: int = 64
    max_file_bytes: int = 8 * 1024 * 1024
    rules_dir: Path | None = None
    extra: tuple[tuple[str, str], ...] = field(default=())

    def fingerprint(self) -> str:
        """What changes the output: part of the incremental cache key."""
        return repr((self.rocm, self.launch_syntax, self.rename_ext, self.select, self.ignore,
                     self.unsafe_fixes, self.wavefront_size, str(self.rules_dir)))
