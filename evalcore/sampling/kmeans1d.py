"""Optimal one-dimensional k-means (exact dynamic programming), used to stratify on a proxy.

Method: "A Framework for Efficient Model Evaluation through Stratification, Sampling, and Estimation"
(``../shared/papers/stratified-sampling-evaluation.txt``), Section 4.2: by Proposition 2 / Corollary 3 the strata
that minimise the MSE (4) of the Horvitz-Thompson estimator under proportional allocation are the k-means
clusters of the proxy ``Zhat``, i.e. the partition minimising the within-strata sum of squares
``sum_h sum_{i in D_h} (Zhat_i - mean_h Zhat)^2`` (the first term of (7)). In one dimension this problem is solved
exactly rather than by Lloyd iterations with random restarts.

Problem. Values ``x_1..x_N``; choose ``K`` clusters minimising ``WCSS = sum_k sum_{i in C_k} (x_i - m_k)^2`` with
``m_k`` the cluster mean. In 1-D an optimal partition consists of *contiguous* runs of the sorted values (an
exchange argument), and equal values are never separated. So the data are sorted and collapsed into the ``U``
distinct values ``u_1 < ... < u_U`` with weights ``w_j`` (their counts).

Segment cost from prefix sums ``P0 = cumsum(w)``, ``P1 = cumsum(w u)``, ``P2 = cumsum(w u^2)`` (values centred
on their mean first, for accuracy): for the half-open run ``(i, j]``,
``cost(i, j) = (P2_j - P2_i) - (P1_j - P1_i)^2 / (P0_j - P0_i)``.

Dynamic programme: ``D[1][j] = cost(0, j)``, ``D[h][j] = min_{h-1 <= i < j} D[h-1][i] + cost(i, j)``, answer
``D[K][U]``. The cost satisfies the quadrangle (Monge) inequality, so the leftmost optimal split ``opt[h][j]`` is
non-decreasing in ``j``; each layer is computed by divide and conquer (evaluate the middle ``j`` of a range, split
the candidate range of ``i`` at its optimum). All segments of one recursion depth are evaluated together as flat
numpy arrays, so a layer costs ``O(U log U)`` arithmetic in about ``log2(U)`` vectorised passes. The split points
are then backtracked.

Large inputs. When ``U > exact_limit`` the distinct values are grouped into ``exact_limit`` contiguous bins of
about equal total weight and the same exact programme runs on the bins (bin costs are exact, from prefix sums of
the full data): the result is the *exact optimum among partitions whose boundaries fall between bins*. It is then
refined by 1-D Lloyd steps on contiguous intervals (move every boundary to the midpoint of the two adjacent
cluster means; the WCSS never increases) until no boundary moves (at most 200 steps). The refined partition is a
Lloyd fixed point very close to the optimum but is **not guaranteed** globally optimal: ``exact`` is False then.

Public API
----------
``kmeans_1d(values, n_clusters, exact_limit=65536) -> KMeans1D`` labels (0 = lowest values), centers
(ascending), wcss, exact.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalcore.data.reading import EvalDataError, listed

__all__ = ["KMeans1D", "kmeans_1d"]

_LLOYD_MAX = 200


@dataclass(frozen=True)
class KMeans1D:
    """Result of :func:`kmeans_1d`.

    ``labels`` (int64, one per input value) number the clusters by value: cluster 0 holds the lowest values;
    ``centers`` are the cluster means in ascending order; ``wcss`` is the within-cluster sum of squares; ``exact``
    is True when the partition is the proven optimum (exact programme), False after the binned approximation.
    ``len(centers)`` may be smaller than requested when there are fewer distinct values than clusters.
    """

    labels: np.ndarray
    centers: np.ndarray
    wcss: float
    exact: bool


def _cost(c0: np.ndarray, c1: np.ndarray, c2: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Within-run sum of squares of the runs (i, j] from prefix sums (weights, weighted sum, weighted squares)."""
    w = c0[j] - c0[i]
    s = c1[j] - c1[i]
    return (c2[j] - c2[i]) - s * s / w


