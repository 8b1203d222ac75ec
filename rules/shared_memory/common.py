"""What the shared-memory rules share: sizes of the types LDS buffers are accessed as."""

from __future__ import annotations

import re

TYPE_BYTES = {
    "char": 1, "signed char": 1, "unsigned char": 1, "int8_t": 1, "uint8_t": 1, "bool": 1,
    "short": 2, "unsigned short": 2, "int16_t": 2, "uint16_t": 2, "half": 2, "__half": 2,
    "__nv_bfloat16": 2, "__hip_bfloat16": 2, "hip_bfloat16": 2,
    "int": 4, "unsigned": 4, "unsigned int": 4, "float": 4, "int32_t": 4, "uint32_t": 4,
    "__half2": 4, "half2": 4, "char4": 4, "uchar4": 4, "short2": 4, "ushort2": 4,
    "double": 8, "long long": 8, "unsigned long long": 8, "int64_t": 8, "uint64_t": 8,
    "long": 8, "unsigned long": 8, "size_t": 8, "float2": 8, "int2": 8, "uint2": 8,
    "short4": 8, "ushort4": 8,
    "float4": 16, "int4": 16, "uint4": 16, "double2": 16, "longlong2": 16, "ulonglong2": 16,
    "float3": 4, "int3": 4, "uint3": 4, "double3": 8,
}


def type_bytes(name: str) -> int | None:
    return TYPE_BYTES.get(re.sub(r"\s+", " ", name.replace("const", "").replace("volatile", "")).strip())
