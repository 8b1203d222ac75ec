"""Values a launch site's expressions have, read from the file without a compiler.

Integers come from ``migrator.semantic.constants`` (literals, ``#define``s, ``const`` integers)
and, for names it does not know, from a variable the file declares exactly once with an
initialiser and never assigns again (``int threads = 256;`` in ``main``). On top of that: ``sizeof``
of the arithmetic and vector types, ``dim3`` variables and constructors, float literals and
constants, and the byte count of a ``cudaMalloc`` of a named pointer. Anything else is unknown
(None): the spec then says where its default came from.
"""

from __future__ import annotations

import ast
import functools
import operator
import re

from ..rule import RuleContext
from ..semantic.constants import constant_value
from ..settings import Settings
from ..source import Source
from .types import COMPONENTS, element_layout, plain

_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
              ast.Mod: operator.mod, ast.LShift: operator.lshift, ast.RShift: operator.rshift,
              ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor}
_SIZEOF = re.compile(r"\bsizeof\s*\(\s*([A-Za-z_][\w:\s]*?)\s*\)")
_CAST = re.compile(r"\(\s*(?:unsigned\s+|signed\s+)?(?:int|long|long\s+long|size_t|unsigned|"
                   r"float|double|u?int(?:32|64)_t)\s*\)|static_cast\s*<[^<>]*>")
_NUMBER_SUFFIX = re.compile(r"(?<=[\d.])(?:[uU][lL]{0,2}|[lL]{1,2}[uU]?|[fF])\b")
_DIM3 = re.compile(r"\bdim3\s+(\w+)\s*(?:=\s*(?:dim3\s*)?)?[({]([^;{}]*)[)}]\s*;")
_ALLOCATION = re.compile(r"\bcudaMalloc(?:Managed)?\s*\(")
_ADDRESS = re.compile(r"^(?:\(\s*void\s*\*\s*\*\s*\)|reinterpret_cast\s*<\s*void\s*\*\s*\*\s*>)?"
                      r"\s*\(?\s*&\s*([A-Za-z_][\w.]*(?:->\w+)*)\s*\)?$")
_POINTER_CAST = re.compile(r"^\(\s*(?:const\s+)?[\w:<>\s]+\*\s*\)|"
                           r"^(?:reinterpret|static)_cast\s*<[^<>]*>(?=\s*\()")
_SIMPLE_TYPES = (r"(?:const\s+)?(?:unsigned\s+|signed\s+)?(?:int|long\s+long|long|short|size_t|"
                 r"unsigned|float|double|u?int(?:32|64)_t|auto)")


