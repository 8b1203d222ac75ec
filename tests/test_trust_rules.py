"""Issue 25, items 4-6: rule output that was wrong, failed the file, or changed on a second pass
(REG001 and ``#define register``; fix text built from a Latin-1 comment; the include HDR003 put
under a CUDA header's guard; ARG001's ``(int)`` cast inside a widened ``__ffsll``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from migrator.cli import _register, app
from migrator.convert import convert_bytes
from migrator.settings import Settings
from migrator.versions import parse_version

_register()

SETTINGS = [Settings(), Settings(rocm=parse_version("5.2")), Settings(unsafe_fixes=True)]


def _converted(name: str, data: bytes, settings: Settings) -> bytes:
    result = convert_bytes(name, data, settings)
    assert result.status != "failed", result.message
    return result.output if result.output is not None else data


def _twice(name: str, data: bytes, settings: Settings) -> bytes:
    """The first pass's output, checked to be what a second pass writes too."""
    first = _converted(name, data, settings)
    assert _converted(name, first, settings) == first, "a second pass changed the output"
    return first


# -- item 4: REG001 keeps 'register' where it is a name -------------------------------------

REGISTER_AS_NAME = b"""#if __cplusplus >= 201703L
#define register
#endif
#ifdef register
#undef register
#define register /* nothing */
#endif
#define PLUS_ONE(register) ((register) + 1)
#define NAMED(prefix) prefix##register
#define SPELL(word) #word
int f(int n) { register int k = PLUS_ONE(n); const char *w = SPELL(register); return k + w[0]; }
"""


@pytest.mark.parametrize("name", ["reg.cpp", "reg.cu"])
def test_register_as_a_macro_name_is_left_as_written(name):
    out = _twice(name, REGISTER_AS_NAME, Settings())
    expected = REGISTER_AS_NAME.replace(b"{ register int k", b"{ int k")
    assert out.endswith(expected), out.decode()


# -- item 5: fix text keeps non-UTF-8 bytes --------------------------------------------------

LATIN1_LOOP = (b"void g(float *a, float *b, int n) {\n"
               b"  for (int i = 0; i < n; ++i) cudaMemcpy(a /* caf\xe9 */, b, n, cudaMemcpyDeviceToHost);\n"
               b"  for (int i = 0; i < n; ++i) cudaMemcpy(b, a /* caf\xe9 */, n, cudaMemcpyHostToDevice);\n"
               b"}\n")


@pytest.mark.parametrize("settings", SETTINGS)
def test_latin1_comment_in_a_looped_copy_converts(settings):
    out = _twice("lat.cu", LATIN1_LOOP, settings)
    assert out.count(b"/* caf\xe9 */") == 2


def test_latin1_comment_in_a_looped_copy_through_the_command_line(tmp_path: Path):
    source = tmp_path / "lat.cu"
    source.write_bytes(LATIN1_LOOP)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["convert", str(source), "-o", str(out / "lat.cu")])
    assert result.exit_code == 0, result.output
    assert "internal error" not in result.output
    assert (out / "lat.cu").read_bytes().count(b"/* caf\xe9 */") == 2
    result = CliRunner().invoke(app, ["lint", str(source)])
    assert "internal error" not in result.output and "Unicode" not in result.output


def test_cast_argument_keeps_latin1_bytes():
    data = b"__global__ void k(int *out, long n) { out[0] = __ffs(n /* caf\xe9 */ + 1); }\n"
    out = _twice("ffs.cu", data, Settings())
    assert b"__ffs((int)(n /* caf\xe9 */ + 1))" in out
    assert b"\xef\xbf\xbd" not in out  # no U+FFFD in place of the byte


# -- item 6a: the runtime under a CUDA header's guard ----------------------------------------

@pytest.mark.parametrize("macro, hip_macro, use", [
    (b"__DRIVER_TYPES_H__", b"HIP_INCLUDE_HIP_DRIVER_TYPES_H",
     b"static const char *name(cudaError_t e) { return cudaGetErrorName(e); }"),
    (b"__cuda_cuda_h__", b"HIP_INCLUDE_HIP_HIP_RUNTIME_H",
     b"__device__ inline int lane() { return threadIdx.x % warpSize; }"),
])
@pytest.mark.parametrize("settings", SETTINGS[:2])
def test_runtime_uses_under_a_guard_test_add_no_include(macro, hip_macro, use, settings):
    data = b"#pragma once\n#include <cstdio>\n#ifdef " + macro + b"\n" + use + b"\n#endif\n"
    out = _twice("helper.h", data, settings)
    assert b"#include <hip/hip_runtime.h>" not in out
    assert out.count(b"#ifdef ") == 1 and b"#ifdef " + hip_macro + b"\n" in out


# -- item 6b: __ffs of a widened ballot --------------------------------------------------------

@pytest.mark.parametrize("settings", SETTINGS)
@pytest.mark.parametrize("declared", [b"uint32_t m = __ballot(v);", b"uint32_t m = __activemask();"])
def test_ffs_of_a_widened_ballot_keeps_64_bits(settings, declared):
    data = (b"#include <cstdint>\n__global__ void k(int *out, int v) {\n  " + declared
            + b"\n  out[0] = __ffs(m);\n}\n")
    out = _twice("ffs.cu", data, settings)
    assert b"uint64_t m" in out and b"__ffsll((long long int)m)" in out
    assert b"(int)" not in out


@pytest.mark.parametrize("settings", SETTINGS)
def test_ffs_of_a_ballot_behind_a_comment_is_widened(settings):
    data = b"__global__ void k(int *out, int v) { out[0] = __ffs( /* b */ __ballot(v)); }\n"
    out = _twice("ffs.cu", data, settings)
    assert b"__ffsll( /* b */ (long long int)(__ballot(v)))" in out
