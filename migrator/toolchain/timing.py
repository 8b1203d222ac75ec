"""The timing verdict of `rocmigrate validate` and `rocmigrate harness`: is a port slower than
its original, from every run time of each side?

A port is called slower (or faster) only when the difference is both significant and larger
than allowed. The test is Mann-Whitney's, on the logarithms of the times, so that it is about the
ratio port / original: the Hodges-Lehmann interval (the pairwise log differences' order
statistics that the exact null distribution of U picks) holds the true ratio with ``CONFIDENCE``
whatever the distribution of the run times, and is reproducible (no resampling). A port is
slower when the interval's lower end exceeds ``1 + max_slowdown`` and also what the original
shows against itself (its odd runs against its even runs, the same binary on the same machine):
identical binaries are not called slower because the machine drifted. With too few runs for any
interval at that confidence (fewer than 7 a side at 99.9%), a timing beyond the allowed ratio is
``undecided``, never slower.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from functools import lru_cache

CONFIDENCE = 0.999  # of the interval a timing verdict rests on
EXACT_LIMIT = 10_000  # runs original x port up to which U's null distribution is exact


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


def judge_timing(key: str, originals: list[float], ports: list[float], max_slowdown: float,
                 confidence: float = CONFIDENCE, *, spread: float | None,
                 runs: tuple[int, int], halves: tuple[list[float], list[float]] | None,
                 with_interval: bool = True, resolution: float = 0.0) -> TimingComparison:
    """The verdict on one timing from every time of each side: medians, their ratio, the
    ``confidence`` interval (none when not ``with_interval``: too few runs), Mann-Whitney's
    p-value, the threshold (the larger of ``1 + max_slowdown``, the original's ``halves``, its
    odd runs' times and its even runs', against each other, and ``resolution``, in the times'
    unit, over the original's median) and the flag (``timing_flag``)."""
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
    """``slower``: the ratio's interval lies above ``threshold``; ``faster``: below the mirror
    threshold (the smaller of ``1 - max_slowdown`` and its inverse); otherwise ``ok`` when the
    median ratio is within ``max_slowdown``, ``noise`` when it is not but the interval does not
    clear the threshold, ``undecided`` when there is no interval at all (too few runs)."""
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
