"""The output contract of a validated program, and how an original and its port are compared.

A program prints one line of flat JSON on stdout, then ``PASS`` or ``FAIL`` last. Keys ending
``_ms`` are timings (compared by a test over the runs, below); keys ending ``_per_s`` or ``_x``
are derived figures (reported, not compared); ``result`` must be ``"PASS"``; every other key is a
result that must be identical (floats within a relative tolerance). The last stdout line that
parses as a JSON object counts. Without one, the whole stdout is the result.

Timings: a port is called slower (or faster) only when the difference is both significant and
larger than allowed. The test is Mann-Whitney's, on the logarithms of the times, so that it is
about the ratio port / original: the Hodges-Lehmann interval (the pairwise log differences'
order statistics that the exact null distribution of U picks) holds the true ratio with
``CONFIDENCE`` whatever the distribution of the run times, and is reproducible (no resampling).
A port is slower when the interval's lower end exceeds ``1 + max_slowdown`` and also what the
original shows against itself (its odd runs against its even runs, the same binary on the same
machine): identical binaries are not called slower because the machine drifted. With too few
runs for any interval at that confidence (fewer than 7 a side at 99.9%), a timing beyond the
allowed ratio is ``undecided``, never slower.
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass
from functools import lru_cache

STATUS_KEY = "result"
TIMING_SUFFIX = "_ms"
DERIVED_SUFFIXES = ("_per_s", "_x")
CONFIDENCE = 0.999  # of the interval a timing verdict rests on
EXACT_LIMIT = 10_000  # runs original x port up to which U's null distribution is exact
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
class TimingComparison:
    key: str
    original_ms: float | None  # median over the runs
    port_ms: float | None
    ratio: float | None  # port / original
    flag: str  # ok | slower | faster | noise | undecided | missing
    spread: float | None = None  # the original's own run-to-run spread: (max - min) / median
    # the interval of port / original the verdict rests on, at ``confidence`` (None: too few
    # runs); p_value: Mann-Whitney's, two-sided, for "both sides' times are one distribution"
    interval: tuple[float, float] | None = None
    confidence: float | None = None
    p_value: float | None = None
    same_binary: float | None = None  # the original's odd runs against its even runs, >= 1
    threshold: float | None = None  # the ratio the interval must clear to call a port slower
    runs: tuple[int, int] = (0, 0)  # timed runs that report the key: original, port

    @property
    def reason(self) -> str:
        """The flag in words, with the figures it rests on."""
        if self.flag == "missing":
            return f"{self.key}: missing on the {'port' if self.port_ms is None else 'original'}"
        ratio = f"port {self.ratio:.3f}x the original" if self.ratio is not None else \
            f"port {self.port_ms:.6g} ms, original {self.original_ms:.6g} ms"
        runs = f"{self.runs[0]} and {self.runs[1]} runs"
        if self.confidence is None:
            return f"{self.key}: {self.flag}: {ratio}; times of 0 ms: no ratio to test"
        if self.interval is None:
            return f"{self.key}: {self.flag} ({runs}): {ratio}; too few runs for an interval"
        low, high = self.interval
        return (f"{self.key}: {self.flag}: {ratio}, {self.confidence:.1%} interval "
                f"{low:.3f}-{high:.3f}x (threshold {self.threshold:.3f}x), p = "
                f"{self.p_value:.2g}, {runs}")


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
    """Every timing key of the timed runs (warm-ups left out): medians, their ratio, and a flag.
    ``slower``: the ratio's ``confidence`` interval lies above the threshold, the larger of
    ``1 + max_slowdown`` and the original's own odd-vs-even ratio; ``faster``: below the mirror
    threshold (the smaller of ``1 - max_slowdown`` and its inverse); otherwise ``ok`` when the
    median ratio is within ``max_slowdown``, ``noise`` when it is not but the interval does not
    clear the threshold, ``undecided`` when there are too few runs for an interval at all.
    ``keys``: these timing keys only (default: every one either side reports)."""
    comparisons = []
    for key in _keys(original_runs, port_runs, "timing") if keys is None else keys:
        originals, ports = _values(original_runs, key), _values(port_runs, key)
        # the same binary against itself: the original's odd runs against its even runs
        halves = (originals[1::2], originals[0::2]) if len(originals) >= 4 else None
        comparisons.append(judge_timing(key, originals, ports, max_slowdown, confidence,
                                        spread=_spread(original_runs, key),
                                        runs=(len(originals), len(ports)), halves=halves))
    return comparisons


def judge_timing(key: str, originals: list[float], ports: list[float], max_slowdown: float,
                 confidence: float = CONFIDENCE, *, spread: float | None,
                 runs: tuple[int, int], halves: tuple[list[float], list[float]] | None,
                 with_interval: bool = True, resolution: float = 0.0) -> TimingComparison:
    """The verdict on one timing from every time of each side (compare_timings): medians, their
    ratio, the ``confidence`` interval (none when not ``with_interval``: too few runs),
    Mann-Whitney's p-value, and the threshold, the larger of ``1 + max_slowdown``, the
    original's ``halves`` (its odd runs' times, its even runs') against each other, and
    ``resolution`` (in the times' unit) over the original's median."""
    original = statistics.median(originals) if originals else None
    port = statistics.median(ports) if ports else None
    ratio = port / original if original and port is not None else None
    comparison = TimingComparison(key, original, port, ratio, "missing", spread, runs=runs)
    if original is None or port is None:
        return comparison
    if min(originals + ports) <= 0:  # no ratio test on times of zero
        comparison.flag = "ok" if original == port else "undecided"
        return comparison
    comparison.interval = ratio_interval(originals, ports, confidence) if with_interval \
        else None
    comparison.confidence = confidence
    comparison.p_value = mann_whitney_p(originals, ports)
    itself = ratio_estimate(*halves) if halves is not None else None
    comparison.same_binary = max(itself, 1 / itself) if itself else None
    comparison.threshold = max(1 + max_slowdown, comparison.same_binary or 1,
                               1 + resolution / original)
    comparison.flag = timing_flag(ratio, comparison.interval, comparison.threshold,
                                  max_slowdown)
    return comparison


def timing_flag(ratio: float, interval: tuple[float, float] | None, threshold: float,
                max_slowdown: float) -> str:
    """slower | faster | ok | noise | undecided (see compare_timings)."""
    if interval is not None and interval[0] > threshold:
        return "slower"
    if interval is not None and interval[1] < min(1 - max_slowdown, 1 / threshold):
        return "faster"
    if 1 - max_slowdown <= ratio <= 1 + max_slowdown:
        return "ok"
    return "noise" if interval is not None else "undecided"


def ratio_interval(original: list[float], port: list[float],
                   confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """The Hodges-Lehmann ``confidence`` interval of the scale ratio port / original (times >
    0): the k-th smallest and k-th largest of the pairwise ratios, k from Mann-Whitney's null
    distribution (exact, or normal beyond EXACT_LIMIT pairs). None when the runs are too few for
    that confidence."""
    n, m = len(original), len(port)
    k = _rank_of_bound(n, m, (1 - confidence) / 2)
    if k == 0:
        return None
    differences = _log_differences(original, port)
    return math.exp(differences[k - 1]), math.exp(differences[n * m - k])


def ratio_estimate(original: list[float], port: list[float]) -> float | None:
    """The Hodges-Lehmann estimate of port / original: the median pairwise ratio."""
    if not original or not port:
        return None
    return math.exp(statistics.median(_log_differences(original, port)))


def runs_needed(confidence: float = CONFIDENCE) -> int:
    """The fewest runs a side for which ``ratio_interval`` gives an interval."""
    runs = 1
    while _rank_of_bound(runs, runs, (1 - confidence) / 2) == 0:
        runs += 1
    return runs


def mann_whitney_p(original: list[float], port: list[float]) -> float | None:
    """Two-sided p-value of Mann-Whitney's U (ties count half) for "both are one distribution";
    None without runs on a side."""
    n, m = len(original), len(port)
    if not n or not m:
        return None
    u = sum((p > o) + 0.5 * (p == o) for o in original for p in port)
    cdf = _u_cdf(n, m)
    low, high = cdf(math.floor(u)), 1 - cdf(math.ceil(u) - 1)
    return min(1.0, 2 * min(low, high))


def _log_differences(original: list[float], port: list[float]) -> list[float]:
    return sorted(math.log(p) - math.log(o) for o in original for p in port)


def _rank_of_bound(n: int, m: int, tail: float) -> int:
    """The largest k with P(U <= k - 1) <= ``tail`` under the null hypothesis (0: none)."""
    if not n or not m:
        return 0
    cdf, k = _u_cdf(n, m), 0
    while k < n * m and cdf(k) <= tail:
        k += 1
    return k


def _u_cdf(n: int, m: int):
    """u -> P(U <= u) for Mann-Whitney's U with ``n`` and ``m`` runs, no ties."""
    if n * m > EXACT_LIMIT:
        normal = statistics.NormalDist(n * m / 2, math.sqrt(n * m * (n + m + 1) / 12))
        return lambda u: normal.cdf(u + 0.5)
    cumulative = _u_cumulative(min(n, m), max(n, m))
    return lambda u: cumulative[min(u, n * m)] if u >= 0 else 0.0


@lru_cache(maxsize=64)
def _u_cumulative(n: int, m: int) -> tuple[float, ...]:
    """P(U <= u) for u = 0..n*m: U's counts are the coefficients of the Gaussian binomial
    [n+m choose n], the product of (1 - q^(m+i)) / (1 - q^i) over i = 1..n (exact integers)."""
    counts = [1] + [0] * (n * m)
    for i in range(1, n + 1):
        for u in range(n * m, m + i - 1, -1):  # times (1 - q^(m+i))
            counts[u] -= counts[u - m - i]
        for u in range(i, n * m + 1):  # divided by (1 - q^i)
            counts[u] += counts[u - i]
    total, running, cumulative = sum(counts), 0, []
    for count in counts:
        running += count
        cumulative.append(running / total)
    return tuple(cumulative)


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
