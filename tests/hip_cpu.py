"""Building a HIP program for AMD's HIP CPU runtime (../shared/data/hip-cpu: header-only, every
GPU thread a fibre, 64-lane wavefronts): with g++ -std=c++17 and TBB, as its README says."""

from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import ROOT, require, require_path, require_tool
from migrator import support
from migrator.convert import convert_bytes
from migrator.settings import Settings
from migrator.templating import render

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


def converted_run(program: Path, folder: Path, unsafe_fixes: bool = False) -> str:
    """The last line the CUDA ``program`` prints, converted for the CPU runtime (with or without
    unsafe fixes), built after rocmigrate's prelude for what the runtime lacks, with the support
    headers it includes, and run there."""
    settings = Settings(unsafe_fixes=unsafe_fixes).for_runtime("hip-cpu")
    result = convert_bytes(program.name, program.read_bytes(), settings)
    assert result.status == "converted", result.message
    support.write_beside(folder, support.referenced(result.output), settings)
    source = folder / f"{program.stem}.cpp"
    source.write_bytes(render("hip_cpu/prelude.h.j2").encode() + b"\n" + result.output)
    return run_on_hip_cpu(build_for_hip_cpu(source, folder, (folder,))).strip().splitlines()[-1]
