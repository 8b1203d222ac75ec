"""Running per-file work in worker processes (or in this one, for a handful of files)."""

from __future__ import annotations

import gc
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

    # The objects alive now (the engine, its tables and rules: most of the heap) are inherited
    # by the forked workers: frozen, no worker's collector traverses them (a full collection
    # would, touching and so copying every page fork shares), nor does this process's.
    gc.freeze()
    pool = ProcessPoolExecutor(max_workers=jobs)
    try:
        # chunks of at most 8 items: a worker left alone with the last chunk idles the others
        # for its length (32 files of API-dense code held one of two workers 0.2 s)
        yield from pool.map(function, work, chunksize=max(1, min(8, len(work) // (jobs * 8))))
    finally:
        pool.shutdown(cancel_futures=True)
        gc.unfreeze()

