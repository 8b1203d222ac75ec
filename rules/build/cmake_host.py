"""CMK018: a CMake target with C++ sources in a HIP project links hip::host."""

from __future__ import annotations

from typing import ClassVar

from migrator.buildfiles.context import BuildContext
from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Rule

from .cmake_common import commands, lines_after, lines_before, set_values

_HOST_SUFFIXES = (".cpp", ".cc", ".cxx", ".c++", ".C")
_GIVES_HOST = frozenset({"hip::host", "hip::device", "hip::amdhip64", "CUDA::cudart",
                         "CUDA::cudart_static", "CUDA::cuda_driver", "CUDA::toolkit",
                         "${CUDA_LIBRARIES}"})
_LINK_KEYWORDS = frozenset({"PRIVATE", "PUBLIC", "INTERFACE", "LINK_PRIVATE", "LINK_PUBLIC",
                            "LINK_INTERFACE_LIBRARIES", "debug", "optimized", "general"})
_NOT_SOURCES = frozenset({"STATIC", "SHARED", "MODULE", "OBJECT", "EXCLUDE_FROM_ALL", "WIN32",
                          "MACOSX_BUNDLE"})


class CmakeHost(Rule):
    """A target with C++ sources in a HIP project links `hip::host`.

    ## What it does
    In a CMake file that enables CUDA or HIP or finds CUDA's or HIP's package, each
    `add_executable` / `add_library` with C++ sources (`.cpp`, `.cc`, `.cxx`, named or in a
    variable this file sets) that links neither `hip::host` nor `hip::device` (nor
    `CUDA::cudart`, which CMK009 makes `hip::host`), itself or through a target of this file
    it links, gets `hip::host`: added to its first `target_link_libraries()` (after `PRIVATE`
    where that call uses keywords), else in a `target_link_libraries(NAME PRIVATE
    hip::host)` after it. A file with no `find_package()` of HIP or CUDA gets
    `find_package(hip REQUIRED)` before the first such target.

    ## Why is this bad on AMD
    The converted C++ files include `hip/hip_runtime.h`, and CMake compiles them with the C++
    compiler, which is not hipcc: without `__HIP_PLATFORM_AMD__` the HIP headers stop with
    `#error Must define exactly one of __HIP_PLATFORM_AMD__...`, and without the HIP runtime
    the link leaves `hipMalloc` undefined. nvcc's host side needed neither. AMD's "Using
    CMake" HIP documentation gives C++ targets that call HIP the `hip::host` imported target
    of `find_package(hip)`, which carries the platform define, HIP's include folder and
    `amdhip64`; CMake's HIP language gives HIP sources `hip::device`'s share itself.

    ## Example
    ```cmake
    project(app LANGUAGES CXX HIP)
    add_executable(app main.cpp kernels.cu)
    ```

    ## Use instead
    ```cmake
    project(app LANGUAGES CXX HIP)
    find_package(hip REQUIRED)
    add_executable(app main.cpp kernels.cu)
    target_link_libraries(app PRIVATE hip::host)
    ```

    ## Fix safety
    Always fixed. Build files are read without the sources, so every C++ target of the file
    is given `hip::host`, also one whose sources do not include HIP's headers: it then links
    the HIP runtime it does not use, which changes nothing it computes. Targets whose sources
    are all `.cu`/`.hip` (HIP language) and INTERFACE, IMPORTED and ALIAS targets are left
    alone.
    """

    code = "CMK018"
    name = "cmake-host-hip"
    summary = "a CMake target with C++ sources in a HIP project links hip::host"
    family = "build"
    fix = "always"
    category = "conversion"
    languages: ClassVar[tuple[str, ...]] = ("cmake",)

    def check(self, ctx: BuildContext):
        script = ctx.script
        if not _uses_gpu(script):
            return
        variables: dict[str, list[str]] = {}
        for command in commands(script, "set"):
            if command.args:
                variables[command.args[0].value] = [
                    item for arg in set_values(command) for item in arg.value.split(";")]
        links: dict[str, list] = {}
        for command in commands(script, "target_link_libraries"):
            if command.args:
                links.setdefault(command.args[0].value, []).append(command)
        has_host = _with_host(links)
        finds = {command.args[0].value.lower() for command in commands(script, "find_package")
                 if command.args}
        needs_find = not finds & {"hip", "cuda", "cudatoolkit"} and b"CUDA::" not in ctx.data
        for command in commands(script, "add_executable", "add_library"):
            args = command.args
            if len(args) < 2 or any(arg.value in ("IMPORTED", "ALIAS", "INTERFACE")
                                    for arg in args[1:]):
                continue
            name = args[0].value
            if name in has_host or any(b"CUDA::" in arg.text or b"${CUDA_" in arg.text
                                       for link in links.get(name, ()) for arg in link.args):
                continue  # CUDA's libraries become HIP's first (CMK009): then it is decided
            sources = []
            for arg in args[1:]:
                value = arg.value
                if value in _NOT_SOURCES:
                    continue
                if value.startswith("${") and value.endswith("}"):
                    sources.extend(variables.get(value[2:-1], ()))
                else:
                    sources.extend(value.split(";"))
            if not any(source.endswith(_HOST_SUFFIXES) for source in sources):
                continue
            edits = []
            if needs_find:
                edits.append(lines_before(ctx.data, command, [b"find_package(hip REQUIRED)"]))
                needs_find = False
            existing = links.get(name)
            if existing:
                first = existing[0]
                keywords = [arg.value for arg in first.args[1:] if arg.value in _LINK_KEYWORDS]
                at = first.args[-1].end
                edits.append(Edit(at, at, b" PRIVATE hip::host" if keywords and keywords[-1]
                                  != "PRIVATE" else b" hip::host"))
            else:
                edits.append(lines_after(ctx.data, command, [
                    f"target_link_libraries({name} PRIVATE hip::host)".encode()]))
            has_host.add(name)
            yield Diagnostic("CMK018", f"{command.name}({name}): C++ sources that include "
                             "HIP's headers need hip::host (the platform define, HIP's "
                             "include folder and runtime)", command.start, command.end,
                             Fix("link hip::host", tuple(edits)), symbol=name,
                             severity="info")


def _uses_gpu(script) -> bool:
    for command in commands(script, "project", "enable_language", "find_package"):
        values = command.values()
        if command.lower == "find_package":
            if values[:1] and values[0] in ("CUDA", "CUDAToolkit", "hip"):
                return True
        elif any(value in ("CUDA", "HIP") for value in values[1 if command.lower == "project"
                                                                else 0:]):
            return True
    return False


def _with_host(links: dict[str, list]) -> set[str]:
    """The targets that link hip::host (or what becomes it), themselves or through a target
    of this file that links it other than PRIVATE."""
    direct: dict[str, set[str]] = {}
    public: dict[str, bool] = {}
    for name, calls in links.items():
        items = set()
        for command in calls:
            keyword = ""
            for arg in command.args[1:]:
                if arg.value in _LINK_KEYWORDS:
                    keyword = arg.value
                    continue
                items.add(arg.value)
                if arg.value in _GIVES_HOST and keyword != "PRIVATE":
                    public[name] = True
        direct[name] = items
    found = {name for name, items in direct.items() if items & _GIVES_HOST}
    passing = {name for name in found if public.get(name)}
    changed = True
    while changed:
        changed = False
        for name, items in direct.items():
            if name not in found and items & passing:
                found.add(name)
                changed = True
                passing.add(name)  # a chain: its own link keyword is not followed further
    return found
