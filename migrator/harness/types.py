"""Element types a harness can fill, write and compare: one code per arithmetic component type.

A buffer's element is one component type repeated ``components`` times (``float4``: f32 x 4), so
vector types and, after a hand edit, plain structs of one arithmetic type are handled like
arrays. The codes are part of the binary output format (docs/kernel_harness.md): never renumber.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Component:
    code: int  # in the binary output format
    name: str  # as written in a spec ("f32")
    size: int  # bytes
    kind: str  # "int", "uint", "float", "bool", "bytes"


COMPONENTS = {c.name: c for c in (
    Component(1, "i8", 1, "int"), Component(2, "u8", 1, "uint"),
    Component(3, "i16", 2, "int"), Component(4, "u16", 2, "uint"),
    Component(5, "i32", 4, "int"), Component(6, "u32", 4, "uint"),
    Component(7, "i64", 8, "int"), Component(8, "u64", 8, "uint"),
    Component(9, "f16", 2, "float"), Component(10, "bf16", 2, "float"),
    Component(11, "f32", 4, "float"), Component(12, "f64", 8, "float"),
    Component(13, "bool", 1, "bool"), Component(14, "bytes", 1, "bytes"))}
BY_CODE = {c.code: c for c in COMPONENTS.values()}
FLOATING = ("f16", "bf16", "f32", "f64")

# C/CUDA spellings (LP64, as nvcc and hipcc compile on Linux) -> component name
_SCALARS = {
    "bool": "bool", "char": "i8", "signed char": "i8", "int8_t": "i8", "unsigned char": "u8",
    "uint8_t": "u8", "short": "i16", "short int": "i16", "signed short": "i16",
    "int16_t": "i16", "unsigned short": "u16", "unsigned short int": "u16", "uint16_t": "u16",
    "int": "i32", "signed": "i32", "signed int": "i32", "int32_t": "i32", "unsigned": "u32",
    "unsigned int": "u32", "uint32_t": "u32", "long": "i64", "long int": "i64",
    "long long": "i64", "long long int": "i64", "int64_t": "i64", "ptrdiff_t": "i64",
    "intptr_t": "i64", "ssize_t": "i64", "unsigned long": "u64", "unsigned long int": "u64",
    "unsigned long long": "u64", "unsigned long long int": "u64", "uint64_t": "u64",
    "size_t": "u64", "uintptr_t": "u64", "float": "f32", "double": "f64",
    "__half": "f16", "half": "f16", "__nv_bfloat16": "bf16", "nv_bfloat16": "bf16",
    "__bf16": "bf16", "__hip_bfloat16": "bf16", "hip_bfloat16": "bf16",
}
# CUDA's vector types: prefix -> component
_VECTORS = {"char": "i8", "uchar": "u8", "short": "i16", "ushort": "u16", "int": "i32",
            "uint": "u32", "long": "i64", "ulong": "u64", "longlong": "i64", "ulonglong": "u64",
            "float": "f32", "double": "f64"}
_VECTOR = re.compile(r"^(" + "|".join(sorted(_VECTORS, key=len, reverse=True)) + r")([1-4])$")
_PAIRS = {"__half2": "f16", "half2": "f16", "__nv_bfloat162": "bf16", "nv_bfloat162": "bf16",
          "__hip_bfloat162": "bf16"}
_QUALIFIERS = re.compile(r"\b(?:const|volatile|__restrict__|__restrict|restrict|struct|class|"
                         r"enum)\b")


def plain(type_name: str) -> str:
    """A type's spelling without qualifiers, ``std::``/``::`` prefixes or extra blanks."""
    text = _QUALIFIERS.sub(" ", type_name)
    text = re.sub(r"^\s*(?:::)?(?:std::)?", "", text)
    return " ".join(text.split())


def element_layout(type_name: str) -> tuple[str, int] | None:
    """(component name, components) of a pointee or scalar type, or None when unknown; an
    array type (``double [400][400]``, the pointee of an array parameter) is its element's
    components times its length."""
    name = plain(type_name)
    dimensions = re.fullmatch(r"(.*?)\s*((?:\[\s*\d+\s*\])+)", name)
    if dimensions:
        inner = element_layout(dimensions.group(1))
        if inner is None:
            return None
        length = 1
        for size in re.findall(r"\d+", dimensions.group(2)):
            length *= int(size)
        return (inner[0], inner[1] * length) if length else None
    if name in _SCALARS:
        return _SCALARS[name], 1
    if name in _PAIRS:
        return _PAIRS[name], 2
    vector = _VECTOR.match(name)
    if vector:
        return _VECTORS[vector.group(1)], int(vector.group(2))
    return None


def is_pointer(type_name: str) -> bool:
    return "*" in type_name or "[" in type_name


# default value ranges (inclusive) a buffer or scalar is filled from
DEFAULT_RANGES = {"bool": [0, 1], "i8": [-100, 100], "u8": [0, 200], "i16": [-1000, 1000],
                  "u16": [0, 1000], "i32": [-1000, 1000], "u32": [0, 1000],
                  "i64": [-1000, 1000], "u64": [0, 1000], "f16": [-1.0, 1.0],
                  "bf16": [-1.0, 1.0], "f32": [-1.0, 1.0], "f64": [-1.0, 1.0]}

# default tolerances: an element passes within ``ulp`` units in the last place OR within
# ``relative`` of the larger magnitude OR within ``absolute``; the relative defaults sit a few
# machine epsilons above each type's (f16 9.8e-4, bf16 7.8e-3, f32 1.2e-7, f64 2.2e-16)
DEFAULT_TOLERANCES = {"f16": {"ulp": 2, "relative": 2e-3, "absolute": 0.0},
                      "bf16": {"ulp": 2, "relative": 1.6e-2, "absolute": 0.0},
                      "f32": {"ulp": 4, "relative": 1e-5, "absolute": 0.0},
                      "f64": {"ulp": 4, "relative": 1e-12, "absolute": 0.0}}
