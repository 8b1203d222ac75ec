"""MKF001: nvcc becomes hipcc in Makefiles and shell build scripts."""

from __future__ import annotations

import re
from typing import ClassVar

from migrator.buildfiles.context import BuildContext
from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Rule

from .make_commands import view

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

    ## Why is this bad on AMD
    nvcc compiles for NVIDIA GPUs only. AMD's HIP documentation ("HIP compilers") builds HIP
    sources with `hipcc`, the driver over ROCm's clang that adds the HIP headers, the runtime
    library and the `--offload-arch` targets. MKF002 to MKF010 convert the flags, libraries,
    paths and source names nvcc was given.

    ## Example
    ```make
    NVCC = $(CUDA_PATH)/bin/nvcc
    app: main.cu
    	nvcc -O3 main.cu -o app
    ```

    ## Use instead
    ```make
    NVCC = $(ROCM_PATH)/bin/hipcc
    app: main.cu
    	hipcc -O3 main.cu -o app
    ```

    ## Fix safety
    Always fixed. A path keeps its folder: MKF005 maps `$(CUDA_PATH)` and `/usr/local/cuda`
    to ROCm's. The variable that names the compiler keeps its name (`NVCC = hipcc`).
    """

    code = "MKF001"
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
