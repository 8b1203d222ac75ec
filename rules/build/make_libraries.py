"""MKF006: CUDA libraries linked in Makefiles and shell build scripts become HIP's
(rules/build/libraries.tsv)."""

from __future__ import annotations

import re
from typing import ClassVar

from migrator.apitables import Library, libraries, library_at, library_named
from migrator.buildfiles.context import BuildContext, marker_fix
from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Marker, Rule
from migrator.versions import format_version

from .make_commands import removal, view

# -lNAME starting a word (or a quoted list's word)
_LINK = re.compile(rb"(?<![^\s\"',])-l([A-Za-z0-9_+\-]+)(?![\w.\-])")
# -l$(NAME) / -l${NAME}: the variable holds a link name
_LINKED_VARIABLE = re.compile(rb"-l\$[({]([A-Za-z_][A-Za-z0-9_]*)[)}]")
# $(NAME:%=-l%), $(addprefix -l,$(NAME)), $(patsubst %,-l%,$(NAME)): each word is a link name
_LINKED_LIST = re.compile(
    rb"\$[({]([A-Za-z_][A-Za-z0-9_]*):%=-l%[)}]"
    rb"|\$[({](?:addprefix\s+-l,|patsubst\s+%,-l%,)\s*\$[({]([A-Za-z_][A-Za-z0-9_]*)[)}]")


class MakeLibraries(Rule):
    """`-lcudart`, `-lcublas`, `-lcufft`... become the HIP libraries (or go).

    ## What it does
    Finds `-lNAME` link flags of CUDA libraries in a Makefile's values and recipes and in a
    shell script's commands, and writes what `rules/build/libraries.tsv` says: `-lcublas` ->
    `-lhipblas`, `-lcurand` -> `-lhiprand`, `-lcufft` -> `-lhipfft`, `-lcusparse` ->
    `-lhipsparse`, `-lcusolver` -> `-lhipsolver`, `-lnccl` -> `-lrccl`, `-lnvrtc` ->
    `-lhiprtc` from ROCm 6.0 (before it hiprtc is part of the HIP runtime: `-lamdhip64`,
    as CMK009 links `hip::host`; Debian 12's HIP 5.2 has no libhiprtc); with `--roc` the
    roc* libraries (`-lrocblas`, `-lrocrand`...). `-lcudart` and `-lcuda` become
    `-lamdhip64`, HIP's runtime, and so does a variable holding the runtime's link name
    where the file links `-l$(NAME)` (`CUDARTLIB ?= cudart`, as CUDA's samples), and each
    word of a list it links `$(NAME:%=-l%)` (`LIBRARIES += nccl`, as nccl-tests);
    `-lcudadevrt` and `-lculibos` are removed. MKF007: libraries with no drop-in counterpart
    are removed from the link with a `# rocmigrate MKF007:` marker saying what and why:
    NVML (`-lnvml`, `-lnvidia-ml`), CUPTI, NPP, nvJPEG, cuFile, TensorRT (`-lnvinfer`,
    `-lnvonnxparser`), and cuDNN unless `--dnn miopen` converts the sources to MIOpen
    (then `-lMIOpen` is written, marked); NVTX (`-lnvToolsExt`) too: its C API becomes
    the no-op support header rocmigrate_nvtx.h (HDR001), nothing to link. A library newer than the target (`hip_added` in the table:
    hipBLASLt came with ROCm 5.5) is removed and marked below that release, unless an older
    library held it (`hip_before`: hiprtc in amdhip64).

    ## Why is this bad on AMD
    The CUDA libraries do not exist on a ROCm system: the link fails with `cannot find
    -lcublas`. The converted sources call the hip* libraries (hipBLAS, hipRAND, hipFFT...),
    which AMD's ROCm documentation links as `-lhipblas` etc. hipcc links the HIP runtime
    (libamdhip64) itself, but a host linker (`g++ main.o kernel.o -lcudart`) does not: without
    `-lamdhip64` it stops at `undefined reference to hipMalloc`. A library that stays in the
    command line with no AMD counterpart (or one the target's ROCm lacks) stops the link with
    `cannot find -lnvidia-ml`, before any marker can be read.

    ## Example
    ```make
    LDFLAGS = -lcudart -lcublas -lcurand
    ```

    ## Use instead
    ```make
    LDFLAGS = -lamdhip64 -lhipblas -lhiprand
    ```

    ## Fix safety
    Fixed where the table maps the library. A marked library needs a person: the marker says
    what the ROCm counterpart is and how it differs, and the link no longer names it (the
    sources that call it fail to link until they are ported).
    """

    code = "MKF006"
    extra_codes = ("MKF007",)
    name = "make-cuda-libraries"
    summary = "CUDA libraries linked in Makefiles and build scripts become HIP's"
    family = "build"
    fix = "sometimes"
    category = "conversion"
    attention_codes: ClassVar[tuple[str, ...]] = ("MKF007",)
    languages: ClassVar[tuple[str, ...]] = ("make", "shell")

    def check(self, ctx: BuildContext):
        roc = ctx.settings.roc
        seen: set[int] = set()
        for words in view(ctx).texts:
            # the libraries this word list links already: -lcuda -lcudart both become
            # -lamdhip64, which is then linked once
            linked = {found.group(1).decode() for word in words
                      for found in _LINK.finditer(word.text)}
            for word in words:
                for found in _LINK.finditer(word.text):
                    start, end = word.start + found.start(), word.start + found.end()
                    name = found.group(1).decode()
                    library = library_named(name, roc)
                    if library is None or start in seen:
                        continue
                    library = library_at(library, ctx.settings.rocm, roc)
                    seen.add(start)
                    if library.mapped and library.link and library.link != name and (
                            library.link in linked) and not (
                            library.added is not None and ctx.settings.rocm < library.added):
                        yield Diagnostic("MKF006", f"-l{name} removed: -l{library.link} is "
                                         "linked already", start, end,
                                         Fix(f"-l{name} for HIP", (removal(ctx.data, start,
                                                                           end),)),
                                         library=name, symbol=name, severity="info")
                        continue
                    linked.add(library.link)
                    yield from _diagnose(ctx, library, name, start, end)
        yield from _library_variables(ctx, seen)


