"""CMK007: CUDA sources compile as HIP (LANGUAGE CUDA, and the .cu files of targets)."""

from __future__ import annotations

import re
from typing import ClassVar

from migrator.buildfiles.context import BuildContext, marker_fix
from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Marker, Rule

from .cmake_common import commands, lines_after, property_pairs, set_values

_CU_SUFFIX = re.compile(rb"(?<=[^\s;\"])\.cu(?=[\";]|$)")
_TARGET_KEYWORDS = frozenset({"STATIC", "SHARED", "MODULE", "OBJECT", "EXCLUDE_FROM_ALL",
                              "WIN32", "MACOSX_BUNDLE", "PRIVATE", "PUBLIC", "INTERFACE"})
_NOT_SOURCES = frozenset({"IMPORTED", "ALIAS", "INTERFACE", "FILE_SET"})
_VARIABLE = re.compile(r"^\$\{([A-Za-z0-9_]+)\}$")
# the target's own .cu sources, whatever fills the variables that list them
_TARGET_SOURCES = "rocmigrate_cu_sources"
# CMake's commands that name files without compiling them (or that CMK007/CMK011 handle)
_NOT_COMPILING = frozenset({
    "set", "list", "file", "install", "configure_file", "message", "string", "if", "elseif",
    "else", "endif", "while", "foreach", "option", "source_group", "set_property",
    "set_source_files_properties", "get_filename_component", "get_source_file_property",
    "add_custom_command", "add_custom_target", "add_test", "set_tests_properties",
    "add_executable", "add_library", "target_sources", "include", "find_file", "find_path",
    "cmake_path", "try_compile", "try_run", "execute_process", "return", "unset",
    "get_property", "define_property", "export", "function", "macro", "endfunction",
    "endmacro", "add_subdirectory", "target_link_libraries", "target_compile_options",
    "target_include_directories", "target_compile_definitions"})


class CmakeSources(Rule):
    """CUDA sources compile as HIP.

    ## What it does
    Makes CMake compile the CUDA sources of the project as HIP:
    `set_source_files_properties(... LANGUAGE CUDA)` becomes `LANGUAGE HIP`, and the `.cu`
    files that `add_executable`, `add_library` and `target_sources` build (named there, or
    in a variable this file sets or globs) get `LANGUAGE HIP` in a
    `set_source_files_properties()` written after the target. A `.cu` file named in a call
    of the project's own function or macro (`register_model(stream src/stream.cu)`, whose
    body makes the target) gets the same line after the call; where that command is not
    defined in the file, the line is written and the call marked (CMK008). A target whose
    sources come from a variable this file does not fill (`add_executable(${EXE_NAME}
    ${IMPL_SOURCES})` where an included file's macro appends `src/${NAME}/${ARGN}`, or a
    function's `${ARGN}`) gets `LANGUAGE HIP` on the `.cu` files among its own `SOURCES`
    (`get_target_property`, `list(FILTER)`), whatever path they were added by; the calls of
    commands other files define then need no line of their own. With
    `--rename-ext`, where the converted files are written as `.hip`, the script names them
    so instead (every `a.cu`, and a glob's `*.cu`). A glob that mixes `.cu` with other files
    is marked (CMK008).

    ## Why is this bad on AMD
    CMake gives a source the language of its extension: `.cu` files belong to the CUDA
    language, and CMake's HIP language claims `.hip` files only. Once the project enables
    HIP instead of CUDA, a `.cu` file belongs to no enabled language and is not compiled at
    all (a link error later, far from the cause). AMD's "Using CMake" HIP documentation
    compiles other files as HIP by setting their `LANGUAGE` source property to `HIP`.

    ## Example
    ```cmake
    add_executable(saxpy main.cu util.cpp)
    ```

    ## Use instead
    ```cmake
    add_executable(saxpy main.cu util.cpp)
    set_source_files_properties(main.cu PROPERTIES LANGUAGE HIP)
    ```

    ## Fix safety
    Always fixed where the file names the sources, or where a target lists a variable filled
    elsewhere (its `.cu` sources are read from the target when CMake configures). A source
    property holds for the targets of the folder it is set in, by the path as written: the
    line after a call of another file's function holds only if it adds the file by that path
    (marked), the target's own list always. A glob of `.cu` with other files is marked,
    since setting the language of the whole list would compile C++ files as HIP.
    """

    code = "CMK007"
    extra_codes = ("CMK008",)
    attention_codes = ("CMK008",)
    name = "cmake-cuda-sources"
    summary = "CUDA sources (LANGUAGE CUDA, .cu files of targets) compile as HIP"
    family = "build"
    fix = "sometimes"
    category = "conversion"
    languages: ClassVar[tuple[str, ...]] = ("cmake",)

    def check(self, ctx: BuildContext):
        script = ctx.script
        for command in script.commands:
            for key, values in property_pairs(command):
                if key.value == "LANGUAGE":
                    for value in values:
                        if value.value == "CUDA":
                            yield Diagnostic("CMK007", "LANGUAGE CUDA becomes HIP", value.start,
                                             value.end, Fix("LANGUAGE HIP", (
                                                 Edit(value.start, value.end, b"HIP"),)),
                                             symbol="LANGUAGE", severity="info")
        if ctx.settings.rename_ext:
            yield from _renamed(ctx)
        else:
            yield from _languages(ctx)


