"""The kind of a value where it can be read: of an expression, a declared name, a call, a member,
an aggregate's members. A kind is "float", "double", "integer" or the kind of a type the rule
that asks names (``TypeNames``: its spellings and the functions whose values are one, from the
rule's data; this layer knows none by heart), read from literals, casts, declarations (names,
members of structs defined in the file, functions declared there, lambdas), the file's aliases
of types and the usual arithmetic conversions."""

from __future__ import annotations

import functools
import re
import struct
from dataclasses import dataclass

from migrator.rule import RuleContext

from .calls import arguments, close_of
from .lookup import type_aliases, value_declaration
from .types import is_fundamental, normal_type, strip_parens

NUMERIC_LITERAL = re.compile(
    r"[-+]?\s*(?:0[xX](?P<hex>[0-9a-fA-F']*\.?[0-9a-fA-F']*(?:[pP][-+]?\d+)?)"
    r"|(?P<dec>(?:\d[\d']*\.?[\d']*|\.\d[\d']*)(?:[eE][-+]?\d+)?))(?P<suffix>[fFlLuU]*)")
_ELEMENT = re.compile(r"([A-Za-z_]\w*)\s*((?:\[[^\[\]]*\]\s*)*)")
_ARITHMETIC_OPERATORS = frozenset({"+", "-", "*", "/", "%"})
_BOOLEAN_OPERATORS = frozenset({"==", "!=", "<", ">", "<=", ">=", "&&", "||"})


@dataclass(frozen=True, eq=False)
class TypeNames:
    """A type the kinds follow beside the language's arithmetic types, as the rule that asks
    about it names it: its spellings, a pair of it, and the functions whose values are one.
    Cached by identity: a rule makes one."""

    kind: str  # what a value of the type is called (value_kind, aggregates)
    types: frozenset[str]  # every spelling of the type
    pair_types: frozenset[str]  # every spelling of a pair of them (members .x and .y)
    pair_member: str  # the type a pair's member is read as
    # a call or a conversion whose value is one (a pair), matched from the start of an
    # expression up to the bracket that opens its arguments
    producer: re.Pattern
    pair_producer: re.Pattern
    # functions overloaded for the type: a call's value is one where an argument is one; for
    # those in pair_results, a pair where an argument is a pair
    overloads: frozenset[str]
    pair_results: frozenset[str]
    functions: re.Pattern  # (the whole name of) the other functions whose value is one
    float_functions: frozenset[str]  # the functions whose value is a float

    @functools.cached_property
    def overload_call(self) -> re.Pattern:
        return re.compile("(" + "|".join(sorted(self.overloads, key=len, reverse=True))
                          + r")\s*\(")

    @functools.cached_property
    def cast(self) -> re.Pattern:
        """A C-style cast to the type: ``(T)``."""
        return re.compile(r"\(\s*(?:const\s+)?(?:" + self._spellings + r")\s*\)\s*")

    @functools.cached_property
    def container(self) -> re.Pattern:
        """A standard container of the type (spaces removed): ``std::vector<T>``..."""
        return re.compile(r"(?:std::)?(?:vector|array|valarray)<(" + self._spellings
                          + r")\s*[,>].*")

    @functools.cached_property
    def _spellings(self) -> str:
        return "|".join(sorted(self.types, key=len, reverse=True))


def numeric_literal(text: str) -> re.Match | None:
    """The numeric literal ``text`` is (sign and enclosing parentheses allowed), or None."""
    return NUMERIC_LITERAL.fullmatch(strip_parens(text))


def _floating(literal: re.Match) -> bool:
    """Is the numeric literal a floating one (not an integer)?"""
    hexadecimal = literal.group("hex")
    return (any(c in hexadecimal for c in ".pP") if hexadecimal is not None
            else any(c in literal.group("dec") for c in ".eE"))


