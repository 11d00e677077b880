"""Automatic subgroups: k-means on example features, k by silhouette, small clusters merged."""

import numpy as np
import pandas as pd
import pytest

from sklearn.metrics import adjusted_rand_score

from evalcore.subgroups import clustering
from evalcore.subgroups.clustering import auto_groups
from evalcore.data.features import default_features
from evalcore.data.reading import EvalDataError


def blobs_log(sizes=(60, 40, 30), n_models=2, seed=0, extra_far=0):
    """Examples in well-separated 2-D blobs (+ optional tiny far-away blob), listed once per model."""
    rng = np.random.default_rng(seed)
    centers = [(0, 0), (10, 0), (0, 10)]
    points, truth = [], []
    for k, (size, c) in enumerate(zip(sizes, centers)):
        points.append(rng.normal(c, 0.5, size=(size, 2)))
        truth += [k] * size
    if extra_far:
        points.append(rng.normal((10, 10), 0.5, size=(extra_far, 2)))
        truth += [3] * extra_far
    xy = np.vstack(points)
    ids = [f"e{i:03d}" for i in range(len(xy))]
    rows = [pd.DataFrame({"model": f"m{m}", "example_id": ids, "emb_0": xy[:, 0], "emb_1": xy[:, 1],
                          "correct": 1.0, "confidence": rng.random(len(xy))}) for m in range(n_models)]
    return pd.concat(rows, ignore_index=True), pd.Series(truth, index=ids)


def test_recovers_separated_blobs_and_labels_every_model_alike():
    log, truth = blobs_log()
    groups = auto_groups(log, max_clusters=6, min_size=5)
    assert groups.index.equals(log.index)
    first = groups[log["model"] == "m0"].to_numpy()
    assert (first == groups[log["model"] == "m1"].to_numpy()).all()
    assert len(set(first)) == 3
    # each blob is exactly one cluster, numbered by size: the 60-blob is cluster 01
    per_blob = pd.crosstab(truth.to_numpy(), first)
    assert (per_blob.gt(0).sum(axis=1) == 1).all()
    assert set(first[truth.to_numpy() == 0]) == {"cluster 01"}


def test_tiny_cluster_is_merged_into_the_nearest_large_one():
    log, truth = blobs_log(sizes=(60, 40, 30), extra_far=4)
    groups = auto_groups(log, max_clusters=6, min_size=10)
    first = groups[log["model"] == "m0"].to_numpy()
    tiny = set(first[truth.to_numpy() == 3])
    assert len(tiny) == 1 and list(first).count(next(iter(tiny))) > 4  # merged, not alone
    assert len(set(first)) <= 3


def test_confidence_is_not_a_feature_and_errors_are_clear():
    log, _ = blobs_log()
    assert default_features(log) == ["emb_0", "emb_1"]
    with pytest.raises(EvalDataError, match="need numeric per-example feature columns"):
        auto_groups(log.drop(columns=["emb_0", "emb_1"]))
    with pytest.raises(EvalDataError, match="emb_0 have no values"):
        auto_groups(log.assign(emb_0=np.nan), features=["emb_0", "emb_1"])


def test_an_example_without_a_value_gets_the_feature_mean():
    """e003 (blob 0, near (0, 0)) loses emb_0 on every model: filled with the mean of emb_0 (about 3.9, between
    the blobs at 0 and 10), it still has emb_1 ~ 0 and joins the blob whose emb_0 is nearest that (0, 0 or 10);
    one model's missing value alone is skipped by the per-example mean and changes nothing."""
    log, truth = blobs_log()
    one = log.assign(emb_0=np.where((log["example_id"] == "e003") & (log["model"] == "m0"), np.nan, log["emb_0"]))
    pd.testing.assert_series_equal(auto_groups(one, max_clusters=6, min_size=5),
                                   auto_groups(log, max_clusters=6, min_size=5))
    both = log.assign(emb_0=np.where(log["example_id"] == "e003", np.nan, log["emb_0"]))
    groups = auto_groups(both, max_clusters=6, min_size=5)
    first = groups[both["model"] == "m0"].set_axis(truth.index)
    assert groups.notna().all() and first.nunique() == 3
    assert first["e003"] == first[truth == 0].drop("e003").mode()[0]


def test_seeded_and_deterministic():
    log, _ = blobs_log(seed=3)
    pd.testing.assert_series_equal(auto_groups(log, max_clusters=6, seed=1), auto_groups(log, max_clusters=6, seed=1))


def planted_log(n_examples=6000, seed=0):
    """6,000 examples (more than the search subsample) in 4 well-separated 3-D blobs of unequal size, 2 models."""
    rng = np.random.default_rng(seed)
    truth = rng.choice(4, size=n_examples, p=[0.4, 0.3, 0.2, 0.1])
    centers = np.array([[0, 0, 0], [8, 0, 0], [0, 8, 0], [0, 0, 8]])
    xyz = centers[truth] + rng.normal(0, 1, size=(n_examples, 3))
    ids = [f"e{i:05d}" for i in range(n_examples)]
    rows = [pd.DataFrame({"model": m, "example_id": ids, "f0": xyz[:, 0], "f1": xyz[:, 1], "f2": xyz[:, 2],
                          "correct": rng.integers(0, 2, n_examples).astype(float)}) for m in ("a", "b")]
    return pd.concat(rows, ignore_index=True), truth


def test_subsample_search_recovers_planted_clusters_deterministically():
    log, truth = planted_log()
    assert len(truth) > clustering.SEARCH_SAMPLE
    fractions = []
    groups = auto_groups(log, max_clusters=8, seed=5, progress=fractions.append)
    first = groups[log["model"] == "a"].to_numpy()
    assert groups[log["model"] == "b"].tolist() == first.tolist()
    assert len(set(first)) == 4
    assert adjusted_rand_score(truth, first) > 0.99
    assert set(first[truth == 0]) == {"cluster 01"}  # the largest blob (40%) is cluster 01
    # progress: once per k = 2..8 and once at the end, increasing to 1
    assert len(fractions) == 8 and fractions[-1] == 1.0 and fractions == sorted(fractions)
    pd.testing.assert_series_equal(groups, auto_groups(log, max_clusters=8, seed=5))
    other = auto_groups(log, max_clusters=8, seed=6)[log["model"] == "a"].to_numpy()
    assert adjusted_rand_score(truth, other) > 0.99
