"""Integer constants a rule can read without a compiler: literals, object-like ``#define``s and
``const``/``constexpr`` integer variables of the file, and simple arithmetic over them."""

from __future__ import annotations

import ast
import functools
import operator
import re

from ..rule import RuleContext
from .calls import WORD_BYTES


# (each starts with a literal byte string, which the regex engine skips to; what comes before
# is tested after: only blanks from the line's start to the ``#``, no word byte before ``const``)
_DEFINE = re.compile(rb"#[ \t]*define[ \t]+(\w+)[ \t]+([^\n\\]+?)[ \t]*(?://[^\n]*)?$",
                     re.MULTILINE)
_CONST = re.compile(rb"const(?:expr)?\s+(?:static\s+)?(?:unsigned\s+|signed\s+)?"
                    rb"(?:int|long|short|size_t|std::size_t|unsigned|int32_t|uint32_t)\s+(\w+)"
                    rb"\s*=\s*([^;{}]+);")
_BLANKS_BEFORE = re.compile(rb"[ \t]*")
_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
              ast.FloorDiv: operator.floordiv, ast.Div: operator.floordiv, ast.Mod: operator.mod,
              ast.LShift: operator.lshift, ast.RShift: operator.rshift}


def _definitions(ctx: RuleContext) -> dict[str, str]:
    found = ctx.cache.get("constants")
    if found is None:
        found = {}
        data, covering = ctx.data, ctx.literals.covering
        kept = [match for match in _CONST.finditer(data)
                if (not match.start() or data[match.start() - 1] not in WORD_BYTES)
                and covering(match.start()) in (None, "include")]
        for match in _DEFINE.finditer(data):
            line = data.rfind(b"\n", 0, match.start()) + 1  # only blanks before the '#'
            if (_BLANKS_BEFORE.match(data, line).end() == match.start()
                    and covering(line) in (None, "include")):
                kept.append(match)
        for match in kept:  # the first definition of a name counts
            found.setdefault(match.group(1).decode(),
                             match.group(2).decode("utf-8", "replace").strip())
        ctx.cache["constants"] = found
    return found


def constant_value(ctx: RuleContext, text: str, depth: int = 0) -> int | None:
    """The value of the integer expression ``text``, or None when it is not a known constant."""
    text = text.strip()
    if not text or depth > 8:
        return None
    literal = integer_literal(text)
    if literal is not None:
        return literal[0]
    definitions = _definitions(ctx)
    if re.fullmatch(r"[A-Za-z_]\w*", text):
        value = definitions.get(text)
        return constant_value(ctx, value, depth + 1) if value is not None else None
    expression = _expression(text)
    return None if expression is None else _evaluate(ctx, expression, depth)


@functools.lru_cache(maxsize=1024)
def _expression(text: str):
    """The parsed arithmetic expression ``text`` (integer suffixes dropped, C's ``/`` as ``//``),
    or None when it is not one (the same few expressions recur in a file and in a tree)."""
    if not re.fullmatch(r"[\w\s+\-*/%()<>]+", text):
        return None
    try:
        return ast.parse(re.sub(r"(?<=\d)[uUlL]+\b", "", text.replace("/", "//")),
                         mode="eval").body
    except SyntaxError:
        return None


def _evaluate(ctx: RuleContext, node, depth: int) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.Name):
        return constant_value(ctx, node.id, depth + 1)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left = _evaluate(ctx, node.left, depth)
        right = _evaluate(ctx, node.right, depth)
        if left is None or right is None or (isinstance(node.op, (ast.FloorDiv, ast.Mod)) and not right):
            return None
        return _OPERATORS[type(node.op)](left, right)
    return None


_INTEGER = re.compile(r"^(0[xX][0-9a-fA-F']+|0[bB][01']+|0[0-7']*|[1-9][0-9']*)([uUlL]*)$")


# a cast of a literal to an integer type: (T)x, T(x), static_cast<T>(x), and the type's bits
# (LP64, as hipcc and nvcc compile on Linux)
_INTEGER_TYPE = (r"(?:unsigned\s+long\s+long|long\s+long|unsigned\s+long|unsigned|long|"
                 r"u?int(?:32|64)_t|size_t|int)(?:\s+int)?")
_INTEGER_CAST = re.compile(rf"^(?:\(\s*({_INTEGER_TYPE})\s*\)|static_cast\s*<\s*({_INTEGER_TYPE})"
                           rf"\s*>\s*(?=\()|({_INTEGER_TYPE})\s*(?=\())")


def _type_bits(type_name: str) -> int:
    words = type_name.split()
    return 64 if "long" in words or type_name.endswith(("64_t", "size_t")) else 32


@functools.lru_cache(maxsize=4096)  # a file writes the same few masks and widths many times
def integer_literal(text: str) -> tuple[int, int] | None:
    """(value, bits of its type) of a C integer literal, ``~0u``-style complements, ``-1`` and
    casts of them to an integer type (``uint32_t(-1)``, ``(unsigned)-1``) included; None for
    anything else. Types follow C: no suffix fits int/unsigned (32 bits) when the value does,
    ``ll``/``ull`` are 64 bits."""
    text = text.strip()
    while text.startswith("(") and text.endswith(")") and _INTEGER_CAST.match(text) is None:
        text = text[1:-1].strip()
    cast = _INTEGER_CAST.match(text)
    if cast is not None:
        operand = integer_literal(text[cast.end():])
        if operand is None:
            return None
        bits = _type_bits(next(group for group in cast.groups() if group))
        return operand[0] & ((1 << bits) - 1), bits
    complement = text.startswith("~")
    negative = text.startswith("-")
    if complement or negative:
        text = text[1:].strip()
    match = _INTEGER.match(text)
    if not match:
        return None
    digits, suffix = match.group(1).replace("'", ""), match.group(2).lower()
    if digits.lower().startswith("0x"):
        value = int(digits, 16)
    elif digits.lower().startswith("0b"):
        value = int(digits[2:], 2)
    elif digits.startswith("0") and len(digits) > 1:
        value = int(digits, 8)
    else:
        value = int(digits)
    bits = 64 if "ll" in suffix or value > 0xFFFFFFFF else 32
    if complement:
        value = ~value & ((1 << bits) - 1)
    if negative:
        if value != 1:
            return None
        value, bits = (1 << 64) - 1, 64  # -1 converts to all ones in the 64-bit mask type
    return value, bits
