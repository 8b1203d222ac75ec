"""Robustness on real code: CUDA's own headers (1,800+ files of heavy templates and macros, much
of it beyond tree-sitter's grammar) convert without a single failed file, and converting the
output again changes nothing."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from typer.testing import CliRunner

from conftest import require_tool
from migrator.cli import _register, app

_register()


def _cuda_include(nvcc: str) -> Path:
    """The CUDA include folder nvcc itself uses (nvcc may be a wrapper script)."""
    dry = subprocess.run([nvcc, "--dryrun", "-x", "cu", "-c", os.devnull, "-o", os.devnull],
                         capture_output=True, text=True)
    found = re.search(r'INCLUDES="-I([^"]+)"', dry.stdout + dry.stderr)
    assert found, dry.stderr[-2000:]
    return Path(found.group(1)).resolve()


@pytest.mark.slow
def test_cuda_toolkit_headers_convert_and_are_stable(tmp_path: Path):
    include = _cuda_include(require_tool("nvcc", "/usr/local/cuda/bin/nvcc"))
    assert (include / "cuda_runtime.h").exists(), include
    runner = CliRunner()
    first = runner.invoke(app, ["convert", str(include.resolve()), "-o", str(tmp_path / "hip"),
                                "--format", "json"])
    report = json.loads(first.stdout)
    files = report["summary"]["files"]
    assert first.exit_code == 0 and files["failed"] == 0, report["summary"]["failures"][:5]
    assert files["converted"] > 500
    second = runner.invoke(app, ["convert", str(tmp_path / "hip"), "-o", str(tmp_path / "again"),
                                 "--format", "json"])
    assert json.loads(second.stdout)["summary"]["files"]["converted"] == 0
