"""CMK013: CUDA separable compilation becomes HIP's relocatable device code (-fgpu-rdc)."""

from __future__ import annotations

from typing import ClassVar

from migrator.buildfiles.context import BuildContext
from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Rule

from .cmake_common import (commands, line_indent, lines_after, newline_of, property_pairs,
                           remove_arguments, remove_command, set_values)

_PROPERTIES = ("CUDA_SEPARABLE_COMPILATION", "CUDA_RESOLVE_DEVICE_SYMBOLS")
_VARIABLES = ("CUDA_SEPARABLE_COMPILATION", "CMAKE_CUDA_SEPARABLE_COMPILATION",
              "CMAKE_CUDA_RESOLVE_DEVICE_SYMBOLS")
_FALSE = frozenset({"", "0", "OFF", "NO", "FALSE", "N", "IGNORE", "NOTFOUND"})
_COMPILE = "$<$<COMPILE_LANGUAGE:HIP>:-fgpu-rdc>"
_LINK = "$<$<LINK_LANGUAGE:HIP>:-fgpu-rdc>"
# clang links the device code of a static library only when the link names it as -lNAME
_ARCHIVE = ('"$<$<LINK_LANGUAGE:HIP>:-L$<TARGET_LINKER_FILE_DIR:{0}>>" '
            '"$<$<LINK_LANGUAGE:HIP>:-l$<TARGET_LINKER_FILE_BASE_NAME:{0}>>"')
_NOT_STATIC = frozenset({"SHARED", "MODULE", "OBJECT", "INTERFACE", "IMPORTED", "ALIAS"})


