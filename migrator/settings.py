"""Immutable settings, resolved once by the workspace (flags > configuration file > defaults)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from .versions import DEFAULT_OFFLOAD_ARCHS, DEFAULT_ROCM, parse_version


RUNTIMES = ("rocm", "hip-cpu")
HIP_CPU_ROCM = "5.2"  # the ROCm release whose API HIP's CPU runtime is converted for


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
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (glob, codes)
    exclude: tuple[str, ...] = ()  # glob patterns of paths never checked
    report_unused_suppressions: bool = False  # lint: RMG001 for suppressions that silence nothing
    write_markers: bool = True  # convert writes "// rocmigrate CODE: ..." markers; lint does not
    optimize: bool = True  # run the AMD optimisation rules (convert --no-optimize: a pure port)
    roc: bool = False  # cuBLAS/cuRAND/cuSPARSE/cuSOLVER -> the roc* libraries, not the hip* layers
    dnn: str = "report"  # report (cuDNN is reported) | miopen (renamed to MIOpen)
    offload_archs: tuple[str, ...] = DEFAULT_OFFLOAD_ARCHS  # AMD GPUs build files target
    # --clang: the folder the files' paths are read against; rules whose own proof of a type
    # fails ask libclang (migrator.clang.types). None: libclang is not used
    clang_root: Path | None = None
    compile_commands: Path | None = None  # --compile-commands: libclang's flags per file
    # what runs the port: rocm (an AMD GPU's HIP) or hip-cpu (AMD's HIP CPU runtime, 64-lane
    # wavefronts on the CPU: see for_runtime)
    runtime: str = "rocm"
    # HIP's CPU runtime's folder, from the configuration (validate --hip-compiler hip-cpu; the
    # option and $ROCMIGRATE_HIP_CPU are read where it is used); changes no output
    hip_cpu: Path | None = None

    @property
    def table_variants(self) -> tuple[str, ...]:
        """The API tables' library choices these settings make (rules/api/<variant>/)."""
        return ("roc",) * self.roc + ("miopen",) * (self.dnn == "miopen")

    def fingerprint(self) -> str:
        """The settings that change a file's output or findings: part of the incremental cache
        key (the rules' and tables' own content is the other part: see runner)."""
        return repr((self.rocm, self.launch_syntax, self.rename_ext, self.select, self.ignore,
                     self.unsafe_fixes, self.wavefront_size, str(self.rules_dir),
                     self.optimize, self.per_file_ignores, self.exclude, self.roc, self.dnn,
                     self.offload_archs, self.runtime)) + (
            repr((str(self.clang_root), str(self.compile_commands))) if self.clang_root else "")

    def for_runtime(self, runtime: str) -> "Settings":
        """These settings for ``runtime``. HIP's CPU runtime implements about HIP 5.x's API
        without the warp-sync builtins and bf16, and a C++ compiler reads its programs: the
        target becomes ROCm 5.2 (the builtins lowered, bf16 as at 5.x) and launches
        ``hipLaunchKernelGGL``."""
        if runtime not in RUNTIMES:
            raise ValueError(f"unknown runtime {runtime!r} (expected {' or '.join(RUNTIMES)})")
        if runtime == "hip-cpu":
            return replace(self, runtime=runtime, rocm=parse_version(HIP_CPU_ROCM),
                           launch_syntax="ggl")
        return replace(self, runtime=runtime)

    def for_file(self, rel: str) -> "Settings":
        """These settings with the per-file ignores that match ``rel`` (a posix path)."""
        from fnmatch import fnmatch

        extra = tuple(code for pattern, codes in self.per_file_ignores
                      if fnmatch(rel, pattern) or fnmatch(rel.rsplit("/", 1)[-1], pattern)
                      for code in codes)
        return replace(self, ignore=self.ignore + extra) if extra else self
