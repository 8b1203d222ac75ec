"""Types as C++ text spells them: a declaration's type and pointer levels, a cast, a pointer
expression read lexically. Text only: ``declarations`` and ``lookup`` read the file."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_FUNDAMENTAL = re.compile(r"(?:(?:signed|unsigned|short|long|int|char|float|double|bool)\s*)+|"
                          r"(?:u?int(?:8|16|32|64)_t|size_t|ptrdiff_t|uintptr_t)")
_TYPE = r"[A-Za-z_][\w:]*(?:\s+(?:int|long|short|char))*"
_C_CAST = re.compile(r"\(\s*(?:(?:const|volatile)\s+)*(" + _TYPE + r")\s*((?:\*\s*)+)\)")
_CXX_CAST = re.compile(r"(?:reinterpret_cast|static_cast|const_cast)\s*<\s*"
                       r"(?:(?:const|volatile)\s+)*(" + _TYPE + r")\s*((?:(?:const\s*)?\*\s*)+)>")


@dataclass(frozen=True)
class Declaration:
    type: str  # as written (cv-qualifiers dropped), aliases resolved
    pointers: int  # '*' in the declarator; an array dimension counts as one
    shared: bool = False  # __shared__ (LDS)
    # (block start, block end, declaration start) of a declaration in a block; not compared:
    # declarations that agree are one, wherever they are
    where: tuple[int, int, int] | None = field(default=None, compare=False)


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
    return Cast(normal_type(match.group(1)), match.group(2).count("*"), match.end())


def normal_type(type_text: str) -> str:
    """A type's text as declarations compare it: words single-spaced, ``::`` unspaced, without
    ``const``, ``volatile`` and ``struct``."""
    words = [word for word in type_text.replace("::", " :: ").split()
             if word not in ("const", "volatile", "struct")]
    return " ".join(words).replace(" :: ", "::").lstrip(":")


def is_fundamental(type_name: str) -> bool:
    """Is the normal type name an arithmetic type of the language or of <cstdint>?"""
    return _FUNDAMENTAL.fullmatch(type_name) is not None


def strip_parens(text: str) -> str:
    """``text`` without blanks and the parentheses that enclose all of it."""
    text = text.strip()
    while text.startswith("(") and closing_bracket(text, 0) == len(text) - 1:
        text = text[1:-1].strip()
    return text


def closing_bracket(text: str, open_at: int) -> int:
    """Where the bracket opened at ``open_at`` closes (any of ``()[]{}`` counts), or -1."""
    depth = 0
    for index in range(open_at, len(text)):
        if text[index] in "([{":
            depth += 1
        elif text[index] in ")]}":
            depth -= 1
            if depth == 0:
                return index
    return -1


@dataclass(frozen=True)
class PointerText:
    """A pointer expression read lexically: a leading cast, or ``&``, a base name and the rest."""

    cast: Cast | None = None
    address_of: bool = False
    name: str = ""  # '' when the expression starts with no name
    rest: str = ""


@functools.lru_cache(maxsize=4096)  # the same argument texts recur, in a file and across files
def pointer_text(text: str) -> PointerText:
    """The pointer expression ``text`` read as a cast, or ``&``, a base name and the rest."""
    text = strip_parens(text)
    cast = leading_cast(text)
    if cast is not None:
        return PointerText(cast)
    address_of = text.startswith("&")
    if address_of:
        text = strip_parens(text[1:])
    name = IDENTIFIER.match(text)
    if name is None:
        return PointerText(None, address_of)
    return PointerText(None, address_of, name.group(), text[name.end():].lstrip())
