"""Seeded, ordered parallel map for Monte Carlo studies (threads; results independent of the number of workers).

Work is cut into fixed units by the caller; unit ``i`` gets its own random stream, the ``i``-th child of
``numpy.random.SeedSequence(seed)``, so results depend only on ``seed`` and the units, never on ``n_jobs`` or on the
order in which threads finish. numpy releases the GIL in its vectorised kernels, so threads use all cores without
copying the data to worker processes.
"""

from __future__ import annotations

import os
from typing import Any, Callable

import numpy as np


def seeded_map(fn: Callable[[int, np.random.Generator], Any], n_units: int, seed: int, n_jobs: int = -1,
               progress: Callable[[float], None] | None = None) -> list[Any]:
    """``[fn(i, rng_i) for i in range(n_units)]`` run on ``n_jobs`` threads (-1: all cores), in order.

    ``rng_i = numpy.random.default_rng(SeedSequence(seed).spawn(n_units)[i])``; ``progress(fraction)`` is called
    as units finish.
    """
    from joblib import Parallel, delayed

    streams = np.random.SeedSequence(seed).spawn(n_units)
    workers = (os.cpu_count() or 1) if n_jobs in (-1, None) else max(int(n_jobs), 1)
    results: list[Any] = []
    gen = Parallel(n_jobs=workers, prefer="threads", return_as="generator")(
        delayed(fn)(i, np.random.default_rng(streams[i])) for i in range(n_units))
    for res in gen:
        results.append(res)
        if progress is not None:
            progress(len(results) / n_units)
    return results


def random_subsets(rng: np.random.Generator, size: int, k: int, reps: int) -> np.ndarray:
    """(reps, k) positions in 0..size-1, each row a uniform random k-subset (without replacement)."""
    if k == size:
        return np.broadcast_to(np.arange(size), (reps, size))
    if 4 * k >= size:
        keys = rng.random((reps, size))
        return np.argpartition(keys, k - 1, axis=1)[:, :k]
    # sequential sampling by rejection: the first k distinct values of iid uniform draws are a uniform k-subset
    m = k + int(2 * k * k / size) + 16
    out = np.empty((reps, k), dtype=np.int64)
    todo = np.arange(reps)
    while todo.size:
        draws = rng.integers(0, size, (todo.size, m))
        order = np.argsort(draws, axis=1, kind="stable")
        srt = np.take_along_axis(draws, order, axis=1)
        dup_sorted = np.zeros_like(srt, dtype=bool)
        dup_sorted[:, 1:] = srt[:, 1:] == srt[:, :-1]
        dup = np.empty_like(dup_sorted)
        np.put_along_axis(dup, order, dup_sorted, axis=1)
        keep = ~dup
        ok = keep.sum(axis=1) >= k
        rows = np.flatnonzero(ok)
        if rows.size:
            kk = keep[rows] & (np.cumsum(keep[rows], axis=1) <= k)
            out[todo[rows]] = draws[rows][kk].reshape(rows.size, k)
        todo = todo[~ok]
        m = m * 2
    return out
