"""`rocmigrate harness`: specs from kernels and launch sites, harness sources, the binary output
format and the comparison of outputs. The compiler tests (marked slow) build real harnesses with
nvcc and with hipcc for gfx90a; nothing here needs a GPU."""

from __future__ import annotations

import math
import struct
import tomllib
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import ROOT, require_tool
from migrator.clang.kernels import Instantiation, Kernel, KernelReading, Launch, Parameter
from migrator.harness import HarnessOptions, harness
from migrator.harness.compare import compare_outputs
from migrator.harness.outputs import (OutputBuffer, OutputError, parse_output,
                                             read_output, write_output)
from migrator.harness.render import buffer_seed, render_harness
from migrator.harness.sitevalues import SiteValues
from migrator.harness.spec import (SpecError, default_spec, edited, load_spec,
                                          render_spec, spec_from, write_spec)
from migrator.harness.types import COMPONENTS

FIXTURES = ROOT / "fixtures" / "kernel_harness"


def scalar(name: str, type_: str = "int", size: int = 4) -> Parameter:
    return Parameter(name, type_, type_, "scalar", element_size=size)


def pointer(name: str, element: str = "float", size: int = 4, const: bool = False,
            written: bool = False, read: bool = True) -> Parameter:
    type_ = f"{'const ' if const else ''}{element} *"
    return Parameter(name, type_, type_, "pointer", element, size, const=const,
                     written_to=written, read_from=read)


def kernel(name: str, parameters: tuple, launches: tuple = (), template: tuple = (),
           arguments: tuple = (), dynamic_shared: bool = False) -> Kernel:
    return Kernel(name, name, "k.cu", 1, template, parameters,
                  (Instantiation(arguments, parameters, launches),), dynamic_shared)


def spec_of(kernel_: Kernel, source: str = "", instantiation: int | None = 0) -> dict:
    chosen = kernel_.instantiations[instantiation] if instantiation is not None else None
    return default_spec(kernel_, chosen, "k.cu", SiteValues(source.encode()), kernel_.name)


def parameter(document: dict, name: str) -> dict:
    return next(p for p in document["parameters"] if p["name"] == name)


def layout_of(document: dict, name: str) -> tuple[str, int]:
    return parameter(document, name)["component"], parameter(document, name)["components"]


SAXPY_HOST = """
#define THREADS 128
__global__ void saxpy(int n, float a, const float* x, float* y);
int main() {
  const int n = 1 << 16;
  const float a = 2.5f;
  int blocks = (n + THREADS - 1) / THREADS;
  float *dx, *dy;
  cudaMalloc(&dx, n * sizeof(float));
  cudaMalloc((void**)&dy, 2 * n * sizeof(float));
  saxpy<<<blocks, THREADS>>>(n, a, dx, dy);
}
"""
SAXPY = kernel("saxpy", (scalar("n"), scalar("a", "float"), pointer("x", const=True),
                         pointer("y", written=True)),
               (Launch("k.cu", 11, (), "blocks", "THREADS", "", "", ("n", "a", "dx", "dy")),))


# --- specs ---------------------------------------------------------------------------------------


def test_spec_reads_the_launch_site():
    document = spec_of(SAXPY, SAXPY_HOST)
    assert "needs_edit" not in document
    assert document["launch"]["grid"] == [512, 1, 1]
    assert document["launch"]["block"] == [128, 1, 1]
    assert parameter(document, "n")["value"] == 65536
    assert parameter(document, "a")["value"] == 2.5
    x, y = parameter(document, "x"), parameter(document, "y")
    assert (x["role"], x["fill"], x["count"]) == ("input", "random", 65536)
    assert (y["role"], y["count"]) == ("inout", 2 * 65536)  # from its cudaMalloc
    assert y["origin"] == "cudaMalloc of dy"
    assert x["component"] == "f32" and x["range"] == [-1.0, 1.0]


def test_spec_defaults_without_a_launch_site():
    lone = kernel("scale", (pointer("out", written=True, read=False), pointer("in", const=True),
                            scalar("count"), scalar("stride"), scalar("gain", "double", 8)))
    document = spec_of(lone)
    assert parameter(document, "count")["value"] == 1 << 20
    assert parameter(document, "stride")["value"] == 1  # not a size: a stride of 1 stays in bounds
    assert parameter(document, "gain")["value"] == 0.5
    assert parameter(document, "out")["role"] == "output"
    assert parameter(document, "out")["fill"] == "zero"
    assert parameter(document, "in")["count"] == 1 << 20
    assert document["launch"]["grid"] == [4096, 1, 1] and document["launch"]["block"] == [256, 1, 1]


def test_spec_two_dimensions_cover_the_image():
    image = kernel("blur", (pointer("image", written=True), scalar("width"), scalar("height")))
    document = spec_of(image)
    assert parameter(document, "width")["value"] == 1024
    assert parameter(document, "height")["value"] == 1024
    assert parameter(document, "image")["count"] == 1024 * 1024
    assert document["launch"]["block"] == [16, 16, 1]
    assert document["launch"]["grid"] == [64, 64, 1]


def test_spec_dim3_variables_and_dynamic_shared_memory():
    source = """
#define TILE 16
#define ROWS 64
dim3 block(TILE, TILE);
dim3 grid = dim3(ROWS / TILE, 2 * ROWS / TILE);
void go(float* out) { reduce<<<grid, block, TILE * TILE * sizeof(double)>>>(out); }
"""
    reduce = kernel("reduce", (pointer("out", written=True),),
                    (Launch("k.cu", 6, (), "grid", "block", "TILE * TILE * sizeof(double)", "",
                            ("out",)),), dynamic_shared=True)
    document = spec_of(reduce, source)
    assert document["launch"] == {"grid": [4, 8, 1], "block": [16, 16, 1], "shared_bytes": 2048,
                                  "origin": "launch site k.cu:6: <<<grid, block>>>"}
    assert parameter(document, "out")["count"] == 4 * 8 * 16 * 16  # the launch's threads


@pytest.mark.parametrize("parameters, dynamic, why", [
    ((Parameter("f", "Affine", "Affine", "struct", element_size=8),), False,
     "struct passed by value"),
    ((Parameter("rows", "float **", "float **", "pointer", "float *", 8, written_to=True),), False,
     "points to a pointer"),
    ((Parameter("p", "Particle *", "Particle *", "pointer", "Particle", 24, written_to=True),),
     False, "whose fields are not all of one arithmetic type"),
    ((pointer("table", const=True), pointer("indices", "int", const=True)), False,
     "looks like an index array"),
    ((pointer("out", written=True),), True, "extern __shared__"),
    ((pointer("v", "float4", 8, written=True),), False, "is 8 bytes, not 16"),
])
def test_spec_needs_edit(parameters, dynamic, why):
    document = spec_of(kernel("k", parameters, dynamic_shared=dynamic))
    assert why in document["needs_edit"]


def test_spec_template_without_instantiation_needs_edit():
    template = Kernel("fill", "fill", "k.cu", 1, ("typename T",),
                      (pointer("out", "T", 0, written=True),), ())
    document = default_spec(template, None, "k.cu", SiteValues(b""), "fill")
    assert "instantiates it nowhere" in document["needs_edit"]


def test_spec_vector_and_half_elements():
    document = spec_of(kernel("k", (pointer("v", "float4", 16, written=True),
                                    pointer("h", "__half", 2, const=True),
                                    pointer("b", "__nv_bfloat162", 4, const=True))))
    assert "needs_edit" not in document
    assert layout_of(document, "v") == ("f32", 4)
    assert parameter(document, "h")["component"] == "f16"
    assert layout_of(document, "b") == ("bf16", 2)


def test_spec_round_trips_through_toml():
    document = spec_of(SAXPY, SAXPY_HOST)
    text = render_spec(document)
    loaded = tomllib.loads(text)
    del loaded["rocmigrate_digest"]
    assert loaded == document
    assert "grid = [512, 1, 1]" in text  # short arrays stay on one line
    spec = spec_from(tomllib.loads(text), "saxpy.toml")
    assert spec.grid == (512, 1, 1) and spec.repetitions == 20
    assert [p.name for p in spec.parameters] == ["n", "a", "x", "y"]
    assert spec.tolerances["f32"] == {"ulp": 4, "relative": 1e-5, "absolute": 0.0}


def test_edited_spec_survives_regeneration(tmp_path: Path):
    path = tmp_path / "saxpy.toml"
    document = spec_of(SAXPY, SAXPY_HOST)
    assert write_spec(path, document, force=False) == "written"
    assert write_spec(path, document, force=False) == "unchanged"
    assert not edited(path.read_text())
    changed = path.read_text().replace("repetitions = 20", "repetitions = 50")
    path.write_text(changed)
    assert edited(changed)
    assert write_spec(path, document, force=False) == "kept"
    assert path.read_text() == changed
    assert load_spec(path).repetitions == 50
    assert write_spec(path, document, force=True) == "written"
    assert load_spec(path).repetitions == 20
    # an unedited spec takes new defaults
    other = spec_of(SAXPY, SAXPY_HOST.replace("1 << 16", "1 << 12"))
    assert write_spec(path, other, force=False) == "written"
    assert load_spec(path).parameters[0].value == 4096


