"""CMK009: find_package(CUDA / CUDAToolkit), CUDA's imported targets, link names and result
variables become HIP's packages and targets (rules/build/libraries.tsv)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from migrator.apitables import Library, library_at, library_named
from migrator.buildfiles.cmake import Command
from migrator.buildfiles.context import BuildContext, marker_fix
from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Marker, Rule

from .cmake_common import (commands, lines_after, lines_before, link_item_library,
                           remove_arguments, remove_command)
from .cmake_custom_commands import compiler_runs
from .cmake_languages import language_arguments

_CUDA_PACKAGES = frozenset({"CUDA", "CUDAToolkit"})
_KEPT_KEYWORDS = ("REQUIRED", "QUIET")
_LINK_COMMANDS = frozenset({"target_link_libraries", "link_libraries"})
_LIST_COMMANDS = frozenset({"set", "list"})
# the project's own commands that collect libraries to link (BabelStream's
# register_link_library(), which appends to the list target_link_libraries() gets)
_OWN_LINK_COMMAND = re.compile(r"link_?librar")
_IMPORTED = re.compile(r"(?<![A-Za-z0-9_])CUDA::([A-Za-z0-9_]+)")
_LINK_FLAG = re.compile(r"^-l[A-Za-z0-9_]+$")
# no library file: never a link name (only their packages' targets are)
_HEADER_ONLY = frozenset({"cub", "CUB", "thrust", "Thrust"})
# FindCUDA's and FindCUDAToolkit's result variables
_LIBRARY_VARIABLE = re.compile(
    r"\$\{CUDA_(?:([A-Za-z0-9]+)_LIBRARY|([A-Z]+)_LIBRARIES|(LIBRARIES))\}")
_RENAMED = {"CUDA_INCLUDE_DIRS": "hip_INCLUDE_DIRS", "CUDAToolkit_INCLUDE_DIRS": "hip_INCLUDE_DIRS",
            "CUDA_TOOLKIT_INCLUDE": "hip_INCLUDE_DIRS", "CUDA_FOUND": "hip_FOUND",
            "CUDAToolkit_FOUND": "hip_FOUND"}
_NAMED = re.compile(r"(?<![A-Za-z0-9_])(CUDA(?:Toolkit)?_[A-Za-z0-9_]+)")
_VERSION = "the CUDA version is no HIP version: test hip_VERSION instead"
_FOLDER = "a CUDA toolkit folder: HIP's come from find_package(hip) (ROCM_PATH)"
_NVCC = "nvcc: the HIP compiler is CMAKE_HIP_COMPILER"
_NO_HIP = {
    **dict.fromkeys(("CUDA_VERSION", "CUDA_VERSION_MAJOR", "CUDA_VERSION_MINOR",
                     "CUDA_VERSION_STRING", "CUDAToolkit_VERSION", "CUDAToolkit_VERSION_MAJOR",
                     "CUDAToolkit_VERSION_MINOR", "CUDAToolkit_VERSION_PATCH"), _VERSION),
    **dict.fromkeys(("CUDA_TOOLKIT_ROOT_DIR", "CUDA_SDK_ROOT_DIR", "CUDAToolkit_ROOT",
                     "CUDAToolkit_ROOT_DIR", "CUDAToolkit_BIN_DIR", "CUDAToolkit_LIBRARY_DIR",
                     "CUDAToolkit_LIBRARY_ROOT", "CUDAToolkit_TARGET_DIR"), _FOLDER),
    **dict.fromkeys(("CUDA_NVCC_EXECUTABLE", "CUDAToolkit_NVCC_EXECUTABLE"), _NVCC),
}


# FindCUDAToolkit's CUDA::toolkit: the toolkit's include folders, which hip::host gives
_TOOLKIT = Library(("toolkit",), "", "hip", "hip::host", True, "")


def _unknown(name: str) -> Library:
    """A CUDA:: target libraries.tsv does not know: marked."""
    return Library((name,), "", "", "", False, "no HIP counterpart known to rocmigrate")


@dataclass(frozen=True)
class _Link:
    """One reference to a CUDA library: its span, what replaces it (None: remove the
    argument), the library, and the command holding it."""

    start: int
    end: int
    written: str
    library: Library
    command: Command
    whole: object = None  # the Argument, when the reference is the whole argument


class CmakePackages(Rule):
    """CUDA's CMake packages, targets and libraries become HIP's.

    ## What it does
    `find_package(CUDA ...)` and `find_package(CUDAToolkit ...)` become
    `find_package(hip ...)` followed by the `find_package()` of each HIP library the file
    links (hipBLAS, hipRAND, hipFFT, hipSPARSE, hipSOLVER, RCCL...; rocBLAS and the other
    roc* libraries with `--roc`), keeping `REQUIRED` / `QUIET`. CUDA's imported targets
    (`CUDA::cudart`, `CUDA::cublas`...), link names (`cublas`, `-lcublas`) and FindCUDA's
    result variables (`${CUDA_LIBRARIES}`, `${CUDA_CUBLAS_LIBRARIES}`,
    `${CUDA_curand_LIBRARY}`) become the HIP imported targets (`hip::host`,
    `roc::hipblas`, `hip::hiprand`...); `CUDA_INCLUDE_DIRS` / `CUDAToolkit_INCLUDE_DIRS`
    become `hip_INCLUDE_DIRS`, `CUDA_FOUND` `hip_FOUND`. A file that links a HIP library
    without finding its package gets the `find_package()` before the first use. FindCUDA
    compiled with nvcc outside CMake's languages: where `find_package(CUDA)` replaces it,
    HIP is added to the file's `project()` languages (else `enable_language(HIP)`).
    `CUDA::nvrtc` becomes `hiprtc::hiprtc` (with `find_package(hiprtc)`) from ROCm 6.0, and
    `hip::host` before it, where the HIP runtime (`amdhip64`) holds hiprtc (Debian 12's
    HIP 5.2 has no hiprtc package). Libraries without a counterpart a build can use (cuDNN,
    NVTX, CUPTI, NVML, NPP, nvJPEG...) and the CUDA toolkit's versions and folders are
    marked (CMK010); such a library is also removed from `target_link_libraries()` /
    `link_libraries()` and from the project's own commands that collect libraries to link
    (a name with `link_librar` in it: BabelStream's `register_link_library("nvidia-ml")`),
    whose arguments are read as link names too. The project's own searches for a CUDA
    library look for the HIP one: `find_library(NCCL_LIBRARY NAMES nccl)` searches `rccl`,
    `find_path(NCCL_INCLUDE_DIR NAMES nccl.h)` the header the sources now include
    (`rccl/rccl.h`).

    ## Why is this bad on AMD
    The CUDA toolkit's packages, libraries and folders do not exist on a ROCm system: the
    configure step fails, or links nothing that works. AMD's "Using CMake" HIP documentation
    finds HIP with `find_package(hip)` and each ROCm library with its own package
    (`find_package(hipblas)` gives `roc::hipblas`), whose imported targets carry the
    include folders and libraries.

    ## Example
    ```cmake
    find_package(CUDAToolkit REQUIRED)
    target_link_libraries(app PRIVATE CUDA::cudart CUDA::cublas -lcurand)
    ```

    ## Use instead
    ```cmake
    find_package(hip REQUIRED)
    find_package(hipblas REQUIRED)
    find_package(hiprand REQUIRED)
    target_link_libraries(app PRIVATE hip::host roc::hipblas hip::hiprand)
    ```

    ## Fix safety
    Fixed where libraries.tsv maps the library (CUDA's device runtime `cudadevrt` and
    `culibos` need nothing on AMD: they are removed). A version or COMPONENTS list of the
    CUDA package is dropped: HIP's versions differ. A marked library is removed from the
    link commands (left there, it names a target or library that does not exist on AMD and
    stops the configure or the link) and its marker says so; elsewhere (a `set()` list) it
    stays as written, marked.
    """

    code = "CMK009"
    extra_codes = ("CMK010",)
    attention_codes = ("CMK010",)
    name = "cmake-cuda-packages"
    summary = "CUDA packages, imported targets, link names and result variables become HIP's"
    family = "build"
    fix = "sometimes"
    category = "conversion"
    chains = True  # the HIP package it finds is what CMK018 reads
    languages: ClassVar[tuple[str, ...]] = ("cmake",)

    def check(self, ctx: BuildContext):
        script = ctx.script
        roc = ctx.settings.roc
        found = {command.args[0].value.lower() for command in commands(script, "find_package")
                 if command.args and command.args[0].value not in _CUDA_PACKAGES}
        cuda_finds = [command for command in commands(script, "find_package")
                      if command.args and command.args[0].value in _CUDA_PACKAGES]
        links = [_at_target(link, ctx.settings.rocm, roc) for link in _links(script, roc)]
        for link in links:
            if not link.library.mapped:
                removed = link.whole is not None and _links_libraries(link.command)
                message = (f"{link.written}: {link.library.note or 'no HIP counterpart'}"
                           + ("; removed from the link line" if removed else ""))
                fix = marker_fix(ctx, link.start, Marker("CMK010", message))
                if removed:  # left there, it stops the link: the marker says what went
                    marking = fix.edits if fix is not None else ()
                    fix = Fix(f"remove {link.written}", (*marking, *remove_arguments(
                        ctx.data, [link.whole])))
                yield Diagnostic("CMK010", message, link.start, link.end, fix,
                                 symbol=link.written)
        mapped = [link for link in links if link.library.mapped]
        packages = list(dict.fromkeys(link.library.package for link in mapped
                                      if link.library.package))
        enables = _enables_gpu_language(script)
        for command in cuda_finds:
            keywords = [arg.value for arg in command.args if arg.value in _KEPT_KEYWORDS]
            wanted = [package for package in dict.fromkeys(["hip", *packages])
                      if package.lower() not in found]
            lines = [f"find_package({' '.join([package, *keywords])})".encode()
                     for package in wanted]
            edits = [Edit(command.start, command.end, lines[0]) if lines
                     else remove_command(ctx.data, command)]
            if len(lines) > 1:
                edits.append(lines_after(ctx.data, command, lines[1:]))
            if command.args[0].value == "CUDA" and not enables:
                edits.append(_enable_hip(ctx.data, script, command))
                enables = True
            yield Diagnostic("CMK009", f"find_package({command.args[0].value}) becomes "
                             f"find_package() of {', '.join(wanted) or 'nothing (hip is found)'}",
                             command.start, command.end, Fix("find_package(hip)",
                                                             tuple(edits)),
                             symbol=command.args[0].value, severity="info")
            found.update(package.lower() for package in ["hip", *packages])
        for link in mapped:
            target = link.library.target
            if target:
                edits = [Edit(link.start, link.end, target.encode())]
            else:
                edits = remove_arguments(ctx.data, [link.whole]) if link.whole else []
            package = link.library.package
            if package and package.lower() not in found:
                edits.insert(0, lines_before(ctx.data, link.command,
                                             [f"find_package({package} REQUIRED)".encode()]))
                found.add(package.lower())
            if not edits:
                continue
            message = (f"{link.written} becomes {target}" if target else
                       f"{link.written}: nothing to link on AMD ({link.library.note})")
            yield Diagnostic("CMK009", message, link.start, link.end,
                             Fix(f"{link.written} -> {target or 'nothing'}", tuple(edits)),
                             library=link.library.cuda_names[0], symbol=link.written,
                             severity="info")
        yield from _variables(ctx)
        yield from _searches(ctx)


def _at_target(link: _Link, rocm: tuple[int, ...], roc: bool) -> _Link:
    """The library as the target links it (libraries.tsv's hip_before: hiprtc's own package
    and target exist from ROCm 6.0; before, hip::host links it)."""
    library = library_at(link.library, rocm, roc)
    if library is link.library:
        return link
    return _Link(link.start, link.end, link.written, library, link.command, link.whole)


def _enables_gpu_language(script) -> bool:
    return any(name in ("CUDA", "HIP") for command in commands(
        script, "project", "enable_language") for name in command.values()[1 if command.lower
                                                                          == "project" else 0:])


def _enable_hip(data: bytes, script, find: Command) -> Edit:
    """FindCUDA compiled with nvcc outside CMake's languages: HIP sources need the HIP
    language, added to the file's project(), else enabled before ``find``."""
    projects = commands(script, "project")
    if not projects:
        return lines_before(data, find, [b"enable_language(HIP)"])
    project = projects[0]
    languages = language_arguments(project)
    if languages:
        return Edit(languages[-1].end, languages[-1].end, b" HIP")
    last = project.args[-1] if project.args else None
    at = last.end if last else project.open + 1
    return Edit(at, at, b" LANGUAGES C CXX HIP")  # project()'s default languages, and HIP


def _links_libraries(command: Command) -> bool:
    """Whether every argument of ``command`` is a library to link (its first one too, in
    the project's own commands), or a link command's target."""
    return command.lower in _LINK_COMMANDS or bool(_OWN_LINK_COMMAND.search(command.lower))


def _links(script, roc: bool):
    """Every reference to a CUDA library: imported targets anywhere, link names where
    libraries are listed, FindCUDA's library variables anywhere."""
    for command in script.commands:
        lists_links = _links_libraries(command)
        own = lists_links and command.lower not in _LINK_COMMANDS
        for index, arg in enumerate(command.args):
            if arg.kind == "bracket":
                continue
            text = arg.text.decode("utf-8", "replace")
            for match in _IMPORTED.finditer(text):
                name = match.group(1)
                library = (_TOOLKIT if name == "toolkit" else library_named(name, roc)
                           or library_named(name.lower(), roc) or _unknown(name))
                whole = arg if match.group() == arg.value else None
                yield _Link(arg.start + match.start(), arg.start + match.end(),
                            match.group(), library, command, whole)
            for match in _LIBRARY_VARIABLE.finditer(text):
                name = match.group(1) or match.group(2) or "cudart"
                library = library_named(name, roc) or library_named(name.lower(), roc)
                if library is not None:
                    whole = arg if match.group() == arg.value else None
                    yield _Link(arg.start + match.start(), arg.start + match.end(),
                                match.group(), library, command, whole)
            if not own and (arg.kind != "unquoted" or index == 0
                            and command.lower != "link_libraries"):
                continue  # a target's name (an own command names libraries only)
            value = arg.value
            is_flag = bool(_LINK_FLAG.match(value))
            if (lists_links or command.lower in _LIST_COMMANDS and is_flag) \
                    and value not in _HEADER_ONLY and not value.startswith("CUDA::"):
                library = link_item_library(value, roc)
                if library is not None and (is_flag or value[:1].isalpha()):
                    yield _Link(arg.start, arg.end, value, library, command, arg)


# the keywords that end find_library()'s / find_path()'s NAMES list
_SEARCH_KEYWORDS = frozenset({
    "NAMES", "NAMES_PER_DIR", "HINTS", "PATHS", "PATH_SUFFIXES", "DOC", "REQUIRED",
    "NO_CACHE", "ENV", "REGISTRY_VIEW", "VALIDATOR", "NO_DEFAULT_PATH",
    "NO_PACKAGE_ROOT_PATH", "NO_CMAKE_PATH", "NO_CMAKE_ENVIRONMENT_PATH",
    "NO_SYSTEM_ENVIRONMENT_PATH", "NO_CMAKE_SYSTEM_PATH", "NO_CMAKE_INSTALL_PREFIX",
    "CMAKE_FIND_ROOT_PATH_BOTH", "ONLY_CMAKE_FIND_ROOT_PATH", "NO_CMAKE_FIND_ROOT_PATH"})


def _searched_names(command: Command) -> list:
    """The names a find_library() / find_path() / find_file() call searches for."""
    args = command.args[1:]
    if args and args[0].value == "NAMES":
        names = []
        for arg in args[1:]:
            if arg.value in _SEARCH_KEYWORDS:
                break
            names.append(arg)
        return names
    return args[:1]


def _searches(ctx: BuildContext):
    """A project's own search for a CUDA library (nccl-tests: ``find_library(NCCL_LIBRARY
    NAMES nccl nccl_static)``, ``find_path(NCCL_INCLUDE_DIR NAMES nccl.h)``) looks for the
    HIP library and header the converted sources use (rccl, rccl/rccl.h)."""
    roc, rocm = ctx.settings.roc, ctx.settings.rocm
    for command in commands(ctx.script, "find_library", "find_path", "find_file"):
        for arg in _searched_names(command):
            if arg.kind == "bracket" or "$" in arg.value:
                continue
            name = arg.value
            if command.lower == "find_library":
                bare = name[3:] if name.startswith("lib") else name
                library = library_named(bare, roc)
                library = library and library_at(library, rocm, roc)
                if library is None or not library.mapped or not library.link \
                        or library.link == bare:
                    continue
                written = ("lib" if bare != name else "") + library.link
            else:
                header = ctx.tables.headers.get(name)
                if header is None or header.hip_header in ("", "-") or (
                        header.hip_added is not None and header.hip_added > rocm):
                    continue
                written = header.hip_header
            yield Diagnostic("CMK009", f"{command.name}() looks for {written}, not {name}",
                             arg.start, arg.end, Fix(f"{name} -> {written}", (
                                 Edit(arg.start, arg.end, written.encode()),)),
                             symbol=name, severity="info")


def _variables(ctx: BuildContext):
    """The CUDA packages' include folders and FOUND become HIP's; versions and folders are
    marked."""
    runs = compiler_runs(ctx)
    for command in ctx.script.commands:
        marked = set()
        # nvcc that a custom command runs is replaced by hipcc (CMK019): no marker for it
        replaced = {run.compiler.start for run in runs.of(command) if run.nvcc}
        for arg in command.args:
            if arg.kind == "bracket" or b"CUDA" not in arg.text or arg.start in replaced:
                continue
            text = arg.text.decode("utf-8", "replace")
            for match in _NAMED.finditer(text):
                name = match.group(1)
                start, end = arg.start + match.start(), arg.start + match.end()
                if name in _RENAMED:
                    yield Diagnostic("CMK009", f"{name} becomes {_RENAMED[name]}", start, end,
                                     Fix(f"{name} -> {_RENAMED[name]}",
                                         (Edit(start, end, _RENAMED[name].encode()),)),
                                     symbol=name, severity="info")
                    continue
                if name in _NO_HIP and name not in marked:
                    marked.add(name)
                    message = f"{name}: {_NO_HIP[name]}"
                    yield Diagnostic("CMK010", message, start, end,
                                     marker_fix(ctx, start, Marker("CMK010", message)),
                                     symbol=name)
