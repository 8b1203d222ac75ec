"""libclang's types for the rules (migrator.clang.types, ``--clang``): expressions typed in each
instantiation, declared tile sizes, template arguments, what it refuses to vouch for, offsets
of later fix rounds mapped to the input, and the rules and commands that use it."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from typer.testing import CliRunner

from conftest import require
from migrator import apitables
from migrator.cli import _register, app
from migrator.clang import find_resource_dir
from migrator.clang.kernels import ReadOptions
from migrator.clang.types import FileTypes, file_types, with_clang
from migrator.convert import convert_bytes, rules_for
from migrator.diagnostics import Edit
from migrator.engine import fix_source
from migrator.rule import RuleContext
from migrator.settings import Settings
from migrator.source import Source
from migrator.versions import parse_version

TEMPLATES = b"""\
#include <cuda_fp16.h>
template <typename T>
__device__ void add_to(T* target, T value) { atomicAdd(target, value); }

template <typename T>
__global__ void scatter(T* out, const T* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) add_to(&out[i % 8], in[i]);
}

template <typename T, int TILE>
__global__ void tiled(T* out) {
  __shared__ float tile[TILE][TILE];
  tile[threadIdx.y][threadIdx.x] = 1.f;
  out[threadIdx.x] = tile[threadIdx.x][threadIdx.y];
}

constexpr int rows(int warps) { return warps * 16; }

template <typename T, int B>
void run(T* out, const T* in, int n) {
  scatter<<<1, B>>>(out, in, n);
  tiled<T, B><<<1, 1>>>(out);
}

template __global__ void scatter<double>(double*, const double*, int);

void host(__half* h, float* f) {
  run<__half, 32>(h, h, 8);
  tiled<float, rows(4)><<<1, 1>>>(f);
}
"""


def _ready() -> None:
    try:
        import clang.cindex  # noqa: F401
    except ImportError:
        require(False, "the libclang wheel")
    require(find_resource_dir() is not None, "clang's builtin headers")


def _types(tmp_path: Path, data: bytes, name: str = "k.cu") -> FileTypes:
    path = tmp_path / name
    path.write_bytes(data)
    return file_types(path, data, ReadOptions())  # through its includer, as the rules ask


def _span(data: bytes, text: bytes, after: bytes = b"", within: bytes = b"") -> tuple[int, int]:
    """The span of ``text`` after the first ``after`` (itself after the first ``within``)."""
    at = data.index(within) if within else 0
    at = data.index(after, at) + len(after) if after else at
    start = data.index(text, at)
    return start, start + len(text)


def test_types_in_every_instantiation(tmp_path):
    _ready()
    types = _types(tmp_path, TEMPLATES)
    assert types.note == ""
    # add_to<T> is instantiated through scatter<__half> (from run<__half, 32>, a template
    # itself) and through the explicit scatter<double>
    assert sorted(types.pointee_types(*_span(TEMPLATES, b"target", b"atomicAdd"))) == \
        ["__half", "double"]
    assert sorted(types.expression_types(*_span(TEMPLATES, b"&out[i % 8]"))) == \
        ["__half *", "double *"]
    tile = TEMPLATES.index(b"tile[TILE]")
    assert sorted((d.arguments, d.extents) for d in types.declared_types(tile)) == [
        (("__half", "32"), (32, 32)), (("float", "64"), (64, 64))]
    assert sorted(types.template_arguments(TEMPLATES.index(b"tiled(T*"))) == [
        ("__half", "32"), ("float", "64")]
    line, column = 3, TEMPLATES.split(b"\n")[2].index(b"target, value)") + 1
    assert types.offset(line, column) == _span(TEMPLATES, b"target", b"atomicAdd")[0]


def test_template_never_instantiated_is_no_answer(tmp_path):
    _ready()
    data = b"template <typename T>\n__device__ void f(T* p, T v) { atomicAdd(p, v); }\n"
    types = _types(tmp_path, data)
    assert types.pointee_types(*_span(data, b"p", b"atomicAdd")) == ()
    assert types.template_arguments(data.index(b"f(T*")) == ()


def test_what_clang_cannot_vouch_for_is_unknown(tmp_path):
    _ready()
    data = b"""\