def float_exact(match: re.Match) -> bool:
    """Does the numeric literal keep its value in float (or is it a float literal)? Then a
    conversion of it through float rounds once."""
    suffix = match.group("suffix").lower()
    body = match.group().replace("'", "").replace(" ", "")
    body = body[: len(body) - len(suffix)]
    hexadecimal = match.group("hex")
    floating = _floating(match)
    if floating and "f" in suffix:
        return True
    if floating and "l" in suffix:
        return False  # long double: not checked
    try:
        if hexadecimal is not None:
            value = float.fromhex(body) if floating else float(int(body, 16))
        else:
            value = float(body) if floating else float(int(body))
        return struct.unpack("f", struct.pack("f", value))[0] == value
    except (ValueError, OverflowError):
        return False


def proven_value(ctx: RuleContext, names: TypeNames, text: str, at: int,
                 pair: bool = False) -> bool:
    """Is the expression ``text`` (written at ``at``) proven to be a value of the type (or, with
    ``pair``, a pair of them): a conversion to one, an overload's call on one, or a name
    declared with the type (``x``, ``*p``, ``p[i]``, ``v[i]`` of a ``std::vector`` of it)?"""
    text = strip_parens(text)
    producer = (names.pair_producer if pair else names.producer).match(text)
    if producer is not None:  # the whole text is one conversion
        raw = text.encode()
        return close_of(raw, len(text[: producer.end() - 1].encode())) == len(raw) - 1
    overload = names.overload_call.match(text)
    if overload is not None and (overload.group(1) in names.pair_results) == pair:
        # one (a pair) where an argument is one
        raw = text.encode()
        spans = arguments(raw, overload.end(1))
        return (spans is not None and close_of(raw, overload.end() - 1) == len(raw) - 1
                and any(proven_value(ctx, names, raw[b:e].decode("utf-8", "replace"), at, pair)
                        for b, e in spans))
    cast = None if pair else names.cast.match(text)
    if cast is not None:  # (T)x, (T)(...)
        operand = text[cast.end():].encode()
        return (re.fullmatch(rb"[\w.]+", operand) is not None
                or operand[:1] == b"(" and close_of(operand, 0) == len(operand) - 1)
    found = declared_type(ctx, text, at)
    if found is None:
        return False
    type_name, levels = found
    if pair:
        return type_name in names.pair_types and levels == 0
    return (type_name in names.types and levels == 0) or (
        levels == -1 and names.container.fullmatch(type_name.replace(" ", "")) is not None)


def declared_type(ctx: RuleContext, text: str, at: int) -> tuple[str, int] | None:
    """(declared type, pointer levels left) of ``text`` where it is a name (``x``, ``*p``,
    ``p[i]``) whose declaration is found, else None."""
    derefs = 0
    text = strip_parens(text)
    while text.startswith("*"):
        derefs += 1
        text = strip_parens(text[1:])
    element = _ELEMENT.fullmatch(text)
    if element is None:
        return None
    declaration = value_declaration(ctx, element.group(1), at)
    if declaration is None:
        return None
    return declaration.type, declaration.pointers - derefs - element.group(2).count("[")


def value_kind(ctx: RuleContext, names: TypeNames, node) -> str | None:
    """The kind of the expression ``node`` where it can be read: ``names.kind``, "float",
    "double" (long double too) or "integer" (bool and char too), else None. The type mixed
    with another is not read (an API may reject it as ambiguous)."""
    while node.type == "parenthesized_expression" and node.named_child_count == 1:
        node = node.named_children[0]
    kind = node.type
    if kind == "number_literal":
        literal = NUMERIC_LITERAL.fullmatch(ctx.text(node))
        if literal is None:
            return None
        suffix = literal.group("suffix").lower()
        return ("float" if "f" in suffix else "double") if _floating(literal) else "integer"
    if kind in ("true", "false", "char_literal"):
        return "integer"
    if kind in ("binary_expression", "unary_expression", "conditional_expression"):
        return _operation_kind(ctx, names, node)
    if kind == "cast_expression":
        type_node = node.child_by_field_name("type")
        return type_kind(ctx, names, ctx.text(type_node), 0) if type_node is not None else None
    if proven_value(ctx, names, ctx.text(node), node.start_byte):
        return names.kind
    if kind == "call_expression":
        return _call_kind(ctx, names, node)
    typed = value_type(ctx, names, node)
    if typed is None:
        return None
    type_name, pointers = typed
    container = names.container.fullmatch(type_name.replace(" ", ""))
    return (names.kind if container is not None and pointers == -1
            else type_kind(ctx, names, type_name, pointers))


