"""XFR004: device-to-device copies between buffers of different devices."""

from __future__ import annotations

import functools
import re

from migrator.apitables import ApiTables
from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Rule, RuleContext
from migrator.semantic.calls import WORD_BYTES
from migrator.semantic.scopes import code_matches, word_offsets
from migrator.semantic.spellings import alternation, api_name, cuda_and_hip, is_hip
from migrator.source import raw_bytes

from .common import Copy, base_identifier, copies


class PeerCopy(Rule):
    """Copy between buffers of two devices with the peer-copy API.

    ## What it does
    Finds ``hipMemcpy``/``hipMemcpyAsync`` with ``hipMemcpyDeviceToDevice`` whose destination
    and source were allocated (``hipMalloc``) in the same function on different devices (the
    ``hipSetDevice`` before each allocation), and rewrites it to ``hipMemcpyPeer(dst, dstDevice,
    src, srcDevice, bytes)`` or ``hipMemcpyPeerAsync(..., stream)``.

    ## Why is this bad on AMD
    ``hipMemcpyDeviceToDevice`` does not say which devices take part: the runtime works it out
    from unified addressing in the current device's context, and a copy it cannot map directly
    is staged (AMD's HIP runtime API reference, ``hipMemcpyAsync``: without peer access "the
    hipMemcpy will still work, but will perform the copy using a staging buffer on the host",
    and a stream of the device that holds the source is recommended). The peer API names both
    devices, so the copy engine of the source device moves the data straight to the destination
    (over xGMI or PCIe peer-to-peer once ``hipDeviceEnablePeerAccess`` is on), which is what
    multi-GPU gradient exchange needs.

    ## Example
    ```cpp
    hipSetDevice(0); hipMalloc(&src, bytes);
    hipSetDevice(1); hipMalloc(&dst, bytes);
    hipMemcpy(dst, src, bytes, hipMemcpyDeviceToDevice);
    ```

    ## Use instead
    ```cpp
    hipMemcpyPeer(dst, 1, src, 0, bytes);
    ```

    ## Fix safety
    Safe when both devices are known at the copy: integer literals, or variables the function
    does not assign again after the allocation. Both calls are asynchronous to the host for
    device-to-device copies and ordered with the devices' pending work.
    """

    code = "XFR004"
    name = "peer-copy"
    summary = "device-to-device copy between two devices without the peer API"
    family = "transfers"
    fix = "always"
    optimization = True

    def check(self, ctx: RuleContext):
        if b"SetDevice" not in ctx.data:
            return
        for copy in copies(ctx):
            if copy.body is None or len(copy.arguments) < 4:
                continue
            if not copy.text(ctx, 3).strip().endswith("DeviceToDevice"):
                continue
            devices = []
            for index in (0, 1):
                name = base_identifier(copy.text(ctx, index))
                device = _device_of(ctx, copy, name) if name else None
                if device is None:
                    break
                devices.append(device)
            if len(devices) != 2 or devices[0] == devices[1]:
                continue
            yield _rewrite(ctx, copy, devices)


def _device_of(ctx: RuleContext, copy: Copy, name: str) -> str | None:
    """The device ``name`` was allocated on: the hipSetDevice argument before its hipMalloc, if
    that argument still holds at the copy."""
    body = copy.body
    data = ctx.data
    set_device, allocation = _device_calls(ctx.tables)
    spelled = name.encode()
    # hipMalloc(&name ...: the call's head, then the name and a word boundary (the patterns
    # are the same in every file; the names differ)
    found = [m for m in code_matches(ctx, allocation, body.open, copy.start)
             if data.startswith(spelled, m.end()) and _boundary(data, m.end() + len(spelled))]
    if len(found) != 1:
        return None
    settings = [m for m in code_matches(ctx, set_device, body.open, found[0].start())]
    if not settings:
        return None
    device = settings[-1].group(1).decode()
    if not device.isdigit():
        size = len(device)
        if any(_ASSIGNMENT.match(data, at + size, copy.start)
               for at in word_offsets(ctx, device.encode(), found[0].end(), copy.start)):
            return None
    return device


# what makes a variable change: an assignment (compound ones too) or an increment
_ASSIGNMENT = re.compile(rb"\s*(?:[-+*/]?=(?!=)|\+\+|--)")


def _boundary(data: bytes, at: int) -> bool:
    """Is there a word boundary (regex ``\\b``) at ``at``?"""
    before = at > 0 and data[at - 1] in WORD_BYTES
    after = at < len(data) and data[at] in WORD_BYTES
    return before != after


@functools.lru_cache(maxsize=8)
def _device_calls(tables: ApiTables) -> tuple[re.Pattern, re.Pattern]:
    """A regex of ``cudaSetDevice(device)`` in either spelling (the device: group 1), and one
    of the head of ``cudaMalloc(&`` (casts to ``void**`` included) in either spelling."""
    set_device = re.compile(rb"\b" + alternation(cuda_and_hip(tables, "cudaSetDevice"))
                            + rb"\s*\(\s*([A-Za-z_]\w*|\d+)\s*\)")
    allocation = re.compile(rb"\b" + alternation(cuda_and_hip(tables, "cudaMalloc"))
                            + rb"\s*\(\s*(?:\(\s*void\s*\*\*\s*\)\s*|reinterpret_cast"
                            rb"\s*<\s*void\s*\*\*\s*>\s*\(\s*)?&\s*")
    return set_device, allocation


def _rewrite(ctx: RuleContext, copy: Copy, devices: list[str]) -> Diagnostic:
    hip = is_hip(copy.name)
    asynchronous = copy.name.endswith(b"Async")
    dst, src, size = (copy.text(ctx, i).strip() for i in range(3))
    if asynchronous:
        stream = copy.text(ctx, 4).strip() if len(copy.arguments) > 4 else "0"
        call = (f"{api_name(ctx, 'cudaMemcpyPeerAsync', hip)}({dst}, {devices[0]}, {src}, "
                f"{devices[1]}, {size}, {stream})")
    else:
        call = f"{api_name(ctx, 'cudaMemcpyPeer', hip)}({dst}, {devices[0]}, {src}, {devices[1]}, {size})"
    line, _ = ctx.source.position(copy.start)
    fix = Fix("copy between the devices with the peer API",
              (Edit(copy.start, copy.close + 1, raw_bytes(call)),))
    return Diagnostic("XFR004", f"device-to-device copy from device {devices[1]} to device "
                      f"{devices[0]}: name both devices with the peer-copy API", copy.start,
                      copy.end, fix, library="runtime", symbol="MemcpyPeer")
