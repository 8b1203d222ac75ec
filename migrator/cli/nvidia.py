"""`rocmigrate nvidia-headers DIR`: write the headers that build HIP output with nvcc."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from . import app


@app.command("nvidia-headers")
def nvidia_headers(
    out: Path = typer.Argument(..., help="Folder to write the include tree to."),
    include: Optional[List[Path]] = typer.Option(
        None, "-I", "--include", help="A folder the build will search (repeatable): wrappers of "
        "optional libraries (NCCL, cuDNN) are written only where their headers are found."),
) -> None:
    """Write HIP headers for NVIDIA (nvcc -I DIR): HIP names mapped back to CUDA."""
    from .. import apitables
    from ..nvidia import header_search_path, write_nvidia_headers
    from ..toolchain.compilers import find_nvcc

    folders = header_search_path(tuple(include or ()), find_nvcc())
    written = write_nvidia_headers(apitables.load(), out, folders)
    typer.echo(f"wrote {len(written)} headers to {out} (use: nvcc -I {out} ...)")
