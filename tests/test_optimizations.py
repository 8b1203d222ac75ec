"""The AMD optimisation rules during convert: what they rewrite in the seed's case studies,
what --no-optimize leaves out, the summary, and markers that a re-run finds again."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from typer.testing import CliRunner

from conftest import ROOT, convert_program, hipcc_compile

from migrator.cli import _register, app
from migrator.settings import Settings
from migrator.versions import parse_version

_register()
runner = CliRunner()
KERNELS = ROOT / "kernels"


def _convert(tmp_path: Path, name: str, *flags: str) -> tuple[str, str]:
    out = tmp_path / ("out" + "".join(flags).replace("-", "_")) / name
    result = runner.invoke(app, ["convert", str(KERNELS / name), "-o", str(out), *flags])
    assert result.exit_code == 0, result.output
    return out.read_text(), result.output


def test_small_transfers_are_pinned_and_merged(tmp_path: Path):
    optimized, summary = _convert(tmp_path, "small_transfers.cu")
    assert "hipHostMalloc((void**)&host" in optimized
    assert "(void)hipHostFree(host);" in optimized
    assert "hipMemcpy(d_dst, host, (size_t)(COUNT) * (ITEM_BYTES), hipMemcpyHostToDevice)" in optimized
    assert "AMD optimisations applied" in summary
    assert "XFR001" in summary and "XFR002" in summary
    naive, summary = _convert(tmp_path, "small_transfers.cu", "--no-optimize")
    assert "hipHostMalloc((void**)&host" not in naive and "free(host);" in naive
    assert "d_dst + i * ITEM_BYTES" in naive
    assert "AMD optimisations applied" not in summary


def test_streams_tiles_and_dynamic_shared_memory(tmp_path: Path):
    streams, _ = _convert(tmp_path, "stream_tasks.cu")
    assert "hipStreamCreateWithFlags(&streams[i], hipStreamNonBlocking)" in streams
    assert "// rocmigrate STM002:" in streams  # the default-stream loop is reported at the site
    transpose, _ = _convert(tmp_path, "transpose.cu")
    assert "tile[TILE_DIM][TILE_DIM + 1]" in transpose
    shared, _ = _convert(tmp_path, "shared_memory.cu")
    assert "extern __shared__ __attribute__((aligned(16))) float smem[]" in shared
    naive, _ = _convert(tmp_path, "shared_memory.cu", "--no-optimize")
    assert "__shared__ __attribute__((aligned(16)))" not in naive
    assert "tile[TILE][TILE + 1]" in shared and "tile[TILE][TILE + 1]" not in naive
    assert "rocmigrate STM002" not in _convert(tmp_path, "stream_tasks.cu", "--no-optimize")[0]


def test_gradient_buffer_is_pinned_and_the_pipeline_is_left_blocking(tmp_path: Path):
    gradients, _ = _convert(tmp_path, "gradient_transfer.cu")
    assert "hipHostMalloc((void**)&host, total * sizeof(float), hipHostMallocDefault)" in gradients
    pipeline, summary = _convert(tmp_path, "stream_pipeline.cu")
    # run_pipeline() receives the streams and the null stream is used beside them: reported
    assert "hipStreamCreateWithFlags" not in pipeline
    assert "// rocmigrate STM001:" in pipeline and "passed to run_pipeline()" in pipeline


def test_converting_the_output_again_changes_nothing(tmp_path: Path):
    first = tmp_path / "first"
    second = tmp_path / "second"
    assert runner.invoke(app, ["convert", str(KERNELS), "-o", str(first)]).exit_code == 0
    assert runner.invoke(app, ["convert", str(first), "-o", str(second)]).exit_code == 0
    for path in sorted(first.glob("*.cu")):
        assert (second / path.name).read_bytes() == path.read_bytes(), path.name


@pytest.mark.slow
def test_optimized_outputs_compile_for_amd(tmp_path: Path):
    for name in ("small_transfers.cu", "gradient_transfer.cu", "shared_memory.cu",
                 "stream_tasks.cu"):
        folder = tmp_path / "out__rocm5.2"
        folder.mkdir()
        # with its local headers (gradient_transfer.cu includes bert_large.h)
        out, result = convert_program(KERNELS / name, folder, Settings(rocm=parse_version("5.2")))
        assert [r.status for r in result.results] == ["converted"], result.results[0].message
        compiled = hipcc_compile(out, tmp_path)
        assert compiled.returncode == 0, compiled.stderr[-3000:]
        shutil.rmtree(folder)


HALF_ATOMIC = b"""#include <cuda_fp16.h>
__global__ void add(__half* slots, __half one) { atomicAdd(&slots[threadIdx.x % 32], one); }
"""


def test_support_header_follows_the_outputs_that_need_it(tmp_path: Path):
    src, out = tmp_path / "src", tmp_path / "out"
    (src / "sub").mkdir(parents=True)
    (src / "sub" / "add.cu").write_bytes(HALF_ATOMIC)
    (src / "plain.cu").write_bytes(b"__global__ void k(float* p) { p[0] = 1.0f; }\n")
    result = runner.invoke(app, ["convert", str(src), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "wrote support header sub/rocmigrate_atomics.h" in result.output
    header = out / "sub" / "rocmigrate_atomics.h"
    assert header.is_file() and not (out / "rocmigrate_atomics.h").exists()
    assert b'#include "rocmigrate_atomics.h"' in (out / "sub" / "add.cu").read_bytes()
    # the source no longer needs it: the next run removes the header with the stale output
    (src / "sub" / "add.cu").write_bytes(b"__global__ void k(float* p) { p[0] = 2.0f; }\n")
    result = runner.invoke(app, ["convert", str(src), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert not header.exists() and "removed stale output sub/rocmigrate_atomics.h" in result.output


def test_a_user_file_named_like_a_support_header_is_not_overwritten(tmp_path: Path):
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "add.cu").write_bytes(HALF_ATOMIC)
    (src / "rocmigrate_atomics.h").write_bytes(b"// the user's own file\n")
    result = runner.invoke(app, ["convert", str(src), "-o", str(out)])
    assert result.exit_code == 1
    assert "FAILED add.cu" in result.output and "rename that file" in result.output
    assert (out / "rocmigrate_atomics.h").read_bytes() == b"// the user's own file\n"
    assert not (out / "add.cu").exists()


def test_convert_unsafe_fixes_applies_what_is_otherwise_marked(tmp_path: Path):
    """--unsafe-fixes (the configuration's unsafe-fixes) applies the rewrites that need a
    person's review instead of their markers: a ballot held in 32 bits, its lane test and its
    count widen together (WAV003)."""
    source = tmp_path / "vote.cu"
    source.write_text("__global__ void k(int* o) {\n"
                      "  unsigned m = __ballot_sync(0xffffffffu, o[threadIdx.x] > 0);\n"
                      "  int n = 0;\n"
                      "  for (int l = 0; l < 64; ++l) n += (m & (1u << l)) != 0;\n"
                      "  o[threadIdx.x] = n + __popc(m);\n}\n")
    marked, _ = _convert_file(tmp_path, source, "marked.cu")
    assert "// rocmigrate WAV003" in marked and "unsigned m =" in marked
    unsafe, _ = _convert_file(tmp_path, source, "unsafe.cu", "--unsafe-fixes")
    assert "unsigned long long m =" in unsafe and "(1ull << l)" in unsafe
    assert "__popcll(m)" in unsafe and "// rocmigrate WAV003" not in unsafe


def _convert_file(tmp_path: Path, source: Path, name: str, *flags: str) -> tuple[str, str]:
    out = tmp_path / name
    result = runner.invoke(app, ["convert", str(source), "-o", str(out), "--rocm", "6.4", *flags])
    assert result.exit_code == 0, result.output
    return out.read_text(), result.output
