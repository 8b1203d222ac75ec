"""REG001: the ``register`` storage class, which C++17 removed."""

from __future__ import annotations

import re

from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Rule, RuleContext
from migrator.semantic.scopes import statement_end

_REGISTER = re.compile(rb"\bregister\b[ \t]*")
# a GNU explicit register variable (register int r asm("r0")) needs the keyword
_ASM_LABEL = re.compile(rb"\b(?:asm|__asm__|__asm)\s*\(")


class RegisterKeyword(Rule):
    """Remove the ``register`` storage class specifier.

    ## What it does
    Deletes the keyword ``register`` from declarations in C++ and CUDA sources
    (``register int i;`` -> ``int i;``, ``for (register int k = 0; ...)``). Words that merely
    contain it (``register_x``), comments and strings are left alone, and so are GNU explicit
    register variables (``register int r asm("r0");``), which need it, and C sources (``.c``),
    where it is still valid.

    ## Why is this bad on AMD
    C++17 removed ``register``: clang rejects it in C++17 (``ISO C++17 does not allow 'register'
    storage class specifier``), the default standard of ROCm 6's clang (LLVM 16 and later) and
    what many HIP Makefiles ask for (HeCBench's kmeans-hip builds with ``-std=c++17``: its
    getopt.cpp fails so); Debian's hipcc 5.2 only warns in its default C++14. nvcc with GCC
    accepted it, so CUDA code still has it.

    ## Example
    ```cpp
    register float sum = 0.0f;
    ```

    ## Use instead
    ```cpp
    float sum = 0.0f;
    ```

    ## Fix safety
    Safe: ``register`` is only a hint that compilers have ignored for decades; its one effect,
    forbidding ``&`` on the variable, cannot change a program that compiled with it.
    """

    code = "REG001"
    name = "register-storage-class"
    summary = "register storage class (removed in C++17)"
    family = "portability"
    fix = "always"

    def check(self, ctx: RuleContext):
        data = ctx.data
        if b"register" not in data or ctx.path.endswith(".c"):
            return
        for match in _REGISTER.finditer(data):
            start = match.start()
            if not ctx.in_code(start):
                continue
            end = statement_end(ctx, start, min(len(data), start + 4096))
            if end is not None and _ASM_LABEL.search(ctx.code, start, end):
                continue
            yield Diagnostic("REG001", "'register' removed: C++17 does not allow the storage "
                             "class (ROCm 6's clang defaults to C++17)", start,
                             start + len(b"register"),
                             Fix("remove register", (Edit(start, match.end(), b""),)),
                             symbol="register", severity="info")

