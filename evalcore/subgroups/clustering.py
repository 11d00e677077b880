"""Automatic subgroups for logs that have none: k-means on per-example feature columns.

As in Fogliato et al. (2024), Section 4.1: cluster the examples' feature vectors (e.g. embeddings) with k-means,
choose the number of clusters by the silhouette score, then merge clusters that are too small into the nearest
larger one. Features are properties of the example, so each example is clustered once (its feature values averaged
over the models that list it), and every model's row of that example gets the same group.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
from sklearn.cluster import KMeans
from sklearn.metrics import silhouette_score
from threadpoolctl import threadpool_limits

from evalcore.data.features import default_features, fill_missing
from evalcore.data.reading import EvalDataError

#: Examples on which k is chosen (a seeded subsample when there are more).
SEARCH_SAMPLE = 2000
#: k-means restarts per k during the search; the final fit starts from the chosen fit's centres.
SEARCH_N_INIT = 3


def auto_groups(
    log: pd.DataFrame,
    features: list[str] | None = None,
    max_clusters: int = 20,
    min_size: int = 20,
    seed: int = 0,
    progress: Callable[[float], None] | None = None,
) -> pd.Series:
    """Group label ("cluster 01", ...) for every row of ``log``, from k-means on the examples' features.

    ``features`` None uses :func:`evalcore.data.features.default_features`. Features are standardised; an example's
    value is its mean over the models that list it (missing values skipped; an example with none gets the
    feature's mean, :func:`evalcore.data.features.fill_missing`). k runs over 2..``max_clusters`` (at most the
    subsample's number of distinct points, and its size - 1) on a seeded subsample of at most ``SEARCH_SAMPLE``
    examples (k-means with ``SEARCH_N_INIT`` restarts each) and the k with
    the highest silhouette score on that subsample wins; k-means with that k is then refined on all examples
    from the subsample's centres, and clusters with fewer than ``min_size`` examples are merged into the cluster
    with the nearest centroid among those large enough. Identical output for identical ``seed``.
    ``progress(fraction)`` is called after each k and at the end.
    """
    columns = default_features(log) if features is None else list(features)
    if not columns:
        raise EvalDataError(
            "Automatic subgroups need numeric per-example feature columns (e.g. embeddings); this data has none "
            "by default. Choose feature columns or add a 'group' column instead.")
    per_example = log.groupby("example_id", sort=True)[columns].mean()
    empty = per_example.columns[per_example.isna().all()].tolist()
    if empty:
        raise EvalDataError(f"Feature columns {', '.join(empty)} have no values: leave them out.")
    if len(per_example) < 3:
        raise EvalDataError("Automatic subgroups need at least 3 examples.")
    x = fill_missing(per_example).to_numpy(dtype=float)
    spread = x.std(axis=0)
    x = (x - x.mean(axis=0)) / np.where(spread > 0, spread, 1.0)
    # one thread: k-means on a few thousand points is too little work per OpenMP thread, and on a busy 2-core
    # machine threads waiting for each other made each fit 10-50 times slower (measured)
    with threadpool_limits(limits=1):
        labels, centers = _best_kmeans(x, max_clusters, seed, progress or (lambda fraction: None))
    labels = _merge_small(labels, centers, min_size)
    names = pd.Series(labels, index=per_example.index).map(lambda k: f"cluster {k + 1:02d}")
    return log["example_id"].map(names).rename("group")


def _best_kmeans(x: np.ndarray, max_clusters: int, seed: int,
                 progress: Callable[[float], None]) -> tuple[np.ndarray, np.ndarray]:
    """k by silhouette on a seeded subsample, then k-means on all of ``x`` from the winner's centres."""
    rng = np.random.default_rng(seed)
    sample = x if len(x) <= SEARCH_SAMPLE else x[np.sort(rng.choice(len(x), SEARCH_SAMPLE, replace=False))]
    distinct = len(np.unique(sample, axis=0))  # more clusters than distinct points cannot be formed
    ks = range(2, max(2, min(max_clusters, len(sample) - 1, distinct)) + 1)
    best, best_score = None, -np.inf
    for i, k in enumerate(ks):
        fit = KMeans(n_clusters=k, n_init=SEARCH_N_INIT, random_state=seed).fit(sample)
        if len(np.unique(fit.labels_)) >= 2:
            score = silhouette_score(sample, fit.labels_)
            if score > best_score:
                best, best_score = fit, score
        progress((i + 1) / (len(ks) + 1))
    if best is None:
        raise EvalDataError("The feature columns do not separate the examples into clusters (all identical?).")
    final = KMeans(n_clusters=best.n_clusters, init=best.cluster_centers_, n_init=1, random_state=seed).fit(x)
    progress(1.0)
    return final.labels_, final.cluster_centers_


def _merge_small(labels: np.ndarray, centers: np.ndarray, min_size: int) -> np.ndarray:
    """Relabel clusters smaller than ``min_size`` to the nearest large cluster; renumber 0..K-1 by size."""
    sizes = np.bincount(labels, minlength=len(centers))
    large = np.flatnonzero(sizes >= min_size)
    if len(large) == 0:
        large = np.array([int(np.argmax(sizes))])
    target = np.arange(len(centers))
    for k in np.flatnonzero(sizes < min_size):
        if k not in large:
            target[k] = large[np.argmin(((centers[large] - centers[k]) ** 2).sum(axis=1))]
    merged = target[labels]
    order = np.argsort(-np.bincount(merged, minlength=len(centers)), kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return rank[merged]