class SiteValues:
    """The constants of one file, for the expressions of its launch sites; and the structs it
    and the ``headers`` it includes (their bytes) declare."""

    def __init__(self, data: bytes, rel: str = "", headers: tuple[bytes, ...] = ()) -> None:
        self.context = RuleContext(Source(rel, data), Settings(), None)
        self.code = self.context.code.decode("utf-8", "replace")  # comments, literals blanked
        self.headers = headers

    def integer(self, text: str, depth: int = 0) -> int | None:
        """The value of an integer expression, or None."""
        if depth > 8:
            return None
        value = self.number(text, depth)
        if isinstance(value, float):
            return int(value) if value.is_integer() else None
        return value

    def number(self, text: str, depth: int = 0) -> int | float | None:
        """The value of an arithmetic expression (integer or float), or None."""
        text = _SIZEOF.sub(lambda m: str(_size_of(m.group(1)) or m.group(0)), text.strip())
        text = _CAST.sub(" ", text).strip()
        if not text or "sizeof" in text or depth > 8:
            return None
        known = constant_value(self.context, text)
        if known is not None:
            return known
        python = _NUMBER_SUFFIX.sub("", text).replace("/", "//")
        try:
            tree = ast.parse(python, mode="eval")
        except SyntaxError:
            return None
        return self._evaluate(tree.body, depth)

    def dim3(self, text: str) -> tuple[int, int, int] | None:
        """A grid or block expression as three sizes: an integer, ``dim3(a, b[, c])`` or a
        ``dim3`` variable declared once in the file."""
        text = text.strip()
        inline = re.fullmatch(r"dim3\s*[({](.*)[)}]", text, re.DOTALL)
        if inline:
            return self._dims(inline.group(1))
        if re.fullmatch(r"[A-Za-z_]\w*", text):
            found = [m for m in _DIM3.finditer(self.code) if m.group(1) == text]
            if len(found) == 1 and not self._assigned_again(text, found[0].end()):
                return self._dims(found[0].group(2))
            if found:
                return None
            members = self._dim3_members(text)
            if members is not None:
                return members
        value = self.integer(text)
        return (value, 1, 1) if value is not None and value > 0 else None

    def allocated_bytes(self, name: str) -> int | None:
        """Bytes of the one ``cudaMalloc(&name, bytes)`` in the file (``name`` may be a member,
        ``b.in``), or None."""
        name = re.sub(r"\s+", "", _POINTER_CAST.sub("", name.strip()))
        sizes = set()
        for match in _ALLOCATION.finditer(self.code):
            arguments = _arguments(self.code, match.end())
            if len(arguments) < 2:
                continue
            address = _ADDRESS.match(arguments[0].strip())
            if address and address.group(1) == name:
                sizes.add(self.integer(arguments[1]))
        return sizes.pop() if len(sizes) == 1 else None

    def struct_layout(self, name: str, size: int) -> tuple[str, int] | None:
        """(component, count) of a struct whose fields all have one arithmetic component type
        (``typedef struct { unsigned char r, g, b, a; } pixel;``: u8 x 4), declared once in the
        file or its headers; None for anything else (methods, bases, bit-fields, mixed types),
        or when ``size`` (the front end's sizeof, 0: unknown) says there is padding."""
        name = plain(name)
        codes = (self.code, *(_code(header) for header in self.headers))
        found = [match for code in codes for match in _STRUCT.finditer(code)
                 if name in (match.group(2), match.group(4))]
        if len(found) != 1 or re.search(r"[(){}:=]|\b(?:static|public|private|protected|"
                                        r"template)\b", found[0].group(3)):
            return None
        if found[0].group(1) and not size:  # aligned: only the front end's size tells padding
            return None
        aliases: dict[str, set[str]] = {}  # two typedefs of a name (#if branches): unknown
        for code in codes:
            for target, alias in _TYPEDEF.findall(code):
                aliases.setdefault(alias, set()).add(plain(target))
        component, count = None, 0
        for declaration in filter(None, (part.strip() for part in found[0].group(3).split(";"))):
            match = _FIELDS.fullmatch(declaration)
            written = plain(match.group(1)) if match else ""
            targets = aliases.get(written, {written})
            layout = element_layout(next(iter(targets))) if match and len(targets) == 1 else None
            if layout is None or layout[0] == "bool" or component not in (None, layout[0]):
                return None
            component = layout[0]
            for declarator in match.group(2).split(","):
                length = re.search(r"\[\s*(\d+)\s*\]", declarator)
                count += layout[1] * (int(length.group(1)) if length else 1)
        if component is None or (size and COMPONENTS[component].size * count != size):
            return None
        return component, count

    def _dim3_members(self, name: str, depth: int = 0) -> tuple[int, int, int] | None:
        """A ``dim3`` declared once without a value (``dim3 grid, block;``) whose members are
        each assigned at most once (``block.x = 16;``): the others keep dim3's 1."""
        declared = re.findall(rf"(?:^|[;{{}}])\s*dim3\s+(?:\w+\s*,\s*)*{re.escape(name)}\s*[,;]",
                              self.code)  # a statement (not a parameter: after "(" or ",")
        if len(declared) != 1 or re.search(rf"(?<![\w.>]){re.escape(name)}\s*=(?!=)",
                                           self.code):
            return None
        sizes = []
        for axis in "xyz":
            value = self._member(name, axis, depth)
            if value is None or value <= 0:
                return None
            sizes.append(value)
        return tuple(sizes)  # type: ignore[return-value]

    def _member(self, name: str, axis: str, depth: int) -> int | None:
        """The one value ``name.axis`` is assigned (1 when never: dim3's default); None when it
        is assigned more than once, through ++ or an operator, or to something unknown."""
        pattern = rf"(?<![\w.>]){re.escape(name)}\s*\.\s*{axis}\s*((?:[-+*/%&|^]|<<|>>)?=(?!=)|\+\+|--)"
        assignments = list(re.finditer(pattern + r"\s*([^;]*);", self.code))
        if not assignments:
            return 1
        if len(assignments) > 1 or assignments[0].group(1) != "=":
            return None
        return self.integer(assignments[0].group(2), depth + 1)

    def _dims(self, inner: str) -> tuple[int, int, int] | None:
        parts = [self.integer(part) for part in _split(inner)] if inner.strip() else []
        if not parts or len(parts) > 3 or any(p is None or p <= 0 for p in parts):
            return None
        return tuple(parts + [1] * (3 - len(parts)))  # type: ignore[return-value]

    def _evaluate(self, node, depth: int) -> int | float | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
                and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.Name):
            return self._variable(node.id, depth)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                node.attr in ("x", "y", "z"):  # a member of a dim3 assigned member by member
            dims = self._dim3_members(node.value.id, depth + 1)
            return dims["xyz".index(node.attr)] if dims else None
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            value = self._evaluate(node.operand, depth)
            return None if value is None else (-value if isinstance(node.op, ast.USub) else value)
        if isinstance(node, ast.BinOp):
            left, right = self._evaluate(node.left, depth), self._evaluate(node.right, depth)
            if left is None or right is None:
                return None
            if isinstance(node.op, ast.FloorDiv):
                if not right:
                    return None
                if isinstance(left, int) and isinstance(right, int):
                    return int(left / right) if left * right < 0 else left // right  # C: toward 0
                return left / right
            if type(node.op) in _OPERATORS:
                if not isinstance(node.op, (ast.Add, ast.Sub, ast.Mult)) and (
                        not isinstance(left, int) or not isinstance(right, int) or
                        (isinstance(node.op, ast.Mod) and not right)):
                    return None
                return _OPERATORS[type(node.op)](left, right)
        return None

    def _variable(self, name: str, depth: int) -> int | float | None:
        """A variable declared exactly once with an initialiser and not assigned again."""
        known = constant_value(self.context, name)
        if known is not None:
            return known
        found = _declarations(self.code, name)
        if len(found) != 1 or self._assigned_again(name, found[0][1]):
            return None
        return self.number(found[0][0], depth + 1)

    def _assigned_again(self, name: str, after: int) -> bool:
        """Whether ``name`` may change after offset ``after``: assigned, incremented, or its
        address taken (``cudaDeviceGetAttribute(&khz, ...)``)."""
        pattern = rf"(?<![\w.>])(?:\+\+|--)?{re.escape(name)}\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)"
        pattern += rf"|(?:\+\+|--)\s*{re.escape(name)}\b|\b{re.escape(name)}\s*(?:\+\+|--)"
        pattern += rf"|&\s*{re.escape(name)}\b(?!\s*\[)"  # its address taken: written through it
        return re.search(pattern, self.code[after:]) is not None


