"""Outputs never clobber (issue 25, item 2) and names never reach the terminal raw (item 9).

An output folder that holds the source is refused; a FIFO, device or socket at an output path is
never replaced; ``-o -`` is standard output for one file and refused for a tree; file names with
control characters are quoted as git quotes them in every text output."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from migrator import fsutil
from migrator.build.run import BuildReport, Unit
from migrator.cli import _register, app
from migrator.output import build_text, harness_text, text, validate_text
from migrator.output.terminal import escaped, quoted

_register()
runner = CliRunner()

CUDA = b"#include <cuda_runtime.h>\nint main() { cudaDeviceSynchronize(); return 0; }\n"
HIP = b"#include <hip/hip_runtime.h>\nint main() { hipDeviceSynchronize(); return 0; }\n"
HALF_ATOMIC = (b"#include <cuda_fp16.h>\n__global__ void k(__half* p) "
               b"{ atomicAdd(p, __float2half(1.0f)); }\n")
WAVE = (b"#include <cuda_runtime.h>\n__global__ void k(int* out) {\n"
        b"  out[threadIdx.x] = __shfl_down_sync(0xffffffff, threadIdx.x % 32, 1);\n}\n")
EVIL = "a\x1b]0;pwned\x07\nFAKE: 0 failed.cu"
CONTROL = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]")  # a newline and a tab are fine as such


def rocmigrate(*args, cwd: Path | None = None):
    """The command in-process; a traceback is a defect, whatever the exit code."""
    previous = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        result = runner.invoke(app, [str(arg) for arg in args])
    finally:
        os.chdir(previous)
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"traceback: {result.exception!r}\n{result.output}")
    return result


def tree(root: Path) -> Path:
    """src/a.cu and src/src/a.cu: converting src into its parent puts the second on the first."""
    src = root / "src"
    (src / "src").mkdir(parents=True)
    (src / "a.cu").write_bytes(CUDA)
    (src / "src" / "a.cu").write_bytes(b"// the inner one\n" + CUDA)
    return src


# 2a. an output folder that holds the source


@pytest.mark.parametrize("output", [".", "..", "link-to-here"])
def test_an_output_folder_that_holds_the_source_is_refused(tmp_path: Path, output: str):
    src = tree(tmp_path)
    os.symlink(".", tmp_path / "link-to-here")
    where = src if output == ".." else tmp_path
    result = rocmigrate("convert", "src" if output != ".." else ".", "-o", output, cwd=where)
    assert result.exit_code == 2
    assert "holds the source folder" in result.stderr
    assert (src / "a.cu").read_bytes() == CUDA
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link-to-here", "src"]


def test_the_dry_run_refuses_it_too(tmp_path: Path):
    tree(tmp_path)
    result = rocmigrate("convert", "src", "-o", ".", "--dry-run", cwd=tmp_path)
    assert result.exit_code == 2 and "holds the source folder" in result.stderr


def test_an_output_folder_inside_the_source_still_works(tmp_path: Path):
    src = tree(tmp_path)
    for _ in range(2):  # the second run skips the first run's output inside the source
        result = rocmigrate("convert", src, "-o", src / "out")
        assert result.exit_code == 0, result.output
        assert "2 files" in result.stdout
    assert (src / "out" / "a.cu").read_bytes() == HIP
    assert not (src / "out" / "out").exists()
    assert (src / "a.cu").read_bytes() == CUDA


def test_a_sibling_output_folder_is_fine(tmp_path: Path):
    tree(tmp_path)
    result = rocmigrate("convert", "src", "-o", "src-hip", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "src-hip" / "src" / "a.cu").read_bytes().startswith(b"// the inner one")


# 2b. FIFOs, devices and sockets are never replaced


def test_a_device_as_the_output_is_refused(tmp_path: Path):
    (tmp_path / "a.cu").write_bytes(CUDA)
    result = rocmigrate("convert", tmp_path / "a.cu", "-o", os.devnull)
    assert result.exit_code == 2
    assert "/dev/null is a character device, not a regular file" in result.stderr
    assert Path(os.devnull).is_char_device()


def test_a_fifo_as_the_output_is_refused_and_kept(tmp_path: Path):
    (tmp_path / "a.cu").write_bytes(CUDA)
    fifo = tmp_path / "a.hip"
    os.mkfifo(fifo)
    result = rocmigrate("convert", tmp_path / "a.cu", "-o", fifo)
    assert result.exit_code == 2 and "is a FIFO, not a regular file" in result.stderr
    assert fifo.is_fifo()
    # a dry run writes nothing: nothing to refuse
    assert rocmigrate("convert", tmp_path / "a.cu", "-o", fifo, "--dry-run").exit_code == 0
    assert fifo.is_fifo()


def test_a_fifo_or_socket_inside_the_output_tree_fails_that_file_alone(tmp_path: Path):
    src = tree(tmp_path)
    (src / "b.cu").write_bytes(CUDA)
    out = tmp_path / "out"
    (out / "src").mkdir(parents=True)
    os.mkfifo(out / "a.cu")
    server = socket.socket(socket.AF_UNIX)
    previous = os.getcwd()
    os.chdir(out / "src")  # a short name: a socket's path has a length limit
    try:
        server.bind("a.cu")
    finally:
        os.chdir(previous)
    try:
        result = rocmigrate("convert", src, "-o", out, "--format", "json")
    finally:
        server.close()
    assert result.exit_code == 1
    files = {f["path"]: f for f in json.loads(result.stdout)["files"]}
    assert files["a.cu"]["status"] == "failed"
    assert "it is a FIFO, not a regular file" in files["a.cu"]["message"]
    assert "it is a socket" in files["src/a.cu"]["message"]
    assert files["b.cu"]["status"] == "converted"
    assert (out / "a.cu").is_fifo() and (out / "src" / "a.cu").is_socket()
    assert (out / "b.cu").read_bytes() == HIP


def test_the_write_helpers_replace_only_regular_files_and_links(tmp_path: Path):
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(fsutil.NotRegularFileError, match="a FIFO"):
        fsutil.atomic_write(tmp_path / "fifo", b"x")
    with pytest.raises(fsutil.NotRegularFileError, match="a FIFO"):
        fsutil.write_inside(tmp_path, "fifo", b"x")
    with pytest.raises(fsutil.NotRegularFileError, match="a FIFO"):
        fsutil.symlink_inside(tmp_path, "fifo", "elsewhere")
    assert (tmp_path / "fifo").is_fifo()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert fsutil.special_file_kind(Path(os.devnull)) == "a character device"
    (tmp_path / "file").write_bytes(b"old")
    os.symlink("file", tmp_path / "link")
    fsutil.atomic_write(tmp_path / "link", b"new")  # a link is replaced, not followed
    assert (tmp_path / "file").read_bytes() == b"old"
    assert (tmp_path / "link").read_bytes() == b"new" and not (tmp_path / "link").is_symlink()
    assert fsutil.special_file_kind(tmp_path / "file") is None


def test_a_fifo_at_a_report_path_is_a_clear_error(tmp_path: Path):
    import typer

    from migrator.cli import write_reports

    report_dir = tmp_path / "report"
    report_dir.mkdir()
    os.mkfifo(report_dir / "build.json")
    with pytest.raises(typer.Exit) as ended:
        write_reports(report_dir, "build", SimpleNamespace(ok=True), lambda r: "{}",
                      lambda r: "", lambda r, w: "")
    assert ended.value.exit_code == 2
    assert (report_dir / "build.json").is_fifo()


# 2c. -o -: standard output for one file, refused for a tree


def test_dash_prints_the_converted_file_and_the_summary_on_stderr(tmp_path: Path):
    (tmp_path / "a.cu").write_bytes(CUDA)
    result = rocmigrate("convert", "a.cu", "-o", "-", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert result.stdout_bytes == HIP
    assert "rocmigrate convert: 1 converted" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.cu"]  # no file named -
    as_json = rocmigrate("convert", "a.cu", "-o", "-", "--format", "json", cwd=tmp_path)
    assert as_json.stdout_bytes == HIP
    assert json.loads(as_json.stderr)["summary"]["files"]["converted"] == 1


def test_dash_on_a_real_stdout(tmp_path: Path):
    (tmp_path / "a.cu").write_bytes(CUDA)
    done = subprocess.run([sys.executable, "-m", "migrator", "convert", "a.cu", "-o", "-"],
                          cwd=tmp_path, capture_output=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=str(Path(__file__).parents[1])))
    assert done.returncode == 0, done.stderr
    assert done.stdout == HIP and b"1 converted" in done.stderr


def test_dash_notes_a_support_header_it_cannot_write(tmp_path: Path):
    (tmp_path / "k.cu").write_bytes(HALF_ATOMIC)
    result = rocmigrate("convert", "k.cu", "-o", "-", "--rocm", "6.0", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert b"rocmigrate_atomics.h" in result.stdout_bytes
    assert "-o - does not write" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.cu"]


def test_dash_refusals_and_a_file_named_dash(tmp_path: Path):
    src = tree(tmp_path)
    for args, why in (((src, "-o", "-"), "is a folder"),
                      ((src / "a.cu", "-o", "-", "--diff"), "--diff cannot share it"),
                      ((src / "a.cu", "-o", "-", "--in-place"), "exclude each other")):
        result = rocmigrate("convert", *args)
        assert result.exit_code == 2 and why in result.stderr, result.output
        assert result.stdout_bytes == b""
    (tmp_path / "bin.cu").write_bytes(b"\0\1\2")
    failed = rocmigrate("convert", "bin.cu", "-o", "-", cwd=tmp_path)
    assert failed.exit_code == 1 and failed.stdout_bytes == b""
    assert rocmigrate("convert", "src/a.cu", "-o", "./-", cwd=tmp_path).exit_code == 0
    assert (tmp_path / "-").read_bytes() == HIP


# 9. terminal escapes in file names


def test_quoting_is_gits_and_leaves_plain_names_alone():
    assert quoted("src/a b\"c\\d.cu") == "src/a b\"c\\d.cu"
    assert quoted("ümlaut.cu") == "ümlaut.cu"
    assert quoted(EVIL) == '"a\\033]0;pwned\\a\\nFAKE: 0 failed.cu"'
    assert quoted('x\t"\\\x9b.cu') == '"x\\t\\"\\\\\\302\\233.cu"'
    assert quoted(os.fsdecode(b"bad\x9b.cu")) == '"bad\\233.cu"'  # not UTF-8
    assert escaped("a\tb\x1b[2Jc\nd") == "a\tb\\033[2Jc\\nd"
    assert escaped("plain: text") == "plain: text"


def _clean(data: bytes) -> None:
    assert not CONTROL.search(data), data
    assert b"\nFAKE" not in data


def test_a_hostile_file_name_reaches_no_terminal_raw(tmp_path: Path):
    src = tmp_path / "src"
    src.mkdir()
    (src / EVIL).write_bytes(WAVE)  # converted, with findings listed by location
    (src / "bin\x1b[2J.cu").write_bytes(b"\0binary")  # fails: its name in FAILED
    out = tmp_path / "out"
    fifo = tmp_path / "fifo\x1b]0;x\x07"
    os.mkfifo(fifo)
    for args in (("convert", src, "-o", out, "-v"),
                 ("convert", src, "-o", tmp_path / "o2", "--diff", "--dry-run"),
                 ("lint", src), ("lint", src, "--statistics"),
                 ("convert", src / EVIL, "-o", fifo),
                 ("convert", tmp_path / "missing\x1b[2J.cu", "-o", out)):
        result = rocmigrate(*args)
        _clean(result.stdout_bytes)
        _clean(result.stderr_bytes)
        assert result.stdout_bytes or result.stderr_bytes
    first = rocmigrate("convert", src, "-o", out, "-v")
    assert 'at "a\\033]0;pwned\\a\\nFAKE: 0 failed.cu":3:' in first.stdout
    assert 'FAILED "bin\\033[2J.cu": binary file' in first.stdout
    (src / EVIL).unlink()
    removed = rocmigrate("convert", src, "-o", out)
    assert 'removed stale output "a\\033]0;pwned\\a\\nFAKE: 0 failed.cu"' in removed.stdout
    _clean(removed.stdout_bytes)


def test_the_other_text_renderers_quote_names():
    error = SimpleNamespace(source_file=EVIL, source_line=3, line_exact=True, message="boom\x1b[1m",
                            explanation="", code="", output_file=None, line=0, file=None,
                            kind="compile")
    unit = Unit(name=EVIL, kind="translation unit", built=False, errors=[error], error_count=1)
    report = BuildReport(settings={}, hip={"hip_version": "5.2"}, tree={}, method="files",
                         build_dir=None, units=[unit])
    build = build_text.render_summary(report, [EVIL])
    outcome = SimpleNamespace(problems=["differs\x07"], notes=[], verdict="FAIL")
    validate = validate_text.render_summary(SimpleNamespace(
        programs=[SimpleNamespace(name=EVIL, variants={"port": outcome})], not_run="",
        original_not_run=None, verdicts=lambda: {"FAIL": 1}), ["r.json"])
    harness = harness_text.render_summary(SimpleNamespace(
        harnesses=[SimpleNamespace(spec=EVIL, verdict="FAIL", problems=[], spec_status="")],
        verdicts=lambda: {"FAIL": 1}), ["h.json"])
    for rendered in (build, validate, harness):
        _clean(rendered.encode())
        assert quoted(EVIL) in rendered
    plain = text.render_findings([], [SimpleNamespace(rel="src/a.cu", message="cannot read")], 0)
    assert plain.startswith("src/a.cu: error: cannot read\n")


def test_progress_lines_are_escaped(capsys):
    from migrator.cli.progress import say

    say(f"building {EVIL}")
    captured = capsys.readouterr()
    assert captured.err == "building a\\033]0;pwned\\a\\nFAKE: 0 failed.cu\n"
