"""The libclang kernel front end (migrator.clang.kernels): resolved types, qualifiers, which
pointers a kernel writes, launch sites, and the tree-sitter fallback with its reasons."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import ROOT, require, require_path
from migrator.clang import ReadOptions, find_resource_dir, read_kernels
from migrator.clang.kernels import clang_arguments

LIBRARIES = ROOT / "fixtures" / "kernel_libraries"


def _clang_ready() -> None:
    try:
        import clang.cindex  # noqa: F401
    except ImportError:
        require(False, "the libclang wheel")
    require(find_resource_dir() is not None, "clang's builtin headers")


def _kernel(reading, name):
    found = [kernel for kernel in reading.kernels if kernel.name == name]
    assert len(found) == 1, [kernel.name for kernel in reading.kernels]
    return found[0]


def _instantiation(kernel, *arguments):
    found = [i for i in kernel.instantiations if i.template_arguments == arguments]
    assert len(found) == 1, [i.template_arguments for i in kernel.instantiations]
    return found[0]


def _parameters(parameters):
    return {parameter.name: parameter for parameter in parameters}


@pytest.fixture(scope="module")
def templates():
    _clang_ready()
    return read_kernels(LIBRARIES / "templates.cu")


def test_template_kernels_resolve_per_instantiation(templates):
    kernel = _kernel(templates, "scale_add")
    assert kernel.reader == "clang" and kernel.note == ""
    assert kernel.qualified_name == "blas::detail::scale_add"
    assert kernel.template_parameters == ("typename T", "int BLOCK")
    declared = _parameters(kernel.parameters)
    assert declared["x"].written == "const T *__restrict__"
    assert declared["x"].type == "const T *" and declared["x"].element_size == 0
    assert declared["n"].written == "index_t" and declared["n"].type == "long long"
    assert {i.template_arguments for i in kernel.instantiations} == {
        ("float", "256"), ("double", "128"), ("float", "64"), ("float", "32")}
    doubles = _parameters(_instantiation(kernel, "double", "128").parameters)
    assert (doubles["x"].type, doubles["x"].element, doubles["x"].element_size) == \
        ("const double *", "double", 8)
    assert doubles["x"].const and doubles["x"].restrict and not doubles["x"].written_to
    assert doubles["y"].type == "double *" and doubles["y"].restrict
    assert doubles["y"].written_to and doubles["y"].read_from  # y[i] += ...
    assert (doubles["alpha"].kind, doubles["alpha"].type, doubles["alpha"].element_size) == \
        ("scalar", "double", 8)
    floats = _parameters(_instantiation(kernel, "float", "256").parameters)
    assert floats["x"].element == "float" and floats["x"].element_size == 4


def test_launch_expressions_as_written(templates):
    kernel = _kernel(templates, "scale_add")
    (launch,) = _instantiation(kernel, "float", "256").launches
    assert (launch.line, launch.grid, launch.block, launch.shared_bytes, launch.stream) == \
        (71, "(n + 255) / 256", "256", "0", "stream")
    assert launch.arguments == ("dx", "dy", "2.0f", "n")
    (launch,) = _instantiation(kernel, "double", "128").launches
    assert (launch.grid, launch.block, launch.shared_bytes, launch.stream) == \
        ("dim3((n + 127) / 128)", "dim3(128)", "", "")


def test_hip_launch_macro_launches(templates):
    (launch,) = _instantiation(_kernel(templates, "scale_add"), "float", "32").launches
    assert (launch.line, launch.grid, launch.block, launch.shared_bytes, launch.stream) == \
        (79, "dim3(n / 32)", "dim3(32)", "0", "stream")
    assert launch.arguments == ("dx", "dy", "3.0f", "n")
    launches = _kernel(templates, "copy_alias").instantiations[0].launches
    assert [(launch.line, launch.grid, launch.arguments) for launch in launches] == \
        [(74, "1", ("dx", "dy", "n")), (81, "dim3(1)", ("dx", "dy", "n"))]


def test_a_launch_inside_a_host_template_is_resolved_where_the_file_instantiates_it(templates):
    (launch,) = _instantiation(_kernel(templates, "scale_add"), "float", "64").launches
    assert (launch.line, launch.grid, launch.block) == (59, "(n + 63) / 64", "64")
    assert launch.arguments == ("x", "y", "T(1)", "n")  # as written in the template
    kernel = _kernel(templates, "block_reduce")  # reduce_later<T> is never instantiated
    assert "launch at line 64 depends on the parameters of the template around it" in \
        kernel.note
    assert kernel.reader == "clang"


def test_an_instantiation_resolves_what_its_template_leaves_dependent(templates):
    kernel = _kernel(templates, "scaled_copy")
    assert _parameters(kernel.parameters)["in"].written_to  # load_value(in, i): unresolved
    (instantiation,) = kernel.instantiations
    assert instantiation.template_arguments == ("float",)  # deduced at the launch
    parameters = _parameters(instantiation.parameters)
    assert not parameters["in"].written_to and parameters["in"].read_from
    assert parameters["out"].written_to and not parameters["out"].read_from


def test_dynamic_shared_memory_and_explicit_instantiation(templates):
    kernel = _kernel(templates, "block_reduce")
    assert kernel.dynamic_shared and kernel.qualified_name == "blas::block_reduce"
    (launch,) = _instantiation(kernel, "float").launches
    assert launch.shared_bytes == "128 * sizeof(float)"
    explicit = _instantiation(kernel, "int")  # template __global__ void block_reduce<int>
    assert explicit.launches == ()
    ints = _parameters(explicit.parameters)
    assert ints["in"].type == "const int *" and ints["in"].const
    # written only through a local pointer into shared memory, and at out[blockIdx.x]
    assert ints["out"].written_to and not ints["out"].read_from
    assert not _kernel(templates, "scale_add").dynamic_shared


def test_aliased_parameter_types(templates):
    kernel = _kernel(templates, "copy_alias")
    (instantiation,) = kernel.instantiations
    assert instantiation.template_arguments == () and instantiation.parameters == \
        kernel.parameters
    parameters = _parameters(kernel.parameters)
    assert (parameters["source"].written, parameters["source"].type) == \
        ("cfloat_ptr", "const float *")
    assert parameters["source"].const and not parameters["source"].written_to
    assert (parameters["destination"].written, parameters["destination"].type) == \
        ("real_t *", "float *")
    assert parameters["destination"].written_to and not parameters["destination"].read_from
    assert parameters["count"].kind == "scalar" and parameters["count"].element_size == 8


def test_writes_through_calls_atomics_members_and_aliases():
    _clang_ready()
    kernel = _kernel(read_kernels(LIBRARIES / "structs.cu"), "apply")
    assert kernel.reader == "clang", kernel.note
    parameters = _parameters(kernel.parameters)
    assert (parameters["p"].kind, parameters["p"].type, parameters["p"].element_size) == \
        ("struct", "Params", 16)
    written = {name for name, parameter in parameters.items() if parameter.written_to}
    # store(&via_device[i], ...) writes through its pointer; peek(float *) only reads;
    # atomicAdd(&counter[0]); pairs->key = i; float *row = aliased + ...; *row = 0
    assert written == {"out", "via_device", "counter", "pairs", "aliased"}
    assert parameters["only_read"].read_from and not parameters["only_read"].const
    assert parameters["counter"].read_from  # an atomic reads too
    assert not parameters["out"].read_from
    assert parameters["pairs"].element == "Pair" and parameters["pairs"].element_size == 8
    assert [(f.name, f.type, f.offset, f.size) for f in parameters["p"].fields] == \
        [("scale", "float", 0, 4), ("offset", "int", 4, 4), ("bias", "double", 8, 8)]
    assert [(f.name, f.type, f.offset) for f in parameters["pairs"].fields] == \
        [("key", "int", 0), ("value", "float", 4)]
    assert parameters["out"].fields == ()


def test_a_parameters_own_qualifiers_are_not_in_its_type():
    _clang_ready()
    kernel = _kernel(read_kernels(LIBRARIES / "structs.cu"), "qualified")
    parameters = _parameters(kernel.parameters)
    assert (parameters["out"].written, parameters["out"].type) == ("float *const", "float *")
    assert (parameters["count"].written, parameters["count"].type) == ("const int", "int")
    flags = parameters["flags"]
    assert (flags.type, flags.element, flags.element_size) == \
        ("volatile unsigned int *", "unsigned int", 4)
    assert flags.written_to and not flags.const


def test_device_code_may_call_the_c_library():
    _clang_ready()
    kernel = _kernel(read_kernels(LIBRARIES / "structs.cu"), "debug_copy")
    assert (kernel.reader, kernel.note) == ("clang", "")
    parameters = _parameters(kernel.parameters)
    assert parameters["out"].written_to and not parameters["in"].written_to


def test_writes_spelt_through_macros():
    _clang_ready()
    kernel = _kernel(read_kernels(LIBRARIES / "structs.cu"), "through_macros")
    parameters = _parameters(kernel.parameters)
    assert parameters["stored"].written_to and not parameters["stored"].read_from
    assert parameters["bumped"].written_to and parameters["bumped"].read_from
    assert not parameters["in"].written_to


def test_writes_into_array_members_and_inside_nested_calls():
    _clang_ready()
    kernel = _kernel(read_kernels(LIBRARIES / "structs.cu"), "lanes")
    parameters = _parameters(kernel.parameters)
    assert parameters["out"].written_to and parameters["out"].read_from  # out->s0[i] += ...
    assert (parameters["out"].element, parameters["out"].element_size) == ("Lanes", 32)
    assert parameters["in"].const and not parameters["in"].written_to
    assert parameters["tallies"].written_to  # tally(): int previous = atomicAdd(slot, n)


def test_a_missing_header_sends_back_only_the_kernels_that_need_it():
    _clang_ready()
    reading = read_kernels(LIBRARIES / "missing_header.cu")
    kernel = _kernel(reading, "accumulate")
    assert kernel.reader == "tree-sitter"
    assert "not_shipped/library_types.h" in kernel.note and "not found" in kernel.note
    parameters = _parameters(kernel.parameters)
    assert (parameters["in"].written, parameters["in"].element, parameters["in"].const) == \
        ("const library_real *", "library_real", True)
    assert parameters["out"].written_to and not parameters["in"].written_to
    assert parameters["n"].kind == "scalar" and parameters["n"].element_size == 4
    kernel = _kernel(reading, "fill")  # needs nothing of the missing header
    assert (kernel.reader, kernel.note) == ("clang", "")
    assert _parameters(kernel.parameters)["out"].type == "double *"
    assert "read without the headers it includes that are not found: " \
        "not_shipped/library_types.h, ../elsewhere/more_types.h" in reading.notes


def test_a_file_another_one_includes_is_read_as_part_of_it():
    _clang_ready()
    folder = LIBRARIES / "included"
    reading = read_kernels(folder / "kernels.cu")
    assert reading.notes == ["read as part of main.cu, which includes it"]
    compress, gather = _kernel(reading, "compress"), _kernel(reading, "gather")
    assert (compress.reader, compress.note, compress.file) == \
        ("clang", "", str(folder / "kernels.cu"))
    parameters = _parameters(compress.parameters)
    assert (parameters["image"].written, parameters["image"].type) == ("fp *", "double *")
    (launch,) = compress.instantiations[0].launches
    assert (launch.file, launch.line, launch.grid, launch.block) == \
        (str(folder / "main.cu"), 10, "(n + BLOCK - 1) / BLOCK", "BLOCK")
    (instantiation,) = gather.instantiations
    assert instantiation.template_arguments == ("2",)
    assert _parameters(instantiation.parameters)["out"].element_size == 8
    assert instantiation.launches[0].grid == "n / (2 * BLOCK)"
    alone = read_kernels(folder / "kernels.cu", ReadOptions(through_includer=False))
    assert all(kernel.reader == "tree-sitter" and "'fp'" in kernel.note
               for kernel in alone.kernels)
    assert read_kernels(folder / "main.cu").kernels == []


def test_only_the_active_branch_of_an_if_is_clangs():
    _clang_ready()
    path = LIBRARIES / "conditional.cu"
    reading = read_kernels(path)
    legacy = _kernel(reading, "legacy_fill")
    assert legacy.reader == "tree-sitter" and "inactive #if branch" in legacy.note
    assert _parameters(_kernel(reading, "scale").parameters)["data"].type == "float *"
    defined = read_kernels(path, ReadOptions(defines=("USE_DOUBLE", "WITH_LEGACY_KERNELS")))
    assert [(kernel.name, kernel.reader) for kernel in defined.kernels] == \
        [("scale", "clang"), ("legacy_fill", "clang")]
    assert _parameters(_kernel(defined, "scale").parameters)["data"].element_size == 8


def test_an_error_inside_one_kernel_only_sends_that_one_back():
    _clang_ready()
    reading = read_kernels(LIBRARIES / "broken.cu")
    good, bad = _kernel(reading, "good"), _kernel(reading, "bad")
    assert good.reader == "clang" and good.note == ""
    assert bad.reader == "tree-sitter" and "undeclared_type" in bad.note
    assert any("undeclared_type" in note for note in reading.notes)


def test_without_libclang_every_kernel_says_why(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_clang(name, *args, **kwargs):
        if name.startswith("clang"):
            raise ImportError("No module named 'clang'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_clang)
    reading = read_kernels(LIBRARIES / "templates.cu")
    assert [kernel.name for kernel in reading.kernels] == ["scale_add", "block_reduce",
                                                           "scaled_copy", "copy_alias"]
    assert all(kernel.reader == "tree-sitter" and "libclang is not installed" in kernel.note
               for kernel in reading.kernels)
    kernel = _kernel(reading, "scale_add")  # tree-sitter: launches as written, none in a template
    assert {i.template_arguments for i in kernel.instantiations} == {
        ("float", "256"), ("double", "128"), ("float", "32")}
    doubles = _parameters(_instantiation(kernel, "double", "128").parameters)
    assert (doubles["x"].type, doubles["x"].element, doubles["x"].const) == \
        ("const T *__restrict__", "T", True)  # types as written
    assert _kernel(reading, "block_reduce").dynamic_shared
    assert ("int",) in {i.template_arguments for i in _kernel(reading, "block_reduce")
                        .instantiations}


@pytest.mark.parametrize("name, content, expected", [
    ("binary.cu", None, "not a text file"),
    ("empty.cu", b"", None),
    ("missing.cu", "absent", "cannot read"),
    ("folder.cu", "folder", "cannot read"),
])
def test_bad_input_never_raises(tmp_path, name, content, expected):
    path = LIBRARIES / name if content is None else tmp_path / name
    if content == "folder":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    reading = read_kernels(path)
    assert reading.kernels == []
    if expected is None:
        assert reading.notes == []
    else:
        assert any(expected in note for note in reading.notes), reading.notes


def test_kernels_of_the_demo_corpus_are_read_by_clang():
    _clang_ready()
    files = sorted((ROOT / "kernels").glob("*.cu"))
    assert files
    for path in files:
        reading = read_kernels(path)
        assert len(reading.kernels) == path.read_text().count("__global__"), path.name
        for kernel in reading.kernels:
            assert (kernel.reader, kernel.note) == ("clang", ""), (path.name, kernel.name)
            assert kernel.instantiations and all(i.launches for i in kernel.instantiations), \
                (path.name, kernel.name)


def test_compile_commands_give_include_paths_and_defines(tmp_path):
    _clang_ready()
    include = tmp_path / "include"
    include.mkdir()
    (include / "precision.h").write_text("#ifdef USE_DOUBLE\ntypedef double real;\n#else\n"
                                         "typedef float real;\n#endif\n")
    source = tmp_path / "src" / "k.cu"
    source.parent.mkdir()
    source.write_text('#include "precision.h"\n__global__ void k(real *out) { *out = 1; }\n')
    commands = tmp_path / "compile_commands.json"
    commands.write_text(json.dumps([{
        "directory": str(tmp_path), "file": "src/k.cu",
        "command": "nvcc -arch=sm_90 -O3 -Iinclude -DUSE_DOUBLE --std=c++17 -c src/k.cu"}]))
    without = _kernel(read_kernels(source), "k")
    assert without.reader == "tree-sitter" and "precision.h" in without.note
    (parameter,) = _kernel(read_kernels(source, ReadOptions(compile_commands=commands)),
                           "k").parameters
    assert (parameter.type, parameter.element_size, parameter.written_to) == \
        ("double *", 8, True)
    flags = clang_arguments(source, ReadOptions(compile_commands=commands), None)
    assert "-arch=sm_90" not in flags and "-O3" not in flags
    assert flags.count("-std=c++17") == 1
    (parameter,) = _kernel(read_kernels(source, ReadOptions(include_paths=(include,))),
                           "k").parameters
    assert parameter.type == "float *"


def test_compile_command_flags_in_nvcc_and_gcc_spellings(tmp_path):
    source = tmp_path / "k.cu"
    commands = tmp_path / "compile_commands.json"
    commands.write_text(json.dumps([
        {"directory": str(tmp_path / "other"), "file": "k.cu", "arguments": ["nvcc", "-DWRONG"]},
        {"directory": str(tmp_path), "file": str(source), "arguments": [
            "nvcc", "--include-path=inc", "-isystem", "/opt/lib/include", "-I", "sub",
            "--define-macro=N=4", "-UNDEBUG", "-Xcompiler", "-fopenmp", "-gencode",
            "arch=compute_90,code=sm_90", "-std", "c++20", "-o", "k.o", "-c", "k.cu"]}]))
    flags = clang_arguments(source, ReadOptions(compile_commands=commands), None)
    kept = flags[flags.index("-std=c++20") - 10:flags.index("-std=c++20") + 1]
    assert kept == ["-I", str(tmp_path / "inc"), "-isystem", "/opt/lib/include",
                    "-I", str(tmp_path / "sub"), "-D", "N=4", "-U", "NDEBUG", "-std=c++20"]
    assert "-DWRONG" not in flags and "-fopenmp" not in flags and "-std=c++17" not in flags
    commands.write_text("not json")
    assert clang_arguments(source, ReadOptions(compile_commands=commands), None) == \
        clang_arguments(source, ReadOptions(), None)


def test_a_compile_command_database_without_the_file_says_so(tmp_path):
    _clang_ready()
    commands = tmp_path / "compile_commands.json"
    commands.write_text(json.dumps([{"directory": str(tmp_path), "file": "other.cu",
                                     "command": "nvcc -c other.cu"}]))
    reading = read_kernels(LIBRARIES / "structs.cu", ReadOptions(compile_commands=commands))
    assert any("has no entry for this file" in note for note in reading.notes)
    assert all(kernel.reader == "clang" for kernel in reading.kernels)


def test_a_real_toolkit_replaces_the_shipped_declarations(tmp_path):
    toolkit = tmp_path / "cuda" / "include"
    flags = clang_arguments(tmp_path / "k.cu", ReadOptions(cuda_include=toolkit), None)
    assert f"--cuda-path={toolkit.parent}" in flags and "-nocudainc" not in flags
    assert str(toolkit / "cccl") not in flags
    (toolkit / "cccl").mkdir(parents=True)  # CUDA 13 keeps cub/ and thrust/ there
    flags = clang_arguments(tmp_path / "k.cu", ReadOptions(cuda_include=toolkit), None)
    assert flags[flags.index(str(toolkit / "cccl")) - 1] == "-isystem"
    flags = clang_arguments(tmp_path / "k.cu", ReadOptions(cuda_include=toolkit), None)
    assert "cuda_runtime.h" not in flags  # clang's own CUDA wrapper includes the toolkit's
    shipped = clang_arguments(tmp_path / "k.cu", ReadOptions(), None)
    assert "-nocudainc" in shipped and shipped[-2:] == ["-include", "cuda_runtime.h"]
    declarations = Path(shipped[shipped.index("-isystem") + 1])
    assert (declarations / "cuda_runtime.h").is_file() and (declarations / "cuda_fp16.h").is_file()


def test_the_shipped_declarations_name_only_what_cuda_declares():
    """Every function, type and constant the shipped headers declare by a CUDA name is one
    CUDA 13's headers declare (hipLaunchKernelGGL and HIP_KERNEL_NAME are HIP's, on purpose)."""
    include = require_path(Path("/usr/local/cuda/include") / "cuda_runtime.h",
                           "the CUDA toolkit headers").parent
    cuda = "\n".join(path.read_text(errors="replace") for path in include.rglob("*.h*")
                     if path.is_file())
    cuda_names = set(re.findall(r"\w+", cuda))
    shipped = Path(clang_arguments(Path("k.cu"), ReadOptions(), None)[-3])
    declared = set()
    for header in shipped.glob("*.h"):
        text = re.sub(r"/\*.*?\*/", "", header.read_text(), flags=re.DOTALL)
        text = re.sub(r"#\s*(?:define|ifndef|endif|undef)[^\n]*", "", text)
        declared |= set(re.findall(r"\b(__[a-z]\w*|[a-z]\w*|cuda[A-Z]\w*)\s*\(", text))
        declared |= set(re.findall(r"\b(cuda[A-Z]\w*|CUDART_\w+)\b", text))
    declared -= {"sizeof", "return", "operator", "__attribute__", "aligned", "host", "device",
                 "defined", "if", "while", "for"}
    missing = sorted(name for name in declared if name not in cuda_names and
                     not name.startswith("ROCMIGRATE"))
    assert not missing
    assert len(declared) > 400


@pytest.mark.parametrize("name", ["atomics.cu", "reduction.cu", "vector_ops.cu"])
def test_the_real_toolkit_and_the_shipped_declarations_read_the_same(name):
    """With a CUDA toolkit (through clang's own CUDA wrapper headers, which read headers a newer
    toolkit no longer has as empty) the kernels read as with the shipped declarations; its
    atomics are builtins without PARM_DECLs, whose pointers are written all the same."""
    _clang_ready()
    include = require_path(Path("/usr/local/cuda/include") / "cuda_runtime.h",
                           "the CUDA toolkit headers").parent
    path = ROOT / "kernels" / name
    toolkit = read_kernels(path, ReadOptions(cuda_include=include)).kernels
    shipped = read_kernels(path).kernels
    assert [kernel.reader for kernel in toolkit] == ["clang"] * len(shipped)
    assert [(k.name, k.parameters, k.instantiations, k.dynamic_shared) for k in toolkit] == \
        [(k.name, k.parameters, k.instantiations, k.dynamic_shared) for k in shipped]
