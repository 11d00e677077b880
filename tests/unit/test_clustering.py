"""Automatic subgroups: k-means on example features, k by silhouette, small clusters merged."""

import numpy as np
import pandas as pd
import pytest

from evalcore.clustering import auto_groups, feature_columns
from evalcore.reading import EvalDataError


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
    assert feature_columns(log) == ["emb_0", "emb_1"]
    with pytest.raises(EvalDataError, match="need numeric per-example feature columns"):
        auto_groups(log.drop(columns=["emb_0", "emb_1"]))
    with pytest.raises(EvalDataError, match="missing values"):
        auto_groups(log.assign(emb_0=np.where(log["example_id"] == "e003", np.nan, log["emb_0"])))


def test_seeded_and_deterministic():
    log, _ = blobs_log(seed=3)
    pd.testing.assert_series_equal(auto_groups(log, max_clusters=6, seed=1), auto_groups(log, max_clusters=6, seed=1))
