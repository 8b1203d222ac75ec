"""RDF001: a user definition of an atomic function HIP already defines."""

from __future__ import annotations

import ast
import functools
import re

from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Marker, Rule, RuleContext
from migrator.semantic.scopes import blocks

from ._tables import has, table

_NAME = re.compile(rb"\b(atomic[A-Z]\w*)\s*\(")
_EXTERN_C = re.compile(rb'\bextern\s*"C"\s*$')
_CONDITIONAL = re.compile(rb"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b([^\n]*)", re.M)
# macros whose value hip-clang fixes: __CUDA_ARCH__ undefined; the HIP compiler's own defined
_HIP_DEFINED = {"__HIPCC__": 1, "__HIP__": 1, "__HIP_PLATFORM_AMD__": 1, "__HIP_PLATFORM_HCC__": 1,
                "__CUDA_ARCH__": 0, "__NVCC__": 0,
                "__CUDACC__": 1}  # (API001 renames __CUDACC__ to __HIPCC__)


def normalize_type(text: str) -> str:
    """One spelling per type, as scripts/gen_hip_declared.py writes the table."""
    text = re.sub(r"\s+", " ", text.strip())
    text = re.sub(r"\b(unsigned|signed|long|short) int\b", r"\1", text)
    text = re.sub(r"^unsigned(?=\*|$)", "unsigned int", text)
    return text.replace(" *", "*")


_FIXED_WIDTH = {"int32_t": "int", "uint32_t": "unsigned int", "int64_t": "long",
                "uint64_t": "unsigned long", "size_t": "unsigned long"}


def parameter_type(parameter: str, aliases: dict[str, str] = _FIXED_WIDTH) -> str:
    """A parameter's type as the table writes it: the name dropped, top-level const dropped,
    '*' attached, one blank between words; ``aliases`` (<cstdint>'s on Linux) spelled out."""
    text = re.sub(r"\s*\*\s*", "* ", parameter.strip())
    words = [aliases.get(w, w) for w in text.split()]
    if len(words) > 1 and re.fullmatch(r"[A-Za-z_]\w*", words[-1]) and words[-1] not in (
            "int", "long", "float", "double", "short", "char", "unsigned", "signed"):
        words = words[:-1]
    text = " ".join(words).replace("* ", "*").replace(" *", "*")
    if "*" not in text:
        text = re.sub(r"^const\s+|\s+const$", "", text)
    return normalize_type(text)


class BuiltinRedefinition(Rule):
    """Guard a user's own definition of an atomic function HIP already defines.

    ## What it does
    Finds file-scope definitions of ``atomic*`` functions whose parameter types are those of an
    overload the target's HIP defines in ``hip/amd_detail/amd_hip_atomic.h``
    (``rules/portability/hip_atomic_overloads.tsv``, generated from HIP 5.2.3 and 6.4.3 by
    ``scripts/gen_hip_declared.py``): the classic ``__device__ double atomicAdd(double*,
    double)`` CAS shim for GPUs before sm_60, ``atomicMax(float*, float)``, ``atomicMin(long
    long*, long long)`` (HIP 6.4 has it, 5.2 does not). A definition in a branch hipcc does
    not compile (``#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 600``: hip-clang does not define
    ``__CUDA_ARCH__``), in a namespace or in a class is left alone.

    ## Why is this bad on AMD
    HIP defines these overloads inline in its headers, so the port fails with ``redefinition of
    'atomicAdd'`` (hipcc 5.2). On AMD GPUs HIP's own versions are hardware atomics or CAS loops
    (AMD's HIP programming guide, "Atomic functions"), so the shim is not needed.

    ## Example
    ```cpp
    __device__ double atomicAdd(double* address, double val) {
      /* atomicCAS loop */
    }
    ```

    ## Use instead
    ```cpp
    #ifndef __HIP_PLATFORM_AMD__  // rocmigrate RDF001: ... HIP's is used: check it ...
    __device__ double atomicAdd(double* address, double val) {
      /* atomicCAS loop */
    }
    #endif  // __HIP_PLATFORM_AMD__
    ```

    ## Fix safety
    Always fixed, with a marker: the definition is guarded with ``#ifndef
    __HIP_PLATFORM_AMD__`` (kept for nvcc, HIP's overload used on AMD), which is what makes the
    port compile; whether HIP's overload does what the project's did is not proven (a
    project's ``atomicMin(float*)`` may order NaNs or signed zeros its own way), which the
    marker on the ``#ifndef`` line says. Delete the definition once checked.
    """

    code = "RDF001"
    name = "atomic-redefinition"
    summary = "user definition of an atomic function HIP already defines"
    family = "portability"
    fix = "always"
    attention_codes = ("RDF001",)

    def check(self, ctx: RuleContext):
        if b"atomic" not in ctx.data:
            return
        code = ctx.code
        defined = _overloads(ctx.settings.rocm)
        found = blocks(ctx)
        for index, block in enumerate(found):
            head = code[block.head : block.open]  # (comments blanked)
            match = _NAME.search(head)
            if match is None or ctx.in_directive(block.head + match.start()):
                continue
            name = match.group(1).decode()
            close = head.rfind(b")")
            if close < match.end() or head[match.end() : close].count(b"(") or name not in defined:
                continue
            parameters = head[match.end() : close].decode("utf-8", "replace")
            types = ", ".join(parameter_type(p) for p in parameters.split(",") if p.strip())
            if types not in defined[name] or _nested(ctx, found, index):
                continue
            start = block.head + match.start()
            if not compiled_by_hip(ctx, start):
                continue
            text = (f"{name}({types}) is already defined by HIP (hip/amd_detail/amd_hip_atomic.h): "
                    "this definition is a redefinition; guarded with #ifndef "
                    "__HIP_PLATFORM_AMD__, so HIP's is used: check it does what this one did "
                    "(NaN and signed-zero ordering, memory order)")
            yield Diagnostic("RDF001", text, start, start + len(name),
                             _guard(ctx, block, start, text), library="device", symbol=name)


