"""CMK003: CMake's CUDA variables and target properties become their HIP counterparts."""

from __future__ import annotations

import re
from typing import ClassVar

from migrator.buildfiles.context import BuildContext, marker_fix
from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Marker, Rule

from .cmake_common import property_pairs
from .cmake_flags import flags_pending

# CMAKE_CUDA_<X> -> CMAKE_HIP_<X> and the <LANG>_<X> target properties CMake has for HIP
_RENAMED = frozenset({
    "STANDARD", "STANDARD_REQUIRED", "EXTENSIONS", "FLAGS", "FLAGS_INIT", "FLAGS_DEBUG",
    "FLAGS_RELEASE", "FLAGS_RELWITHDEBINFO", "FLAGS_MINSIZEREL", "COMPILER", "COMPILER_LAUNCHER",
    "VISIBILITY_PRESET", "COMPILER_LOADED", "COMPILER_WORKS", "COMPILE_FEATURES",
    "STANDARD_INCLUDE_DIRECTORIES", "STANDARD_LIBRARIES", "OUTPUT_EXTENSION", "CLANG_TIDY",
    "INCLUDE_WHAT_YOU_USE", "CPPCHECK", "LINKER_LAUNCHER", "STANDARD_DEFAULT",
})
_PROPERTIES = frozenset({"STANDARD", "STANDARD_REQUIRED", "EXTENSIONS", "VISIBILITY_PRESET",
                         "COMPILER_LAUNCHER", "CLANG_TIDY", "CPPCHECK",
                         "INCLUDE_WHAT_YOU_USE", "LINKER_LAUNCHER"})
# names other rules convert: CMK005 (architectures) and CMK013 (relocatable device code)
_ELSEWHERE = frozenset({"ARCHITECTURES", "SEPARABLE_COMPILATION", "RESOLVE_DEVICE_SYMBOLS"})
# what HIP lacks, and why
_NO_HIP = {
    "HOST_COMPILER": "HIP has no separate host compiler (ROCm's clang compiles host and "
                     "device code): choose CMAKE_CXX_COMPILER or drop it",
    "RUNTIME_LIBRARY": "HIP has no static runtime choice (hipcc links libamdhip64): drop it",
    "COMPILER_ID": "CUDA's compiler id (NVIDIA) differs from HIP's (Clang): check the test",
    "COMPILER_VERSION": "nvcc's version is no HIP version: test hip_VERSION or "
                        "CMAKE_HIP_COMPILER_VERSION (clang's) instead",
    "TOOLKIT_INCLUDE_DIRECTORIES": "the CUDA toolkit's include folders: HIP's come from "
                                   "find_package(hip) (hip_INCLUDE_DIRS)",
    **dict.fromkeys(("PTX_COMPILATION", "CUBIN_COMPILATION", "FATBIN_COMPILATION"),
                    "no PTX, cubin or fatbin on AMD: for a file hipModuleLoad loads, run "
                    "hipcc --genco --offload-arch=... in an add_custom_command"),
    "OPTIX_COMPILATION": "no OptiX on AMD",
}
_VARIABLE = re.compile(r"(?<![A-Za-z0-9_])CMAKE_CUDA_([A-Z][A-Z0-9_]*)")
_PROPERTY = re.compile(r"(?<![A-Za-z0-9_])CUDA_([A-Z][A-Z_]*)(?![A-Za-z0-9_])")
_FEATURE = re.compile(r"(?<![A-Za-z0-9_])cuda_std_(\d+)(?![A-Za-z0-9_])")
_PROPERTY_COMMANDS = frozenset({"set_target_properties", "set_property", "get_target_property",
                                "get_property", "set_source_files_properties",
                                "define_property"})


