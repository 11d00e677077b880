"""Agreement intervals (evalcore.labeling.agreement): coverage against a known truth where the percentile bootstrap
undercovered, point estimates equal to the libraries', and each annotator's quality by hand.

The coverage tests draw 300 samples per setting (Monte Carlo s.e. about 0.012 at 0.95) from the models of
:mod:`benchmarks.coverage.agreement`, whose table has 1,000 per setting; they ask for at least 0.93 (the bar of 0.94
less one s.e.) where the interval before covered 0.64-0.93.
"""

from __future__ import annotations

import math

import krippendorff
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from benchmarks.coverage.agreement import Setting, sample, simulate, truth
from evalcore.labeling import agreement
from evalcore.stats.intervals import wilson_interval

REPS = 300


@pytest.mark.parametrize("setting", [
    Setting("kappa01", 30, prevalence=0.5, kappa=0.9),  # n = 30: the percentile bootstrap covered 0.83
    Setting("kappa01", 50, prevalence=0.95, kappa=0.6),  # prevalence 0.95, n = 50: 0.64
    Setting("alpha", 30, 4, classes=(0.4, 0.4, 0.2), accuracy=0.75, missing=0.4),  # 40% missing, 30 units: 0.91
    Setting("alpha", 50, 4, classes=(0.95, 0.05), accuracy=0.95),  # a rare class, 4 annotators: 0.90
    Setting("kappa01", 300, prevalence=0.8, kappa=0.6),  # larger n
], ids=lambda s: s.describe())
def test_intervals_cover_the_known_truth(setting):
    found = simulate(setting, REPS, seed=3)
    assert found["hits"].mean() >= 0.93, (found["hits"].mean(), found["before_hits"].mean())


def test_the_truth_of_the_models():
    """The common-correlation model's kappa is its parameter; the latent-class alpha is the limit of large samples."""
    assert truth(Setting("kappa01", 30, prevalence=0.8, kappa=0.6)) == 0.6
    s = Setting("alpha", 20_000, 4, classes=(0.7, 0.3), accuracy=0.9, missing=0.3)
    big = sample(s, np.random.default_rng(0))
    assert krippendorff.alpha(reliability_data=big, level_of_measurement="nominal") == pytest.approx(truth(s),
                                                                                                     abs=0.01)


def test_point_estimates_are_the_libraries():
    rng = np.random.default_rng(7)
    a = rng.choice([0.0, 0.5, 1.0], 80)
    b = np.where(rng.random(80) < 0.7, a, rng.choice([0.0, 0.5, 1.0], 80))
    value, low, high = agreement.kappa_interval(a, b)
    assert value == pytest.approx(cohen_kappa_score(a.astype(str), b.astype(str)), abs=1e-12)
    assert low <= value <= high
    assert agreement._kappa_of_sums(agreement._kappa_units(a, b)[0].sum(axis=0)) == pytest.approx(value, abs=1e-12)
    matrix = rng.integers(1, 6, (5, 60)).astype(float)
    matrix[rng.random(matrix.shape) < 0.4] = np.nan
    for nominal in (True, False):
        value, low, high = agreement.alpha_interval(matrix, nominal)
        level = "nominal" if nominal else "interval"
        assert value == pytest.approx(krippendorff.alpha(reliability_data=matrix, level_of_measurement=level),
                                      abs=1e-12)
        assert low <= value <= high
        # the sums the interval resamples give the library's value too
        sums = agreement._alpha_units(matrix, nominal)[0].sum(axis=0)
        assert agreement._alpha_of_sums(sums, nominal) == pytest.approx(value, abs=1e-12)


def test_the_interval_is_seeded_and_undefined_without_variation():
    a, b = np.array([1, 1, 0, 1, 0, 1, 1, 0]), np.array([1, 0, 0, 1, 0, 1, 1, 1])
    assert agreement.kappa_interval(a, b, seed=4) == agreement.kappa_interval(a, b, seed=4)
    assert all(math.isnan(v) for v in agreement.kappa_interval(np.ones(9), np.ones(9)))
    labels = pd.DataFrame({"example_id": ["e1", "e1", "e2", "e2", "e3", "e3"], "annotator": ["a", "b"] * 3,
                           "value": 1.0})
    found = agreement.annotator_agreement(labels, "correct")
    assert found.statistic == "Cohen's kappa" and math.isnan(found.value) and math.isnan(found.ci_low)


