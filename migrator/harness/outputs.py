"""The binary file a harness writes its output buffers to, and its reader.

Layout (little-endian; docs/kernel_harness.md): ``RMKH``, u32 version (1), u32 buffer count;
per buffer u16 name length, the name (UTF-8), u8 type code (``types.COMPONENTS``), u8
components per element, u32 element size in bytes, u64 element count; then each buffer's
bytes, in the same order.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

from .types import BY_CODE, Component

MAGIC = b"RMKH"
VERSION = 1


class OutputError(Exception):
    """A file that is not a harness output (or is cut short)."""


@dataclass(frozen=True)
class OutputBuffer:
    name: str
    component: Component
    components: int
    element_size: int
    count: int
    data: bytes


def read_output(path: Path) -> list[OutputBuffer]:
    try:
        data = path.read_bytes()
    except OSError as err:
        raise OutputError(f"cannot read {path}: {err.strerror}") from None
    return parse_output(data, str(path))


def parse_output(data: bytes, where: str = "output") -> list[OutputBuffer]:
    if data[:4] != MAGIC:
        raise OutputError(f"{where}: not a harness output (no RMKH magic)")
    if len(data) < 12:
        raise OutputError(f"{where}: cut short in its header")
    version, count = struct.unpack_from("<II", data, 4)
    if version != VERSION:
        raise OutputError(f"{where}: format version {version}, expected {VERSION}")
    offset, headers = 12, []
    for _ in range(count):
        if offset + 2 > len(data):
            raise OutputError(f"{where}: cut short in its header")
        (length,) = struct.unpack_from("<H", data, offset)
        name_end = offset + 2 + length
        if name_end + 14 > len(data):
            raise OutputError(f"{where}: cut short in its header")
        name = data[offset + 2:name_end].decode("utf-8", "replace")
        code, components, element_size, elements = struct.unpack_from("<BBIQ", data, name_end)
        component = BY_CODE.get(code)
        if component is None:
            raise OutputError(f"{where}: buffer {name}: unknown type code {code}")
        if components < 1 or element_size != component.size * components:
            raise OutputError(f"{where}: buffer {name}: element size {element_size} is not "
                              f"{components} x {component.name}")
        headers.append((name, component, components, element_size, elements))
        offset = name_end + 14
    buffers = []
    for name, component, components, element_size, elements in headers:
        end = offset + element_size * elements
        if end > len(data):
            raise OutputError(f"{where}: buffer {name}: cut short ({len(data) - offset} of "
                              f"{end - offset} bytes)")
        buffers.append(OutputBuffer(name, component, components, element_size, elements,
                                    data[offset:end]))
        offset = end
    if offset != len(data):
        raise OutputError(f"{where}: {len(data) - offset} bytes after the last buffer")
    return buffers


def write_output(path: Path, buffers: list[OutputBuffer]) -> None:
    """The same format from Python (tests, and tools that produce reference outputs)."""
    head = MAGIC + struct.pack("<II", VERSION, len(buffers))
    for buffer in buffers:
        name = buffer.name.encode()
        head += struct.pack("<H", len(name)) + name + struct.pack(
            "<BBIQ", buffer.component.code, buffer.components, buffer.element_size, buffer.count)
    path.write_bytes(head + b"".join(buffer.data for buffer in buffers))
