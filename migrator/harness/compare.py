"""Comparing the output buffers of the CUDA original and of the port.

Integers, bools and bytes must be identical. A floating value passes when both are NaN (any
payload: NaN equals NaN at the same place), when both are equal (an infinity only equals the
same-signed infinity; +0 equals -0), or when both are finite and within the spec's tolerance of
its type: ``ulp`` units in the last place, OR ``relative`` of the larger magnitude, OR
``absolute`` (defaults: ``types.DEFAULT_TOLERANCES``). Buffers are matched by name; a buffer
missing on one side, or of another type or length, differs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .outputs import OutputBuffer
from .types import DEFAULT_TOLERANCES

_SIGNED = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}
_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_BITS = {"f16": (np.int16, 0x7FFF), "bf16": (np.int16, 0x7FFF), "f32": (np.int32, 0x7FFFFFFF),
         "f64": (np.int64, 0x7FFFFFFFFFFFFFFF)}


@dataclass
class BufferComparison:
    name: str
    type: str  # "f32", "f32x4"...
    original_count: int | None  # elements (None: missing on that side)
    port_count: int | None
    equal: bool
    mismatches: int = 0  # values (components) that differ
    first_index: int | None = None  # the first differing value's index (element * components + c)
    first_original: object = None
    first_port: object = None
    max_ulp: int | None = None  # floating types: over the values compared
    max_relative: float | None = None
    problem: str = ""  # missing, another type or length


def compare_outputs(original: list[OutputBuffer], port: list[OutputBuffer],
                    tolerances: dict | None = None) -> list[BufferComparison]:
    """Every buffer of either side, in the original's order, then the port's extra ones."""
    limits = {kind: {**DEFAULT_TOLERANCES[kind], **(tolerances or {}).get(kind, {})}
              for kind in DEFAULT_TOLERANCES}
    ports = {buffer.name: buffer for buffer in port}
    results = []
    for buffer in original:
        other = ports.pop(buffer.name, None)
        if other is None:
            results.append(BufferComparison(buffer.name, _type(buffer), buffer.count, None,
                                             False, problem="missing in the port's output"))
        else:
            results.append(compare_buffer(buffer, other, limits))
    for buffer in ports.values():
        results.append(BufferComparison(buffer.name, _type(buffer), None, buffer.count, False,
                                        problem="missing in the original's output"))
    return results


def compare_buffer(original: OutputBuffer, port: OutputBuffer,
                   tolerances: dict) -> BufferComparison:
    result = BufferComparison(original.name, _type(original), original.count, port.count, False)
    if _type(original) != _type(port):
        result.problem = f"type differs: original {_type(original)}, port {_type(port)}"
        return result
    if original.count != port.count:
        result.problem = f"length differs: original {original.count}, port {port.count} elements"
        return result
    kind = original.component.name
    if kind in _BITS:
        a, b = _floats(original), _floats(port)
        ulps = _ulp_distance(_bits(original), _bits(port), kind)
        same = _floats_equal(a, b, ulps, tolerances[kind])
        finite = np.isfinite(a) & np.isfinite(b)
        if finite.any():
            result.max_ulp = int(ulps[finite].max())
            with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
                magnitude = np.maximum(np.abs(a[finite]), np.abs(b[finite]))
                relative = np.where(magnitude > 0, np.abs(a[finite] - b[finite]) / magnitude, 0)
            result.max_relative = float(relative.max())
        shown_a, shown_b = a, b
    else:
        size = original.component.size
        dtype = (_SIGNED if original.component.kind == "int" else _UNSIGNED)[size]
        shown_a = np.frombuffer(original.data, dtype=dtype)
        shown_b = np.frombuffer(port.data, dtype=dtype)
        same = shown_a == shown_b
    differing = np.flatnonzero(~same)
    result.mismatches = int(differing.size)
    result.equal = result.mismatches == 0
    if differing.size:
        first = int(differing[0])
        result.first_index = first
        result.first_original, result.first_port = _shown(shown_a[first]), _shown(shown_b[first])
    return result


def _floats_equal(a: np.ndarray, b: np.ndarray, ulps: np.ndarray, limit: dict) -> np.ndarray:
    with np.errstate(invalid="ignore", over="ignore"):
        difference = np.abs(a - b)
        magnitude = np.maximum(np.abs(a), np.abs(b))
        close = ((ulps <= np.uint64(limit["ulp"])) | (difference <= limit["relative"] * magnitude)
                 | (difference <= limit["absolute"]))
    return (a == b) | (np.isnan(a) & np.isnan(b)) | (np.isfinite(a) & np.isfinite(b) & close)


def _floats(buffer: OutputBuffer) -> np.ndarray:
    """The values as float64 (bf16 widened through its bits: it is float32's upper half)."""
    kind = buffer.component.name
    if kind == "bf16":
        bits = np.frombuffer(buffer.data, dtype=np.uint16).astype(np.uint32) << 16
        return bits.view(np.float32).astype(np.float64)
    dtype = {"f16": np.float16, "f32": np.float32, "f64": np.float64}[kind]
    return np.frombuffer(buffer.data, dtype=dtype).astype(np.float64)


def _bits(buffer: OutputBuffer) -> np.ndarray:
    return np.frombuffer(buffer.data, dtype=_BITS[buffer.component.name][0])


def _ulp_distance(a_bits: np.ndarray, b_bits: np.ndarray, kind: str) -> np.ndarray:
    """Units in the last place between two arrays of the same floating type, from their bits:
    each maps to an integer that orders like the value (-0 and +0 both 0), and the distance is
    the difference, computed without overflow as uint64."""
    mask = _BITS[kind][1]
    key_a, key_b = _ordered(a_bits, mask), _ordered(b_bits, mask)
    same_sign = (key_a >= 0) == (key_b >= 0)
    with np.errstate(over="ignore"):
        apart = np.abs(key_a).astype(np.uint64) + np.abs(key_b).astype(np.uint64)
        near = np.abs(key_a - np.where(same_sign, key_b, 0)).astype(np.uint64)
    return np.where(same_sign, near, apart)


def _ordered(bits: np.ndarray, mask: int) -> np.ndarray:
    wide = bits.astype(np.int64)
    magnitude = wide & np.int64(mask)
    return np.where(wide < 0, -magnitude, magnitude)


def _type(buffer: OutputBuffer) -> str:
    name = buffer.component.name
    return name if buffer.components == 1 else f"{name}x{buffer.components}"


def _shown(value) -> object:
    """A numpy value as JSON-friendly Python (NaN and infinities as their names)."""
    value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return str(value)
    return value


# A kernel whose own runs differ (atomics of floats: the order of the additions changes the
# rounding): the port is judged against that variation. Per buffer, the largest distance of a
# port run from the original's first run (ULPs for floating types, the difference for integers,
# over every value) must not exceed NONDETERMINISTIC_FACTOR times the largest distance of the
# original's other runs from its first; a NaN must be where an original run has one. Maxima over
# a whole buffer are stable from run to run where a per-value range of a few runs is not: on the
# H200 (CUDA 13) accumulate_mixed's 16384 half sums fell outside the range of 11 original runs
# at 103 places in a port run, the same kernel's source.
NONDETERMINISTIC_FACTOR = 2


@dataclass
class VariationCheck:
    name: str
    original: int | None  # the largest distance among the original's runs (None: not comparable)
    port: int | None  # the largest distance of a port run from the original's first run
    unit: str  # "ULP" or "" (integers: the difference)

    @property
    def within(self) -> bool:
        return self.original is not None and self.port is not None and \
            self.port <= NONDETERMINISTIC_FACTOR * self.original


def within_variation(original_runs: list[list[OutputBuffer]],
                     port_runs: list[list[OutputBuffer]]) -> list[VariationCheck]:
    """Each buffer of the original's first run: the largest distance among the original's runs
    and of the port's runs from it (above). A buffer missing, of another type or length, or with
    a NaN where no original run has one, is not comparable (None)."""
    checks = []
    for buffer in original_runs[0]:
        same = [next((b for b in run if b.name == buffer.name), None)
                for run in (*original_runs, *port_runs)]
        floating = buffer.component.name in _BITS
        unit = "ULP" if floating else ""
        if any(b is None or _type(b) != _type(buffer) or b.count != buffer.count for b in same):
            checks.append(VariationCheck(buffer.name, None, None, unit))
            continue
        originals, ports = same[:len(original_runs)], same[len(original_runs):]
        nan_seen = np.zeros(buffer.count * buffer.components, dtype=bool)
        if floating:
            for run in originals:
                nan_seen |= np.isnan(_floats(run))
        distances = [_distance(originals[0], other, nan_seen) for other in (*originals[1:],)]
        port = [_distance(originals[0], other, nan_seen) for other in ports]
        checks.append(VariationCheck(
            buffer.name, max(distances, default=0),
            None if None in port else max(port, default=0), unit))
    return checks


def _distance(first: OutputBuffer, other: OutputBuffer, nan_seen: np.ndarray) -> int | None:
    """The largest distance between two runs' values (ULPs or integer difference); NaN where an
    original run has NaN counts 0; a NaN elsewhere: None."""
    if first.component.name in _BITS:
        a, b = _floats(first), _floats(other)
        nan = np.isnan(a) | np.isnan(b)
        if (nan & ~nan_seen).any():
            return None
        ulps = _ulp_distance(_bits(first), _bits(other), first.component.name)
        return int(ulps[~nan].max()) if (~nan).any() else 0
    dtype = (_SIGNED if first.component.kind == "int" else _UNSIGNED)[first.component.size]
    a = np.frombuffer(first.data, dtype=dtype).astype(object)
    b = np.frombuffer(other.data, dtype=dtype).astype(object)
    return int(max((abs(x - y) for x, y in zip(a, b)), default=0))