@pytest.mark.parametrize("edit, message", [
    (("component = \"f32\"", "component = \"f33\""), "component must be one of"),
    (("range = [-1.0, 1.0]", "range = [1.0, -1.0]"), "low <= high"),
    (("grid = [512, 1, 1]", "grid = [0, 1, 1]"), "launch.grid"),
    (("[run]", "[walk]"), "[run] is missing"),
    (("ulp = 4", "ulp = -4"), "tolerance.f32.ulp"),
    (("role = \"input\"", "role = \"both\""), "role must be one of"),
])
def test_spec_errors_say_what_is_wrong(tmp_path: Path, edit, message):
    path = tmp_path / "saxpy.toml"
    path.write_text(render_spec(spec_of(SAXPY, SAXPY_HOST)).replace(*edit, 1))
    with pytest.raises(SpecError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_spec(path)


def test_spec_error_for_bad_toml(tmp_path: Path):
    path = tmp_path / "bad.toml"
    path.write_text("[kernel\n")
    with pytest.raises(SpecError, match="not TOML"):
        load_spec(path)


# --- launch-site values --------------------------------------------------------------------------


def test_site_values():
    values = SiteValues(b"""
#define N (1 << 10)
const int rows = 8, cols = 4;
int threads = 64;
int changed = 3;
int khz = 0;
void f() { changed += 1; cudaDeviceGetAttribute(&khz, attr, 0); }
size_t bytes = (size_t)rows * cols * sizeof(double);
struct Buffers { float* in; } b;
cudaMalloc(&b.in, N * sizeof(float4));
float* d;
cudaMalloc(reinterpret_cast<void**>(&d), bytes);
const double scale = -1.5e-3;
""")
    assert values.integer("N / threads") == 16
    assert values.integer("cols") == 4 and values.integer("bytes") == 256
    assert values.integer("changed") is None  # assigned again
    assert values.integer("khz") is None  # its address is taken
    assert values.dim3("dim3(rows, cols)") == (8, 4, 1)
    assert values.dim3("threads") == (64, 1, 1)
    assert values.allocated_bytes("b.in") == 1024 * 16
    assert values.allocated_bytes("(float*)d") == 256
    assert values.number("scale") == -1.5e-3
    assert values.integer("-7 / 2") == -3  # C division
    assert values.integer("unknown + 1") is None


def test_struct_pointees_of_one_component_type():
    header = b"typedef struct latLong { float lat; float lng; } LatLong;\n"
    source = b"""
typedef struct { unsigned char r, g, b, a; } pixel;
struct Cell { double v[3]; double4 w; };
struct __align__(16) Padded { float x, y, z; };
typedef struct __align__(8) { unsigned int l, a; } pair_aligned;
typedef double real;
typedef struct __Option { real S, X; real T; } Option;
struct Mixed { float x; int n; };
struct Method { float x; float get() const { return x; } };
"""
    values = SiteValues(source, "k.cu", (header,))
    assert values.struct_layout("pixel", 4) == ("u8", 4)
    assert values.struct_layout("const pixel", 0) == ("u8", 4)
    assert values.struct_layout("LatLong", 8) == ("f32", 2)
    assert values.struct_layout("Cell", 56) == ("f64", 7)
    assert values.struct_layout("Padded", 16) is None  # 12 bytes of fields, 4 of padding
    assert values.struct_layout("pair_aligned", 8) == ("u32", 2)
    assert values.struct_layout("pair_aligned", 0) is None  # aligned, size unknown
    assert values.struct_layout("__Option", 24) == ("f64", 3)  # through typedef double real
    branches = SiteValues(b"#if A\ntypedef float real;\n#else\ntypedef double real;\n#endif\n"
                          b"struct Option { real S; };\n")
    assert branches.struct_layout("Option", 0) is None  # which branch is not known
    assert values.struct_layout("Mixed", 8) is None
    assert values.struct_layout("Method", 4) is None
    assert values.struct_layout("pixel", 8) is None  # the front end's size says there is more
    shade = kernel("shade", (Parameter("p", "pixel *", "pixel *", "pointer", "pixel", 4,
                                       written_to=True),))
    document = default_spec(shade, None, "k.cu", values, "shade")
    assert "needs_edit" not in document
    assert layout_of(document, "p") == ("u8", 4)
    assert "pixel: its fields are 4 x u8" in parameter(document, "p")["origin"]


def test_translation_units_of_included_files(tmp_path: Path):
    from migrator.workspace.units import compiled_in

    for name, text in {"main.cu": '#include "kernels.cu"\n#include "more.cuh"\n',
                       "kernels.cu": '#include "deep.cuh"\n', "deep.cuh": "",
                       "more.cuh": "", "alone.cu": "", "other.cu": '#include "more.cuh"\n'}.items():
        (tmp_path / name).write_text(text)
    rels = sorted(p.name for p in tmp_path.iterdir())
    assert compiled_in(tmp_path, rels) == {"kernels.cu": "main.cu", "deep.cuh": "main.cu",
                                           "more.cuh": "main.cu"}


def test_kernels_in_included_headers_are_harnessed_once_through_their_includer(tmp_path: Path):
    """A kernel defined in a header (any suffix) that a .cu file includes is found, read through
    that file (main.cu defines real_t before including ops/scale.hpp, a header of another
    folder) and harnessed once, though two files include kernels.h."""
    from migrator.harness.run import cuda_files, generate
    from migrator.workspace.units import compiled_in

    source = FIXTURES / "headers"
    root, rels = cuda_files(source, tmp_path / "out")
    assert rels == ["main.cu", "other.cu", "kernels.h", "ops/scale.hpp"]
    assert compiled_in(root, rels) == {"kernels.h": "main.cu", "ops/scale.hpp": "main.cu"}
    _front_end_or_skip()
    outcomes, _ = generate(HarnessOptions(source, tmp_path / "out"), lambda message: None)
    assert [(o.name, o.file, o.unit) for o in outcomes] == [
        ("shift", "kernels.h", "main.cu"), ("scale", "ops/scale.hpp", "main.cu")]
    scale = outcomes[1].loaded
    assert scale is not None and not outcomes[1].needs_edit
    assert scale.parameters[0].type == "float *"  # real_t, which only main.cu defines
    assert scale.grid == (8, 1, 1) and scale.block == (256, 1, 1)  # main.cu's launch


def test_a_kernel_file_and_a_header_of_the_same_stem_keep_their_specs_apart(tmp_path: Path):
    from migrator.harness.run import generate

    _front_end_or_skip()
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "kernels.h").write_text(
        "__global__ void inc(int* x) { x[threadIdx.x] += 1; }\n")
    (tmp_path / "src" / "kernels.cu").write_text(
        '#include "kernels.h"\n__global__ void dec(int* x) { x[threadIdx.x] -= 1; }\n')
    outcomes, _ = generate(HarnessOptions(tmp_path / "src", tmp_path / "out"),
                           lambda message: None)
    assert sorted(o.spec for o in outcomes) == ["kernels.cu/dec.toml", "kernels.h/inc.toml"]


# --- harness sources -----------------------------------------------------------------------------


def test_harness_sources_differ_only_in_the_runtime():
    spec = spec_from(tomllib.loads(render_spec(spec_of(SAXPY, SAXPY_HOST))), "saxpy")
    cuda = render_harness(spec, "cuda", "lib/saxpy.cu", includes_main=True)
    hip = render_harness(spec, "hip", "lib/saxpy.cu", includes_main=True)
    assert '#include "lib/saxpy.cu"' in cuda
    assert "#define main rocmigrate_original_main" in cuda and "#undef main" in cuda
    assert "cudaMalloc" in cuda and "hipMalloc" not in cuda
    assert "hipMalloc" in hip and "cudaMalloc" not in hip
    assert cuda.replace("cuda", "hip").replace("#include <hip_runtime.h>",
                                               "#include <hip/hip_runtime.h>") == hip
    assert f"{buffer_seed(1, 1)}ull" in cuda  # y: the second buffer
    # launched, copied and timed on a stream of its own, not the legacy default stream
    assert "saxpy<<<dim3(512, 1, 1), dim3(128, 1, 1), 0, rocmigrate_stream>>>(" in cuda
    assert "cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)" in cuda
    assert "hipStreamCreateWithFlags(&stream, hipStreamNonBlocking)" in hip
    assert "cudaEventRecord(start, stream)" in cuda and "cudaEventRecord(stop, stream)" in cuda
    assert "cudaStreamSynchronize(stream)" in cuda and "cudaStreamDestroy(stream)" in cuda
    assert "DeviceSynchronize" not in cuda and "cudaMemcpy(" not in cuda
    assert "rocmigrate_harness::Pointer{rocmigrate_device[1]}" in cuda
    # the kernel's file comes after the harness's own code, so its macros cannot break it
    assert cuda.index('#include "lib/saxpy.cu"') > cuda.index("int drive(")
    assert "Value<long long>{65536ll}" in cuda and "Value<double>{2.5}" in cuda


def test_one_source_holds_every_harness_of_a_unit():
    """A translation unit's harnesses in one program: its file included once, each harness a
    function with its own launch, warm-up and repetitions, main() running the one named."""
    from migrator.harness.render import c_string, render_harnesses

    document = spec_of(SAXPY, SAXPY_HOST)
    one = spec_from(tomllib.loads(render_spec(document)), "saxpy")
    document["run"]["repetitions"], document["launch"]["block"] = 7, [64, 1, 1]
    document["kernel"]["harness"] = "saxpy-2"
    two = spec_from(tomllib.loads(render_spec(document)), "saxpy-2")
    source = render_harnesses([("lib/saxpy", one), ('lib/"odd"/saxpy-2', two)], "hip",
                              "lib/saxpy.cu", includes_main=True)
    assert source.count('#include "lib/saxpy.cu"') == 1
    assert source.count("#define main rocmigrate_original_main") == 1
    first = source[source.index("static int rocmigrate_harness_1("):
                   source.index("static int rocmigrate_harness_2(")]
    second = source[source.index("static int rocmigrate_harness_2("):source.index("int main(")]
    assert "dim3(128, 1, 1)" in first and "dim3(64, 1, 1)" in second
    assert '"saxpy-2", rocmigrate_output' in second and ", 7,\n" in second
    assert '{"lib/saxpy", rocmigrate_harness_1}' in source
    assert '{"lib/\\042odd\\042/saxpy-2", rocmigrate_harness_2}' in source
    assert c_string("a\\b\n") == "a\\134b\\012"
    assert "hipMalloc" in source and "cuda" not in source.replace("saxpy.cu", "")