def test_annotator_quality_by_hand():
    """e1: a=1 b=1 c=0, settled 1; e2: a=0 b=0, settled 0; e3: a=1 c=1, not settled; e4: b=0 c=1, settled 1.

    Against the settled: a 2 of 2, b 2 of 3, c 1 of 2. Against the others, per example the share of the others
    who agree: a (e1 1/2, e2 1, e3 1) = 5/6; b (1/2, 1, 0) = 1/2; c (0, 1, 0) = 1/3. Effective sample sizes
    s(1 - s) / v with v = sum (s_e - s)^2 / (n (n - 1)): a 5, capped at its 4 pairs; b 0.25 / (0.5 / 6) = 3;
    c (2/9) / (2/3 / 6) = 2.
    """
    rows = [("e1", "a", 1), ("e1", "b", 1), ("e1", "c", 0), ("e2", "a", 0), ("e2", "b", 0), ("e3", "a", 1),
            ("e3", "c", 1), ("e4", "b", 0), ("e4", "c", 1), ("e4", "a", np.nan)]  # a skipped e4
    labels = pd.DataFrame(rows, columns=["example_id", "annotator", "value"])
    settled = pd.Series({"e1": 1.0, "e2": 0.0, "e3": np.nan, "e4": 1.0})
    table = agreement.annotator_quality(labels, settled, "correct", 0.95).set_index("annotator")
    assert list(table.index) == ["c", "b", "a"]  # worst first
    assert list(table.columns) == ["labels", "agree_settled", "settled_low", "settled_high", "n_settled",
                                   "agree_others", "others_low", "others_high", "n_others"]
    assert table["labels"].tolist() == [3, 3, 3]
    assert table["agree_settled"].tolist() == pytest.approx([1 / 2, 2 / 3, 1.0])
    assert table["n_settled"].tolist() == [2, 3, 2]
    low, high = wilson_interval(np.array([1, 2, 2]), np.array([2, 3, 2]), 0.05)
    assert table["settled_low"].tolist() == pytest.approx(low) and table["settled_high"].tolist() == pytest.approx(high)
    assert table["agree_others"].tolist() == pytest.approx([1 / 3, 1 / 2, 5 / 6])
    assert table["n_others"].tolist() == [3, 3, 3]
    effective = np.array([2.0, 3.0, 4.0])
    low, high = wilson_interval(table["agree_others"].to_numpy() * effective, effective, 0.05)
    assert table["others_low"].tolist() == pytest.approx(low) and table["others_high"].tolist() == pytest.approx(high)


def test_annotator_quality_of_scores_uses_the_campaigns_tolerance():
    """On a 1-5 scale scores agree within 1 point (a quarter of the range): 3 and 4 agree, 3 and 5 do not."""
    labels = pd.DataFrame({"example_id": ["e1", "e1", "e2", "e2"], "annotator": ["a", "b", "a", "b"],
                           "value": [3.0, 4.0, 3.0, 5.0]})
    table = agreement.annotator_quality(labels, pd.Series({"e1": 4.0, "e2": 5.0}), "score", scale=(1, 5))
    table = table.set_index("annotator")
    assert table.loc["a", "agree_settled"] == 0.5 and table.loc["b", "agree_settled"] == 1.0
    assert table.loc["a", "agree_others"] == 0.5 and table.loc["a", "n_others"] == 2


def test_many_distinct_scores_leave_the_prior_out():
    """A judge's scores compared as categories: 300 distinct values would make 90,000 pseudo-units; above
    MAX_VALUES the interval is the BCa bootstrap and the Bayesian bootstrap alone, still around the value."""
    rng = np.random.default_rng(2)
    y = rng.integers(1, 6, 300).astype(float)
    per = pd.DataFrame({"value": y, "judge": y + rng.normal(0, 0.01, 300).round(4)})
    judged = agreement.judge_agreement(per, "score")
    k = judged.kappa
    assert k.ci_low <= k.value <= k.ci_high and k.n == 300
