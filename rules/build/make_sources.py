"""MKF010: with --rename-ext, the .cu sources a Makefile or build script names become .hip."""

from __future__ import annotations

import re
from typing import ClassVar

from migrator.buildfiles.context import BuildContext
from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Rule

from .make_commands import view

# .cu ending a name, a pattern or a suffix (main.cu, %.cu, *.cu, $(SRC:.cu=.o), .cu.o:)
_CU = re.compile(rb"\.cu(?![\w])")


class MakeSourceNames(Rule):
    """With `--rename-ext`, `.cu` in source names and patterns becomes `.hip`.

    ## What it does
    When `convert --rename-ext` writes each `.cu` source as `.hip`, finds `.cu` where a
    Makefile or script names sources: file names (`source = main.cu kernels.cu`), pattern
    rules (`%.o: %.cu`), substitution references (`$(SRC:.cu=.o)`), functions
    (`$(wildcard *.cu)`, `$(patsubst %.cu,%.o,...)`), suffix rules (`.cu.o:`) and commands
    (`nvcc -c main.cu`), and writes `.hip`. `.cuh` headers keep their names, as convert keeps
    them. Without `--rename-ext` nothing changes: hipcc compiles `.cu` files as HIP.

    ## Why is this bad on AMD
    The renamed sources no longer exist as `.cu`: make finds no rule to build `main.o` (`No
    rule to make target 'main.cu'`). AMD's HIP documentation names `.hip` the extension
    hipcc and CMake's HIP language recognise as HIP sources.

    ## Example
    ```make
    obj = $(source:.cu=.o)
    %.o: %.cu
    ```

    ## Use instead
    ```make
    obj = $(source:.hip=.o)
    %.o: %.hip
    ```

    ## Fix safety
    Always fixed under `--rename-ext`. A name outside the converted tree (`../lib/x.cu`) is
    renamed too: convert the tree that holds it with the same option.
    """

    code = "MKF010"
    name = "make-cu-source-names"
    summary = "with --rename-ext, .cu names and patterns in Makefiles and scripts become .hip"
    family = "build"
    fix = "always"
    category = "conversion"
    languages: ClassVar[tuple[str, ...]] = ("make", "shell")

    def check(self, ctx: BuildContext):
        if not ctx.settings.rename_ext:
            return
        seen: set[int] = set()
        for words in view(ctx).texts:
            for word in words:
                for found in _CU.finditer(word.text):
                    start = word.start + found.start()
                    if start in seen:
                        continue
                    seen.add(start)
                    end = start + 3
                    yield Diagnostic("MKF010", f"{word.value}: .cu -> .hip", start, end,
                                     Fix(".cu -> .hip", (Edit(start, end, b".hip"),)),
                                     symbol=".cu", severity="info")
