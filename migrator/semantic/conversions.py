"""Where code converts a value to a type a rule asks about (``value_kinds.TypeNames``): the
values a use of the type's name converts (``T(x)``, ``T{x}``, casts, ``T v(x)``, copy- and
direct-initialisation), the values an assignment, a return, a call or an aggregate's brace list
converts to it implicitly, and the implicit conversions a template makes once it is instantiated
with the type (read in the file and in the project files it includes)."""

from __future__ import annotations

import re
from typing import NamedTuple

from migrator.rule import RuleContext
from migrator.source import Source

from .calls import arguments, close_of, trailing_return_type
from .types import normal_type
from .value_kinds import (NUMERIC_LITERAL, TypeNames, aggregates, function_kinds, owner_of,
                          parameter_type, resolved_type, template_parameters, value_kind,
                          value_type)

_STATIC_CAST_BEFORE = re.compile(rb"static_cast\s*<\s*(?:const\s+)?$")
_CAST_OPEN = re.compile(rb"\(\s*(?:const\s+)?$")
_KEYWORDS = {b"return", b"case", b"throw", b"co_return", b"else", b"do", b"co_yield"}
_CAST_CLOSE = re.compile(rb"\s*>\s*\(")
_DIRECT_INIT_AFTER = re.compile(rb"\s*(?:const\s+)?[A-Za-z_]\w*\s*[({]")
_UP_TO_DELIMITER = re.compile(rb"[^;,)}\n]*")
_NESTED_AGGREGATES = 4  # aggregates read inside an aggregate's brace list, at most
_TEMPLATE_DEPTH = 4  # templates followed from an instantiation through the templates they call
_TEMPLATES_READ = 32  # at most, from one instantiation


class TemplateConversion(NamedTuple):
    """An implicit conversion to the type in a template instantiated with it."""

    template: str  # the template's name
    parameter: str  # the type parameter bound to the type
    path: str  # the file the template is defined in
    code: str  # the statement that converts, as written


def converted_values(ctx: RuleContext, start: int, end: int) -> list[tuple[int, int]] | None:
    """Spans of the values converted to the type named at [start, end): ``T(x)``, ``T{x}``,
    ``static_cast<T>(x)``, ``(T)x``, ``T v(x)`` / ``T v{x}``; None where it converts nothing."""
    data = ctx.data
    after = end
    while data[after : after + 1] in (b" ", b"\t"):
        after += 1
    before = data[max(0, start - 64) : start]
    if re.search(rb"\boperator\s*$", before):
        return None  # a conversion operator's declaration
    if before.rstrip().endswith(b"->") and trailing_return_type(ctx, start):
        return None  # `-> T {`: the function's body follows, no T{x}
    if data[after : after + 1] in (b"(", b"{"):
        return _bracketed(ctx, after)
    if _STATIC_CAST_BEFORE.search(before):
        close = _CAST_CLOSE.match(data, end)
        return _bracketed(ctx, close.end() - 1) if close else None
    if _c_cast(data, start, after):
        return _cast_operand(ctx, after + 1)
    if _DIRECT_INIT_AFTER.match(data, end):
        return _direct_init(ctx, start, end)
    return None


def _bracketed(ctx: RuleContext, open_at: int) -> list[tuple[int, int]]:
    """Argument spans of the ``(...)`` or ``{...}`` list at ``open_at`` (``[]`` when empty)."""
    data = ctx.data
    if data[open_at : open_at + 1] == b"(":
        return arguments(ctx, open_at) or []
    close = close_of(ctx, open_at)
    if close is None:
        return []
    # the braced list, read as a parenthesised one: offsets map one to one
    spans = arguments(b"(" + data[open_at + 1 : close] + b")", 0) or []
    return [(begin + open_at, end + open_at) for begin, end in spans]


def _c_cast(data: bytes, start: int, after: int) -> bool:
    """Is the type named at ``start`` the whole of a C-style cast ``(T)`` whose ``)`` is at
    ``after``?"""
    if data[after : after + 1] != b")":
        return False
    before = data[max(0, start - 64) : start]
    match = _CAST_OPEN.search(before)
    if match is None:
        return False
    head = before[: match.start()]
    word = re.search(rb"(\w+)\s*$", head)
    if word is not None:
        return word.group(1) in _KEYWORDS  # f(T), sizeof(T)...: not a cast
    return not re.search(rb"[)\]>]\s*$", head)


