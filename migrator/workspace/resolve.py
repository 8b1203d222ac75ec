"""Settings resolved once for every command: flags > configuration file > defaults."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..settings import Settings
from ..toolchain.compilers import HIPCC_PLACES, HipError, installed_hip
from ..versions import (DEFAULT_ROCM, NEWEST_ROCM, OLDEST_ROCM, default_offload_archs,
                        format_version, parse_offload_archs, parse_target, parse_version)
from .config import Config, ConfigError, check_selectors, find_config, load_config, read_toml

# set to 1 (every tree) or to folders separated by os.pathsep: a configuration file in one of
# them (or below) may name a rules directory, whose modules rocmigrate imports
TRUST_VARIABLE = "ROCMIGRATE_TRUST_RULES_DIR"


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
    runtime: str | None = None  # rocm | hip-cpu (Settings.for_runtime)
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
    # set where ``auto`` picked an installed HIP older than the newest release the tables know:
    # the figures (findings, hours) then follow the machine's HIP; report and lint show it
    target_warning: str = ""


def open_workspace(paths: list[Path], flags: Flags) -> Workspace:
    """The workspace of a command run on ``paths``: the configuration file is ``flags.config``
    or the nearest one above the first path. Raises WorkspaceError."""
    try:
        config = load_config(flags.config if flags.config else find_config(
            paths[0] if paths else Path(".")))
        rocm, reason, warning = _target(flags, config)
        settings = _settings(flags, config, rocm)
        runtime = flags.runtime or config.values.get("runtime", "rocm")
        if runtime != "rocm":
            settings, reason = _for_runtime(settings, runtime, flags, config)
            warning = ""
        return Workspace(settings, config.path, config.root, reason, warning)
    except ConfigError as err:
        raise WorkspaceError(str(err)) from None


def _for_runtime(settings: Settings, runtime: str, flags: Flags,
                 config: Config) -> tuple[Settings, str]:
    """The settings for a runtime other than ROCm, and the target's reason."""
    said = f"--runtime {runtime}" if flags.runtime else f'runtime = "{runtime}" in {config.path}'
    launch = flags.launch_syntax or config.values.get("launch-syntax")
    if launch == "chevron":
        raise ConfigError(f"{said}: HIP's CPU runtime is compiled by a C++ compiler, which "
                          "cannot read <<<>>> launches: leave the launch syntax to it (ggl)")
    try:
        settings = settings.for_runtime(runtime)
    except ValueError as err:
        raise ConfigError(f"{said}: {err}") from None
    return settings, (f"ROCm {format_version(settings.rocm)}, the API HIP's CPU runtime "
                      f"implements ({said})")


def target_warning(version: tuple[int, int, int], hip_text: str, said: str) -> str:
    """What report and lint say where ``auto`` chose an installed HIP older than the newest
    release the tables know: their figures then depend on the machine's HIP (one with another
    HIP, or none, counts other findings and hours), so the team should pin the target."""
    return (f"target ROCm {format_version(version)} from the installed HIP {hip_text} ({said}); "
            f"the tables know up to {NEWEST_ROCM}: figures differ on machines with another HIP "
            f'or none; pin it: rocm = "{NEWEST_ROCM}" in [tool.rocmigrate] of pyproject.toml or '
            f"in .rocmigrate.toml (or --rocm {NEWEST_ROCM})")


