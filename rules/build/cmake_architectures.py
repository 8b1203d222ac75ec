"""CMK005: CUDA architectures (CMAKE_CUDA_ARCHITECTURES, CUDA_ARCHITECTURES) become AMD GPUs."""

from __future__ import annotations

import re
from typing import ClassVar

from migrator.buildfiles.context import BuildContext, marker_fix
from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Marker, Rule

from .cmake_common import commands, lines_before, property_pairs, quoted_list, set_values
from .cmake_languages import language_arguments

_VARIABLE = re.compile(r"(?<![A-Za-z0-9_])CMAKE_CUDA_ARCHITECTURES(?![A-Za-z0-9_])")
_PROPERTY = "CUDA_ARCHITECTURES"


class CmakeArchitectures(Rule):
    """CUDA architectures become the AMD GPUs the port targets.

    ## What it does
    Replaces `CMAKE_CUDA_ARCHITECTURES` with `CMAKE_HIP_ARCHITECTURES` and the target
    property `CUDA_ARCHITECTURES` with `HIP_ARCHITECTURES`; the values they are given
    (`sm_80`, `80`, `80-real`, `70;80`, `native`, `all`, a variable such as `${SM_ARCH}`)
    become the AMD GPUs of `--offload-arch` (default `gfx90a;gfx942`: MI250 and MI300).
    Where the variable is only read (`${CMAKE_CUDA_ARCHITECTURES}`, `if(DEFINED ...)`) it is
    renamed. A `list(APPEND CMAKE_CUDA_ARCHITECTURES ...)` is marked (CMK006): its NVIDIA
    values have no AMD counterpart one by one. A CUDA project that names no architecture
    (CMake's CUDA default) gets `CMAKE_HIP_ARCHITECTURES` set to the AMD GPUs before its
    language is enabled, unless the configure command line sets it.

    ## Why is this bad on AMD
    An NVIDIA compute capability names no AMD GPU: CMake's HIP language reads
    `CMAKE_HIP_ARCHITECTURES` / `HIP_ARCHITECTURES` (AMD's "Using CMake" HIP documentation),
    a list of gfx targets (`gfx90a`, `gfx942`) each compiled into the code object. Code
    built for another gfx target does not load on the GPU ("no kernel image"). Without
    one, CMake 3.21-3.27 takes the GPUs of the configuring machine (`rocm_agent_enumerator`),
    else the compiler's default target, else stops ("Failed to find a default HIP
    architecture"): the build depends on the machine it is configured on.

    ## Example
    ```cmake
    set(CMAKE_CUDA_ARCHITECTURES 70 80)
    set_target_properties(app PROPERTIES CUDA_ARCHITECTURES ${SM_ARCH})
    ```

    ## Use instead
    ```cmake
    set(CMAKE_HIP_ARCHITECTURES "gfx90a;gfx942")
    set_target_properties(app PROPERTIES HIP_ARCHITECTURES "gfx90a;gfx942")
    ```

    ## Fix safety
    Always fixed, except `list(APPEND ...)` (marked). A variable that chose the NVIDIA
    architecture (`${SM_ARCH}`) no longer chooses anything: the message names it; choose the
    AMD GPUs with `--offload-arch` when converting, or `-DCMAKE_HIP_ARCHITECTURES=...` when
    configuring.
    """

    code = "CMK005"
    extra_codes = ("CMK006",)
    attention_codes = ("CMK006",)
    name = "cmake-cuda-architectures"
    summary = "CUDA architectures become the AMD GPUs of --offload-arch (HIP_ARCHITECTURES)"
    family = "build"
    fix = "sometimes"
    category = "conversion"
    languages: ClassVar[tuple[str, ...]] = ("cmake",)

    def check(self, ctx: BuildContext):
        archs = quoted_list(ctx.settings.offload_archs)
        for command in ctx.script.commands:
            pairs = property_pairs(command)
            for key, values in pairs:
                if key.value == _PROPERTY:
                    yield _replace(key, b"HIP_ARCHITECTURES", values, archs)
            named_properties = {key.start for key, _ in pairs}
            for index, arg in enumerate(command.args):
                if arg.kind == "bracket" or arg.start in named_properties:
                    continue
                text = arg.text.decode("utf-8", "replace")
                if arg.value == _PROPERTY and command.lower in ("get_target_property",
                                                                "get_property"):
                    yield _rename(arg.start, arg.end, _PROPERTY, "HIP_ARCHITECTURES")
                for match in _VARIABLE.finditer(text):
                    start, end = arg.start + match.start(), arg.start + match.end()
                    if index == 0 and command.lower == "set":
                        yield _replace(arg, b"CMAKE_HIP_ARCHITECTURES", set_values(command),
                                       archs)
                    elif (index == 1 and command.lower == "list" and command.args[0].value
                          in ("APPEND", "PREPEND", "INSERT")):
                        message = ("CMAKE_CUDA_ARCHITECTURES: NVIDIA architectures appended "
                                   "one by one have no AMD counterparts: list the gfx targets "
                                   "in CMAKE_HIP_ARCHITECTURES")
                        yield Diagnostic("CMK006", message, start, end,
                                         marker_fix(ctx, start, Marker("CMK006", message)),
                                         symbol="CMAKE_CUDA_ARCHITECTURES")
                    else:
                        yield _rename(start, end, "CMAKE_CUDA_ARCHITECTURES",
                                      "CMAKE_HIP_ARCHITECTURES")
        yield from _default(ctx, archs)