def _cast_operand(ctx: RuleContext, at: int) -> list[tuple[int, int]]:
    """The operand of a C-style cast whose ``)`` ends before ``at``: a literal or a parenthesised
    expression, else the text up to the next delimiter (which proves nothing)."""
    data = ctx.data
    pos = at
    while data[pos : pos + 1] in (b" ", b"\t"):
        pos += 1
    if data[pos : pos + 1] == b"(":
        close = close_of(ctx, pos)
        return [(pos, close + 1 if close is not None else pos + 1)]
    text = data[pos : pos + 64].decode("utf-8", "replace")
    literal = NUMERIC_LITERAL.match(text)
    if literal is not None and not re.match(r"[\w.(\[]", text[literal.end() :]):
        return [(pos, pos + len(literal.group().encode()))]
    rest = _UP_TO_DELIMITER.match(data, pos)  # from pos, not a copy of the file's tail
    return [(pos, max(pos + 1, rest.end()))]


def _direct_init(ctx: RuleContext, start: int, end: int) -> list[tuple[int, int]] | None:
    """Initialisers of ``T v(x);`` / ``T v{x};`` declarations whose type is named at
    [start, end), default member initialisers ``T v{x};`` too (the parser may read ``T v(x)``
    as a function declaration)."""
    node = declaration_at(ctx, start, end)
    if node is None:
        return None
    spans: list[tuple[int, int]] = []
    default = node.child_by_field_name("default_value") if node.type == "field_declaration" \
        else None
    if default is not None and default.type == "initializer_list" and not _copy_init(node):
        spans += [(c.start_byte, c.end_byte) for c in default.named_children  # struct S { T v{x}; }
                  if c.type != "comment"]
    in_block = node.parent is not None and node.parent.type == "compound_statement"
    for declarator in node.children_by_field_name("declarator"):
        value = None
        if declarator.type == "init_declarator" and not _copy_init(declarator):
            value = declarator.child_by_field_name("value")
            if value is not None and value.type not in ("argument_list", "initializer_list"):
                value = None
        elif declarator.type == "function_declarator" and in_block:
            value = declarator.child_by_field_name("parameters")
        if value is not None:
            spans += [(c.start_byte, c.end_byte) for c in value.named_children
                      if c.type != "comment"]
    return spans or None


def declaration_at(ctx: RuleContext, start: int, end: int):
    """The declaration (a tree node) whose type is named at [start, end), or None."""
    node = ctx.tree.root_node.descendant_for_byte_range(start, end)
    while node is not None and node.type not in ("declaration", "field_declaration",
                                                 "function_definition", "compound_statement"):
        node = node.parent
    if node is None or node.type not in ("declaration", "field_declaration"):
        return None
    type_node = node.child_by_field_name("type")
    if type_node is None or not (type_node.start_byte <= start and end <= type_node.end_byte):
        return None
    return node


def node_at(ctx: RuleContext, begin: int, end: int):
    """The outermost tree node that spans exactly [begin, end) (else the smallest around it)."""
    node = ctx.tree.root_node.descendant_for_byte_range(begin, end)
    while node.parent is not None and (node.parent.start_byte, node.parent.end_byte) == (
            begin, end):
        node = node.parent
    return node


def _copy_init(declarator) -> bool:
    return any(child.type == "=" for child in declarator.children)


def copy_initialised(ctx: RuleContext, start: int, end: int) -> list:
    """The values (tree nodes) a declaration whose type is named at [start, end) copy-initialises
    its variables with: ``x`` of ``T v = x``, each element of ``T a[] = {x, y}`` (a nested list
    whole), a default member initialiser. Only where the type is the whole declared type (not
    ``T*``, ``T&``)."""
    if b"=" not in ctx.code[end : ctx.code.find(b";", end)]:
        return []  # most declarations: nothing to parse for
    node = declaration_at(ctx, start, end)
    type_node = node.child_by_field_name("type") if node is not None else None
    if type_node is None or (type_node.start_byte, type_node.end_byte) != (start, end):
        return []  # not a declaration of the type itself (std::vector<T> v = ...)
    values = []
    default = node.child_by_field_name("default_value") if node.type == "field_declaration" \
        else None
    if default is not None and _copy_init(node):  # struct S { T v = x; } (not T v{x};)
        values += ([c for c in default.named_children if c.type != "comment"]
                   if default.type == "initializer_list" else [default])
    for declarator in node.children_by_field_name("declarator"):
        if declarator.type != "init_declarator" or not _copy_init(declarator):
            continue
        target = declarator.child_by_field_name("declarator")
        value = declarator.child_by_field_name("value")
        if target is None or value is None or target.type not in ("identifier",
                                                                  "array_declarator"):
            continue
        if target.type == "identifier" and value.type != "initializer_list":
            values.append(value)
        elif value.type == "initializer_list":
            values += [c for c in value.named_children if c.type != "comment"]
    return values