def _operation_kind(ctx: RuleContext, names: TypeNames, node) -> str | None:
    """value_kind of a unary, binary or conditional expression."""
    if node.type == "conditional_expression":
        kinds = {value_kind(ctx, names, node.child_by_field_name(side))
                 for side in ("consequence", "alternative")}
        return kinds.pop() if len(kinds) == 1 else None
    operator = node.child_by_field_name("operator")
    operator = operator.type if operator is not None else ""
    if operator in _BOOLEAN_OPERATORS or operator == "!":
        return "integer"
    if node.type == "unary_expression":
        inner = value_kind(ctx, names, node.child_by_field_name("argument"))
        return inner if operator in ("-", "+") or inner == "integer" else None
    kinds = {value_kind(ctx, names, node.child_by_field_name(side)) for side in ("left", "right")}
    if None in kinds or operator not in _ARITHMETIC_OPERATORS and kinds != {"integer"}:
        return None
    if names.kind in kinds:
        return names.kind if kinds == {names.kind} and operator != "%" else None
    # the usual arithmetic conversions
    return next(kind for kind in ("double", "float", "integer") if kind in kinds)


def type_kind(ctx: RuleContext, names: TypeNames, type_text: str, pointers: int) -> str | None:
    """value_kind of a value declared with ``type_text`` (or the file's alias of a type) and
    ``pointers`` levels left."""
    type_name = resolved_type(ctx, type_text)
    if pointers != 0 or not type_name:
        return None
    if type_name in names.types:
        return names.kind
    if type_name == "float":
        return "float"
    if type_name in ("double", "long double"):
        return "double"
    return "integer" if is_fundamental(type_name) else None


def _call_kind(ctx: RuleContext, names: TypeNames, node) -> str | None:
    """value_kind of a call: a conversion (``static_cast<T>(x)``, ``float(x)``), a function
    ``names`` lists, or a function whose every declaration in the file returns values of one
    kind."""
    function = node.child_by_field_name("function")
    if function is None:
        return None
    if function.type == "primitive_type":
        return type_kind(ctx, names, ctx.text(function), 0)
    if function.type == "field_expression":  # s.f(): a member function of a struct here
        typed = _member(ctx, names, function, "()")
        return type_kind(ctx, names, *typed) if typed is not None else None
    template_arguments: list[str] = []
    if function.type == "template_function":
        name, listed = (function.child_by_field_name(f) for f in ("name", "arguments"))
        if name is None or listed is None:
            return None
        template_arguments = [ctx.text(argument) for argument in listed.named_children]
        if ctx.text(name) == "static_cast":
            return type_kind(ctx, names, template_arguments[0], 0) if template_arguments else None
        function = name
    if function.type != "identifier":
        return None
    name = ctx.text(function)
    if name in names.float_functions:
        return "float"
    if names.functions.fullmatch(name):
        return names.kind
    if name in type_aliases(ctx):  # a conversion to a typedef of a type: U(x)
        return type_kind(ctx, names, name, 0)
    listed = node.child_by_field_name("arguments")
    given = [argument for argument in (listed.named_children if listed is not None else ())
             if argument.type != "comment"]
    candidates = [declared for declared in function_kinds(ctx, names).get(name, ())
                  if declared.least <= len(given) <= declared.most]
    if not candidates and not template_arguments:
        return _lambda_kind(ctx, names, node, name)
    kinds = {declared.returned(ctx, names, template_arguments) for declared in candidates}
    if len(kinds) > 1:  # overloads: those whose parameters have the arguments' kinds
        given_kinds = [value_kind(ctx, names, argument) for argument in given]
        kinds = {declared.returned(ctx, names, template_arguments) for declared in candidates
                 if all(kind is None or kind == parameter
                        for kind, parameter in zip(given_kinds, declared.parameters))}
    return kinds.pop() if len(kinds) == 1 else None