def test_harness_template_arguments_and_struct_init():
    document = spec_of(Kernel("k", "ns::k", "k.cu", 1, ("typename T", "int B"),
                              (Parameter("f", "Affine", "Affine", "struct", element_size=8),),
                              (Instantiation(("float", "256"), (Parameter(
                                  "f", "Affine", "Affine", "struct", element_size=8),)),)))
    assert "struct passed by value" in document["needs_edit"]
    document.pop("needs_edit")
    document["parameters"][0]["init"] = "Affine{2.0f, 1.0f}"
    spec = spec_from(document, "k")
    source = render_harness(spec, "cuda", "k.cu", includes_main=False)
    assert ("ns::k<float, 256><<<dim3(4096, 1, 1), dim3(256, 1, 1), 0, rocmigrate_stream>>>("
            in source)
    assert "(Affine{2.0f, 1.0f})" in source
    assert "#define main" not in source


# --- the binary output format -------------------------------------------------------------------


def buffer(name: str, kind: str, values, components: int = 1) -> OutputBuffer:
    component = COMPONENTS[kind]
    dtype = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i32": np.int32,
             "u8": np.uint8, "u64": np.uint64, "bf16": np.uint16}[kind]
    data = np.asarray(values, dtype=dtype).tobytes()
    return OutputBuffer(name, component, components, component.size * components,
                        len(data) // (component.size * components), data)


def test_output_file_round_trip(tmp_path: Path):
    buffers = [buffer("y", "f32", [1.0, 2.5, -3.0, 0.0], components=2),
               buffer("hist", "u64", [1, 2, 3])]
    path = tmp_path / "out.bin"
    write_output(path, buffers)
    data = path.read_bytes()
    assert data[:4] == b"RMKH" and struct.unpack_from("<II", data, 4) == (1, 2)
    # first descriptor: name length, name, type code, components, element size, count
    assert struct.unpack_from("<H", data, 12) == (1,) and data[14:15] == b"y"
    assert struct.unpack_from("<BBIQ", data, 15) == (11, 2, 8, 2)
    assert read_output(path) == buffers


@pytest.mark.parametrize("damage, message", [
    (lambda d: b"XXXX" + d[4:], "no RMKH magic"),
    (lambda d: d[:8] + struct.pack("<I", 2) + d[12:], "cut short"),
    (lambda d: d[:4] + struct.pack("<I", 7) + d[8:], "format version 7"),
    (lambda d: d[:-1], "cut short"),
    (lambda d: d + b"\0", "after the last buffer"),
    (lambda d: d[:15] + bytes([99]) + d[16:], "unknown type code 99"),
])
def test_output_file_damage_is_reported(tmp_path: Path, damage, message):
    path = tmp_path / "out.bin"
    write_output(path, [buffer("y", "f32", [1.0, 2.0])])
    with pytest.raises(OutputError, match=message):
        parse_output(damage(path.read_bytes()))


# --- comparison ----------------------------------------------------------------------------------


def compared(original: OutputBuffer, port: OutputBuffer, tolerances: dict | None = None):
    (result,) = compare_outputs([original], [port], tolerances)
    return result


def test_integers_compare_exactly():
    same = compared(buffer("c", "i32", [1, 2, 3]), buffer("c", "i32", [1, 2, 3]))
    assert same.equal and same.mismatches == 0
    differ = compared(buffer("c", "i32", [1, 2, 3, 4]), buffer("c", "i32", [1, 2, 4, 5]))
    assert not differ.equal and differ.mismatches == 2
    assert (differ.first_index, differ.first_original, differ.first_port) == (2, 3, 4)


def test_floats_within_ulp_or_relative_tolerance():
    one = np.float32(1.0)
    near = np.nextafter(np.nextafter(one, np.float32(2)), np.float32(2))  # 2 ULP above
    far = np.float32(1.001)
    result = compared(buffer("y", "f32", [one, one]), buffer("y", "f32", [near, far]))
    assert result.mismatches == 1 and result.first_index == 1
    assert result.max_ulp == 8389  # 1.001 is 8389 float ULP above 1.0
    assert math.isclose(result.max_relative, 0.001 / 1.001, rel_tol=1e-3)
    strict = compared(buffer("y", "f32", [one]), buffer("y", "f32", [near]),
                      {"f32": {"ulp": 1, "relative": 0.0}})
    assert not strict.equal
    loose = compared(buffer("y", "f32", [one]), buffer("y", "f32", [far]),
                     {"f32": {"relative": 1e-2}})
    assert loose.equal


def test_nan_and_infinity():
    nan, inf = float("nan"), float("inf")
    same = compared(buffer("y", "f32", [nan, inf, -inf, 0.0]),
                    buffer("y", "f32", [nan, inf, -inf, -0.0]))
    assert same.equal
    for port in ([1.0, inf, -inf, 0.0], [nan, -inf, -inf, 0.0], [nan, 3.4e38, -inf, 0.0]):
        result = compared(buffer("y", "f32", [nan, inf, -inf, 0.0]), buffer("y", "f32", port))
        assert not result.equal and result.mismatches == 1, port
    assert compared(buffer("y", "f32", [nan]), buffer("y", "f32", [1.0])).first_original == "nan"


def test_half_bfloat16_and_double():
    assert compared(buffer("h", "f16", [1.0, 0.5]), buffer("h", "f16", [1.0009765625, 0.5])).equal
    assert not compared(buffer("h", "f16", [1.0]), buffer("h", "f16", [1.01])).equal
    # bf16 bits: 1.0 is 0x3F80, its neighbours 0x3F81 (1 ULP), 0x3F90 (16 ULP, 1.125)
    assert compared(buffer("b", "bf16", [0x3F80]), buffer("b", "bf16", [0x3F81])).equal
    wide = compared(buffer("b", "bf16", [0x3F80]), buffer("b", "bf16", [0x3F90]))
    assert not wide.equal and wide.first_port == 1.125 and wide.max_ulp == 16
    # opposite signs far apart: the ULP distance is computed without overflowing
    doubles = compared(buffer("d", "f64", [-1e308]), buffer("d", "f64", [1e308]))
    assert not doubles.equal and doubles.max_ulp > 2 ** 63


def test_length_type_and_missing_buffers_differ():
    (length,) = compare_outputs([buffer("y", "f32", [1.0, 2.0])], [buffer("y", "f32", [1.0])])
    assert not length.equal and "length differs" in length.problem
    (kind,) = compare_outputs([buffer("y", "f32", [1.0])], [buffer("y", "i32", [1])])
    assert "type differs" in kind.problem
    results = compare_outputs([buffer("a", "u8", [1])], [buffer("b", "u8", [1])])
    assert [(r.name, r.equal, r.problem) for r in results] == [
        ("a", False, "missing in the port's output"),
        ("b", False, "missing in the original's output")]


# --- the command ---------------------------------------------------------------------------------


def fake_reader(kernels: dict[str, list[Kernel]]):
    def read(path: Path, options=None) -> KernelReading:
        return KernelReading(path, kernels.get(path.name, []))
    return read


def test_cli_bad_input_is_a_clear_message(tmp_path: Path):
    from migrator.cli import _register, app

    _register()
    result = CliRunner().invoke(app, ["harness", str(tmp_path / "missing"), "-o",
                                      str(tmp_path / "out")])
    assert result.exit_code == 2 and "does not exist" in result.output


def test_unknown_kernel_is_a_clear_message(tmp_path: Path, monkeypatch):
    import migrator.clang.kernels as front_end
    from migrator.harness import HarnessError

    monkeypatch.setattr(front_end, "read_kernels", fake_reader({"k.cu": [SAXPY]}))
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "k.cu").write_text(SAXPY_HOST)
    with pytest.raises(HarnessError, match="no kernel nothing"):
        harness(HarnessOptions(tmp_path / "src", tmp_path / "out", kernels=("nothing",)))


@pytest.mark.slow
def test_harnesses_build_without_a_gpu_and_runs_are_skipped(tmp_path: Path, monkeypatch):
    """Hand-built kernels of fixtures/kernel_harness/program.cu: specs, both harnesses built with
    nvcc (the port through rocmigrate's NVIDIA headers), runs skipped with the reason."""
    require_tool("nvcc", "/usr/local/cuda/bin/nvcc")
    import migrator.clang.kernels as front_end

    monkeypatch.setenv("ROCMIGRATE_GPU", "none")  # as on a machine without a GPU
    parameters = (pointer("a", const=True), pointer("b", const=True),
                  pointer("c", written=True, read=False), scalar("rows"), scalar("cols"))
    add = kernel("add_matrices", parameters,
                 (Launch("program.cu", 35, (), "grid", "block", "", "",
                         ("a", "b", "c", "ROWS", "COLS")),))
    monkeypatch.setattr(front_end, "read_kernels", fake_reader({"program.cu": [add]}))
    said: list[str] = []
    report = harness(HarnessOptions(FIXTURES / "program.cu", tmp_path / "out",
                                    hip_compiler="nvcc", runs=1), progress=said.append)
    (outcome,) = report.harnesses
    assert outcome.verdict == "skipped", outcome.problems
    assert all(build.ok for build in outcome.builds.values()), outcome.builds
    assert any("runs will be skipped" in line and "NVIDIA GPU taken as absent" in line
               for line in said)
    assert said.index(next(l for l in said if "runs will be skipped" in l)) < said.index(
        next(l for l in said if l.startswith("building")))  # said before anything was built
    spec = load_spec(tmp_path / "out" / "program" / "add_matrices.toml")
    assert spec.grid == (16, 32, 1) and spec.block == (16, 16, 1)
    assert [p.count for p in spec.parameters[:3]] == [512 * 256] * 3


