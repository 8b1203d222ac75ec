"""What a name, or a pointer expression, is declared as, seen from an offset: the declarations
visible in the innermost function definition around it (parameters and locals; where they
differ, the innermost block that declares the name first) or at file scope, with file-scope
aliases resolved and the function's template parameters known. Read from the function's tokens
where ``declarations`` is sure of them, else from the tree."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from migrator.rule import RuleContext

from .calls import WORD_BYTES
from .declarations import declarations, function_around
from .scopes import whole_word_starts
from .types import (IDENTIFIER, Declaration, closing_bracket, leading_cast, normal_type,
                    pointer_text, strip_parens)

_KEYWORD_TYPES = {"signed", "unsigned", "short", "long", "int", "char", "float", "double", "bool"}
# pointer arithmetic after the base name: "+ i", "- 1" (not "->", "++", "--", "-=", "+=")
_ARITHMETIC = re.compile(r"[+-](?![+\-=>])")
_ALIAS = re.compile(rb"\btypedef\s+(?:const\s+)?([A-Za-z_]\w*)\s+([A-Za-z_]\w*)\s*;"
                    rb"|\busing\s+([A-Za-z_]\w*)\s*=\s*(?:const\s+)?([A-Za-z_]\w*)\s*;")


@dataclass(frozen=True)
class Pointee:
    """The one value a pointer expression points to: its type, whether that type is a template
    parameter of the function, whether it is ``__shared__`` (LDS)."""

    type: str
    template: bool = False
    shared: bool = False


def pointee(ctx: RuleContext, text: str, at: int) -> Pointee | None:
    """What the pointer expression ``text``, written at ``at``, points to, proven lexically: a
    cast to ``T*``, or a name (``p``, ``p + i``, ``&x``, ``&a[i]``) declared in the enclosing
    function (parameters, locals) or at file scope, with every declaration of that name
    agreeing, at one pointer level. None where that is not proven."""
    shape = _pointer_shape(text)
    if shape is None:
        return None
    if isinstance(shape, Pointee):
        return shape  # a cast
    name, levels = shape
    declaration, template_parameters = _lookup(ctx, name, at)
    if declaration is None or declaration.pointers - levels != 1:
        return None
    return Pointee(declaration.type, declaration.type in template_parameters, declaration.shared)


@functools.lru_cache(maxsize=4096)  # the same argument texts recur, in a file and across files
def _pointer_shape(text: str) -> Pointee | tuple[str, int] | None:
    """What ``pointee`` reads from the text alone: the Pointee of a cast, or (the base name,
    subscripts less ``&``: the pointer levels the text takes off its declaration's), or None
    where nothing is provable."""
    parts = pointer_text(text)
    cast, address_of, rest = parts.cast, parts.address_of, parts.rest
    if cast is not None:
        return Pointee(cast.type) if cast.pointers == 1 else None
    if not parts.name:
        return None
    subscripts = 0
    while rest.startswith("["):
        close = closing_bracket(rest, 0)
        if close < 0:
            return None
        subscripts += 1
        rest = rest[close + 1:].lstrip()
    if rest and (address_of or not _ARITHMETIC.match(rest)):
        return None  # a member, a call, another operator: not provable from a declaration
    return parts.name, subscripts - address_of


def _lookup(ctx: RuleContext, name: str, at: int) -> tuple[Declaration | None, frozenset[str]]:
    """The declaration of ``name`` seen from ``at`` (aliases resolved) and the template
    parameters of the function there: read from the function's tokens where ``declarations`` is
    sure of them (one type, no template parameter of that name), else from the tree."""
    function = function_around(ctx, at)
    if function is not None:
        # the answer from the function's tokens, or None (ask the tree), once per name
        known = ctx.cache.get("lookup.from_tokens")
        if known is None:
            known = ctx.cache["lookup.from_tokens"] = {}
        key = (function.body.open, name)
        try:
            declaration = known[key]
        except KeyError:
            declaration = known[key] = _from_tokens(ctx, function, name)
        if declaration is not None:
            return declaration, frozenset()
    scope = _scope(ctx, at)
    return scope.lookup(ctx, name, at), scope.template_parameters


def _from_tokens(ctx: RuleContext, function, name: str) -> Declaration | None:
    """The declaration of ``name`` in ``function`` read from its tokens (aliases resolved),
    or None where ``declarations`` is not sure of one type that no template parameter has."""
    found = declarations(ctx, function, name)
    if found is not None and len(found) == 1:
        declaration = _resolved(ctx, next(iter(found)))
        if not _maybe_template_parameter(ctx, declaration.type):
            return declaration
    return None


def _maybe_template_parameter(ctx: RuleContext, type_name: str) -> bool:
    """Is ``type_name`` written after ``typename`` or ``class`` somewhere in the file's code, as
    every template type parameter (the tree's _template_parameters) is?"""
    found = ctx.cache.setdefault("lookup.template_like", {})
    if type_name not in found:
        pattern = rb"\b(?:typename|class)\b[\s.]*" + re.escape(type_name.encode()) + rb"\b"
        found[type_name] = IDENTIFIER.fullmatch(type_name) is not None \
            and type_name not in _KEYWORD_TYPES and re.search(pattern, ctx.code) is not None
    return found[type_name]


def function_key(ctx: RuleContext, at: int) -> tuple[int, str] | None:
    """(where its body opens, its name) of the innermost function definition around ``at``:
    read from its tokens where ``declarations`` is sure of them, else from the tree."""
    function = function_around(ctx, at)
    if function is not None:
        return function.body.open, function.name
    node = enclosing_function(ctx, at)
    if node is None:
        return None
    return node.child_by_field_name("body").start_byte, function_name(ctx, node)


def may_point_to(ctx: RuleContext, begin: int, end: int, types: frozenset[str]) -> bool:
    """A lexical necessary condition for ``pointee`` of the text at [begin, end) being a
    non-template pointer to one of ``types`` (fundamental types), checked without the tree: a
    cast to one of them, or a base name that the file's code writes after one of them (or an
    alias of one, or ``auto``) with no ``;`` between, as every declaration of it must. False
    proves the operand is not such a pointer; True proves nothing."""
    parts = pointer_text(ctx.data[begin:end].decode("utf-8", "replace"))
    if parts.cast is not None:
        return parts.cast.pointers == 1 and parts.cast.type in types
    if not parts.name:
        return False
    return may_be_declared_as(ctx, parts.name, types)


def may_be_declared_as(ctx: RuleContext, name: str, types: frozenset[str]) -> bool:
    """A lexical necessary condition for a declaration of ``name`` (as ``lookup`` reads one,
    aliases resolved) having one of the fundamental-or-named ``types``: the file's code writes
    the name after one of them (or an alias of one, or ``auto``) with no ``;`` between. False
    proves no declaration of it has such a type; True proves nothing."""
    key = ("lookup.may_point_to", types, name)
    found = ctx.cache.get(key)
    if found is None:
        words = _type_words(ctx, types)
        code = ctx.code  # comments and literals blanked: a ';' in them does not count
        found = False
        spelled = name.encode()
        if all(byte in WORD_BYTES for byte in spelled):
            uses = whole_word_starts(code, spelled)  # the name's whole words
        else:
            uses = [use.start() for use in re.finditer(rb"\b" + re.escape(spelled) + rb"\b", code)]
        for at in uses:
            # a declaration's type and its declarators are one statement: no ';' between
            if words.search(code, code.rfind(b";", 0, at) + 1, at):
                found = True
                break
        ctx.cache[key] = found
    return found


def _type_words(ctx: RuleContext, types: frozenset[str]) -> re.Pattern:
    """A pattern for the words a declaration of a ``types`` variable can start its type with:
    the types, the file's aliases resolving to them (as _Scope.lookup resolves), ``auto``."""
    key = ("lookup.type_words", types)
    pattern = ctx.cache.get(key)
    if pattern is None:
        aliases = type_aliases(ctx)
        spelled = set(types) | {"auto"}
        for alias in aliases:
            target, steps = alias, 0
            while target in aliases and steps < 4:
                target, steps = aliases[target], steps + 1
            if target in types:
                spelled.add(alias)
        pattern = ctx.cache[key] = re.compile(
            rb"\b(?:" + "|".join(re.escape(w) for w in sorted(spelled)).encode() + rb")\b")
    return pattern


def value_declaration(ctx: RuleContext, name: str, at: int) -> Declaration | None:
    """The declaration of the plain name ``name`` as seen from ``at``."""
    return _scope(ctx, at).lookup(ctx, name, at)


def enclosing_function(ctx: RuleContext, at: int):
    """The innermost function definition around ``at`` (a tree node), or None."""
    node = ctx.tree.root_node.descendant_for_byte_range(at, at)
    while node is not None and node.type != "function_definition":
        node = node.parent
    return node


def function_name(ctx: RuleContext, function) -> str:
    """The name a function definition (a tree node) declares, as written."""
    declarator = function.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    if declarator is None:
        return ""
    name = declarator.child_by_field_name("declarator")
    return ctx.text(name) if name is not None else ""


def excluded_by_size_check(ctx: RuleContext, at: int, type_parameter: str, size: int) -> bool:
    """Is ``at`` in the branch of an ``if constexpr (sizeof(T) == size)`` (or ``!= size``) that
    rules out a ``T`` of that size?"""
    pattern = re.compile(r"sizeof\s*\(\s*" + re.escape(type_parameter) + r"\s*\)\s*(==|!=)\s*"
                         + str(size) + r"\b")
    node = ctx.tree.root_node.descendant_for_byte_range(at, at)
    while node is not None and node.type != "function_definition":
        if node.type == "if_statement" and any(c.type == "constexpr" for c in node.children):
            condition = node.child_by_field_name("condition")
            found = pattern.search(ctx.text(condition)) if condition is not None else None
            alternative = node.child_by_field_name("alternative")
            in_else = (alternative is not None
                       and alternative.start_byte <= at < alternative.end_byte)
            if found and (found.group(1) == "==") == in_else:
                return True
        node = node.parent
    return False


class _Scope:
    """The declarations visible in one function (or at file scope): name -> declarations."""

    def __init__(self, names: dict[str, set[Declaration]], template_parameters: frozenset[str],
                 outer: "_Scope | None") -> None:
        self.names = names
        self.template_parameters = template_parameters
        self.outer = outer

    def lookup(self, ctx: RuleContext, name: str, at: int | None = None) -> Declaration | None:
        found = self.names.get(name)
        if found is None:
            return self.outer.lookup(ctx, name) if self.outer is not None else None
        if len(found) != 1 and at is not None:
            # declared with different types in different blocks: the innermost block around
            # ``at`` that declares it before ``at`` decides
            visible = [d for d in found if d.where is not None
                       and d.where[0] <= at < d.where[1] and d.where[2] <= at]
            if visible:
                found = {min(visible, key=lambda d: d.where[1] - d.where[0])}
        if len(found) != 1:
            return None  # not provable
        return _resolved(ctx, next(iter(found)))


def _resolved(ctx: RuleContext, declaration: Declaration) -> Declaration:
    """``declaration`` with its type's file-scope aliases resolved (at most 4 steps)."""
    aliases = type_aliases(ctx)
    seen = 0
    while declaration.type in aliases and seen < 4:
        declaration = Declaration(aliases[declaration.type], declaration.pointers,
                                  declaration.shared, declaration.where)
        seen += 1
    return declaration


def _scope(ctx: RuleContext, at: int) -> _Scope:
    scopes = ctx.cache.setdefault("lookup.scopes", {})
    file_scope = scopes.get(None)
    if file_scope is None:
        file_scope = scopes[None] = _Scope(_file_declarations(ctx), frozenset(), None)
    function = enclosing_function(ctx, at)
    if function is None:
        return file_scope
    key = (function.start_byte, function.end_byte)
    scope = scopes.get(key)
    if scope is None:
        names: dict[str, set[Declaration]] = {}
        stack = [function]
        while stack:
            node = stack.pop()
            if node.type in ("parameter_declaration", "optional_parameter_declaration",
                             "declaration"):
                for name, declaration in _declared(ctx, node):
                    names.setdefault(name, set()).add(declaration)
            stack.extend(node.children)
        scope = scopes[key] = _Scope(names, _template_parameters(ctx, function), file_scope)
    return scope


def _file_declarations(ctx: RuleContext) -> dict[str, set[Declaration]]:
    names: dict[str, set[Declaration]] = {}
    stack = [ctx.tree.root_node]
    while stack:
        node = stack.pop()
        if node.type in ("function_definition", "field_declaration_list"):
            continue
        if node.type == "declaration":
            for name, declaration in _declared(ctx, node):
                names.setdefault(name, set()).add(declaration)
            continue
        stack.extend(node.children)
    return names


def _template_parameters(ctx: RuleContext, function) -> frozenset[str]:
    found = set()
    node = function.parent
    while node is not None:
        if node.type == "template_declaration":
            parameters = node.child_by_field_name("parameters")
            for parameter in parameters.named_children if parameters is not None else ():
                if "type_parameter_declaration" in parameter.type:
                    name = next((child for child in parameter.named_children
                                 if child.type == "type_identifier"), None)
                    if name is not None:
                        found.add(ctx.text(name))
        node = node.parent
    return frozenset(found)


def _declared(ctx: RuleContext, node):
    """(name, Declaration) for each declarator of a declaration or parameter node."""
    type_node = node.child_by_field_name("type")
    if type_node is None:
        return
    type_name = normal_type(ctx.text(type_node))
    shared = b"__shared__" in ctx.data[node.start_byte : type_node.start_byte]
    block = node.parent
    in_block = block is not None and block.type == "compound_statement"
    where = (block.start_byte, block.end_byte, node.start_byte) if block is not None and \
        block.type in ("compound_statement", "for_statement", "for_range_loop") else None
    for declarator in node.children_by_field_name("declarator"):
        name, pointers, value = _unwrap(declarator, in_block)
        if name is None:
            continue
        if type_name == "auto":
            cast = leading_cast(strip_parens(ctx.text(value))) if value is not None else None
            if cast is not None:
                yield ctx.text(name), Declaration(cast.type, cast.pointers, shared, where)
            continue
        yield ctx.text(name), Declaration(type_name, pointers, shared, where)


def _unwrap(node, in_block: bool = False):
    """(identifier node, pointer levels, initial value node) of a declarator; (None, 0, None) for
    function declarators and anything else that declares no variable. In a block, ``T v(n);``
    (read by the parser as a function declaration whose parameters are bare names: the most
    vexing parse) declares the variable ``v``."""
    pointers, value = 0, None
    while node is not None:
        kind = node.type
        if kind == "identifier":
            return node, pointers, value
        if kind == "init_declarator":
            value = node.child_by_field_name("value")
        elif kind == "function_declarator" and in_block and _constructed(node):
            pass
        elif kind in ("pointer_declarator", "array_declarator"):
            pointers += 1
        elif kind not in ("reference_declarator", "parenthesized_declarator"):
            return None, 0, None
        inner = node.child_by_field_name("declarator")
        if inner is None:
            inner = node.named_children[-1] if node.named_children else None
        node = inner
    return None, 0, None


def _constructed(declarator) -> bool:
    """Is every "parameter" of this function declarator a bare name (``v(n, m)``)?"""
    parameters = declarator.child_by_field_name("parameters")
    if parameters is None or not parameters.named_children:
        return False
    for parameter in parameters.named_children:
        type_node = parameter.child_by_field_name("type")
        if (parameter.type != "parameter_declaration" or type_node is None
                or type_node.type != "type_identifier"
                or parameter.child_by_field_name("declarator") is not None):
            return False
    return True


def type_aliases(ctx: RuleContext) -> dict[str, str]:
    """File-scope ``typedef T U;`` / ``using U = T;`` of one-word types: U -> T."""
    aliases = ctx.cache.get("lookup.aliases")
    if aliases is None:
        aliases = ctx.cache["lookup.aliases"] = {}
        if b"typedef" not in ctx.data and b"using" not in ctx.data:
            return aliases  # settled by a substring search, without running the regex
        for match in _ALIAS.finditer(ctx.data):
            if ctx.in_code(match.start()):
                if match.group(1):
                    aliases[match.group(2).decode()] = match.group(1).decode()
                else:
                    aliases[match.group(3).decode()] = match.group(4).decode()
    return aliases
