"""The command line's contracts with its inputs and outputs: machine-readable documents stay
parseable with --diff, configuration files that cannot be used are errors naming them, rule
selectors and ROCm targets are checked, and long runs report their progress."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from migrator import apitables
from migrator.cli import _register, app
from migrator.versions import NEWEST_ROCM, OLDEST_ROCM, parse_target, parse_version

_register()

CUDA_FILE = b"""#include <cuda_runtime.h>
int main() { float* d; cudaMalloc(&d, 64); cudaDeviceSynchronize(); cudaFree(d); return 0; }
"""
HIP_FILE = b"""#include <hip/hip_runtime.h>
#include <cuda_runtime.h>
__global__ void k(float* p) { p[threadIdx.x] = __shfl_down_sync(0xffffffff, p[0], 1); }
int main() { cudaDeviceSynchronize(); return 0; }
"""


def invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def lint_file(tmp_path: Path, *args: str):
    path = tmp_path / "code.hip"
    path.write_bytes(HIP_FILE)
    return invoke("lint", str(path), *args)


# --- machine-readable documents with --diff -------------------------------------------------

@pytest.mark.parametrize("output_format", ["json", "sarif"])
def test_lint_diff_travels_inside_the_document(tmp_path: Path, output_format: str):
    result = lint_file(tmp_path, "--output-format", output_format, "--diff")
    assert result.exit_code == 1, result.output
    document = json.loads(result.stdout)  # one parseable document, nothing around it
    if output_format == "sarif":
        document = document["runs"][0]["properties"]
    diffs = document["diffs"]
    assert len(diffs) == 1 and "+int main() { hipDeviceSynchronize(); return 0; }" in diffs[0]
    assert (tmp_path / "code.hip").read_bytes() == HIP_FILE  # --diff writes nothing
    without = json.loads(lint_file(tmp_path, "--output-format", output_format).stdout)
    assert "diffs" not in (without if output_format == "json" else without["runs"][0])


def test_lint_text_and_github_keep_printing_diffs(tmp_path: Path):
    for output_format in ("text", "github"):
        result = lint_file(tmp_path, "--output-format", output_format, "--diff")
        assert "+int main() { hipDeviceSynchronize(); return 0; }" in result.stdout


def test_convert_json_diff_is_one_document(tmp_path: Path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.cu").write_bytes(CUDA_FILE)
    result = invoke("convert", str(tmp_path / "src"), "-o", str(tmp_path / "out"), "--format",
                    "json", "--diff", "--dry-run")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert len(document["diffs"]) == 1 and "+#include <hip/hip_runtime.h>" in document["diffs"][0]


# --- configuration files that cannot be used -----------------------------------------------

def test_a_broken_pyproject_is_an_error_naming_it(tmp_path: Path):
    (tmp_path / "code.hip").write_bytes(HIP_FILE)
    (tmp_path / "pyproject.toml").write_text('[tool.rocmigrate]\nselect = ["API"\n')
    result = invoke("lint", str(tmp_path / "code.hip"))
    assert result.exit_code == 2, result.output
    assert f"{tmp_path / 'pyproject.toml'}: not valid TOML" in result.output
    # a pyproject.toml whose `tool` is not a table holds no configuration: not a crash
    (tmp_path / "pyproject.toml").write_text('tool = 1\n')
    assert invoke("lint", str(tmp_path / "code.hip")).exit_code == 1


@pytest.mark.parametrize("name, text", [
    (".rocmigrate.toml", b'select = ["API"]\n# caf\xe9\n'),
    ("pyproject.toml", b'[tool.rocmigrate]\n# caf\xe9\nselect = ["API"]\n'),
])
def test_a_config_file_that_is_not_utf8_is_an_error_naming_it(tmp_path: Path, name: str,
                                                              text: bytes):
    (tmp_path / "code.hip").write_bytes(HIP_FILE)
    (tmp_path / name).write_bytes(text)
    for args in ((), ("--config", str(tmp_path / name))):
        result = invoke("lint", str(tmp_path / "code.hip"), *args)
        assert result.exit_code == 2, result.output
        assert f"error: {tmp_path / name}: not UTF-8 text" in result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)


# --- rule selectors ---------------------------------------------------------------------------

@pytest.mark.parametrize("option", ["--select", "--ignore"])
def test_a_selector_that_matches_no_rule_is_a_usage_error(tmp_path: Path, option: str):
    result = lint_file(tmp_path, option, "API,NOPE")
    assert result.exit_code == 2, result.output
    assert f"error: {option}: unknown rule code or prefix 'NOPE'" in result.output
    assert lint_file(tmp_path, option, "wav00").exit_code in (0, 1)  # a known prefix, any case


@pytest.mark.parametrize("table", [
    'select = ["API", "NOPE"]', 'ignore = ["XYZ9"]', '[per-file-ignores]\n"*.hip" = ["API01X"]'])
def test_a_selector_in_a_config_file_that_matches_no_rule_is_an_error(tmp_path: Path, table: str):
    (tmp_path / ".rocmigrate.toml").write_text(table + "\n")
    result = lint_file(tmp_path)
    assert result.exit_code == 2, result.output
    assert f"{tmp_path / '.rocmigrate.toml'}: " in result.output
    assert "unknown rule code or prefix" in result.output


# --- the target ROCm release ------------------------------------------------------------------

@pytest.mark.parametrize("rocm, message", [("99.9", "newer than the newest release"),
                                           ("6.5", "newer than the newest release"),
                                           ("0.0", "older than the oldest release")])
def test_an_unknown_rocm_release_is_refused_by_every_command(tmp_path: Path, rocm: str,
                                                             message: str):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.cu").write_bytes(CUDA_FILE)
    runs = {
        "convert": invoke("convert", str(tmp_path / "src"), "-o", str(tmp_path / "out"),
                          "--rocm", rocm),
        "lint": lint_file(tmp_path, "--rocm", rocm),
        "validate": invoke("validate", str(tmp_path / "src"), "-o", str(tmp_path / "report"),
                           "--rocm", rocm),
    }
    for command, result in runs.items():
        assert result.exit_code == 2, (command, result.output)
        assert message in " ".join(result.output.split()), (command, result.output)
    assert not (tmp_path / "out").exists() and not (tmp_path / "report").exists()
    (tmp_path / ".rocmigrate.toml").write_text(f'rocm = "{rocm}"\n')
    configured = lint_file(tmp_path)
    assert configured.exit_code == 2 and f"{tmp_path / '.rocmigrate.toml'}: rocm: " in \
        configured.output


def test_known_releases_and_their_patch_releases_are_accepted(tmp_path: Path):
    for text in (OLDEST_ROCM, "5.2", NEWEST_ROCM, NEWEST_ROCM + ".3"):
        assert parse_target(text) == parse_version(text)
    assert lint_file(tmp_path, "--rocm", "5.2").exit_code == 1


def test_the_known_range_covers_the_api_tables():
    """OLDEST_ROCM is the oldest version the tables name; no table names one past NEWEST_ROCM
    (regenerated tables that know a newer release must move NEWEST_ROCM too)."""
    tables = apitables.load()
    versions = {v for entry in tables.names.values()
                for v in (entry.hip_added, entry.hip_removed) if v}
    versions |= {header.hip_added for header in tables.headers.values() if header.hip_added}
    versions |= {lowering.below for lowering in tables.lowerings.values() if lowering.below}
    assert min(versions)[:2] == parse_version(OLDEST_ROCM)[:2]
    assert max(versions)[:2] <= parse_version(NEWEST_ROCM)[:2]


# --- progress of long runs --------------------------------------------------------------------

def _plain(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)


def test_the_progress_reporter_shows_the_count_and_rates_once_a_run_is_long():
    from rich.console import Console

    from migrator.cli.progress import ProgressReporter

    now = [0.0]
    console = Console(file=io.StringIO(), force_terminal=True, width=120)
    reporter = ProgressReporter("checking", console=console, clock=lambda: now[0])
    now[0] = 0.5
    reporter(40, 1000)
    assert console.file.getvalue() == ""  # a short run shows nothing
    now[0] = 2.0
    reporter(40, 3000)  # 2 files, 4,000 lines in 2 s
    shown = _plain(console.file.getvalue())
    assert "checking" in shown and "2/40 files" in shown
    assert "1.0 files/s, 2,000 lines/s" in shown
    now[0] = 4.0
    for _ in range(8):
        reporter(40, 500)  # 10 files, 8,000 lines in 4 s
    reporter.close()
    final = _plain(console.file.getvalue())
    assert "10/40 files" in final and "2.5 files/s, 2,000 lines/s" in final
    quiet = ProgressReporter("checking", console=Console(file=io.StringIO(), force_terminal=True),
                             clock=lambda: 0.0)
    quiet(3, 10)
    quiet.close()
    assert quiet.console.file.getvalue() == ""


def test_convert_and_lint_report_each_file_with_the_total_and_its_lines(tmp_path: Path):
    from migrator.lint import lint as run_lint
    from migrator.runner import RunOptions, run
    from migrator.settings import Settings

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.cu").write_bytes(CUDA_FILE)
    (tmp_path / "src" / "b.hip").write_bytes(HIP_FILE)
    expected = sorted([(2, CUDA_FILE.count(b"\n")), (2, HIP_FILE.count(b"\n"))])
    for label, call in (
        ("convert", lambda report: run(RunOptions(source=tmp_path / "src",
                                                  output=tmp_path / "out"), Settings(),
                                       report=report)),
        ("lint", lambda report: run_lint([tmp_path / "src"], Settings(), tmp_path,
                                         report=report)),
    ):
        calls = []
        call(lambda total, lines: calls.append((total, lines)))
        assert sorted(calls) == expected, label


def _json_values():
    from hypothesis import strategies as st

    scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=8)
    return st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                        | st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=20)


def test_json_reports_parse_back_to_the_document():
    """The JSON renderer writes records one per line for speed; whatever the document, the text
    is JSON that parses back to it."""
    from hypothesis import given, settings, strategies as st

    from migrator.output.json import dumps

    keys = st.sampled_from(["files", "findings", "summary", "tool"]) | st.text(max_size=6)

    @settings(max_examples=200, deadline=None, derandomize=True, database=None)
    @given(st.dictionaries(keys, _json_values(), max_size=5))
    def check(document):
        assert json.loads(dumps(document)) == document

    check()


# --- library choices: --roc and --dnn -------------------------------------------------------

LIBRARY_FILE = b"""#include <cublas_v2.h>
#include <cudnn.h>
void gemm(cublasHandle_t h, const float* a, const float* b, float* c, int n) {
  float one = 1.0f, zero = 0.0f;
  cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n);
}
void dnn() { cudnnHandle_t h; cudnnCreate(&h); }
"""


def _converted(tmp_path: Path, *options: str) -> bytes:
    out = tmp_path / "out"
    result = invoke("convert", str(tmp_path / "src"), "-o", str(out), *options)
    assert result.exit_code == 0, result.output
    return (out / "lib.cu").read_bytes()


def test_roc_and_dnn_choose_the_libraries_each_run(tmp_path: Path):
    """Each choice converts again into one output folder (the cache keys on it): hipBLAS and
    cuDNN reported by default, rocBLAS with --roc, MIOpen with --dnn miopen, from the flag or
    the configuration file; --dnn report undoes the file's choice."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "lib.cu").write_bytes(LIBRARY_FILE)
    default = _converted(tmp_path)
    assert b"hipblasSgemm(h, HIPBLAS_OP_N" in default and b"#include <hipblas/hipblas.h>" in default
    assert b"cudnnCreate(&h)" in default and b"API004" in default
    roc = _converted(tmp_path, "--roc")
    assert b"rocblas_sgemm(h, rocblas_operation_none" in roc
    assert b"void gemm(rocblas_handle h" in roc and b"#include <rocblas/rocblas.h>" in roc
    assert b"cudnnCreate(&h)" in roc
    miopen = _converted(tmp_path, "--dnn", "miopen")
    assert b"miopenHandle_t h; miopenCreate(&h);" in miopen and b"<miopen/miopen.h>" in miopen
    assert b"hipblasSgemm" in miopen
    (tmp_path / "src" / ".rocmigrate.toml").write_text('roc = true\ndnn = "miopen"\n')
    both = _converted(tmp_path)
    assert b"rocblas_sgemm" in both and b"miopenCreate" in both
    assert b"cudnnCreate" in _converted(tmp_path, "--dnn", "report")
    refused = invoke("convert", str(tmp_path / "src"), "-o", str(tmp_path / "o"), "--dnn", "x")
    assert refused.exit_code == 2


def test_lint_fix_renames_to_the_chosen_libraries(tmp_path: Path):
    path = tmp_path / "lib.cu"
    path.write_bytes(LIBRARY_FILE)
    result = invoke("lint", str(path), "--roc", "--dnn", "miopen", "--fix", "--select", "API,ARG")
    assert result.exit_code == 0, result.output
    fixed = path.read_bytes()
    assert b"rocblas_sgemm(h, rocblas_operation_none" in fixed and b"miopenCreate(&h)" in fixed


def test_the_options_are_in_the_help():
    for command in ("convert", "lint"):
        shown = invoke(command, "--help").output
        assert "--roc" in shown and "--dnn" in shown and "miopen" in shown
