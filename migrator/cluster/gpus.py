"""Whether a side's binaries can run, as the submitting command judges it: with Slurm the runs
happen on the jobs' nodes, not here, so a GPU the options do not rule out is taken as present
and each job checks its own node (``toolchain.devices.gpu_check`` there)."""

from __future__ import annotations

from ..toolchain.devices import GpuCheck, gpu_check, gpu_setting
from .options import ClusterOptions


def gpu_check_for(platform: str, assume: str | None, options: ClusterOptions) -> GpuCheck:
    """``gpu_check(platform, assume)`` of a local run; with Slurm and no --gpu override (auto),
    a GPU platform is present: checked on each job's node, which asks for it with --gres."""
    if options.slurm and platform != "cpu" and gpu_setting(assume) is None:
        return GpuCheck(platform, True, "checked on each Slurm job's node" + (
            f" (its jobs ask for --gres={options.gres})" if options.gres != "none" else ""))
    return gpu_check(platform, assume)
