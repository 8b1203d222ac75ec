"""CMK001: the CUDA language of a CMake project becomes HIP (and CMake 3.21 the minimum)."""

from __future__ import annotations

from typing import ClassVar

from migrator.buildfiles.context import BuildContext
from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Rule

from .cmake_common import HIP_LANGUAGE_MINIMUM, commands, remove_arguments, version_tuple

_PROJECT_KEYWORDS = frozenset({"VERSION", "DESCRIPTION", "HOMEPAGE_URL", "LANGUAGES"})
_MINIMUM = ".".join(map(str, HIP_LANGUAGE_MINIMUM))


class CmakeLanguage(Rule):
    """A CMake project's CUDA language becomes HIP.

    ## What it does
    Finds the CUDA language where a CMake script enables it (`project(x LANGUAGES CXX CUDA)`,
    `project(x CUDA CXX)`, `enable_language(CUDA)`, `check_language(CUDA)`) and names HIP
    instead. Where the script enables HIP and requires a CMake older than 3.21
    (`cmake_minimum_required(VERSION 3.18)`), CMK002 raises the minimum to 3.21.

    ## Why is this bad on AMD
    CMake's CUDA language compiles with nvcc (or clang for NVIDIA GPUs): it cannot target an
    AMD GPU. AMD's "Using CMake" HIP documentation builds HIP sources through CMake's HIP
    language (`project(x LANGUAGES HIP)` or `enable_language(HIP)`), which compiles them with
    ROCm's clang for the `CMAKE_HIP_ARCHITECTURES`; CMake has the HIP language since 3.21, so
    an older minimum lets an old CMake fail later with a confusing error.

    ## Example
    ```cmake
    cmake_minimum_required(VERSION 3.18)
    project(saxpy LANGUAGES CXX CUDA)
    ```

    ## Use instead
    ```cmake
    cmake_minimum_required(VERSION 3.21)
    project(saxpy LANGUAGES CXX HIP)
    ```

    ## Fix safety
    Always fixed. A version range (`3.18...3.27`) keeps its upper end when it is 3.21 or
    newer. Where HIP is named already, CUDA is dropped rather than named twice.
    """

    code = "CMK001"
    extra_codes = ("CMK002",)
    name = "cmake-cuda-language"
    summary = "CMake's CUDA language (project, enable_language, check_language) becomes HIP"
    family = "build"
    fix = "always"
    category = "conversion"
    chains = True  # every CMake rule reads the project's languages
    languages: ClassVar[tuple[str, ...]] = ("cmake",)

    def check(self, ctx: BuildContext):
        script = ctx.script
        enables_hip = False
        for command in commands(script, "project", "enable_language", "check_language"):
            languages = language_arguments(command)
            names = [arg.value for arg in languages]
            if command.lower != "check_language" and ("HIP" in names or "CUDA" in names):
                enables_hip = True
            for arg in languages:
                if arg.value != "CUDA":
                    continue
                if "HIP" in names:
                    edits = tuple(remove_arguments(ctx.data, [arg]))
                else:
                    edits = (Edit(arg.start, arg.end, b"HIP"),)
                what = f"project({command.args[0].value})" if command.lower == "project" \
                    else f"{command.name}()"
                yield Diagnostic("CMK001", f"{what}: the CUDA language becomes HIP",
                                 arg.start, arg.end, Fix("CUDA -> HIP", edits),
                                 symbol="CUDA", severity="info")
        if enables_hip:
            yield from _raise_minimum(script)


def language_arguments(command):
    """The arguments naming languages in project(), enable_language() or check_language()."""
    args = command.args
    if command.lower != "project":  # enable_language(L... [OPTIONAL]), check_language(L)
        return [arg for arg in args if arg.value != "OPTIONAL"]
    if len(args) < 2:
        return []
    keywords = [i for i, arg in enumerate(args) if arg.value in _PROJECT_KEYWORDS]
    if "LANGUAGES" in (args[i].value for i in keywords):
        start = next(i for i in keywords if args[i].value == "LANGUAGES") + 1
        stop = next((i for i in keywords if i >= start), len(args))
        return list(args[start:stop])
    stop = keywords[0] if keywords else len(args)  # project(name LANG...)
    return list(args[1:stop])


def _raise_minimum(script):
    for command in commands(script, "cmake_minimum_required"):
        args = command.args
        at = next((i for i, arg in enumerate(args) if arg.value == "VERSION"), None)
        if at is None or at + 1 >= len(args):
            continue
        version = args[at + 1]
        low, dots, high = version.value.partition("...")
        low_version = version_tuple(low)
        if low_version is None or low_version >= HIP_LANGUAGE_MINIMUM:
            continue
        high_version = version_tuple(high) if dots else None
        text = _MINIMUM
        if high_version is not None and high_version >= HIP_LANGUAGE_MINIMUM:
            text += "..." + high
        yield Diagnostic("CMK002", f"CMake's HIP language needs CMake {_MINIMUM}: the minimum "
                         f"{low} is raised", version.start, version.end,
                         Fix(f"VERSION {_MINIMUM}", (Edit(version.start, version.end,
                                                         text.encode()),)),
                         symbol="cmake_minimum_required", severity="info")
