"""Building a HIP program for AMD's HIP CPU runtime (../shared/data/hip-cpu: header-only, every
GPU thread a fibre, 64-lane wavefronts): with g++ -std=c++17 and TBB, as its README says."""

from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import ROOT, require, require_path, require_tool

HIP_CPU = ROOT.parent / "shared" / "data" / "hip-cpu"


def build_for_hip_cpu(source: Path, folder: Path, includes: tuple[Path, ...] = (),
                      extra: tuple[str, ...] = ()) -> Path:
    """Compile and link ``source`` against HIP-CPU into ``folder``, with ``extra`` compiler
    arguments before the source (``("-include", prelude)``); fails the test with the compiler's
    errors if it does not build."""
    include = require_path(HIP_CPU / "include", "AMD's HIP CPU runtime")
    compiler = require_tool("g++")
    require(Path("/usr/include/tbb/tbb.h").exists() or Path("/usr/include/oneapi/tbb.h").exists(),
            "TBB's headers (libtbb-dev), which HIP-CPU needs")
    program = folder / source.stem
    command = [compiler, "-std=c++17", "-O1", "-I", str(include),
               *(f"-I{path}" for path in includes), *extra, str(source), "-o", str(program),
               "-ltbb", "-lpthread"]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    return program


def run_on_hip_cpu(program: Path, timeout: float = 120) -> str:
    """Run a program built by ``build_for_hip_cpu``; its standard output (it must exit 0)."""
    result = subprocess.run([str(program)], capture_output=True, text=True, check=False,
                            timeout=timeout)
    assert result.returncode == 0, (result.stdout[-2000:], result.stderr[-2000:])
    return result.stdout