typedef UnknownType grad_t;
__global__ void made_up(grad_t* g) { atomicAdd(g, 1); }
__global__ void broken(float* f) { atomicAdd(f, 1.f); undeclared(f); }
__global__ void fine(float* f) { atomicAdd(f, 1.f); }
"""
    types = _types(tmp_path, data)
    # clang reads an unknown type as int: not a proof of anything
    assert types.pointee_types(*_span(data, b"g", b"atomicAdd(")) is None
    assert types.pointee_types(*_span(data, b"f", b"atomicAdd(", b"broken")) is None
    assert types.pointee_types(*_span(data, b"f", b"atomicAdd(", b"fine")) == ("float",)
    assert types.pointee_types(0, 3) is None  # no expression there


def test_a_file_included_by_another_is_read_through_it(tmp_path):
    """HeCBench's layout: main.cu includes kernels.cuh and launches its templates."""
    _ready()
    kernels = b"""\
template <int TILE>
__global__ void transpose(float* out) {
  __shared__ float tile[TILE][TILE];
  tile[threadIdx.y][threadIdx.x] = 1.f;
  out[threadIdx.x] = tile[threadIdx.x][threadIdx.y];
}
"""
    (tmp_path / "main.cu").write_bytes(b'#include "kernels.cuh"\nint main() {\n'
                                       b"  transpose<32><<<1, 1>>>(nullptr);\n}\n")
    types = _types(tmp_path, kernels, "kernels.cuh")
    assert [d.extents for d in types.declared_types(kernels.index(b"tile[TILE]"))] == [(32, 32)]


def test_never_raises(tmp_path, monkeypatch):
    types = FileTypes(tmp_path / "missing.cu", b"\xff\xfe not code {{{", ReadOptions())
    assert types.pointee_types(0, 2) is None and types.declared_types(0) is None
    import builtins

    real_import = builtins.__import__

    def no_clang(name, *args, **kwargs):
        if name.startswith("clang"):
            raise ImportError("no libclang here")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_clang)
    types = _types(tmp_path, TEMPLATES)
    assert "no libclang here" in types.note
    assert types.pointee_types(*_span(TEMPLATES, b"&out[i % 8]")) is None
    try:
        with_clang(Settings(), tmp_path, None)
        raise AssertionError("with_clang accepted a missing libclang")
    except Exception as err:
        assert "libclang" in str(err)


def test_origin_offset_maps_later_rounds_back(tmp_path):
    data = b"int a; cudaFoo(x); atomicAdd(p, v);\n"
    first = [Edit(0, 0, b"// marker\n"), Edit(7, 14, b"hipFoo")]  # insert, rename shorter
    after_first = b"// marker\nint a; hipFoo(x); atomicAdd(p, v);\n"
    second = [Edit(after_first.index(b"int"), after_first.index(b"int") + 3, b"long")]
    ctx = RuleContext(Source("f.cu", b""), Settings(), None, origin=Source("f.cu", data),
                      rounds=((first, None, None), (second, None, Edit(0, 0, b"#include <x>\n"))))
    now = b"#include <x>\n// marker\nlong a; hipFoo(x); atomicAdd(p, v);\n"
    assert ctx.origin_offset(now.index(b"atomicAdd")) == data.index(b"atomicAdd")
    assert ctx.origin_offset(now.index(b"(x)")) == data.index(b"(x)")
    assert ctx.origin_offset(now.index(b"marker")) is None  # text a fix wrote
    assert ctx.origin_offset(now.index(b"ong a")) is None
    plain = RuleContext(Source("f.cu", data), Settings(), None)
    assert plain.origin_offset(5) == 5


HISTOGRAM = b"""\
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <stdlib.h>

template <typename T>
__global__ void histogram(T* bins, const int* keys, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&bins[keys[i]], T(1));
}

__global__ void to_half(const float* in, __half* out) { out[0] = __float2half(in[0]); }

int main() {
  const int n = 256;
  float* host = (float*)malloc(n * sizeof(float));
  float* bins; int* keys;
  cudaMalloc(&bins, n * sizeof(float));
  cudaMalloc(&keys, n * sizeof(int));
  for (int r = 0; r < 4; r++) {
    histogram<float><<<1, n>>>(bins, keys, n);
    cudaMemcpy(host, bins, n * sizeof(float), cudaMemcpyDeviceToHost);
  }
  free(host);
  return 0;
}
"""


