"""Settings resolved once for every command: flags > configuration file > defaults."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..settings import Settings
from ..toolchain.compilers import HIPCC_PLACES, HipError, installed_hip
from ..versions import (DEFAULT_ROCM, NEWEST_ROCM, OLDEST_ROCM, default_offload_archs,
                        format_version, parse_offload_archs, parse_target, parse_version)
from .config import Config, ConfigError, check_selectors, find_config, load_config


class WorkspaceError(Exception):
    """Settings that cannot be used: a bad flag, configuration file or rules directory. The
    message names where the value came from."""


@dataclass(frozen=True)
class Flags:
    """What a command's options say; None where the option was not given (the configuration
    file, then the default, decides). ``select`` given replaces the file's; ``ignore`` adds to
    it; a boolean flag can only switch its behaviour on."""

    rocm: str | None = None
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    unsafe_fixes: bool = False
    launch_syntax: str | None = None
    rename_ext: bool = False
    no_optimize: bool = False
    roc: bool = False
    dnn: str | None = None
    rules_dir: Path | None = None
    config: Path | None = None
    offload_arch: tuple[str, ...] = ()  # --offload-arch values (each may be comma-separated)
    # no --rocm and no rocm in the file: target the installed HIP when hipcc is found (the
    # commands' default); else DEFAULT_ROCM (the library's)
    detect_hip: bool = False


@dataclass(frozen=True)
class Workspace:
    """The resolved settings, the configuration file they came from (None: defaults) and the
    folder its relative paths (``exclude``, ``per-file-ignores``) are read against."""

    settings: Settings
    config_path: Path | None
    root: Path
    rocm_reason: str = ""  # which target, and why: "ROCm 5.2, the installed HIP ... (--rocm auto)"


def open_workspace(paths: list[Path], flags: Flags) -> Workspace:
    """The workspace of a command run on ``paths``: the configuration file is ``flags.config``
    or the nearest one above the first path. Raises WorkspaceError."""
    try:
        config = load_config(flags.config if flags.config else find_config(
            paths[0] if paths else Path(".")))
        rocm, reason = _target(flags, config)
        return Workspace(_settings(flags, config, rocm), config.path, config.root, reason)
    except ConfigError as err:
        raise WorkspaceError(str(err)) from None


def _target(flags: Flags, config: Config) -> tuple[tuple[int, int, int], str]:
    """The target ROCm release and why it was chosen, for the commands' summaries."""
    if flags.rocm:
        choice = flags.rocm.strip()
        origin, said = "--rocm", f"--rocm {choice}"
    elif "rocm" in config.values:
        choice = config.values["rocm"].strip()
        origin, said = f"{config.path}: rocm", f'rocm = "{choice}" in {config.path}'
    elif flags.detect_hip:
        choice, origin, said = "auto", "", "--rocm auto, the default where hipcc is found"
    else:
        return parse_target(DEFAULT_ROCM), f"ROCm {DEFAULT_ROCM}, the default"
    if choice != "auto":
        try:
            version = parse_target(choice)
        except ValueError as err:
            raise ConfigError(f"{origin}: {err}") from None
        return version, f"ROCm {format_version(version)} ({said})"
    try:
        hip = installed_hip()
    except HipError as err:
        if origin:
            raise ConfigError(f"{origin} auto: {err}") from None
        return parse_target(DEFAULT_ROCM), f"ROCm {DEFAULT_ROCM}, the default ({err})"
    if hip is None:
        if origin:
            raise ConfigError(f"{origin} auto: no hipcc found ({HIPCC_PLACES}); name the "
                              "target: --rocm X.Y")
        return parse_target(DEFAULT_ROCM), f"ROCm {DEFAULT_ROCM}, the default (no hipcc found)"
    newest, oldest = parse_target(NEWEST_ROCM), parse_version(OLDEST_ROCM)
    if hip.version[:2] > newest[:2]:
        return newest, (f"ROCm {NEWEST_ROCM}, the newest release rocmigrate knows; the installed "
                        f"HIP {hip.version_text} is newer ({said})")
    if hip.version[:2] < oldest[:2]:
        raise ConfigError(f"{origin or '--rocm'} auto: the installed HIP {hip.version_text} is "
                          f"older than the oldest release rocmigrate knows ({OLDEST_ROCM})")
    return hip.version, (f"ROCm {format_version(hip.version)}, the installed HIP "
                         f"{hip.version_text} ({said})")


def _settings(flags: Flags, config: Config, rocm: tuple[int, int, int]) -> Settings:
    values = config.values
    where = f"{config.path}: " if config.path else ""
    rules_dir = flags.rules_dir
    if rules_dir is None and "rules-dir" in values:
        rules_dir = config.root / values["rules-dir"]
    if rules_dir is not None:
        if not rules_dir.is_dir():
            raise ConfigError(f"--rules-dir {rules_dir}: not a folder")
        rules_dir = rules_dir.resolve()
    select = _codes(flags.select)
    ignore = _codes(flags.ignore)
    named = [(select, "--select"), (ignore, "--ignore"),
             (values.get("select", ()), f"{where}select"),
             (values.get("ignore", ()), f"{where}ignore")]
    named += [(listed, f"{where}per-file-ignores[{pattern!r}]")
              for pattern, listed in values.get("per-file-ignores", {}).items()]
    if rules_dir is not None or any(selectors for selectors, _ in named):
        codes = _rule_codes(rules_dir)  # loads every rule: only when codes are named
        for selectors, where_named in named:
            check_selectors(selectors, where_named, codes)
    return Settings(
        rocm=rocm,
        offload_archs=_offload_archs(flags, values, rocm),
        launch_syntax=flags.launch_syntax or values.get("launch-syntax", "chevron"),
        rename_ext=flags.rename_ext or values.get("rename-ext", False),
        select=select or _codes(values.get("select", ())),
        ignore=ignore + _codes(values.get("ignore", ())),
        unsafe_fixes=flags.unsafe_fixes or values.get("unsafe-fixes", False),
        wavefront_size=values.get("wavefront-size", 64),
        rules_dir=rules_dir,
        per_file_ignores=tuple((pattern, _codes(listed)) for pattern, listed
                               in values.get("per-file-ignores", {}).items()),
        exclude=tuple(values.get("exclude", ())),
        optimize=not flags.no_optimize and values.get("optimize", True),
        roc=flags.roc or values.get("roc", False),
        dnn=flags.dnn or values.get("dnn", "report"),
    )


def _offload_archs(flags: Flags, values: dict, rocm: tuple[int, int, int]) -> tuple[str, ...]:
    """The flag's, else the file's (checked when loaded), else the defaults the target has."""
    if flags.offload_arch:
        try:
            return parse_offload_archs(flags.offload_arch)
        except ValueError as err:
            raise ConfigError(f"--offload-arch: {err}") from None
    if "offload-arch" not in values:
        return default_offload_archs(rocm)
    listed = values["offload-arch"]
    return parse_offload_archs([listed] if isinstance(listed, str) else listed)


def _codes(values) -> tuple[str, ...]:
    """Codes and prefixes as given (a flag may hold several, comma-separated), upper-cased."""
    return tuple(code.strip().upper() for value in values for code in value.split(",")
                 if code.strip())


def _rule_codes(rules_dir: Path | None) -> list[str]:
    from .. import registry

    try:
        return [code for cls in registry.all_rules(rules_dir) for code in cls.codes()]
    except registry.RegistryError as err:
        raise ConfigError(f"rules directory {rules_dir}: {err}") from None