@pytest.mark.slow
@pytest.mark.parametrize("compiler", ["nvcc", "hipcc"])
def test_kernels_harnesses_compile(tmp_path: Path, compiler: str):
    """Every kernel of kernels/, read by the front end: specs from their launch sites, the
    harnesses built with nvcc, the port with nvcc (rocmigrate's NVIDIA headers) or hipcc gfx90a
    (converted for the installed HIP, as the command does)."""
    require_tool("nvcc", "/usr/local/cuda/bin/nvcc")
    if compiler == "hipcc":
        require_tool("hipcc")
    _front_end_or_skip()
    from migrator.workspace import Flags, open_workspace

    settings = open_workspace([ROOT / "kernels"], Flags(detect_hip=True)).settings
    out = tmp_path / "out"
    report = harness(HarnessOptions(ROOT / "kernels", out, hip_compiler=compiler,
                                    build_only=True, settings=settings))
    verdicts = {outcome.spec: outcome.verdict for outcome in report.harnesses}
    assert len(verdicts) == 20
    assert verdicts.pop("shared_memory/random_gather.toml") == "needs-edit"  # perm: an index array
    assert set(verdicts.values()) == {"built"}, report.harnesses
    saxpy = load_spec(out / "vector_ops" / "saxpy.toml")
    assert saxpy.grid == (4096, 1, 1) and saxpy.block == (256, 1, 1)
    assert [(p.name, p.role, p.count) for p in saxpy.parameters if p.kind == "pointer"] == [
        ("x", "input", 1 << 20), ("y", "inout", 1 << 20)]
    assert load_spec(out / "vector_ops" / "scale-2.toml").template_arguments == ("double",)
    block_sum = load_spec(out / "shared_memory" / "block_sum.toml")
    assert block_sum.shared_bytes == 4096 and block_sum.grid == (16384, 1, 1)
    transpose = load_spec(out / "transpose" / "transpose_tiled.toml")
    assert transpose.grid == (128, 128, 1) and transpose.block == (32, 8, 1)
    assert [p.count for p in transpose.parameters[:2]] == [4096 * 4096] * 2


def _front_end_or_skip():
    from migrator.clang.kernels import read_kernels

    try:
        return read_kernels(FIXTURES / "program.cu")
    except NotImplementedError as err:
        pytest.skip(f"the libclang front end is not there yet: {err}")


@pytest.mark.slow
@pytest.mark.parametrize("compiler", ["nvcc", "hipcc"])
def test_fixture_harnesses_compile(tmp_path: Path, compiler: str):
    """The kernels of fixtures/kernel_harness (a library with templates, typedefs, __restrict__,
    a struct by value, dynamic shared memory; a program with launch sites; a file whose host
    code calls a function defined in another file) as the front end reads
    them: specs that need edits are named, the others build with nvcc, and the port with nvcc
    through rocmigrate's NVIDIA headers or with hipcc for gfx90a. Each file is compiled once
    per side for all its harnesses; axpby's spec is edited into one that does not compile, so
    library.cu's harnesses are built alone and only axpby fails."""
    import json

    from migrator.harness.run import generate

    require_tool("nvcc", "/usr/local/cuda/bin/nvcc")
    if compiler == "hipcc":
        require_tool("hipcc")
    _front_end_or_skip()
    # flags/scale.cu compiles only with its compile command's -Iinclude and -DFLAGS_SCALE
    commands = tmp_path / "compile_commands.json"
    commands.write_text(json.dumps([{"directory": str(FIXTURES / "flags"), "file": "scale.cu",
                                     "command": "nvcc -Iinclude -DFLAGS_SCALE=3 -c scale.cu"}]))
    options = HarnessOptions(FIXTURES, tmp_path / "out", hip_compiler=compiler, build_only=True,
                             compile_commands=commands)
    generate(options, lambda line: None)
    axpby_spec = tmp_path / "out" / "library" / "axpby.toml"
    axpby_spec.write_text(axpby_spec.read_text().replace(
        'name = "alpha"\n', 'name = "alpha"\ninit = "rocmigrate_undeclared"\n'))
    report = harness(options)
    verdicts = {outcome.spec: outcome.verdict for outcome in report.harnesses}
    assert verdicts == {"library/axpby.toml": "failed", "library/block_max.toml": "built",
                        "library/apply.toml": "built",
                        "library/project.toml": "built", "library/histogram.toml": "built",
                        "library/gather.toml": "needs-edit", "library/image_scale.toml": "built",
                        "program/add_matrices.toml": "built",
                        "program/count_positive.toml": "built",
                        "partial/elsewhere/negate.toml": "built",
                        "included/kernels/invert.toml": "built",
                        "headers/kernels/shift.toml": "built",
                        "headers/ops/scale/scale.toml": "built",
                        "flags/scale/scale_by_flag.toml": "built"}, report.harnesses
    flagged = next(o for o in report.harnesses if o.name == "scale_by_flag")
    assert "hip-src/flags/include -D FLAGS_SCALE=3" in flagged.builds["hip"].command
    # kernels.cu does not compile alone: its harnesses include main.cu, which includes it
    invert = next(o for o in report.harnesses if o.name == "invert")
    assert invert.unit == "included/main.cu"
    assert '#include "included/main.cu"' in (tmp_path / "out" / invert.sources["cuda"]).read_text()
    invert_spec = load_spec(tmp_path / "out" / "included" / "kernels" / "invert.toml")
    assert invert_spec.grid == (32, 1, 1) and invert_spec.block == (128, 1, 1)
    assert [p.count for p in invert_spec.parameters[:2]] == [4096, 4096]  # main.cu's cudaMallocs
    # its file's host code calls a function defined elsewhere: linked without the unused code
    negate = next(o for o in report.harnesses if o.name == "negate")
    assert all("linked without the unused host code" in build.output_tail
               for build in negate.builds.values())
    hip = report.toolchains["hip"]["name"]
    assert hip == ("hipcc-amd" if compiler == "hipcc" else "nvcc-nvidia-headers")
    # program.cu's two harnesses: one binary per side; library.cu's: each its own
    add, count = (next(o for o in report.harnesses if o.name == name)
                  for name in ("add_matrices", "count_positive"))
    assert add.binaries == count.binaries == {"cuda": "build/program.cu.cuda",
                                              "hip": "build/program.cu.hip"}
    assert "program.cu.cuda.cu" in add.builds["cuda"].command
    built = (tmp_path / "out" / "program.cu.hip.cpp").read_text()  # compiled: on a stream
    assert "hipStreamCreateWithFlags(&stream, hipStreamNonBlocking)" in built
    assert built.count(", rocmigrate_stream>>>(") == 2
    axpby, histogram = (next(o for o in report.harnesses if o.name == name)
                        for name in ("axpby", "histogram"))
    assert "rocmigrate_undeclared" in axpby.builds["cuda"].output_tail
    assert histogram.binaries["hip"] == "build/library/histogram.hip"
    assert histogram.builds["hip"].output_tail.startswith("[rocmigrate] built alone")
    block_max = load_spec(tmp_path / "out" / "library" / "block_max.toml")
    assert block_max.template_arguments == ("float", "256") and block_max.shared_bytes == 1024


# --- running and judging (binaries stand in for harnesses: no GPU needed) ------------------------


FAKE_HARNESS = """#!{python}
import json, struct, sys
from pathlib import Path
values = {values}
output = Path(sys.argv[-1])
run = int(output.name.rsplit(".", 2)[-2])
data = struct.pack("<%df" % len(values), *values)
if {varies}:
    data = struct.pack("<%df" % len(values), *[v + run for v in values])
head = b"RMKH" + struct.pack("<II", 1, 1) + struct.pack("<H", 1) + b"y" + struct.pack(
    "<BBIQ", 11, 1, 4, len(values))
output.write_bytes(head + data)
with open(output.parent / "order.log", "a") as log:
    log.write(" ".join([*sys.argv[1:-1], output.name]) + "\\n")
for repetition, ms in enumerate({timings}, 1):
    print(json.dumps({{"harness": "saxpy", "repetition": repetition, "kernel_ms": ms}}))
sys.exit({exit})
"""


def built_folder(tmp_path: Path, sides: dict[str, dict]) -> Path:
    """An output folder as `harness --build-only` leaves it, with scripts as binaries."""
    import json
    import sys

    out = tmp_path / "out"
    write_spec(out / "k" / "saxpy.toml", spec_of(SAXPY, SAXPY_HOST), force=False)
    builds = {}
    for side, fake in sides.items():
        binary = out / "build" / "k" / f"saxpy.{side}"
        binary.parent.mkdir(parents=True, exist_ok=True)
        binary.write_text(FAKE_HARNESS.format(python=sys.executable, **{
            "values": [1.0, 2.0], "varies": False, "timings": [1.0, 1.0, 1.0], "exit": 0,
            **fake}))
        binary.chmod(0o755)
        builds[side] = {"toolchain": side, "command": "", "ok": True, "seconds": 0.0,
                        "output_tail": ""}
    (out / "harness.json").write_text(json.dumps({
        "settings": {"source": str(tmp_path)},
        "toolchains": {"cuda": {"name": "nvcc"}, "hip": {"name": "nvcc-nvidia-headers"}},
        "harnesses": [{"name": "saxpy", "kernel": "saxpy", "file": "k.cu",
                       "spec": "k/saxpy.toml", "spec_status": "written", "needs_edit": "",
                       "spec_error": "", "builds": builds,
                       "sources": {side: f"k/saxpy.{side}.cu" for side in sides}}]}))
    return out