def assigns(assignment) -> bool:
    """Does the assignment expression convert its right side to the left's type (``=``, and
    ``+=``, ``-=``, ``*=``, ``/=``, whose operators of an arithmetic class take one)?"""
    operator = assignment.child_by_field_name("operator")
    return operator is not None and operator.type in ("=", "+=", "-=", "*=", "/=")


def returns_type(ctx: RuleContext, names: TypeNames, statement) -> bool:
    """Does the function or lambda that the return statement is in return the type (by value;
    through an alias of it, or a trailing return type ``-> T``)?"""
    node = statement.parent
    while node is not None and node.type not in ("function_definition", "lambda_expression"):
        node = node.parent
    if node is None:
        return False
    declarator = node.child_by_field_name("declarator")
    if node.type == "lambda_expression":  # [](float x) -> T { return x; }
        type_node = None
    else:
        if declarator is None or declarator.type != "function_declarator":
            return False
        type_node = node.child_by_field_name("type")
    trailing = next((child for child in (declarator.children if declarator is not None else ())
                     if child.type == "trailing_return_type"), None)
    if trailing is not None:  # auto f() -> T, [] () -> T
        type_node = trailing.named_children[0] if trailing.named_child_count else None
    return type_node is not None and resolved_type(ctx, ctx.text(type_node)) in names.types


def implicitly_initialised(ctx: RuleContext, names: TypeNames, declaration) -> list:
    """The values (tree nodes) a declaration converts to the type implicitly where the type's
    own name is not written: those copy-initialising a variable of the file's alias of the
    type (``U v = x;``, ``U a[] = {x, y};``, a default member initialiser), and the members of
    an aggregate (a struct defined in the file, see ``aggregates``) initialised from a brace
    list (``S s = {x, 2};``, ``S s{x, 2};``, each of ``S a[] = {{x, 2}, ...}``) that are of
    the type."""
    type_node = declaration.child_by_field_name("type")
    if type_node is None or type_node.type != "type_identifier":
        return []
    name = ctx.text(type_node)
    resolved = resolved_type(ctx, name)
    if resolved in names.types:
        return [] if name in names.types else copy_initialised(ctx, type_node.start_byte,
                                                               type_node.end_byte)
    fields = aggregates(ctx, names).get(resolved)
    if not fields or declaration.type != "declaration":
        return []
    values = []
    for declarator in declaration.children_by_field_name("declarator"):
        target = declarator.child_by_field_name("declarator")
        value = declarator.child_by_field_name("value")
        if declarator.type != "init_declarator" or target is None or value is None or \
                value.type != "initializer_list":
            continue
        lists = ([value] if target.type == "identifier" else
                 [c for c in value.named_children if c.type == "initializer_list"]
                 if target.type == "array_declarator" else [])
        for listed in lists:
            values += _members_of_type(ctx, names, fields, listed)
    return values


def _members_of_type(ctx: RuleContext, names: TypeNames, fields: list[tuple[str, str]], listed,
                     depth: int = 0) -> list:
    """The values of the brace list ``listed`` that initialise a member of the type in the
    aggregate whose members ``fields`` lists (name, kind), or in an aggregate member's own
    braced list: by position up to a member that is not a scalar whose value is not braced (its
    braces may be elided), by name where designated (``.v = x``). A braced value of the type
    (``{x}``) is not read."""
    found: list = []
    members = [c for c in listed.named_children if c.type != "comment"]
    for position, member in enumerate(members):
        if member.type == "initializer_pair":
            designator = member.named_children[0] if member.named_child_count else None
            name = ctx.text(designator).lstrip(".").strip() if designator is not None and \
                designator.type == "field_designator" else None
            field = next((kind for field_name, kind in fields if field_name == name), None)
            value = member.child_by_field_name("value")
        else:
            field = fields[position][1] if position < len(fields) else None
            if field is not None and field not in (names.kind, "scalar") and \
                    member.type != "initializer_list":
                break
            value = member
        inner = aggregates(ctx, names).get(field[len("struct "):]) \
            if field is not None and field.startswith("struct ") else None
        if value is None:
            continue
        if inner is not None:  # Outer o = {{x, 1}, y}
            if value.type == "initializer_list" and depth < _NESTED_AGGREGATES:
                found += _members_of_type(ctx, names, inner, value, depth + 1)
        elif field == names.kind and value.type != "initializer_list":
            found.append(value)
    return found