# struct [alignment] [tag] { fields } [typedef name];  alignment: __align__(N), alignas(N),
# __attribute__((aligned(N)))
_ALIGNED = (r"(?:(?:__align__|alignas|__attribute__\s*\(\s*\(\s*aligned)\s*\(\s*\d+\s*\)"
            r"\s*\)?\s*\)?\s*)")
_STRUCT = re.compile(rf"\b(?:struct|class)\s+({_ALIGNED})?(\w+)?\s*\{{([^{{}}]*)\}}\s*(\w+)?"
                     r"\s*;")


# one field declaration: a type, then names (arrays of a constant length too)
_FIELDS = re.compile(r"([A-Za-z_][\w\s:]*?)\s+((?:\w+(?:\s*\[\s*\d+\s*\])?\s*,\s*)*"
                     r"\w+(?:\s*\[\s*\d+\s*\])?)")
_TYPEDEF = re.compile(r"\btypedef\s+([A-Za-z_][\w\s]*?)\s+(\w+)\s*;")


def _code(data: bytes) -> str:
    """A file's text with comments and literals blanked, as ``SiteValues.code``."""
    return RuleContext(Source("", data), Settings(), None).code.decode("utf-8", "replace")


@functools.lru_cache(maxsize=256)
def _size_of(type_name: str) -> int | None:
    layout = element_layout(type_name)
    return None if layout is None else COMPONENTS[layout[0]].size * layout[1]


def _declarations(code: str, name: str) -> list[tuple[str, int]]:
    """(initialiser, end offset) of each declaration of ``name`` with a value: ``TYPE name =
    value;``, ``TYPE name(value);`` or a later declarator (``const int rows = 8, name = 4;``)."""
    found = []
    pattern = rf"(?<![\w.>]){re.escape(name)}\s*(?:=\s*([^;,{{}}=]+)|[({{]([^;{{}}]*)[)}}])\s*[;,]"
    for match in re.finditer(pattern, code):
        statement = max(code.rfind(mark, 0, match.start()) for mark in ";{})") + 1
        if re.match(rf"\s*{_SIMPLE_TYPES}\s+\w", code[statement:match.start() + 1]):
            found.append(((match.group(1) or match.group(2) or "").strip(), match.end()))
    return found


def _arguments(code: str, start: int) -> list[str]:
    """The top-level comma-separated arguments after the ``(`` ending at ``start``."""
    depth, current, parts = 0, start, []
    for index in range(start, min(len(code), start + 2000)):
        char = code[index]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                parts.append(code[current:index])
                return parts
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(code[current:index])
            current = index + 1
    return []


def _split(inner: str) -> list[str]:
    return _arguments(inner + ")", 0)
