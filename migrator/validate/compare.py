"""The output contract of a validated program, and how an original and its port are compared.

A program prints one line of flat JSON on stdout, then ``PASS`` or ``FAIL`` last. Keys ending
``_ms`` are timings (compared by a test over the runs, ``migrator.toolchain.timing``); keys ending
``_per_s`` or ``_x`` are derived figures (reported, not compared); ``result`` must be ``"PASS"``;
every other key is a result that must be identical (floats within a relative tolerance). The
last stdout line that parses as a JSON object counts. Without one, the whole stdout is the result.
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass

from ..toolchain.timing import CONFIDENCE, TimingComparison, judge_timing

STATUS_KEY = "result"
TIMING_SUFFIX = "_ms"
DERIVED_SUFFIXES = ("_per_s", "_x")
_MISSING = object()


@dataclass
class Run:
    """One run of a binary."""

    rc: int | None  # None: killed after the time limit
    seconds: float
    timed_out: bool
    status: str | None  # the last stdout line when it is PASS or FAIL
    json: dict | None  # the last stdout line that is a JSON object
    stdout: str | None  # the whole stdout when it holds no JSON object (it is the result then)
    stderr_tail: str
    warmup: bool = False  # a warm-up run: its results count, its timings do not

    @classmethod
    def from_output(cls, rc: int | None, seconds: float, timed_out: bool, stdout: str,
                    stderr_tail: str = "") -> "Run":
        parsed, status = parse_output(stdout)
        return cls(rc, seconds, timed_out, status, parsed, stdout if parsed is None else None,
                   stderr_tail)

    @property
    def completed(self) -> bool:
        """Ran to an end the program chose: no time-out, no crash without a verdict."""
        return not self.timed_out and (self.rc == 0 or self.status is not None)

    @property
    def passed(self) -> bool:
        """Exit 0, and PASS by the contract (or, without a JSON line, no FAIL)."""
        return self.why_not_passed() is None

    def why_not_passed(self) -> str | None:
        """None when the run passed; else why not, in the contract's terms."""
        ending = f"exit code {self.rc}, status {self.status or 'missing'}"
        if self.rc != 0 or self.status == "FAIL":
            return ending
        if self.json is None:
            return None
        if STATUS_KEY not in self.json:
            return (f'the program\'s JSON line has no "{STATUS_KEY}" key: the contract asks for '
                    f'{{..., "{STATUS_KEY}": "PASS"}} on that line; {ending}')
        if self.json[STATUS_KEY] != "PASS":
            return (f'its JSON line says "{STATUS_KEY}": {json.dumps(self.json[STATUS_KEY])}; '
                    f"{ending}")
        if self.status != "PASS":
            return f"its last stdout line is not PASS; {ending}"
        return None


@dataclass
class ResultComparison:
    key: str
    original: object
    port: object
    equal: bool


@dataclass
class DerivedFigure:
    key: str
    original: float | None  # median over the runs
    port: float | None


def key_kind(key: str) -> str:
    """timing | derived | status | result"""
    if key == STATUS_KEY:
        return "status"
    if key.endswith(TIMING_SUFFIX):
        return "timing"
    if key.endswith(DERIVED_SUFFIXES):
        return "derived"
    return "result"


def parse_output(stdout: str) -> tuple[dict | None, str | None]:
    """(the last line that parses as a JSON object, the status line: PASS, FAIL, SKIP (the
    program cannot run here, e.g. it needs two GPUs) or None)."""
    lines = [line.strip() for line in stdout.splitlines() if line.strip()]
    status = lines[-1] if lines and lines[-1] in ("PASS", "FAIL", "SKIP") else None
    for line in reversed(lines):
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                return value, status
    return None, status


