"""Evidence names its hardware: what the rules say about speed rests on AMD's documentation, and
every figure says where it was measured.

No AMD GPU has timed rocmigrate's rewrites; the figures come from NVIDIA runs of the ports
(docs/benchmarks.md). So a rule's docs may quote one only with the GPU and the toolkit, never
as proof of an AMD behaviour; messages (lint and convert output, the markers written into
converted code) quote none and point to ``rocmigrate rule CODE``; and the AMD-side reason of a
rule whose docs claim anything about speed cites an AMD document. Checked over every rule's
docs, the string literals of every rule module and the API tables' rows and comments."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from migrator import registry

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "rules"
# the product's prose about rules and their figures (docs/benchmarks.md, the lead's record of
# measurements, dates its sections by machine instead)
PROSE = ("README.md", "CONTRIBUTING.md", "docs/build.md", "docs/build_files.md",
         "docs/build_files_cmake.md", "docs/report.md")

# a figure: a time, a bandwidth or a ratio ("2.24x", "3.7-4.6x"; not "32x32" nor "0x7fff")
_FIGURE = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|us|µs|ns)\b|\bGB/s\b"
                     r"|\b\d+(?:\.\d+)?(?:-\d+(?:\.\d+)?)?x\b(?![\w.])")
_NVIDIA_GPU = re.compile(r"\b(?:[ABHLV]100|H200|GH200|B200|L40S?|RTX\s?\d{4})\b")
_GPU = re.compile(_NVIDIA_GPU.pattern + r"|\b(?:MI\d{3}[A-Z]?|gfx\d+\w*)\b")
_TOOLKIT = re.compile(r"\b(?:CUDA|nvcc|ROCm|hipcc|HIP)\s\d+(?:\.\d+)*")
_MEASURED = re.compile(r"\b[Mm]easured (?:on|with|at|by)\b")
_NVIDIA = re.compile(r"\bNVIDIA\b|" + _GPU.pattern)
_PROOF = re.compile(r"\b(?:proof|proves?|proven|demonstrat\w*|confirm\w*)\b")
_AMD = re.compile(r"\bAMD\b|\bMI\d{3}|\bCDNA\b|\bgfx\d")
# the AMD documents a rule's AMD-side reason may cite
_AMD_DOCUMENT = re.compile(
    r"AMD's (?:HIP (?:runtime API reference|programming guide|performance guidelines|documentation)"
    r"|CDNA ISA reference guides?|ROCm (?:installation )?documentation"
    r"|\"Using CMake\" HIP documentation|documentation of)")
# what says a rule's AMD reason is about speed
_SPEED = re.compile(r"\b(?:faster|slower|bandwidth|latency|overlap\w*|idles?|serialis\w*|"
                    r"serializ\w*|conflicts?|throughput|stall\w*|staged|back to back)\b")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(])")
_CODE_BLOCK = re.compile(r"```.*?```", re.DOTALL)
_PARAGRAPH = re.compile(r"\n\s*\n|^##[^\n]*$", re.MULTILINE)
_WHY = re.compile(r"## Why is this bad on AMD\n(.*?)(?=\n## )", re.DOTALL)


def _sentences(text: str) -> list[str]:
    sentences = []
    for paragraph in _PARAGRAPH.split(_CODE_BLOCK.sub("\n\n", text)):
        prose = " ".join(paragraph.split())
        sentences += [s for s in _SENTENCE_END.split(prose) if s]
    return sentences


def unsourced_figures(text: str) -> list[str]:
    """The sentences of ``text`` (prose: code blocks left out) that quote a figure, or say
    something was measured, without naming both the GPU and the toolkit."""
    return [s for s in _sentences(text)
            if (_FIGURE.search(s) or _MEASURED.search(s))
            and not (_GPU.search(s) and _TOOLKIT.search(s))]


def nvidia_as_proof(text: str) -> list[str]:
    """The sentences of ``text`` that call an NVIDIA run proof of something on AMD."""
    return [s for s in _sentences(text)
            if _NVIDIA.search(s) and _AMD.search(s) and _PROOF.search(s)]


def figures_in_message(text: str) -> bool:
    """Does a message (a string a rule reports or writes as a marker) quote a GPU or a figure?"""
    return bool(_FIGURE.search(text) or _NVIDIA_GPU.search(text))


def why_lacks_amd_source(rule) -> bool:
    """Does the rule claim something about speed on AMD without citing an AMD document?"""
    why = _WHY.search(rule.documentation())
    if why is None:
        return False
    text = " ".join(why.group(1).split())
    claims_speed = rule.optimization or _SPEED.search(text) is not None
    return claims_speed and _AMD_DOCUMENT.search(text) is None


def _module_strings(path: Path) -> list[str]:
    """The string literals of a rule module other than docstrings: its messages, markers and
    fix titles (f-strings by their literal parts)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    return [node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and id(node) not in docstrings]


