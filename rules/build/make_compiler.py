"""MKF001: nvcc becomes hipcc in Makefiles and shell build scripts."""

from __future__ import annotations

import re
from typing import ClassVar

from migrator.buildfiles.context import BuildContext
from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Rule

from .make_commands import view, variable_of
from .make_libraries import links_gpu_library

# a host C/C++ compiler running a command: g++, c++, gcc, cc, clang++, and MPI's wrappers over
# them (mpicc, mpicxx, mpic++, mpiCC) (a path's last part too)
_HOST = re.compile(
    r"^(?:\S*/)?(?:g\+\+|c\+\+|gcc|cc|clang\+\+|clang|mpicc|mpicxx|mpic\+\+|mpiCC)(?:-\d+)?$")
_HOST_VARIABLES = frozenset({"CXX", "CC", "HOSTCXX", "HOST_CXX", "HOSTCC", "HOST_CC", "MPICC",
                             "MPICXX"})
_PLATFORM = b"-D__HIP_PLATFORM_AMD__"
_OBJECT = re.compile(r"^[\w./\-]+\.o$")
_SUFFIX_RULE = re.compile(r"^\.\w+\.o$")

# nvcc as a word of its own or a path's last part (not nvcc_wrapper, NVCC, nvcc.profile)
_NVCC = re.compile(rb"(?<![\w.\-])nvcc(?:\.exe)?(?![\w.\-])")


class MakeCompiler(Rule):
    """The compiler of a Makefile or build script, nvcc, becomes hipcc.

    ## What it does
    Finds `nvcc` where a Makefile or shell script runs it or names it: a variable's value
    (`CC = nvcc`, `NVCC := $(CUDA_PATH)/bin/nvcc`), a recipe or script command
    (`nvcc -c a.cu`, `/usr/local/cuda/bin/nvcc ...`), a conditional (`ifeq ($(CC),nvcc)`), and
    writes `hipcc`. Comments and words that merely contain the letters (`nvcc_wrapper`, the
    variable name `NVCC`) stay.

    MKF012: in a Makefile or script that runs nvcc, or links a CUDA library (`-lcudart`,
    `-lnvrtc`: a project whose host code calls the runtime and compiles kernels at run time
    needs no nvcc), a host compiler's compile command (`g++`, `c++`, `gcc`, `clang++`, MPI's
    `mpicc`/`mpicxx`, `$(CXX)`, `$(CC)`, `$(MPICC)` with `-c`) gets `-D__HIP_PLATFORM_AMD__`
    after the compiler: the host side of the project includes the CUDA (now HIP) runtime
    header. Objects no rule of the file makes (`app: main.o kernel.o` with only `kernel.o:`
    written) come from make's built-in rule, `$(CXX) $(CXXFLAGS) $(CPPFLAGS) -c`: the
    file's `CPPFLAGS` gets the define, else a line `CPPFLAGS += -D__HIP_PLATFORM_AMD__`
    before the first rule. A file with its own pattern or suffix rule for objects
    (`%.o: %.cu`) is left alone: which objects that rule makes depends on the sources present. Its link needs HIP's runtime library, which MKF006 writes where the project linked
    CUDA's (`-lcudart` -> `-lamdhip64`).

    ## Why is this bad on AMD
    nvcc compiles for NVIDIA GPUs only. AMD's HIP documentation ("HIP compilers") builds HIP
    sources with `hipcc`, the driver over ROCm's clang that adds the HIP headers, the runtime
    library and the `--offload-arch` targets. MKF002 to MKF010 convert the flags, libraries,
    paths and source names nvcc was given. A host compiler given `hip/hip_runtime.h` without
    hipcc stops at `#error Must define exactly one of __HIP_PLATFORM_AMD__ or
    __HIP_PLATFORM_NVIDIA__` (HIP's `hip_common.h`, HIP 5.2 and 6.4): hipcc defines the
    platform itself, g++ does not. HIP's `hipconfig --cpp_config` prints what a host compiler
    needs (`-D__HIP_PLATFORM_AMD__= -I$ROCM_PATH/include`), and a host link needs `amdhip64`.

    ## Example
    ```make
    NVCC = $(CUDA_PATH)/bin/nvcc
    app: main.cu host.o
    	nvcc -O3 main.cu host.o -o app
    host.o: host.cpp
    	g++ -I$(CUDA_PATH)/include -c host.cpp
    ```

    ## Use instead
    ```make
    NVCC = $(ROCM_PATH)/bin/hipcc
    app: main.cu host.o
    	hipcc -O3 main.cu host.o -o app
    host.o: host.cpp
    	g++ -D__HIP_PLATFORM_AMD__ -I$(ROCM_PATH)/include -c host.cpp
    ```

    ## Fix safety
    Always fixed. A path keeps its folder: MKF005 maps `$(CUDA_PATH)` and `/usr/local/cuda`
    to ROCm's. The variable that names the compiler keeps its name (`NVCC = hipcc`). The
    platform define is given to every host compile of such a file, also of sources that do
    not include HIP: it defines a macro only HIP's headers read.
    """

    code = "MKF001"
    extra_codes = ("MKF012",)
    name = "make-nvcc-compiler"
    summary = "nvcc in a Makefile or build script becomes hipcc"
    family = "build"
    fix = "always"
    category = "conversion"
    languages: ClassVar[tuple[str, ...]] = ("make", "shell")

    def check(self, ctx: BuildContext):
        seen: set[int] = set()
        for words in view(ctx).texts:
            for word in words:
                for found in _NVCC.finditer(word.text):
                    start = word.start + found.start()
                    if start in seen:
                        continue
                    seen.add(start)
                    end = word.start + found.end()
                    yield Diagnostic("MKF001", f"{word.value}: nvcc -> hipcc", start, end,
                                     Fix("nvcc -> hipcc", (Edit(start, end, b"hipcc"),)),
                                     symbol="nvcc", severity="info")
        yield from _host_compiles(ctx)


