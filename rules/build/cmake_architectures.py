"""CMK005: CUDA architectures (CMAKE_CUDA_ARCHITECTURES, CUDA_ARCHITECTURES) become AMD GPUs."""

from __future__ import annotations

import re
from typing import ClassVar

from migrator.buildfiles.context import BuildContext, marker_fix
from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Marker, Rule

from .cmake_common import property_pairs, quoted_list, set_values

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
    values have no AMD counterpart one by one.

    ## Why is this bad on AMD
    An NVIDIA compute capability names no AMD GPU: CMake's HIP language reads
    `CMAKE_HIP_ARCHITECTURES` / `HIP_ARCHITECTURES` (AMD's "Using CMake" HIP documentation),
    a list of gfx targets (`gfx90a`, `gfx942`) each compiled into the code object. Code
    built for another gfx target does not load on the GPU ("no kernel image").

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
