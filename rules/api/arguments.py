"""ARG001/ARG002: argument-level rewrites for CUDA calls whose HIP counterpart differs in
more than its name (symbol wrapping, pointer casts, added or removed arguments)."""

from __future__ import annotations

import re

from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Marker, Rule, RuleContext

from migrator.semantic.calls import find_name, lexical_call
from ..markers import marker_fix
from .rename import renamable

_ALREADY = {
    # ``&sym`` already is the symbol's address, which HIP's symbol APIs take as they are
    "wrap_symbol": lambda text, value: text.startswith((value + "(", "&")),
    "cast": lambda text, value: text.startswith(value) or text.startswith("(const void*)"),
}


class ArgumentRewrite(Rule):
    """Rewrite the arguments of CUDA calls whose HIP counterpart takes them differently.

    ## What it does
    Applies the argument changes listed in ``rules/api/argument_rewrites.tsv``: wraps the symbol
    argument of the ``*Symbol*`` family in ``HIP_SYMBOL()``
    (``cudaMemcpyToSymbol(c, …)`` -> ``hipMemcpyToSymbol(HIP_SYMBOL(c), …)``), casts kernel
    pointers to ``const void*`` where HIP's prototype takes one, and adds or removes arguments
    where the HIP signature has a different arity. The call itself is renamed by API001.
    Inside a ``#define`` body the call cannot be rewritten safely: ARG002 reports it and marks
    the site.

    ## Why is this bad on AMD
    On AMD, HIP's symbol APIs take the symbol's address (``HIP_SYMBOL``), and the function
    attribute APIs take ``const void*``: the renamed call alone does not compile, or worse,
    passes the wrong pointer.

    ## Example
    ```cpp
    __constant__ float coeffs[16];
    cudaMemcpyToSymbol(coeffs, host, sizeof(coeffs));
    ```

    ## Use instead
    ```cpp
    __constant__ float coeffs[16];
    hipMemcpyToSymbol(HIP_SYMBOL(coeffs), host, sizeof(coeffs));
    ```

    ## Fix safety
    Safe: each rewrite is the documented HIP calling convention for that function. Calls inside
    macros are reported only.
    """

    code = "ARG001"
    extra_codes = ("ARG002",)
    category = "conversion"
    attention_codes = ("ARG002",)
    name = "cuda-call-arguments"
    summary = "CUDA call needs its arguments changed for HIP"
    family = "api"
    fix = "sometimes"

    def check(self, ctx: RuleContext):
        rewrites = ctx.tables.argument_rewrites
        # every name, not only those in the file: the one scan for all costs less than a
        # substring search per name, and a name the file lacks matches nowhere either way
        for name, start, end in find_name(ctx, {name.encode() for name in rewrites}):
            cuda = name.decode()
            if not renamable(ctx.tables.names.get(cuda), ctx.settings.rocm):
                continue
            call = lexical_call(ctx, start, end)
            if call == "macro":
                text = f"{cuda} inside a macro: change its arguments for HIP by hand (" + \
                    "; ".join(_describe(r) for r in rewrites[cuda]) + ")"
                yield Diagnostic("ARG002", text, start, end,
                                 marker_fix(ctx, start, Marker("ARG002", text)), symbol=cuda)
                continue
            if call is None:
                continue
            # The rename travels with the argument edits (API001 leaves these calls alone), so a
            # fix that must wait for a nested one never leaves a renamed call with old arguments.
            hip = ctx.tables.names[cuda].hip
            edits = [Edit(start, end, hip.encode())]
            keeps_syntax = True
            for rewrite in rewrites[cuda]:
                edit = _edit(ctx, call, rewrite)
                if edit is not None:
                    edits.append(edit)
                    keeps_syntax &= _keeps_syntax(ctx, call, rewrite)
            title = "; ".join(_describe(r) for r in rewrites[cuda])
            yield Diagnostic("ARG001", f"{cuda} -> {hip}: {title}", start, end,
                             Fix(f"rename to {hip}; {title}", tuple(edits),
                                 keeps_syntax=keeps_syntax),
                             library=ctx.tables.names[cuda].library, symbol=cuda,
                             severity="info")


def _describe(rewrite) -> str:
    if rewrite.action == "wrap_symbol":
        return f"wrap argument {rewrite.arg + 1} in {rewrite.value}()"
    if rewrite.action == "cast":
        return f"cast argument {rewrite.arg + 1} with {rewrite.value}"
    if rewrite.action == "append_argument":
        return f"pass {rewrite.value} as argument {rewrite.arg + 1}"
    return f"drop argument {rewrite.arg + 1}"


_NAME = re.compile(rb"(?:::)?[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*")


_CAST = re.compile(r"(?:static|reinterpret|const)_cast<[A-Za-z_][\w:]*(?:\s+[A-Za-z_]\w*)*\s*\**\s*>")


def _keeps_syntax(ctx: RuleContext, call, rewrite) -> bool:
    """Can this rewrite not change how the file parses? A name appended to the call's argument
    list, or a name argument wrapped in a call to a name (``HIP_SYMBOL(sym)``) or in a named
    cast to a plain type (``reinterpret_cast<const void*>(kernel)``), parse wherever the call
    did."""
    if rewrite.action == "append_argument":
        return rewrite.value.isidentifier()
    if rewrite.action in ("wrap_symbol", "cast"):
        if not (rewrite.value.isidentifier() or _CAST.fullmatch(rewrite.value)):
            return False
        begin, finish = call.arguments[rewrite.arg]
        return _NAME.fullmatch(ctx.data, begin, finish) is not None
    return False


def _edit(ctx: RuleContext, call, rewrite) -> Edit | None:
    args = call.arguments
    action, value, index = rewrite.action, rewrite.value, rewrite.arg
    if action in ("wrap_symbol", "cast"):
        if index >= len(args):
            return None
        begin, finish = args[index]
        text = ctx.data[begin:finish].decode("utf-8", "replace")
        if _ALREADY[action](text, value):
            return None
        return Edit(begin, finish, f"{value}({text})".encode())
    if action == "append_argument":
        if len(args) != index:
            return None
        prefix = ", " if args else ""
        return Edit(call.close, call.close, (prefix + value).encode())
    if action == "remove_argument":
        if index >= len(args) or index == 0:
            return None
        return Edit(args[index - 1][1], args[index][1], b"")
    return None