def _target(flags: Flags, config: Config) -> tuple[tuple[int, int, int], str, str]:
    """The target ROCm release, why it was chosen (for the commands' summaries), and a warning
    where ``auto`` chose an installed HIP older than the newest release the tables know (the
    figures then follow the machine: ``target_warning``), else ""."""
    if flags.rocm:
        choice = flags.rocm.strip()
        origin, said = "--rocm", f"--rocm {choice}"
    elif "rocm" in config.values:
        choice = config.values["rocm"].strip()
        origin, said = f"{config.path}: rocm", f'rocm = "{choice}" in {config.path}'
    elif flags.detect_hip:
        choice, origin, said = "auto", "", "--rocm auto, the default where hipcc is found"
    else:
        return parse_target(DEFAULT_ROCM), f"ROCm {DEFAULT_ROCM}, the default", ""
    if choice != "auto":
        try:
            version = parse_target(choice)
        except ValueError as err:
            raise ConfigError(f"{origin}: {err}") from None
        return version, f"ROCm {format_version(version)} ({said})", ""
    try:
        hip = installed_hip()
    except HipError as err:
        if origin:
            raise ConfigError(f"{origin} auto: {err}") from None
        return parse_target(DEFAULT_ROCM), f"ROCm {DEFAULT_ROCM}, the default ({err})", ""
    if hip is None:
        if origin:
            raise ConfigError(f"{origin} auto: no hipcc found ({HIPCC_PLACES}); name the "
                              "target: --rocm X.Y")
        return (parse_target(DEFAULT_ROCM), f"ROCm {DEFAULT_ROCM}, the default (no hipcc found)",
                "")
    newest, oldest = parse_target(NEWEST_ROCM), parse_version(OLDEST_ROCM)
    if hip.version[:2] > newest[:2]:
        return newest, (f"ROCm {NEWEST_ROCM}, the newest release rocmigrate knows; the installed "
                        f"HIP {hip.version_text} is newer ({said})"), ""
    if hip.version[:2] < oldest[:2]:
        raise ConfigError(f"{origin or '--rocm'} auto: the installed HIP {hip.version_text} is "
                          f"older than the oldest release rocmigrate knows ({OLDEST_ROCM})")
    warning = (target_warning(hip.version, hip.version_text, said)
               if hip.version[:2] < newest[:2] else "")
    return hip.version, (f"ROCm {format_version(hip.version)}, the installed HIP "
                         f"{hip.version_text} ({said})"), warning


def _settings(flags: Flags, config: Config, rocm: tuple[int, int, int]) -> Settings:
    values = config.values
    where = f"{config.path}: " if config.path else ""
    rules_dir = flags.rules_dir
    if rules_dir is None and "rules-dir" in values:
        rules_dir = config.root / values["rules-dir"]
        _require_trust(config, rules_dir)
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
        hip_cpu=(config.root / values["hip-cpu"]) if "hip-cpu" in values else None,
    )


def _require_trust(config: Config, rules_dir: Path) -> None:
    """A tree's configuration naming a rules directory would have rocmigrate import the tree's
    own Python code (a cloned repository, a pre-commit hook): raise ConfigError, saying how to
    opt in, unless the user trusts it from outside the tree (TRUST_VARIABLE, or the folder is
    listed in the user's trusted.toml)."""
    folder = config.root.resolve()
    variable = os.environ.get(TRUST_VARIABLE, "").strip()
    if variable == "1":
        return
    listed = [Path(item).expanduser() for item in variable.split(os.pathsep)
              if item.strip() and item.strip() != "0"]
    trusted_file = _trusted_file()
    if trusted_file is not None:
        listed += _trusted_roots(trusted_file)
    if any(folder.is_relative_to(root.resolve()) for root in listed):
        return
    in_file = f", or list \"{folder}\" in roots = [...] of {trusted_file}" if trusted_file else ""
    raise ConfigError(
        f"{config.path}: rules-dir {config.values['rules-dir']!r} would import this tree's own "
        f"Python code ({rules_dir.resolve()}), and a tree's configuration is not trusted to run "
        f"code. Opt in from outside the tree: give --rules-dir {rules_dir.resolve()}, or set "
        f"{TRUST_VARIABLE}={folder} (1: every tree){in_file}")


def _trusted_file() -> Path | None:
    """The user's own list of trusted trees: $XDG_CONFIG_HOME/rocmigrate/trusted.toml, by
    default ~/.config/rocmigrate/trusted.toml (None without a home folder)."""
    base = os.environ.get("XDG_CONFIG_HOME", "").strip()
    if base and Path(base).is_absolute():
        return Path(base) / "rocmigrate" / "trusted.toml"
    try:
        return Path.home() / ".config" / "rocmigrate" / "trusted.toml"
    except RuntimeError:
        return None


def _trusted_roots(path: Path) -> list[Path]:
    """The folders ``roots = [...]`` of the user's trusted.toml lists (none when it is absent):
    a configuration file in one of them, or below, may name a rules directory."""
    if not os.path.lexists(path):
        return []
    document = read_toml(path)
    unknown = sorted(set(document) - {"roots"})
    if unknown:
        raise ConfigError(f"{path}: unknown key {unknown[0]!r} (known keys: roots)")
    roots = document.get("roots", [])
    if not isinstance(roots, list) or not all(isinstance(root, str) and root.strip()
                                              and Path(root).expanduser().is_absolute()
                                              for root in roots):
        raise ConfigError(f"{path}: roots must be a list of absolute folders (or ~/...)")
    return [Path(root).expanduser() for root in roots]


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