def copy_initialises_alias(ctx: RuleContext, names: TypeNames, value) -> bool:
    """Does ``value`` copy-initialise a variable (an element of one) declared with the file's
    alias of the type?"""
    node = value.parent
    while node is not None and node.type in ("initializer_list", "init_declarator"):
        node = node.parent
    type_node = node.child_by_field_name("type") if node is not None and node.type in (
        "declaration", "field_declaration") else None
    return type_node is not None and ctx.text(type_node) not in names.types and \
        resolved_type(ctx, ctx.text(type_node)) in names.types


def parameters_of_type(ctx: RuleContext, names: TypeNames, name: str,
                       count: int) -> frozenset[int]:
    """The positions where every function declared by ``name`` in the file and the project
    files it includes, that takes ``count`` arguments, has a parameter of the type (by value):
    an argument there converts to it whichever of them is called."""
    known = ctx.cache.setdefault(("conversions.parameters", names), {})
    if (name, count) in known:
        return known[name, count]
    positions = None
    for file in _project_contexts(ctx):
        if name.encode() not in file.data:
            continue
        for declared in function_kinds(file, names).get(name, ()):
            if declared.least <= count <= declared.most:
                here = {i for i, kind in enumerate(declared.parameters[:count])
                        if kind == names.kind}
                positions = here if positions is None else positions & here
    known[name, count] = frozenset(positions or ())
    return known[name, count]


def type_argument_positions(ctx: RuleContext, names: TypeNames,
                            template_use) -> frozenset[int]:
    """The positions of the template arguments of ``template_use`` (a template function or
    type) that are the type (``g<float, T>``: {1})."""
    listed = template_use.child_by_field_name("arguments")
    return frozenset(index for index, argument in enumerate(
        listed.named_children if listed is not None else ())
        if resolved_type(ctx, ctx.text(argument)) in names.types)


def instantiation(ctx: RuleContext, names: TypeNames, call, function) -> str | None:
    """The name of the function template the call instantiates with the type (named as a
    template argument, or passed where a template parameter is deduced), else None."""
    if function.type == "template_function":
        name = function.child_by_field_name("name")
        return ctx.text(name) if name is not None and type_argument_positions(
            ctx, names, function) else None
    if function.type != "identifier":
        return None
    name = ctx.text(function)
    return name if _is_template(ctx, name) and _typed_arguments(ctx, names, call, names.types) \
        else None


def instantiation_conversions(ctx: RuleContext, names: TypeNames, name: str,
                              call) -> list[TemplateConversion]:
    """The implicit conversions to the type that the call of the function template ``name``
    makes it (and the templates it calls with the type) write (see ``instantiation``)."""
    function = call.child_by_field_name("function")
    return _template_conversions(ctx, names, name, type_argument_positions(ctx, names, function),
                                 _typed_arguments(ctx, names, call, names.types), set())


def _project_contexts(ctx: RuleContext) -> list[RuleContext]:
    """The file, then each project file it includes, as contexts rules can read."""
    found = ctx.cache.get("conversions.project")
    if found is None:
        found = ctx.cache["conversions.project"] = [ctx] + [
            RuleContext(Source(file.rel, file.data), ctx.settings, ctx.tables)
            for file in ctx.included]
    return found


def _template_conversions(ctx: RuleContext, names: TypeNames, name: str,
                          positions: frozenset[int], deduced: tuple[int | None, ...], seen: set,
                          depth: int = 0) -> list[TemplateConversion]:
    """The implicit conversions to the type in the function template ``name`` (defined in the
    file or a project file it includes) called with the type as the template arguments at
    ``positions`` or as the arguments whose pointer levels ``deduced`` gives (None: not of the
    type), and in the templates it calls with it, from a value of arithmetic type: a
    declaration ``T v = x;``, ``return x;`` where it returns ``T``, an assignment to a ``T``."""
    if depth >= _TEMPLATE_DEPTH:
        return []
    found = []
    for file in _project_contexts(ctx):
        if name.encode() not in file.data:
            continue
        for function in _function_templates(file).get(name, ()):
            parameters = template_parameters(file, function)
            bound = {parameters[i] for i in positions if i < len(parameters)}
            declarator = function.child_by_field_name("declarator")
            listed = declarator.child_by_field_name("parameters")
            declared = [parameter for parameter in listed.named_children if parameter.type in (
                "parameter_declaration", "optional_parameter_declaration")]
            bound |= {type_name for parameter, level in zip(declared, deduced)
                      if level is not None for type_name, pointers in [parameter_type(
                          file, parameter)] if type_name in parameters and pointers == level}
            bound -= {""}
            key = (file.path, function.start_byte, frozenset(bound))
            if bound and key not in seen and len(seen) < _TEMPLATES_READ:
                seen.add(key)
                found += _conversions_in(ctx, names, file, function, name, bound, seen, depth)
    return found


