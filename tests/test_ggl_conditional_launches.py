"""LCH001 on launches with #if lines inside (HeCBench's pad): the split into one complete
hipLaunchKernelGGL per combination of branches is right under every macro setting.

fixtures/rules/LCH001/conditional.cu is the generic fixture test's (findings, output,
snapshot, compiled once with no macro defined); here its output is compiled with hipcc under
each setting of its macros, and under each, what the preprocessor keeps of the output is what
the preprocessor keeps of the input converted (no branch lost, moved or given wrong defaults)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, hipcc_compile, require_tool
from fixture_format import load_fixture
from migrator import apitables, engine, registry
from migrator.source import Source

FIXTURE = ROOT / "fixtures" / "rules" / "LCH001" / "conditional.cu"
# the settings of the fixture's macros: each branch of each group is taken in one of them
SETTINGS = [
    (),
    ("-DDYNAMIC_PARTITION",),
    ("-DUSE_STREAM=1", "-DWITH_STREAM"),
    ("-DUSE_STREAM=2", "-DSCALE_OFFSET=1", "-DHALF"),
    ("-DDYNAMIC_PARTITION", "-DSCALE_OFFSET=1", "-DWITH_STREAM", "-DUSE_STREAM=1"),
    ("-DSCALE_OFFSET=1",),
]
_INCLUDE = re.compile(rb"^[ \t]*#[ \t]*include\b[^\n]*", re.MULTILINE)


def _convert(data: bytes, name: str = "case.cu") -> bytes:
    fixture = load_fixture(FIXTURE)
    rule = registry.find("LCH001")
    tables = apitables.load(variants=fixture.settings.table_variants)
    return engine.fix_source(Source(name, data), [rule()], fixture.settings, tables).output


def _preprocessed(cpp: str, data: bytes, defines: tuple[str, ...], tmp_path: Path) -> str:
    """The code the preprocessor keeps under ``defines`` (includes left out), as tokens."""
    path = tmp_path / "unit.cu"
    path.write_bytes(_INCLUDE.sub(b"", data))
    done = subprocess.run([cpp, "-P", "-x", "c++", *defines, str(path)], capture_output=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return " ".join(done.stdout.decode().split())


@pytest.mark.slow
@pytest.mark.parametrize("defines", SETTINGS, ids=lambda d: " ".join(d) or "none")
def test_split_launches_compile_under_every_setting(defines, tmp_path: Path):
    fixture = load_fixture(FIXTURE)
    compiled = hipcc_compile(fixture.expected_path, tmp_path, defines)
    assert compiled.returncode == 0, compiled.stderr[-3000:]


@pytest.mark.slow
@pytest.mark.parametrize("defines", SETTINGS, ids=lambda d: " ".join(d) or "none")
def test_each_setting_keeps_the_launch_of_its_branches(defines, tmp_path: Path):
    """Preprocess, then convert == convert, then preprocess: under each setting the split
    output keeps exactly the launches the input's branches make there."""
    cpp = require_tool("cpp")
    source = FIXTURE.read_bytes()
    chosen = _preprocessed(cpp, source, defines, tmp_path)
    assert chosen.count("<<<") == 4
    expected = " ".join(_convert(chosen.encode()).decode().split())
    assert "<<<" not in expected and expected.count("hipLaunchKernelGGL(") == 4
    converted = load_fixture(FIXTURE).expected_path.read_bytes()
    assert _preprocessed(cpp, converted, defines, tmp_path) == expected


def test_pad_with_windows_line_ends():
    """HeCBench pad's launch written with CRLF: the split lines keep them."""
    source = (b"__global__ void k(int n\r\n#ifdef D\r\n, int* w\r\n#endif\r\n) {}\r\n"
              b"void f(int n, int* w, int s) {\r\n"
              b"    k<<<1, 64\r\n#ifdef D\r\n        , s\r\n#endif\r\n        >>>(n\r\n"
              b"#ifdef D\r\n        , w\r\n#endif\r\n        );\r\n}\r\n")
    assert _convert(source) == (
        b"__global__ void k(int n\r\n#ifdef D\r\n, int* w\r\n#endif\r\n) {}\r\n"
        b"void f(int n, int* w, int s) {\r\n"
        b"#ifdef D\r\n    hipLaunchKernelGGL(k, dim3(1), dim3(64), s, 0, n, w);\r\n"
        b"#else\r\n    hipLaunchKernelGGL(k, dim3(1), dim3(64), 0, 0, n);\r\n#endif\r\n}\r\n")


def test_code_after_the_launch_moves_below_the_endif():
    source = (b"void f(int* p) {\n  k<<<1, 64>>>(p\n#ifdef D\n  , 1\n#endif\n  ); f(p); }\n")
    assert _convert(source) == (
        b"void f(int* p) {\n#ifdef D\n  hipLaunchKernelGGL(k, dim3(1), dim3(64), 0, 0, p, 1);\n"
        b"#else\n  hipLaunchKernelGGL(k, dim3(1), dim3(64), 0, 0, p);\n#endif\n  f(p); }\n")


def test_a_launch_in_an_unterminated_comment_is_left():
    code = b"void f(int* p) {\n  k<<<1, 64>>>(p\n#ifdef D\n  , 1\n#endif\n  );\n}\n"
    out = _convert(code + b"/* never closed\n" + code)
    assert out.endswith(b"/* never closed\n" + code)
    assert out.count(b"hipLaunchKernelGGL(") == 2