def _diagnose(ctx: BuildContext, library: Library, name: str, start: int, end: int,
              spelled: str = "-l"):
    """MKF006 (mapped: the HIP name or nothing) or MKF007 (marked: removed unless the converted
    sources use the AMD library, which is written) for one link name at ``start:end``."""
    link = library.link
    reason = ""
    if library.added is not None and ctx.settings.rocm < library.added:
        reason = (f"{spelled}{name}: {link or name} was added in ROCm "
                  f"{format_version(library.added)}, after the target "
                  f"{format_version(ctx.settings.rocm)}: removed from the link")
        link = ""
    elif not library.mapped and not (link and _sources_use(ctx, name)):
        reason = f"{spelled}{name}: {library.note}: removed from the link"
        link = ""
    edit = Edit(start, end, f"{spelled}{link}".encode()) if link \
        else removal(ctx.data, start, end)
    if library.mapped and not reason:
        message = (f"{spelled}{name} -> {spelled}{link}" if link else
                   f"{spelled}{name} removed: {library.note}")
        yield Diagnostic("MKF006", message, start, end,
                         Fix(f"{spelled}{name} for HIP", (edit,)), library=name, symbol=name,
                         severity="info")
        return
    reason = reason or f"{spelled}{name}: {library.note}"
    marker = marker_fix(ctx, start, Marker("MKF007", reason))
    edits = (marker.edits if marker else ()) + (edit,)
    yield Diagnostic("MKF007", reason, start, end,
                     Fix(f"mark {spelled}{name}", edits, marker=marker is not None),
                     library=name, symbol=name)


def _sources_use(ctx: BuildContext, name: str) -> bool:
    """Whether the converted sources call the AMD library a marked row names: MIOpen for
    cuDNN only when --dnn miopen renames cuDNN's calls."""
    if name == "cudnn":
        return ctx.settings.dnn == "miopen"
    return True


def _linked_variables(ctx: BuildContext) -> tuple[set[str], set[str]]:
    """The variables the file links: as one name (``-l$(NAME)``) and as a list of names
    (``$(NAME:%=-l%)``)."""
    linked, listed = set(), set()
    for words in view(ctx).texts:
        for word in words:
            linked.update(m.group(1).decode() for m in _LINKED_VARIABLE.finditer(word.text))
            listed.update((m.group(1) or m.group(2)).decode()
                          for m in _LINKED_LIST.finditer(word.text))
    return linked, listed


def links_gpu_library(ctx: BuildContext) -> bool:
    """Whether the file links a CUDA library, or the HIP one it became (``-lcudart``,
    ``-lamdhip64``, ``LIBRARIES := nvrtc`` linked as ``$(LIBRARIES:%=-l%)``): its host
    code calls the GPU runtime or libraries."""
    roc = ctx.settings.roc
    hip = {library.link for library in libraries(roc) if library.link}
    linked, listed = _linked_variables(ctx)
    names = [found.group(1).decode() for words in view(ctx).texts for word in words
             for found in _LINK.finditer(word.text)]
    names += [word.value for assignment in view(ctx).assignments
              if assignment.name in linked | listed for word in assignment.words]
    return any(name in hip or library_named(name, roc) is not None for name in names)


def _library_variables(ctx: BuildContext, seen: set[int]):
    """``CUDARTLIB ?= cudart`` where the file links ``-l$(CUDARTLIB)``, ``LIBRARIES += nccl``
    where it links ``$(LIBRARIES:%=-l%)`` (nccl-tests): the values are link names too."""
    linked, listed = _linked_variables(ctx)
    for assignment in view(ctx).assignments:
        in_list = assignment.name in listed
        if not in_list and (assignment.name not in linked or len(assignment.words) != 1):
            continue
        for word in assignment.words:
            name = word.value
            library = library_named(name, ctx.settings.roc)
            library = library and library_at(library, ctx.settings.rocm, ctx.settings.roc)
            if (library is None or word.start in seen
                    or not re.fullmatch(r"[A-Za-z0-9_+\-]+", name) or library.link == name):
                continue
            removed = (not library.mapped or not library.link or (
                library.added is not None and ctx.settings.rocm < library.added))
            if removed and not in_list:
                continue  # a value removed would leave -l alone: those stay for a person
            seen.add(word.start)
            yield from _diagnose(ctx, library, name, word.start, word.end, spelled="")
