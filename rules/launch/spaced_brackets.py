"""LCH002: kernel launch brackets written with blanks inside (``k << < g, b >> > (p)``)."""

from __future__ import annotations

import re

from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.parsing.tokens import LAUNCH_OPENING
from migrator.rule import Rule, RuleContext

# the opening bracket (LAUNCH_OPENING) without its leading lookbehind, which makes the regex
# engine try every byte: a search skips ahead to '<<', and a match after a '<' is dropped (it
# hides no other: the byte after it is no '<')
assert LAUNCH_OPENING.startswith(rb"(?<!<)")
_OPENING_AHEAD = re.compile(LAUNCH_OPENING[len(rb"(?<!<)"):])
# a bracket with a blank inside, in the file (what a finding rewrites is code, the same bytes
# in the file and its code view): a file without one has nothing to report
_SPACED_OPENING = re.compile(rb"<<(?:[ \t]|\\\r?\n)+<")
_SPACED_CLOSING = re.compile(rb">>(?:\s|\\\r?\n)+>")
# its closing bracket: '>>' and '>' with blanks (line ends too) between or none, then the
# argument list
_CLOSING = re.compile(rb">>(?:\s|\\\r?\n)*>(?![>=])")
_ARGUMENT_LIST = re.compile(rb"(?:\s|\\\r?\n)*\(")
_OPERATOR = re.compile(rb"\boperator\s*\Z")
_CONFIGURATION_SCAN = re.compile(rb"[()\[\]{};]|>>")


class SpacedLaunchBrackets(Rule):
    """Write a kernel launch's brackets ``<<<`` and ``>>>`` without blanks inside.

    ## What it does
    Finds launches whose brackets are split by blanks, as nvcc accepts them and as old
    formatters write them: ``k << < grid, block >> > (args)``, ``k<< <g, b>>>(p)``,
    ``k<<<g, b>> >(p)`` (in code and in ``#define`` bodies), and writes ``<<<`` and ``>>>``.
    With ``--launch-syntax ggl``, LCH001 then writes the launch as ``hipLaunchKernelGGL``.

    ## Why is this bad on AMD
    HIP launches kernels with the triple-chevron syntax (AMD's HIP programming guide, "Kernel
    launch"), which hipcc's clang front end reads only as the single tokens ``<<<`` and
    ``>>>``: ``<< <`` is a shift followed by a stray ``<`` there, and the file does not
    compile ("expected expression").

    ## Example
    ```cpp
    scale << < blocks, 256 >> > (d, 2.0f, n);
    ```

    ## Use instead
    ```cpp
    scale <<<blocks, 256>>> (d, 2.0f, n);
    ```

    ## Fix safety
    Safe: only the blanks inside each bracket go; the launch, its configuration and its
    arguments are the same tokens. A bracket with a comment inside is left as it is.
    """

    code = "LCH002"
    category = "conversion"
    name = "spaced-launch-brackets"
    summary = "kernel launch brackets written with blanks inside"
    family = "launch"
    fix = "always"
    chains = True  # the launches it writes are what LCH001 and the stream rules read
    chains_into = ("LCH001", "STM001", "STM002", "STM003")

    def check(self, ctx: RuleContext):
        data = ctx.data
        if b"<<" not in data or _SPACED_OPENING.search(data) is None \
                and _SPACED_CLOSING.search(data) is None:
            return
        code = ctx.code
        for opening in _OPENING_AHEAD.finditer(code):
            start = opening.start()
            if code[start - 1 : start] == b"<":
                continue  # the tail of a longer run of '<': no opening
            if not ctx.in_code(start) or _OPERATOR.search(code, max(0, start - 16), start):
                continue  # operator<< <T>: a template's explicit arguments
            closing = _closing(code, opening.end())
            if closing is None:
                continue
            edits = tuple(Edit(match.start(), match.end(), bracket)
                          for match, bracket in ((opening, b"<<<"), (closing, b">>>"))
                          if match.end() - match.start() > 3)
            if not edits:
                continue  # <<<...>>> as hipcc reads it
            if any(not ctx.in_code(offset) for edit in edits
                   for offset in range(edit.start, edit.end)):
                continue  # a comment between the bracket's characters
            written = " ... ".join(data[m.start() : m.end()].decode("ascii", "replace")
                                   for m in (opening, closing))
            yield Diagnostic("LCH002", f"launch brackets {written} -> <<< ... >>>",
                             start, closing.end(),
                             Fix("write <<< and >>> without blanks", edits),
                             library="runtime", symbol="<<<>>>", severity="info")


def _closing(code: bytes, position: int) -> re.Match | None:
    """The launch's closing bracket after its configuration, which starts at ``position`` (in
    the code view): the first '>>' outside brackets that is a closing bracket followed by the
    argument list; None where the statement ends first."""
    depth = 0
    for match in _CONFIGURATION_SCAN.finditer(code, position):
        token = match.group()
        if token in (b"(", b"[", b"{"):
            depth += 1
        elif token in (b")", b"]", b"}"):
            depth -= 1
            if depth < 0:
                return None
        elif depth:
            continue  # (a lambda's ';', a template's '>>' inside brackets)
        elif token == b";":
            return None
        else:  # '>>'
            closing = _CLOSING.match(code, match.start())
            if closing is not None:
                return closing if _ARGUMENT_LIST.match(code, closing.end()) else None
    return None
