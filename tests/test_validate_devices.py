"""validate without a GPU: the check made before anything is built (nvidia-smi, /dev/nvidiaN,
/dev/kfd with rocminfo or rocm-smi, and the ROCMIGRATE_GPU / --gpu override), builds that still
happen, runs reported skipped with the reason; and with a GPU (taken as present), runs that take
turns in a rotating order, the warm-up round included. Shell scripts stand in for nvidia-smi,
rocminfo, rocm-smi and for nvcc, whose "binaries" print the output contract, so that this runs
anywhere in a few seconds."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import require
from migrator.cli import _register, app
from migrator.toolchain import devices
from migrator.toolchain.devices import GPU_ENV, amd_gpu, gpu_check, gpu_setting, nvidia_gpu

_register()
runner = CliRunner()


@pytest.fixture(autouse=True)
def _posix_and_no_override(monkeypatch):
    require(os.name == "posix", "POSIX shell scripts")
    monkeypatch.delenv(GPU_ENV, raising=False)


def script(folder: Path, name: str, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def only_on_path(monkeypatch, folder: Path) -> None:
    """PATH holds ``folder`` alone: the tools it has are found, no other."""
    folder.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("PATH", str(folder))


# nvidia-smi's answers with two GPUs, and without a usable one
TWO_GPUS = ('echo "GPU 0: NVIDIA H200 (UUID: GPU-1b2c)"\n'
            'echo "GPU 1: NVIDIA H200 (UUID: GPU-3d4e)"\n')
NO_DEVICES = 'echo "No devices were found"\nexit 6\n'


def test_nvidia_gpu_asks_nvidia_smi(tmp_path: Path, monkeypatch):
    tools = tmp_path / "bin"
    only_on_path(monkeypatch, tools)
    script(tools, "nvidia-smi", TWO_GPUS)
    assert nvidia_gpu() == (True, "NVIDIA GPU present (GPU 0: NVIDIA H200 and 1 more; "
                                  "nvidia-smi -L)")
    script(tools, "nvidia-smi", NO_DEVICES)
    assert nvidia_gpu() == (False, "no NVIDIA GPU found: nvidia-smi -L lists no GPU (exit 6: "
                                   "No devices were found)")


def test_without_nvidia_smi_a_device_file_decides(tmp_path: Path, monkeypatch):
    only_on_path(monkeypatch, tmp_path / "bin")
    dev = tmp_path / "dev"
    dev.mkdir()
    monkeypatch.setattr(devices, "DEVICES", dev)
    assert nvidia_gpu() == (False, f"no NVIDIA GPU found: nvidia-smi not found and no "
                                   f"{dev / 'nvidia0'}")
    (dev / "nvidiactl").touch()  # the control device alone is no GPU
    assert not nvidia_gpu()[0]
    (dev / "nvidia0").touch()
    assert nvidia_gpu() == (True, f"NVIDIA GPU present ({dev / 'nvidia0'}; nvidia-smi not found)")


def test_amd_gpu_needs_kfd_and_an_agent(tmp_path: Path, monkeypatch):
    tools, dev = tmp_path / "bin", tmp_path / "dev"
    only_on_path(monkeypatch, tools)
    dev.mkdir()
    monkeypatch.setattr(devices, "DEVICES", dev)
    assert amd_gpu() == (False, f"no AMD GPU found: {dev / 'kfd'} is absent")
    (dev / "kfd").touch()
    assert amd_gpu() == (False, f"no AMD GPU found: {dev / 'kfd'} exists but neither rocminfo "
                                "nor rocm-smi is installed")
    script(tools, "rocm-smi", 'echo "GPU[0]          : Device ID: 0x740f"\n')
    assert amd_gpu() == (True, "AMD GPU present (GPU[0] in rocm-smi)")
    script(tools, "rocminfo", 'echo "  Name:                    AMD EPYC 7763"\n')
    assert amd_gpu() == (False, "no AMD GPU found: rocminfo lists no gfx agent (exit 0: "
                                "Name:                    AMD EPYC 7763)")
    script(tools, "rocminfo", 'echo "  Name:                    AMD EPYC 7763"\n'
                              'echo "  Name:                    gfx90a"\n')
    assert amd_gpu() == (True, "AMD GPU present (gfx90a)")


def test_the_override(tmp_path: Path, monkeypatch):
    only_on_path(monkeypatch, tmp_path / "bin")  # no tool: detection would find nothing
    monkeypatch.setattr(devices, "DEVICES", tmp_path)
    assert gpu_setting(None) is None and gpu_setting("auto") is None
    assert gpu_setting("none") == frozenset()
    assert gpu_setting(" AMD, nvidia ") == frozenset({"amd", "nvidia"})
    for bad in ("yes", "nvidia,intel", ","):
        with pytest.raises(ValueError, match="expected auto, none, nvidia, amd or nvidia,amd"):
            gpu_setting(bad)
    assert not gpu_check("nvidia").present  # detected: nothing here
    monkeypatch.setenv(GPU_ENV, "nvidia")
    assert gpu_check("nvidia") == devices.GpuCheck(
        "nvidia", True, "NVIDIA GPU taken as present (--gpu / ROCMIGRATE_GPU=nvidia)")
    assert gpu_check("amd") == devices.GpuCheck(
        "amd", False, "AMD GPU taken as absent (--gpu / ROCMIGRATE_GPU=nvidia)")
    assert not gpu_check("nvidia", "none").present  # an explicit value wins over the variable
    assert not gpu_check("nvidia", "auto").present
    with pytest.raises(ValueError, match="unknown GPU platform"):
        gpu_check("intel")


# --- validate end to end, with a stand-in nvcc ---------------------------------------------------

# nvcc: --version, or a "compile" that writes, as the binary named by -o, a script that logs
# its run (the binary's path) to $RUN_LOG and prints the output contract
FAKE_NVCC = r"""if [ "$1" = "--version" ]; then
  echo "Cuda compilation tools, release 13.0"
  exit 0
