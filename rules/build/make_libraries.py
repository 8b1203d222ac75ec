"""MKF006: CUDA libraries linked in Makefiles and shell build scripts become HIP's
(rules/build/libraries.tsv)."""

from __future__ import annotations

import re
from typing import ClassVar

from migrator.apitables import library_named
from migrator.buildfiles.context import BuildContext, marker_fix
from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Marker, Rule

from .make_commands import removal, view

# -lNAME starting a word (or a quoted list's word)
_LINK = re.compile(rb"(?<![^\s\"',])-l([A-Za-z0-9_+]+)(?![\w.\-])")


class MakeLibraries(Rule):
    """`-lcudart`, `-lcublas`, `-lcufft`... become the HIP libraries (or go).

    ## What it does
    Finds `-lNAME` link flags of CUDA libraries in a Makefile's values and recipes and in a
    shell script's commands, and writes what `rules/build/libraries.tsv` says: `-lcublas` ->
    `-lhipblas`, `-lcurand` -> `-lhiprand`, `-lcufft` -> `-lhipfft`, `-lcusparse` ->
    `-lhipsparse`, `-lcusolver` -> `-lhipsolver`, `-lnccl` -> `-lrccl`, `-lnvrtc` ->
    `-lhiprtc`; with `--roc` the roc* libraries (`-lrocblas`, `-lrocrand`...). `-lcudart`,
    `-lcuda`, `-lcudadevrt` and `-lculibos` are removed. Libraries with no drop-in counterpart
    get a `# rocmigrate MKF007:` marker: cuDNN (`-lMIOpen` written, the sources need
    porting), NVTX (`-lroctx64`), NVML (`-lrocm_smi64`), CUPTI, NPP, nvJPEG, cuFile (left).

    ## Why is this bad on AMD
    The CUDA libraries do not exist on a ROCm system: the link fails with `cannot find
    -lcublas`. The converted sources call the hip* libraries (hipBLAS, hipRAND, hipFFT...),
    which AMD's ROCm documentation links as `-lhipblas` etc.; hipcc links the HIP runtime
    (libamdhip64) itself, so `-lcudart` has no counterpart to keep.

    ## Example
    ```make
    LDFLAGS = -lcudart -lcublas -lcurand
    ```

    ## Use instead
    ```make
    LDFLAGS = -lhipblas -lhiprand
    ```

    ## Fix safety
    Fixed where the table maps the library. A marked library needs a person: the marker says
    what the ROCm counterpart is and how it differs.
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
            for word in words:
                for found in _LINK.finditer(word.text):
                    start, end = word.start + found.start(), word.start + found.end()
                    name = found.group(1).decode()
                    library = library_named(name, roc)
                    if library is None or start in seen:
                        continue
                    seen.add(start)
                    edit = Edit(start, end, f"-l{library.link}".encode()) if library.link \
                        else removal(ctx.data, start, end)
                    if library.mapped:
                        message = (f"-l{name} -> -l{library.link}" if library.link else
                                   f"-l{name} removed: {library.note}")
                        yield Diagnostic("MKF006", message, start, end,
                                         Fix(f"-l{name} for HIP", (edit,)), library=name, symbol=name,
                                         severity="info")
                        continue
                    reason = f"-l{name}: {library.note}"
                    marker = marker_fix(ctx, start, Marker("MKF007", reason))
                    edits = (marker.edits if marker else ()) + ((edit,) if library.link else ())
                    yield Diagnostic("MKF007", reason, start, end,
                                     Fix(f"mark -l{name}", edits, marker=marker is not None)
                                     if edits else None, library=name, symbol=name)