def _guard(ctx: RuleContext, block, start: int, text: str) -> Fix:
    """The definition's lines put under ``#ifndef __HIP_PLATFORM_AMD__`` (HIP's overload is
    used on AMD; nvcc still compiles the project's), with the marker on the ``#ifndef`` line
    (markers off: the guard alone)."""
    data, code = ctx.data, ctx.code
    at = block.head  # the declaration's first word: after blanks, comments and directives
    while at < start:
        if code[at] in b" \t\r\n":
            at += 1
        elif code[at] == 0x23:  # '#': a directive line, its continuations too
            end = at
            while True:
                end = code.find(b"\n", end)
                if end < 0 or code[end - 1 : end] != b"\\":
                    break
                end += 1
            at = start if end < 0 else end + 1
        else:
            break
    first = ctx.source.line_start(at)
    newline = data.find(b"\n", block.close)
    after = len(data) if newline < 0 else newline + 1
    opening = b"#ifndef __HIP_PLATFORM_AMD__"
    if ctx.settings.write_markers:
        opening += b"  " + Marker("RDF001", text).render()
    closing = (b"" if newline >= 0 else b"\n") + b"#endif  // __HIP_PLATFORM_AMD__\n"
    return Fix("guard it for HIP", (Edit(first, first, opening + b"\n"),
                                    Edit(after, after, closing)))


@functools.lru_cache(maxsize=8)
def _overloads(rocm) -> dict[str, set[str]]:
    """HIP's atomic overloads at ``rocm``: their parameter types by name (read once)."""
    found: dict[str, set[str]] = {}
    for row in table("hip_atomic_overloads.tsv"):
        if has(row, rocm):
            found.setdefault(row["name"], set()).add(row["parameters"])
    return found


def _nested(ctx: RuleContext, found, index: int) -> bool:
    """Is block ``index`` inside another block (namespace, class) other than extern "C"?"""
    block = found[index]
    for outer in found[:index]:
        if outer.open < block.open < outer.close:
            if not _EXTERN_C.search(ctx.data[outer.head : outer.open].strip()):
                return True
    return False


def compiled_by_hip(ctx: RuleContext, offset: int) -> bool:
    """False where an enclosing #if branch is provably skipped by hip-clang (its tests only of
    the compiler macros of _HIP_DEFINED); True otherwise."""
    stack: list[list] = []  # per open #if: [branch taken so far (True/False/None), this one]
    for match in _CONDITIONAL.finditer(ctx.data, 0, offset):
        if not ctx.in_code(match.start(1)):
            continue
        kind, rest = match.group(1), match.group(2).decode("utf-8", "replace")
        if kind in (b"if", b"ifdef", b"ifndef"):
            name = (rest.split() or [""])[0]  # (#ifndef NAME  // a comment)
            value = _evaluate(rest if kind == b"if" else
                              ("" if kind == b"ifdef" else "!") + f"defined({name})")
            stack.append([value, value])
        elif not stack:
            continue
        elif kind == b"endif":
            stack.pop()
        else:
            taken = stack[-1][0]
            value = True if kind == b"else" else _evaluate(rest)
            if taken is True:
                stack[-1] = [True, False]
            elif taken is False:
                stack[-1] = [value, value]
            else:
                stack[-1] = [None, False if value is False else None]
    return all(now is not False for _, now in stack)


def _evaluate(condition: str) -> bool | None:
    """The truth of an #if condition under hip-clang, or None where it tests anything else."""
    text = re.sub(r"//.*|/\*.*?\*/", " ", condition)
    text = re.sub(r"\bdefined\s*\(\s*(\w+)\s*\)|\bdefined\s+(\w+)",
                  lambda m: str(_HIP_DEFINED.get(m.group(1) or m.group(2), m.group())), text)
    text = re.sub(r"\b[A-Za-z_]\w*\b", lambda m: str(_HIP_DEFINED[m.group()])
                  if m.group() in _HIP_DEFINED else m.group(), text)
    text = text.replace("&&", " and ").replace("||", " or ")
    text = re.sub(r"!(?!=)", " not ", text)
    if re.search(r"[A-Za-z_]", re.sub(r"\b(?:and|or|not)\b", "", text)):
        return None
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        return None
    allowed = (ast.Expression, ast.BoolOp, ast.UnaryOp, ast.Compare, ast.Constant, ast.And,
               ast.Or, ast.Not, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)
    if not all(isinstance(node, allowed) for node in ast.walk(tree)):
        return None
    return bool(eval(compile(tree, "<if>", "eval"), {"__builtins__": {}}))  # noqa: S307
