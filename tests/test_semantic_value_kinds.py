"""migrator.semantic.value_kinds and .conversions read the kinds of values, and where values
convert to a type, for whatever type the caller names (here a made-up ``fix16``): the layer
knows no API type by heart."""

from __future__ import annotations

import re

from conftest import rule_context
from migrator.semantic.conversions import (class_template_conversions, implicitly_initialised,
                                           instantiation, instantiation_conversions,
                                           parameters_of_type, returns_type)
from migrator.semantic.value_kinds import (TypeNames, aggregates, float_exact, numeric_literal,
                                           proven_value, value_kind, value_type)

FIX16 = TypeNames(
    kind="fix16", types=frozenset({"fix16", "fix16_t"}), pair_types=frozenset({"fix16x2"}),
    pair_member="fix16", producer=re.compile(r"(?:to_fix16|fix16|fix16_t)\s*[({]"),
    pair_producer=re.compile(r"make_fix16x2\s*\("),
    overloads=frozenset({"fadd", "fadd2"}), pair_results=frozenset({"fadd2"}),
    functions=re.compile(r"fix16_\w+"), float_functions=frozenset({"from_fix16"}))
# the same names, told of another type: fix16 is then nothing this layer knows
OTHER = TypeNames(
    kind="other", types=frozenset({"other"}), pair_types=frozenset(), pair_member="other",
    producer=re.compile(r"to_other\s*\("), pair_producer=re.compile(r"(?!)"),
    overloads=frozenset(), pair_results=frozenset(), functions=re.compile(r"(?!)"),
    float_functions=frozenset())

SOURCE = b"""\
typedef fix16 f16;
struct Pair { fix16 a; int n; float* p; };
struct Outer { Pair inner; fix16 b; };
float scale(float x);
fix16 halve(fix16 x);
fix16 halve(fix16 x, int n);
__device__ void k(fix16* v, fix16x2 w, float f, double d, int i) {
  fix16 h = v[i];
  f16 g = f;
  auto lam = [](float x) -> fix16 { return x; };
  float r = scale(f) + f * 2.0f;
  Pair s = {f, 2, nullptr};
  Outer o = {{d, 1, nullptr}, f};
  v[0] = halve(h);
  w.x = fix16_from_bits(i);
  fix16 e = fadd(h, g);
}
"""


def _node(ctx, text: str, within: str | None = None):
    """The outermost tree node that spans ``text``, the first in the file or in the first
    ``within``."""
    start = ctx.data.index((within or text).encode())
    start = ctx.data.index(text.encode(), start)
    node = ctx.tree.root_node.descendant_for_byte_range(start, start + len(text))
    while node.parent is not None and (node.parent.start_byte, node.parent.end_byte) == (
            node.start_byte, node.end_byte):
        node = node.parent
    return node


def test_value_kind_reads_the_told_type_and_arithmetic():
    ctx = rule_context(SOURCE)
    kinds = {text: value_kind(ctx, FIX16, _node(ctx, text, within)) for text, within in [
        ("v[i]", None), ("h", "(h)"), ("f * 2.0f", None), ("scale(f)", None),
        ("d", "{{d"), ("i", "(i)"), ("halve(h)", None), ("fix16_from_bits(i)", None),
        ("fadd(h, g)", None), ("w.x", None), ("2", "f, 2"), ("2.0f", None)]}
    assert kinds == {"v[i]": "fix16", "h": "fix16", "f * 2.0f": "float", "scale(f)": "float",
                     "d": "double", "i": "integer", "halve(h)": "fix16",
                     "fix16_from_bits(i)": "fix16", "fadd(h, g)": "fix16", "w.x": "fix16",
                     "2": "integer", "2.0f": "float"}
    # told of another type, this layer reads fix16 as nothing it knows
    assert value_kind(ctx, OTHER, _node(ctx, "v[i]")) is None
    assert value_kind(ctx, OTHER, _node(ctx, "f * 2.0f")) == "float"