def _host_compiles(ctx: BuildContext):
    """MKF012: each host compile command of a file that runs the GPU compiler or links a GPU
    library, without the platform define."""
    made = view(ctx)
    if not any(at is not None for at in made.compiler_positions) \
            and not made.compilers and not links_gpu_library(ctx):
        return
    hosts = {assignment.name for assignment in made.assignments
             if _HOST.match(_command_name(assignment.words))
             and assignment.name not in made.compilers}
    for command in made.commands:
        at = _host_at(command, hosts | (_HOST_VARIABLES - made.compilers))
        if at is None or not any(word.text == b"-c" for word in command) or any(
                word.text == _PLATFORM for word in command):
            continue
        word = command[at]
        yield Diagnostic("MKF012", f"{word.value} -c: the host compiler gets HIP's platform "
                         "define (__HIP_PLATFORM_AMD__)", word.start, word.end,
                         Fix("define __HIP_PLATFORM_AMD__ for the host compiler",
                             (Edit(word.end, word.end, b" " + _PLATFORM),)),
                         symbol=word.value, severity="info")
    yield from _built_in_compiles(ctx)


def _built_in_compiles(ctx: BuildContext):
    """MKF012 where make's built-in rule compiles an object the file names (``app: main.o``
    with no rule making main.o): that rule runs ``$(CXX) $(CXXFLAGS) $(CPPFLAGS) -c``, so
    CPPFLAGS gets the platform define (appended to the file's CPPFLAGS, else a line
    ``CPPFLAGS += ...`` before the first rule)."""
    data = ctx.data
    if ctx.language != "make" or _PLATFORM in data:
        return
    lines = ctx.lines
    values = {line.name: data[line.value_start:line.value_end].decode("utf-8", "replace")
              for line in lines if line.kind == "assignment"}
    named: set[str] = set()
    made: set[str] = set()
    for index, line in enumerate(lines):
        if line.kind == "assignment":
            named.update(word for word in values[line.name].split() if _OBJECT.match(word))
        if line.kind != "rule":
            continue
        head, _, inline = data[line.value_start:line.value_end].decode(
            "utf-8", "replace").partition(";")
        parts = head.split(":")
        if len(parts) < 2:
            continue
        named.update(word for word in parts[-1].split() if _OBJECT.match(word))
        if not inline.strip() and not _recipe_follows(lines, index):
            continue
        if _SUFFIX_RULE.match(parts[0].strip()) or any("%" in part for part in parts[:-1]):
            return  # the file's own rule makes objects (%.o: %.cu may make them all)
        for target in parts[0].split():
            variable = variable_of(target)
            made.update(values.get(variable, "").split() if variable else [target])
    objects = sorted(named - made)
    if not objects:
        return
    first_rule = next(line for line in lines if line.kind == "rule")
    flags = next((line for line in lines if line.kind == "assignment"
                  and line.name == "CPPFLAGS"), None)
    if flags is not None:
        edit = Edit(flags.value_end, flags.value_end, b" " + _PLATFORM)
        at = flags.start
    else:
        edit = Edit(first_rule.start, first_rule.start,
                    b"CPPFLAGS += " + _PLATFORM + ctx.source.newline)
        at = first_rule.start
    yield Diagnostic("MKF012", f"make's built-in rule compiles {', '.join(objects)} with "
                     "$(CXX)/$(CC) $(CPPFLAGS): CPPFLAGS gets HIP's platform define "
                     "(__HIP_PLATFORM_AMD__)", at, at + 1,
                     Fix("define __HIP_PLATFORM_AMD__ in CPPFLAGS", (edit,)),
                     symbol="CPPFLAGS", severity="info")


def _recipe_follows(lines, index: int) -> bool:
    """Whether the rule line at ``index`` has recipe lines (comments and blanks between)."""
    for line in lines[index + 1:]:
        if line.kind == "recipe":
            return True
        if line.kind not in ("comment", "blank"):
            return False
    return False


def _command_name(words) -> str:
    """The command a variable's value runs: its first word after variable references
    (``MPICC = $(PREP) mpicc``, where PREP names a wrapper such as a profiler, often empty)."""
    return next((word.value for word in words if not variable_of(word.value)), "")


def _host_at(command, hosts: set[str]) -> int | None:
    """Where a host compiler runs in a simple command (after NAME=value words), or None."""
    for index, word in enumerate(command):
        text = word.value.lstrip("@+-")
        if _HOST.match(text) or variable_of(text) in hosts:
            return index
        if "=" not in text or text.startswith("-"):
            return None
    return None