def values_equal(original: object, port: object, tolerance: float) -> bool:
    """Identical; floats within ``tolerance`` relative to the larger magnitude."""
    if _is_number(original) and _is_number(port):
        if original == port:
            return True
        if isinstance(original, float) or isinstance(port, float):
            if math.isnan(original) and math.isnan(port):
                return True
            limit = tolerance * max(abs(original), abs(port))
            return tolerance > 0 and abs(original - port) <= limit
        return False
    return type(original) is type(port) and original == port


def compare_results(original_runs: list[Run], port_runs: list[Run],
                    tolerance: float) -> list[ResultComparison]:
    """Every result of the first completed original run against every completed port run; a
    key is equal when all port runs match it (a port value shown is the first that differs)."""
    reference = next((run for run in original_runs if run.completed), None)
    ports = [run for run in port_runs if run.completed]
    if reference is None or not ports:
        return []
    if reference.json is None:
        differing = next((run for run in ports if run.stdout != reference.stdout), ports[0])
        return [ResultComparison("stdout", reference.stdout, differing.stdout,
                                 differing.stdout == reference.stdout)]
    keys = [key for key in reference.json if key_kind(key) == "result"]
    for run in ports:
        keys += [key for key in (run.json or {}) if key_kind(key) == "result" and key not in keys]
    comparisons = []
    for key in keys:
        original = reference.json.get(key, _MISSING)
        values = [(run.json or {}).get(key, _MISSING) for run in ports]
        differing = [value for value in values if not _same(original, value, tolerance)]
        port = (differing or values)[0]
        comparisons.append(ResultComparison(key, _shown(original), _shown(port), not differing))
    return comparisons


def compare_timings(original_runs: list[Run], port_runs: list[Run], max_slowdown: float,
                    confidence: float = CONFIDENCE,
                    keys: list[str] | None = None) -> list[TimingComparison]:
    """Every timing key of the timed runs (warm-ups left out) judged by ``judge_timing``, the
    original's odd runs against its even runs as the same binary against itself. ``keys``: these
    timing keys only (default: every one either side reports)."""
    comparisons = []
    for key in _keys(original_runs, port_runs, "timing") if keys is None else keys:
        originals, ports = _values(original_runs, key), _values(port_runs, key)
        # the same binary against itself: the original's odd runs against its even runs
        halves = (originals[1::2], originals[0::2]) if len(originals) >= 4 else None
        comparisons.append(judge_timing(key, originals, ports, max_slowdown, confidence,
                                        spread=_spread(original_runs, key),
                                        runs=(len(originals), len(ports)), halves=halves))
    return comparisons


def _spread(runs: list[Run], key: str) -> float | None:
    """(max - min) / median of a timing over the timed runs; None with fewer than 3."""
    values = _values(runs, key)
    if len(values) < 3 or not statistics.median(values):
        return None
    return (max(values) - min(values)) / statistics.median(values)


def derived_figures(original_runs: list[Run], port_runs: list[Run]) -> list[DerivedFigure]:
    return [DerivedFigure(key, median(original_runs, key), median(port_runs, key))
            for key in _keys(original_runs, port_runs, "derived")]


def median(runs: list[Run], key: str) -> float | None:
    """Median of a numeric key over the timed runs (completed, no warm-up) that report it."""
    values = _values(runs, key)
    return statistics.median(values) if values else None


def _values(runs: list[Run], key: str) -> list[float]:
    """A numeric key's values over the timed runs (completed, no warm-up) that report it."""
    return [run.json[key] for run in runs if run.completed and not run.warmup and run.json
            and _is_number(run.json.get(key))]


def _keys(original_runs: list[Run], port_runs: list[Run], kind: str) -> list[str]:
    keys: list[str] = []
    for run in (*original_runs, *port_runs):
        if run.completed and run.json:
            keys += [key for key in run.json if key_kind(key) == kind and key not in keys]
    return keys


def _same(original: object, port: object, tolerance: float) -> bool:
    if original is _MISSING or port is _MISSING:
        return False
    return values_equal(original, port, tolerance)


def _shown(value: object) -> object:
    return None if value is _MISSING else value


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
