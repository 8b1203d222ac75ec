"""REG001: the ``register`` storage class, which C++17 removed."""

from __future__ import annotations

import bisect
import re

from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Rule, RuleContext
from migrator.semantic.scopes import statement_end

_REGISTER = re.compile(rb"\bregister\b[ \t]*")
# a GNU explicit register variable (register int r asm("r0")) needs the keyword
_ASM_LABEL = re.compile(rb"\b(?:asm|__asm__|__asm)\s*\(")
# a storage class precedes a type or a name (``register int``, ``register ::T``): ``register``
# before ``,`` ``)`` ``;`` or an operator is a name (a macro's, or one passed to a macro)
# (read on the code view: comments are blanks; a #define body may continue on the next line)
_DECLARES = re.compile(rb"(?:\s|\\\r?\n)*(?:[A-Za-z_]|::)")
# the directive a ``register`` inside it belongs to: #define NAME or NAME(params), or another
_DEFINE = re.compile(rb"[ \t]*define[ \t]+(\w+)(\([^)]*\))?")


class RegisterKeyword(Rule):
    """Remove the ``register`` storage class specifier.

    ## What it does
    Deletes the keyword ``register`` from declarations in C++ and CUDA sources
    (``register int i;`` -> ``int i;``, ``for (register int k = 0; ...)``). Words that merely
    contain it (``register_x``), comments and strings are left alone, and so are GNU explicit
    register variables (``register int r asm("r0");``), which need it, and C sources (``.c``),
    where it is still valid. ``register`` as a name is kept too: the C++17 workaround
    ``#define register`` (and ``#undef register``, ``#ifdef register``), a macro parameter named
    ``register``, a ``register`` pasted with ``##``, and one not followed by a type; in other
    ``#define`` bodies (``#define FAST_INT register int``) it is removed as in code.

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
            if not ctx.in_code(start) or not _DECLARES.match(ctx.code, start + len(b"register")):
                continue
            if ctx.in_directive(start) and not _in_define_body(ctx, start):
                continue
            end = statement_end(ctx, start, min(len(data), start + 4096))
            if end is not None and _ASM_LABEL.search(ctx.code, start, end):
                continue
            yield Diagnostic("REG001", "'register' removed: C++17 does not allow the storage "
                             "class (ROCm 6's clang defaults to C++17)", start,
                             start + len(b"register"),
                             Fix("remove register", (Edit(start, match.end(), b""),)),
                             symbol="register", severity="info")



def _in_define_body(ctx: RuleContext, offset: int) -> bool:
    """Is ``register`` at ``offset`` a word of a ``#define`` body that is not the macro's name,
    one of its parameters, nor pasted with ``##`` (where it is a name, not the keyword)?"""
    data = ctx.data
    directives = ctx.directives
    index = bisect.bisect_right(directives.starts, offset) - 1
    define = _DEFINE.match(data, directives.starts[index])
    if define is None or define.group(1) == b"register" or define.end() > offset:
        return False
    if define.group(2) and re.search(rb"\bregister\b", define.group(2)):
        return False
    before = data[max(0, offset - 8) : offset].rstrip(b" \t")
    after = data[offset + len(b"register") : offset + len(b"register") + 8].lstrip(b" \t")
    return not (before.endswith(b"#") or after.startswith(b"##"))