def test_the_rules_answer_stays_in_later_rounds(tmp_path):
    """The whole conversion takes several rounds here (the transfer rules' rewrites are renamed
    after them); ATM001's proof from libclang holds in each: no marker for a float atomic."""
    _ready()
    (tmp_path / "main.cu").write_bytes(HISTOGRAM)
    settings = replace(Settings(rocm=parse_version("5.2")), clang_root=tmp_path)
    off = convert_bytes("main.cu", HISTOGRAM, replace(settings, clang_root=None))
    assert "rocmigrate ATM001" in off.output.decode()  # T* in a file that uses __half
    result = fix_source(Source("main.cu", HISTOGRAM), [cls() for cls in rules_for(settings)],
                        settings, apitables.load())
    assert result.rounds > 1
    assert "ATM001" not in result.output.decode()
    assert convert_bytes("main.cu", HISTOGRAM, settings).output == result.output


def _invoke(*args: str):
    _register()
    return CliRunner().invoke(app, list(args))


def test_lint_clang_and_compile_commands(tmp_path):
    _ready()
    source = b"""\
#include <cuda_fp16.h>
#ifdef USE_HALF
typedef __half real;
#else
typedef float real;
#endif
struct Sums { real* sum; };
__global__ void reduce(Sums* s, const float* x) { atomicAdd(s->sum, __float2half(x[0])); }
"""
    (tmp_path / "k.cu").write_bytes(source)
    plain = _invoke("lint", str(tmp_path / "k.cu"), "--rocm", "5.2", "--select", "ATM001")
    assert "cannot see" in plain.output
    # without the define, clang proves float: HIP has that atomic
    clang = _invoke("lint", str(tmp_path / "k.cu"), "--rocm", "5.2", "--select", "ATM001",
                    "--clang")
    assert clang.exit_code == 0 and "ATM001" not in clang.output, clang.output
    (tmp_path / "compile_commands.json").write_text(json.dumps([{
        "directory": str(tmp_path), "file": "k.cu",
        "command": "nvcc -DUSE_HALF -c k.cu -o k.o"}]))
    defined = _invoke("lint", str(tmp_path / "k.cu"), "--rocm", "5.2", "--select", "ATM001",
                      "--compile-commands", str(tmp_path / "compile_commands.json"))
    assert "atomicAdd on __half* (the type libclang resolves)" in defined.output, defined.output
    missing = _invoke("lint", str(tmp_path / "k.cu"), "--compile-commands",
                      str(tmp_path / "none.json"))
    assert missing.exit_code == 2 and "--compile-commands" in missing.output


def test_a_header_read_through_its_includer_is_converted_again_when_that_changes(tmp_path):
    """--clang reads ops.cuh as part of main.cu, which declares its type: after main.cu turns
    real into __half, the unchanged header's output must change too (ATM001's half atomic for
    HIP 5.2; the incremental cache kept the float reading before)."""
    _ready()
    source = tmp_path / "src"
    source.mkdir()
    (source / "ops.cuh").write_bytes(b"""\
struct Sums { real* sum; };
__global__ void reduce(Sums* s, const float* x) { atomicAdd(s->sum, __float2half(x[0])); }
""")
    main = b"""\
#include <cuda_fp16.h>
typedef float real;
#include "ops.cuh"
int main() { return 0; }
"""
    (source / "main.cu").write_bytes(main)
    out = tmp_path / "out"
    args = ("convert", str(source), "-o", str(out), "--rocm", "5.2", "--clang")
    first = _invoke(*args)
    assert first.exit_code == 0, first.output
    assert "rocmigrate_atomic_add" not in (out / "ops.cuh").read_text()  # float: HIP has it
    (source / "main.cu").write_bytes(main.replace(b"typedef float real;",
                                                  b"typedef __half real;"))
    second = _invoke(*args)
    assert second.exit_code == 0, second.output
    assert "rocmigrate_atomic_add(s->sum" in (out / "ops.cuh").read_text()  # ATM001's helper
