"""Coverage of the robust EB intervals (benchmarks/coverage/eb.py), sized to run in seconds.

Each check passes when the measured average coverage plus two Monte Carlo standard errors reaches the nominal
level minus 3 points: it fails when coverage falls more than 3 points below nominal (beyond the noise of the few
seeded repetitions). The full-size numbers are in ``python -m benchmarks.coverage --only eb``.
"""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.coverage import eb


def holds(result: dict, level: float) -> tuple[float, float]:
    shares = np.asarray(result[level]["hits"])
    return shares.mean(), shares.std(ddof=1) / np.sqrt(shares.size)


@pytest.fixture(scope="module")
def population():
    pop = eb.simulation(0)
    return pop, pop.groupby(["model", "group"])["p"].mean()


@pytest.mark.parametrize("k", [5, 10])
def test_simulation_with_known_truth_covers_at_both_levels(population, k):
    result = eb.measure(*population, k, reps=8, seed=1, shared=True, regressor="linear", simulated=True)
    for level in eb.LEVELS:
        measured, se = holds(result, level)
        assert measured + 2 * se >= level - 0.03, (level, measured, se)
    assert result["mse_ratio"] < 0.7  # measured 0.38 (5 questions) and 0.51 (10), xgboost, 40 repetitions


def test_mmlu_pro_by_category_with_the_same_ten_questions_for_every_model(shared_file):
    """Before issue 25 this setting measured 0.828 at 90 % and 0.906 at 95 % (40 repetitions): this check failed."""
    shared_file("mmlu_pro_per_question.csv.gz")  # skips without the shared data
    result = eb.measure(*eb.mmlu_pro("category"), 10, reps=6, seed=2, shared=True, numeric=("n_options",))
    for level in eb.LEVELS:
        measured, se = holds(result, level)
        assert measured + 2 * se >= level - 0.03, (level, measured, se)
    assert result["mse_ratio"] < 0.8


def test_model_vs_human_group_difficulty_gains_and_covers(shared_file):
    """Issue 25's bar: EB/DT MSE <= 0.8 and coverage >= 0.93 at 95 % (MSE 1.02 before, the feature off; 0.69 and
    0.970 after, 40 repetitions)."""
    shared_file("model_vs_human_trials.csv.gz")
    result = eb.measure(*eb.model_vs_human(), eb.MVH_TRIALS, reps=4, seed=3, shared=False)
    measured, se = holds(result, 0.95)
    assert measured + 2 * se >= 0.93
    assert result["mse_ratio"] <= 0.8


def test_share_row_standard_error_by_hand():
    row = eb.share_row("s", 0.9, [0.8, 0.9, 1.0], [0.1, 0.3], None)
    assert row.measured == pytest.approx(0.9) and row.width == pytest.approx(0.2) and row.reps == 3
    assert row.mc_se == pytest.approx(0.1 / np.sqrt(3))  # sample sd 0.1 of the three shares
