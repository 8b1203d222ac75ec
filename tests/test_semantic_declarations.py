"""The semantic layer's declarations and types: casts and type text (types.py), the lexical
declaration reader (declarations.py) against the tree's (lookup.py), and what a name or a
pointer expression is declared as (lookup.py)."""

from __future__ import annotations

import re

import pytest

from conftest import rule_context
from declaration_forms import DECLARATION_FORMS, KNR, MACRO_LINES, sources
from migrator.semantic import declarations, lookup, scopes
from migrator.semantic.calls import find_name, lexical_call
from migrator.semantic.types import (Cast, Declaration, PointerText, is_fundamental, leading_cast,
                                     normal_type, pointer_text, strip_parens)


def test_type_text():
    assert normal_type("const  std :: vector<int>") == "std::vector<int>"
    assert normal_type("volatile struct node") == "node"
    assert is_fundamental("unsigned long long") and is_fundamental("uint32_t")
    assert not is_fundamental("T") and not is_fundamental("float4")
    assert strip_parens(" ((a + b)) ") == "a + b"
    assert strip_parens("(a) + (b)") == "(a) + (b)"
    assert leading_cast("(const float *)p + 1") == Cast("float", 1, len("(const float *)"))
    assert leading_cast("reinterpret_cast<unsigned int**>(q)") == Cast(
        "unsigned int", 2, len("reinterpret_cast<unsigned int**>"))
    assert leading_cast("(a)*b") is None
    assert pointer_text("(&a[i])") == PointerText(None, True, "a", "[i]")
    assert pointer_text(" p + n") == PointerText(None, False, "p", "+ n")
    assert pointer_text("(double*)x").cast == Cast("double", 1, len("(double*)"))
    assert pointer_text("*p") == PointerText()


# Every way the tree-based proof can find a float/double pointer, and some it must not.
_FLOAT_OPERANDS = b"""typedef float real;
using wide = double;
typedef real realer;
float file_level[8];
__global__ void k(const float* __restrict__ in, float* out, unsigned int* counts, real* r,
                  double d_values[], int n) {
  float a = {1.0f}, *b = out;
  float grid[2][2] = {{1.0f, 2.0f}, {3.0f, 4.0f}}, *c = out;
  float /* ; */ *commented = out;
  auto cast_auto = reinterpret_cast<double*>(counts);
  realer* via_alias = r;
  wide* w = nullptr;
  float local[4];
  __shared__ float tile[64];
  atomicAdd(out, 1.0f); atomicAdd(&out[n], 1.0f); atomicAdd(out + n, 1.0f);
  atomicAdd(b, 1.0f); atomicAdd(c, 1.0f); atomicAdd(commented, 1.0f);
  atomicAdd(cast_auto, 1.0); atomicAdd(via_alias, 1.0f); atomicAdd(w, 1.0);
  atomicAdd(&a, 1.0f); atomicAdd(&local[1], 1.0f); atomicAdd(&tile[0], 1.0f);
  atomicAdd(r, 1.0f); atomicAdd(d_values + 1, 1.0); atomicAdd(&file_level[n], 1.0f);
  atomicAdd((float*)counts, 1.0f); atomicAdd(((double*)counts), 1.0);
  atomicAdd(counts, 1u); atomicAdd((unsigned int*)out, 1u); atomicAdd(&n, 1);
}
__global__ void histogram(unsigned int* hist, const int* bins) { atomicAdd(&hist[bins[0]], 1u); }
"""


def test_may_point_to_never_rules_out_a_proven_pointee():
    """may_point_to lets a rule skip the parse for operands it rules out: that must never drop
    an operand the tree proves a float/double pointer, and must rule out the integer ones."""
    floating = frozenset({"float", "double"})
    ctx = rule_context(_FLOAT_OPERANDS, "t.cu")
    verdicts = []
    for _, start, end in find_name(ctx, {b"atomicAdd"}):
        begin, finish = lexical_call(ctx, start, end).arguments[0]
        text = _FLOAT_OPERANDS[begin:finish].decode()
        found = lookup.pointee(ctx, text, begin)
        proven = found is not None and not found.template and found.type in floating
        possible = lookup.may_point_to(ctx, begin, finish, floating)
        assert possible or not proven, text
        verdicts.append((text, proven, possible))
    assert sum(proven for _, proven, _ in verdicts) == 17
    # counts and n stay possible (a double cast of counts, and `double d_values[], int n`, are
    # written before them with no ';' between): the check may keep what it cannot rule out
    assert [text for text, _, possible in verdicts if not possible] == [
        "(unsigned int*)out", "&hist[bins[0]]"]
    shared = _FLOAT_OPERANDS.index(b"&tile[0]")
    assert lookup.pointee(ctx, "&tile[0]", shared) == lookup.Pointee("float", shared=True)
    assert lookup.value_declaration(ctx, "via_alias", shared) == Declaration("float", 1)


@pytest.mark.parametrize("name,data", sources(), ids=lambda value: value
                         if isinstance(value, str) else "")