def _lambda_kind(ctx: RuleContext, names: TypeNames, call, name: str) -> str | None:
    """value_kind of the call of the lambda ``name`` declared (``auto name = [...](...) -> T
    {...}``) before ``call`` in a block around it (or the file), read from its trailing return
    type."""
    node = call.parent
    while node is not None:
        if node.type in ("compound_statement", "translation_unit"):
            for child in node.named_children:
                if child.start_byte >= call.start_byte:
                    break
                type_node = child.child_by_field_name("type")
                if child.type != "declaration" or type_node is None or \
                        ctx.text(type_node) != "auto":
                    continue
                for declarator in child.children_by_field_name("declarator"):
                    target = declarator.child_by_field_name("declarator")
                    value = declarator.child_by_field_name("value")
                    if declarator.type == "init_declarator" and target is not None and \
                            ctx.text(target) == name and value is not None:
                        return _lambda_return_kind(ctx, names, value)
        node = node.parent
    return None


def _lambda_return_kind(ctx: RuleContext, names: TypeNames, lambda_) -> str | None:
    """value_kind of the value of a lambda expression with a trailing return type, else None."""
    if lambda_.type != "lambda_expression":
        return None
    declarator = lambda_.child_by_field_name("declarator")
    trailing = next((child for child in (declarator.children if declarator is not None else ())
                     if child.type == "trailing_return_type"), None)
    if trailing is None or not trailing.named_child_count:
        return None
    return type_kind(ctx, names, ctx.text(trailing.named_children[0]), 0)


@dataclass(frozen=True)
class DeclaredFunction:
    """A function declaration as value_kind reads its calls."""

    returns: str | int | None  # a kind, or the index of the template parameter returned
    parameters: tuple[str | None, ...]  # the kind of each parameter
    least: int  # arguments it takes, at least
    most: float  # and at most

    def returned(self, ctx: RuleContext, names: TypeNames,
                 template_arguments: list[str]) -> str | None:
        """The kind of its value, called with ``template_arguments`` (written in ``ctx``)."""
        if not isinstance(self.returns, int):
            return self.returns
        return (type_kind(ctx, names, template_arguments[self.returns], 0)
                if self.returns < len(template_arguments) else None)


def function_kinds(ctx: RuleContext, names: TypeNames) -> dict[str, list[DeclaredFunction]]:
    """The declarations (and definitions) of each function the file declares by a plain
    name."""
    key = ("value_kinds.functions", names)
    found = ctx.cache.get(key)
    if found is not None:
        return found
    found = {}
    stack = [ctx.tree.root_node]
    while stack:
        node = stack.pop()
        if node.type in ("function_definition", "declaration", "field_declaration"):
            type_node = node.child_by_field_name("type")
            for declarator in node.children_by_field_name("declarator"):
                if declarator.type != "function_declarator" or type_node is None:
                    continue
                name = declarator.child_by_field_name("declarator")
                if name is not None and name.type == "identifier":
                    found.setdefault(ctx.text(name), []).append(
                        _declared_function(ctx, names, node, type_node, declarator))
        if node.type != "compound_statement":
            stack.extend(node.children)
    ctx.cache[key] = found
    return found


