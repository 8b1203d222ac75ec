"""`rocmigrate lint`: exit codes, output formats, configuration, fixes, suppressions."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from typer.testing import CliRunner

from conftest import require_command
from migrator.cli import _register, app

_register()

BAD = b"""#include <hip/hip_runtime.h>
#include <cuda_runtime.h>
__global__ void k(float* p, int* out) {
  int lane = threadIdx.x % 32;
  float v = p[threadIdx.x];
  v += __shfl_down_sync(0xffffffff, v, 1);
  out[threadIdx.x] = lane + __popc(__ballot(v > 0.0f));
  cudaDeviceSynchronize();
}
"""
GOOD = b"""#include <hip/hip_runtime.h>
__global__ void k(float* p) { p[threadIdx.x] = 1.0f; }
"""


def lint(*args: str, cwd: Path | None = None):
    old = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        return CliRunner().invoke(app, ["lint", *args])
    finally:
        os.chdir(old)


def test_exit_codes_and_text_output(tmp_path: Path):
    (tmp_path / "bad.hip").write_bytes(BAD)
    (tmp_path / "good.hip").write_bytes(GOOD)
    clean = lint("good.hip", "--rocm", "6.4", cwd=tmp_path)
    assert clean.exit_code == 0 and "Found 0 findings." in clean.output
    found = lint(".", "--rocm", "6.4", cwd=tmp_path)
    assert found.exit_code == 1
    lines = [line for line in found.output.splitlines() if line.startswith("bad.hip:")]
    codes = [line.split()[1] for line in lines]
    # WRP003: HIP 6.4 declares __shfl_down_sync only with HIP_ENABLE_WARP_SYNC_BUILTINS
    assert codes == ["HDR001", "WAV001", "WRP003", "WAV002", "WAV003", "API001"]
    assert "bad.hip:4:14: WAV001 [unsafe] 'threadIdx.x % 32' assumes 32-lane warps" in found.output
    assert "bad.hip:6:25: WAV002 [*]" in found.output
    assert lint("missing.hip", cwd=tmp_path).exit_code == 2
    assert lint(".", "--exit-zero", cwd=tmp_path).exit_code == 0


def test_fix_diff_and_statistics(tmp_path: Path):
    bad = tmp_path / "bad.hip"
    bad.write_bytes(BAD)
    shown = lint("bad.hip", "--diff", "--rocm", "6.4", cwd=tmp_path)
    assert "+  v += __shfl_down_sync(0xffffffffffffffffull, v, 1);" in shown.output
    assert bad.read_bytes() == BAD  # --diff writes nothing
    stats = lint("bad.hip", "--statistics", "--rocm", "6.4", cwd=tmp_path)
    assert "     1  WAV001  (0 fixable)" in stats.output
    fixed = lint("bad.hip", "--fix", "--rocm", "6.4", cwd=tmp_path)
    assert fixed.exit_code == 1  # the unsafe WAV001 finding remains
    text = bad.read_bytes()
    assert b"__popcll(__ballot" in text and b"hipDeviceSynchronize()" in text
    assert b"#include <cuda_runtime.h>" not in text and b"% 32" in text
    assert b"#define HIP_ENABLE_WARP_SYNC_BUILTINS\n#include <hip/hip_runtime.h>" in text
    assert "Found 1 finding remaining, 5 fixed" in fixed.output
    unsafe = lint("bad.hip", "--fix", "--unsafe-fixes", "--rocm", "6.4", cwd=tmp_path)
    assert unsafe.exit_code == 0 and b"threadIdx.x % warpSize" in bad.read_bytes()
    assert list(tmp_path.glob("*.tmp")) == []


def test_select_ignore_and_wavefront_setting(tmp_path: Path):
    (tmp_path / "bad.hip").write_bytes(BAD)
    only = lint("bad.hip", "--select", "WAV", "--output-format", "json", cwd=tmp_path)
    codes = {f["code"] for f in json.loads(only.output)["findings"]}
    assert codes == {"WAV001", "WAV002", "WAV003"}
    ignored = lint("bad.hip", "--ignore", "WAV,HDR,WRP", "--output-format", "json",
                   cwd=tmp_path)
    assert {f["code"] for f in json.loads(ignored.output)["findings"]} == {"API001"}
    (tmp_path / "pyproject.toml").write_text('[tool.rocmigrate]\nwavefront-size = 32\n')
    rdna = lint("bad.hip", "--select", "WAV001", "--output-format", "json", cwd=tmp_path)
    assert json.loads(rdna.output)["findings"] == []


def test_configuration(tmp_path: Path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "bad.hip").write_bytes(BAD)
    (tmp_path / "third_party").mkdir()
    (tmp_path / "third_party" / "vendored.cu").write_bytes(BAD)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.rocmigrate]\nignore = ["HDR", "WRP"]\nexclude = ["third_party"]\n'
        '[tool.rocmigrate.per-file-ignores]\n"src/*.hip" = ["API001"]\n')
    result = lint(".", "--output-format", "json", cwd=tmp_path)
    findings = json.loads(result.output)["findings"]
    assert {f["path"] for f in findings} == {"src/bad.hip"}
    assert {f["code"] for f in findings} == {"WAV001", "WAV002", "WAV003"}
    # .rocmigrate.toml wins over pyproject.toml in the same folder (whole file, no merging)
    (tmp_path / ".rocmigrate.toml").write_text('select = ["API"]\n')
    dotted = json.loads(lint(".", "--output-format", "json", cwd=tmp_path).output)["findings"]
    assert {(f["path"], f["code"]) for f in dotted} == {("src/bad.hip", "API001"),
                                                         ("third_party/vendored.cu", "API001")}
    (tmp_path / ".rocmigrate.toml").write_text('selct = ["API"]\n')
    typo = lint(".", cwd=tmp_path)
    assert typo.exit_code == 2 and "unknown key 'selct'" in typo.output
    (tmp_path / ".rocmigrate.toml").write_text('wavefront-size = 48\n')
    assert lint(".", cwd=tmp_path).exit_code == 2
    (tmp_path / ".rocmigrate.toml").write_text('rocm = "six"\n')
    assert lint(".", cwd=tmp_path).exit_code == 2


def test_json_and_github_formats(tmp_path: Path):
    (tmp_path / "bad.hip").write_bytes(BAD)
    report = json.loads(lint("bad.hip", "--output-format", "json", "--rocm", "6.4",
                             cwd=tmp_path).output)
    first = report["findings"][0]
    assert set(first) >= {"path", "line", "column", "code", "message", "fix"}
    # a pinned target: no warning annotation first (tests/test_target_warning.py)
    github = lint("bad.hip", "--output-format", "github", "--rocm", "6.4",
                  cwd=tmp_path).output.splitlines()
    assert github[0].startswith("::notice file=bad.hip,line=2,col=1,title=HDR001::HDR001 ")
    assert any(line.startswith("::warning file=bad.hip,line=4,col=14,title=WAV001::") for line in github)


def test_sarif_read_by_a_consumer(tmp_path: Path):
    (tmp_path / "bad.hip").write_bytes(BAD)
    result = lint("bad.hip", "--output-format", "sarif", cwd=tmp_path)
    sarif = tmp_path / "out.sarif"
    sarif.write_text(result.output)
    document = json.loads(result.output)
    assert document["version"] == "2.1.0"
    run = document["runs"][0]
    rule_ids = [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    assert {"API001", "WAV001", "WAV002", "RMG001"} <= set(rule_ids)
    for res in run["results"]:
        assert rule_ids[res["ruleIndex"]] == res["ruleId"]
    csv_path = tmp_path / "out.csv"
    tool = require_command("sarif", "sarif-tools")
    subprocess.run([tool, "csv", "-o", str(csv_path), str(sarif)], check=True, capture_output=True)
    rows = csv_path.read_text().splitlines()
    assert rows[0].startswith("Tool,Severity,Code,Description,Location,Line")
    assert any(row.startswith("rocmigrate,warning,WAV002,") and row.endswith(",bad.hip,6") for row in rows)
    summary = subprocess.run([tool, "summary", str(sarif)], capture_output=True, text=True, check=True)
    assert "WAV001" in summary.stdout


def test_lint_reports_missing_apis_without_writing_markers(tmp_path: Path):
    source = b"#include <hip/hip_runtime.h>\nvoid f() { cudaDeviceFlushGPUDirectRDMAWrites(0, 0); }\n"
    (tmp_path / "a.hip").write_bytes(source)
    result = lint("a.hip", "--fix", "--output-format", "json", cwd=tmp_path)
    assert result.exit_code == 1
    codes = [f["code"] for f in json.loads(result.output)["findings"]]
    assert codes == ["API003"]
    assert (tmp_path / "a.hip").read_bytes() == source


def test_symlinks_are_reported_not_followed(tmp_path: Path):
    (tmp_path / "bad.hip").write_bytes(BAD)
    os.symlink("bad.hip", tmp_path / "alias.hip")
    result = CliRunner().invoke(app, ["lint", str(tmp_path), "--select", "API001"])
    assert result.output.count("API001") == 1  # the target once, not again through the link
    assert "alias.hip: symlink, not followed" in result.output


def test_a_folder_lints_its_build_files_too(tmp_path: Path):
    """A HIP project's Makefile or CMakeLists.txt with CUDA left in it is found by
    `lint DIR` (as by `lint Makefile`), and --fix migrates it."""
    (tmp_path / "good.hip").write_bytes(GOOD)
    (tmp_path / "Makefile").write_bytes(b"CC = nvcc\nall:\n\t$(CC) -arch=sm_80 good.hip\n")
    (tmp_path / "CMakeLists.txt").write_bytes(b"project(x LANGUAGES CXX HIP)\n")
    found = lint(".", "--rocm", "6.4", "--offload-arch", "gfx90a", cwd=tmp_path)
    assert found.exit_code == 1
    assert [line.split()[0] for line in found.output.splitlines() if "MKF" in line] == [
        "Makefile:1:6:", "Makefile:3:8:"]
    assert "CMakeLists.txt" not in found.output  # already HIP: nothing to say
    fixed = lint(".", "--rocm", "6.4", "--offload-arch", "gfx90a", "--fix", cwd=tmp_path)
    assert fixed.exit_code == 0, fixed.output
    assert (tmp_path / "Makefile").read_bytes() == (
        b"CC = hipcc\nall:\n\t$(CC) --offload-arch=gfx90a good.hip\n")