@pytest.fixture
def gpus_here(monkeypatch):
    import migrator.harness.run as steps

    monkeypatch.setattr(steps, "gpus_for", lambda name, assume=None: {
        side: {"usable": True, "seen": "GPU 0: a test"} for side in ("cuda", "hip")})


def test_runs_interleaved_compared_and_timed(tmp_path: Path, gpus_here):
    from migrator.harness.run import run_again

    one_ulp = float(np.nextafter(np.float32(2.0), np.float32(3.0)))
    out = built_folder(tmp_path, {"cuda": {"timings": [1.0, 2.0, 3.0]},
                                  "hip": {"values": [1.0, one_ulp], "timings": [2.0, 4.0, 6.0]}})
    report = run_again(out, runs=2, warmup=0)
    (outcome,) = report.harnesses
    assert outcome.verdict == "pass", outcome.problems
    assert [r.output for r in outcome.runs["cuda"]] == ["build/k/saxpy.cuda.1.out",
                                                        "build/k/saxpy.cuda.2.out"]
    (y,) = outcome.buffers
    assert y.equal and y.max_ulp == 1
    assert outcome.timings["cuda"].median_ms == 2.0 and outcome.timings["cuda"].launches == 6
    assert outcome.timings["hip"].spread == 1.0  # (6 - 2) / 4
    assert outcome.ratio == 2.0
    assert outcome.consistent == {"cuda": True, "hip": True}
    # the same through python -m migrator.harness: reports written, exit 0
    from migrator.harness.__main__ import main

    assert main([str(out), "--runs", "1", "--warmup", "0"]) == 0
    assert '"pass": 1' in (out / "harness.json").read_text()
    assert "## k/saxpy.toml: pass" in (out / "harness.md").read_text()


def test_a_different_output_is_a_mismatch(tmp_path: Path, gpus_here):
    from migrator.harness.run import run_again

    out = built_folder(tmp_path, {"cuda": {}, "hip": {"values": [1.0, 2.5]}})
    report = run_again(out, runs=1, warmup=0)
    (outcome,) = report.harnesses
    assert outcome.verdict == "mismatch" and not report.ok
    assert outcome.problems == ["y: 1 value(s) differ, first at 1: original 2.0, port 2.5"]
    import json

    from migrator.output.harness_json import render_json
    from migrator.output.harness_markdown import render_markdown

    document = json.loads(render_json(report))
    assert document["summary"] == {"ok": False, "verdicts": {"mismatch": 1}}
    assert document["harnesses"][0]["buffers"][0]["mismatches"] == 1
    assert "loaded" not in document["harnesses"][0]
    markdown = render_markdown(report)
    assert "| `y` | f32 | 2 | **no** | 1 | [1] 2 / 2.5 | 2097152 | 0.2 |" in markdown
    assert "| cuda | 3 | 1 | 1 | 1 | 0.0% |" in markdown


def test_outputs_that_change_from_run_to_run_are_named(tmp_path: Path, gpus_here):
    from migrator.harness.run import run_again

    out = built_folder(tmp_path, {"cuda": {"varies": True}, "hip": {"varies": True}})
    (outcome,) = run_again(out, runs=2).harnesses
    assert outcome.consistent == {"cuda": False, "hip": False}
    assert any("not deterministic" in problem for problem in outcome.problems)


def test_a_spec_outside_the_folder_runs_nothing(tmp_path: Path, gpus_here):
    """harness.json is input: a spec path that leads out of the folder (and with it the
    binary run and the outputs written, named after it) is refused, nothing outside runs."""
    import json

    from migrator.harness.run import run_again

    out = built_folder(tmp_path, {"cuda": {}, "hip": {}})
    outside = tmp_path / "elsewhere"
    (outside / "build").mkdir(parents=True)
    (outside / "saxpy.toml").write_bytes((out / "k" / "saxpy.toml").read_bytes())
    document = json.loads((out / "harness.json").read_text())
    document["harnesses"][0]["spec"] = "../elsewhere/saxpy.toml"
    (out / "harness.json").write_text(json.dumps(document))
    (outcome,) = run_again(out, runs=1, warmup=0).harnesses
    assert outcome.verdict != "pass" and "not a spec inside" in outcome.spec_error
    assert sorted(outside.rglob("*")) == [outside / "build", outside / "saxpy.toml"]
    assert outcome.loaded is None  # the spec outside was not even read


def test_harnesses_sharing_a_binary_are_run_by_name(tmp_path: Path, gpus_here):
    """A report whose harnesses name their binaries: both harnesses of k.cu run the one binary
    of each side, by their spec's path; their outputs stay apart. (The reports before, without
    ``binaries``, run ``build/<spec>.<side> OUTPUT``: the tests above.) A binary outside the
    folder runs nothing."""
    import json

    from migrator.harness.run import run_again
    from migrator.output.harness_json import render_json

    out = built_folder(tmp_path, {"cuda": {}, "hip": {}})
    write_spec(out / "k" / "saxpy-2.toml", spec_of(SAXPY, SAXPY_HOST), force=False)
    document = json.loads((out / "harness.json").read_text())
    first = document["harnesses"][0]
    for side in ("cuda", "hip"):
        (out / "build" / "k" / f"saxpy.{side}").rename(out / "build" / f"k.cu.{side}")
    (out / "build" / "k").rmdir()  # a shared binary's build leaves no folder per spec
    first["binaries"] = {"cuda": "build/k.cu.cuda", "hip": "build/k.cu.hip"}
    document["harnesses"].append({**first, "name": "saxpy-2", "spec": "k/saxpy-2.toml"})
    (out / "harness.json").write_text(json.dumps(document))
    report = run_again(out, runs=1, warmup=0)
    assert [o.verdict for o in report.harnesses] == ["pass", "pass"]
    assert (out / "build" / "k" / "order.log").read_text().splitlines() == [
        "k/saxpy saxpy.cuda.1.out", "k/saxpy saxpy.hip.1.out",
        "k/saxpy-2 saxpy-2.cuda.1.out", "k/saxpy-2 saxpy-2.hip.1.out"]
    assert report.harnesses[1].runs["hip"][0].output == "build/k/saxpy-2.hip.1.out"
    assert json.loads(render_json(report))["harnesses"][1]["binaries"] == first["binaries"]
    document["harnesses"][1]["binaries"] = {"cuda": "../k.cu.cuda", "hip": "build/k.cu.hip"}
    (out / "harness.json").write_text(json.dumps(document))
    report = run_again(out, runs=1, warmup=0)
    assert report.harnesses[1].verdict == "spec-error" and not report.harnesses[1].runs
    assert "../k.cu.cuda: not a binary inside" in report.harnesses[1].spec_error


def test_a_crashing_run_fails(tmp_path: Path, gpus_here):
    from migrator.harness.run import run_again

    out = built_folder(tmp_path, {"cuda": {}, "hip": {"exit": 3}})
    (outcome,) = run_again(out, runs=1, warmup=0).harnesses
    assert outcome.verdict == "failed" and outcome.problems == ["hip run 1 exited with 3"]


def test_sides_take_turns_after_a_warm_up_round_and_warm_ups_are_not_timed(tmp_path: Path,
                                                                           gpus_here):
    from migrator.harness.run import run_again

    out = built_folder(tmp_path, {"cuda": {"timings": "[100.0 if run == 1 else 1.0]"},
                                  "hip": {"timings": "[100.0 if run == 1 else 1.0]"}})
    (outcome,) = run_again(out, runs=3).harnesses
    order = (out / "build" / "k" / "order.log").read_text().split()
    assert order == ["saxpy.cuda.1.out", "saxpy.hip.1.out", "saxpy.hip.2.out",
                     "saxpy.cuda.2.out", "saxpy.cuda.3.out", "saxpy.hip.3.out",
                     "saxpy.hip.4.out", "saxpy.cuda.4.out"]
    assert [r.warmup for r in outcome.runs["cuda"]] == [True, False, False, False]
    assert outcome.timings["cuda"].max_ms == 1.0 and outcome.timings["cuda"].launches == 3


# run-to-run drift of a few percent, 20 launches a run with their own jitter
JITTER = "[1.0 + 0.01 * ((run * 7) % 5) + 0.002 * (i % 3) for i in range(20)]"


def test_identical_kernels_are_not_called_slower(tmp_path: Path, gpus_here):
    from migrator.harness.run import run_again

    out = built_folder(tmp_path, {"cuda": {"timings": JITTER},
                                  "hip": {"timings": JITTER.replace("run * 7", "run * 3")}})
    (outcome,) = run_again(out).harnesses
    assert outcome.verdict == "pass", outcome.problems
    assert outcome.timing.flag in ("ok", "noise") and outcome.timing.interval is not None
    assert outcome.timing.runs == (10, 10) and outcome.timing.p_value is not None


def test_a_port_twice_as_slow_is_slower_with_its_interval(tmp_path: Path, gpus_here):
    import json

    from migrator.harness.run import run_again
    from migrator.output.harness_json import render_json
    from migrator.output.harness_markdown import render_markdown

    out = built_folder(tmp_path, {"cuda": {"timings": JITTER},
                                  "hip": {"timings": JITTER.replace("1.0 +", "2.0 +")}})
    report = run_again(out)
    (outcome,) = report.harnesses
    assert outcome.verdict == "slower" and not report.ok
    low, high = outcome.timing.interval
    assert 1.8 < low <= high < 2.2 and outcome.timing.p_value < 0.001
    assert outcome.problems[0].startswith("kernel_ms: slower: port 1.9")
    timing = json.loads(render_json(report))["harnesses"][0]["timing"]
    assert timing["flag"] == "slower" and timing["confidence"] == 0.999
    assert len(timing["interval"]) == 2 and timing["p_value"] < 0.001
    assert "| `k/saxpy.toml` | `saxpy` | slower | 1.9" in render_markdown(report)
    assert "99.9% interval" in render_markdown(report)
    # too few runs for an interval: undecided, never slower
    (few,) = run_again(out, runs=3).harnesses
    assert few.verdict == "pass" and few.timing.flag == "undecided"


