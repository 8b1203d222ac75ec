"""Configuration: ``[tool.rocmigrate]`` in ``pyproject.toml`` or a ``.rocmigrate.toml`` file.

Found by walking up from the first path given (or the working directory); ``.rocmigrate.toml``
wins over ``pyproject.toml`` in the same folder. Unknown keys and wrong types are errors: a typo
must not silently switch a check off.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from .versions import parse_version


class ConfigError(Exception):
    pass


# key -> (python type, description)
KEYS = {
    "select": (list, "rule codes or prefixes to run (default: all stable rules)"),
    "ignore": (list, "rule codes or prefixes to skip"),
    "per-file-ignores": (dict, "glob pattern -> codes ignored in matching files"),
    "exclude": (list, "glob patterns of paths never checked"),
    "rocm": (str, "target ROCm version X.Y"),
    "wavefront-size": (int, "64 (CDNA, Instinct) or 32 (RDNA)"),
    "preview": (bool, "run preview rules too"),
    "unsafe-fixes": (bool, "apply unsafe fixes with --fix"),
}


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
    try:
        return "rocmigrate" in tomllib.loads(path.read_text(encoding="utf-8")).get("tool", {})
    except (OSError, tomllib.TOMLDecodeError):
        return False


def load_config(path: Path | None) -> Config:
    if path is None:
        return Config()
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise ConfigError(f"{path}: cannot read: {err.strerror}") from None
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{path}: not valid TOML: {err}") from None
    table = document if path.name == ".rocmigrate.toml" else document.get("tool", {}).get("rocmigrate", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.rocmigrate] must be a table")
    for key, value in table.items():
        if key not in KEYS:
            known = ", ".join(sorted(KEYS))
            raise ConfigError(f"{path}: unknown key {key!r} (known keys: {known})")
        expected = KEYS[key][0]
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            raise ConfigError(f"{path}: {key} must be a {expected.__name__}")
    if "rocm" in table:
        try:
            parse_version(table["rocm"])
        except ValueError as err:
            raise ConfigError(f"{path}: rocm: {err}") from None
    if table.get("wavefront-size", 64) not in (32, 64):
        raise ConfigError(f"{path}: wavefront-size must be 32 or 64")
    for pattern, codes in table.get("per-file-ignores", {}).items():
        if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
            raise ConfigError(f"{path}: per-file-ignores[{pattern!r}] must be a list of codes")
    for key in ("select", "ignore", "exclude"):
        if not all(isinstance(item, str) for item in table.get(key, [])):
            raise ConfigError(f"{path}: {key} must be a list of strings")
    return Config(path, table)