def _layer(a: np.ndarray, c0: np.ndarray, c1: np.ndarray, c2: np.ndarray, h: int, jmax: int):
    """Layer ``h`` (0-based: h+1 clusters) of the programme for j in [h+1, jmax], by vectorised divide and conquer.

    ``a[i] = prev[i] - P2_i`` for i = 0..M, where ``prev[i]`` is the optimal cost of the first ``i`` points in
    ``h`` clusters (valid for i >= h); then
    ``prev[i] + cost(i, j) = (prev_i - P2_i) - (P1_j - P1_i)^2 / (P0_j - P0_i) + P2_j`` and the last term does not
    depend on ``i``. Returns ``cur`` and ``opt`` (length M+1; entries outside [h+1, jmax] are inf / -1). Each pass
    evaluates, for every open range of ``j``, its middle ``j`` against all candidate splits ``i`` in that range's
    window; the windows of one pass overlap only at their ends, so a pass costs O(M) and there are about
    log2(M) passes.
    """
    m = a.size - 1
    cur = np.full(m + 1, np.inf)
    opt = np.full(m + 1, -1, dtype=np.int64)
    lo = np.array([h + 1], dtype=np.int64)
    hi = np.array([jmax], dtype=np.int64)
    olo = np.array([h], dtype=np.int64)
    ohi = np.array([jmax - 1], dtype=np.int64)
    while lo.size:
        mid = (lo + hi) // 2
        lens = np.minimum(ohi, mid - 1) - olo + 1
        ends = np.cumsum(lens)
        starts = ends - lens
        total = int(ends[-1])
        flat = np.arange(total, dtype=np.int64)
        cand = flat - np.repeat(starts - olo, lens)
        jj = np.repeat(mid, lens)
        s = np.take(c1, jj) - np.take(c1, cand)
        vals = np.take(a, cand) - s * s / (np.take(c0, jj) - np.take(c0, cand))
        segmin = np.minimum.reduceat(vals, starts)
        pos = np.where(vals <= np.repeat(segmin, lens), flat, total)
        best = cand[np.minimum.reduceat(pos, starts)]
        cur[mid] = segmin + c2[mid]
        opt[mid] = best
        left = lo <= mid - 1
        right = mid + 1 <= hi
        lo = np.concatenate([lo[left], (mid + 1)[right]])
        hi = np.concatenate([(mid - 1)[left], hi[right]])
        olo, ohi = np.concatenate([olo[left], best[right]]), np.concatenate([best[left], ohi[right]])
    return cur, opt


def _optimal_bounds(c0: np.ndarray, c1: np.ndarray, c2: np.ndarray, k: int) -> np.ndarray:
    """Exact optimal run boundaries ``0 = b_0 < b_1 < ... < b_k = M`` over the M points given by prefix sums."""
    m = len(c0) - 1
    if k == 1:
        return np.array([0, m], dtype=np.int64)
    idx = np.arange(m + 1, dtype=np.int64)
    prev = np.full(m + 1, np.inf)
    prev[1:] = _cost(c0, c1, c2, np.zeros(m, dtype=np.int64), idx[1:])
    opts = []
    for h in range(1, k - 1):
        prev, opt = _layer(prev - c2, c0, c1, c2, h, m - (k - 1 - h))
        opts.append(opt)
    cand = idx[k - 1 : m]
    vals = prev[cand] + _cost(c0, c1, c2, cand, np.full(cand.size, m))
    bounds = [m, int(cand[int(np.argmin(vals))])]
    for opt in reversed(opts):
        bounds.append(int(opt[bounds[-1]]))
    bounds.append(0)
    return np.array(bounds[::-1], dtype=np.int64)


def _lloyd_refine(u: np.ndarray, c0, c1, bounds: np.ndarray) -> np.ndarray:
    """1-D Lloyd on contiguous runs of the sorted distinct values ``u``: boundaries to midpoints of adjacent means."""
    for _ in range(_LLOYD_MAX):
        w = np.diff(c0[bounds])
        means = np.diff(c1[bounds]) / w
        mids = 0.5 * (means[:-1] + means[1:])
        inner = np.searchsorted(u, mids, side="right")
        new = np.concatenate([[0], inner, [len(u)]]).astype(np.int64)
        if np.any(np.diff(new) <= 0) or np.array_equal(new, bounds):
            break  # converged, or a step would empty a cluster: keep the last valid partition
        bounds = new
    return bounds


