"""The house as CONTRIBUTING.md draws it: every room of ``migrator/`` and ``rules/`` is described
there, and the imports between rooms go the way it says (no circles, no command importing
another command, the engine and ``workspace`` asking ``toolchain`` rather than a command)."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

import pytest

from conftest import ROOT

CONTRIBUTING = ROOT / "CONTRIBUTING.md"
# the rooms that are commands: each is a library entry point the CLI calls; none imports another
COMMANDS = frozenset({"build", "validate", "harness", "report", "lint"})
# the rooms every command may use, which use no command themselves
SHARED = frozenset({"workspace", "toolchain", "engine", "runner", "convert", "registry", "rule",
                    "diagnostics", "settings", "versions", "apitables", "source", "parsing",
                    "semantic", "clang", "fsutil", "pool", "results", "support", "templating",
                    "suppression", "buildfiles", "summary",
                    "nvidia",  # the NVIDIA headers: `nvidia-headers` writes them, validate uses them
                    # Slurm jobs for validate, harness and build; on a node, cluster.kinds loads
                    # the command's job function by its name from a fixed table (no import here)
                    "cluster"})


def _rooms(package: str) -> list[str]:
    """The top-level rooms of a package: its subpackages and its modules (without .py)."""
    folder = ROOT / package
    rooms = []
    for path in sorted(folder.iterdir()):
        if path.is_dir() and (path / "__init__.py").exists():
            rooms.append(path.name)
        elif path.suffix == ".py" and path.stem not in ("__init__", "__main__"):
            rooms.append(path.stem)
    return rooms


def _room_imports(package: str) -> dict[str, set[str]]:
    """room -> the other rooms of the same package its modules import (absolute or relative)."""
    folder = ROOT / package
    edges: dict[str, set[str]] = defaultdict(set)
    for path in folder.rglob("*.py"):
        parts = path.relative_to(folder).with_suffix("").parts
        room = parts[0]
        if room in ("__init__", "__main__"):
            continue
        home = list(parts[:-1])  # the package the module lies in, below ``package``
        for node in ast.walk(ast.parse(path.read_bytes())):
            targets: list[list[str]] = []
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = home[:len(home) - (node.level - 1)] if node.level > 1 else home
                    module = base + (node.module.split(".") if node.module else [])
                    targets = [module] if module else [[alias.name] for alias in node.names]
                elif node.module and node.module.split(".")[0] == package:
                    targets = [node.module.split(".")[1:]]
            elif isinstance(node, ast.Import):
                targets = [alias.name.split(".")[1:] for alias in node.names
                           if alias.name.split(".")[0] == package]
            for target in targets:
                if target and target[0] != room and target[0] not in ("__init__", "__version__"):
                    edges[room].add(target[0])
    return edges


def _cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One circle among the rooms, or None."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(room: str) -> list[str] | None:
        state[room] = 1
        path.append(room)
        for other in sorted(edges.get(room, ())):
            if state.get(other) == 1:
                return path[path.index(other):] + [other]
            if other not in state and (found := visit(other)):
                return found
        path.pop()
        state[room] = 2
        return None

    for room in sorted(edges):
        if room not in state and (found := visit(room)):
            return found
    return None


def _layout() -> str:
    text = CONTRIBUTING.read_text(encoding="utf-8")
    match = re.search(r"^## The house.*?(?=^## )", text, re.S | re.M)
    assert match, "CONTRIBUTING.md has no '## The house' section"
    return match.group(0)


@pytest.mark.parametrize("package", ["migrator", "rules"])
def test_every_room_is_described(package: str):
    layout = _layout()
    # an entry of the map: a line of the code block starting with its folder (families may share
    # a line: "  atomics/ launch/ ...")
    missing = [room for room in _rooms(package)
               if (ROOT / package / room).is_dir()
               and not re.search(rf"^  (?:[a-z_]+/ )*{re.escape(room)}/(?: |$)", layout, re.M)]
    assert not missing, f"folders of {package}/ missing from CONTRIBUTING.md's house: {missing}"


def test_every_migrator_module_is_described():
    layout = _layout()
    missing = [room for room in _rooms("migrator") if not (ROOT / "migrator" / room).is_dir()
               and not re.search(rf"^  {re.escape(room)}\.py ", layout, re.M)]
    assert not missing, f"modules of migrator/ missing from CONTRIBUTING.md's house: {missing}"


def test_described_rooms_exist():
    """The map names no room that is gone (a renamed or removed folder)."""
    layout = _layout()
    named = set(re.findall(r"^  ([a-z_]+)/ ", layout, re.M))
    rooms = set(_rooms("migrator")) | set(_rooms("rules"))
    assert named <= rooms, f"CONTRIBUTING.md names rooms that do not exist: {named - rooms}"


@pytest.mark.parametrize("package", ["migrator", "rules"])
def test_no_circle_between_rooms(package: str):
    assert _cycle(_room_imports(package)) is None


def test_rule_helpers_import_no_rule_family():
    """rules/markers.py, cuda_context.py and cuda_types.py serve every family; none imports one."""
    edges = _room_imports("rules")
    families = {room for room in _rooms("rules") if (ROOT / "rules" / room).is_dir()}
    for helper in ("markers", "cuda_context", "cuda_types"):
        assert not edges.get(helper, set()) & families, f"rules/{helper}.py imports a rule family"


def test_commands_import_no_other_command():
    edges = _room_imports("migrator")
    for command in COMMANDS:
        assert not (edges.get(command, set()) & (COMMANDS - {command})), (
            f"migrator/{command} imports another command: {sorted(edges[command] & COMMANDS)}")


def test_shared_rooms_import_no_command():
    edges = _room_imports("migrator")
    for room in SHARED:
        assert not edges.get(room, set()) & COMMANDS, (
            f"migrator/{room} imports a command: {sorted(edges[room] & COMMANDS)}")


def test_every_room_is_classified():
    """A new room is placed on purpose: a command, a shared room, or the CLI and renderers."""
    known = COMMANDS | SHARED | {"cli", "output"}
    assert set(_rooms("migrator")) <= known, set(_rooms("migrator")) - known
