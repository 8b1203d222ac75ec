"""`rocmigrate nvidia-headers DIR`: write the headers that build HIP output with nvcc."""

from __future__ import annotations

from pathlib import Path

import typer

from . import app


@app.command("nvidia-headers")
def nvidia_headers(out: Path = typer.Argument(..., help="Folder to write the include tree to.")) -> None:
    """Write HIP headers for NVIDIA (nvcc -I DIR): HIP names mapped back to CUDA."""
    from .. import apitables
    from ..nvidia import write_nvidia_headers

    written = write_nvidia_headers(apitables.load(), out)
    typer.echo(f"wrote {len(written)} headers to {out} (use: nvcc -I {out} ...)")
