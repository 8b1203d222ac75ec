"""CMK016: nvcc flags in CMake scripts become hipcc's (the shared table: nvcc_flags.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from migrator.buildfiles.context import BuildContext, marker_fix
from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.registry import code_enabled
from migrator.rule import Marker, Rule

from .cmake_common import set_values
from .cmake_custom_commands import assigned_values, compiler_runs
from .nvcc_flags import offload_arch_words, translate

_FLAG_VARIABLE = re.compile(r"^CMAKE_CUDA_FLAGS(?:_[A-Z]+)?$")
# an option list for the CUDA language only: $<$<COMPILE_LANGUAGE:CUDA>:...>
_CUDA_ONLY = re.compile(r"\$<\$<(?:COMPILE_LANGUAGE:CUDA|COMPILE_LANG_AND_ID:CUDA(?:,[^>]*)?)>:")
_OPTION_COMMANDS = frozenset({"target_compile_options", "add_compile_options",
                              "target_link_options", "add_link_options"})
_WORD = re.compile(rb"[^\s;]+")


@dataclass(frozen=True)
class _Word:
    text: str
    start: int
    end: int


class CmakeFlags(Rule):
    """nvcc flags in CMake scripts become hipcc's.

    ## What it does
    Reads the nvcc options CMake scripts pass: the values of `CMAKE_CUDA_FLAGS` (and
    `CMAKE_CUDA_FLAGS_<CONFIG>`; FindCUDA's `CUDA_NVCC_FLAGS` become these through CMK011),
    options guarded by `$<COMPILE_LANGUAGE:CUDA>`, nvcc options given to
    `target_compile_options` and its kin, and the words a custom command passes to the
    compiler it runs (CMK019), with the values of the variables they name (`${NVCC_FLAGS}` ->
    `set(NVCC_FLAGS ...)`, `list(APPEND NVCC_FLAGS ...)`: replacements are list elements
    there). Each one hipcc does not take as written becomes what it takes
    (rules/build/nvcc_flags.tsv, shared with the Makefile rules):
    `--use_fast_math` -> `-ffast-math`, `-Xcompiler -fopenmp` -> `-fopenmp`, `-rdc=true`
    -> `-fgpu-rdc`, `-arch=sm_80` / `-gencode ...` -> `--offload-arch=` the AMD GPUs;
    options without use on AMD (`--expt-relaxed-constexpr`) are removed; those without a
    counterpart (`-Xptxas -v`) are removed or kept with a marker (CMK017); `-fatbin`,
    `-cubin` and `-ptx` become `--genco` with a CMK017 marker (an AMD code object, which
    `hipModuleLoad` loads).

    ## Why is this bad on AMD
    HIP's compiler is clang (hipcc, or CMake's HIP language with ROCm's clang, as AMD's
    "Using CMake" HIP documentation sets up): it rejects nvcc's options ("unknown argument:
    '--expt-relaxed-constexpr'"), or, for those it ignores, silently builds something else
    than asked (no fast math, no relocatable device code).

    ## Example
    ```cmake
    set(CMAKE_CUDA_FLAGS "${CMAKE_CUDA_FLAGS} --use_fast_math --expt-relaxed-constexpr")
    target_compile_options(app PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-fopenmp>)
    ```

    ## Use instead
    ```cmake
    set(CMAKE_HIP_FLAGS "${CMAKE_HIP_FLAGS} -ffast-math")
    target_compile_options(app PRIVATE $<$<COMPILE_LANGUAGE:HIP>:-fopenmp>)
    ```

    ## Fix safety
    Fixed as the shared table says (each replacement checked with Debian's hipcc 5.2). An
    architecture held in a variable (`-arch=${SM}`) becomes the AMD GPUs of
    `--offload-arch`. Marked options need a person: the marker says why.
    """

    code = "CMK016"
    extra_codes = ("CMK017",)
    attention_codes = ("CMK017",)
    name = "cmake-nvcc-flags"
    summary = "nvcc flags in CMake scripts (CMAKE_CUDA_FLAGS, CUDA options) become hipcc's"
    family = "build"
    fix = "sometimes"
    category = "conversion"
    chains = True  # the flags it moves are what CMK003 and CMK014 read
    languages: ClassVar[tuple[str, ...]] = ("cmake",)

    def check(self, ctx: BuildContext):
        archs = ctx.settings.offload_archs
        for command in ctx.script.commands:
            for words, separator in _flag_lists(ctx, command):
                for translation in translate([word.text for word in words], archs):
                    yield _diagnostic(ctx, words, translation, separator, archs)


def _flag_lists(ctx: BuildContext, command):
    """The lists of words that are nvcc options in ``command``, each with the separator
    written between replacement words (';' inside a generator expression and in the lists a
    custom command passes)."""
    data = ctx.data
    args = command.args
    lower = command.lower
    values = []
    if lower == "set" and args and _FLAG_VARIABLE.match(args[0].value):
        values = set_values(command)
    elif lower in ("string", "list") and len(args) > 2 and args[0].value in (
            "APPEND", "PREPEND") and _FLAG_VARIABLE.match(args[1].value):
        values = list(args[2:])
    if values:
        yield [word for arg in values for word in _words(data, arg)], b" "
        return
    runs = compiler_runs(ctx)
    assigned = assigned_values(command)
    if assigned is not None and assigned[0] in runs.flag_variables:
        # a list a custom command passes to nvcc: each replacement word one element
        yield [word for arg in assigned[1] for word in _words(data, arg)], b";"
        return
    for run in runs.of(command):
        yield [word for arg in run.args for word in _words(data, arg)], b" "
    for arg in args:
        if arg.kind == "bracket":
            continue
        text = arg.text
        guarded = False
        for match in _CUDA_ONLY.finditer(text.decode("utf-8", "replace")):
            guarded = True
            start = match.end()
            end = _closing(text, start)
            yield [_Word(m.group().decode("utf-8", "replace"), arg.start + m.start(),
                         arg.start + m.end()) for m in _WORD.finditer(text, start, end)], b";"
        if not guarded and lower in _OPTION_COMMANDS and b"$<" not in text:
            words = _words(data, arg)
            if words:
                yield words, b" "


def _words(data: bytes, arg) -> list[_Word]:
    """The space- or ';'-separated words of an argument (inside its quotes)."""
    if arg.kind == "bracket":
        return []
    start, end = arg.start, arg.end
    if arg.kind == "quoted":
        start, end = start + 1, end - 1
    return [_Word(m.group().decode("utf-8", "replace"), m.start(), m.end())
            for m in _WORD.finditer(data, start, end)]


def _closing(text: bytes, start: int) -> int:
    """Where the generator expression whose content starts at ``start`` closes."""
    depth = 0
    at = start
    while at < len(text):
        if text.startswith(b"$<", at):
            depth += 1
            at += 2
            continue
        if text[at : at + 1] == b">":
            if depth == 0:
                return at
            depth -= 1
        at += 1
    return len(text)


def _diagnostic(ctx: BuildContext, words: list[_Word], translation, separator: bytes, archs):
    start, end = words[translation.first].start, words[translation.last - 1].end
    replacement = translation.words
    if translation.action == "arch" and translation.variable:
        replacement = offload_arch_words(archs)  # ${SM} held an NVIDIA architecture
    edits = []
    if replacement is not None:
        if replacement:
            edits.append(Edit(start, end, separator.join(w.encode() for w in replacement)))
        else:
            edits.append(_removal(ctx.data, words, translation.first, translation.last))
    written = " ".join(word.text for word in words[translation.first : translation.last])
    if translation.needs_marker:
        message = translation.reason
        marker = marker_fix(ctx, start, Marker("CMK017", message))
        fix = None
        if marker is not None:
            fix = Fix(f"mark {written}", (*marker.edits, *edits), marker=True)
        elif edits:
            fix = Fix(f"remove {written}", tuple(edits))
        return Diagnostic("CMK017", message, start, end, fix, symbol=translation.option)
    return Diagnostic("CMK016", translation.reason, start, end,
                      Fix(f"{written} -> {' '.join(replacement or ()) or 'nothing'}",
                          tuple(edits)), symbol=translation.option, severity="info")


def _removal(data: bytes, words: list[_Word], first: int, last: int) -> Edit:
    """Deleting words[first:last] with the separator before them (after them when they come
    first in their list)."""
    start, end = words[first].start, words[last - 1].end
    before = start
    while before > 0 and data[before - 1 : before] in (b" ", b"\t", b";"):
        before -= 1
    if before < start and first > 0:
        return Edit(before, end)
    after = end
    while after < len(data) and data[after : after + 1] in (b" ", b"\t", b";"):
        after += 1
    if last < len(words) and words[last].start == after:
        return Edit(start, after)
    return Edit(before if before < start else start, end)


def flags_pending(ctx: BuildContext, command) -> bool:
    """Does ``command`` hold nvcc options this rule will still rewrite? The rules renaming
    what marks them as CUDA's (CMAKE_CUDA_FLAGS: CMK003; $<COMPILE_LANGUAGE:CUDA>: CMK014)
    wait for it, since it reads only what is still named CUDA."""
    settings = ctx.settings
    if not code_enabled(CmakeFlags.code, settings.select, settings.ignore):
        return False
    return any(translation.words is not None
               for words, _ in _flag_lists(ctx, command)
               for translation in translate([word.text for word in words],
                                            settings.offload_archs))
