"""CMK011: FindCUDA's legacy commands and variables become CMake's own (then HIP's)."""

from __future__ import annotations

import re
from typing import ClassVar

from migrator.buildfiles.context import BuildContext, marker_fix
from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Marker, Rule

from .cmake_common import line_indent, newline_of, remove_command, set_values

_TARGET_KEYWORDS = {"cuda_add_executable": ("WIN32", "MACOSX_BUNDLE", "EXCLUDE_FROM_ALL"),
                    "cuda_add_library": ("STATIC", "SHARED", "MODULE", "EXCLUDE_FROM_ALL")}
_CONFIGS = {"RELEASE": "Release", "DEBUG": "Debug", "MINSIZEREL": "MinSizeRel",
            "RELWITHDEBINFO": "RelWithDebInfo"}
_LIBRARY_COMMANDS = {"cuda_add_cublas_to_target": "CUDA::cublas",
                     "cuda_add_cufft_to_target": "CUDA::cufft"}
_FLAGS = re.compile(r"^CUDA_NVCC_FLAGS(_[A-Z]+)?$")
_FLAGS_READ = re.compile(r"\$\{CUDA_NVCC_FLAGS(_[A-Z]+)?\}")
# FindCUDA's switches of nvcc's behaviour: nothing to set for HIP's clang
_SWITCHES = frozenset({"CUDA_PROPAGATE_HOST_FLAGS", "CUDA_HOST_COMPILATION_CPP",
                       "CUDA_64_BIT_DEVICE_CODE", "CUDA_VERBOSE_BUILD",
                       "CUDA_ATTACH_VS_BUILD_RULE_TO_CUDA_FILE", "CUDA_BUILD_CUBIN",
                       "CUDA_BUILD_EMULATION", "CUDA_GENERATED_OUTPUT_DIR",
                       "CUDA_USE_STATIC_CUDA_RUNTIME", "CUDA_LINK_LIBRARIES_KEYWORD"})
_NO_HIP = {
    "cuda_compile": "compiles .cu files to objects with nvcc: list them as sources of a target",
    **dict.fromkeys(("cuda_compile_ptx", "cuda_compile_fatbin", "cuda_compile_cubin"),
                    "no PTX, cubin or fatbin on AMD: for a file hipModuleLoad loads, run "
                    "hipcc --genco --offload-arch=... in an add_custom_command"),
    "cuda_wrap_srcs": "FindCUDA's internal nvcc rules: list the .cu files as target sources",
    "cuda_build_clean_target": "FindCUDA's own clean target: nothing to clean for HIP",
    "cuda_select_nvcc_arch_flags": "NVIDIA architectures: HIP's are CMAKE_HIP_ARCHITECTURES",
    "cuda_link_separable_compilation_objects": "HIP links device code with -fgpu-rdc",
    "cuda_compute_separable_compilation_object_file_name": "HIP links device code with "
                                                           "-fgpu-rdc",
    "cuda_detect_installed_gpus": "NVIDIA GPUs: HIP's are CMAKE_HIP_ARCHITECTURES",
}


