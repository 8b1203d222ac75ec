"""Running per-file work in worker processes (or in this one, for a handful of files)."""

from __future__ import annotations

import os
from typing import Callable, Iterator, TypeVar

T = TypeVar("T")
R = TypeVar("R")


def worker_count(jobs: int) -> int:
    """``jobs``, or one per CPU this process may use when it is 0."""
    return jobs or len(os.sched_getaffinity(0)) or 1


def map_in_workers(function: Callable[[T], R], work: list[T], jobs: int,
                   threshold: int) -> Iterator[R]:
    """Results of ``function`` over ``work`` in order; a process pool when there are ``jobs``
    workers and at least ``threshold`` items (a pool costs more than it saves below that)."""
    jobs = worker_count(jobs)
    if jobs <= 1 or len(work) < threshold:
        yield from map(function, work)
        return
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(max_workers=jobs)
    try:
        yield from pool.map(function, work, chunksize=max(1, min(32, len(work) // (jobs * 8))))
    finally:
        pool.shutdown(cancel_futures=True)

