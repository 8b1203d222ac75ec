"""migrator.toolchain's compilers: one hipcc finder and one nvcc finder that build, validate,
harness and ``--rocm auto`` all ask (PATH, then the install's variables, then the default prefix);
the installed HIP's release read from hipconfig (else hip_version.h), the default of the commands
where hipcc is found, and the reason every summary gives."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from migrator.cli import _register, app
from migrator.harness import run as harness_run
from migrator.settings import Settings
from migrator.toolchain import compilers, sides
from migrator.toolchain.compilers import HipError, find_hipcc, find_nvcc, installed_hip
from migrator.validate import run as validate_run
from migrator.workspace import Flags, WorkspaceError, open_workspace

_register()


def _fake_hip(root: Path, hipconfig: str | None, header: str | None = None) -> Path:
    """A HIP install under ``root``: bin/hipcc, bin/hipconfig printing ``hipconfig`` (None:
    none), include/hip/hip_version.h holding ``header``."""
    bin_dir = root / "bin"
    bin_dir.mkdir(parents=True)
    scripts = {"hipcc": "#!/bin/sh\n[ \"$1\" = --version ] && echo 'HIP version: 0.0-fake'\n"
                        "exit 1\n"}
    if hipconfig is not None:
        scripts["hipconfig"] = f"#!/bin/sh\n[ \"$1\" = --version ] && printf '%s' '{hipconfig}'\n"
    for name, text in scripts.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(stat.S_IRWXU)
    if header is not None:
        (root / "include" / "hip").mkdir(parents=True)
        (root / "include" / "hip" / "hip_version.h").write_text(header)
    return bin_dir


@pytest.fixture
def only(monkeypatch, tmp_path_factory):
    """PATH holding only the given folder (and the shell the fake tools need); no ROCm or CUDA
    variables, no /opt/rocm or /usr/local/cuda fallback."""
    shell_dir = tmp_path_factory.mktemp("shell")
    (shell_dir / "sh").symlink_to(shutil.which("sh"))

    def use(bin_dir: Path | None):
        monkeypatch.setenv("PATH", os.pathsep.join(str(d) for d in (bin_dir, shell_dir) if d))
        for name in ("ROCM_PATH", "HIP_PATH", "CUDA_HOME", "CUDA_PATH"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setattr(compilers, "ROCM_PREFIXES", ())
        monkeypatch.setattr(compilers, "CUDA_PREFIXES", ())
    return use


def test_every_command_asks_the_one_finder_of_each_compiler():
    assert sides.find_hipcc is find_hipcc  # build and --rocm auto: installed_hip
    assert validate_run.find_nvcc is harness_run.find_nvcc is find_nvcc


@pytest.mark.parametrize("variable", ["ROCM_PATH", "HIP_PATH", None])
def test_a_hipcc_off_path_is_found_by_build_and_validate(tmp_path: Path, only, monkeypatch,
                                                         variable: str | None):
    """hipcc only under $ROCM_PATH/bin, $HIP_PATH/bin or ROCm's default prefix: --rocm auto and
    build read its HIP, and validate builds the port with it (not nvcc in its place)."""
    only(None)
    assert find_hipcc() is None and installed_hip() is None
    with pytest.raises(sides.ToolchainError, match=r"\$ROCM_PATH/bin"):
        sides.hip_toolchain("hipcc", "nvcc", "sm_90", "gfx90a", tmp_path)
    hipcc = _fake_hip(tmp_path / "rocm", "5.2.21153-0") / "hipcc"
    if variable:
        monkeypatch.setenv(variable, str(tmp_path / "rocm"))
    else:
        monkeypatch.setattr(compilers, "ROCM_PREFIXES", (str(tmp_path / "rocm"),))
    assert find_hipcc() == str(hipcc)
    assert installed_hip().hipcc == str(hipcc) and installed_hip().version == (5, 2, 0)
    monkeypatch.setattr(sides, "amd_gpu", lambda: (False, "no AMD GPU"))
    port = sides.hip_toolchain("hipcc", "nvcc", "sm_90", "gfx90a", tmp_path)
    assert (port.name, port.compiler, port.version) == ("hipcc-amd", str(hipcc),
                                                        "HIP version: 0.0-fake")


@pytest.mark.parametrize("variable", ["CUDA_HOME", "CUDA_PATH", None])
def test_an_nvcc_off_path_is_found(tmp_path: Path, only, monkeypatch, variable: str | None):
    only(None)
    assert find_nvcc() is None
    (tmp_path / "cuda" / "bin").mkdir(parents=True)
    nvcc = tmp_path / "cuda" / "bin" / "nvcc"
    nvcc.write_text("#!/bin/sh\nexit 0\n")
    assert find_nvcc() is None  # not executable
    nvcc.chmod(stat.S_IRWXU)
    if variable:
        monkeypatch.setenv(variable, str(tmp_path / "cuda"))
    else:
        monkeypatch.setattr(compilers, "CUDA_PREFIXES", (str(tmp_path / "cuda"),))
    assert find_nvcc() == str(nvcc)
    on_path = tmp_path / "path"
    on_path.mkdir()
    (on_path / "nvcc").symlink_to(nvcc)
    monkeypatch.setenv("PATH", f"{on_path}{os.pathsep}{os.environ['PATH']}")
    assert find_nvcc() == str(on_path / "nvcc")  # PATH first


def test_hipconfig_gives_major_minor_only(tmp_path: Path, only):
    only(_fake_hip(tmp_path, "5.2.21153-0"))
    hip = installed_hip()
    assert hip.version == (5, 2, 0) and hip.version_text == "5.2.21153-0"
    assert hip.read_from.endswith("hipconfig --version")


def test_a_rocm_release_file_gives_the_patch_release(tmp_path: Path, only):
    only(_fake_hip(tmp_path, "6.4.43483-a187df25c"))
    (tmp_path / ".info").mkdir()
    (tmp_path / ".info" / "version").write_text("6.4.3-127\n")
    assert installed_hip().version == (6, 4, 3)
    (tmp_path / ".info" / "version").write_text("6.3.1-1\n")  # not this HIP's: ignored
    assert installed_hip().version == (6, 4, 0)


def test_the_header_when_hipconfig_is_missing(tmp_path: Path, only):
    only(_fake_hip(tmp_path, None, "#define HIP_VERSION_MAJOR 6\n#define HIP_VERSION_MINOR 1\n"
                                    "#define HIP_VERSION_PATCH 40091\n"))
    hip = installed_hip()
    assert hip.version == (6, 1, 0) and hip.version_text == "6.1.40091"
    assert hip.read_from.endswith("hip_version.h")


def test_an_unreadable_version_is_an_error_that_says_what_was_tried(tmp_path: Path, only):
    only(_fake_hip(tmp_path, "garbage"))
    with pytest.raises(HipError, match="hipconfig --version said 'garbage'.*hip_version.h"):
        installed_hip()


def test_auto_resolution_and_its_reasons(tmp_path: Path, only):
    project = tmp_path / "project"
    project.mkdir()
    only(None)
    assert Settings().rocm == (6, 4, 0)  # the library default never looks
    assert open_workspace([project], Flags(detect_hip=True)).rocm_reason == \
        "ROCm 6.4, the default (no hipcc found)"
    with pytest.raises(WorkspaceError, match="--rocm auto: no hipcc found"):
        open_workspace([project], Flags(rocm="auto"))
    only(_fake_hip(tmp_path / "hip52", "5.2.21153-0"))
    detected = open_workspace([project], Flags(detect_hip=True))
    assert detected.settings.rocm == (5, 2, 0)
    assert detected.rocm_reason == ("ROCm 5.2, the installed HIP 5.2.21153-0 (--rocm auto, the "
                                    "default where hipcc is found)")
    assert open_workspace([project], Flags()).settings.rocm == (6, 4, 0)  # not asked to look
    explicit = open_workspace([project], Flags(rocm="6.0", detect_hip=True))
    assert (explicit.settings.rocm, explicit.rocm_reason) == ((6, 0, 0), "ROCm 6.0 (--rocm 6.0)")
    config = project / ".rocmigrate.toml"
    config.write_text('rocm = "auto"\n')
    assert open_workspace([project], Flags()).rocm_reason == \
        f'ROCm 5.2, the installed HIP 5.2.21153-0 (rocm = "auto" in {config})'
    config.write_text('rocm = "5.7"\n')
    assert open_workspace([project], Flags(detect_hip=True)).settings.rocm == (5, 7, 0)
    only(_fake_hip(tmp_path / "hip71", "7.1.25424-0"))
    newer = open_workspace([tmp_path], Flags(rocm="auto"))
    assert newer.settings.rocm == (6, 4, 0)
    assert newer.rocm_reason.startswith("ROCm 6.4, the newest release rocmigrate knows; the "
                                        "installed HIP 7.1.25424-0 is newer")


def test_convert_says_which_target_and_why(tmp_path: Path, only):
    source = tmp_path / "k.cu"
    source.write_text("__global__ void k(float* x) { x[0] = __shfl_down_sync(0xffffffff, "
                      "x[0], 1); }\n")
    only(_fake_hip(tmp_path / "hip52", "5.2.21153-0"))
    done = CliRunner().invoke(app, ["convert", str(source), "-o", str(tmp_path / "o.cu")])
    assert done.exit_code == 0, done.output
    assert done.output.endswith("target: ROCm 5.2, the installed HIP 5.2.21153-0 (--rocm auto, "
                                "the default where hipcc is found)\n")
    assert "__shfl_down(" in (tmp_path / "o.cu").read_text()  # HIP 5.2 has no _sync shuffles
    report = CliRunner().invoke(app, ["convert", str(source), "-o", str(tmp_path / "p.cu"),
                                      "--rocm", "6.4", "--format", "json"])
    settings = json.loads(report.stdout)["settings"]
    assert (settings["rocm"], settings["rocm_reason"]) == ("6.4", "ROCm 6.4 (--rocm 6.4)")
    assert "__shfl_down_sync(" in (tmp_path / "p.cu").read_text()


@pytest.mark.slow
def test_the_real_installed_hip_is_read():
    """The machine's hipcc (CI installs Debian's HIP 5.2): its hipconfig's major.minor."""
    import subprocess

    hip = installed_hip()
    assert hip is not None, "hipcc is not installed"
    said = subprocess.run([str(Path(hip.hipcc).resolve().parent / "hipconfig"), "--version"],
                          capture_output=True, text=True, env={**os.environ,
                                                               "HIP_PLATFORM": "amd"}).stdout
    assert hip.version[:2] == tuple(int(part) for part in said.split(".")[:2])
