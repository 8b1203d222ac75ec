"""MKF004: nvcc's options in Makefiles and shell build scripts become hipcc's (table:
rules/build/nvcc_flags.tsv)."""

from __future__ import annotations

import re
from typing import ClassVar

from migrator.buildfiles.context import BuildContext
from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Rule

from .make_commands import marked_fix, replacement_edit, span, translations, view

# make's $(addprefix -Xcompiler ,$(CCFLAGS)): each host flag wrapped for nvcc
_HOST_PREFIX = re.compile(rb"^\$\(addprefix[ \t]+(?:-Xcompiler|--compiler-options)[ \t]*,"
                          rb"(.*)\)$", re.DOTALL)


class MakeNvccFlags(Rule):
    """nvcc's options become hipcc's; those with no counterpart are removed or marked.

    ## What it does
    Reads the words nvcc is given in a Makefile or shell script: the arguments of each command
    that runs the compiler, the words after the compiler in the variable naming it
    (`NVCC = nvcc -O3`), and the values of the variables those words use, transitively
    (`$(CFLAGS)`, `$(NVCC_FLAGS)`; NVCCFLAGS, CUDA_FLAGS, GENCODE_FLAGS... by name too). Each
    nvcc option is looked up in `rules/build/nvcc_flags.tsv`, which lists every option of
    `nvcc --help` (CUDA 13) with what hipcc takes instead:

    - mapped: `-dc` -> `-fgpu-rdc -c`, `-rdc=true` -> `-fgpu-rdc`, `--use_fast_math` ->
      `-ffast-math`, `-lineinfo` -> `-gline-tables-only`, `-G` -> `-g`, `-x cu` -> `-x hip`,
      `--default-stream per-thread` -> `-fgpu-default-stream=per-thread`, `-ftz=true` ->
      `-fgpu-flush-denormals-to-zero`, `-fmad=false` -> `-ffp-contract=off`;
    - host and linker options: `-Xcompiler -fopenmp,-Wall` (also quoted, or `=`) -> `-fopenmp
      -Wall`, `$(addprefix -Xcompiler ,$(CCFLAGS))` -> `$(CCFLAGS)`; `-Xlinker -rpath,/x` ->
      `-Wl,-rpath,/x`;
    - dropped, the finding saying why: `--expt-relaxed-constexpr`, `--extended-lambda`,
      `-ccbin g++`, `-Wno-deprecated-gpu-targets`, `-cudart shared`...;
    - removed with a `# rocmigrate MKF005:` marker (a person decides what replaces it):
      `-maxrregcount=N`, `-Xptxas ...`, `-Xnvlink ...`, `-diag-suppress N`...;
    - device code a program loads at run time (`cuModuleLoad`): `-fatbin`, `-cubin` and
      `-ptx` (and their `--` spellings) become `--genco`, with a MKF005 marker saying the file
      is now an AMD code object, which the converted `hipModuleLoad` loads;
    - left with a marker where removing it would change what the command does (`-dlink`,
      `-lib`, `-odir`) or the value has no counterpart (`-rdc=maybe`).

    Options hipcc takes as written (`-O3`, `-g`, `-std=c++17`, `-I`, `-D`, `-c`, `-o`) and
    words that are no nvcc option stay. Architecture options are MKF002's.

    ## Why is this bad on AMD
    hipcc runs clang, which rejects nvcc's own options (`clang: error: unknown argument`) or,
    for a few, reads them differently: `-lineinfo` passed on reaches the linker as
    `-l ineinfo`, `--use_fast_math` is unsupported (Debian's hipcc 5.2 checked for each
    replacement). AMD's HIP documentation names the clang spellings: `-fgpu-rdc` for
    relocatable device code, `-ffast-math`, `-fgpu-flush-denormals-to-zero`. A register cap
    does not exist as a flag for AMD GPUs: `__launch_bounds__` tells the compiler the block
    size it allocates VGPRs for (HIP programming guide). With `-fatbin` only removed, hipcc
    compiles and links a program (`undefined reference to main`); AMD has no fatbin, cubin or
    PTX: `hipcc --genco` writes the code object (an offload bundle of one ELF per
    `--offload-arch`) that `hipModuleLoad` / `hipModuleLoadData` load, by whatever name `-o`
    gives it.

    ## Example
    ```make
    NVCCFLAGS = -O3 -dc -Xcompiler -fopenmp,-Wall --expt-relaxed-constexpr -maxrregcount=64
    %.fatbin: %.cu
    	$(NVCC) -fatbin $< -o $@
    ```

    ## Use instead
    ```make
    # rocmigrate MKF005: -maxrregcount 64: no register cap flag on AMD: ...
    NVCCFLAGS = -O3 -fgpu-rdc -c -fopenmp -Wall
    %.fatbin: %.cu
    # rocmigrate MKF005: -fatbin: no fatbin on AMD: --genco writes an AMD code object, ...
    	$(NVCC) --genco $< -o $@
    ```

    ## Fix safety
    Mapped and dropped options are fixed. `-ffast-math` assumes finite values, which
    `--use_fast_math` does not: check code that tests for NaN or infinity. A `--genco` output
    holds only the `--offload-arch` targets (no PTX to compile for another GPU at load time);
    where `-ptx` only made text to read, `-S --cuda-device-only` writes AMDGPU assembly
    instead; without `-o`, hipcc names the file otherwise than nvcc
    (`x.cu-hip-amdgcn-amd-amdhsa.hipfb`, not `x.fatbin`). Marked options need
    a person (the marker says what to use). An option used in a variable that also feeds a
    host compiler is converted for both (nvcc-only options made such a line fail before).
    """

    code = "MKF004"
    extra_codes = ("MKF005",)
    name = "make-nvcc-flags"
    summary = "nvcc options in Makefiles and build scripts become hipcc's (or are marked)"
    family = "build"
    fix = "sometimes"
    category = "conversion"
    attention_codes: ClassVar[tuple[str, ...]] = ("MKF005",)
    languages: ClassVar[tuple[str, ...]] = ("make", "shell")

    def check(self, ctx: BuildContext):
        seen: set[int] = set()
        for words, found in translations(ctx):
            if found.action == "arch":
                continue
            start, end = span(words, found)
            if start in seen:
                continue
            seen.add(start)
            if not found.needs_marker:
                yield Diagnostic("MKF004", found.reason, start, end,
                                 Fix(f"{found.option} for hipcc",
                                     (replacement_edit(ctx, words, found),)),
                                 symbol=found.option, severity="info")
                continue
            yield Diagnostic("MKF005", found.reason, start, end,
                             marked_fix(ctx, "MKF005", words, found), symbol=found.option)
        for words in view(ctx).flag_lists:
            for word in words:
                prefixed = _HOST_PREFIX.match(word.text)
                if prefixed is None or word.start in seen:
                    continue
                seen.add(word.start)
                yield Diagnostic("MKF004", f"{word.value}: hipcc takes host compiler flags "
                                 "directly", word.start, word.end,
                                 Fix("host flags for hipcc",
                                     (Edit(word.start, word.end, prefixed.group(1).strip()),)),
                                 symbol="-Xcompiler", severity="info")
