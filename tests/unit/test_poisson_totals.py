"""The replicated totals of the paired Poisson bootstrap (:func:`evalcore.engine.poisson.replicate_totals`) against
the definition, W (n_boot x buckets) @ S (buckets x cells), on bucket sums with repeated columns (models that
scored the same examples), text keys as strings or categoricals (as :func:`bucket_sums` returns them), cells
absent from the sums, and on the sparse path: with whole-number sums the totals are exactly the same numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalcore.engine import poisson
from evalcore.engine.poisson import BUCKETS, bucket_weights, replicate_totals


def _sums(seed: int = 0) -> tuple[pd.DataFrame, pd.MultiIndex]:
    """Bucket sums of 3 models x 4 tasks (model "c" has no row in task "t3"); models a and b share their row counts."""
    rng = np.random.default_rng(seed)
    rows = []
    for task in ("t0", "t1", "t2", "t3"):
        buckets = rng.choice(BUCKETS, size=300, replace=False)
        counts = rng.integers(1, 4, size=buckets.size)
        for model in ("a", "b", "c"):
            if model == "c" and task == "t3":
                continue
            correct = rng.binomial(counts, 0.6)
            rows.append(pd.DataFrame({"model": model, "task": task, "bucket": buckets, "rows": counts,
                                      "correct": correct}))
    sums = pd.concat(rows, ignore_index=True).sample(frac=1, random_state=seed)  # any row order
    cells = pd.MultiIndex.from_product([["a", "b", "c", "d"], ["t0", "t1", "t2", "t3"]], names=["model", "task"])
    return sums, cells


def _definition(sums: pd.DataFrame, cells: pd.MultiIndex, n_boot: int, seed: int) -> dict[str, np.ndarray]:
    weights = bucket_weights(n_boot, seed)
    w = weights.columns(np.arange(BUCKETS))
    cell = cells.get_indexer(pd.MultiIndex.from_frame(sums[["model", "task"]]))
    out = {}
    for column in ("rows", "correct"):
        s = np.zeros((BUCKETS, len(cells)))
        np.add.at(s, (sums["bucket"].to_numpy(), cell), sums[column].to_numpy(dtype=float))
        out[column] = w @ s
    return out


@pytest.mark.parametrize("keys", ["text", "categorical"])
@pytest.mark.parametrize("dense", [True, False])
def test_replicate_totals_are_the_definition(keys, dense, monkeypatch):
    sums, cells = _sums()
    if keys == "categorical":
        sums = sums.astype({"model": "category", "task": "category"})
    if not dense:
        monkeypatch.setattr(poisson, "DENSE_CELLS", 0)
    got = replicate_totals(sums, cells, ["model", "task"], ["rows", "correct"], bucket_weights(40, 3))
    expected = _definition(sums, cells, 40, 3)
    for column in ("rows", "correct"):
        assert np.array_equal(got[column], expected[column])
    assert not got["rows"][:, cells.get_loc(("c", "t3"))].any() and not got["rows"][:, cells.get_loc(("d", "t0"))].any()


def test_a_cell_missing_from_the_cells_is_refused():
    sums, cells = _sums()
    with pytest.raises(ValueError, match="not in cells"):
        replicate_totals(sums, cells[cells.get_level_values("model") != "b"], ["model", "task"], ["rows"],
                         bucket_weights(5, 0))


def test_the_weights_are_poisson_one_and_depend_on_seed_bucket_and_replicate_only():
    """The counter-based weights: the Poisson(1) frequencies (to Monte Carlo error), the same column of a bucket
    whichever other buckets are asked for, another seed other weights; and the look-up that turns a uniform into a
    weight agrees with a binary search over the thresholds at and around every threshold."""
    weights = bucket_weights(400, 5)
    w = weights.columns(np.arange(BUCKETS))
    frequencies = np.bincount(w.astype(int).ravel(), minlength=6)[:6] / w.size
    expected = np.exp(-1) / np.array([1, 1, 2, 6, 24, 120])
    assert np.all(np.abs(frequencies - expected) < 5 * np.sqrt(expected / w.size))
    assert abs(w.mean() - 1) < 0.002 and abs(w.var() - 1) < 0.004
    assert np.array_equal(weights.columns(np.array([7, 4000]))[:, 1], w[:, 4000])
    assert not np.array_equal(bucket_weights(400, 6).columns(np.array([7])), w[:, [7]])
    thresholds = poisson._THRESHOLDS[poisson._THRESHOLDS < 2**32]
    u = np.unique(np.concatenate([thresholds - 1, thresholds, thresholds + 1, [0, 2**32 - 1]])).astype(np.uint64)
    u = u[u < 2**32]
    assert np.array_equal(poisson._poisson_of(u), np.searchsorted(poisson._THRESHOLDS, u, side="right"))
