"""`rocmigrate convert` end to end: layout, safety, incremental runs, output formats."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from conftest import git

from migrator.cli import _register, app

_register()
runner = CliRunner()

CUDA_FILE = b"""#include <cuda_runtime.h>
// cudaMalloc stays in this comment
__global__ void k(float* p) { p[threadIdx.x] = 1.0f; }
int main() {
  float* d;
  cudaMalloc(&d, 64 * sizeof(float));
  k<<<1, 64>>>(d);
  cudaDeviceSynchronize();
  cudaFree(d);
  return 0;
}
"""


def convert(*args: str):
    result = runner.invoke(app, ["convert", *args])
    return result


def make_tree(root: Path) -> None:
    (root / "src" / "sub").mkdir(parents=True)
    (root / "src" / "main.cu").write_bytes(CUDA_FILE)
    (root / "src" / "sub" / "util.cuh").write_bytes(
        b"#pragma once\n#include <cuda_runtime.h>\ninline void sync() { cudaDeviceSynchronize(); }\n")
    (root / "src" / "notes.txt").write_bytes(b"cudaMalloc is mentioned here and stays\n")
    (root / "src" / "plain.cpp").write_bytes(b"int add(int a, int b) { return a + b; }\n")


def test_tree_layout_and_copies(tmp_path: Path):
    make_tree(tmp_path)
    result = convert(str(tmp_path / "src"), "-o", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    out = tmp_path / "out"
    main = (out / "main.cu").read_bytes()
    assert b"hipMalloc(&d" in main and b"#include <hip/hip_runtime.h>" in main
    assert b"// cudaMalloc stays in this comment" in main
    assert b"hipDeviceSynchronize" in (out / "sub" / "util.cuh").read_bytes()
    assert (out / "notes.txt").read_bytes() == (tmp_path / "src" / "notes.txt").read_bytes()
    assert (out / "plain.cpp").read_bytes() == (tmp_path / "src" / "plain.cpp").read_bytes()
    assert "2 converted" in result.output and "1 copied" in result.output


def test_single_file_and_rename_ext(tmp_path: Path):
    src = tmp_path / "one.cu"
    src.write_bytes(CUDA_FILE)
    out = tmp_path / "out.hip"
    assert convert(str(src), "-o", str(out)).exit_code == 0
    assert b"hipFree(d)" in out.read_bytes()
    make_tree(tmp_path / "t")
    result = convert(str(tmp_path / "t" / "src"), "-o", str(tmp_path / "t" / "out"), "--rename-ext")
    assert result.exit_code == 0
    assert (tmp_path / "t" / "out" / "main.hip").exists()
    assert not (tmp_path / "t" / "out" / "main.cu").exists()
    assert (tmp_path / "t" / "out" / "sub" / "util.cuh").exists()


def test_dry_run_and_diff_write_nothing(tmp_path: Path):
    make_tree(tmp_path)
    result = convert(str(tmp_path / "src"), "-o", str(tmp_path / "out"), "--dry-run", "--diff")
    assert result.exit_code == 0
    assert "+  hipMalloc(&d, 64 * sizeof(float));" in result.output
    assert "-  cudaMalloc(&d, 64 * sizeof(float));" in result.output
    assert not (tmp_path / "out").exists()


def test_json_format_carries_diffs(tmp_path: Path):
    make_tree(tmp_path)
    result = convert(str(tmp_path / "src"), "-o", str(tmp_path / "out"), "--format", "json",
                     "--diff", "--dry-run")
    report = json.loads(result.output)
    assert any("+  hipMalloc(&d" in patch for patch in report["diffs"])


def test_json_format(tmp_path: Path):
    make_tree(tmp_path)
    result = convert(str(tmp_path / "src"), "-o", str(tmp_path / "out"), "--format", "json",
                     "--rocm", "5.2")
    report = json.loads(result.output)
    assert report["settings"]["rocm"] == "5.2"
    assert report["summary"]["files"]["converted"] == 2
    assert report["summary"]["converted_references"]["runtime"] >= 5
    paths = {f["path"]: f for f in report["files"]}
    assert paths["main.cu"]["status"] == "converted"
    assert any(f["code"] == "API001" and f["symbol"] == "cudaMalloc"
               for f in paths["main.cu"]["findings"])


def test_bad_files_fail_alone(tmp_path: Path):
    src = tmp_path / "src"
    make_tree(tmp_path)
    (src / "latin1.cu").write_bytes(b"// caf\xe9\nvoid f() { cudaFree(0); }\n")
    (src / "binary.cu").write_bytes(b"\x7fELF\x00\x00\x01binary")
    (src / "huge.cu").write_bytes(b"// x\n" * (3 * 1024 * 1024))
    (src / "garbage.cu").write_bytes(b"}}}} ))) ]]] @@@@ $$$$ ```` ;;;; }}}} ))) ]]] @@@@ $$$$\n" * 4)
    # the grammar makes no sense of it, but it is C tokens: converted lexically, not refused
    (src / "macro_soup.cu").write_bytes(b"} } ) ) cudaMemcpyToSymbol ( ( { { ] [ : ; ? ! ~\n" * 20)
    result = convert(str(src), "-o", str(tmp_path / "out"), "--format", "json")
    assert result.exit_code == 1
    report = json.loads(result.output)
    failures = {f["path"]: f["error"] for f in report["summary"]["failures"]}
    assert "latin1.cu" not in failures  # text that is not UTF-8 is converted, its bytes kept
    assert "binary" in failures["binary.cu"]
    assert "limit" in failures["huge.cu"]
    assert "does not parse" in failures["garbage.cu"]
    assert "macro_soup.cu" not in failures
    out = tmp_path / "out"
    assert b"hipMemcpyToSymbol" in (tmp_path / "out" / "macro_soup.cu").read_bytes()
    assert (out / "latin1.cu").read_bytes() == (
        b"// caf\xe9\n#include <hip/hip_runtime.h>\nvoid f() { hipFree(0); }\n")
    for name in ("binary.cu", "huge.cu", "garbage.cu"):
        assert not (out / name).exists()
    assert b"hipMalloc" in (out / "main.cu").read_bytes()  # the good files were converted
    assert [p.name for p in out.rglob("*.tmp")] == []


def test_symlinks_do_not_leave_the_tree(tmp_path: Path):
    make_tree(tmp_path)
    outside = tmp_path / "outside.cu"
    outside.write_bytes(CUDA_FILE)
    src = tmp_path / "src"
    os.symlink(outside, src / "escape.cu")
    os.symlink("main.cu", src / "alias.cu")
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", src / "linkdir")
    result = convert(str(src), "-o", str(tmp_path / "out"), "--format", "json")
    assert result.exit_code == 0
    skipped = {s["path"]: s["reason"] for s in json.loads(result.output)["summary"]["skipped"]}
    assert "outside" in skipped["escape.cu"] and "linkdir" in skipped
    out = tmp_path / "out"
    assert not (out / "escape.cu").exists()
    assert os.readlink(out / "alias.cu") == "main.cu"


def test_output_inside_source(tmp_path: Path):
    make_tree(tmp_path)
    src = tmp_path / "src"
    for _ in range(2):
        result = convert(str(src), "-o", str(src / "hip"))
        assert result.exit_code == 0, result.output
    assert (src / "hip" / "main.cu").exists()
    assert not (src / "hip" / "hip").exists()


def test_converting_output_again_changes_nothing(tmp_path: Path):
    make_tree(tmp_path)
    assert convert(str(tmp_path / "src"), "-o", str(tmp_path / "out")).exit_code == 0
    result = convert(str(tmp_path / "out"), "-o", str(tmp_path / "again"), "--format", "json")
    report = json.loads(result.output)
    assert report["summary"]["files"]["converted"] == 0
    for path in (tmp_path / "out").rglob("*"):
        if path.is_file() and ".rocmigrate" not in path.parts:
            assert (tmp_path / "again" / path.relative_to(tmp_path / "out")).read_bytes() == path.read_bytes()


def test_incremental_rerun(tmp_path: Path):
    make_tree(tmp_path)
    src, out = tmp_path / "src", tmp_path / "out"
    first = json.loads(convert(str(src), "-o", str(out), "--format", "json").output)
    assert first["summary"]["files"]["converted"] == 2
    again = json.loads(convert(str(src), "-o", str(out), "--format", "json").output)
    assert again["summary"]["files"]["converted"] == 0
    assert again["summary"]["files"]["cached"] == 3  # main.cu, util.cuh, plain.cpp
    # touching a source (new mtime, same bytes) costs a hash, not a conversion
    os.utime(src / "main.cu", ns=(1_000_000_000, 1_000_000_000))
    touched = json.loads(convert(str(src), "-o", str(out), "--format", "json").output)
    assert touched["summary"]["files"]["converted"] == 0
    (src / "sub" / "util.cuh").write_bytes(b"#pragma once\ninline void f() { cudaFree(0); }\n")
    edited = json.loads(convert(str(src), "-o", str(out), "--format", "json").output)
    assert edited["summary"]["files"]["converted"] == 1
    assert [f["path"] for f in edited["files"] if f["status"] == "converted"] == ["sub/util.cuh"]
    assert b"hipFree(0)" in (out / "sub" / "util.cuh").read_bytes()
    # a deleted source leaves no stale output; so does a changed option that renames outputs
    (src / "plain.cpp").unlink()
    removed = json.loads(convert(str(src), "-o", str(out), "--format", "json").output)
    assert not (out / "plain.cpp").exists()
    assert removed["summary"]["removed_stale_outputs"] == ["plain.cpp"]
    convert(str(src), "-o", str(out), "--rename-ext")
    assert (out / "main.hip").exists() and not (out / "main.cu").exists()
    # a hand-edited output is noticed and rewritten
    (out / "main.hip").write_bytes(b"edited")
    rerun = json.loads(convert(str(src), "-o", str(out), "--rename-ext", "--format", "json").output)
    assert rerun["summary"]["files"]["converted"] == 1
    assert b"hipMalloc" in (out / "main.hip").read_bytes()


def test_in_place_refuses_dirty_git_tree(tmp_path: Path):
    make_tree(tmp_path)
    src = tmp_path / "src"
    git(src, "init", "-q", check=True)
    git(src, "add", ".", check=True)
    git(src, "commit", "-qm", "init", check=True)
    (src / "main.cu").write_bytes(CUDA_FILE + b"// edited\n")
    refused = convert(str(src), "--in-place")
    assert refused.exit_code == 2 and "uncommitted changes" in refused.output
    assert b"cudaMalloc(&d" in (src / "main.cu").read_bytes()
    forced = convert(str(src), "--in-place", "--force")
    assert forced.exit_code == 0
    assert b"hipMalloc(&d" in (src / "main.cu").read_bytes()
    git(src, "commit", "-qam", "converted", check=True)
    clean = convert(str(src), "--in-place")
    assert clean.exit_code == 0


def test_usage_errors(tmp_path: Path):
    make_tree(tmp_path)
    assert convert(str(tmp_path / "missing"), "-o", str(tmp_path / "o")).exit_code == 2
    assert convert(str(tmp_path / "src")).exit_code == 2
    assert convert(str(tmp_path / "src"), "-o", str(tmp_path / "o"), "--rocm", "six").exit_code == 2


def test_process_pool_matches_serial(tmp_path: Path):
    src = tmp_path / "src"
    src.mkdir()
    for index in range(20):
        (src / f"f{index}.cu").write_bytes(CUDA_FILE.replace(b"k(", f"k{index}(".encode()))
    serial = convert(str(src), "-o", str(tmp_path / "a"), "--jobs", "1", "--format", "json")
    pooled = convert(str(src), "-o", str(tmp_path / "b"), "--jobs", "2", "--format", "json")
    assert json.loads(serial.output)["files"] == json.loads(pooled.output)["files"]
    for index in range(20):
        name = f"f{index}.cu"
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_module_entry_point(tmp_path: Path):
    make_tree(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "migrator", "convert", str(tmp_path / "src"),
                           "-o", str(tmp_path / "out")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "2 converted" in proc.stdout


def test_crlf_newlines_are_kept(tmp_path: Path):
    src = tmp_path / "win.cu"
    src.write_bytes(b"// windows file\r\n__global__ void k(float* p) { p[0] = 1; }\r\n"
                    b"void f(float* p) {\r\n  cudaFree(p);\r\n  cudaGraphInstantiateWithParams(0, 0, 0);\r\n}\r\n")
    assert convert(str(src), "-o", str(tmp_path / "out.cu"), "--rocm", "5.2").exit_code == 0
    out = (tmp_path / "out.cu").read_bytes()
    assert b"hipFree(p)" in out and b"#include <hip/hip_runtime.h>\r\n" in out
    assert b"// rocmigrate API002" in out
    assert out.count(b"\n") == out.count(b"\r\n")
