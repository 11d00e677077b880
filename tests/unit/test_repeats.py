"""Repeated samples: the example is the unit of every method (evalcore.data.repeats and its users)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalcore.leaderboard import bootstrap as aggregate
from evalcore.calibration import estimators as calibration
from evalcore.ppi.autoeval import estimate_table, log_matrices
from evalcore.data.validation import EvalDataError, report_of, validate
from evalcore.stats.intervals import wilson_interval
from evalcore.data.repeats import N_REPEATS, has_repeats, kish_effective_n, per_example
from evalcore.subgroups.estimates import direct_estimates, empirical_bayes
from evalcore.stats.summaries import mean_table


def _log(seed: int = 0, n: int = 60) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for m, skill in (("a", 0.6), ("b", 0.7), ("c", 0.8)):
        for t in ("t1", "t2"):
            for i in range(n):
                conf = rng.uniform(0.3, 1.0)
                rows.append((m, t, f"{t}-{i}", f"g{i % 6}", float(rng.random() < skill), conf,
                             float(rng.random() < skill)))
    return pd.DataFrame(rows, columns=["model", "task", "example_id", "group", "correct", "confidence", "proxy"])


def _five_identical(base: pd.DataFrame, column: str = "epoch") -> pd.DataFrame:
    return pd.concat([base.assign(**{column: e}) for e in range(1, 6)], ignore_index=True)


@pytest.fixture(scope="module")
def logs() -> tuple[pd.DataFrame, pd.DataFrame]:
    base = _log()
    return validate(base), validate(_five_identical(base))


def test_repeat_synonyms_map_and_note(logs):
    one, five = logs
    assert "repeat" in five.columns and "repeat" not in one.columns
    assert has_repeats(five) and not has_repeats(one)
    note = next(n for n in report_of(five).notes if "several samples" in n)
    assert "360 of 360 (model, example) pairs" in note and "up to 5" in note and "'epoch'" in note
    for name in ("attempt", "trial", "sample", "repeat"):
        assert "repeat" in validate(_five_identical(_log(n=3), name)).columns


def test_sample_id_is_an_example_id_not_a_repeat():
    frame = validate(pd.DataFrame({"model": ["a", "a"], "sample_id": ["x", "y"], "correct": [1, 0]}))
    assert list(frame["example_id"]) == ["x", "y"] and "repeat" not in frame


def test_duplicates_without_a_repeat_column_point_to_the_role():
    raw = pd.DataFrame({"model": ["a", "a", "b"], "example_id": ["q1", "q1", "q1"], "correct": [1, 0, 1]})
    with pytest.raises(EvalDataError, match="map the column that numbers them to the role 'repeat'"):
        validate(raw)


def test_a_repeated_repeat_is_refused_with_its_rows():
    raw = pd.DataFrame({"model": ["a", "a", "a"], "example_id": ["q1", "q1", "q2"], "epoch": [1, 1, 1],
                        "correct": [1, 0, 1]})
    with pytest.raises(EvalDataError, match=r"rows 1, 2 repeat .*epoch"):
        validate(raw)


def test_per_example_means_and_counts():
    raw = pd.DataFrame({"model": ["a"] * 5, "example_id": ["q1", "q1", "q1", "q2", "q2"], "epoch": [1, 2, 3, 1, 2],
                        "correct": [1, 0, 1, None, None], "confidence": [0.9, 0.6, 0.6, 0.5, 0.7]})
    units = per_example(validate(raw))
    assert list(units["example_id"]) == ["q1", "q2"]
    assert units["correct"].iloc[0] == pytest.approx(2 / 3) and np.isnan(units["correct"].iloc[1])
    assert units["confidence"].tolist() == pytest.approx([0.7, 0.6])
    assert units[N_REPEATS].tolist() == [3, 2] and "repeat" not in units


def test_five_identical_repeats_give_the_intervals_of_one(logs):
    one, five = logs
    pd.testing.assert_frame_equal(mean_table(one, ["model", "task"]), mean_table(five, ["model", "task"]))
    pd.testing.assert_frame_equal(aggregate.leaderboard(one, n_boot=300, seed=3),
                                  aggregate.leaderboard(five, n_boot=300, seed=3))
    cols = ["model", "group", "n", "direct", "direct_low", "direct_high", "eb", "eb_low", "eb_high"]
    pd.testing.assert_frame_equal(empirical_bayes(one, regressor="linear")[cols],
                                  empirical_bayes(five, regressor="linear")[cols])
    pd.testing.assert_frame_equal(direct_estimates(one), direct_estimates(five)[direct_estimates(one).columns])
    ppi_one = estimate_table(log_matrices(one, "correct", ["proxy"]), "proxy")
    ppi_five = estimate_table(log_matrices(five, "correct", ["proxy"]), "proxy")
    pd.testing.assert_frame_equal(ppi_one, ppi_five)
    unit = per_example(five)
    a1 = calibration.ece_interval(one["confidence"], one["correct"], n_boot=200, seed=0)
    a5 = calibration.ece_interval(unit["confidence"], unit["correct"], n_boot=200, seed=0)
    assert (a1.ci_low, a1.ci_high) == (a5.ci_low, a5.ci_high)


def test_kish_effective_n_known_values():
    # repeats that agree: n; all examples at the same fraction: capped at the rows averaged
    assert kish_effective_n(0.5, 0.25, 10, 50) == 10
    assert kish_effective_n(0.6, 0.0, 10, 50) == 50
    # per-example means 0, 0.5, 1, 0.5 -> p = 0.5, s2 = 0.125, n_eff = 4 * 0.25 / 0.125 = 8
    values = np.array([0, 0.5, 1, 0.5])
    assert kish_effective_n(values.mean(), values.var(), 4, 8) == pytest.approx(8)
    assert kish_effective_n(1.0, 0.0, 7, 35) == 7


def test_binary_interval_with_disagreeing_repeats_is_wilson_on_the_effective_n():
    raw = pd.DataFrame({"model": ["a"] * 8, "example_id": ["1", "1", "2", "2", "3", "3", "4", "4"],
                        "epoch": [1, 2] * 4, "correct": [0, 0, 0, 1, 1, 1, 1, 0]})
    row = mean_table(validate(raw), ["model"]).iloc[0]
    low, high = wilson_interval(0.5 * 8, 8, 0.05)  # n_eff = 8 (see above)
    assert row["n"] == 4 and row["estimate"] == 0.5
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((float(low), float(high)))


@pytest.mark.slow
def test_cluster_robust_interval_covers_by_simulation():
    """Examples with their own difficulty p_i ~ Beta(2, 1) (mean 2/3), 4 Bernoulli(p_i) samples each: the
    per-example interval covers the population accuracy at about 95 %; Wilson on the rows as if independent
    covers less (the samples of one example are correlated)."""
    rng = np.random.default_rng(11)
    reps, n, k = 400, 150, 4
    hits_unit = hits_rows = 0
    for _ in range(reps):
        p = rng.beta(2, 1, size=n)
        y = (rng.random((n, k)) < p[:, None]).astype(float)
        frame = pd.DataFrame({"model": "m", "example_id": np.repeat(np.arange(n).astype(str), k),
                              "repeat": np.tile(np.arange(k), n), "correct": y.ravel()})
        row = mean_table(frame, ["model"]).iloc[0]
        hits_unit += row["ci_low"] <= 2 / 3 <= row["ci_high"]
        low, high = wilson_interval(y.sum(), n * k, 0.05)
        hits_rows += low <= 2 / 3 <= high
    assert abs(hits_unit / reps - 0.95) < 0.035
    assert hits_rows / reps < hits_unit / reps - 0.05
