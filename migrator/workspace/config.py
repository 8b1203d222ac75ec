"""Configuration: ``[tool.rocmigrate]`` in ``pyproject.toml`` or a ``.rocmigrate.toml`` file.

Found by walking up from the first path given (or the working directory); ``.rocmigrate.toml``
wins over ``pyproject.toml`` in the same folder. Unknown keys, wrong types and values no command
accepts are errors naming the file: a typo must not silently switch a check off. Rule codes are
checked where the rules are known (``resolve``: a rules directory may add codes).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from ..fsutil import MiB, read_regular
from ..versions import parse_offload_archs, parse_target
from ..settings import RUNTIMES

EXECUTORS = ("local", "slurm")  # (migrator.cluster reads the slurm table)


class ConfigError(Exception):
    pass


# key -> (python type, description)
KEYS = {
    "select": (list, "rule codes or prefixes to run (default: all stable rules)"),
    "ignore": (list, "rule codes or prefixes to skip"),
    "per-file-ignores": (dict, "glob pattern -> codes ignored in matching files"),
    "exclude": (list, "glob patterns of paths never checked"),
    "rocm": (str, "target ROCm version X.Y, or auto: the installed HIP's (the default when "
             "hipcc is found)"),
    "wavefront-size": (int, "64 (CDNA, Instinct) or 32 (RDNA)"),
    "unsafe-fixes": (bool, "apply unsafe fixes (lint --fix; convert applies them in place of "
                     "markers)"),
    "launch-syntax": (str, "kernel launches as written by convert: chevron or ggl"),
    "runtime": (str, "what runs the port: rocm (an AMD GPU, the default) or hip-cpu (AMD's HIP "
                "CPU runtime: ROCm 5.2's API, hipLaunchKernelGGL launches)"),
    "rename-ext": (bool, "convert writes .cu files as .hip"),
    "optimize": (bool, "convert applies the AMD optimisation rewrites (false: a pure port)"),
    "hip-cpu": (str, "AMD's HIP CPU runtime's folder (a clone of github.com/ROCm/HIP-CPU), "
                "relative to this file: validate --hip-compiler hip-cpu runs the ports on it"),
    "rules-dir": (str, "a folder of the team's own rule modules, relative to this file"),
    "roc": (bool, "rename cuBLAS, cuRAND, cuSPARSE and cuSOLVER to rocBLAS, rocRAND, rocSPARSE "
            "and rocSOLVER instead of hipBLAS, hipRAND, hipSPARSE and hipSOLVER"),
    "dnn": (str, "cuDNN: report (left unconverted, reported) or miopen (renamed to MIOpen)"),
    "offload-arch": ((list, str), "AMD GPU architectures build files and `build` target, e.g. "
                     "[\"gfx90a\", \"gfx942\"] (a string may list several, comma-separated)"),
    "executor": (str, "where validate, harness and build run their work: local (the default) or "
                 "slurm (as Slurm jobs: see the slurm table)"),
    "slurm": (dict, "the Slurm executor's partition, account, qos, options, shared folder, "
              "retries, gres, cpus-per-job, time-limit... (checked by migrator.cluster: see "
              "docs/slurm.md)"),
    "report": (dict, "the `report` command's effort model and plan (checked by migrator.report: "
               "see docs/report.md)"),
}
LAUNCH_SYNTAXES = ("chevron", "ggl")
DNN_CHOICES = ("report", "miopen")
CONFIG_LIMIT = 8 * MiB  # the most read of a configuration file


@dataclass(frozen=True)
class Config:
    path: Path | None = None
    values: dict = field(default_factory=dict)

    @property
    def root(self) -> Path:
        return self.path.parent if self.path else Path.cwd()


def find_config(start: Path) -> Path | None:
    folder = start.resolve()
    if folder.is_file():
        folder = folder.parent
    for candidate in (folder, *folder.parents):
        dotted = candidate / ".rocmigrate.toml"
        if dotted.is_file():
            return dotted
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file() and _has_tool_table(pyproject):
            return pyproject
    return None


def _has_tool_table(path: Path) -> bool:
    """Does this pyproject.toml hold [tool.rocmigrate]? One that cannot be read or parsed is an
    error (it may hold the configuration), not a file without one."""
    tool = read_toml(path).get("tool", {})
    return isinstance(tool, dict) and "rocmigrate" in tool


def read_toml(path: Path) -> dict:
    """A TOML file's document; every way it can be unusable is a ConfigError naming it."""
    try:
        return tomllib.loads(read_regular(path, CONFIG_LIMIT).decode("utf-8"))
    except OSError as err:
        raise ConfigError(f"{path}: cannot read: {err.strerror}") from None
    except UnicodeDecodeError as err:
        raise ConfigError(f"{path}: not UTF-8 text (byte {err.start} cannot be decoded)") from None
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{path}: not valid TOML: {err}") from None


