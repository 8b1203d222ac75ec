"""`rocmigrate report` end to end: the three files, the summary line, the configuration's
effort model, and bad input (exit 2 with a message, nothing written)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from conftest import require_tool

from migrator.cli import _register, app

from test_report import make_tree

_register()
runner = CliRunner()


def report(*args: str):
    return runner.invoke(app, ["report", *args])


def test_writes_html_markdown_and_json(tmp_path):
    tree = make_tree(tmp_path / "src")
    out = tmp_path / "out"
    result = report(str(tree), "-o", str(out), "--rocm", "6.4")
    assert result.exit_code == 0, result.output
    assert sorted(path.name for path in out.iterdir()) == ["report.html", "report.json",
                                                           "report.md"]
    document = json.loads((out / "report.json").read_text())
    assert document["schema"] == 2 and document["target"]["rocm"] == "6.4"
    assert f"port {document['summary']['hours_port']:.1f} h" in result.stdout
    assert "effort model (defaults)" in result.stdout
    assert (out / "report.md").read_text().startswith("# Migration report: src")
    full = report(str(tree), "-o", str(out), "--rocm", "6.4", "--full")
    assert "## Files with work for a person" in (out / "report.md").read_text()
    assert full.exit_code == 0


def test_report_folder_inside_the_tree_is_not_read(tmp_path):
    tree = make_tree(tmp_path / "src")
    for _ in range(2):
        assert report(str(tree), "-o", str(tree / "report"), "--rocm", "6.4").exit_code == 0
    document = json.loads((tree / "report" / "report.json").read_text())
    assert not any(record["path"].startswith("report/") for record in document["files"])


def test_effort_model_from_the_configuration_file(tmp_path):
    tree = make_tree(tmp_path / "src")
    (tree / ".rocmigrate.toml").write_text('[report]\nhours = { blocker = 7 }\n')
    result = report(str(tree), "-o", str(tmp_path / "out"), "--rocm", "6.4")
    assert result.exit_code == 0, result.output
    assert "blocker 7 h" in result.stdout and ".rocmigrate.toml" in result.stdout


def test_bad_input_exits_2(tmp_path):
    tree = make_tree(tmp_path / "src")
    (tmp_path / "file").write_text("x")
    cases = [
        ([str(tmp_path / "missing"), "-o", str(tmp_path / "o1")], "does not exist"),
        ([str(tmp_path / "file"), "-o", str(tmp_path / "o2")], "is not a folder"),
        ([str(tree), "-o", str(tmp_path / "file")], "exists and is not a folder"),
        ([str(tree), "-o", str(tmp_path / "o3"), "--fail-on-regression"],
         "needs --history-file"),
        ([str(tree), "-o", str(tmp_path / "o4"), "--converted", str(tmp_path / "nowhere")],
         "does not exist"),
    ]
    for args, message in cases:
        result = report(*args, "--rocm", "6.4")
        assert result.exit_code == 2, (args, result.output)
        assert message in result.output
    (tree / "pyproject.toml").write_text(
        '[tool.rocmigrate.report]\ncode-class = { PTX001 = "x" }\n')
    bad_config = report(str(tree), "-o", str(tmp_path / "o5"), "--rocm", "6.4")
    assert bad_config.exit_code == 2 and "report.code-class.PTX001" in bad_config.output
    for name in ("o1", "o2", "o3", "o4", "o5"):
        assert not (tmp_path / name).exists()


@pytest.mark.slow
def test_real_build_report_is_evidence(tmp_path):
    """A converted tree built by `rocmigrate build` (Debian's hipcc): the file whose inline PTX
    does not assemble for AMD is named as not building, the other counts as built."""
    require_tool("hipcc")
    tree = make_tree(tmp_path / "src")
    (tree / "b" / "blas.cu").unlink()  # hipBLAS is not installed with Debian's HIP
    (tree / "ok").mkdir()
    (tree / "ok" / "k.cu").write_bytes(b"#include <cuda_runtime.h>\n"
                                       b"__global__ void k(float* p) { p[0] = 1.0f; }\n")
    out, build = tmp_path / "out", tmp_path / "build"
    converted = runner.invoke(app, ["convert", str(tree), "-o", str(out), "--rocm", "5.2"])
    assert converted.exit_code == 0, converted.output
    built = runner.invoke(app, ["build", str(out), "--report", str(build), "--method", "files"])
    assert built.exit_code == 1, built.output
    result = report(str(tree), "-o", str(tmp_path / "r"), "--rocm", "5.2", "--converted",
                    str(out), "--build-report", str(build / "build.json"))
    assert result.exit_code == 0, result.output
    document = json.loads((tmp_path / "r" / "report.json").read_text())
    full = {c["text"]: c for c in document["plan"]["phases"][2]["exit_criteria"]}
    assert full["every file converted"]["state"] == "met"
    assert full["the port builds"]["state"] == "not met"
    detail = full["the port builds"]["detail"]
    assert detail.startswith("1 of 2 targets failed (first: a/kernel.cu: "), detail
    assert detail.endswith("; 1 file with errors (first: a/kernel.cu)"), detail
