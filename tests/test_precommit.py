"""The pre-commit hooks of this repository, run by the real pre-commit (`pre-commit try-repo`)
in a temporary git repository with HIP files: a failing and a passing commit."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, git, require_command

BAD = b"""#include <hip/hip_runtime.h>
__global__ void k(float* p) {
  float v = p[threadIdx.x];
  v += __shfl_down_sync(0xffffffff, v, 1);
  p[threadIdx.x] = v;
}
"""


@pytest.mark.slow
def test_hooks_fail_then_pass(tmp_path: Path):
    pre_commit = require_command("pre-commit", "pre-commit")
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q")
    (project / "kernel.hip").write_bytes(BAD)
    (project / "notes.txt").write_text("not checked\n")
    # the target where __shfl_down_sync exists (the default is the installed HIP's: CI's is 5.2)
    (project / ".rocmigrate.toml").write_text('rocm = "6.4"\n')
    git(project, "add", ".")
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"))
    env.pop("PYTHONPATH", None)

    def hook(hook_id: str) -> subprocess.CompletedProcess:
        return subprocess.run([pre_commit, "try-repo", str(ROOT), hook_id], cwd=project,
                              capture_output=True, text=True, env=env, timeout=900)

    failing = hook("rocmigrate-lint")
    assert failing.returncode == 1, failing.stdout + failing.stderr
    assert "kernel.hip:4:25: WAV002" in failing.stdout
    assert (project / "kernel.hip").read_bytes() == BAD  # the check hook changes nothing

    fixing = hook("rocmigrate-lint-fix")
    assert fixing.returncode == 1  # files were modified: pre-commit fails the commit
    assert b"0xffffffffffffffffull" in (project / "kernel.hip").read_bytes()

    git(project, "add", ".")
    passing = hook("rocmigrate-lint")
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert "Passed" in passing.stdout
    commit = git(project, "commit", "-qm", "clean kernel")
    assert commit.returncode == 0, commit.stderr


@pytest.mark.slow
def test_an_unpinned_hook_says_pin_it_even_when_it_passes(tmp_path: Path):
    """No rocm in the project's configuration and an older HIP installed (a fake HIP 5.2 first
    on PATH): the hook passes on a clean file, and pre-commit shows its output (the hooks are
    verbose), whose first line tells the team to pin rocm."""
    from test_toolchain import _fake_hip

    pre_commit = require_command("pre-commit", "pre-commit")
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q")
    (project / "kernel.hip").write_bytes(b"#include <hip/hip_runtime.h>\n"
                                         b"__global__ void k(float* p) { p[0] = 1.0f; }\n")
    git(project, "add", ".")
    hip = _fake_hip(tmp_path / "hip52", "5.2.21153-0")
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"),
               PATH=f"{hip}{os.pathsep}{os.environ['PATH']}")
    for name in ("PYTHONPATH", "ROCM_PATH", "HIP_PATH"):
        env.pop(name, None)
    passing = subprocess.run([pre_commit, "try-repo", str(ROOT), "rocmigrate-lint"],
                             cwd=project, capture_output=True, text=True, env=env, timeout=900)
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert "Passed" in passing.stdout
    assert ("warning: target ROCm 5.2 from the installed HIP 5.2.21153-0 (--rocm auto, the "
            "default where hipcc is found)") in passing.stdout
    assert 'pin it: rocm = "6.4" in [tool.rocmigrate]' in passing.stdout
