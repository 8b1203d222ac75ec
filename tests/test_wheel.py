"""The wheel ships rules/ and templates/, and the installed CLI works outside the repo."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from conftest import ROOT


@pytest.mark.slow
def test_wheel_install_runs_cli(tmp_path: Path):
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels),
                    str(ROOT)], check=True, capture_output=True)
    wheel = next(wheels.glob("rocmigrate-*.whl"))
    import zipfile

    names = zipfile.ZipFile(wheel).namelist()
    assert "rules/api/runtime.tsv" in names and "rules/api/headers.tsv" in names
    assert "templates/rule_doc.md.j2" in names
    assert "templates/validate/report.md.j2" in names
    assert "templates/harness/harness.cu.j2" in names
    assert "templates/report/report.md.j2" in names and "templates/report/chart.svg.j2" in names
    # the CUDA declarations libclang reads kernels with, when no toolkit is given
    assert "migrator/clang/cuda_declarations/cuda_runtime.h" in names
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    installed = subprocess.run([str(python), "-m", "pip", "install", "-q", str(wheel)],
                               capture_output=True, text=True)
    assert installed.returncode == 0, installed.stderr[-3000:]
    work = tmp_path / "elsewhere"
    work.mkdir()
    (work / "a.cu").write_text("#include <cuda_runtime.h>\nvoid f(float* p) { cudaFree(p); }\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    cli = env_dir / "bin" / "rocmigrate"
    listing = subprocess.run([str(cli), "rule", "--all"], cwd=work, capture_output=True,
                             text=True, env=env)
    assert listing.returncode == 0, listing.stderr
    assert "API001" in listing.stdout
    # the installed package, not the checkout, is what runs
    where = subprocess.run([str(python), "-c", "import migrator, rules; print(migrator.__file__, rules.__file__)"],
                           cwd=work, capture_output=True, text=True, env=env)
    assert str(ROOT) not in where.stdout and "site-packages" in where.stdout
    converted = subprocess.run([str(cli), "convert", "a.cu", "-o", "a.hip"], cwd=work,
                               capture_output=True, text=True, env=env)
    assert converted.returncode == 0, converted.stderr
    assert "hipFree(p)" in (work / "a.hip").read_text()
    headers = subprocess.run([str(cli), "nvidia-headers", "nv"], cwd=work, capture_output=True,
                             text=True, env=env)
    assert headers.returncode == 0, headers.stderr  # templates/ found in the installed package
    assert "#define hipMalloc cudaMalloc" in (work / "nv" / "hip" / "rocmigrate_nvidia.h").read_text()