def _declared_function(ctx: RuleContext, names: TypeNames, node, type_node,
                       declarator) -> DeclaredFunction:
    returned = normal_type(ctx.text(type_node))
    parameter_names = template_parameters(ctx, node)
    listed = declarator.child_by_field_name("parameters")
    parameters, least, most = [], 0, 0.0
    for parameter in listed.named_children if listed is not None else ():
        if parameter.type == "variadic_parameter":
            most = float("inf")
            continue
        if parameter.type not in ("parameter_declaration", "optional_parameter_declaration"):
            continue
        parameters.append(type_kind(ctx, names, *parameter_type(ctx, parameter)))
        least += parameter.type == "parameter_declaration"
    if parameters == [None] and ctx.text(listed).replace(" ", "") == "(void)":
        parameters = []
    most = max(most, len(parameters))
    return DeclaredFunction(parameter_names.index(returned) if returned in parameter_names
                            else type_kind(ctx, names, returned, 0), tuple(parameters), least,
                            most)


def parameter_type(ctx: RuleContext, parameter) -> tuple[str, int]:
    """(type, pointer levels) of a parameter declaration (a reference counts none)."""
    pointers, inner = 0, parameter.child_by_field_name("declarator")
    while inner is not None and inner.type in ("pointer_declarator", "abstract_pointer_declarator",
                                               "array_declarator", "reference_declarator"):
        pointers += inner.type != "reference_declarator"
        inner = inner.child_by_field_name("declarator") or next(
            (child for child in inner.named_children if "declarator" in child.type
             or child.type == "identifier"), None)
    type_node = parameter.child_by_field_name("type")
    return (normal_type(ctx.text(type_node)) if type_node is not None else ""), pointers


def template_parameters(ctx: RuleContext, declaration) -> list[str]:
    """The type parameters (names, in order) of the template the declaration is the body of,
    if it is one."""
    parent = declaration.parent
    if parent is None or parent.type != "template_declaration":
        return []
    listed = parent.child_by_field_name("parameters")
    names = []
    for parameter in listed.named_children if listed is not None else ():
        name = next((child for child in parameter.named_children
                     if child.type == "type_identifier"), None)
        names.append(ctx.text(name) if name is not None else "")
    return names


def value_type(ctx: RuleContext, names: TypeNames, node) -> tuple[str, int] | None:
    """(declared type, pointer levels left) of a name, an element (``p[i]``, ``*p``), a member
    (``s.x``, ``p->x`` of a struct defined in the file, ``v.x`` of a pair) or a pointer's
    arithmetic (``p + i``), or None."""
    while node.type == "parenthesized_expression" and node.named_child_count == 1:
        node = node.named_children[0]
    if node.type == "identifier":
        declaration = value_declaration(ctx, ctx.text(node), node.start_byte)
        if declaration is not None:
            return declaration.type, declaration.pointers
        return _sibling_member(ctx, node)
    if node.type == "subscript_expression":
        inner = value_type(ctx, names, node.child_by_field_name("argument"))
        return (inner[0], inner[1] - 1) if inner is not None else None
    operator = node.child_by_field_name("operator")
    if node.type == "binary_expression" and operator is not None and operator.type in ("+", "-"):
        inner = value_type(ctx, names, node.child_by_field_name("left"))  # p + i
        return inner if inner is not None and inner[1] > 0 and value_kind(
            ctx, names, node.child_by_field_name("right")) == "integer" else None
    if node.type == "pointer_expression":
        inner = value_type(ctx, names, node.child_by_field_name("argument"))
        if inner is None or operator is None:
            return None
        return inner[0], inner[1] + (1 if operator.type == "&" else -1)
    if node.type == "field_expression":
        return _member(ctx, names, node, "")
    return None


