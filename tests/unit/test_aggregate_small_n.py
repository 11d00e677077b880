"""Leaderboard intervals at small n and the deterministic normalization (issue "Every interval honest").

Known answers: the coverage of the task interval is computed exactly over the Binomial(N, p) outcomes for known p
(each outcome's bootstrap interval is computed once and weighted by its probability), for p in {0.9, 0.99} and
N in {1, 5, 20}; the plain percentile bootstrap, whose interval at Y = N is the point 1, is the contrast.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom

from evalcore.leaderboard.bootstrap import bootstrap_replicates, leaderboard, pairwise_differences, rank_intervals
from evalcore.leaderboard.weighting import weighted_scores

LEVEL = 0.834


def _cell(n: int, k: int) -> pd.DataFrame:
    return pd.DataFrame({"model": ["a", "b"], "task": "t", "category": "c", "n": n, "n_correct": [k, k]})


def _coverage(p: float, n: int, plain: bool) -> float:
    total = 0.0
    for k in range(n + 1):
        if plain:  # the old percentile bootstrap of Binomial(n, k / n)
            values = np.random.default_rng(0).binomial(n, k / n, size=2000) / n
            low, high = np.quantile(values, [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
        else:
            row = leaderboard(_cell(n, k), level=LEVEL, n_boot=2000, seed=0).iloc[0]
            low, high = row.ci_low, row.ci_high
        total += binom.pmf(k, n, p) * (low <= p <= high)
    return total


@pytest.mark.parametrize("p", [0.9, 0.99])
@pytest.mark.parametrize("n", [1, 5, 20])
def test_task_interval_covers_at_small_n(p, n):
    assert _coverage(p, n, plain=False) >= LEVEL


def test_plain_bootstrap_undercovers_where_the_smoothed_one_does_not():
    assert _coverage(0.99, 20, plain=True) < 0.2  # 20 of 20 right (82% of the time) gave the point [1, 1]
    assert _coverage(0.9, 5, plain=True) < 0.4


@pytest.mark.parametrize("k", [0, 1])
def test_one_label_gives_a_real_interval_everywhere(k):
    data = _cell(1, k).assign(model=["a", "b"], n_correct=[k, k])
    board = leaderboard(data, n_boot=2000)
    assert (board.estimate == k).all() and (board.ci_high > board.ci_low).all()
    assert ((board.ci_low == 0) & (board.ci_high == 1)).all()  # 1 label: anything between 0 and 1 is possible
    diff = pairwise_differences(data, n_boot=2000)
    assert (diff.ci_low < 0).all() and (diff.ci_high > 0).all()
    ranks = rank_intervals(data, n_boot=2000)
    assert (ranks.ci_high > ranks.ci_low).all()


def test_all_correct_cells_are_resampled_from_the_jeffreys_posterior():
    data = _cell(20, 20)
    values = bootstrap_replicates(data, n_boot=20000, seed=3).values[:, 0, 0]
    # Beta-binomial(20, 20.5, 0.5): mean 20.5 / 21, P(all 20 right) = B(40.5, 0.5) / B(20.5, 0.5)
    from scipy.special import betaln
    assert values.mean() == pytest.approx(20.5 / 21, abs=0.002)
    assert np.mean(values == 1) == pytest.approx(np.exp(betaln(40.5, 0.5) - betaln(20.5, 0.5)), abs=0.01)


def test_cells_strictly_inside_keep_the_plain_bootstrap():
    data = pd.DataFrame({"model": ["a", "a", "b", "b"], "task": ["t", "u"] * 2, "category": "c", "n": 50,
                         "n_correct": [10, 20, 30, 50]})
    rep = bootstrap_replicates(data, n_boot=500, seed=7)
    n = np.full((2, 2), 50)
    plain = np.random.default_rng(7).binomial(n, np.array([[10, 20], [30, 50]]) / 50, size=(500, 2, 2)) / 50
    np.testing.assert_array_equal(rep.values[:, 0], plain[:, 0])  # model a: both cells inside (0, 1)
    np.testing.assert_array_equal(rep.values[:, 1, 0], plain[:, 1, 0])
    assert rep.values[:, 1, 1].std() > 0  # 50 of 50: smoothed


def test_weighted_score_se_is_never_zero():
    data = pd.DataFrame({"model": ["a", "b"], "task": "t", "category": "c", "n": 10, "n_correct": [10, 0]})
    scores = weighted_scores(data, {"c": 1.0}).set_index("model")
    p = 10.5 / 11  # the Jeffreys mean
    assert scores.loc["a", "se"] == pytest.approx(np.sqrt(p * (1 - p) / 10))
    assert scores.loc["b", "se"] == pytest.approx(scores.loc["a", "se"])
    assert (scores.ci_high > scores.ci_low).all()


# ---------------------------------------------------------------------------------------------- normalization


def _board(seed: int, bounds=None) -> pd.DataFrame:
    rng = np.random.default_rng(11)
    rows = [{"model": m, "task": t, "category": "xy"[j % 2], "n": 200, "n_correct": int(rng.integers(60, 180))}
            for m in "abcd" for j, t in enumerate(("t1", "t2", "t3", "t4"))]
    return leaderboard(pd.DataFrame(rows), n_boot=500, seed=seed, normalized=True, bounds=bounds)


def test_default_normalized_estimates_do_not_depend_on_the_seed():
    a, b = _board(0), _board(1)
    np.testing.assert_array_equal(a.estimate, b.estimate)
    task = a[a.scope == "task"]
    assert task.groupby("name").estimate.min().eq(0).all() and task.groupby("name").estimate.max().eq(1).all()
    assert not np.array_equal(a.ci_low, b.ci_low)  # the intervals still come from the bootstrap


def test_bootstrap_bounds_option_keeps_the_papers_seed_dependent_behaviour():
    a, b = _board(0, "bootstrap"), _board(1, "bootstrap")
    assert np.abs(a.estimate.to_numpy() - b.estimate.to_numpy()).max() > 1e-3
    # the paper's definition: bounds = min / max over models and replicates, observed included
    rng = np.random.default_rng(11)
    rows = [{"model": m, "task": t, "category": "xy"[j % 2], "n": 200, "n_correct": int(rng.integers(60, 180))}
            for m in "abcd" for j, t in enumerate(("t1", "t2", "t3", "t4"))]
    rep = bootstrap_replicates(pd.DataFrame(rows), n_boot=500, seed=0)
    low = np.minimum(rep.values.min(axis=(0, 1)), rep.observed.min(axis=0))
    high = np.maximum(rep.values.max(axis=(0, 1)), rep.observed.max(axis=0))
    task = a[a.scope == "task"].set_index(["model", "name"]).estimate
    expected = (rep.observed - low) / (high - low)
    np.testing.assert_allclose(task.to_numpy(), expected.ravel())
    with pytest.raises(ValueError, match="bootstrap"):
        leaderboard(pd.DataFrame(rows), normalized=True, bounds="bootstap")