def load_config(path: Path | None) -> Config:
    if path is None:
        return Config()
    document = read_toml(path)
    if path.name == ".rocmigrate.toml":
        table = document
    else:
        tool = document.get("tool", {})
        table = tool.get("rocmigrate", {}) if isinstance(tool, dict) else {}
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.rocmigrate] must be a table")
    for key, value in table.items():
        if key not in KEYS:
            known = ", ".join(sorted(KEYS))
            raise ConfigError(f"{path}: unknown key {key!r} (known keys: {known})")
        expected = KEYS[key][0]
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            names = " or a ".join(kind.__name__ for kind in
                                  (expected if isinstance(expected, tuple) else (expected,)))
            raise ConfigError(f"{path}: {key} must be a {names}")
    if "rocm" in table and table["rocm"].strip() != "auto":
        try:
            parse_target(table["rocm"])
        except ValueError as err:
            raise ConfigError(f"{path}: rocm: {err}") from None
    if "offload-arch" in table:
        archs = table["offload-arch"]
        listed = [archs] if isinstance(archs, str) else archs
        if not all(isinstance(item, str) for item in listed):
            raise ConfigError(f"{path}: offload-arch must be a list of strings")
        try:
            parse_offload_archs(listed)
        except ValueError as err:
            raise ConfigError(f"{path}: offload-arch: {err}") from None
    if table.get("wavefront-size", 64) not in (32, 64):
        raise ConfigError(f"{path}: wavefront-size must be 32 or 64")
    for pattern, codes in table.get("per-file-ignores", {}).items():
        if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
            raise ConfigError(f"{path}: per-file-ignores[{pattern!r}] must be a list of codes")
    for key in ("select", "ignore", "exclude"):
        if not all(isinstance(item, str) for item in table.get(key, [])):
            raise ConfigError(f"{path}: {key} must be a list of strings")
    if table.get("launch-syntax", "chevron") not in LAUNCH_SYNTAXES:
        raise ConfigError(f"{path}: launch-syntax must be one of {', '.join(LAUNCH_SYNTAXES)}")
    if table.get("runtime", "rocm") not in RUNTIMES:
        raise ConfigError(f"{path}: runtime must be one of {', '.join(RUNTIMES)}")
    if table.get("executor", "local") not in EXECUTORS:
        raise ConfigError(f"{path}: executor must be one of {', '.join(EXECUTORS)}")
    if table.get("dnn", "report") not in DNN_CHOICES:
        raise ConfigError(f"{path}: dnn must be one of {', '.join(DNN_CHOICES)}")
    if "rules-dir" in table and not (path.parent / table["rules-dir"]).is_dir():
        raise ConfigError(f"{path}: rules-dir {table['rules-dir']!r} is not a folder (relative "
                          f"to {path.parent})")
    return Config(path, table)


def check_selectors(selectors, where: str, codes: list[str]) -> None:
    """Raise ConfigError (saying ``where``) for a rule code or prefix that matches none of
    ``codes``: it would select or ignore nothing, silently."""
    unknown = [s for s in selectors if not s.strip() or not any(c.startswith(s.strip().upper())
                                                                 for c in codes)]
    if unknown:
        families = ", ".join(sorted({code[:3] for code in codes}))
        raise ConfigError(f"{where}: unknown rule code or prefix {unknown[0]!r} (it matches no "
                          f"rule; families: {families}; `rocmigrate rule --all` lists the codes)")
