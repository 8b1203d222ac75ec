"""CMK014: generator expressions that test for the CUDA language or compiler test for HIP."""

from __future__ import annotations

import re
from typing import ClassVar

from migrator.buildfiles.context import BuildContext, marker_fix
from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Marker, Rule

from .cmake_flags import flags_pending

# $<COMPILE_LANGUAGE:CXX,CUDA>, $<LINK_LANGUAGE:CUDA>, $<COMPILE_LANG_AND_ID:CUDA,NVIDIA>
_LANGUAGE = re.compile(r"\$<(COMPILE_LANGUAGE|LINK_LANGUAGE|COMPILE_LANG_AND_ID|"
                       r"LINK_LANG_AND_ID):([^>:]*)")
_COMPILER_ID = re.compile(r"\$<CUDA_COMPILER_ID(?=[:>])")
_COMPILER_VERSION = re.compile(r"\$<CUDA_COMPILER_VERSION(?=[:>])")
_NVIDIA_IDS = frozenset({"NVIDIA", "Clang"})


class CmakeGeneratorExpressions(Rule):
    """Generator expressions that test for CUDA test for HIP.

    ## What it does
    `$<COMPILE_LANGUAGE:CUDA>` (and lists such as `$<COMPILE_LANGUAGE:CXX,CUDA>`),
    `$<LINK_LANGUAGE:CUDA>`, `$<COMPILE_LANG_AND_ID:CUDA,NVIDIA>` and
    `$<CUDA_COMPILER_ID:NVIDIA>` become their HIP forms (`HIP`, compiler id `Clang`).
    `$<CUDA_COMPILER_VERSION:...>` is marked (CMK015): nvcc's versions are no clang version.
    The nvcc flags such an expression guards are CMK016's.

    ## Why is this bad on AMD
    Once the sources compile as HIP (CMK001, CMK007), no source is CUDA: options guarded by
    `$<COMPILE_LANGUAGE:CUDA>` silently stop reaching the compiler (an `-O3`, a define the
    kernels need). CMake's HIP language, which AMD's "Using CMake" HIP documentation uses,
    answers to `$<COMPILE_LANGUAGE:HIP>`, and its compiler id is Clang (ROCm's clang).

    ## Example
    ```cmake
    target_compile_options(app PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-DUSE_GPU>)
    ```

    ## Use instead
    ```cmake
    target_compile_options(app PRIVATE $<$<COMPILE_LANGUAGE:HIP>:-DUSE_GPU>)
    ```

    ## Fix safety
    Always fixed, except the compiler version tests (marked). Where HIP is already listed,
    CUDA is dropped from the list.
    """

    code = "CMK014"
    extra_codes = ("CMK015",)
    attention_codes = ("CMK015",)
    name = "cmake-cuda-generator-expressions"
    summary = "$<COMPILE_LANGUAGE:CUDA> and the CUDA compiler's generator expressions test HIP"
    family = "build"
    fix = "sometimes"
    category = "conversion"
    languages: ClassVar[tuple[str, ...]] = ("cmake",)

    def check(self, ctx: BuildContext):
        for command in ctx.script.commands:
            waits = None  # the nvcc options the expression guards are rewritten first
            for arg in command.args:
                if arg.kind == "bracket" or b"$<" not in arg.text:
                    continue
                text = arg.text.decode("utf-8", "replace")
                for match in _LANGUAGE.finditer(text):
                    items = match.group(2).split(",")
                    with_id = match.group(1).endswith("_AND_ID")  # LANGUAGE,COMPILER_ID...
                    if "CUDA" not in (items[:1] if with_id else items):
                        continue
                    if waits is None:
                        waits = flags_pending(ctx, command)
                    if waits:
                        break
                    if with_id:  # CUDA,NVIDIA -> HIP,Clang
                        new = ["HIP", *["Clang" if i in _NVIDIA_IDS else i for i in items[1:]]]
                    else:
                        new = ["HIP" if item == "CUDA" else item for item in items]
                    new = list(dict.fromkeys(new))
                    start = arg.start + match.start(2)
                    end = arg.start + match.end(2)
                    old = f"$<{match.group(1)}:{match.group(2)}>"
                    replaced = f"$<{match.group(1)}:{','.join(new)}>"
                    yield Diagnostic("CMK014", f"{old} becomes {replaced}", start, end,
                                     Fix(f"{old} -> {replaced}",
                                         (Edit(start, end, ",".join(new).encode()),)),
                                     symbol=match.group(1), severity="info")
                for match in _COMPILER_ID.finditer(text):
                    start = arg.start + match.start()
                    rest = text[match.end():]
                    edits = [Edit(start, start + len(match.group()), b"$<HIP_COMPILER_ID")]
                    if rest.startswith(":NVIDIA"):
                        at = arg.start + match.end() + 1
                        edits.append(Edit(at, at + len("NVIDIA"), b"Clang"))
                    yield Diagnostic("CMK014", "$<CUDA_COMPILER_ID> becomes $<HIP_COMPILER_ID> "
                                     "(Clang)", start, start + len(match.group()),
                                     Fix("$<HIP_COMPILER_ID>", tuple(edits)),
                                     symbol="CUDA_COMPILER_ID", severity="info")
                for match in _COMPILER_VERSION.finditer(text):
                    start = arg.start + match.start()
                    message = ("$<CUDA_COMPILER_VERSION>: nvcc's version is no HIP compiler "
                               "version (clang's): choose the HIP condition by hand")
                    yield Diagnostic("CMK015", message, start, start + len(match.group()),
                                     marker_fix(ctx, start, Marker("CMK015", message)),
                                     symbol="CUDA_COMPILER_VERSION")