class CmakeRelocatableDeviceCode(Rule):
    """CUDA separable compilation becomes relocatable device code (`-fgpu-rdc`).

    ## What it does
    The target property `CUDA_SEPARABLE_COMPILATION ON` becomes
    `target_compile_options(T PUBLIC $<$<COMPILE_LANGUAGE:HIP>:-fgpu-rdc>)` and
    `target_link_options(T PUBLIC $<$<LINK_LANGUAGE:HIP>:-fgpu-rdc>)`; the variables
    `CMAKE_CUDA_SEPARABLE_COMPILATION` and FindCUDA's `CUDA_SEPARABLE_COMPILATION` set ON
    become the same options for the directory (`add_compile_options`, `add_link_options`).
    A static library gets a third line, which names it to its consumers' links as
    `-L<folder> -l<name>`. `CUDA_RESOLVE_DEVICE_SYMBOLS` and settings to OFF are removed.

    ## Why is this bad on AMD
    CMake's HIP language has no separable-compilation property: the CUDA one is ignored, so
    a kernel calling a `__device__` function of another file fails to link ("undefined
    symbol"). AMD's HIP documentation builds such code with relocatable device code: every
    translation unit compiled with `-fgpu-rdc`, and the link made with `-fgpu-rdc` too
    (clang links the device code there, which is what CUDA's device-link step and
    `CUDA_RESOLVE_DEVICE_SYMBOLS` did). Clang takes the device code of a static library
    only from an archive the link names with `-l` (ROCm's clang 15, Debian's HIP 5.2: an
    archive given by its path, as CMake links it, leaves the kernels' calls into it
    undefined: "undefined hidden symbol").

    ## Example
    ```cmake
    add_library(vecmath STATIC ops.cu scale.cu)
    set_target_properties(vecmath PROPERTIES CUDA_SEPARABLE_COMPILATION ON
                                             POSITION_INDEPENDENT_CODE ON)
    ```

    ## Use instead
    ```cmake
    add_library(vecmath STATIC ops.cu scale.cu)
    set_target_properties(vecmath PROPERTIES POSITION_INDEPENDENT_CODE ON)
    target_compile_options(vecmath PUBLIC $<$<COMPILE_LANGUAGE:HIP>:-fgpu-rdc>)
    target_link_options(vecmath PUBLIC $<$<LINK_LANGUAGE:HIP>:-fgpu-rdc>)
    target_link_options(vecmath INTERFACE
      "$<$<LINK_LANGUAGE:HIP>:-L$<TARGET_LINKER_FILE_DIR:vecmath>>"
      "$<$<LINK_LANGUAGE:HIP>:-l$<TARGET_LINKER_FILE_BASE_NAME:vecmath>>")
    ```

    ## Fix safety
    Always fixed. The options are PUBLIC: what links the library compiles its own HIP
    sources relocatable too and links their device code with it, as CUDA's device link of
    the consumer did. Relocatable device code can be slower (less inlining across files).
    """

    code = "CMK013"
    name = "cmake-cuda-separable-compilation"
    summary = "CUDA separable compilation becomes relocatable device code (-fgpu-rdc)"
    family = "build"
    fix = "always"
    category = "conversion"
    languages: ClassVar[tuple[str, ...]] = ("cmake",)

    def check(self, ctx: BuildContext):
        data = ctx.data
        static = {command.args[0].value for command in commands(ctx.script, "add_library")
                  if command.args and not any(arg.value in _NOT_STATIC
                                              for arg in command.args[1:3])}
        for command in commands(ctx.script, "set_target_properties", "set_property"):
            pairs = property_pairs(command)
            ours = [(key, values) for key, values in pairs if key.value in _PROPERTIES]
            if not ours:
                continue
            targets = _targets(command)
            relocatable = any(key.value == _PROPERTIES[0] and _true(values)
                              for key, values in ours)
            lines = []
            if relocatable:
                for target in targets:
                    lines += [f"target_compile_options({target} PUBLIC {_COMPILE})".encode(),
                              f"target_link_options({target} PUBLIC {_LINK})".encode()]
                    if target in static:
                        lines.append(f"target_link_options({target} INTERFACE "
                                     f"{_ARCHIVE.format(target)})".encode())
            if len(ours) == len(pairs):  # nothing else set: the command goes
                separator = newline_of(data) + line_indent(data, command.start)
                edits = (Edit(command.start, command.end, separator.join(lines)) if lines
                         else remove_command(data, command),)
            else:
                removed = [arg for key, values in ours for arg in (key, *values)]
                edits = (*remove_arguments(data, removed), lines_after(data, command, lines)) \
                    if lines else tuple(remove_arguments(data, removed))
            names = " and ".join(key.value for key, _ in ours)
            message = (f"{names}: {', '.join(targets)} compile and link with -fgpu-rdc"
                       if relocatable
                       else f"{names} ({', '.join(targets)}): nothing to set on AMD")
            key = ours[0][0]
            yield Diagnostic("CMK013", message, key.start, key.end,
                             Fix("-fgpu-rdc" if relocatable else "remove", edits),
                             symbol=key.value, severity="info")
        for command in commands(ctx.script, "set"):
            if not command.args or command.args[0].value not in _VARIABLES:
                continue
            name = command.args[0].value
            if "SEPARABLE" in name and _true(set_values(command)):
                text = (f"add_compile_options({_COMPILE})".encode()
                        + newline_of(data) + line_indent(data, command.start)
                        + f"add_link_options({_LINK})".encode())
                message = f"{name} ON: the directory compiles and links with -fgpu-rdc"
            else:
                text = b""
                message = f"{name}: nothing to set on AMD"
            yield Diagnostic("CMK013", message, command.args[0].start, command.args[0].end,
                             Fix("-fgpu-rdc" if text else "remove",
                                 (Edit(command.start, command.end, text) if text
                                  else remove_command(data, command),)),
                             symbol=name, severity="info")


def _true(values) -> bool:
    """Does a property or variable set to ``values`` read as true in CMake?"""
    if len(values) != 1:
        return False
    value = values[0].value.upper()
    return value not in _FALSE and not value.endswith("-NOTFOUND")


def _targets(command) -> list[str]:
    """The targets a set_target_properties() or set_property(TARGET ...) names."""
    values = command.values()
    if command.lower == "set_target_properties":
        return values[: values.index("PROPERTIES")]
    if values[:1] != ["TARGET"]:
        return []
    names = []
    for value in values[1:]:
        if value in ("PROPERTY", "APPEND", "APPEND_STRING"):
            break
        names.append(value)
    return names

