"""Can this machine run what validate builds? One GPU check per platform, made before any build.

A CUDA original, and a port built for NVIDIA (hipcc's NVIDIA platform, or nvcc through
rocmigrate's NVIDIA headers), need an NVIDIA GPU: ``nvidia-smi -L`` lists one, or, where
nvidia-smi is not installed, a ``/dev/nvidiaN`` device exists. A port built for AMD needs
``/dev/kfd`` and a gfx agent in ``rocminfo`` (or, without rocminfo, a GPU in ``rocm-smi``).

``ROCMIGRATE_GPU`` (validate's ``--gpu``) overrides the detection: ``auto`` detects; ``nvidia``,
``amd`` or ``nvidia,amd`` name the GPUs to take as present, the others as absent; ``none`` takes
every GPU as absent. Tests use it to run host-only programs, or to see the no-GPU path, anywhere.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from ..toolchain.process import run_process

GPU_ENV = "ROCMIGRATE_GPU"
PLATFORMS = ("nvidia", "amd")
QUERY_TIMEOUT = 60  # seconds for nvidia-smi, rocminfo or rocm-smi to answer
DEVICES = Path("/dev")  # where the GPU device files are
_LABEL = {"nvidia": "NVIDIA", "amd": "AMD"}


@dataclass(frozen=True)
class GpuCheck:
    platform: str  # nvidia | amd
    present: bool
    reason: str  # what was seen (or assumed), in words

    def as_dict(self) -> dict:
        return {"platform": self.platform, "present": self.present, "reason": self.reason}


def gpu_setting(value: str | None = None) -> frozenset[str] | None:
    """The GPUs an override takes as present (None: detect). ``value`` None reads
    ROCMIGRATE_GPU. Raises ValueError for a value that is none of auto, none, nvidia, amd."""
    text = (os.environ.get(GPU_ENV, "") if value is None else value).strip().lower()
    if text in ("", "auto"):
        return None
    if text == "none":
        return frozenset()
    named = {part.strip() for part in text.split(",") if part.strip()}
    unknown = sorted(named - set(PLATFORMS))
    if unknown or not named:
        raise ValueError(f"GPU setting {text!r} (--gpu or {GPU_ENV}): expected auto, none, "
                         f"nvidia, amd or nvidia,amd")
    return frozenset(named)


def gpu_check(platform: str, assume: str | None = None) -> GpuCheck:
    """Can a binary for ``platform`` (nvidia | amd | cpu) run here? ``assume``: an override as
    in ROCMIGRATE_GPU (None: read that variable). Raises ValueError for a bad override. A
    binary for HIP's CPU runtime (cpu) runs on any machine, whatever the override says."""
    if platform == "cpu":
        gpu_setting(assume)  # (a bad override is still an error)
        return GpuCheck("cpu", True, "the CPU: HIP's CPU runtime needs no GPU (64-lane "
                        "wavefronts)")
    if platform not in PLATFORMS:
        raise ValueError(f"unknown GPU platform {platform!r} (expected nvidia, amd or cpu)")
    present = gpu_setting(assume)
    label = _LABEL[platform]
    if present is not None:
        state = "present" if platform in present else "absent"
        named = ",".join(sorted(present)) or "none"
        return GpuCheck(platform, platform in present,
                        f"{label} GPU taken as {state} (--gpu / {GPU_ENV}={named})")
    found, seen = nvidia_gpu() if platform == "nvidia" else amd_gpu()
    return GpuCheck(platform, found, seen)


def nvidia_gpu() -> tuple[bool, str]:
    """Is an NVIDIA GPU usable here, and what was seen."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        devices = sorted(str(path) for path in DEVICES.glob("nvidia[0-9]*"))
        if devices:
            return True, f"NVIDIA GPU present ({devices[0]}; nvidia-smi not found)"
        return False, f"no NVIDIA GPU found: nvidia-smi not found and no {DEVICES / 'nvidia0'}"
    done = run_process([smi, "-L"], None, QUERY_TIMEOUT)
    gpus = [line.split(" (UUID")[0].strip() for line in done.stdout.splitlines()
            if line.startswith("GPU ")]
    if gpus and done.rc == 0:
        more = f" and {len(gpus) - 1} more" if len(gpus) > 1 else ""
        return True, f"NVIDIA GPU present ({gpus[0]}{more}; nvidia-smi -L)"
    return False, f"no NVIDIA GPU found: nvidia-smi -L lists no GPU ({_what(done)})"


def amd_gpu() -> tuple[bool, str]:
    """Is an AMD GPU usable here, and what was seen."""
    if not (DEVICES / "kfd").exists():
        return False, f"no AMD GPU found: {DEVICES / 'kfd'} is absent"
    rocminfo = shutil.which("rocminfo")
    if rocminfo is not None:
        done = run_process([rocminfo], None, QUERY_TIMEOUT)
        agent = re.search(r"^\s*Name:\s*(gfx\w+)", done.stdout, re.MULTILINE)
        if agent is None:
            return False, f"no AMD GPU found: rocminfo lists no gfx agent ({_what(done)})"
        return True, f"AMD GPU present ({agent.group(1)})"
    smi = shutil.which("rocm-smi")
    if smi is not None:
        done = run_process([smi, "--showid"], None, QUERY_TIMEOUT)
        gpu = re.search(r"^GPU\[\d+\]", done.stdout, re.MULTILINE)
        if gpu is None:
            return False, f"no AMD GPU found: rocm-smi lists no GPU ({_what(done)})"
        return True, f"AMD GPU present ({gpu.group(0)} in rocm-smi)"
    return False, (f"no AMD GPU found: {DEVICES / 'kfd'} exists but neither rocminfo nor "
                   "rocm-smi is installed")


def _what(done) -> str:
    """How a device query ended, briefly: why it did not run, or its exit and first line."""
    if done.error is not None:
        return done.error
    if done.timed_out:
        return f"no answer within {QUERY_TIMEOUT} s"
    lines = [line.strip() for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    return f"exit {done.rc}: {lines[0][:160] if lines else 'no output'}"