def _table_rows(path: Path) -> tuple[list[str], str]:
    """A table's rows (messages, notes) and its comments joined as prose."""
    rows, comments = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        (comments if line.startswith("#") else rows).append(line.lstrip("# "))
    return rows, "\n".join(comments)


def test_rule_docs_name_where_each_figure_was_measured():
    found = {cls.code: unsourced_figures(cls.documentation()) for cls in registry.all_rules()}
    assert {code: s for code, s in found.items() if s} == {}


def test_rule_docs_never_call_an_nvidia_run_proof_for_amd():
    found = {cls.code: nvidia_as_proof(cls.documentation()) for cls in registry.all_rules()}
    assert {code: s for code, s in found.items() if s} == {}


def test_messages_quote_no_gpu_figures():
    found = {str(path.relative_to(RULES)): [s for s in _module_strings(path)
                                            if figures_in_message(s)]
             for path in sorted(RULES.rglob("*.py"))}
    assert {path: s for path, s in found.items() if s} == {}


def test_tables_quote_no_gpu_figures_and_comments_name_their_hardware():
    tables = sorted(RULES.rglob("*.tsv"))
    assert tables
    for path in tables:
        rows, comments = _table_rows(path)
        assert [row for row in rows if figures_in_message(row)] == [], path
        assert unsourced_figures(comments) == [], path
        assert nvidia_as_proof(comments) == [], path


def nvidia_figures_without_toolkit(text: str) -> list[str]:
    """The sentences of ``text`` that name an NVIDIA GPU beside a figure or a measurement but
    not the toolkit (a CPU timing, which names no GPU, is not asked for one)."""
    return [s for s in _sentences(text)
            if _NVIDIA_GPU.search(s) and (_FIGURE.search(s) or re.search(r"\b[Mm]easured\b", s))
            and not _TOOLKIT.search(s)]


@pytest.mark.parametrize("name", PROSE)
def test_product_prose_names_the_toolkit_of_nvidia_figures(name):
    text = (ROOT / name).read_text(encoding="utf-8")
    assert nvidia_figures_without_toolkit(text) == []
    assert nvidia_as_proof(text) == []


def test_speed_claims_on_amd_cite_amd_documents():
    rules = registry.all_rules()
    assert any(cls.optimization for cls in rules)
    assert [cls.code for cls in rules if why_lacks_amd_source(cls)] == []


@pytest.mark.parametrize("text", [
    "Measured on an H200: 100 independent 1 ms tasks took 102.7 ms on the default stream.",
    "padding a 32x32 transpose tile to 32x33 made the kernel 2.23x faster.",
    "copies of pinned memory ran 3.8-5.6x faster (H200, BERT-large gradients)",
    "4096 copies of 1 KiB took 7.8 ms one by one and 0.08 ms as one copy (98x).",
])
def test_an_unsourced_figure_is_found(text):
    assert unsourced_figures(text) == [text]


@pytest.mark.parametrize("text", [
    "On an NVIDIA H200 (CUDA 13.0, 2026-12-01), padding took the transpose from 0.0854 to "
    "0.0382 ms.",
    "A 32x32 tile, a 0x7fff NaN and 64-lane wavefronts are no figures.",
])
def test_a_sourced_figure_or_none_passes(text):
    assert unsourced_figures(text) == []


def test_an_nvidia_figure_without_toolkit_is_found():
    old = ("The figures behind each rule, measured on an H200 with `rocmigrate validate`, are "
           "in `docs/benchmarks.md`.")
    assert nvidia_figures_without_toolkit(old) == [old]
    assert nvidia_figures_without_toolkit("Measured on a 2-core AMD EPYC: 1.2 s.") == []
    assert nvidia_figures_without_toolkit("On an NVIDIA H200 (CUDA 13.0) it took 3 ms.") == []


def test_proof_and_message_patterns():
    assert nvidia_as_proof("The H200 run proves the rewrite pays on AMD.")
    assert not nvidia_as_proof("On an NVIDIA H200 it took 13.1 ms. No AMD GPU has measured it.")
    assert figures_in_message("pack them (H200: 4096 x 1 KiB took 7.8 ms one by one)")
    assert not figures_in_message("pack small copies into one transfer (`rocmigrate rule XFR002`)")
