"""Device functions HIP lacks that a rocmigrate support header defines under their CUDA names:
the names come from a table in the API tables' folder, the definitions from the header's
template. One rule per header subclasses ``SupportFunctions`` (SIM001: rocmigrate_simd.h,
CHN001: rocmigrate_cache_hints.h)."""

from __future__ import annotations

import functools
from pathlib import Path

from migrator import support
from migrator.diagnostics import Diagnostic, Fix
from migrator.rule import Marker, Rule, RuleContext
from migrator.semantic.calls import (WORD_BYTES, arguments, code_end_before, find_name,
                                    lexical_call)

from ..markers import marker_fix


@functools.lru_cache(maxsize=8)
def table_names(api_dir: Path, table: str) -> frozenset[bytes]:
    """The CUDA names of ``table``'s rows (none where a rules directory has no such table)."""
    path = api_dir / table
    if not path.is_file():
        return frozenset()
    lines = [line for line in path.read_text(encoding="utf-8").split("\n")
             if line.strip() and not line.startswith("#")]
    return frozenset(line.split("\t", 1)[0].encode() for line in lines[1:])


def _declared(ctx: RuleContext, start: int, end: int) -> bool:
    """Is the name at [start, end) declared here: a name with a parameter list after it and a
    type before it (``unsigned int __vadd2(unsigned int a, unsigned int b)``,
    ``template <class T> T __ldcs(const T* p)``; a `*` or `&` before it is an operator, as in
    ``x & __vadd2(y, z)``)?"""
    if arguments(ctx, end) is None or lexical_call(ctx, start, end) is not None:
        return False
    before = code_end_before(ctx, start)
    return before > 0 and ctx.code[before - 1] in WORD_BYTES


class SupportFunctions(Rule):
    """Include a support header where a file uses one of the functions it defines; a file that
    declares one of them itself gets no include (it would clash with the file's declaration):
    the others it uses are reported with ``missing_code`` and a marker."""

    table = ""  # the functions, one row each, in the API tables' folder (API001 leaves them alone)
    header = ""  # the support header that defines them (templates/support/<header>.j2)
    missing_code = ""
    quick = (b"",)  # byte strings one of which every name contains (a file without them is skipped)
    category = "conversion"
    family = "api"
    fix = "sometimes"

    def describe(self, name: str) -> str:
        """The finding's text where the header is included."""
        raise NotImplementedError

    def check(self, ctx: RuleContext):
        if not any(part in ctx.data for part in self.quick) or (
                self.header in support.referenced(ctx.data)):
            return
        found = list(find_name(ctx, table_names(ctx.tables.api_dir, self.table)))
        declared = sorted({name.decode() for name, start, end in found
                           if _declared(ctx, start, end)})
        for name, start, end in found:
            function = name.decode()
            if function in declared:
                continue
            if declared:
                shown = ", ".join(declared[:3]) + (f" and {len(declared) - 3} more"
                                                   if len(declared) > 3 else "")
                text = (f"{function} has no HIP counterpart; {self.header} defines it but is "
                        f"not included: this file declares {shown} itself")
                yield Diagnostic(self.missing_code, text, start, end,
                                 marker_fix(ctx, start, Marker(self.missing_code, text)),
                                 library="device", symbol=function)
                continue
            fix = Fix(f"include {self.header}", (), includes=(f'"{self.header}"',))
            yield Diagnostic(self.code, self.describe(function), start, end, fix,
                             library="device", symbol=function, severity="info")