def _member(ctx: RuleContext, names: TypeNames, node, suffix: str) -> tuple[str, int] | None:
    """value_type of the member ``s.x`` / ``p->x`` (a field expression); with ``suffix`` "()",
    of the value of the member function ``s.f()``."""
    operator, field = node.child_by_field_name("operator"), node.child_by_field_name("field")
    owner = value_type(ctx, names, node.child_by_field_name("argument"))
    if owner is None or operator is None or field is None or \
            owner[1] != (1 if operator.type == "->" else 0):
        return None
    if normal_type(owner[0]) in names.pair_types and ctx.text(field) in ("x", "y") and \
            not suffix:
        return names.pair_member, 0  # a pair's halves
    return _members(ctx).get(normal_type(owner[0]), {}).get(ctx.text(field) + suffix)


def _sibling_member(ctx: RuleContext, name) -> tuple[str, int] | None:
    """(type, pointer levels) of the member of the struct whose body ``name`` is written in
    (``struct S { T a; T b{a}; }``), or None."""
    node, function = name.parent, None
    while node is not None and node.type != "field_declaration_list":
        if function is None and node.type == "function_definition":
            function = node
        node = node.parent
    if node is None and function is not None:  # S::f() { v = x; } outside S's body
        owner = owner_of(function)
        return None if owner is None else _members(ctx).get(ctx.text(owner), {}).get(
            ctx.text(name))
    owner = node.parent if node is not None else None
    if owner is None:
        return None
    type_name = owner.child_by_field_name("name")
    if type_name is None and owner.parent is not None and owner.parent.type == "type_definition":
        type_name = owner.parent.child_by_field_name("declarator")
    return None if type_name is None else _members(ctx).get(ctx.text(type_name), {}).get(
        ctx.text(name))


def owner_of(function):
    """The name (a tree node) of the struct or class template whose member the function
    definition defines outside its body (``void S::f()``, ``void Acc<T>::f()``), else None."""
    declarator = function.child_by_field_name("declarator")
    name = declarator.child_by_field_name("declarator") if declarator is not None and \
        declarator.type == "function_declarator" else None
    scope = name.child_by_field_name("scope") if name is not None and \
        name.type == "qualified_identifier" else None
    if scope is not None and scope.type == "template_type":
        scope = scope.child_by_field_name("name")
    return scope if scope is not None and scope.type in ("namespace_identifier",
                                                         "type_identifier") else None


def _members(ctx: RuleContext) -> dict[str, dict[str, tuple[str, int] | None]]:
    """struct name -> member name -> (type, pointer levels; an array dimension counts as one),
    for the structs, classes and unions defined in the file outside functions (``typedef
    struct {...} S;`` too), and "name()" -> the type a member function returns;
    a member that two definitions of a name declare differently is None."""
    found = ctx.cache.get("value_kinds.members")
    if found is not None:
        return found
    found = {}
    stack = [ctx.tree.root_node]
    while stack:
        node = stack.pop()
        if node.type != "compound_statement":  # (not the structs local to a function)
            stack.extend(node.children)
        if node.type not in ("struct_specifier", "class_specifier", "union_specifier"):
            continue
        body, name = node.child_by_field_name("body"), node.child_by_field_name("name")
        if body is None:
            continue
        if name is None and node.parent is not None and node.parent.type == "type_definition":
            name = node.parent.child_by_field_name("declarator")
        if name is None or name.type != "type_identifier":
            continue
        fields = found.setdefault(ctx.text(name), {})
        for member in body.named_children:
            type_node = member.child_by_field_name("type")
            if member.type not in ("field_declaration", "function_definition") or \
                    type_node is None:
                continue
            for declarator in member.children_by_field_name("declarator"):
                pointers, suffix = 0, ""
                while declarator.type in ("pointer_declarator", "array_declarator"):
                    pointers += 1
                    declarator = declarator.child_by_field_name("declarator")
                if declarator is not None and declarator.type == "function_declarator":
                    declarator, suffix = declarator.child_by_field_name("declarator"), "()"
                if declarator is None or declarator.type != "field_identifier":
                    continue
                typed = (normal_type(ctx.text(type_node)), pointers)
                field = ctx.text(declarator) + suffix  # a member function's: "name()"
                fields[field] = typed if fields.get(field, typed) == typed else None
    ctx.cache["value_kinds.members"] = found
    return found