class CmakeVariables(Rule):
    """CMake's CUDA variables and target properties become the HIP ones.

    ## What it does
    Renames the `CMAKE_CUDA_<X>` variables that CMake's HIP language has as `CMAKE_HIP_<X>`
    (`STANDARD`, `STANDARD_REQUIRED`, `EXTENSIONS`, `FLAGS` and its per-configuration
    variants, `COMPILER`, `COMPILER_LAUNCHER`, `VISIBILITY_PRESET`...), the target properties
    `CUDA_STANDARD`, `CUDA_STANDARD_REQUIRED`, `CUDA_EXTENSIONS`, `CUDA_VISIBILITY_PRESET`,
    `CUDA_COMPILER_LAUNCHER` as their `HIP_` properties, the compile features
    `cuda_std_NN` as `hip_std_NN`, and `LINKER_LANGUAGE CUDA` as `LINKER_LANGUAGE HIP`,
    wherever a script names them (set(), ${...}, if(), strings).
    What HIP lacks (`CMAKE_CUDA_HOST_COMPILER`, `CMAKE_CUDA_RUNTIME_LIBRARY`,
    `CMAKE_CUDA_COMPILER_ID` and `_VERSION`, `CUDA_PTX_COMPILATION`...) is reported as
    CMK004 with a marker. Architectures are CMK005's, separable compilation CMK013's.

    ## Why is this bad on AMD
    Once the project's language is HIP (CMK001), the CUDA variables set nothing: a
    `CMAKE_CUDA_STANDARD 17` silently leaves the HIP sources at the compiler's default
    standard, and `CMAKE_CUDA_FLAGS` never reaches the compiler. AMD's "Using CMake" HIP
    documentation configures the HIP language through `CMAKE_HIP_*` variables and the
    `HIP_*` properties (`HIP_STANDARD`, `HIP_ARCHITECTURES`).

    ## Example
    ```cmake
    set(CMAKE_CUDA_STANDARD 17)
    set_target_properties(app PROPERTIES CUDA_STANDARD_REQUIRED ON)
    set(CMAKE_CUDA_HOST_COMPILER g++-10)
    ```

    ## Use instead
    ```cmake
    set(CMAKE_HIP_STANDARD 17)
    set_target_properties(app PROPERTIES HIP_STANDARD_REQUIRED ON)
    # rocmigrate CMK004: CMAKE_CUDA_HOST_COMPILER: HIP has no separate host compiler ...
    set(CMAKE_CUDA_HOST_COMPILER g++-10)
    ```

    ## Fix safety
    Renames are exact counterparts and always applied. A `CMAKE_CUDA_COMPILER` set to an
    nvcc path is marked rather than renamed (nvcc is no HIP compiler). The flags' values
    are CMK014's; what they hold is not judged here.
    """

    code = "CMK003"
    extra_codes = ("CMK004",)
    attention_codes = ("CMK004",)
    name = "cmake-cuda-variables"
    summary = "CMAKE_CUDA_* variables and CUDA_* target properties become the HIP ones"
    family = "build"
    fix = "sometimes"
    category = "conversion"
    languages: ClassVar[tuple[str, ...]] = ("cmake",)

    def check(self, ctx: BuildContext):
        for command in ctx.script.commands:
            marked: set[str] = set()
            nvcc_compiler = (command.lower == "set" and command.args
                             and command.args[0].value == "CMAKE_CUDA_COMPILER"
                             and any("nvcc" in arg.value for arg in command.args[1:]))
            waits = None  # the nvcc flags of a CMAKE_CUDA_FLAGS are rewritten first (CMK016)
            for arg in command.args:
                if arg.kind == "bracket" or (b"CUDA" not in arg.text
                                             and b"cuda_std_" not in arg.text):
                    continue
                text = arg.text.decode("utf-8", "replace")
                for match in _VARIABLE.finditer(text):
                    suffix = match.group(1)
                    if suffix in _ELSEWHERE:
                        continue
                    if suffix.startswith("FLAGS"):
                        if waits is None:
                            waits = flags_pending(ctx, command)
                        if waits:
                            continue
                    start, end = arg.start + match.start(), arg.start + match.end()
                    if suffix in _RENAMED and not (suffix == "COMPILER" and nvcc_compiler):
                        yield _rename(match.group(), f"CMAKE_HIP_{suffix}", start, end)
                    elif match.group() not in marked:
                        marked.add(match.group())
                        reason = (_NO_HIP.get(suffix) if suffix != "COMPILER" else
                                  "nvcc is no HIP compiler: CMAKE_HIP_COMPILER is ROCm's "
                                  "clang (or leave it to CMake)")
                        yield _mark(ctx, match.group(), reason, start, end)
                for match in _FEATURE.finditer(text):  # compile features: cuda_std_17
                    start, end = arg.start + match.start(), arg.start + match.end()
                    yield _rename(match.group(), f"hip_std_{match.group(1)}", start, end)
                if command.lower not in _PROPERTY_COMMANDS:
                    continue
                for match in _PROPERTY.finditer(text):
                    suffix = match.group(1)
                    start, end = arg.start + match.start(), arg.start + match.end()
                    if suffix in _PROPERTIES:
                        yield _rename(match.group(), f"HIP_{suffix}", start, end)
                    elif suffix in _NO_HIP and match.group() not in marked:
                        marked.add(match.group())
                        yield _mark(ctx, match.group(), _NO_HIP[suffix], start, end)
            for key, values in property_pairs(command):
                if key.value == "LINKER_LANGUAGE":
                    for value in values:
                        if value.value == "CUDA":
                            yield Diagnostic("CMK003", "LINKER_LANGUAGE CUDA becomes HIP",
                                             value.start, value.end,
                                             Fix("LINKER_LANGUAGE HIP",
                                                 (Edit(value.start, value.end, b"HIP"),)),
                                             symbol="LINKER_LANGUAGE", severity="info")


def _rename(old: str, new: str, start: int, end: int) -> Diagnostic:
    return Diagnostic("CMK003", f"{old} becomes {new}", start, end,
                      Fix(f"{old} -> {new}", (Edit(start, end, new.encode()),)),
                      symbol=old, severity="info")


def _mark(ctx: BuildContext, name: str, reason: str | None, start: int, end: int) -> Diagnostic:
    reason = reason or "CMake's HIP language has no counterpart: port it by hand"
    message = f"{name}: {reason}"
    return Diagnostic("CMK004", message, start, end,
                      marker_fix(ctx, start, Marker("CMK004", message)), symbol=name)
