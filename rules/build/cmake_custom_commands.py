"""CMK019: nvcc run by a CMake custom command (add_custom_command, add_custom_target,
execute_process) becomes hipcc.

``compiler_runs`` reads where a script runs nvcc itself: the words after the compiler in each
``COMMAND`` and the variables those words name, transitively (``${NVCC_FLAGS}`` ->
``set(NVCC_FLAGS ...)``, ``list(APPEND NVCC_FLAGS ...)``). CMK016 (cmake_flags.py) translates
those words as nvcc's options; this rule replaces the compiler.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from migrator.buildfiles.cmake import Argument, Command
from migrator.buildfiles.context import BuildContext, line_indent
from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Rule

from .cmake_common import newline_of, set_values
from .nvcc_flags import offload_arch_words, translate

HIPCC_VARIABLE = "HIP_HIPCC_EXECUTABLE"  # hipcc in hip-config.cmake and FindHIP
_FIND_HIPCC = (f'find_program({HIPCC_VARIABLE} hipcc HINTS "${{ROCM_PATH}}/bin" '
               f'"$ENV{{ROCM_PATH}}/bin" /opt/rocm/bin)').encode()
_RUNNERS = frozenset({"add_custom_command", "add_custom_target", "execute_process"})
# the keywords that end a COMMAND's words in the three commands
_KEYWORDS = frozenset({
    "COMMAND", "OUTPUT", "TARGET", "PRE_BUILD", "PRE_LINK", "POST_BUILD", "MAIN_DEPENDENCY",
    "DEPENDS", "BYPRODUCTS", "IMPLICIT_DEPENDS", "WORKING_DIRECTORY", "COMMENT", "DEPFILE",
    "JOB_POOL", "JOB_SERVER_AWARE", "VERBATIM", "APPEND", "USES_TERMINAL",
    "COMMAND_EXPAND_LISTS", "DEPENDS_EXPLICIT_ONLY", "CODEGEN", "SOURCES", "ALL", "TIMEOUT",
    "RESULT_VARIABLE", "RESULTS_VARIABLE", "OUTPUT_VARIABLE", "ERROR_VARIABLE", "INPUT_FILE",
    "OUTPUT_FILE", "ERROR_FILE", "OUTPUT_QUIET", "ERROR_QUIET", "COMMAND_ECHO",
    "OUTPUT_STRIP_TRAILING_WHITESPACE", "ERROR_STRIP_TRAILING_WHITESPACE", "ENCODING",
    "ECHO_OUTPUT_VARIABLE", "ECHO_ERROR_VARIABLE", "COMMAND_ERROR_IS_FATAL"})
# the CUDA packages' and CMake's names for nvcc
_NVCC_VARIABLES = frozenset({"CUDAToolkit_NVCC_EXECUTABLE", "CUDA_NVCC_EXECUTABLE",
                             "CMAKE_CUDA_COMPILER"})
_NVCC = re.compile(r"^(?:\S*/)?nvcc(?:\.exe)?$")
_HIPCC = re.compile(r"^(?:\S*/)?hipcc(?:\.exe)?$")
_REFERENCE = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$")


@dataclass(frozen=True)
class CompilerRun:
    """One ``COMMAND`` of ``command`` that runs nvcc (or hipcc, once converted)."""

    command: Command
    compiler: Argument
    args: tuple[Argument, ...]  # the words after the compiler, up to the next keyword
    nvcc: bool  # still nvcc: CMK019 replaces the compiler
    variables: frozenset[str]  # the variables it passes, transitively (${NVCC_FLAGS})
    values: tuple[Argument, ...]  # the values the script gives those variables


@dataclass(frozen=True)
class CompilerRuns:
    """Where a script runs the compiler itself, read once per round (ctx.cache)."""

    runs: tuple[CompilerRun, ...]
    flag_variables: frozenset[str]  # variables whose values the runs pass to the compiler

    def of(self, command: Command) -> list[CompilerRun]:
        return [run for run in self.runs if run.command is command]


def compiler_runs(ctx: BuildContext) -> CompilerRuns:
    cached = ctx.cache.get("cmake_compiler_runs")
    if cached is None:
        cached = ctx.cache["cmake_compiler_runs"] = _read(ctx.script.commands)
    return cached


def assigned_values(command: Command) -> tuple[str, list[Argument]] | None:
    """The variable a command gives values to and those values: set(X v...),
    list(APPEND|PREPEND X v...), list(INSERT X i v...), string(APPEND|PREPEND X v...)."""
    args = command.args
    if command.lower == "set" and args:
        return args[0].value, set_values(command)
    if command.lower in ("list", "string") and len(args) > 1 and args[0].value in (
            "APPEND", "PREPEND"):
        return args[1].value, list(args[2:])
    if command.lower == "list" and len(args) > 2 and args[0].value == "INSERT":
        return args[1].value, list(args[3:])
    return None


def _read(commands: tuple[Command, ...]) -> CompilerRuns:
    nvcc_variables = _nvcc_variables(commands)
    assignments: dict[str, list[Argument]] = {}
    for command in commands:
        assigned = assigned_values(command)
        if assigned is not None:
            assignments.setdefault(assigned[0], []).extend(assigned[1])
    runs = []
    for command in commands:
        if command.lower not in _RUNNERS:
            continue
        for words in _command_words(command):
            value = words[0].value
            reference = _REFERENCE.match(value)
            named = reference.group(1) if reference else ""
            nvcc = bool(_NVCC.match(value)) or named in nvcc_variables
            if nvcc or _HIPCC.match(value) or named == HIPCC_VARIABLE:
                variables, values = _passed(words[1:], assignments)
                runs.append(CompilerRun(command, words[0], tuple(words[1:]), nvcc, variables,
                                        values))
    return CompilerRuns(tuple(runs), frozenset(name for run in runs for name in run.variables))


def _passed(words: list[Argument], assignments: dict[str, list[Argument]]):
    """The variables ``words`` name as whole words (``${NVCC_FLAGS}``), transitively, and the
    values the script gives them."""
    variables: set[str] = set()
    values: list[Argument] = []
    pending = list(words)
    while pending:
        reference = _REFERENCE.match(pending.pop().value)
        if reference is None or reference.group(1) in variables:
            continue
        variables.add(reference.group(1))
        given = assignments.get(reference.group(1), [])
        values += given
        pending += given
    return frozenset(variables), tuple(values)


def _nvcc_variables(commands: tuple[Command, ...]) -> set[str]:
    """nvcc's variables: the packages' and those the script sets to nvcc
    (``set(NVCC ${CUDAToolkit_NVCC_EXECUTABLE})``, ``find_program(NVCC nvcc)``)."""
    found = set(_NVCC_VARIABLES)
    changed = True
    while changed:
        changed = False
        for command in commands:
            args = command.args
            if not args or args[0].value in found:
                continue
            if command.lower == "set":
                values = [arg.value for arg in set_values(command)]
            elif command.lower == "find_program":
                values = [arg.value for arg in args[1:]]
            else:
                continue
            if any(_NVCC.match(value) or (_REFERENCE.match(value) and _REFERENCE.match(
                    value).group(1) in found) for value in values):
                found.add(args[0].value)
                changed = True
    return found


def _command_words(command: Command) -> list[list[Argument]]:
    """The commands a custom command runs: the words after each COMMAND (and after
    add_custom_target's name and ALL), up to the next keyword."""
    found: list[list[Argument]] = []
    current: list[Argument] | None = None
    args = command.args
    if command.lower == "add_custom_target" and args:
        current = []
        args = args[1:]
    for arg in args:
        if arg.kind != "bracket" and arg.value in _KEYWORDS:
            if current:
                found.append(current)
            current = [] if arg.value == "COMMAND" else None
        elif current is not None:
            current.append(arg)
    if current:
        found.append(current)
    return found


class CmakeCustomCommands(Rule):
    """nvcc run by a custom command becomes hipcc.

    ## What it does
    Finds the commands a script runs itself (`COMMAND` of `add_custom_command`,
    `add_custom_target` and `execute_process`) whose program is nvcc: `nvcc` or a path to it,
    `${CUDAToolkit_NVCC_EXECUTABLE}`, `${CUDA_NVCC_EXECUTABLE}`, `${CMAKE_CUDA_COMPILER}`, or
    a variable the script sets to one of them (`find_program(NVCC nvcc)`). The program becomes
    `${HIP_HIPCC_EXECUTABLE}`, hipcc as `find_package(hip)` and FindHIP name it, also found
    by a `find_program` written before the first such command (under `ROCM_PATH`,
    `/opt/rocm` or the `PATH`) for a script that finds hip later or not at all. The
    options the command passes, its own words and the values of the variables they name
    (`${NVCC_FLAGS}` -> `set(NVCC_FLAGS "-fatbin")`, `list(APPEND NVCC_FLAGS ...)`), are
    CMK016's: `-fatbin`, `-cubin`, `-ptx` become `--genco` (with a CMK017 marker), `-arch`
    and `-gencode` the AMD GPUs of `--offload-arch`. A command compiling a `.cu` (or `.hip`)
    file that names no architecture gets those GPUs after the compiler.

    ## Why is this bad on AMD
    A custom command runs the program it names, whatever the project's languages are: nvcc
    cannot compile for an AMD GPU (and is not installed beside ROCm), and CMake's HIP language
    does not reach it. Once the script finds hip instead of CUDAToolkit, nvcc's variable is
    empty and CMake writes a command that runs nothing: the program builds without the file
    it loads. hipcc is `HIP_HIPCC_EXECUTABLE` in hip-config.cmake and FindHIP (Debian's HIP
    5.2); CMAKE_HIP_COMPILER is ROCm's clang, which has no `--genco`. The usual such
    command compiles a kernel file for the driver API (`nvcc -fatbin k.cu -o k.fatbin`,
    loaded with `cuModuleLoad`): `hipcc --genco --offload-arch=gfx90a k.cu -o k.fatbin` writes
    the code object `hipModuleLoad` loads (Debian's hipcc 5.2 checked).

    ## Example
    ```cmake
    set(NVCC_FLAGS "-fatbin" "-arch=${COMPUTE_ARCH}")
    add_custom_command(OUTPUT k.fatbin
        COMMAND "${CUDAToolkit_NVCC_EXECUTABLE}" ${NVCC_FLAGS} k.cu -o k.fatbin)
    ```

    ## Use instead
    ```cmake
    # rocmigrate CMK017: -fatbin: no fatbin on AMD: --genco writes an AMD code object, ...
    set(NVCC_FLAGS "--genco" "--offload-arch=gfx90a;--offload-arch=gfx942")
    find_program(HIP_HIPCC_EXECUTABLE hipcc HINTS "${ROCM_PATH}/bin" ...)
    add_custom_command(OUTPUT k.fatbin
        COMMAND "${HIP_HIPCC_EXECUTABLE}" ${NVCC_FLAGS} k.cu -o k.fatbin)
    ```

    ## Fix safety
    Always fixed. The variables that held nvcc (`set(NVCC ...)`, the package's) are left to
    CMK009/CMK010. A variable the command passes is converted for nvcc's options wherever the
    script uses it. Debian installs hipcc as `/usr/bin/hipcc`, which the `PATH` finds.
    """

    code = "CMK019"
    name = "cmake-custom-command-nvcc"
    summary = "nvcc run by add_custom_command / add_custom_target / execute_process becomes hipcc"
    family = "build"
    fix = "always"
    category = "conversion"
    languages: ClassVar[tuple[str, ...]] = ("cmake",)

    def check(self, ctx: BuildContext):
        finder_needed = b"find_program(" + HIPCC_VARIABLE.encode() not in ctx.data
        for run in compiler_runs(ctx).runs:
            if not run.nvcc:
                continue
            yield _diagnostic(ctx, run, finder_needed)
            finder_needed = False


def _diagnostic(ctx: BuildContext, run: CompilerRun, finder_needed: bool) -> Diagnostic:
    data = ctx.data
    compiler = run.compiler
    # the fix starts before the command's line, where CMK010 writes its marker about the nvcc
    # variable: that marker waits a round, then finds the variable gone
    at = data.rfind(b"\n", 0, run.command.start) + 1
    finder = (line_indent(data, run.command.start) + _FIND_HIPCC + newline_of(data)
              if finder_needed else b"")
    edits = [Edit(at - 1, at, data[at - 1 : at] + finder) if at else Edit(0, 0, finder)]
    hipcc = "${" + HIPCC_VARIABLE + "}"
    written = f'"{hipcc}"' if compiler.kind == "quoted" else hipcc
    texts = [part for arg in run.args + run.values
             for part in re.split(r"[\s;]+", arg.value) if part]
    if _compiles_device_code(texts) and not _names_architecture(texts):
        written += " " + " ".join(offload_arch_words(ctx.settings.offload_archs))
    edits.append(Edit(compiler.start, compiler.end, written.encode()))
    message = (f"{compiler.value} runs nvcc in {run.command.name}(): it runs hipcc "
               f"({hipcc}, found by find_program)")
    return Diagnostic("CMK019", message, compiler.start, compiler.end,
                      Fix(f"{compiler.value} -> {hipcc}", tuple(edits)),
                      symbol=compiler.value, severity="info")


def _compiles_device_code(texts: list[str]) -> bool:
    """Does a run compile a CUDA or HIP source (not ``nvcc --version``)?"""
    return any(text.lower().endswith((".cu", ".hip")) for text in texts)


def _names_architecture(texts: list[str]) -> bool:
    """Do a run's words (its own and its variables' values) give an architecture: nvcc's or
    --offload-arch?"""
    return any(text.startswith("--offload-arch") for text in texts) or any(
        translation.action == "arch" for translation in translate(texts, ()))