def test_the_gpu_override_is_honoured(tmp_path: Path, monkeypatch):
    from migrator.harness.run import HarnessError, run_again

    out = built_folder(tmp_path, {"cuda": {}, "hip": {}})
    (outcome,) = run_again(out, runs=1, gpu="none").harnesses
    assert outcome.verdict == "skipped"
    assert "NVIDIA GPU taken as absent" in outcome.problems[0]
    monkeypatch.setenv("ROCMIGRATE_GPU", "nvidia")  # both sides run on NVIDIA here
    (outcome,) = run_again(out, runs=1, warmup=0).harnesses
    assert outcome.verdict == "pass"
    with pytest.raises(HarnessError, match="expected auto, none"):
        run_again(out, gpu="cuda")


def test_a_nondeterministic_original_judges_the_port_against_its_own_variation(tmp_path: Path,
                                                                               gpus_here):
    from migrator.harness.run import run_again

    # the original's runs give y + run (runs 1..4 with the warm-up): [2, 3] ... [5, 6]; a port
    # no further from [2, 3] than twice what the original's runs are passes
    out = built_folder(tmp_path, {"cuda": {"varies": True},
                                  "hip": {"values": "[2.5, 4.5]"}})
    report = run_again(out, runs=3)
    (outcome,) = report.harnesses
    assert outcome.verdict == "nondeterministic-ok" and report.ok
    assert outcome.problems[0].startswith(
        "the original's own runs differ, and the port no more than 2x as much: y: port up to "
        "5242880 ULP from the original's first run, the original's 4 runs up to 10485760 ULP")
    assert any("cuda side's own runs gave different outputs" in p for p in outcome.problems)
    out = built_folder(tmp_path, {"cuda": {"varies": True}, "hip": {"values": "[2.5, 30.0]"}})
    (outcome,) = run_again(out, runs=3).harnesses
    assert outcome.verdict == "mismatch"
    assert "the port differs more (more than 2x): y: port up to" in outcome.problems[-2]
    # a port whose runs vary while the original's do not stays a mismatch
    out = built_folder(tmp_path, {"cuda": {}, "hip": {"varies": True}})
    (outcome,) = run_again(out, runs=3).harnesses
    assert outcome.verdict == "mismatch"


def test_within_variation_of_integers_nans_and_missing_buffers():
    from migrator.harness.compare import within_variation
    from migrator.harness.types import COMPONENTS

    def out(*values, name="n"):
        return [OutputBuffer(name, COMPONENTS["i32"], 1, 4, len(values),
                             struct.pack(f"<{len(values)}i", *values))]

    originals = [out(10, 5), out(12, 5), out(11, 5)]
    (check,) = within_variation(originals, [out(13, 5), out(8, 5)])
    assert (check.original, check.port, check.within) == (2, 3, True)
    (check,) = within_variation(originals, [out(15, 5), out(10, 6)])
    assert (check.port, check.within) == (5, False)  # 5 > 2 x 2
    (check,) = within_variation(originals, [out(10, 5, name="m")])
    assert (check.port, check.within) == (None, False)

    def floats(*values):
        return [OutputBuffer("f", COMPONENTS["f32"], 1, 4, len(values),
                             struct.pack(f"<{len(values)}f", *values))]

    nan = float("nan")
    (check,) = within_variation([floats(1.0, nan), floats(1.0, nan)], [floats(1.0, nan)])
    assert (check.original, check.port, check.within) == (0, 0, True)  # NaN where it was
    (check,) = within_variation([floats(1.0, 2.0), floats(1.0, 2.0)], [floats(nan, 2.0)])
    assert check.port is None  # a NaN where the original never has one


def test_run_again_without_a_build_report(tmp_path: Path):
    from migrator.harness import HarnessError
    from migrator.harness.__main__ import main

    with pytest.raises(HarnessError, match="not the report of a harness build"):
        from migrator.harness.run import run_again
        run_again(tmp_path)
    assert main([str(tmp_path)]) == 2


# --- the harness's host code: inputs as documented, half and bfloat16 rounding ------------------


def splitmix64(state: int):
    mask = (1 << 64) - 1
    while True:
        state = (state + 0x9E3779B97F4A7C15) & mask
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        yield z ^ (z >> 31)


def expected_fill(kind: str, values: int, low: float, high: float, seed: int) -> bytes:
    """docs/kernel_harness.md's generator, in Python."""
    numbers = splitmix64(seed)
    out = []
    for _ in range(values):
        r = next(numbers)
        if kind in ("f16", "f32", "f64"):
            value = low + (high - low) * ((r >> 11) * 2.0 ** -53)
            dtype = {"f16": np.float16, "f32": np.float32, "f64": np.float64}[kind]
            rounded = np.float32(value) if kind != "f64" else value  # as the harness rounds
            out.append(np.asarray(rounded).astype(dtype).tobytes())
        else:
            value = (int(low) + r % (int(high) - int(low) + 1)) & 0xFFFFFFFF
            out.append(struct.pack("<I", value))
    return b"".join(out)


def nearest_bf16(value: float) -> int:
    """bfloat16 bits of a finite float32, rounding to nearest even, by comparing distances."""
    bits = struct.unpack("<I", struct.pack("<f", value))[0]
    down, up = bits >> 16, (bits >> 16) + 1
    widen = lambda b: struct.unpack("<f", struct.pack("<I", (b << 16) & 0xFFFFFFFF))[0]
    gap_down, gap_up = abs(value - widen(down)), abs(widen(up) - value)
    return up if gap_up < gap_down or (gap_up == gap_down and down & 1) else down


@pytest.mark.slow
def test_harness_host_code_fills_and_rounds_as_documented(tmp_path: Path):
    import subprocess

    compiler = require_tool("g++")
    spec = spec_from(tomllib.loads(render_spec(spec_of(SAXPY, SAXPY_HOST))), "saxpy")
    source = render_harness(spec, "cuda", "k.cu", includes_main=False)
    block = source[source.index("namespace rocmigrate_harness {"):
                   source.index("template <class Launch>")] + "}\n"  # the helpers, not drive
    specials = [0.0, -0.0, 1.0, 1.0009765625, 1.00048828125, 1.00146484375, 65504.0, 65520.0,
                1e5, 6.1e-5, 5.96e-8, 2.98e-8, 2.99e-8, 1e-10, -3.14159265, 1.0078125, 1.01171875]
    buffers = [("f32", 1, 6, -1.0, 1.0, 42), ("f16", 2, 3, -2.0, 2.0, 9),
               ("f64", 1, 4, 0.0, 5.0, 3),
               ("i32", 1, 6, -1000, 1000, 7), ("u32", 1, 3, 0, 1000, 11)]
    program = "#include <cstdint>\n#include <cstdio>\n#include <cstring>\n#include <vector>\n"
    program += block + "\nint main() {\n  using namespace rocmigrate_harness;\n"
    program += "  const float specials[] = {" + ", ".join(f"{v!r}f" for v in specials) + "};\n"
    program += ("  for (float f : specials) std::printf(\"%04x %04x\\n\", half_bits(f), "
                "bf16_bits(f));\n")
    program += "  Buffer buffers[] = {" + ", ".join(
        f'{{"b", {COMPONENTS[kind].code}, {components}, {count}ull, true, {float(low)!r}, '
        f'{float(high)!r}, {seed}ull, false}}'
        for kind, components, count, low, high, seed in buffers) + "};\n"
    program += ("  for (const Buffer& b : buffers) {\n    std::vector<unsigned char> host;\n"
                "    fill(b, host);\n    for (unsigned char c : host) std::printf(\"%02x\", c);\n"
                "    std::printf(\"\\n\");\n  }\n}\n")
    (tmp_path / "host.cpp").write_text(program)
    subprocess.run([compiler, "-std=c++17", "-O2", "-o", str(tmp_path / "host"),
                    str(tmp_path / "host.cpp")], check=True, capture_output=True)
    lines = subprocess.run([str(tmp_path / "host")], check=True, capture_output=True,
                           text=True).stdout.splitlines()
    for value, line in zip(specials, lines):
        half, bf16 = (int(word, 16) for word in line.split())
        single = np.float32(value)
        with np.errstate(over="ignore"):  # 1e5 is past binary16's range: infinity
            assert half == int(single.astype(np.float16).view(np.uint16)), value
        assert bf16 == nearest_bf16(float(single)), value
    for (kind, components, count, low, high, seed), line in zip(buffers, lines[len(specials):]):
        assert bytes.fromhex(line) == expected_fill(kind, components * count, low, high, seed), kind


