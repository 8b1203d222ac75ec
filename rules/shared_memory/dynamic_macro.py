"""SHM003: dynamic shared memory declared as HIP's CPU runtime needs it (HIP_DYNAMIC_SHARED)."""

from __future__ import annotations

import re

from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Marker, Rule, RuleContext
from migrator.semantic.scopes import function_at

from ..markers import marker_fix
from .dynamic_alignment import EXTERN_SHARED

_ONE_NAME = re.compile(r"^[A-Za-z_][\w:]*$")  # T, ns::T, float4; not unsigned char, T*
_KEYWORD_TYPES = frozenset({"bool", "char", "short", "int", "long", "float", "double", "signed",
                            "unsigned", "void", "auto", "wchar_t", "char16_t", "char32_t"})


class DynamicSharedMacro(Rule):
    """Declare dynamic shared memory with ``HIP_DYNAMIC_SHARED`` for HIP's CPU runtime.

    ## What it does
    Under ``--runtime hip-cpu`` only: rewrites ``extern __shared__ T name[];`` inside a kernel to
    ``HIP_DYNAMIC_SHARED(T, name);`` (a built-in type or one of several words, such as
    ``float``, ``unsigned char`` or ``T*``, through a local ``typedef``, so that the macro's
    argument is a name, which every C++ parser reads as an expression). A
    declaration at file scope, or one whose type the macro cannot take (a comma in it), is
    marked instead.

    ## Why is this bad on AMD
    On an AMD GPU nothing is wrong: ``extern __shared__`` is HIP's own spelling. AMD's HIP CPU
    runtime, which runs a port with 64-lane wavefronts on any CPU, is compiled by a plain C++
    compiler: ``__shared__`` becomes ``thread_local`` and ``extern __shared__ T name[]`` an
    undefined symbol (the program does not link). Its ``HIP_DYNAMIC_SHARED`` macro gives each
    block the launch's dynamic shared memory; on AMD GPUs HIP defines the same macro as the
    ``extern __shared__`` declaration, so the rewritten file still builds there.

    ## Example
    ```cpp
    __global__ void sum(const float* in, float* out) {
      extern __shared__ float smem[];
      smem[threadIdx.x] = in[threadIdx.x];
    }
    ```

    ## Use instead
    ```cpp
    __global__ void sum(const float* in, float* out) {
      typedef float smem_element_t; HIP_DYNAMIC_SHARED(smem_element_t, smem);
      smem[threadIdx.x] = in[threadIdx.x];
    }
    ```

    ## Fix safety
    Safe: the same memory, sized by the launch, under the same name (a pointer to ``T`` where
    the declaration was an array of ``T``: ``sizeof(smem)`` would differ, and is meaningless
    for an array of unknown size). An alignment attribute is dropped: the CPU runtime's storage
    is aligned for any scalar or vector type; SHM001, which adds one for AMD GPUs, does not run
    under this runtime.
    """

    code = "SHM003"
    name = "dynamic-shared-macro"
    summary = "dynamic shared memory HIP's CPU runtime cannot link"
    family = "shared_memory"
    fix = "sometimes"
    attention_codes = ("SHM003",)

    def check(self, ctx: RuleContext):
        data = ctx.data
        if ctx.settings.runtime != "hip-cpu" or b"extern" not in data or b"__shared__" not in data:
            return
        for match in EXTERN_SHARED.finditer(data):
            if (b"__shared__" not in data[match.start():match.end()]
                    or not ctx.in_code(match.start())):
                continue
            name = match.group(2).decode()
            star = b"*" in data[match.end(1):match.start(2)]
            element = match.group(1).decode().strip() + ("*" if star else "")
            body = function_at(ctx, match.start())
            if body is None or "," in element or ctx.in_directive(match.start()):
                where = "at file scope" if body is None else (
                    "in a macro" if ctx.in_directive(match.start()) else
                    f"with a comma in its type ({element})")
                text = (f"dynamic shared array '{name}' is declared {where}: HIP's CPU runtime "
                        "needs HIP_DYNAMIC_SHARED(type, name) inside each kernel that uses it")
                yield Diagnostic("SHM003", text, match.start(), match.end(),
                                 marker_fix(ctx, match.start(), Marker("SHM003", text)),
                                 library="device", symbol=name)
                continue
            replacement = f"HIP_DYNAMIC_SHARED({element}, {name});"
            if not _ONE_NAME.match(element) or element in _KEYWORD_TYPES:
                # a macro argument a parser can read as an expression: a name
                replacement = (f"typedef {element} {name}_element_t; "
                               f"HIP_DYNAMIC_SHARED({name}_element_t, {name});")
            yield Diagnostic(
                "SHM003", f"dynamic shared array '{name}': HIP's CPU runtime needs "
                f"HIP_DYNAMIC_SHARED({element}, {name})", match.start(), match.end(),
                Fix(f"declare '{name}' with HIP_DYNAMIC_SHARED",
                    (Edit(match.start(), match.end(), replacement.encode()),), keeps_syntax=True),
                library="device", symbol=name, severity="info")