def _renamed(ctx: BuildContext):
    """Every ``.cu`` name the script writes becomes ``.hip`` (the files are renamed so)."""
    for command in ctx.script.commands:
        for arg in command.args:
            if arg.kind == "bracket":
                continue
            for match in _CU_SUFFIX.finditer(arg.text):
                start = arg.start + match.start()
                yield Diagnostic("CMK007", f"{arg.value}: the source is written as .hip",
                                 start, start + 3, Fix(".cu -> .hip", (
                                     Edit(start, start + 3, b".hip"),)),
                                 symbol=".cu", severity="info")


def _languages(ctx: BuildContext):
    """The ``.cu`` sources of targets get LANGUAGE HIP where nothing gives them it."""
    script = ctx.script
    variables: dict[str, list[str]] = {}
    globs: dict[str, object] = {}
    for command in script.commands:
        args = command.args
        if command.lower == "set" and args:
            variables[args[0].value] = [item for arg in set_values(command)
                                        for item in arg.value.split(";")]
        elif command.lower == "list" and len(args) > 2 and args[0].value == "APPEND":
            variables.setdefault(args[1].value, []).extend(
                item for arg in args[2:] for item in arg.value.split(";"))
        elif command.lower == "file" and len(args) > 2 and args[0].value in (
                "GLOB", "GLOB_RECURSE"):
            globs[args[1].value] = command
    gpu_file = _names_gpu_code(script)
    filtered = {command.args[1].value for command in commands(script, "get_target_property")
                if len(command.args) > 2 and command.args[0].value == _TARGET_SOURCES}
    has_hip = set()
    covered = False  # a target here takes LANGUAGE HIP for its own .cu sources
    for command in commands(script, "set_source_files_properties", "set_property"):
        if any(key.value == "LANGUAGE" and [v.value for v in values] in (["HIP"], ["CUDA"])
               for key, values in property_pairs(command)):
            has_hip.update(arg.value for arg in command.args)
    for command in commands(script, "add_executable", "add_library", "target_sources"):
        args = command.args[1:]
        if any(arg.value in _NOT_SOURCES for arg in args[:1]) or any(
                arg.value in ("IMPORTED", "ALIAS") for arg in args):
            continue
        wanted: list[str] = []
        opaque = False  # a variable this file does not fill: its .cu files are not known
        for arg in args:
            value = arg.value
            if value in _TARGET_KEYWORDS or value in has_hip:
                continue
            if value.endswith(".cu") and "$<" not in value:
                wanted.append(value)
                continue
            variable = _VARIABLE.match(value)
            if variable is None:
                continue
            name = variable.group(1)
            if name in globs:
                patterns = [a.value for a in globs[name].args[2:]
                            if a.value not in ("LIST_DIRECTORIES", "RELATIVE",
                                               "CONFIGURE_DEPENDS", "FOLLOW_SYMLINKS")]
                cuda = [p for p in patterns if p.endswith(".cu")]
                if cuda and len(cuda) == len(patterns):
                    wanted.append(value)
                elif cuda:
                    message = (f"{value} globs .cu files with others: give the .cu files "
                               "LANGUAGE HIP (set_source_files_properties) by hand")
                    yield Diagnostic("CMK008", message, arg.start, arg.end,
                                     marker_fix(ctx, command.start, Marker("CMK008", message)),
                                     symbol=".cu")
            elif name in variables:
                wanted.extend(item for item in variables[name]
                              if item.endswith(".cu") and item not in has_hip)
            else:
                opaque = True
                # a list filled elsewhere (not a function's own arguments) may hold the .cu
                # files other files' commands register
                covered = covered or gpu_file and not name.startswith("ARGV") and name != "ARGN"
        target = command.args[0].value
        if opaque and gpu_file and target not in filtered:
            filtered.add(target)
            lines = [f"get_target_property({_TARGET_SOURCES} {target} SOURCES)".encode(),
                     f'list(FILTER {_TARGET_SOURCES} INCLUDE REGEX "\\\\.cu$")'.encode(),
                     f"set_source_files_properties(${{{_TARGET_SOURCES}}} PROPERTIES "
                     "LANGUAGE HIP)".encode()]
            yield Diagnostic("CMK007", f"{command.name}({target}): the .cu files among its "
                             "sources (listed in variables filled elsewhere) compile as HIP "
                             "(LANGUAGE HIP)", command.start, command.end,
                             Fix("LANGUAGE HIP", (lines_after(ctx.data, command, lines),)),
                             symbol=".cu", severity="info")
        wanted = list(dict.fromkeys(wanted))
        if wanted:
            listed = " ".join(wanted)
            line = f"set_source_files_properties({listed} PROPERTIES LANGUAGE HIP)".encode()
            yield Diagnostic("CMK007", f"{command.name}({command.args[0].value}): {listed} "
                             "compile as HIP (LANGUAGE HIP)", command.start, command.end,
                             Fix("LANGUAGE HIP", (lines_after(ctx.data, command, [line]),)),
                             symbol=".cu", severity="info")
            has_hip.update(wanted)
    yield from _passed(ctx, has_hip, covered)


