"""MKF002: CUDA architecture options in Makefiles and shell build scripts become the AMD
targets (--offload-arch)."""

from __future__ import annotations

import functools
import re
from typing import ClassVar

from migrator.buildfiles.context import BuildContext, marker_fix
from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Marker, Rule

from .make_commands import references, replacement_edit, span, translations, view
from .make_rdc_link import assigned_words, compiler_commands
from .nvcc_flags import options, translate, unquote

# what a variable holding a CUDA architecture may say: sm_60, compute_70, sm_90a, native, all
_FOREACH = re.compile(rb"\$[({]foreach[ \t]")
_CUDA_ARCH = re.compile(r"^(?:(?:sm|compute|lto)_\d+[a-z]?|native|all|all-major)$")


class MakeArchitectures(Rule):
    """CUDA architecture options become `--offload-arch=` with the AMD targets.

    ## What it does
    Finds nvcc's architecture options where nvcc reads them (see MKF004 for where that is):
    `-arch=sm_XX`, `-arch sm_XX`, `--gpu-architecture=...`, `-code=...`, `-gencode
    arch=compute_XX,code=sm_XX` (often several). All of them together become one
    `--offload-arch=` per target of `--offload-arch` (default gfx90a and gfx942), written where
    the first one was; the others are removed. Where the architecture is a variable
    (`ARCH = sm_60` ... `-arch=$(ARCH)`, HeCBench's form), the option becomes
    `--offload-arch=$(ARCH)` and each definition of the variable the comma-separated target
    list, so that `make ARCH=gfx942` still chooses; a `$(foreach sm,$(SMS),-gencode
    arch=compute_$(sm),code=sm_$(sm))` loop that makes only architecture options becomes the
    targets; a definition that is no list of CUDA
    architectures (`ARCH ?= $(shell ...)`) gets a `# rocmigrate MKF003:` marker instead. A
    command writing a code object (`-fatbin`, `-cubin`, `-ptx`, which MKF005 makes `--genco`)
    that reads no architecture gets the targets after the compiler, unless it reads a
    variable the file does not set (which may hold one).

    ## Why is this bad on AMD
    CUDA's `sm_XX` / `compute_XX` name NVIDIA GPUs; clang rejects them for AMD. AMD's HIP
    documentation selects the GPU with `--offload-arch=gfxNNN` (MI250: gfx90a, MI300: gfx942),
    one option per target or a comma-separated list (Debian's hipcc 5.2 / clang 15 take
    both). Without any, hipcc asks `rocm_agent_enumerator` for this machine's GPU and fails
    to link where there is none; a `--genco` code object gets gfx803 (Debian's hipcc 5.2),
    which an MI250 or MI300 does not load. clang 15 (Debian's HIP 5.2) does not know gfx942: convert
    with `--offload-arch gfx90a` for it.

    ## Example
    ```make
    ARCH = sm_60
    CFLAGS = -O3 -arch=$(ARCH)
    GENCODE = -gencode arch=compute_70,code=sm_70 -gencode arch=compute_80,code=sm_80
    ```

    ## Use instead
    ```make
    ARCH = gfx90a,gfx942
    CFLAGS = -O3 --offload-arch=$(ARCH)
    GENCODE = --offload-arch=gfx90a --offload-arch=gfx942
    ```

    ## Fix safety
    Always fixed: the AMD targets come from the settings, whatever the CUDA ones were. A
    variable holding part of an architecture (`sm_$(SM)`) is replaced by the literal list.
    """

    code = "MKF002"
    extra_codes = ("MKF003",)
    name = "make-cuda-architectures"
    summary = "CUDA architecture options in Makefiles and build scripts become --offload-arch"
    family = "build"
    fix = "always"
    category = "conversion"
    attention_codes: ClassVar[tuple[str, ...]] = ("MKF003",)
    languages: ClassVar[tuple[str, ...]] = ("make", "shell")

    def check(self, ctx: BuildContext):
        seen: set[int] = set()
        variables: set[str] = set()
        for words, found in translations(ctx):
            if found.action != "arch":
                continue
            variables.add(found.variable)
            start, end = span(words, found)
            if start in seen:
                continue
            seen.add(start)
            yield Diagnostic("MKF002", found.reason, start, end,
                             Fix("architecture for hipcc",
                                 (replacement_edit(ctx, words, found),)),
                             symbol=found.option, severity="info")
        variables.discard("")
        if variables:
            yield from _definitions(ctx, variables)
        yield from _foreach_calls(ctx, seen)
        yield from _code_objects(ctx)


