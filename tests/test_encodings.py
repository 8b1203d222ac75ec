"""Sources that are not UTF-8 (Latin-1, cp1252 in comments and literals) are converted with their
bytes kept as they are, linted the same way, and reported as read; binary files are refused."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from migrator.cli import _register, app
from migrator.convert import convert_bytes
from migrator.settings import Settings

_register()

# a Latin-1 header: 'ü' and 'µ' in a comment, 'µ' in a string literal
LATIN1_HEADER = (b"// Zeitmessung f\xfcr Kernels (\xb5s)\n"
                 b"#include <cuda_runtime.h>\n"
                 b'static const char *kMicro = "\xb5s";\n'
                 b"inline void check(cudaError_t err) { if (err != cudaSuccess) throw err; }\n")
UTF8_MAIN = (b'#include "units.h"\n'
             b"// caf\xc3\xa9 in UTF-8\n"
             b"int main() { float *d; check(cudaMalloc(&d, 4)); check(cudaFree(d)); }\n")


def _invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def _names_renamed(data: bytes) -> bytes:
    return (data.replace(b"<cuda_runtime.h>", b"<hip/hip_runtime.h>")
            .replace(b"cudaError_t", b"hipError_t").replace(b"cudaSuccess", b"hipSuccess"))


def test_latin1_header_is_converted_byte_for_byte_and_reported(tmp_path: Path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "units.h").write_bytes(LATIN1_HEADER)
    (src / "main.cu").write_bytes(UTF8_MAIN)
    result = _invoke("convert", str(src), "-o", str(tmp_path / "out"), "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    files = {f["path"]: f for f in report["files"]}
    assert files["units.h"]["status"] == "converted"
    note = files["units.h"]["message"]
    assert "not UTF-8" in note and "3 such bytes" in note and "line 1" in note
    assert files["main.cu"]["message"] == ""  # UTF-8: nothing to say
    assert report["summary"]["notes"] == [{"path": "units.h", "note": note}]
    # the CUDA names renamed, every other byte (the Latin-1 ones too) as it was
    assert (tmp_path / "out" / "units.h").read_bytes() == _names_renamed(LATIN1_HEADER)
    assert b"caf\xc3\xa9" in (tmp_path / "out" / "main.cu").read_bytes()
    text = _invoke("convert", str(src), "-o", str(tmp_path / "text"))
    assert f"note units.h: {note}\n" in text.output
    # converting the output again changes nothing
    again = _invoke("convert", str(tmp_path / "out"), "-o", str(tmp_path / "again"),
                    "--format", "json")
    statuses = {f["path"]: f["status"] for f in json.loads(again.stdout)["files"]}
    assert statuses == {"main.cu": "unchanged", "units.h": "unchanged"}
    for name in ("main.cu", "units.h"):
        assert (tmp_path / "again" / name).read_bytes() == (tmp_path / "out" / name).read_bytes()


def test_lint_reads_latin1_as_convert_does(tmp_path: Path):
    path = tmp_path / "units.h"
    path.write_bytes(LATIN1_HEADER)
    result = _invoke("lint", str(path), "--select", "API001")
    assert result.exit_code == 1 and "error" not in result.output
    line = LATIN1_HEADER.split(b"\n")[3]
    column = line.index(b"cudaSuccess") + 1
    assert f"units.h:4:{column}: API001 [*] cudaSuccess -> hipSuccess" in result.output
    fixed = _invoke("lint", str(path), "--select", "API001", "--fix")
    assert fixed.exit_code == 0, fixed.output
    assert path.read_bytes() == LATIN1_HEADER.replace(b"cudaError_t", b"hipError_t").replace(
        b"cudaSuccess", b"hipSuccess")


def test_cp1252_string_literal_is_kept():
    data = (b"#include <cstdio>\n"
            b'void done(int t) { cudaDeviceSynchronize(); printf("\x93done\x94 in %d \xb5s\\n", t); }\n')
    result = convert_bytes("timer.cu", data, Settings())
    assert result.status == "converted", result.message
    assert b'printf("\x93done\x94 in %d \xb5s\\n", t)' in result.output
    assert b"hipDeviceSynchronize();" in result.output
    assert "3 such bytes" in result.message and "line 2" in result.message


def test_columns_count_bytes_after_an_invalid_sequence():
    """On a line with an invalid UTF-8 sequence ('\\xc3(') and a valid 'é' before a CUDA name,
    the name's column counts bytes, as in the editor that shows the file as Latin-1; a UTF-8
    file's columns count characters."""
    line = b"void f(float *p) { /* \xc3( caf\xc3\xa9 */ cudaFree(p); cudaDeviceSynchronize(); }\n"
    result = convert_bytes("f.cu", line, Settings(select=("API001",)))
    assert result.status == "converted" and "1 such byte" in result.message
    columns = {f.symbol: (f.line, f.column) for f in result.findings}
    assert columns == {"cudaFree": (1, line.index(b"cudaFree") + 1),
                       "cudaDeviceSynchronize": (1, line.index(b"cudaDeviceSynchronize") + 1)}
    assert result.output == line.replace(b"cuda", b"hip")
    utf8 = convert_bytes("g.cu", line.replace(b"\xc3(", b"(("), Settings(select=("API001",)))
    assert utf8.message == ""
    assert {f.symbol: f.column for f in utf8.findings}["cudaFree"] == line.index(b"cudaFree")


def test_binary_files_are_still_refused():
    for data in (b"\x7fELF\x02\x01\x01\x00\x00\x00cudaFree", b"// caf\xe9\x00\ncudaFree(0);\n"):
        result = convert_bytes("blob.cu", data, Settings())
        assert result.status == "failed" and "binary" in result.message


def test_rewrites_keep_the_bytes_of_the_text_they_move():
    """XFR001/XFR003 rewrite statements holding Latin-1 comments, and a #define's value holds one:
    every byte comes back (nothing becomes U+FFFD, no file fails)."""
    from migrator.convert import convert_bytes
    from migrator.settings import Settings

    source = (b"#include <cuda_runtime.h>\n#include <stdlib.h>\n"
              b"void f(float* d) {\n"
              b"  float* host = (float*)malloc(64 * sizeof(float)); /* caf\xe9 */\n"
              b"  for (int i = 0; i < 64; ++i) {\n"
              b"    // copie r\xe9elle\n"
              b"    cudaMemcpy(d + i, host + i, sizeof(float), cudaMemcpyHostToDevice);\n"
              b"  }\n  free(host);\n}\n#define K\xe9 1\nconst int width = 4; // \xe9\n")
    result = convert_bytes("a.cu", source, Settings())
    assert result.status == "converted", result.message
    assert b"hipHostMalloc" in result.output and b"hipMemcpyAsync" in result.output
    for kept in (b"/* caf\xe9 */", b"// copie r\xe9elle", b"#define K\xe9 1", b"// \xe9"):
        assert kept in result.output
    assert "\ufffd".encode() not in result.output