def _names_gpu_code(script) -> bool:
    """Whether the script is about GPU code: it names a .cu file or enables CUDA or HIP."""
    return any(arg.value.endswith(".cu") or command.lower in ("project", "enable_language")
               and arg.value in ("CUDA", "HIP") for command in script.commands
               for arg in command.args if arg.kind != "bracket")


def _passed(ctx: BuildContext, has_hip: set[str], covered: bool):
    """``.cu`` files named in a call of the project's own function or macro
    (``register_model(stream src/stream.cu)``): their target is made inside it, where the
    file has no name CMK007 can see. They get LANGUAGE HIP after the call (a source property
    of this folder, as the targets the call makes are); a command not defined in this file is
    also marked, since what it does with the name cannot be read here, unless ``covered``: a
    target of this file lists variables filled elsewhere and takes the language for its own
    .cu sources, by whatever path such a command adds them."""
    script = ctx.script
    defined = {command.args[0].value.lower() for command in commands(script, "function",
                                                                     "macro")
               if command.args}
    for command in script.commands:
        if command.lower in _NOT_COMPILING or command.lower.startswith("cuda_"):
            continue
        wanted = list(dict.fromkeys(
            arg.value for arg in command.args if arg.kind != "bracket"
            and arg.value.endswith(".cu") and "$" not in arg.value and ";" not in arg.value
            and arg.value not in has_hip))
        if not wanted:
            continue
        listed = " ".join(wanted)
        line = f"set_source_files_properties({listed} PROPERTIES LANGUAGE HIP)".encode()
        edits = [lines_after(ctx.data, command, [line])]
        code = "CMK007"
        message = f"{command.name}(): {listed} compile as HIP (LANGUAGE HIP)"
        if command.lower not in defined and covered:
            continue
        if command.lower not in defined:
            code = "CMK008"
            message = (f"{command.name}() is not defined in this file: LANGUAGE HIP is set "
                       f"here for {listed}, which holds if it adds them by this path, relative "
                       "to this folder (else set it where it does)")
            marking = marker_fix(ctx, command.start, Marker("CMK008", message))
            edits[:0] = marking.edits if marking is not None else ()
        yield Diagnostic(code, message, command.start, command.end,
                         Fix("LANGUAGE HIP", tuple(edits)), symbol=".cu",
                         **({"severity": "info"} if code == "CMK007" else {}))
        has_hip.update(wanted)
