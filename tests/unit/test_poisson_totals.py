"""The replicated totals of the paired Poisson bootstrap (:func:`evalcore.engine.poisson.replicate_totals`) against
the definition, W (n_boot x buckets) @ S (buckets x cells), on bucket sums in several parts (as the engine returns
them) with repeated columns (models that scored the same examples), cells absent from the sums, cells totalled per
group, whole numbers (multiplied in single precision: exactly the same numbers) and fractions, on the dense and the
sparse path, on one thread or two; the weights asked for by replicates and from several threads at once; and the
bucket sums' cell numbers, joined in the engine (:func:`evalcore.engine.poisson.bucket_sums`)."""

from __future__ import annotations

import multiprocessing
import os
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pytest

from evalcore.engine import poisson
from evalcore.engine.connection import duckdb_connection, execute
from evalcore.engine.poisson import BUCKETS, bucket_sums, bucket_weights, replicate_totals


def _sums(seed: int = 0) -> tuple[dict[str, np.ndarray], int]:
    """Bucket sums of 4 models x 4 tasks (cell = 4 model + task; model 2 has no row in task 3, model 3 none at all);
    models 0 and 1 share their row counts; ``score`` holds fractions."""
    rng = np.random.default_rng(seed)
    rows = []
    for task in range(4):
        buckets = rng.choice(BUCKETS, size=300, replace=False)
        counts = rng.integers(1, 4, size=buckets.size)
        for model in range(3):
            if model == 2 and task == 3:
                continue
            rows.append(pd.DataFrame({"cell": 4 * model + task, "bucket": buckets, "rows": counts,
                                      "correct": rng.binomial(counts, 0.6), "score": rng.random(buckets.size)}))
    sums = pd.concat(rows, ignore_index=True).sample(frac=1, random_state=seed)  # any row order
    cuts = [0, len(sums) // 5, len(sums) // 2, len(sums)]  # three parts of unequal length
    return [{name: sums[name].to_numpy()[a:b] for name in sums.columns} for a, b in zip(cuts, cuts[1:])], 16


def _joined(sums: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    return {name: np.concatenate([part[name] for part in sums]) for name in sums[0]}


def _places(sums: list[dict[str, np.ndarray]], n_cells: int) -> poisson._Places:
    """Every bucket occupied: a sum's place is its bucket."""
    return poisson._Places([part["bucket"] for part in sums], [part["cell"] for part in sums], BUCKETS, n_cells)


def _definition(sums: list[dict[str, np.ndarray]], n_cells: int, column: str, n_boot: int, seed: int) -> np.ndarray:
    w = bucket_weights(n_boot, seed).columns(np.arange(BUCKETS)).astype(float)
    s = np.zeros((BUCKETS, n_cells))
    joined = _joined(sums)
    np.add.at(s, (joined["bucket"], joined["cell"]), joined[column].astype(float))
    return w @ s


@pytest.mark.parametrize("dense", [True, False])
@pytest.mark.parametrize("threads", [1, 2])
def test_replicate_totals_are_the_definition(dense, threads, monkeypatch):
    sums, n_cells = _sums()
    if not dense:
        monkeypatch.setattr(poisson, "DENSE_CELLS", 0)
    if threads == 1:
        monkeypatch.setattr(poisson, "_HELPER", None)
    got = replicate_totals(sums, n_cells, ["rows", "correct", "score"], bucket_weights(40, 3))
    for column in ("rows", "correct"):  # whole numbers: the same numbers
        assert np.array_equal(got[column], _definition(sums, n_cells, column, 40, 3))
    np.testing.assert_allclose(got["score"], _definition(sums, n_cells, "score", 40, 3), rtol=1e-12)
    assert not got["rows"][:, 4 * 2 + 3].any() and not got["rows"][:, 4 * 3:].any()


def test_a_column_is_totalled_per_group_of_cells():
    """groups={"rows": model of each cell}: a model's replicated rows over its tasks, the sum of its cells'."""
    sums, n_cells = _sums(1)
    model = np.arange(n_cells) // 4
    got = replicate_totals(sums, n_cells, ["rows", "score"], bucket_weights(30, 2), groups={"rows": model})
    per_cell = _definition(sums, n_cells, "rows", 30, 2)
    assert got["rows"].shape == (30, 4) and got["score"].shape == (30, n_cells)
    assert np.array_equal(got["rows"], per_cell.reshape(30, 4, 4).sum(axis=2))


def test_whole_numbers_too_large_for_single_precision_stay_exact():
    """Counts whose replicated totals could pass 2^24 are multiplied in double precision: still exact; where the
    quick bound on a column's total does not tell, the totals themselves decide."""
    sums, n_cells = _sums(2)
    for part in sums:
        part["rows"] = part["rows"] * 100_003  # a cell's Σ|S| x 20 beyond 2^24
    got = replicate_totals(sums, n_cells, ["rows"], bucket_weights(20, 0))
    assert np.array_equal(got["rows"], _definition(sums, n_cells, "rows", 20, 0))
    places = _places(sums, n_cells)
    for column, dtype in (("rows", np.float64), ("correct", np.float32)):
        values = [part[column].astype(float) for part in sums]
        assert poisson._laid_out(values, places).matrix.dtype == dtype
    # many small sums in one cell, one large in another: the quick bound (1,000 sums x 10^5 x 20) does not tell,
    # the columns' totals do (10^5 x 20 = 2 x 10^6 < 2^24; 9 x 10^5 x 20 > 2^24)
    places = poisson._Places([np.arange(1001)], [np.repeat([0, 1], [1000, 1])], BUCKETS, 2)
    assert poisson._below_single_precision([np.repeat([1, 100_000], [1000, 1])], places)
    assert not poisson._below_single_precision([np.repeat([1, -900_000], [1000, 1])], places)


def test_equal_columns_share_one_and_a_shared_fingerprint_is_checked(monkeypatch):
    """Models 0, 1 and 2 scored the same examples: their row counts are laid out once per task (4 columns, and one of
    zeros for the cells without rows). With keys that make
    every column of the same total share a fingerprint, the entry-by-entry check keeps unequal cells apart."""
    sums, n_cells = _sums(3)
    places = _places(sums, n_cells)
    laid = poisson._laid_out([part["rows"] for part in sums], places)
    assert laid.matrix.shape[1] == 5 and laid.inverse[0] == laid.inverse[4] == laid.inverse[8] != laid.inverse[1]
    monkeypatch.setattr(poisson, "_KEYS", np.ones(BUCKETS))  # a fingerprint is then the column's total
    for part in sums:
        part["rows"] = np.ones_like(part["rows"])  # every task's cells: 300 buckets of one row, equal totals
    laid = poisson._laid_out([part["rows"] for part in sums], _places(sums, n_cells))
    assert len(np.unique(laid.inverse)) > 4
    got = replicate_totals(sums, n_cells, ["rows"], bucket_weights(25, 1))
    assert np.array_equal(got["rows"], _definition(sums, n_cells, "rows", 25, 1))


def test_bucket_sums_number_the_cells_and_match_missing_keys():
    """Each row's cell is its keys' position among the cells, a missing task matching a missing task; a row whose
    keys are not among the cells is refused."""
    con = duckdb_connection()
    frame = pd.DataFrame({"model": ["a", "a", "b", "b", "b"], "task": ["t", None, "t", "t", None],
                          "example_id": ["1", "2", "1", "3", "2"], "correct": [1.0, 0.0, 1.0, 1.0, 0.0]})
    con.con.register("bucket_sums_log", frame)
    table = con.table("bucket_sums_log")
    cells = pd.DataFrame({"model": ["b", "b", "a", "a"], "task": ["t", None, "t", None]})
    sums = bucket_sums(table, cells, {"correct": table.correct}, 0, execute)
    got = pd.DataFrame(_joined(sums)).groupby("cell")[["rows", "correct"]].sum()
    assert got.to_dict("index") == {0: {"rows": 2, "correct": 2.0}, 1: {"rows": 1, "correct": 0.0},
                                   2: {"rows": 1, "correct": 1.0}, 3: {"rows": 1, "correct": 0.0}}
    with pytest.raises(ValueError, match="not in cells"):
        bucket_sums(table, cells.iloc[:3], {"correct": table.correct}, 0, execute)


def test_the_weights_are_poisson_one_and_depend_on_seed_bucket_and_replicate_only():
    """The counter-based weights: the Poisson(1) frequencies (to Monte Carlo error), the same column of a bucket
    whichever other buckets are asked for (first or kept), another seed other weights; and the look-up that turns a
    uniform into a weight agrees with a binary search over the thresholds at and around every threshold."""
    weights = bucket_weights(400, 5)
    w = weights.columns(np.arange(BUCKETS)).astype(int)
    frequencies = np.bincount(w.ravel(), minlength=6)[:6] / w.size
    expected = np.exp(-1) / np.array([1, 1, 2, 6, 24, 120])
    assert np.all(np.abs(frequencies - expected) < 5 * np.sqrt(expected / w.size))
    assert abs(w.mean() - 1) < 0.002 and abs(w.var() - 1) < 0.004
    assert np.array_equal(weights.columns(np.array([7, 4000]))[:, 1], w[:, 4000])
    assert np.array_equal(poisson.BucketWeights(400, 5).columns(np.array([4000, 7]))[:, 0], w[:, 4000])
    assert not np.array_equal(bucket_weights(400, 6).columns(np.array([7])), w[:, [7]])
    thresholds = poisson._THRESHOLDS[poisson._THRESHOLDS < 2**32]
    u = np.unique(np.concatenate([thresholds - 1, thresholds, thresholds + 1, [0, 2**32 - 1]])).astype(np.uint64)
    u = u[u < 2**32]
    assert np.array_equal(poisson._poisson_of(u), np.searchsorted(poisson._THRESHOLDS, u, side="right"))
    assert poisson._poisson_of(np.array([2**32 - 1], dtype=np.uint64))[0] <= poisson.MAX_WEIGHT


def test_weights_asked_by_replicates_and_from_many_threads_are_the_same():
    """A range of replicates gets those rows of all the replicates, before or after the others are drawn, kept or
    not (a replicate's weight does not depend on n_boot); twelve requests from eight threads at once, overlapping,
    get the weights one thread gets (no lock: a weight not yet kept is drawn again, the same)."""
    full = poisson.BucketWeights(64, 9).columns(np.arange(BUCKETS))
    assert full.shape == (64, BUCKETS) and full.max() <= poisson.MAX_WEIGHT
    weights = poisson.BucketWeights(64, 9)
    assert np.array_equal(weights.columns(np.arange(100, 900), slice(32, None)), full[32:, 100:900])
    assert np.array_equal(weights.columns(np.arange(BUCKETS)), full)
    unkept = poisson.BucketWeights(4096, 9)
    assert unkept._kept is None and np.array_equal(unkept.columns(np.arange(5), slice(0, 64)), full[:, :5])
    shared, starts = poisson.BucketWeights(64, 9), range(0, 6144, 512)
    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda a: shared.columns(np.arange(a, a + 2048), slice(a % 3, None)), starts))
    for start, weights_of in zip(starts, got):
        assert np.array_equal(weights_of, full[start % 3:, start:start + 2048])


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_forked_child_multiplies_on_a_helper_thread_of_its_own():
    """A fork copies the module's helper executor but not its thread: the child makes its own (else the second half
    of the replicates would wait forever)."""
    sums, n_cells = _sums(4)
    expected = replicate_totals(sums, n_cells, ["rows"], bucket_weights(20, 1))["rows"]  # the helper thread runs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # forking a process with threads
        with multiprocessing.get_context("fork").Pool(1) as pool:
            got = pool.apply_async(replicate_totals, (sums, n_cells, ["rows"], bucket_weights(20, 1))).get(60)
    assert np.array_equal(got["rows"], expected)
