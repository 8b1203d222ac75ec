"""What the atomics rules share: the 16-bit floating-point types, the type an atomic's pointer
argument points to (proven lexically from the declarations the file shows), evidence of 16-bit
values where the type cannot be proven, and the table of native HIP atomics."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

from migrator.rule import RuleContext
from migrator.versions import parse_version

SUPPORT_HEADER = '"rocmigrate_atomics.h"'
# the CUDA-style bf16 types: CUDA's __nv_bfloat16 becomes HIP's __hip_bfloat16 from ROCm 6.0
# (hip/hip_bf16.h; rules/api/manual.tsv); older HIP has only the hip_bfloat16 struct
NEW_BF16 = (6, 0, 0)
# spelling (CUDA or HIP) -> the type the converted code has on AMD (native_atomics.tsv's names)
SIXTEEN_BIT = {
    "__half": "__half", "half": "__half",
    "__half2": "__half2", "half2": "__half2",
    "__nv_bfloat16": "__hip_bfloat16", "nv_bfloat16": "__hip_bfloat16",
    "__hip_bfloat16": "__hip_bfloat16",
    "__nv_bfloat162": "__hip_bfloat162", "nv_bfloat162": "__hip_bfloat162",
    "__hip_bfloat162": "__hip_bfloat162",
    "hip_bfloat16": "hip_bfloat16",
}
PAIRS = frozenset({"__half2", "__hip_bfloat162"})  # two 16-bit values in one 32-bit word
_FUNDAMENTAL = re.compile(r"(?:(?:signed|unsigned|short|long|int|char|float|double|bool)\s*)+|"
                          r"(?:u?int(?:8|16|32|64)_t|size_t|ptrdiff_t|uintptr_t)")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_KEYWORD_TYPES = {"signed", "unsigned", "short", "long", "int", "char", "float", "double", "bool"}
_TYPE = r"[A-Za-z_][\w:]*(?:\s+(?:int|long|short|char))*"
_C_CAST = re.compile(r"\(\s*(?:(?:const|volatile)\s+)*(" + _TYPE + r")\s*((?:\*\s*)+)\)")
_CXX_CAST = re.compile(r"(?:reinterpret_cast|static_cast|const_cast)\s*<\s*"
                       r"(?:(?:const|volatile)\s+)*(" + _TYPE + r")\s*((?:(?:const\s*)?\*\s*)+)>")
# pointer arithmetic after the base name: "+ i", "- 1" (not "->", "++", "--", "-=", "+=")
_ARITHMETIC = re.compile(r"[+-](?![+\-=>])")
_TYPE_NAMES = "|".join(sorted(SIXTEEN_BIT, key=len, reverse=True))
_EVIDENCE = re.compile(
    r"\b(?:__float2half\w*|__double2half|__float2bfloat16\w*|__double2bfloat16|__floats2half2_rn|"
    r"__float22half2_rn|__floats2bfloat162_rn|__float22bfloat162_rn|__h(?:add|sub|mul|fma)2?\b|"
    + _TYPE_NAMES + r")\b")
# every _EVIDENCE alternative contains one of the hints or matches the pattern: a substring
# search each (one pattern for the four __h operations: four searches cost three times more)
_EVIDENCE_HINTS = (b"half", b"bfloat16")
_EVIDENCE_OPERATION_HINT = re.compile(rb"__h(?:add|sub|mul|fma)")
_ALIAS = re.compile(rb"\btypedef\s+(?:const\s+)?([A-Za-z_]\w*)\s+([A-Za-z_]\w*)\s*;"
                    rb"|\busing\s+([A-Za-z_]\w*)\s*=\s*(?:const\s+)?([A-Za-z_]\w*)\s*;")


def helper_available(canonical: str, rocm: tuple[int, int, int]) -> bool:
    """Does rocmigrate_atomics.h, rendered for ``rocm``, define helpers for this type? (The
    header has the bf16 type the converted code uses at that target.)"""
    if canonical in ("__hip_bfloat16", "__hip_bfloat162"):
        return rocm >= NEW_BF16
    if canonical == "hip_bfloat16":
        return rocm < NEW_BF16
    return canonical in ("__half", "__half2")


@functools.lru_cache(maxsize=1)
def native_atomics() -> dict[tuple[str, str], tuple[int, int, int] | None]:
    """(operation, type) -> the first ROCm whose HIP declares it natively (None: none known)."""
    rows = {}
    for line in Path(__file__).with_name("native_atomics.tsv").read_text().splitlines():
        if not line.strip() or line.startswith("#") or line.startswith("operation\t"):
            continue
        operation, type_name, added = line.split("\t")[:3]
        rows[(operation, type_name)] = None if added == "-" else parse_version(added)
    return rows


def native_in(operation: str, canonical: str, rocm: tuple[int, int, int]) -> bool:
    added = native_atomics().get((operation, canonical))
    return added is not None and rocm >= added


@dataclass(frozen=True)
class Declaration:
    type: str  # as written (cv-qualifiers dropped), aliases resolved
    pointers: int  # '*' in the declarator; an array dimension counts as one
    shared: bool = False  # __shared__ (LDS)
    # (block start, block end, declaration start) of a declaration in a block; not compared:
    # declarations that agree are one, wherever they are
    where: tuple[int, int, int] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Operand:
    """What an atomic's pointer argument points to: a ``known`` type, a ``template`` parameter,
    or ``unknown`` (``type`` then holds the unrecognised name, if any)."""

    kind: str
    type: str = ""
    shared: bool = False

    @property
    def sixteen_bit(self) -> str | None:
        return SIXTEEN_BIT.get(self.type) if self.kind == "known" else None


UNKNOWN = Operand("unknown")


def converted_type(ctx: RuleContext, operand: Operand) -> str | None:
    """The 16-bit type (native_atomics.tsv's name) the operand has in the converted code: where a
    lowering replaces its CUDA type name at the target (``__nv_bfloat16`` -> ``hip_bfloat16``
    before ROCm 6.0, rules/api/lowerings.tsv), the replacement's."""
    if operand.kind != "known":
        return None
    low = ctx.tables.lowerings.get(operand.type)
    if low is not None and low.kind == "name" and low.applies(ctx.settings.rocm):
        return SIXTEEN_BIT.get(low.replacement)
    return SIXTEEN_BIT.get(operand.type)


@dataclass(frozen=True)
class Cast:
    type: str
    pointers: int
    end: int  # where the cast's operand starts in the text


def leading_cast(text: str) -> Cast | None:
    """The pointer cast ``text`` starts with: ``(T*)x``, ``reinterpret_cast<T*>(x)``..."""
    match = _C_CAST.match(text) or _CXX_CAST.match(text)
    if match is None:
        return None
    return Cast(_normal(match.group(1)), match.group(2).count("*"), match.end())


def _normal(type_text: str) -> str:
    words = [word for word in type_text.replace("::", " :: ").split()
             if word not in ("const", "volatile", "struct")]
    return " ".join(words).replace(" :: ", "::").lstrip(":")


def _known(type_name: str) -> bool:
    return type_name in SIXTEEN_BIT or _FUNDAMENTAL.fullmatch(type_name) is not None


def strip_parens(text: str) -> str:
    """``text`` without blanks and the parentheses that enclose all of it."""
    text = text.strip()
    while text.startswith("(") and _closing(text, 0) == len(text) - 1:
        text = text[1:-1].strip()
    return text


def _closing(text: str, open_at: int) -> int:
    depth = 0
    for index in range(open_at, len(text)):
        if text[index] in "([{":
            depth += 1
        elif text[index] in ")]}":
            depth -= 1
            if depth == 0:
                return index
    return -1


def pointer_operand(ctx: RuleContext, begin: int, end: int) -> Operand:
    """The type the pointer expression at [begin, end) points to, proven lexically: a cast to
    ``T*``, or a name (``p``, ``p + i``, ``&x``, ``&a[i]``) declared in the enclosing function
    (parameters, locals) or at file scope, with every declaration of that name agreeing."""
    return operand_of(ctx, ctx.data[begin:end].decode("utf-8", "replace"), begin)


@dataclass(frozen=True)
class _PointerText:
    """A pointer expression read lexically: a leading cast, or ``&``, a base name and the rest."""

    cast: Cast | None = None
    address_of: bool = False
    name: str = ""  # '' when the expression starts with no name
    rest: str = ""


@functools.lru_cache(maxsize=4096)  # the same argument texts recur, in a file and across files
def _pointer_text(text: str) -> _PointerText:
    text = strip_parens(text)
    cast = leading_cast(text)
    if cast is not None:
        return _PointerText(cast)
    address_of = text.startswith("&")
    if address_of:
        text = strip_parens(text[1:])
    name = _IDENTIFIER.match(text)
    if name is None:
        return _PointerText(None, address_of)
    return _PointerText(None, address_of, name.group(), text[name.end():].lstrip())


def operand_of(ctx: RuleContext, text: str, at: int) -> Operand:
    """What the pointer expression ``text``, written at ``at``, points to (see pointer_operand)."""
    parts = _pointer_text(text)
    cast, address_of, rest = parts.cast, parts.address_of, parts.rest
    if cast is not None:
        return Operand("known" if _known(cast.type) else "unknown", cast.type) \
            if cast.pointers == 1 else UNKNOWN
    if not parts.name:
        return UNKNOWN
    subscripts = 0
    while rest.startswith("["):
        close = _closing(rest, 0)
        if close < 0:
            return UNKNOWN
        subscripts += 1
        rest = rest[close + 1:].lstrip()
    if rest and (address_of or not _ARITHMETIC.match(rest)):
        return UNKNOWN  # a member, a call, another operator: not provable from a declaration
    declaration, template_parameters = _lookup(ctx, parts.name, at)
    if declaration is None:
        return UNKNOWN
    if declaration.pointers - subscripts + address_of != 1:
        return UNKNOWN
    if declaration.type in template_parameters:
        return Operand("template", declaration.type)
    if not _known(declaration.type):
        return Operand("unknown", declaration.type)
    return Operand("known", declaration.type, declaration.shared)


def _lookup(ctx: RuleContext, name: str, at: int) -> tuple[Declaration | None, frozenset[str]]:
    """The declaration of ``name`` seen from ``at`` (aliases resolved) and the template
    parameters of the function there: read from the function's tokens where declarations.py is
    sure of them (one type, no template parameter of that name), else from the tree."""
    from .declarations import declarations, function_around  # it reads this module's types
    function = function_around(ctx, at)
    found = declarations(ctx, function, name) if function is not None else None
    if found is not None and len(found) == 1:
        declaration = _resolved(ctx, next(iter(found)))
        if not _maybe_template_parameter(ctx, declaration.type):
            return declaration, frozenset()
    scope = _scope(ctx, at)
    return scope.lookup(ctx, name, at), scope.template_parameters


def _maybe_template_parameter(ctx: RuleContext, type_name: str) -> bool:
    """Is ``type_name`` written after ``typename`` or ``class`` somewhere in the file's code, as
    every template type parameter (the tree's _template_parameters) is?"""
    found = ctx.cache.setdefault("atm_template_like", {})
    if type_name not in found:
        pattern = rb"\b(?:typename|class)\b[\s.]*" + re.escape(type_name.encode()) + rb"\b"
        found[type_name] = _IDENTIFIER.fullmatch(type_name) is not None \
            and type_name not in _KEYWORD_TYPES and re.search(pattern, ctx.code) is not None
    return found[type_name]


def function_key(ctx: RuleContext, at: int) -> tuple[int, str] | None:
    """(where its body opens, its name) of the innermost function definition around ``at``:
    read from its tokens where declarations.py is sure of them, else from the tree."""
    from .declarations import function_around
    function = function_around(ctx, at)
    if function is not None:
        return function.body.open, function.name
    node = enclosing_function(ctx, at)
    if node is None:
        return None
    return node.child_by_field_name("body").start_byte, function_name(ctx, node)


def may_point_to(ctx: RuleContext, begin: int, end: int, types: frozenset[str]) -> bool:
    """A lexical necessary condition for ``pointer_operand(ctx, begin, end)`` being a known
    pointer to one of ``types`` (fundamental types), checked without the tree: a cast to one of
    them, or a base name that the file's code writes after one of them (or an alias of one, or
    ``auto``) with no ``;`` between, as every declaration of it must. False proves the operand is
    not such a pointer; True proves nothing."""
    parts = _pointer_text(ctx.data[begin:end].decode("utf-8", "replace"))
    if parts.cast is not None:
        return parts.cast.pointers == 1 and parts.cast.type in types
    if not parts.name:
        return False
    key = ("atm_may_point_to", types, parts.name)
    found = ctx.cache.get(key)
    if found is None:
        words = _type_words(ctx, types)
        code = ctx.code  # comments and literals blanked: a ';' in them does not count
        found = False
        for use in re.finditer(rb"\b" + re.escape(parts.name.encode()) + rb"\b", code):
            # a declaration's type and its declarators are one statement: no ';' between
            if words.search(code, code.rfind(b";", 0, use.start()) + 1, use.start()):
                found = True
                break
        ctx.cache[key] = found
    return found


def _type_words(ctx: RuleContext, types: frozenset[str]) -> re.Pattern:
    """A pattern for the words a declaration of a ``types`` variable can start its type with:
    the types, the file's aliases resolving to them (as _Scope.lookup resolves), ``auto``."""
    key = ("atm_type_words", types)
    pattern = ctx.cache.get(key)
    if pattern is None:
        aliases = _aliases(ctx)
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


def sixteen_bit_evidence(ctx: RuleContext, spans: list[tuple[int, int]], at: int) -> str:
    """Why the argument texts at ``spans`` look like 16-bit floats (a conversion to one, a
    16-bit type's name, a name declared with one), or ''."""
    for begin, end in spans:
        text = ctx.data[begin:end].decode("utf-8", "replace")
        found = _EVIDENCE.search(text)
        if found:
            return found.group()
        plain = strip_parens(text)
        if _IDENTIFIER.fullmatch(plain):
            declaration = value_declaration(ctx, plain, at)
            if declaration and declaration.pointers == 0 and declaration.type in SIXTEEN_BIT:
                return f"{plain} is {declaration.type}"
    return ""


def may_involve_sixteen_bit(ctx: RuleContext) -> bool:
    """Could anything in the file be a 16-bit float? False when its text (comments included)
    names no 16-bit type and no conversion or operation producing one: then no operand can be
    proven 16-bit and no argument shows one, and the atomics rules need no declarations (and
    no parse)."""
    found = ctx.cache.get("atm_possible")
    if found is None:
        data = ctx.data
        # most files are settled by the hints (see there), without decoding and running _EVIDENCE
        found = ctx.cache["atm_possible"] = (any(hint in data for hint in _EVIDENCE_HINTS)
                                             or _EVIDENCE_OPERATION_HINT.search(data) is not None) \
            and _EVIDENCE.search(data.decode("utf-8", "replace")) is not None
    return found


def mentions_sixteen_bit(ctx: RuleContext) -> bool:
    """Does the file name a 16-bit floating-point type in code?"""
    found = ctx.cache.get("atm_mentions")
    if found is None:
        pattern = re.compile(rb"\b(?:" + _TYPE_NAMES.encode() + rb")\b")
        found = ctx.cache["atm_mentions"] = any(
            ctx.in_code(m.start()) for m in pattern.finditer(ctx.data))
    return found


def enclosing_function(ctx: RuleContext, at: int):
    """The innermost function definition around ``at`` (a tree node), or None."""
    node = ctx.tree.root_node.descendant_for_byte_range(at, at)
    while node is not None and node.type != "function_definition":
        node = node.parent
    return node


def function_name(ctx: RuleContext, function) -> str:
    declarator = function.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    if declarator is None:
        return ""
    name = declarator.child_by_field_name("declarator")
    return ctx.text(name) if name is not None else ""


def excluded_by_size_check(ctx: RuleContext, at: int, type_parameter: str) -> bool:
    """Is ``at`` in the branch of an ``if constexpr (sizeof(T) == 2)`` (or ``!= 2``) that rules
    out a 16-bit ``T``?"""
    pattern = re.compile(r"sizeof\s*\(\s*" + re.escape(type_parameter) + r"\s*\)\s*(==|!=)\s*2\b")
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
    aliases = _aliases(ctx)
    seen = 0
    while declaration.type in aliases and seen < 4:
        declaration = Declaration(aliases[declaration.type], declaration.pointers,
                                  declaration.shared, declaration.where)
        seen += 1
    return declaration


def _scope(ctx: RuleContext, at: int) -> _Scope:
    scopes = ctx.cache.setdefault("atm_scopes", {})
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
    type_name = _normal(ctx.text(type_node))
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


def _aliases(ctx: RuleContext) -> dict[str, str]:
    """File-scope ``typedef T U;`` / ``using U = T;`` of one-word types: U -> T."""
    aliases = ctx.cache.get("atm_aliases")
    if aliases is None:
        aliases = ctx.cache["atm_aliases"] = {}
        if b"typedef" not in ctx.data and b"using" not in ctx.data:
            return aliases  # settled by a substring search, without running the regex
        for match in _ALIAS.finditer(ctx.data):
            if ctx.in_code(match.start()):
                if match.group(1):
                    aliases[match.group(2).decode()] = match.group(1).decode()
                else:
                    aliases[match.group(3).decode()] = match.group(4).decode()
    return aliases