def test_proven_value_and_value_type():
    ctx = rule_context(SOURCE)
    at = SOURCE.index(b"fix16 h =")
    assert proven_value(ctx, FIX16, "to_fix16(f)", at)
    assert proven_value(ctx, FIX16, "(fix16_t)f", at)
    assert proven_value(ctx, FIX16, "v[3]", at)
    assert proven_value(ctx, FIX16, "*v", at)
    assert not proven_value(ctx, FIX16, "v", at)  # a pointer, not a value
    assert proven_value(ctx, FIX16, "fadd(f, v[0])", at)  # an overload on one
    assert not proven_value(ctx, FIX16, "fadd(f, f)", at)
    assert proven_value(ctx, FIX16, "w", at, pair=True)
    assert proven_value(ctx, FIX16, "make_fix16x2(f, f)", at, pair=True)
    assert not proven_value(ctx, OTHER, "v[3]", at)
    assert value_type(ctx, FIX16, _node(ctx, "v[i]")) == ("fix16", 0)
    assert value_type(ctx, FIX16, _node(ctx, "o", "{{d")) is None  # (declared after)
    assert value_type(ctx, FIX16, _node(ctx, "w.x")) == ("fix16", 0)


def test_literals():
    assert numeric_literal("(-1.5f)").group("suffix") == "f"
    assert numeric_literal("x") is None
    assert float_exact(numeric_literal("0.5"))
    assert not float_exact(numeric_literal("0.1"))  # a double float does not hold
    assert float_exact(numeric_literal("0.1f"))
    assert float_exact(numeric_literal("16777216")) and not float_exact(
        numeric_literal("16777217"))


def test_aggregates_and_implicit_initialisation():
    ctx = rule_context(SOURCE)
    assert aggregates(ctx, FIX16) == {"Pair": [("a", "fix16"), ("n", "scalar"), ("p", "scalar")],
                                      "Outer": [("inner", "struct Pair"), ("b", "fix16")]}
    assert aggregates(ctx, OTHER)["Pair"][0] == ("a", "struct fix16")  # not told of it

    def initialised(text: str) -> list[str]:
        declaration = _node(ctx, text)
        return [ctx.text(value) for value in implicitly_initialised(ctx, FIX16, declaration)]

    assert initialised("Pair s = {f, 2, nullptr};") == ["f"]
    assert initialised("Outer o = {{d, 1, nullptr}, f};") == ["d", "f"]
    assert initialised("f16 g = f;") == ["f"]  # through the alias
    assert initialised("fix16 h = v[i];") == []  # the type's own name: its rule sees it


def test_returns_and_parameters():
    ctx = rule_context(SOURCE)
    assert returns_type(ctx, FIX16, _node(ctx, "return x;"))  # the lambda's -> fix16
    assert parameters_of_type(ctx, FIX16, "halve", 1) == {0}
    assert parameters_of_type(ctx, FIX16, "halve", 2) == {0}
    assert parameters_of_type(ctx, FIX16, "scale", 1) == frozenset()


TEMPLATES = b"""\
template <class T> T zero() { T v = 0; return v; }
template <class T> void fill(T* p, float f) { p[0] = f; }
template <class T> struct Acc { T total = 0; void add(float x) { total += x; } };
__global__ void k(fix16* p) {
  zero<fix16>();
  fill(p, 1.0f);
  Acc<fix16> acc;
}
"""


def test_template_conversions():
    ctx = rule_context(TEMPLATES)
    explicit = _node(ctx, "zero<fix16>()")
    assert instantiation(ctx, FIX16, explicit, explicit.child_by_field_name("function")) == "zero"
    found = instantiation_conversions(ctx, FIX16, "zero", explicit)
    assert [(c.template, c.parameter, c.code) for c in found] == [("zero", "T", "T v = 0;")]
    deduced = _node(ctx, "fill(p, 1.0f)")
    assert instantiation(ctx, FIX16, deduced, deduced.child_by_field_name("function")) == "fill"
    assert [c.code for c in instantiation_conversions(ctx, FIX16, "fill", deduced)] == [
        "p[0] = f"]
    use = _node(ctx, "Acc<fix16>")
    assert [c.code for c in class_template_conversions(ctx, FIX16, "Acc", use)] == [
        "T total = 0;", "total += x"]
    assert instantiation(ctx, OTHER, explicit, explicit.child_by_field_name("function")) is None