def resolved_type(ctx: RuleContext, type_text: str) -> str:
    """The normal type ``type_text`` names, through the file's aliases (``typedef T U;``,
    ``using U = T;``), as declarations are looked up."""
    type_name, aliases = normal_type(type_text), type_aliases(ctx)
    for _ in range(4):
        if type_name not in aliases:
            break
        type_name = normal_type(aliases[type_name])
    return type_name


def aggregates(ctx: RuleContext, names: TypeNames) -> dict[str, list[tuple[str, str]]]:
    """struct name -> its non-static data members in order, (name, kind: ``names.kind``,
    "scalar" (another arithmetic type or a pointer), "struct NAME" (a struct by its name, an
    aggregate where this table has it) or "other" (an array...)), for the structs defined in the
    file outside functions and templates that are aggregates as rocmigrate can tell: no base
    class, access specifier, constructor or virtual function."""
    key = ("value_kinds.aggregates", names)
    found = ctx.cache.get(key)
    if found is not None:
        return found
    found = ctx.cache[key] = {}
    stack = [ctx.tree.root_node]
    while stack:
        node = stack.pop()
        if node.type not in ("compound_statement", "template_declaration"):
            stack.extend(node.children)
        body, name = node.child_by_field_name("body"), node.child_by_field_name("name")
        if node.type != "struct_specifier" or body is None:
            continue
        if name is None and node.parent is not None and node.parent.type == "type_definition":
            name = node.parent.child_by_field_name("declarator")
        if name is None or name.type != "type_identifier" or any(
                child.type == "base_class_clause" for child in node.children):
            continue
        fields = _aggregate_fields(ctx, names, body, ctx.text(name))
        if fields is not None:
            found[ctx.text(name)] = fields
    return found


def _aggregate_fields(ctx: RuleContext, names: TypeNames, body,
                      name: str) -> list[tuple[str, str]] | None:
    """aggregates' members of one struct body, None where it is not an aggregate."""
    fields = []
    for member in body.named_children:
        if member.type == "access_specifier" or b"virtual" in ctx.data[
                member.start_byte:member.end_byte].split():
            return None
        declarators = member.children_by_field_name("declarator")
        if any(declarator.type == "function_declarator" and ctx.text(
                declarator.child_by_field_name("declarator")).split("::")[-1] == name
               for declarator in declarators):
            return None  # a constructor
        type_node = member.child_by_field_name("type")
        if member.type != "field_declaration" or type_node is None or any(
                child.type == "storage_class_specifier" for child in member.children):
            continue
        for declarator in declarators:
            if declarator.type == "field_identifier":
                resolved = resolved_type(ctx, ctx.text(type_node))
                kind = (names.kind if resolved in names.types else "scalar"
                        if type_node.type != "struct_specifier" and is_fundamental(resolved)
                        else "struct " + resolved if type_node.type == "type_identifier"
                        else "other")
                fields.append((ctx.text(declarator), kind))
            elif declarator.type == "pointer_declarator":
                inner = declarator
                while inner is not None and inner.type == "pointer_declarator":
                    inner = inner.child_by_field_name("declarator")
                if inner is not None and inner.type == "field_identifier":
                    fields.append((ctx.text(inner), "scalar"))
                else:
                    fields.append(("", "other"))
            elif declarator.type != "function_declarator":
                fields.append(("", "other"))  # an array, a bit-field...
    return fields


def unread(value) -> bool:
    """Is ``value`` a call or a member (not an expression of them), whose type could not be
    read?"""
    while value.type == "parenthesized_expression" and value.named_child_count == 1:
        value = value.named_children[0]
    while value.type == "subscript_expression":
        value = value.child_by_field_name("argument")
    return value.type in ("call_expression", "field_expression")