def _conversions_in(ctx: RuleContext, names: TypeNames, file: RuleContext, function, name: str,
                    bound: set[str], seen: set, depth: int) -> list[TemplateConversion]:
    """_template_conversions in one definition, whose type parameters ``bound`` are the type."""
    found = []
    returned = function.child_by_field_name("type")
    returns_bound = returned is not None and normal_type(file.text(returned)) in bound and \
        function.child_by_field_name("declarator").type == "function_declarator"
    stack = [function.child_by_field_name("body")]
    while stack:
        node = stack.pop()
        if node is None or node.type == "lambda_expression":
            continue
        stack.extend(reversed(node.children))
        values = []
        if node.type == "return_statement" and returns_bound and node.named_child_count:
            values = node.named_children[:1]
        elif node.type == "declaration" and node.child_by_field_name("type") is not None and \
                normal_type(file.text(node.child_by_field_name("type"))) in bound:
            values = [child for declarator in node.children_by_field_name("declarator")
                      if declarator.type == "init_declarator" and _copy_init(declarator)
                      and declarator.child_by_field_name("declarator").type in (
                          "identifier", "array_declarator")
                      for value in [declarator.child_by_field_name("value")] if value is not None
                      for child in (value.named_children if value.type == "initializer_list"
                                    else [value])]
        elif node.type == "assignment_expression" and assigns(node):
            typed = value_type(file, names, node.child_by_field_name("left"))
            if typed is not None and typed[1] == 0 and normal_type(typed[0]) in bound:
                values = [node.child_by_field_name("right")]
        elif node.type == "call_expression" and node.child_by_field_name("function") is not None:
            callee = node.child_by_field_name("function")
            positions: frozenset[int] = frozenset()
            if callee.type == "template_function":
                listed = callee.child_by_field_name("arguments")
                positions = frozenset(index for index, argument in enumerate(
                    listed.named_children if listed is not None else ())
                    if normal_type(file.text(argument)) in bound)
                callee = callee.child_by_field_name("name")
            deduced = _typed_arguments(file, names, node, bound) if callee is not None and \
                _is_template(ctx, file.text(callee)) else ()
            if callee is not None and callee.type == "identifier" and (positions or deduced):
                found += _template_conversions(ctx, names, file.text(callee), positions, deduced,
                                               seen, depth + 1)
        if any(_arithmetic(file, names, value) for value in values if value is not None):
            found.append(TemplateConversion(name, min(bound), file.path, file.text(node)))
    return found


def _arithmetic(file: RuleContext, names: TypeNames, value) -> bool:
    """Is ``value`` a number, or of an arithmetic kind other than the type?"""
    return value.type == "number_literal" or value_kind(file, names, value) in (
        "float", "double", "integer")


def _is_template(ctx: RuleContext, name: str) -> bool:
    """Is ``name`` a function template defined in the file or a project file it includes?"""
    return _defined_in_project(ctx, name, _function_templates)


def _defined_in_project(ctx: RuleContext, name: str, definitions) -> bool:
    """Is ``name`` in the table ``definitions`` makes of the file (_function_templates,
    _class_templates), or of a project file it includes?"""
    known = ctx.cache.setdefault(("conversions.defined", definitions), {})
    if name not in known:
        known[name] = any(name in definitions(file) for file in _project_contexts(ctx)
                          if name.encode() in file.data)
    return known[name]


def _function_templates(ctx: RuleContext) -> dict[str, list]:
    """name -> the function templates defined in the file by that plain name."""
    found = ctx.cache.get("conversions.templates")
    if found is None:
        found = ctx.cache["conversions.templates"] = {}
        stack = [ctx.tree.root_node]
        while stack:
            node = stack.pop()
            if node.type == "function_definition":
                declarator = node.child_by_field_name("declarator")
                name = declarator.child_by_field_name("declarator") \
                    if declarator is not None and declarator.type == "function_declarator" else None
                if name is not None and name.type == "identifier" and \
                        template_parameters(ctx, node):
                    found.setdefault(ctx.text(name), []).append(node)
                continue
            stack.extend(node.children)
    return found