def kmeans_1d(values, n_clusters: int, exact_limit: int = 65536) -> KMeans1D:
    """Optimal 1-D k-means of ``values`` into ``n_clusters`` contiguous clusters (Corollary 3, Section 4.2).

    Minimises ``WCSS = sum_k sum_{i in C_k} (x_i - m_k)^2`` (the within-strata sum of squares in (7)) exactly by
    dynamic programming over the ``U`` distinct values (see the module docstring) when ``U <= exact_limit``;
    otherwise exactly over ``exact_limit`` equal-weight bins followed by 1-D Lloyd refinement (``exact=False``:
    a near-optimal fixed point, not a proven optimum). Equal values always share a cluster. With fewer distinct
    values than ``n_clusters``, one cluster per distinct value is returned (fewer clusters than asked).

    Raises ``ValueError`` for ``n_clusters < 1`` or ``exact_limit < 2`` (programmer errors) and
    :class:`EvalDataError` for empty input or non-finite values (naming how many and where).
    """
    if int(n_clusters) != n_clusters or n_clusters < 1:
        raise ValueError(f"n_clusters must be a whole number >= 1, got {n_clusters!r}.")
    if int(exact_limit) != exact_limit or exact_limit < 2:
        raise ValueError(f"exact_limit must be a whole number >= 2, got {exact_limit!r}.")
    x = np.asarray(values, dtype=float).ravel()
    if x.size == 0:
        raise EvalDataError("No values to cluster: the proxy column is empty.")
    finite = np.isfinite(x)
    if not finite.all():
        bad = np.flatnonzero(~finite)
        raise EvalDataError(
            f"{bad.size} value(s) to cluster are missing or infinite (positions {listed(bad)}): fill or "
            "drop them before stratifying."
        )
    srt = np.sort(x, kind="stable")
    first = np.r_[True, srt[1:] != srt[:-1]]
    starts = np.flatnonzero(first)
    u = srt[starts]
    w = np.diff(np.r_[starts, srt.size]).astype(float)
    n_unique = u.size
    k = int(min(n_clusters, n_unique))

    shift = float(np.dot(w, u) / x.size)
    uc = u - shift
    c0 = np.r_[0.0, np.cumsum(w)]
    c1 = np.r_[0.0, np.cumsum(w * uc)]
    c2 = np.r_[0.0, np.cumsum(w * uc * uc)]

    if k == n_unique:
        bounds = np.arange(n_unique + 1, dtype=np.int64)
        exact = True
    elif n_unique <= exact_limit:
        bounds = _optimal_bounds(c0, c1, c2, k)
        exact = True
    else:
        # bins of ~equal total weight; edges are indices into the distinct values (strictly increasing)
        targets = c0[-1] * np.arange(1, exact_limit) / exact_limit
        inner = np.searchsorted(c0[1:], targets, side="left") + 1
        edges = np.unique(np.concatenate([[0], inner, [n_unique]])).astype(np.int64)
        bin_bounds = _optimal_bounds(c0[edges], c1[edges], c2[edges], k)
        bounds = _lloyd_refine(uc, c0, c1, edges[bin_bounds])
        exact = False

    sizes = np.diff(bounds)
    centers_c = np.diff(c1[bounds]) / np.diff(c0[bounds])
    lab_u = np.repeat(np.arange(k), sizes)
    wcss = float(np.dot(w, (uc - centers_c[lab_u]) ** 2))
    labels = np.searchsorted(u[bounds[1:-1]], x, side="right").astype(np.int64)
    return KMeans1D(labels=labels, centers=centers_c + shift, wcss=wcss, exact=exact)


def kmeans_1d_binned(counts, sums, sums_sq, n_clusters: int) -> np.ndarray:
    """Optimal 1-D k-means of values known only through ordered bins (a fine histogram computed where the data is
    stored): the boundaries ``0 = b_0 < ... < b_k`` (indices into the non-empty bins, in order) that minimise the
    values' WCSS among clusterings whose boundaries fall between bins. The segment costs are exact, from the bins'
    counts, sums and sums of squares (``SSE = Σx² - (Σx)²/n``, the same prefix-sum DP as :func:`kmeans_1d`). With
    one distinct value per bin this is :func:`kmeans_1d`'s optimum. Bins must be non-empty."""
    w = np.asarray(counts, dtype=float)
    if w.size == 0 or (w <= 0).any():
        raise ValueError("kmeans_1d_binned needs non-empty bins")
    shift = float(np.sum(sums) / w.sum())
    c0 = np.r_[0.0, np.cumsum(w)]
    c1 = np.r_[0.0, np.cumsum(np.asarray(sums, dtype=float) - shift * w)]
    centred_sq = np.asarray(sums_sq, dtype=float) - 2 * shift * np.asarray(sums, dtype=float) + shift**2 * w
    c2 = np.r_[0.0, np.cumsum(centred_sq)]
    k = int(min(n_clusters, w.size))
    if k == w.size:
        return np.arange(w.size + 1, dtype=np.int64)
    return _optimal_bounds(c0, c1, c2, k)
