"""migrator.semantic.calls reads brackets, commas and member access through the code view, so
no literal the token view knows (raw strings included) and no comment changes the answer."""

from __future__ import annotations

import pytest

from conftest import rule_context
from migrator.semantic import calls, scopes

# raw strings whose bodies hold what a string-and-comment scanner misreads: ')' and ',' (the
# list would end or split there), '"' (a quote would open a string running to the line's end)
# and '//' (a comment); some span lines
_RAW_ARGUMENTS = [
    b'R"(a, b)"',
    b'R"x(a), "b)x"',
    b'u8R"--(")--"',
    b'LR"(,)"',
    b'R"y(\n) // , ) "\n)y"',
    b'R"(\\)"',
]


@pytest.mark.parametrize("raw", _RAW_ARGUMENTS)
def test_raw_strings_in_arguments_hold_no_bracket_or_comma(raw: bytes):
    data = b"void g() {\n  cudaMemcpyToSymbol(sym, " + raw + b", n);\n  other(1);\n}\n"
    name_end = data.index(b"(", data.index(b"cudaMemcpyToSymbol"))
    ctx = rule_context(data)
    expected = [b"sym", raw, b"n"]
    for source in (ctx, data):  # a rule context, or the bytes alone
        spans = calls.arguments(source, name_end)
        assert [data[begin:end] for begin, end in spans] == expected
        assert calls.argument_text(source, name_end, 1) == raw
        assert calls.close_of(source, name_end) == data.index(b";", name_end) - 1
    start = data.index(b"cudaMemcpyToSymbol")
    call = calls.lexical_call(ctx, start, name_end)
    assert isinstance(call, calls.LexicalCall)
    assert [data[begin:end] for begin, end in call.arguments] == expected
    assert call.close == data.index(b";", name_end) - 1


def test_raw_string_in_a_macro_body_keeps_the_directive_open():
    data = b'#define M f(R"(\n)", x)\nint y = (1, 2);\n'
    name_end = data.index(b"(")
    spans = calls.macro_arguments(data, name_end)
    assert [data[begin:end] for begin, end in spans] == [b'R"(\n)"', b"x"]


def test_scopes_find_loops_around_raw_strings():
    data = b'void f() {\n  for (auto s : {R"(;)", R"x()")x"}) { use(s); }\n}\n'
    ctx = rule_context(data)
    (loop,) = scopes.loops(ctx)
    assert data[loop.body[0] : loop.body[1]].strip(b"{} ") == b"use(s);"


def test_other_literals_still_hold_no_bracket_or_comma():
    data = b"f(')', \"(,\", /* ) */ a // )\n, 1'000'000)"
    spans = calls.arguments(rule_context(data), 1)
    assert [data[begin:end] for begin, end in spans] == [b"')'", b'"(,"', b"a // )", b"1'000'000"]


def test_a_list_inside_a_comment_or_literal_is_no_list():
    data = b'x = "f(a, b)"; // g(c)\n'
    for name in (b"f", b"g"):
        name_end = data.index(name) + 1
        assert calls.arguments(rule_context(data), name_end) is None
        assert calls.arguments(data, name_end) is None
        assert calls.close_of(data, name_end) is None


@pytest.mark.parametrize("before", [
    b"// record the event.\n",
    b"/* check errors. */ ",
    b"/* two\n   lines. */\n",
    b'puts("stream.");\n',
    b"#define EPS 1.\n",
])
def test_a_dot_ending_a_comment_literal_or_directive_makes_no_member(before: bytes):
    data = b"void f() {\n  " + before + b"  cudaStream_t s;\n}\n"
    ctx = rule_context(data)
    assert not calls.is_member(ctx, data.index(b"cudaStream_t"))
    assert [name for name, _, _ in calls.find_name(ctx, {b"cudaStream_t"})] == [b"cudaStream_t"]


@pytest.mark.parametrize("access", [b"x.", b"x .\n  ", b"p->", b"p -> /* c. */ ", b"x. // c\n  "])
def test_member_access_across_blanks_and_comments(access: bytes):
    data = b"void f() { " + access + b"cudaStream_t; }"
    assert calls.is_member(rule_context(data), data.index(b"cudaStream_t"))


@pytest.mark.parametrize("text, called", [
    (b"y = a * f(x);", True), (b"y = v[i] * f(x);", True), (b"y = 2 * f(x);", True),
    (b"y = (a) * f(x);", True), (b"g(a, b & f(x));", True), (b"y = a && f(x);", True),
    (b"return *f(x);", True), (b"int x = *f(x);", True), (b"c ? a * f(x) : 0;", True),
    (b"y = x < a * f(x);", True),
    (b"float * f(int);", False), (b"float *f(int);", False), (b"T &f(int);", False),
    (b"const char* f(int);", False), (b"static T* f(int a) {", False),
    (b"a::b * f(int);", False), (b"std::vector<int> *f(int);", False),
])
def test_a_star_or_ampersand_before_a_name_is_an_operator_or_a_declarator(text, called):
    """'a * f(x)' multiplies by a call (HeCBench attention-paged's static_cast<float>(a) *
    __bfloat162float(b) was taken for a declaration, and LOW001 left it); 'T *f(int);'
    declares f."""
    at = text.index(b"f(")
    assert (calls.lexical_call(rule_context(text), at, at + 1) is not None) == called


# (argument list, its arguments): a template-id's commas split no argument, in a plain list (no
# bracket inside) or a scanned one; comparisons and shifts stay apart
_TEMPLATE_ID_ARGUMENTS = [
    (b"(&fa, k<int, float>)", [b"&fa", b"k<int, float>"]),
    (b"(k<int, float>, attr, 0)", [b"k<int, float>", b"attr", b"0"]),
    (b"(&fa, (void*)k<T, (N > 2)>)", [b"&fa", b"(void*)k<T, (N > 2)>"]),
    (b"(&fa, ns::k<T, v<U, 2>>)", [b"&fa", b"ns::k<T, v<U, 2>>"]),
    (b"(&fa, k<T,\n  U>, n)", [b"&fa", b"k<T,\n  U>", b"n"]),
    (b"(x, std::pair<int, A>::first_type(3))", [b"x", b"std::pair<int, A>::first_type(3)"]),
    (b"(make<a, b>(x), y)", [b"make<a, b>(x)", b"y"]),
    (b"(n < m, k<a, b>)", [b"n < m", b"k<a, b>"]),
    (b"(i < n, m > k)", [b"i < n", b"m > k"]),
    (b"(a << 2, b >> 1)", [b"a << 2", b"b >> 1"]),
    (b"(p->x < 3, z > 2)", [b"p->x < 3", b"z > 2"]),
    (b"(a < b ? c : d, e)", [b"a < b ? c : d", b"e"]),
]


@pytest.mark.parametrize("listed, expected", _TEMPLATE_ID_ARGUMENTS)
def test_a_template_id_is_one_argument(listed: bytes, expected: list[bytes]):
    data = b"void g() { cudaFuncGetAttributes" + listed + b"; }\n"
    name_end = data.index(b"(", data.index(b"cuda"))
    for source in (rule_context(data), data):
        spans = calls.arguments(source, name_end)
        assert [data[begin:end] for begin, end in spans] == expected
        assert calls.argument_text(source, name_end, 1) == expected[1]
