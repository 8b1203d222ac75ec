"""The default target checked against real HIP: every kernels/ program and every rule fixture,
converted at ROCm 6.4, parses with no error against the HIP 6.4.3 headers (beside the checkout
in ../shared/data/hip-6.4, as CI has them), host and device sides, through libclang."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from conftest import ROOT, require, require_path
from fixture_format import load_fixture
from migrator import support
from migrator.clang import check_hip, find_resource_dir
from migrator.convert import convert_bytes
from migrator.runner import RunOptions, run
from migrator.settings import Settings
from migrator.versions import DEFAULT_ROCM, parse_version

pytestmark = pytest.mark.slow

HIP_64 = ROOT.parent / "shared" / "data" / "hip-6.4" / "include"
FIXTURES = sorted(p for p in (ROOT / "fixtures" / "rules").glob("[!_]*/*")
                  if p.is_file() and ".fixed." not in p.name
                  and p.suffix in (".cu", ".cuh", ".cpp", ".h", ".hip"))
# the exceptions: fixtures that do not compile by design (``compile=no``: the point is an API the
# target lacks) and those written in HIP 5.x's own dialect (``hip64=no``, the reason beside it)
CHECKED = [p for p in FIXTURES if (load_fixture(p).compile and load_fixture(p).hip64)
           or load_fixture(p).hip64_only]


@pytest.fixture(scope="module")
def hip64() -> Path:
    require_path(HIP_64 / "hip" / "hip_runtime.h", "the HIP 6.4.3 headers (../shared/data)")
    require(find_resource_dir() is not None, "clang's builtin headers (Debian: hipcc)")
    return HIP_64


def _errors(path: Path, include: Path, *extra: str) -> list[str]:
    return [str(m) for m in check_hip(path, include, extra=extra) if m.is_error]


def test_the_check_finds_errors_and_passes_correct_code(hip64: Path, tmp_path: Path):
    good = tmp_path / "good.hip"
    good.write_text("#include <hip/hip_runtime.h>\n__global__ void k(float* p) "
                    "{ p[threadIdx.x] = __shfl_down(p[0], 1); }\n")
    assert _errors(good, hip64) == []
    bad = tmp_path / "bad.hip"
    bad.write_text("#include <hip/hip_runtime.h>\n__global__ void k(float* p) "
                   "{ p[0] = __shfl_down_sync(0xffffffffffffffffull, p[0], 1); "
                   "hipNoSuchCall(); }\n")
    errors = _errors(bad, hip64)
    assert len(errors) == 4  # both names, both sides
    assert all("undeclared identifier" in error for error in errors)


def test_kernels_converted_at_the_default_target_parse_against_hip_6_4(hip64: Path,
                                                                      tmp_path: Path):
    out = tmp_path / "kernels"
    result = run(RunOptions(ROOT / "kernels", out), Settings())
    assert not result.failed
    programs = sorted(out.glob("*.cu"))
    assert len(programs) >= 10
    failures = {path.name: errors for path in programs if (errors := _errors(path, hip64))}
    assert failures == {}


def test_the_exceptions_are_few_and_say_why():
    excepted = [p for p in FIXTURES if load_fixture(p).compile and not load_fixture(p).hip64]
    assert len(excepted) <= 4 and len(CHECKED) >= 50
    assert all(b"hip64=no: " in p.read_bytes() for p in excepted)


@pytest.mark.parametrize("path", CHECKED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixtures_converted_at_the_default_target_parse_against_hip_6_4(hip64: Path,
                                                                       tmp_path: Path, path: Path):
    """Each fixture input, converted by every rule at the default target (its other options
    kept), parses against HIP 6.4: a rule's output is correct HIP of that release."""
    fixture = load_fixture(path)
    settings = dataclasses.replace(fixture.settings, rocm=parse_version(DEFAULT_ROCM))
    converted = convert_bytes(path.name, path.read_bytes(), settings)
    assert converted.status != "failed", converted.message
    output = tmp_path / path.name
    output.write_bytes(converted.output)
    support.write_beside(tmp_path, converted.support, settings)
    assert _errors(output, hip64, "-I", str(path.parent)) == []


def test_the_warp_sync_define_is_what_makes_the_builtins_build(hip64: Path):
    fixture = ROOT / "fixtures" / "rules" / "WRP003" / "enable.cu"
    assert _errors(fixture, hip64, "-I", str(fixture.parent))  # the input does not build
    assert _errors(fixture.with_name("enable.fixed.cu"), hip64, "-I", str(fixture.parent)) == []


def test_a_file_including_a_warp_sync_header_builds_when_the_tree_is_converted(
        hip64: Path, tmp_path: Path):
    """The convert fixture included_headers: main.cu includes the runtime, then reduce.cuh,
    which calls __shfl_down_sync. Converted as a tree, main.cu defines the macro before its
    HIP header and parses against HIP 6.4; each file converted on its own (nothing known of
    what main.cu includes), the header's own define comes too late."""
    source = ROOT / "fixtures" / "convert" / "included_headers" / "input" / "src"
    tree = tmp_path / "tree"
    assert not run(RunOptions(source, tree), Settings()).failed
    assert _errors(tree / "main.cu", hip64, "-I", str(tree)) == []
    alone = tmp_path / "alone"
    for rel in ("main.cu", "reduce.cuh", "util/config.h"):
        (alone / rel).parent.mkdir(parents=True, exist_ok=True)
        assert not run(RunOptions(source / rel, alone / rel), Settings()).failed
    errors = _errors(alone / "main.cu", hip64, "-I", str(alone))
    assert any("__shfl_down_sync" in error for error in errors)
