"""Shared test helpers: repo paths, the real compilers (required in CI, optional elsewhere) and
the context a rule reads a file through."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _tool(name: str, fallback: str | None = None) -> str | None:
    found = shutil.which(name)
    if found is None and fallback and Path(fallback).exists():
        found = fallback
    return found


def require_tool(name: str, fallback: str | None = None) -> str:
    """Path of a compiler; in CI a missing one fails the test, elsewhere it skips."""
    found = _tool(name, fallback)
    if found is None:
        if IN_CI:
            pytest.fail(f"{name} is required in CI but is not installed")
        pytest.skip(f"{name} not installed")
    return found


def require_command(name: str, extra: str) -> str:
    """A command installed with the test extras (next to this Python, or on PATH); in CI a
    missing one fails the test, elsewhere it skips."""
    found = shutil.which(name) or str(Path(sys.executable).with_name(name))
    if not Path(found).exists():
        if IN_CI:
            pytest.fail(f"{name} ({extra}, a test extra) is required in CI")
        pytest.skip(f"{name} not installed")
    return found


def require(available: bool, what: str) -> None:
    """A test needs ``what`` (a tool's ability, an OS feature); in CI its absence fails the test,
    elsewhere it skips. Every skip goes through here or the helpers beside it: CI skips nothing."""
    if not available:
        if IN_CI:
            pytest.fail(f"{what} is required in CI but not available")
        pytest.skip(f"{what} not available")


def require_path(path: Path, what: str) -> Path:
    """A file or folder a test reads (real headers, ../shared data, /proc): see ``require``."""
    require(path.exists(), f"{what} ({path})")
    return path


def updating_fixtures() -> bool:
    """Whether ``UPDATE_FIXTURES=1`` asks the fixture tests to rewrite expected outputs; under
    CI that fails the test, as a run that rewrites what it checks can never fail."""
    if os.environ.get("UPDATE_FIXTURES") != "1":
        return False
    if IN_CI:
        pytest.fail("UPDATE_FIXTURES=1 rewrites the expected outputs: not allowed in CI")
    return True


def rule_context(data: bytes, name: str = "x.cu", settings=None):
    """The RuleContext a rule reads ``data`` through, as the file ``name`` with ``settings``
    (default ones) and the API tables."""
    from migrator import apitables
    from migrator.rule import RuleContext
    from migrator.settings import Settings
    from migrator.source import Source

    return RuleContext(Source(name, data), settings or Settings(), apitables.load())


def git(cwd: Path, *args: str, check: bool = False) -> subprocess.CompletedProcess:
    """Run git in ``cwd`` with a fixed test identity."""
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.invalid",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.invalid")
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env,
                          check=check)


def hipcc_compile(path: Path, tmp_path: Path, extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """Compile a HIP file for AMD MI250 (gfx90a) without a GPU."""
    hipcc = require_tool("hipcc")
    env = dict(os.environ, HIP_PLATFORM="amd", TMPDIR=str(tmp_path))  # hipcc leaves folders there
    return subprocess.run(
        [hipcc, "--offload-arch=gfx90a", "-x", "hip", "-std=c++17", "-c", str(path),
         "-o", str(tmp_path / (path.name + ".o")), *extra],
        capture_output=True, text=True, env=env, timeout=300)


def convert_program(path: Path, folder: Path, settings):
    """Convert the program at ``path`` and the local headers it includes (``#include "..."``,
    as validate does) into ``folder``, keeping their relative paths; returns the program's
    output path and the RunResult of the program itself."""
    from migrator.workspace.includes import local_includes
    from migrator.runner import RunOptions, run

    root = path.parent
    for rel in sorted(local_includes(root, path.name) - {path.name}):
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        header = run(RunOptions(source=root / rel, output=folder / rel), settings)
        assert not header.failed, header.results[0].message
    out = folder / path.name
    return out, run(RunOptions(source=path, output=out), settings)


def cuda_library_includes() -> list[str]:
    """-I flags for CUDA library headers that come from PyPI wheels (cuRAND)."""
    try:
        import nvidia
    except ImportError:
        if IN_CI:
            pytest.fail("the nvidia-curand wheel (test extra) is required in CI")
        return []
    return [f"-I{folder}/cu13/include" for folder in nvidia.__path__
            if Path(folder, "cu13", "include", "curand.h").exists()]


def nvcc_compile(path: Path, tmp_path: Path, extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    nvcc = require_tool("nvcc", "/usr/local/cuda/bin/nvcc")
    return subprocess.run(
        [nvcc, "-std=c++17", "-arch=sm_90", "-x", "cu", *cuda_library_includes(), "-c", str(path),
         "-o", str(tmp_path / (path.name + ".o")), *extra],
        capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT
