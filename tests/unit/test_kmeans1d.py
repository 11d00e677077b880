"""evalcore.sampling.kmeans1d: exact 1-D k-means (Section 4.2, Corollary 3 of the stratified-sampling paper)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from sklearn.cluster import KMeans

from evalcore.sampling.kmeans1d import kmeans_1d
from evalcore.data.reading import EvalDataError


def _brute_force(x: np.ndarray, k: int) -> float:
    """Minimum WCSS over all partitions of the sorted data into k contiguous non-empty runs."""
    s = np.sort(x)
    best = np.inf
    for cuts in itertools.combinations(range(1, s.size), k - 1):
        b = (0,) + cuts + (s.size,)
        best = min(best, sum(float(((s[b[i] : b[i + 1]] - s[b[i] : b[i + 1]].mean()) ** 2).sum()) for i in range(k)))
    return best


def _wcss(x, labels):
    return float(sum(((x[labels == c] - x[labels == c].mean()) ** 2).sum() for c in np.unique(labels)))


def _check_structure(x, r):
    k = r.centers.size
    assert r.labels.dtype == np.int64
    assert set(np.unique(r.labels)) == set(range(k))
    assert np.all(np.diff(r.centers) > 0)
    # ordered by value: every value of cluster c is below every value of cluster c+1
    for c in range(k - 1):
        assert x[r.labels == c].max() < x[r.labels == c + 1].min()
    # duplicates never split
    for v in np.unique(x):
        assert np.unique(r.labels[x == v]).size == 1
    assert r.wcss == pytest.approx(_wcss(x, r.labels), abs=1e-9, rel=1e-9)


@pytest.mark.parametrize("seed", range(40))
def test_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 13))
    x = rng.integers(0, 5, n).astype(float) if seed % 3 == 0 else np.round(rng.random(n), 1 + seed % 2)
    for k in range(1, 5):
        r = kmeans_1d(x, k)
        kk = min(k, np.unique(x).size)
        assert r.centers.size == kk
        assert r.exact
        assert r.wcss == pytest.approx(_brute_force(x, kk), abs=1e-9)
        _check_structure(x, r)


def _datasets():
    rng = np.random.default_rng(7)
    n = 3000
    return {
        "uniform": rng.random(n),
        "beta51": rng.beta(5, 1, n),
        "bimodal": np.concatenate([rng.normal(0, 1, n // 2), rng.normal(6, 0.5, n - n // 2)]),
    }


@pytest.mark.parametrize("name", ["uniform", "beta51", "bimodal"])
@pytest.mark.parametrize("k", [3, 10])
def test_never_worse_than_sklearn_exact(name, k):
    x = _datasets()[name]
    r = kmeans_1d(x, k)
    assert r.exact
    sk = KMeans(n_clusters=k, n_init=10, random_state=0).fit(x[:, None])
    assert r.wcss <= sk.inertia_ * (1 + 1e-9)
    _check_structure(x, r)


@pytest.mark.parametrize("name", ["uniform", "beta51", "bimodal"])
def test_binned_path_never_worse_than_sklearn(name):
    rng = np.random.default_rng(3)
    x = {"uniform": rng.random(5000), "beta51": rng.beta(5, 1, 5000),
         "bimodal": np.concatenate([rng.normal(0, 1, 2500), rng.normal(6, 0.5, 2500)])}[name]
    r = kmeans_1d(x, 8, exact_limit=64)
    assert not r.exact
    sk = KMeans(n_clusters=8, n_init=10, random_state=0).fit(x[:, None])
    assert r.wcss <= sk.inertia_ * (1 + 1e-9)
    _check_structure(x, r)
    # a Lloyd fixed point near (not necessarily at) the exact optimum
    assert kmeans_1d(x, 8).wcss <= r.wcss <= kmeans_1d(x, 8).wcss * (1 + 2e-3)


def test_binned_path_with_duplicates():
    rng = np.random.default_rng(5)
    x = np.round(rng.beta(2, 2, 5000), 3)
    r = kmeans_1d(x, 6, exact_limit=64)
    _check_structure(x, r)
    assert r.wcss <= kmeans_1d(x, 6).wcss * (1 + 2e-3)


def test_labels_follow_input_order():
    x = np.array([0.9, 0.1, 0.5, 0.11, 0.92, 0.52])
    r = kmeans_1d(x, 3)
    assert r.labels.tolist() == [2, 0, 1, 0, 2, 1]
    assert r.centers == pytest.approx([0.105, 0.51, 0.91])


def test_fewer_distinct_values_than_clusters():
    x = np.array([1.0, 1.0, 2.0, 2.0, 2.0, 5.0])
    r = kmeans_1d(x, 10)
    assert r.centers.tolist() == [1.0, 2.0, 5.0]
    assert r.labels.tolist() == [0, 0, 1, 1, 1, 2]
    assert r.wcss == 0.0
    single = kmeans_1d(np.full(4, 0.3), 3)
    assert single.centers.size == 1 and single.labels.tolist() == [0, 0, 0, 0]


def test_errors():
    with pytest.raises(ValueError):
        kmeans_1d([1.0, 2.0], 0)
    with pytest.raises(EvalDataError, match="2 value"):
        kmeans_1d([1.0, np.nan, 2.0, np.inf], 2)
    with pytest.raises(EvalDataError):
        kmeans_1d([], 2)
