"""CCB001: CUDA's callback calling-convention macros (CUDART_CB, CUDA_CB), which HIP lacks."""

from __future__ import annotations

import re

from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Rule, RuleContext

_MACRO = re.compile(rb"\b(CUDART_CB|CUDA_CB)\b[ \t]*")
_DEFINED = re.compile(rb"#[ \t]*define[ \t]+(CUDART_CB|CUDA_CB)\b")


class CallbackMacro(Rule):
    """Drop ``CUDART_CB`` / ``CUDA_CB`` from callback declarations.

    ## What it does
    Removes the ``CUDART_CB`` (runtime) and ``CUDA_CB`` (driver) macros that CUDA puts between
    a host callback's return type and its name (``void CUDART_CB done(cudaStream_t, cudaError_t,
    void*)``), wherever they are spelled in code. A file that defines the macro itself is left
    alone.

    ## Why is this bad on AMD
    The macros name the calling convention of callbacks the CUDA runtime calls
    (``__stdcall`` on Windows, empty elsewhere). HIP has no such macro on AMD (HIP 5.2.3 and
    6.4.3 define ``HIPRT_CB`` only for the NVIDIA platform), so the kept word is an unknown
    identifier and the declaration does not compile.

    ## Example
    ```cpp
    void CUDART_CB done(cudaStream_t stream, cudaError_t status, void* data);
    ```

    ## Use instead
    ```cpp
    void done(hipStream_t stream, hipError_t status, void* data);
    ```

    ## Fix safety
    Safe: ROCm runs on Linux (and Windows through the HIP SDK, whose callbacks use the default
    convention), where both macros are defined empty by CUDA, so dropping them changes nothing.
    """

    code = "CCB001"
    name = "callback-calling-convention"
    summary = "CUDART_CB / CUDA_CB callback macro HIP lacks"
    family = "portability"
    fix = "always"

    def check(self, ctx: RuleContext):
        data = ctx.data
        if b"_CB" not in data or _DEFINED.search(data):
            return
        for match in _MACRO.finditer(data):
            if not ctx.in_code(match.start()):
                continue
            macro = match.group(1).decode()
            yield Diagnostic("CCB001", f"{macro} removed: HIP has no callback calling-convention "
                             "macro (CUDA defines it empty on Linux)", match.start(),
                             match.end(1), Fix(f"remove {macro}",
                                               (Edit(match.start(), match.end(), b""),)),
                             library="runtime", symbol=macro, severity="info")
