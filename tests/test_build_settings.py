"""The build settings every command shares: ``--offload-arch`` / ``offload-arch`` (the AMD GPUs
converted build files and `rocmigrate build` target)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from migrator.cli import _register, app
from migrator.settings import Settings
from migrator.versions import DEFAULT_OFFLOAD_ARCHS, default_offload_archs, parse_offload_archs
from migrator.workspace import Flags, WorkspaceError, open_workspace


def test_offload_arch_names_are_checked_and_deduplicated():
    assert parse_offload_archs(["gfx90a,gfx942", " gfx1100 ", "gfx90a"]) == \
        ("gfx90a", "gfx942", "gfx1100")
    assert parse_offload_archs(["gfx90a:xnack-", "gfx942:sramecc+:xnack+", "gfx906",
                                "gfx10-3-generic"]) == \
        ("gfx90a:xnack-", "gfx942:sramecc+:xnack+", "gfx906", "gfx10-3-generic")
    for bad, said in (("sm_80", "a CUDA architecture"), ("80", "a CUDA architecture"),
                      ("gfx", "not an AMD GPU architecture"), ("gfx90a:xnack", "gfx90a:xnack"),
                      ("mi250", "'mi250'"), (",", "no architecture given")):
        with pytest.raises(ValueError, match=said):
            parse_offload_archs([bad])


def test_offload_archs_default_config_and_flag(tmp_path: Path):
    assert Settings().offload_archs == DEFAULT_OFFLOAD_ARCHS == ("gfx90a", "gfx942")
    assert open_workspace([tmp_path], Flags()).settings.offload_archs == DEFAULT_OFFLOAD_ARCHS
    (tmp_path / ".rocmigrate.toml").write_text('offload-arch = ["gfx1100", "gfx90a"]\n')
    assert open_workspace([tmp_path], Flags()).settings.offload_archs == ("gfx1100", "gfx90a")
    (tmp_path / ".rocmigrate.toml").write_text('offload-arch = "gfx908,gfx90a"\n')
    assert open_workspace([tmp_path], Flags()).settings.offload_archs == ("gfx908", "gfx90a")
    flagged = open_workspace([tmp_path], Flags(offload_arch=("gfx942",))).settings
    assert flagged.offload_archs == ("gfx942",)  # the flag replaces the file's list
    assert Settings(offload_archs=("gfx942",)).fingerprint() != Settings().fingerprint()


def test_the_default_architectures_are_those_the_target_release_supports(tmp_path: Path):
    assert default_offload_archs((6, 0, 0)) == ("gfx90a", "gfx942")
    assert default_offload_archs((5, 7, 1)) == ("gfx90a",)  # MI300: ROCm 6.0 and later
    old = open_workspace([tmp_path], Flags(rocm="5.2")).settings
    assert old.offload_archs == ("gfx90a",)
    asked = open_workspace([tmp_path], Flags(rocm="5.2", offload_arch=("gfx942",))).settings
    assert asked.offload_archs == ("gfx942",)  # named: kept, whatever the target
    (tmp_path / ".rocmigrate.toml").write_text('offload-arch = "gfx90a,gfx942"\n')
    assert open_workspace([tmp_path], Flags(rocm="5.2")).settings.offload_archs == \
        ("gfx90a", "gfx942")


@pytest.mark.parametrize("text, said", [
    ('offload-arch = ["sm_80"]\n', "offload-arch: 'sm_80' is not an AMD GPU architecture"),
    ('offload-arch = [90]\n', "offload-arch must be a list of strings"),
    ('offload-arch = 90\n', "offload-arch must be a list or a str"),
])
def test_bad_offload_arch_in_the_file_names_it(tmp_path: Path, text: str, said: str):
    path = tmp_path / ".rocmigrate.toml"
    path.write_text(text)
    with pytest.raises(WorkspaceError) as raised:
        open_workspace([tmp_path], Flags())
    assert str(raised.value).startswith(str(path)) and said in str(raised.value)


def test_convert_takes_offload_arch_repeated_or_comma_separated(tmp_path: Path):
    _register()
    source = tmp_path / "k.cu"
    source.write_text("__global__ void k() {}\n")
    runner = CliRunner()
    done = runner.invoke(app, ["convert", str(source), "-o", str(tmp_path / "out"), "--dry-run",
                               "--format", "json", "--offload-arch", "gfx90a,gfx1100",
                               "--offload-arch", "gfx942"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["settings"]["offload_archs"] == ["gfx90a", "gfx1100", "gfx942"]
    refused = runner.invoke(app, ["convert", str(source), "-o", str(tmp_path / "out"),
                                  "--offload-arch", "sm_80"])
    assert refused.exit_code == 2
    assert "--offload-arch: 'sm_80' is not an AMD GPU architecture" in refused.output