def _typed_arguments(file: RuleContext, names: TypeNames, call,
                     types) -> tuple[int | None, ...]:
    """For each argument of the call (written in ``file``): its pointer levels where it is
    declared with one of ``types`` (the type's spellings, or the template parameters bound to
    it), else None; () where none is."""
    listed = call.child_by_field_name("arguments")
    levels = []
    for argument in listed.named_children if listed is not None else ():
        typed = value_type(file, names, argument) if argument.type != "comment" else None
        levels.append(typed[1] if typed is not None and resolved_type(file, typed[0]) in types
                      and typed[1] >= 0 else None)
    return tuple(levels) if any(level is not None for level in levels) else ()


def _class_templates(ctx: RuleContext) -> dict[str, list]:
    """name -> the class templates (their template declarations) defined in the file, and the
    definitions of their member functions outside their bodies (``template <class T> void
    Acc<T>::add(float x) {...}``)."""
    found = ctx.cache.get("conversions.class_templates")
    if found is None:
        found = ctx.cache["conversions.class_templates"] = {}
        stack = [ctx.tree.root_node]
        while stack:
            node = stack.pop()
            if node.type == "template_declaration":
                defined = next((child for child in node.named_children if child.type in (
                    "struct_specifier", "class_specifier", "function_definition")), None)
                name = (defined.child_by_field_name("name")
                        if defined is not None and defined.type != "function_definition"
                        and defined.child_by_field_name("body") is not None
                        else owner_of(defined) if defined is not None else None)
                if name is not None:
                    found.setdefault(ctx.text(name), []).append(defined)
            if node.type not in ("compound_statement", "function_definition"):
                stack.extend(node.children)
    return found


def is_class_template(ctx: RuleContext, name: str) -> bool:
    """Is ``name`` a class template defined in the file or a project file it includes?"""
    return _defined_in_project(ctx, name, _class_templates)


def class_template_conversions(ctx: RuleContext, names: TypeNames, name: str,
                               use) -> list[TemplateConversion]:
    """The implicit conversions to the type in the class template ``name`` that ``use`` (its
    template type) instantiates with the type: in its default member initialisers (``T v =
    0;``) and in its member functions, defined in its body or outside it (``v += x;``,
    ``return x;``), and the templates they call."""
    positions = type_argument_positions(ctx, names, use)
    found: list[TemplateConversion] = []
    seen: set = set()
    for file in _project_contexts(ctx):
        if name.encode() not in file.data:
            continue
        defined_here = _class_templates(file).get(name, ())
        # the names the class's body gives its parameters (its members' types are written so)
        own = next((template_parameters(file, defined) for defined in defined_here
                    if defined.type != "function_definition"), [])
        for defined in defined_here:
            parameters = template_parameters(file, defined)
            if defined.type == "function_definition":  # Acc<U>::f: its own names, by position
                scope = defined.child_by_field_name("declarator").child_by_field_name(
                    "declarator").child_by_field_name("scope")
                listed = scope.child_by_field_name("arguments")
                parameters = [file.text(argument) for argument in (
                    listed.named_children if listed is not None else ())]
            bound = {parameters[i] for i in positions if i < len(parameters)} - {""}
            if defined.type == "function_definition" and bound:
                bound |= {own[i] for i in positions if i < len(own)} - {""}
            if not bound:
                continue
            if defined.type == "function_definition":
                found += _conversions_in(ctx, names, file, defined, name, bound, seen, 0)
                continue
            for member in defined.child_by_field_name("body").named_children:
                if member.type == "template_declaration":
                    member = next((child for child in member.named_children
                                   if child.type == "function_definition"), member)
                if member.type == "function_definition":
                    found += _conversions_in(ctx, names, file, member, name, bound, seen, 0)
                elif member.type == "field_declaration" and _copy_init(member):
                    type_node, value = (member.child_by_field_name(field)
                                        for field in ("type", "default_value"))
                    if type_node is not None and value is not None and \
                            normal_type(file.text(type_node)) in bound and \
                            _arithmetic(file, names, value):
                        found.append(TemplateConversion(name, min(bound), file.path,
                                                        file.text(member)))
    return found