def test_hip_side_spells_template_arguments_and_inits_as_the_conversion():
    from migrator.harness.render import hip_spelling
    from migrator.settings import Settings
    from migrator.versions import parse_version

    document = spec_of(Kernel("k", "k", "k.cu", 1, ("typename T", "int B"),
                              (Parameter("v", "T", "__nv_bfloat16", "struct", element_size=2),),
                              (Instantiation(("__nv_bfloat16", "256"), (Parameter(
                                  "v", "T", "__nv_bfloat16", "struct", element_size=2),)),)))
    document.pop("needs_edit")
    document["parameters"][0]["init"] = "__float2bfloat16(1.5f)"
    spec = spec_from(document, "k")
    new = hip_spelling(spec, Settings(rocm=parse_version("6.4")))
    assert new.template_arguments == ("__hip_bfloat16", "256")
    assert new.parameters[0].init == "__float2bfloat16(1.5f)"
    old = hip_spelling(spec, Settings(rocm=parse_version("5.2")))
    assert old.template_arguments == ("hip_bfloat16", "256")
    assert old.parameters[0].init == "hip_bfloat16(1.5f)"
    assert "k<hip_bfloat16, 256><<<" in render_harness(old, "hip", "k.cu", includes_main=False)
    assert spec.template_arguments == ("__nv_bfloat16", "256")  # the CUDA side keeps its spelling


def test_failed_compile_shows_its_errors_before_the_warnings():
    from migrator.harness.run import TAIL, compiler_errors

    output = "a.cu:3:1: error: no viable overloaded '+='\n" + "a.cu:9: warning: unused\n" * 500
    shown = compiler_errors(output)
    assert shown.startswith("[rocmigrate] the first errors:\na.cu:3:1: error: no viable")
    assert shown.endswith("warning: unused\n") and len(shown) < TAIL + 200
    assert compiler_errors("x.cu:1: error: bad\n") == "x.cu:1: error: bad\n"


def test_block_size_template_argument_sets_the_default_block():
    parameters = (pointer("out", written=True), scalar("n"))
    templated = Kernel("reduce", "reduce", "k.cu", 1, ("typename T", "int NUM_THREADS"),
                       parameters, (Instantiation(("float", "64"), parameters),))
    document = spec_of(templated)
    assert document["launch"]["block"] == [64, 1, 1]
    assert document["launch"]["grid"] == [(1 << 20) // 64, 1, 1]
    assert "NUM_THREADS = 64" in document["launch"]["origin"]


def test_output_inside_the_source_is_refused(tmp_path: Path):
    from migrator.harness import HarnessError

    (tmp_path / "k.cu").write_text(SAXPY_HOST)
    with pytest.raises(HarnessError, match="inside the source folder"):
        harness(HarnessOptions(tmp_path, tmp_path / "harness"))
    assert not (tmp_path / "harness").exists()


def test_compile_passes_build_flags_and_relinks_without_unused_code(tmp_path: Path):
    """A script stands in for the compiler: it records its arguments, and fails the first link
    with an undefined reference, as a kernel file calling into other files does."""
    import sys

    from migrator.toolchain.sides import Toolchain
    from migrator.harness.run import compile_harness

    compiler = tmp_path / "nvcc"
    compiler.write_text(f"""#!{sys.executable}
import sys
from pathlib import Path
calls = Path({str(tmp_path / 'calls')!r})
calls.write_text((calls.read_text() if calls.exists() else "") + " ".join(sys.argv[1:]) + "\\n")
if "--gc-sections" not in sys.argv:
    sys.exit("main.cu:(.text+0x2da): undefined reference to `OptionParser::get()'")
Path(sys.argv[sys.argv.index("-o") + 1]).write_text("binary")
""")
    compiler.chmod(0o755)
    toolchain = Toolchain("nvcc", str(compiler), "test", "test", ("-arch=sm_90",), "cu")
    (tmp_path / "h.cu").write_text("")
    build = compile_harness(toolchain, tmp_path / "h.cu", tmp_path / "bin" / "h", tmp_path,
                            (), ("-DUSE_FLOAT", "--expt-relaxed-constexpr"))
    first, second = (tmp_path / "calls").read_text().splitlines()
    assert first.endswith("h.cu -DUSE_FLOAT --expt-relaxed-constexpr")
    assert second.endswith("-DUSE_FLOAT --expt-relaxed-constexpr -Xcompiler "
                           "-ffunction-sections,-fdata-sections -Xlinker --gc-sections")
    assert build.ok and "linked without the unused host code" in build.output_tail


def test_a_file_builds_once_per_side_and_its_harnesses_alone_when_together_it_fails(
        tmp_path: Path):
    """main.cu has two harnesses, one of them a spec whose init does not compile: its one
    binary per side fails, so each harness is built alone, and only the bad one fails;
    other.cu's single harness builds from its own source. A script stands in for the
    compilers."""
    import sys

    from migrator.toolchain.sides import Toolchain
    from migrator.harness.run import HarnessOutcome, build, render

    compiler = tmp_path / "compiler"
    compiler.write_text(f"""#!{sys.executable}
import sys
from pathlib import Path
source = Path(sys.argv[sys.argv.index("-o") + 2])
with open({str(tmp_path / 'calls')!r}, "a") as calls:
    calls.write(source.relative_to({str(tmp_path / 'out')!r}).as_posix() + "\\n")
if "rocmigrate_undeclared" in source.read_text():
    sys.exit(source.name + ": error: use of undeclared identifier 'rocmigrate_undeclared'")
Path(sys.argv[sys.argv.index("-o") + 1]).write_text("binary")
""")
    compiler.chmod(0o755)
    source, out = tmp_path / "src", tmp_path / "out"
    source.mkdir()
    for name in ("main.cu", "other.cu"):
        (source / name).write_text(SAXPY_HOST)
    outcomes = []
    for spec, init in (("main/saxpy", ""), ("main/saxpy-2", "rocmigrate_undeclared"),
                       ("other/saxpy", "")):
        document = spec_of(SAXPY, SAXPY_HOST)
        if init:
            document["parameters"][0]["init"] = init
        write_spec(out / f"{spec}.toml", document, force=False)
        outcome = HarnessOutcome(spec.rsplit("/")[-1], "saxpy", spec.split("/")[0] + ".cu",
                                 f"{spec}.toml", "written", unit=spec.split("/")[0] + ".cu")
        outcome.loaded = load_spec(out / f"{spec}.toml")
        outcomes.append(outcome)
    options = HarnessOptions(source, out, jobs=1)
    render(outcomes, source, options, {"files": 2, "failed": []})
    toolchains = [Toolchain(side, str(compiler), "test", "test", (), "cu")
                  for side in ("cuda", "hip")]
    said: list[str] = []
    build(outcomes, source, options, *toolchains, said.append)
    calls = (tmp_path / "calls").read_text().split()
    assert sorted(calls[:4]) == ["main.cu.cuda.cu", "main.cu.hip.cpp", "other/saxpy.cuda.cu",
                                 "other/saxpy.hip.cpp"]  # one compile per file and side
    assert sorted(calls[4:]) == ["main/saxpy-2.cuda.cu", "main/saxpy-2.hip.cpp",
                                 "main/saxpy.cuda.cu", "main/saxpy.hip.cpp"]
    assert said[0].startswith("building 4 binaries for 3 harnesses")
    assert said[1] == "building 4 harnesses alone: their file's harnesses did not build together"
    good, bad, single = outcomes
    assert all(b.ok for b in good.builds.values()) and not any(b.ok for b in bad.builds.values())
    assert good.binaries == {"cuda": "build/main/saxpy.cuda", "hip": "build/main/saxpy.hip"}
    assert good.builds["cuda"].output_tail.startswith(
        "[rocmigrate] built alone: the harnesses of main.cu did not build together")
    assert "undeclared identifier" in bad.builds["hip"].output_tail
    assert single.binaries == {"cuda": "build/other/saxpy.cuda", "hip": "build/other/saxpy.hip"}
    assert single.builds["cuda"].output_tail == ""
    unit = (out / "main.cu.cuda.cu").read_text()
    assert '{"main/saxpy", rocmigrate_harness_1}' in unit
    assert '{"main/saxpy-2", rocmigrate_harness_2}' in unit
    # both build together once the spec is right: one binary per side for the two
    (tmp_path / "calls").unlink()
    for outcome in outcomes:
        outcome.builds, outcome.binaries = {}, {}
    document = spec_of(SAXPY, SAXPY_HOST)
    write_spec(out / "main/saxpy-2.toml", document, force=True)
    bad.loaded = load_spec(out / "main/saxpy-2.toml")
    render(outcomes, source, options, {"files": 2, "failed": []})
    build(outcomes, source, options, *toolchains, said.append)
    assert len((tmp_path / "calls").read_text().split()) == 4
    assert good.binaries == bad.binaries == {"cuda": "build/main.cu.cuda",
                                             "hip": "build/main.cu.hip"}
    assert good.builds["cuda"] is bad.builds["cuda"] and good.builds["cuda"].ok


def test_compile_commands_flags_build_both_sides(tmp_path: Path):
    """The kernel file's entry in --compile-commands, read as the kernel reader reads it: its
    include folders (relative ones against the entry's directory), defines, undefines, standard
    and forced includes reach both sides' compiles, after the source (so after the tree's own
    include folder) and before --build-flag; on the HIP side a folder or file of the source
    tree is its converted twin under hip-src, anything else stays as given."""
    import json
    import sys

    from migrator.toolchain.sides import Toolchain
    from migrator.harness.run import HarnessOutcome, build, render, unit_flags

    source, out = tmp_path / "src", tmp_path / "out"
    for folder in (source / "include", out / "hip-src" / "include"):
        folder.mkdir(parents=True)
    (source / "main.cu").write_text(SAXPY_HOST)
    (source / "pre.h").write_text("")
    (out / "hip-src" / "pre.h").write_text("")  # as the conversion leaves them
    commands = tmp_path / "compile_commands.json"
    commands.write_text(json.dumps([{"directory": str(source), "file": "main.cu", "arguments": [
        "nvcc", "-Iinclude", "-I", "/opt/elsewhere", "-DSCALE=3", "-UNDEBUG", "--std=c++14",
        "-include", "pre.h", "-O2", "-c", "main.cu"]}]))
    options = HarnessOptions(source, out, compile_commands=commands, build_flags=("-DUSER",))
    common = ("-I", "/opt/elsewhere", "-D", "SCALE=3", "-U", "NDEBUG", "-std=c++14", "-include")
    flags = unit_flags(source, "main.cu", options)
    assert flags == {"cuda": ("-I", f"{source}/include", *common, f"{source}/pre.h"),
                     "hip": ("-I", f"{out}/hip-src/include", *common, f"{out}/hip-src/pre.h")}
    assert unit_flags(source, "other.cu", options) == {"cuda": (), "hip": ()}  # no entry
    compiler = tmp_path / "compiler"
    compiler.write_text(f"""#!{sys.executable}
import sys
from pathlib import Path
Path(sys.argv[sys.argv.index("-o") + 1]).write_text("binary")
""")
    compiler.chmod(0o755)
    write_spec(out / "main" / "saxpy.toml", spec_of(SAXPY, SAXPY_HOST), force=False)
    outcome = HarnessOutcome("saxpy", "saxpy", "main.cu", "main/saxpy.toml", "written",
                             unit="main.cu")
    outcome.loaded = load_spec(out / "main" / "saxpy.toml")
    render([outcome], source, options, {"files": 1, "failed": []})
    build([outcome], source, options, *(Toolchain(side, str(compiler), "test", "test", (), "cu")
                                         for side in ("cuda", "hip")), lambda line: None)
    cuda, hip = (outcome.builds[side].command for side in ("cuda", "hip"))
    assert f"-I {source} -x cu" in cuda and f"-I {out}/hip-src -x cu" in hip
    assert cuda.endswith(f"main/saxpy.cuda.cu {' '.join(flags['cuda'])} -DUSER")
    assert hip.endswith(f"main/saxpy.hip.cpp {' '.join(flags['hip'])} -DUSER")


def test_explicit_specialization_needs_its_template_arguments(tmp_path: Path, monkeypatch):
    import migrator.clang.kernels as front_end
    from migrator.harness.run import generate

    parameters = (pointer("out", written=True), scalar("n"))
    primary = Kernel("fill", "fill", "k.cu", 2, ("typename T",), parameters,
                     (Instantiation(("float",), parameters),))
    special = Kernel("fill", "fill", "k.cu", 9, (), parameters, (Instantiation((), parameters),))
    monkeypatch.setattr(front_end, "read_kernels", fake_reader({"k.cu": [primary, special]}))
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "k.cu").write_text("")
    outcomes, _ = generate(HarnessOptions(tmp_path / "src", tmp_path / "out"), lambda line: None)
    assert [(o.name, bool(o.needs_edit)) for o in outcomes] == [("fill-1", False), ("fill-2", True)]
    assert "explicit specialization" in outcomes[1].needs_edit