def _default(ctx: BuildContext, archs: bytes):
    """A CUDA project that chooses no architecture anywhere gets the AMD GPUs as the default
    of CMAKE_HIP_ARCHITECTURES, before its GPU language is enabled (a HIP project's own
    choice is left alone)."""
    if b"ARCHITECTURES" in ctx.data:
        return
    script = ctx.script
    enabling = commands(script, "project", "enable_language")
    cuda = [command for command in enabling
            if "CUDA" in [arg.value for arg in language_arguments(command)]]
    if not cuda:  # FindCUDA: CMK009 enables HIP in project() (else before the package)
        finds = [command for command in commands(script, "find_package")
                 if command.values()[:1] == ["CUDA"]]
        if not finds or any("HIP" in [arg.value for arg in language_arguments(command)]
                            for command in enabling):
            return
        cuda = (commands(script, "project") or finds)[:1]
    command = cuda[0]
    lines = [b"if(NOT DEFINED CMAKE_HIP_ARCHITECTURES)",
             b"  set(CMAKE_HIP_ARCHITECTURES " + archs + b")", b"endif()"]
    yield Diagnostic("CMK005", f"no architecture is chosen: CMAKE_HIP_ARCHITECTURES defaults "
                     f"to {archs.decode()} (--offload-arch)", command.start, command.end,
                     Fix("CMAKE_HIP_ARCHITECTURES default",
                         (lines_before(ctx.data, command, lines),)),
                     symbol="CMAKE_HIP_ARCHITECTURES", severity="info")


def _rename(start: int, end: int, old: str, new: str) -> Diagnostic:
    return Diagnostic("CMK005", f"{old} becomes {new}", start, end,
                      Fix(f"{old} -> {new}", (Edit(start, end, new.encode()),)),
                      symbol=old, severity="info")


def _replace(name, new_name: bytes, values, archs: bytes) -> Diagnostic:
    """``name`` renamed and its ``values`` (when given) replaced by the AMD GPUs."""
    old = " ".join(value.value for value in values)
    edits = [Edit(name.start, name.end, new_name)]
    if values:
        edits.append(Edit(values[0].start, values[-1].end, archs))
    message = (f"{name.value} {old} becomes {new_name.decode()} {archs.decode()}" if values
               else f"{name.value} becomes {new_name.decode()}")
    return Diagnostic("CMK005", message, name.start, name.end,
                      Fix(f"{new_name.decode()} {archs.decode()}", tuple(edits)),
                      symbol=name.value, severity="info")
