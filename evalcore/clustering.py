"""Automatic subgroups for logs that have none: k-means on per-example feature columns.

As in Fogliato et al. (2024), Section 4.1: cluster the examples' feature vectors (e.g. embeddings) with k-means,
choose the number of clusters by the silhouette score, then merge clusters that are too small into the nearest
larger one. Features are properties of the example, so each example is clustered once (its feature values averaged
over the models that list it), and every model's row of that example gets the same group.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.cluster import KMeans
from sklearn.metrics import silhouette_score

from .reading import EvalDataError
from .schema import LOG_ROLES

SILHOUETTE_SAMPLE = 5000


def feature_columns(log: pd.DataFrame) -> list[str]:
    """The numeric per-example feature columns of a canonical log (everything that is not a role)."""
    return [c for c in log.columns if c not in LOG_ROLES and pd.api.types.is_numeric_dtype(log[c])]


def auto_groups(
    log: pd.DataFrame,
    features: list[str] | None = None,
    max_clusters: int = 20,
    min_size: int = 20,
    seed: int = 0,
) -> pd.Series:
    """Group label ("cluster 01", ...) for every row of ``log``, from k-means on the examples' features.

    k runs over 2..``max_clusters`` (at most the number of examples - 1) and the k with the highest silhouette score
    (computed on at most 5,000 examples, seeded) wins; clusters with fewer than ``min_size`` examples are then merged
    into the cluster with the nearest centroid among those large enough. Features are standardised first.
    """
    columns = feature_columns(log) if features is None else list(features)
    if not columns:
        raise EvalDataError(
            "Automatic subgroups need numeric per-example feature columns (e.g. embeddings); this data has none. "
            "Add a 'group' column instead.")
    per_example = log.groupby("example_id", sort=True)[columns].mean()
    if per_example.isna().any().any():
        bad = per_example.columns[per_example.isna().any()].tolist()
        raise EvalDataError(f"Feature columns {', '.join(bad)} have missing values: fill them or leave them out.")
    if len(per_example) < 3:
        raise EvalDataError("Automatic subgroups need at least 3 examples.")
    x = per_example.to_numpy(dtype=float)
    spread = x.std(axis=0)
    x = (x - x.mean(axis=0)) / np.where(spread > 0, spread, 1.0)
    labels, centers = _best_kmeans(x, min(max_clusters, len(x) - 1), seed)
    labels = _merge_small(labels, centers, min_size)
    names = pd.Series(labels, index=per_example.index).map(lambda k: f"cluster {k + 1:02d}")
    return log["example_id"].map(names).rename("group")


def _best_kmeans(x: np.ndarray, k_max: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    best, best_score = None, -np.inf
    sample = min(SILHOUETTE_SAMPLE, len(x))
    for k in range(2, max(2, k_max) + 1):
        fit = KMeans(n_clusters=k, n_init=10, random_state=seed).fit(x)
        if len(np.unique(fit.labels_)) < 2:
            continue
        score = silhouette_score(x, fit.labels_, sample_size=sample, random_state=seed)
        if score > best_score:
            best, best_score = fit, score
    if best is None:
        raise EvalDataError("The feature columns do not separate the examples into clusters (all identical?).")
    return best.labels_, best.cluster_centers_


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