def test_site_block_with_an_unknown_grid():
    site = Launch("k.cu", 4, (), "(n + 63) / 64", "64", "", "", ("x", "n"))
    document = spec_of(kernel("k", (pointer("x", written=True), scalar("n")), (site,)),
                       "void f(float* x, int n) { k<<<(n + 63) / 64, 64>>>(x, n); }")
    assert document["launch"]["block"] == [64, 1, 1]
    assert document["launch"]["grid"] == [(1 << 20) // 64, 1, 1]  # covering the default size
    assert "block 64; its grid ((n + 63) / 64) unknown" in document["launch"]["origin"]
    image = Launch("k.cu", 4, (), "grid", "dim3(16, 8)", "", "", ("p", "w", "h"))
    document = spec_of(kernel("k", (pointer("p", written=True), scalar("width"),
                                    scalar("height")), (image,)))
    assert document["launch"]["grid"] == [64, 128, 1] and document["launch"]["block"] == [16, 8, 1]


def test_specs_of_the_kernel_library_fixtures(tmp_path: Path):
    """fixtures/kernel_libraries (the front end's fixtures) as the harness reads them: a struct
    by value of arithmetic members gets a default init, a struct of float arrays is filled as components, a block-size
    template argument and a launch site's constants give the launch."""
    _front_end_or_skip()
    from migrator.harness.run import generate

    outcomes, _ = generate(HarnessOptions(ROOT / "fixtures" / "kernel_libraries", tmp_path),
                           lambda line: None)
    specs = {o.spec: o for o in outcomes}
    # a struct of arithmetic members by value gets a default init; a pointer to a struct of
    # mixed members (Pair) still needs an edit
    apply_spec = tomllib.loads((tmp_path / "structs" / "apply.toml").read_text())
    assert parameter(apply_spec, "p")["init"] == (
        "[] { Params v{}; v.scale = 0.5; v.offset = 1; v.bias = 0.5; return v; }()")
    assert "Params" not in specs["structs/apply.toml"].needs_edit
    assert "parameter pairs points to Pair" in specs["structs/apply.toml"].needs_edit
    lanes = specs["structs/lanes.toml"].loaded
    assert [(p.component, p.components) for p in lanes.parameters[:2]] == [("f32", 8)] * 2
    scale_add = next(o.loaded for o in outcomes if o.loaded is not None
                     and o.loaded.template_arguments == ("float", "64"))
    assert scale_add.block == (64, 1, 1)
    reduce = next(o.loaded for o in outcomes if o.loaded is not None
                  and o.loaded.template_arguments == ("float",) and "block_reduce" in o.kernel)
    assert (reduce.grid, reduce.block, reduce.shared_bytes) == ((4, 1, 1), (128, 1, 1), 512)


def test_a_sub_microsecond_difference_in_a_short_kernel_is_noise():
    """Two binaries of one kernel (PTX identical) on an H200: 7.1 against 7.9 us a launch, the
    interval clear of 1.02 (HeCBench gd): under LAUNCH_RESOLUTION_MS, noise; the same 11% on
    a 71 us kernel is slower."""
    from migrator.harness.run import LAUNCH_RESOLUTION_MS, timing_verdict

    def runs(ms: float) -> list[list[float]]:
        return [[ms * (1 + 0.003 * ((run + i) % 4)) for i in range(20)] for run in range(7)]

    short = timing_verdict(runs(0.0071), runs(0.0079), 0.02)
    assert short.interval[0] > 1.05 and short.flag == "noise"
    assert short.threshold == pytest.approx(1 + LAUNCH_RESOLUTION_MS / short.original_ms)
    assert timing_verdict(runs(0.071), runs(0.079), 0.02).flag == "slower"
    assert timing_verdict(runs(0.0079), runs(0.0071), 0.02).flag == "noise"  # nor faster


def test_a_kernel_file_that_does_not_compile_is_not_built_again_per_harness():
    """The combined build of a file's harnesses fails inside the file itself (a missing header):
    building each harness alone would repeat it; an error in a harness source, or an
    instantiation a harness asks for, may be one spec's doing: those are built alone."""
    from migrator.harness.run import errors_in

    own = ("In file included from /o/kernels/AESEncrypt.cuda.cu:222:\n"
           "/s/aes-cuda/main.cu:7:10: fatal error: SDKBitMap.h: No such file or directory\n")
    assert not errors_in(own, "main.cu.cuda.cu") and not errors_in(own, "AESEncrypt.cuda.cu")
    nvcc = '/s/lib.cu(30): error: no operator "+" matches these operands\n'
    assert not errors_in(nvcc, "lib.cu.cuda.cu")
    instantiated = nvcc + ('          detected during instantiation of "void k<T>(T *) [with '
                           'T=Pair]" at line 120 of /o/lib.cu.cuda.cu\n')
    assert errors_in(instantiated, "lib.cu.cuda.cu")
    assert errors_in("/o/lib.cu.hip.cpp:98:3: error: use of undeclared identifier 'x'\n",
                     "lib.cu.hip.cpp")
    assert errors_in("collect2: error: ld returned 1 exit status\n", "lib.cu.cuda.cu")


def test_a_broken_kernel_file_is_compiled_once_per_side(tmp_path: Path):
    """main.cu itself does not compile: its two harnesses share the failure of the one
    combined compile per side, with a note, rather than two more compiles each."""
    import sys

    from migrator.toolchain.sides import Toolchain
    from migrator.harness.run import HarnessOutcome, build, render

    compiler = tmp_path / "compiler"
    compiler.write_text(f"""#!{sys.executable}
import sys
from pathlib import Path
with open({str(tmp_path / 'calls')!r}, "a") as calls:
    calls.write(sys.argv[sys.argv.index("-o") + 2] + "\\n")
sys.exit("In file included from x.cuda.cu:9:\\n/src/main.cu:3:1: error: broken")
""")
    compiler.chmod(0o755)
    source, out = tmp_path / "src", tmp_path / "out"
    source.mkdir()
    (source / "main.cu").write_text(SAXPY_HOST)
    outcomes = []
    for spec in ("main/saxpy", "main/saxpy-2"):
        write_spec(out / f"{spec}.toml", spec_of(SAXPY, SAXPY_HOST), force=False)
        outcome = HarnessOutcome(spec.rsplit("/")[-1], "saxpy", "main.cu", f"{spec}.toml",
                                 "written", unit="main.cu")
        outcome.loaded = load_spec(out / f"{spec}.toml")
        outcomes.append(outcome)
    options = HarnessOptions(source, out, jobs=1)
    render(outcomes, source, options, {"files": 1, "failed": []})
    build(outcomes, source, options, *[Toolchain(side, str(compiler), "t", "t", (), "cu")
                                       for side in ("cuda", "hip")], lambda line: None)
    assert len((tmp_path / "calls").read_text().split()) == 2
    for outcome in outcomes:
        assert not any(b.ok for b in outcome.builds.values())
        assert outcome.builds["cuda"].output_tail.startswith(
            "[rocmigrate] not built alone: the errors are in main.cu itself")