fi
out=""
while [ $# -gt 0 ]; do
  if [ "$1" = "-o" ]; then out="$2"; fi
  shift
done
cat > "$out" <<'BINARY'
#!/bin/sh
echo "$0" >> "$RUN_LOG"
echo '{"work_ms": 1.5, "result": "PASS"}'
echo PASS
BINARY
chmod +x "$out"
"""

PROGRAM = "#include <cuda_runtime.h>\nint main() { return (int)cudaMemcpyHostToDevice; }\n"


@pytest.fixture
def fake_machine(tmp_path: Path, monkeypatch) -> Path:
    """A source tree, the stand-in nvcc and an nvidia-smi that finds no GPU, first on PATH."""
    tools = tmp_path / "bin"
    script(tools, "nvcc", FAKE_NVCC)
    script(tools, "nvidia-smi", NO_DEVICES)
    monkeypatch.setenv("PATH", f"{tools}:{os.environ.get('PATH', '')}")
    monkeypatch.setenv("RUN_LOG", str(tmp_path / "runs.log"))
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.cu").write_text(PROGRAM)
    return tmp_path


def validate(folder: Path, *args: str):
    return runner.invoke(app, ["validate", str(folder / "src"), "-o", str(folder / "r"),
                               "--hip-compiler", "nvcc", *args])


def test_without_a_gpu_everything_is_built_and_every_run_skipped(fake_machine: Path):
    result = validate(fake_machine)
    assert result.exit_code == 0, result.output  # skipped is not failed
    reason = "no NVIDIA GPU found: nvidia-smi -L lists no GPU (exit 6: No devices were found)"
    lines = result.output.splitlines()
    said = lines.index(f"{reason}: everything is built, nothing is run (every run is reported "
                       "skipped; --gpu or ROCMIGRATE_GPU overrides the detection)")
    assert said < next(i for i, line in enumerate(lines) if line.startswith("building "))
    assert f"nothing was run: {reason} (--gpu or ROCMIGRATE_GPU overrides the detection)" in lines
    assert "failed" not in result.output
    assert "app  optimized  skipped" in lines and "app  naive      skipped" in lines
    assert lines[-1].startswith("rocmigrate validate: 2 skipped; report: ")
    assert not (fake_machine / "runs.log").exists()
    document = json.loads((fake_machine / "r" / "validate.json").read_text())
    assert document["not_run"] == reason
    assert document["gpus"]["cuda"] == {"platform": "nvidia", "present": False, "reason": reason}
    assert document["summary"] == {"ok": True, "verdicts": {"skipped": 2}}
    [program] = document["programs"]
    assert program["original"]["build"]["ok"] and program["original"]["runs"] == []
    for port in program["variants"].values():
        assert port["build"]["ok"] and port["runs"] == [] and port["warmups"] == []
        assert (port["verdict"], port["problems"]) == ("skipped", [f"not run: {reason}"])
    markdown = (fake_machine / "r" / "validate.md").read_text()
    assert f"built only: **nothing was run**: {reason}." in markdown
    assert "**Nothing was run**" in markdown


def test_with_a_gpu_the_runs_take_turns_warm_up_included(fake_machine: Path, monkeypatch):
    monkeypatch.setenv(GPU_ENV, "nvidia")
    result = validate(fake_machine, "--runs", "7")
    assert result.exit_code == 0, result.output
    sides = [Path(line).parts[-3] for line in
             (fake_machine / "runs.log").read_text().splitlines()]
    order = ["cuda", "optimized", "naive"]
    rounds = [sides[i:i + 3] for i in range(0, len(sides), 3)]
    assert len(rounds) == 8  # the warm-up round, then 7 timed ones
    assert rounds == [order[i % 3:] + order[:i % 3] for i in range(8)]
    document = json.loads((fake_machine / "r" / "validate.json").read_text())
    assert document["gpus"]["hip"]["reason"] == \
        "NVIDIA GPU taken as present (--gpu / ROCMIGRATE_GPU=nvidia)"
    [program] = document["programs"]
    assert len(program["original"]["warmups"]) == 1 and len(program["original"]["runs"]) == 7
    assert program["original"]["warmups"][0]["warmup"] is True
    for port in program["variants"].values():
        assert port["verdict"] == "pass"
        [timing] = port["timings"]
        assert (timing["flag"], timing["interval"], timing["runs"]) == ("ok", [1.0, 1.0], [7, 7])
    # 5 runs: too few at 99.9%, said at the start; enough at 99%
    few = validate(fake_machine, "--runs", "5")
    assert "5 runs per binary: too few for a timing verdict at 99.9% (at least 7)" in few.output
    document = json.loads((fake_machine / "r" / "validate.json").read_text())
    assert document["programs"][0]["variants"]["naive"]["timings"][0]["interval"] is None
    validate(fake_machine, "--runs", "5", "--confidence", "0.99")
    document = json.loads((fake_machine / "r" / "validate.json").read_text())
    assert document["settings"]["confidence"] == 0.99
    assert document["programs"][0]["variants"]["naive"]["timings"][0]["interval"] == [1.0, 1.0]
    # --gpu wins over the variable
    result = validate(fake_machine, "--gpu", "none")
    assert result.exit_code == 0 and "2 skipped" in result.output
    assert "NVIDIA GPU taken as absent (--gpu / ROCMIGRATE_GPU=none)" in result.output
    bad = validate(fake_machine, "--gpu", "maybe")
    assert bad.exit_code == 2 and "expected auto, none, nvidia, amd" in bad.output


# --- validate --harness: programs and kernel harnesses in one report ------------------------------

KERNEL = """__global__ void twice(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2.0f * in[i];
}
"""


def test_validate_with_harness_reports_programs_and_kernels_together(fake_machine: Path):
    (fake_machine / "src" / "twice.cu").write_text(KERNEL)
    plain = validate(fake_machine)
    assert "harness" not in json.loads((fake_machine / "r" / "validate.json").read_text())
    assert not (fake_machine / "r" / "harness").exists() and "twice" not in plain.output
    result = validate(fake_machine, "--harness")
    assert result.exit_code == 0, result.output  # skipped (no GPU) is not failed
    lines = result.output.splitlines()
    assert "app  optimized  skipped" in lines
    assert any(line.startswith("twice/twice.toml") and "skipped" in line for line in lines)
    assert lines[-1].startswith("rocmigrate harness: 1 skipped; report: ")
    document = json.loads((fake_machine / "r" / "validate.json").read_text())
    assert document["summary"]["ok"] is True
    [kernel] = document["harness"]["harnesses"]
    assert (kernel["kernel"], kernel["verdict"]) == ("twice", "skipped")
    assert kernel["builds"]["cuda"]["ok"] and kernel["builds"]["hip"]["ok"]
    assert document["harness"]["settings"]["runs"] == 10  # validate's
    markdown = (fake_machine / "r" / "validate.md").read_text()
    assert "\n## rocmigrate harness: `" in markdown and "\n### Summary" in markdown
    assert (fake_machine / "r" / "harness" / "harness.json").is_file()
    # with a GPU the programs pass, but the stand-in harness binaries write no output: the
    # exit status covers the kernels too
    result = validate(fake_machine, "--harness", "--gpu", "nvidia", "--runs", "1",
                      "--warmup", "0")
    assert result.exit_code == 1, result.output
    document = json.loads((fake_machine / "r" / "validate.json").read_text())
    assert document["summary"]["verdicts"] == {"pass": 2} and not document["summary"]["ok"]
    assert document["harness"]["harnesses"][0]["verdict"] == "failed"
