"""The CMake rules (rules/build/cmake_*.py, CMK001-CMK017) together: every fixture and project
converges and a second conversion changes nothing; odd but valid scripts are converted, broken
ones never crash; the shared helpers."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from conftest import ROOT
from migrator import apitables, registry
from migrator.buildfiles import cmake, fix_build_file
from migrator.settings import Settings
from migrator.source import Source
from rules.build.cmake_common import remove_arguments, remove_command

CMAKE_RULES = [cls for cls in registry.all_rules() if "cmake" in cls.languages]
INPUTS = sorted(p for p in (ROOT / "fixtures" / "rules").glob("CMK*/*.cmake")
                if ".fixed." not in p.name) + sorted(
    (ROOT / "fixtures" / "build_projects").glob("*/CMakeLists.txt"))


def _convert(data: bytes, **settings) -> tuple[bytes, list]:
    settings.setdefault("offload_archs", ("gfx90a",))
    result = fix_build_file(Source("CMakeLists.txt", data), [cls() for cls in CMAKE_RULES],
                            Settings(**settings), apitables.load(), "cmake")
    return result.output, result.findings


def _codes(findings) -> list[str]:
    return sorted(finding.code for finding in findings)


def test_the_cmake_rules_are_the_build_family():
    codes = {code for cls in CMAKE_RULES for code in cls.codes()}
    assert {f"CMK{n:03d}" for n in range(1, 18)} <= codes
    assert all(cls.family == "build" for cls in CMAKE_RULES if cls.code.startswith("CMK"))


@pytest.mark.parametrize("rename", [False, True])
@pytest.mark.parametrize("path", INPUTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_all_rules_together_converge_and_a_second_pass_changes_nothing(path: Path, rename):
    output, _ = _convert(path.read_bytes(), rename_ext=rename)
    again, findings = _convert(output, rename_ext=rename)
    assert again == output
    assert not [f for f in findings if f.fixed]


def test_a_cuda_project_becomes_a_hip_project():
    data = (b"cmake_minimum_required(VERSION 3.18)\n"
            b"Project(demo LANGUAGES CXX CUDA)\n"
            b"find_package(CUDAToolkit REQUIRED)\n"
            b"set(CMAKE_CUDA_ARCHITECTURES 80)\n"
            b"SET(CMAKE_CUDA_FLAGS \"${CMAKE_CUDA_FLAGS} --use_fast_math\")\n"
            b"add_executable(demo main.cu)\n"
            b"target_link_libraries(demo PRIVATE CUDA::cublas)\n")
    output, findings = _convert(data)
    assert output == (b"cmake_minimum_required(VERSION 3.21)\n"
                      b"Project(demo LANGUAGES CXX HIP)\n"
                      b"find_package(hip REQUIRED)\n"
                      b"find_package(hipblas REQUIRED)\n"
                      b"set(CMAKE_HIP_ARCHITECTURES gfx90a)\n"
                      b"SET(CMAKE_HIP_FLAGS \"${CMAKE_HIP_FLAGS} -ffast-math\")\n"
                      b"add_executable(demo main.cu)\n"
                      b"set_source_files_properties(main.cu PROPERTIES LANGUAGE HIP)\n"
                      b"target_link_libraries(demo PRIVATE roc::hipblas)\n")
    assert _codes(f for f in findings if f.fixed) == [
        "CMK001", "CMK002", "CMK003", "CMK003", "CMK005", "CMK007", "CMK009", "CMK009", "CMK016"]


def test_comments_brackets_and_lines_inside_commands_are_kept():
    data = (b"project(x # the languages:\n"
            b"  LANGUAGES CXX\n"
            b"  CUDA)  # CUDA in a comment stays\n"
            b"#[[ enable_language(CUDA) ]]\n"
            b"message([==[ set(CMAKE_CUDA_STANDARD 14) ]==])\n"
            b"set(CMAKE_CUDA_STANDARD 14) # C++14\r\n")
    output, _ = _convert(data)
    assert output == (b"if(NOT DEFINED CMAKE_HIP_ARCHITECTURES)\r\n"  # no architecture chosen
                      b"  set(CMAKE_HIP_ARCHITECTURES gfx90a)\r\nendif()\r\n"
                      b"project(x # the languages:\n"
                      b"  LANGUAGES CXX\n"
                      b"  HIP)  # CUDA in a comment stays\n"
                      b"#[[ enable_language(CUDA) ]]\n"
                      b"message([==[ set(CMAKE_CUDA_STANDARD 14) ]==])\n"
                      b"set(CMAKE_HIP_STANDARD 14) # C++14\r\n")


def test_markers_are_written_once_and_listed_as_needing_attention():
    data = b"if(CUDA_VERSION VERSION_LESS 11)\n  set(CMAKE_CUDA_HOST_COMPILER g++-9)\nendif()\n"
    output, findings = _convert(data)
    assert output == (
        b"# rocmigrate CMK010: CUDA_VERSION: the CUDA version is no HIP version: test "
        b"hip_VERSION instead\n"
        b"if(CUDA_VERSION VERSION_LESS 11)\n"
        b"  # rocmigrate CMK004: CMAKE_CUDA_HOST_COMPILER: HIP has no separate host compiler "
        b"(ROCm's clang compiles host and device code): choose CMAKE_CXX_COMPILER or drop it\n"
        b"  set(CMAKE_CUDA_HOST_COMPILER g++-9)\nendif()\n")
    assert {(f.code, f.kind) for f in findings} == {("CMK010", "attention"),
                                                    ("CMK004", "attention")}
    assert _convert(data, write_markers=False)[0] == data  # lint: findings, no markers


@pytest.mark.parametrize("data", [
    b"", b"project(", b"project(x LANGUAGES CUDA", b"set(CMAKE_CUDA_FLAGS \"-G",
    b"target_link_libraries(x CUDA::)", b"set_target_properties(PROPERTIES)",
    b"set_target_properties(t PROPERTIES CUDA_ARCHITECTURES)", b"cuda_add_executable()",
    b"find_package()", b"list(APPEND)", b"string(APPEND CMAKE_CUDA_FLAGS)",
    b"add_executable(x ${})", b"file(GLOB)", b"set_property(TARGET t PROPERTY)",
    b"cmake_minimum_required(VERSION)", b"cmake_minimum_required(VERSION x.y)\nproject(a CUDA)",
    b"target_compile_options(t PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:)",
    b"target_compile_options(t PRIVATE \"$<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler>\")",
    "set(CMAKE_CUDA_FLAGS \"-O3 \u00e9\")".encode(), b"\xff\xfe(CUDA)\nproject(x CUDA)",
])
def test_broken_scripts_never_crash(data: bytes):
    output, _ = _convert(data)
    assert _convert(output)[0] == output


_LINES = [
    b"cmake_minimum_required(VERSION 3.16)", b"project(p LANGUAGES CXX CUDA)",
    b"project(q CUDA)", b"enable_language(CUDA)", b"find_package(CUDA REQUIRED)",
    b"find_package(CUDAToolkit)", b"set(CMAKE_CUDA_STANDARD 17)",
    b"set(CMAKE_CUDA_ARCHITECTURES 70;80)", b"set(CUDA_NVCC_FLAGS ${CUDA_NVCC_FLAGS};-O3;-G)",
    b"list(APPEND CUDA_NVCC_FLAGS -Xcompiler -fopenmp --expt-extended-lambda)",
    b"string(APPEND CMAKE_CUDA_FLAGS \" -lineinfo -Xptxas -v\")",
    b"add_executable(a a.cu b.cpp)", b"add_library(l STATIC l.cu)",
    b"cuda_add_executable(c c.cu OPTIONS -arch=sm_70 DEBUG -G)",
    b"cuda_add_library(d d.cu SHARED)", b"cuda_add_cublas_to_target(c)",
    b"set_target_properties(l PROPERTIES CUDA_SEPARABLE_COMPILATION ON CUDA_STANDARD 14)",
    b"set_property(TARGET a PROPERTY CUDA_ARCHITECTURES native)",
    b"target_link_libraries(a PRIVATE CUDA::cudart CUDA::curand -lcusparse l)",
    b"target_compile_options(a PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--use_fast_math;-G>)",
    b"include_directories(${CUDA_INCLUDE_DIRS})", b"if(CUDA_FOUND)", b"endif()",
    b"file(GLOB K src/*.cu)", b"add_executable(k ${K})", b"set(CUDA_SEPARABLE_COMPILATION ON)",
    b"message(STATUS \"${CUDA_VERSION} ${CMAKE_CUDA_COMPILER_ID}\")", b"# a comment",
    b"  target_sources(a PRIVATE extra.cu)",
]


@pytest.mark.parametrize("seed", range(40))
def test_random_scripts_converge_and_are_idempotent(seed: int):
    chooser = random.Random(seed)
    data = b"\n".join(chooser.choice(_LINES) for _ in range(chooser.randint(3, 14))) + b"\n"
    for rename in (False, True):
        output, _ = _convert(data, rename_ext=rename, offload_archs=("gfx90a", "gfx942"))
        assert _convert(output, rename_ext=rename, offload_archs=("gfx90a", "gfx942"))[0] \
            == output, data
        for command in cmake.read(output).commands:
            assert output[: command.end].endswith(b")") or command.end == len(output)


def _arguments(data: bytes, *indexes: int):
    command = cmake.read(data).commands[0]
    return [command.args[i] for i in indexes]


@pytest.mark.parametrize("data, indexes, expected", [
    (b"f(a b c)", (1,), b"f(a c)"),
    (b"f(a b c)", (0,), b"f(b c)"),
    (b"f(a b c)", (1, 2), b"f(a)"),
    (b"f(a\n  b c\n  d)", (1, 2), b"f(a\n  d)"),
    (b"f(a\n  b # note\n  d)", (1,), b"f(a\n  # note\n  d)"),
    (b"f(a\n  b\n)", (1,), b"f(a\n)"),
])
def test_remove_arguments(data, indexes, expected):
    edits = remove_arguments(data, _arguments(data, *indexes))
    for edit in sorted(edits, reverse=True):
        data = data[: edit.start] + edit.text + data[edit.end :]
    assert data == expected


@pytest.mark.parametrize("data, index, expected", [
    (b"a()\n  f(x)\nb()\n", 1, b"a()\nb()\n"),  # alone on its line: the line goes
    (b"a() f(x)\n", 1, b"a() \n"),  # beside another command: only itself
    (b"f(x)", 0, b""),
])
def test_remove_command(data, index, expected):
    edit = remove_command(data, cmake.read(data).commands[index])
    assert data[: edit.start] + data[edit.end :] == expected