def test_lexical_declarations_are_the_trees(name: str, data: bytes):
    """Where the lexical reader answers, it answers what lookup reads from the tree: the
    innermost function around every occurrence of every name in a function it reads, its name,
    and the name's declarations there."""
    ctx = rule_context(data, name)
    scopes.function_at(ctx, 0)
    for body in ctx.cache["scopes.functions"]:
        function = declarations.function_around(ctx, body.open + 1)
        if function is None:
            continue
        words = {}
        for index, text in enumerate(function.texts[function.parameters + 1 :],
                                     function.parameters + 1):
            if re.fullmatch(rb"[A-Za-z_]\w*", text):
                words.setdefault(text.decode(), []).append(function.offset(index))
        for word, offsets in words.items():
            found = declarations.declarations(ctx, function, word)
            for offset in offsets:
                tree = lookup.enclosing_function(ctx, offset)
                assert (tree.child_by_field_name("body").start_byte,
                        lookup.function_name(ctx, tree)) == (body.open, function.name)
                if found is not None:
                    assert found == lookup._scope(ctx, offset).names.get(word, set()), word


def test_lexical_reader_settles_the_common_kernel_and_defers_the_rest():
    """A kernel's pointer parameter is proven without a parse; forms the reader does not know,
    and files the parser reads otherwise than their braces, go to the tree."""
    ctx = rule_context(DECLARATION_FORMS, "forms.cu")
    at = DECLARATION_FORMS.index(b"atomicAdd(&out")
    kernel = declarations.function_around(ctx, at)
    assert kernel.name == "k"
    assert declarations.declarations(ctx, kernel, "out") == {Declaration("float", 1)}
    assert declarations.declarations(ctx, kernel, "tile") == {
        Declaration("float", 2, shared=True)}
    shadow = declarations.function_around(ctx, DECLARATION_FORMS.index(b"{ double* p"))
    assert shadow.name == "shadow"
    read = {word: declarations.declarations(ctx, shadow, word) for word in (
        "p", "c", "plain", "star", "amp", "first", "second", "call", "paren", "a1", "a3", "z",
        "e", "jp", "cased", "lp", "pairs", "rows", "typed", "ex", "l2", "m")}
    assert read["p"] == {Declaration("float", 1), Declaration("double", 1)}
    assert read["c"] == {Declaration("double", 1)}
    assert read["plain"] == set()  # auto without a cast: the tree reads no type
    assert read["star"] == {Declaration("a", 1)}  # 'a * star;' declares, as the tree
    assert read["amp"] == {Declaration("b", 0)}
    assert read["call"] == set()  # 'T (*call);' is a call for the tree
    assert read["a1"] == {Declaration("float", 1)}
    assert read["a3"] == {Declaration("float", 0)}
    assert read["z"] == {Declaration("float", 1)}
    assert read["e"] == set()  # a range-for's variable: no declaration in the tree
    assert read["jp"] == {Declaration("int", 1)}
    assert read["lp"] == {Declaration("float", 1)}
    assert read["l2"] == {Declaration("long", 1)}
    assert read["m"] == {Declaration("int", 0)}
    assert read["ex"] == {Declaration("std::exception", 0)}
    for unknown in ("second", "paren", "cased", "pairs", "rows", "typed"):
        assert read[unknown] is None, unknown
    # a loop macro followed by a block, a reference-returning head, K&R, macro lines
    assert declarations.function_around(ctx, DECLARATION_FORMS.index(b"atomicAdd(&r[s]")) \
        is None
    assert declarations.function_around(ctx, DECLARATION_FORMS.index(b"table[key]")) is None
    for name, data in (("macro_lines.cu", MACRO_LINES), ("knr.cu", KNR)):
        other = rule_context(data, name)
        assert declarations.function_around(other, data.index(b"atomicAdd")) is None, name
    # the template parameter is the tree's to report
    at = DECLARATION_FORMS.index(b"atomicAdd(out, v)")
    assert declarations.declarations(ctx, declarations.function_around(ctx, at), "out") == {
        Declaration("T", 1)}
    assert lookup.pointee(ctx, "out", at) == lookup.Pointee("T", template=True)

    kernel_only = DECLARATION_FORMS[: DECLARATION_FORMS.index(b"__device__ void shadow")]
    ctx = rule_context(kernel_only, "kernel.cu")
    at = kernel_only.index(b"atomicAdd(&out")
    assert lookup.pointee(ctx, "&out[blockIdx.x]", at) == lookup.Pointee("float")
    assert lookup.function_key(ctx, at) == (kernel_only.index(b"{"), "k")
    assert ctx.parsed_tree is None


def test_size_check_excludes_its_branch():
    data = b"""template <typename T> __device__ void f(T* p) {
  if constexpr (sizeof(T) == 4) { a(p); } else { b(p); }
  if constexpr (sizeof(T) != 2) { c(p); }
}
"""
    ctx = rule_context(data, "t.cu")
    excluded = {call: lookup.excluded_by_size_check(ctx, data.index(call), "T", 4)
                for call in (b"a(p)", b"b(p)", b"c(p)")}
    assert excluded == {b"a(p)": False, b"b(p)": True, b"c(p)": False}
    assert lookup.excluded_by_size_check(ctx, data.index(b"c(p)"), "T", 2)
