"""MKF011: the link of relocatable device code needs -fgpu-rdc on hipcc's command too."""

from __future__ import annotations

from typing import ClassVar

from migrator.buildfiles.context import BuildContext
from migrator.buildfiles.make import Word
from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Rule

from .make_commands import references, view
from .nvcc_flags import unquote

# options that make relocatable device code: nvcc's and hipcc's spellings
_RDC = frozenset({"-fgpu-rdc", "-dc", "--device-c", "-rdc=true", "--relocatable-device-code=true",
                  "-rdc", "--relocatable-device-code"})
# options after which a compiler command makes no program (compiles, preprocesses, archives)
_NO_LINK = frozenset({"-c", "-dc", "--device-c", "--compile", "-E", "--preprocess", "-M", "-MM",
                      "-S", "-fsyntax-only", "-lib", "--lib", "-dlink", "--device-link", "-ptx",
                      "--ptx", "-cubin", "--cubin", "-fatbin", "--fatbin", "-cuda", "--cuda",
                      "--genco"})


class MakeRdcLink(Rule):
    """A command that links relocatable device code gets `-fgpu-rdc` too.

    ## What it does
    In a Makefile or build script that compiles relocatable device code (`-dc`, `-rdc=true`,
    which MKF004 turns into `-fgpu-rdc`), each command that runs the compiler to link (no `-c`,
    `-E`, `-S`... among the words it reads, its variables' values included) and is not given
    `-fgpu-rdc` gets it, right after the compiler's name.

    ## Why is this bad on AMD
    nvcc links relocatable device code by itself: a program linked from `-dc` objects gets its
    device link step whatever its link line says. With HIP, the device code of `-fgpu-rdc`
    objects is linked only when the link command says `-fgpu-rdc` too (AMD's HIP programming
    guide, "Compiling with relocatable device code"); without it, the link fails with
    `undefined reference to '__hip_fatbin'` (Debian's hipcc 5.2 checked).

    ## Example
    ```make
    src/%.o: src/%.cu
    	$(NVCC) $(NVCCFLAGS) -dc $< -o $@
    app: src/main.o src/kernels.o
    	$(NVCC) $(NVCCFLAGS) $^ -o $@
    ```

    ## Use instead
    ```make
    src/%.o: src/%.cu
    	$(NVCC) $(NVCCFLAGS) -fgpu-rdc -c $< -o $@
    app: src/main.o src/kernels.o
    	$(NVCC) -fgpu-rdc $(NVCCFLAGS) $^ -o $@
    ```

    ## Fix safety
    Safe: the option only adds the device link the objects need; a link of objects without
    relocatable device code is unchanged by it.
    """

    code = "MKF011"
    name = "make-rdc-link"
    summary = "a link of relocatable device code gets -fgpu-rdc on hipcc's command"
    family = "build"
    fix = "always"
    category = "conversion"
    languages: ClassVar[tuple[str, ...]] = ("make", "shell")

    def check(self, ctx: BuildContext):
        links = []
        relocatable = False
        for command, at, read in compiler_commands(ctx):
            relocatable = relocatable or bool(read & _RDC)
            if not read & _NO_LINK and not read & _RDC:  # (-dc would make it no link)
                links.append(command[at])
        if not relocatable:
            return
        for compiler in links:
            yield Diagnostic(
                "MKF011", f"{compiler.value} links relocatable device code: hipcc needs "
                "-fgpu-rdc on the link command too (nvcc links device code by itself)",
                compiler.start, compiler.end,
                Fix("add -fgpu-rdc to the link", (Edit(compiler.end, compiler.end,
                                                       b" -fgpu-rdc"),)),
                symbol=compiler.value)


def assigned_words(ctx: BuildContext) -> dict[str, list[Word]]:
    """Each variable of the file and the words of all its assignments (once per round)."""
    values = ctx.cache.get("make_assigned_words")
    if values is None:
        values = ctx.cache["make_assigned_words"] = {}
        for assignment in view(ctx).assignments:
            values.setdefault(assignment.name, []).extend(assignment.words)
    return values


def compiler_commands(ctx: BuildContext) -> list[tuple[tuple[Word, ...], int, set[str]]]:
    """(command, where its compiler is, the words it reads: ``words_read`` from the compiler
    on) of each command of the file that runs the compiler, once per round."""
    found = ctx.cache.get("make_compiler_commands")
    if found is None:
        made = view(ctx)
        values = assigned_words(ctx)
        found = ctx.cache["make_compiler_commands"] = [
            (command, at, words_read(command[at:], values))
            for command, at in zip(made.commands, made.compiler_positions) if at is not None]
    return found


def words_read(words, values: dict[str, list[Word]]) -> set[str]:
    """The words a compiler command reads, the values of the variables it names expanded
    (transitively; each variable once)."""
    found: set[str] = set()
    pending = list(words)
    expanded: set[str] = set()
    while pending:
        word = pending.pop()
        text = unquote(word.value)
        found.add(text)
        for name, _, _ in references(word.text):
            if name not in expanded:
                expanded.add(name)
                pending.extend(values.get(name, ()))
    return found