class CmakeFindCuda(Rule):
    """FindCUDA's legacy commands and variables become CMake's own commands.

    ## What it does
    `cuda_add_executable(name srcs... OPTIONS flags)` and `cuda_add_library` become
    `add_executable` / `add_library` with the same sources, their `OPTIONS` a
    `target_compile_options()` for the CUDA sources (per configuration for `RELEASE` /
    `DEBUG` groups); `cuda_include_directories` becomes `include_directories`;
    `cuda_add_cublas_to_target(t)` / `cuda_add_cufft_to_target(t)` link the library;
    `CUDA_NVCC_FLAGS` (`set`, `list(APPEND)`) becomes `string(APPEND CMAKE_CUDA_FLAGS ...)`,
    and FindCUDA's switches of nvcc (`CUDA_PROPAGATE_HOST_FLAGS`...) are removed. The
    other rules then carry what this writes to HIP in the next rounds (the sources CMK007,
    the flags CMK016 and CMK003, the libraries CMK009). FindCUDA's nvcc-only commands
    (`cuda_compile`, `cuda_compile_ptx`, `cuda_wrap_srcs`...), `CUDA_HOST_COMPILER` and
    reads of `${CUDA_NVCC_FLAGS}` are marked (CMK012).

    ## Why is this bad on AMD
    FindCUDA (deprecated since CMake 3.10) drives nvcc through its own custom commands: none
    of them can compile for an AMD GPU. AMD's "Using CMake" HIP documentation builds HIP
    through CMake's HIP language and ordinary targets, which take options with
    `target_compile_options` and flags with `CMAKE_HIP_FLAGS`.

    ## Example
    ```cmake
    set(CUDA_NVCC_FLAGS ${CUDA_NVCC_FLAGS};-O3;--use_fast_math)
    cuda_add_executable(app main.cu OPTIONS -lineinfo)
    cuda_add_cublas_to_target(app)
    ```

    ## Use instead
    ```cmake
    string(APPEND CMAKE_HIP_FLAGS " -O3 -ffast-math")
    add_executable(app main.cu)
    set_source_files_properties(main.cu PROPERTIES LANGUAGE HIP)
    target_compile_options(app PRIVATE "$<$<COMPILE_LANGUAGE:HIP>:-gline-tables-only>")
    find_package(hipblas REQUIRED)
    target_link_libraries(app roc::hipblas)
    ```

    ## Fix safety
    Fixed where CMake has the counterpart. `cuda_include_directories` only reached nvcc;
    `include_directories` reaches every compiler of the directory (one more include folder
    for C++ files). Marked commands stay as written.
    """

    code = "CMK011"
    extra_codes = ("CMK012",)
    attention_codes = ("CMK012",)
    name = "cmake-findcuda-legacy"
    summary = "FindCUDA's cuda_add_executable, cuda_add_library, CUDA_NVCC_FLAGS... become "\
              "CMake's own"
    family = "build"
    fix = "sometimes"
    category = "conversion"
    chains = True  # the targets and variables it writes are what CMK003, CMK007 and CMK016 read
    languages: ClassVar[tuple[str, ...]] = ("cmake",)

    def check(self, ctx: BuildContext):
        for command in ctx.script.commands:
            lower = command.lower
            if lower in _TARGET_KEYWORDS and command.args:
                yield _target(ctx, command)
            elif lower == "cuda_include_directories":
                yield _renamed(command, "include_directories")
            elif lower in _LIBRARY_COMMANDS and command.args:
                text = (f"target_link_libraries({command.args[0].value} "
                        f"{_LIBRARY_COMMANDS[lower]})")
                yield Diagnostic("CMK011", f"{command.name}() becomes {text}", command.start,
                                 command.end, Fix(text, (Edit(command.start, command.end,
                                                              text.encode()),)),
                                 symbol=command.name, severity="info")
            elif lower in _NO_HIP:
                message = f"{command.name}(): {_NO_HIP[lower]}"
                yield Diagnostic("CMK012", message, command.start, command.end,
                                 marker_fix(ctx, command.start, Marker("CMK012", message)),
                                 symbol=command.name)
            elif lower in ("set", "list") and command.args:
                yield from _variable(ctx, command)
            if lower not in ("set", "list"):
                for arg in command.args:
                    match = _FLAGS_READ.search(arg.value) if arg.kind != "bracket" else None
                    if match:
                        message = (f"{match.group()}: FindCUDA's nvcc flags; HIP's flags are "
                                   "CMAKE_HIP_FLAGS")
                        yield Diagnostic("CMK012", message, arg.start, arg.end,
                                         marker_fix(ctx, arg.start, Marker("CMK012", message)),
                                         symbol="CUDA_NVCC_FLAGS")


