"""Per-file results, shared by the runner, its workers and the renderers (no engine imports, so a
fully cached run never loads the parser)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .diagnostics import Finding

CONVERTIBLE_SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".hh", ".hxx", ".cpp", ".cc", ".cxx", ".c",
                        ".inl", ".hip")


@dataclass
class FileResult:
    """What happened to one file. Workers return these; they never raise."""

    rel: str
    status: str  # converted / unchanged / copied / cached / skipped / failed
    message: str = ""
    findings: list[Finding] = field(default_factory=list)
    output: bytes | None = None
    input_hash: str = ""
    support: tuple[str, ...] = ()  # support headers the output includes (written beside it)