def _foreach_calls(ctx: BuildContext, seen: set[int]):
    """A ``$(foreach cc,$(SMS),-gencode arch=compute_$(cc),code=sm_$(cc))`` that the compiler
    reads (one word to the shared reading) and whose body is nothing but architecture options
    becomes the AMD targets: the loop made one CUDA option per architecture."""
    archs = ctx.settings.offload_archs
    targets = " ".join(f"--offload-arch={arch}" for arch in archs)
    for words in view(ctx).flag_lists:
        for word in words:
            body = _foreach_body(ctx.data, word.start, word.end)
            if body is None or word.start in seen:
                continue
            inner = ctx.words(*body)
            found = translate([part.value for part in inner], archs)
            covered = sum(item.last - item.first for item in found if item.action == "arch")
            if not inner or covered != len(inner):
                continue
            seen.add(word.start)
            yield Diagnostic("MKF002", f"{found[0].reason} (for each of a $(foreach) list)",
                             word.start, word.end,
                             Fix("architecture for hipcc", (Edit(word.start, word.end,
                                                                 targets.encode()),)),
                             symbol=found[0].option, severity="info")


def _foreach_body(data: bytes, start: int, end: int) -> tuple[int, int] | None:
    """Where the body (third argument) of a word that is one ``$(foreach VAR,LIST,BODY)``
    call is, else None."""
    found = _FOREACH.match(data, start, end)
    if found is None or data[end - 1 : end] not in b")}":
        return None
    depth, commas, at = 1, 0, found.end()
    while at < end - 1:
        if data[at : at + 2] in (b"$(", b"${"):
            depth += 1
            at += 2
            continue
        char = data[at : at + 1]
        if char in (b")", b"}"):
            depth -= 1
            if depth == 0:
                return None  # the call ends before the word does
        elif char == b"," and depth == 1:
            commas += 1
            if commas == 2:
                return at + 1, end - 1
        at += 1
    return None


def _definitions(ctx: BuildContext, variables: set[str]):
    targets = ",".join(ctx.settings.offload_archs)
    for assignment in view(ctx).assignments:
        if assignment.name not in variables:
            continue
        values = [part for word in assignment.words
                  for part in unquote(word.value).replace(",", " ").split()]
        if values and all(_CUDA_ARCH.match(value) for value in values):
            start, end = assignment.words[0].start, assignment.words[-1].end
            yield Diagnostic("MKF002", f"{assignment.name} = {' '.join(values)}: CUDA "
                             f"architecture; AMD targets {targets}", start, end,
                             Fix("architecture for hipcc", (Edit(start, end,
                                                                 targets.encode()),)),
                             symbol=assignment.name, severity="info")
        elif not all(value.startswith("gfx") for value in values):
            reason = (f"{assignment.name} is the --offload-arch target: set it to AMD "
                      f"GPUs ({targets})")
            yield Diagnostic("MKF003", reason, assignment.name_start, assignment.name_start
                             + len(assignment.name),
                             marker_fix(ctx, assignment.name_start, Marker("MKF003", reason)),
                             symbol=assignment.name)


@functools.lru_cache(maxsize=1)
def _code_object_options() -> frozenset[str]:
    """The nvcc options (each name) that write a code object, and hipcc's --genco."""
    return frozenset({name for name, option in options().items() if option.hip == "--genco"}
                     | {"--genco"})


def _code_objects(ctx: BuildContext):
    """A command writing a code object (-fatbin, -cubin, -ptx: --genco once converted) that
    reads no architecture, through its own words or the file's variables, gets the targets
    after the compiler: hipcc would write one for gfx803 or the build machine's GPU. A
    command reading a variable the file does not set (the environment's, an include's) is
    left alone."""
    table = options()
    makes_code_object = _code_object_options()
    targets = " ".join(f"--offload-arch={arch}" for arch in ctx.settings.offload_archs)
    values = assigned_words(ctx)
    for command, at, read in compiler_commands(ctx):
        if not read & makes_code_object:
            continue
        if any(text.startswith("--offload-arch") or getattr(
                table.get(text.partition("=")[0]), "action", "") == "arch" for text in read):
            continue
        if any(name not in values for text in read
               for name, _, _ in references(text.encode())):
            continue
        compiler = command[at]
        yield Diagnostic("MKF002", f"{compiler.value} writes a code object for no architecture: "
                         f"AMD targets {','.join(ctx.settings.offload_archs)}", compiler.start,
                         compiler.end, Fix("architecture for hipcc",
                                           (Edit(compiler.end, compiler.end,
                                                 b" " + targets.encode()),)),
                         symbol=compiler.value, severity="info")