def _renamed(command, name: str) -> Diagnostic:
    end = command.start + len(command.name)
    return Diagnostic("CMK011", f"{command.name}() becomes {name}()", command.start, end,
                      Fix(f"{command.name} -> {name}",
                          (Edit(command.start, end, name.encode()),)),
                      symbol=command.name, severity="info")


def _target(ctx: BuildContext, command) -> Diagnostic:
    """cuda_add_executable/cuda_add_library -> add_executable/add_library, the OPTIONS a
    target_compile_options() for the CUDA sources."""
    name = command.args[0].value
    keywords = _TARGET_KEYWORDS[command.lower]
    kept = [command.args[0].text.decode()]
    sources, groups, group = [], [], None
    for arg in command.args[1:]:
        value = arg.value
        if value in keywords:
            kept.append(value)
            continue
        if value == "OPTIONS":
            group = ("", [])
            groups.append(group)
        elif value in _CONFIGS and group is not None:
            group = (_CONFIGS[value], [])
            groups.append(group)
        elif group is not None:
            group[1].append(value)
        else:
            sources.append(arg.text.decode("utf-8", "replace"))
    new = command.lower.replace("cuda_", "", 1)
    lines = [f"{new}({' '.join(kept + sources)})"]
    options = []
    for config, flags in groups:
        if not flags:
            continue
        listed = ";".join(flags)
        inner = f"$<$<CONFIG:{config}>:{listed}>" if config else listed
        options.append(f'"$<$<COMPILE_LANGUAGE:CUDA>:{inner}>"')
    if options:
        lines.append(f"target_compile_options({name} PRIVATE {' '.join(options)})")
    separator = (newline_of(ctx.data) + line_indent(ctx.data, command.start)).decode()
    text = separator.join(lines)
    return Diagnostic("CMK011", f"{command.name}({name}) becomes {new}({name})", command.start,
                      command.end, Fix(f"{command.name} -> {new}",
                                       (Edit(command.start, command.end, text.encode()),)),
                      symbol=command.name, severity="info")


def _variable(ctx: BuildContext, command):
    """CUDA_NVCC_FLAGS set or appended -> string(APPEND CMAKE_CUDA_FLAGS ...); FindCUDA's
    switches removed; CUDA_HOST_COMPILER marked."""
    args = command.args
    is_list = command.lower == "list"
    if is_list and (len(args) < 2 or args[0].value not in ("APPEND", "PREPEND")):
        return
    name_arg = args[1] if is_list else args[0]
    name = name_arg.value
    flags = _FLAGS.match(name)
    if flags:
        values = args[2:] if is_list else set_values(command)
        items = [item for value in values for item in re.split(r"[;\s]+", value.value)
                 if item and item != "${" + name + "}"]
        target = "CMAKE_CUDA_FLAGS" + (flags.group(1) or "")
        if items:
            text = f'string(APPEND {target} " {" ".join(items)}")'.encode()
            edit = Edit(command.start, command.end, text)
        else:
            edit = remove_command(ctx.data, command)
        yield Diagnostic("CMK011", f"{name} becomes {target}", name_arg.start, name_arg.end,
                         Fix(f"{name} -> {target}", (edit,)), symbol=name, severity="info")
    elif name in _SWITCHES and not is_list:
        yield Diagnostic("CMK011", f"{name}: FindCUDA's switch of nvcc; nothing to set for "
                         "HIP", name_arg.start, name_arg.end,
                         Fix(f"remove {name}", (remove_command(ctx.data, command),)),
                         symbol=name, severity="info")
    elif name == "CUDA_HOST_COMPILER":
        message = ("CUDA_HOST_COMPILER: HIP has no separate host compiler (ROCm's clang "
                   "compiles host and device code)")
        yield Diagnostic("CMK012", message, name_arg.start, name_arg.end,
                         marker_fix(ctx, command.start, Marker("CMK012", message)),
                         symbol=name)
