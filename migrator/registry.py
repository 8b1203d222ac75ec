"""Finds rule classes in the rules package (and a user's rules directory), checks their identity,
and selects them by code or prefix."""

from __future__ import annotations

import functools
import importlib
import importlib.util
import pkgutil
import sys
from pathlib import Path

from .rule import Rule


class RegistryError(Exception):
    pass


def _rule_classes(module) -> list[type[Rule]]:
    found = []
    for value in vars(module).values():
        if (isinstance(value, type) and issubclass(value, Rule) and value is not Rule
                and value.__module__ == module.__name__ and value.code):
            found.append(value)
    return found


def _package_modules(package_name: str):
    package = importlib.import_module(package_name)
    for info in pkgutil.walk_packages(package.__path__, prefix=package_name + "."):
        yield importlib.import_module(info.name)


def _directory_modules(directory: Path):
    for path in sorted(directory.rglob("*.py")):
        if path.name.startswith("_"):
            continue
        name = "rocmigrate_user_rules." + "_".join(path.relative_to(directory).with_suffix("").parts)
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as err:  # the team's own code: any error is theirs to see, by file
            del sys.modules[name]
            raise RegistryError(f"{path}: cannot load the rule module: "
                                f"{type(err).__name__}: {err}") from None
        yield module


@functools.lru_cache(maxsize=4)
def all_rules(extra_dir: Path | None = None) -> tuple[type[Rule], ...]:
    """Every rule class, sorted by code; raises RegistryError on duplicate codes or bad docs."""
    modules = list(_package_modules("rules"))
    if extra_dir is not None:
        modules += list(_directory_modules(extra_dir))
    rules: dict[str, type[Rule]] = {}
    problems: list[str] = []
    for module in modules:
        for cls in _rule_classes(module):
            problems += cls.validate()
            for code in cls.codes():
                if code in rules and rules[code] is not cls:
                    problems.append(f"duplicate rule code {code}: {rules[code].__name__}, {cls.__name__}")
                rules[code] = cls
    if problems:
        raise RegistryError("; ".join(problems))
    unique = {cls for cls in rules.values()}
    return tuple(sorted(unique, key=lambda cls: cls.code))


def _matches(code: str, selectors: tuple[str, ...]) -> bool:
    return any(code.startswith(sel) for sel in selectors)


def select(rules: tuple[type[Rule], ...], select: tuple[str, ...], ignore: tuple[str, ...]):
    """Rules whose primary code matches ``select`` (all when empty) and not ``ignore``."""
    chosen = []
    for cls in rules:
        codes = cls.codes()
        if select and not any(_matches(code, select) for code in codes):
            continue
        if ignore and all(_matches(code, ignore) for code in codes):
            continue
        chosen.append(cls)
    return chosen


def code_enabled(code: str, select_: tuple[str, ...], ignore: tuple[str, ...]) -> bool:
    if select_ and not _matches(code, select_):
        return False
    return not (ignore and _matches(code, ignore))


def find(code: str, extra_dir: Path | None = None) -> type[Rule] | None:
    for cls in all_rules(extra_dir):
        if code in cls.codes():
            return cls
    return None
