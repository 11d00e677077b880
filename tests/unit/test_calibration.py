"""Calibration (binning, ECE, reliability, bootstrap) and selective prediction."""

import math

import numpy as np
import pandas as pd
import pytest

from evalcore.calibration import estimators as calibration
from evalcore.calibration.estimators import (
    ECEResult, SelectiveResult, accuracy_at_coverage, bin_index, coverage_accuracy_area, ece_interval, expected_calibration_error, reliability_table, selective_prediction_curve,
)

Z95 = 1.959963984540054

# The slides' worked example: 0.0-0.3 with 2 of 4 correct, 0.7-1.0 with 3 of 4 correct;
# the top 3 (1.0, 0.9, 0.8) have 2 correct, as in the selective prediction slide.
SLIDES_CONF = [0.0, 0.1, 0.2, 0.3, 0.7, 0.8, 0.9, 1.0]
SLIDES_CORRECT = [0, 1, 0, 1, 1, 1, 0, 1]


def wilson_by_hand(k, n, z=Z95):
    p = k / n
    denom = 1 + z**2 / n
    center = (p + z**2 / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z**2 / (4 * n**2))
    return max(center - half, 0.0), min(center + half, 1.0)


def calibrated_model(n, seed, power=1):
    """Uniform confidences; correct ~ Bernoulli(confidence ** power) (power 1 = calibrated)."""
    rng = np.random.default_rng(seed)
    conf = rng.random(n)
    return conf, (rng.random(n) < conf**power).astype(int)


# ------------------------------------------------------------------------------------------
# bin_index
# ------------------------------------------------------------------------------------------


def test_uniform_bins_on_decimal_edges():
    idx, edges = bin_index([0.0, 0.3, 0.7, 0.95, 1.0, 0.29999999], n_bins=10)
    assert idx.tolist() == [0, 3, 7, 9, 9, 2]
    assert edges[3] == 0.3 and edges[0] == 0.0 and edges[-1] == 1.0
    assert len(edges) == 11


@pytest.mark.parametrize("n_bins", [1, 3, 7, 10, 49, 100])
def test_uniform_bins_agree_with_edges(n_bins):
    # k / n_bins lands in bin k even where (k / n_bins) * n_bins rounds below k (e.g. 1/49 * 49);
    # the float just below an edge lands in the bin before it.
    k = np.arange(n_bins + 1)
    at_edges = k / n_bins
    idx, edges = bin_index(at_edges, n_bins)
    assert idx.tolist() == np.minimum(k, n_bins - 1).tolist()
    below, _ = bin_index(np.nextafter(at_edges[1:], 0), n_bins)
    assert below.tolist() == (k[1:] - 1).tolist()
    np.testing.assert_array_equal(edges, at_edges)


def test_quantile_bins_have_equal_counts_on_distinct_values():
    conf = np.random.default_rng(0).permutation(np.arange(1, 101) / 101)
    idx, edges = bin_index(conf, n_bins=10, binning="quantile")
    assert np.bincount(idx).tolist() == [10] * 10
    assert edges[0] == conf.min() and edges[-1] == conf.max()


def test_quantile_ties_collapse_edges():
    conf = [0.2, 0.2, 0.2, 0.2, 0.5, 0.6, 0.7, 0.8]
    idx, edges = bin_index(conf, n_bins=4, binning="quantile")
    # quantiles 0.2, 0.2, (0.2 + 0.5) / 2, 0.6 + 0.25 * 0.1, 0.8: the duplicated 0.2 is dropped
    np.testing.assert_allclose(edges, [0.2, 0.35, 0.625, 0.8])
    assert idx.tolist() == [0, 0, 0, 0, 1, 1, 2, 2]


def test_quantile_all_equal_gives_one_bin():
    idx, edges = bin_index([0.4] * 5, n_bins=10, binning="quantile")
    assert idx.tolist() == [0] * 5
    assert edges.tolist() == [0.4, 0.4]


# ------------------------------------------------------------------------------------------
# ECE and reliability table
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("binning", ["uniform", "quantile"])
def test_slides_worked_example(binning):
    # quantile edges for these 8 values are 0, (0.3 + 0.7) / 2, 1: the same two bins.
    ece = expected_calibration_error(SLIDES_CONF, SLIDES_CORRECT, n_bins=2, binning=binning)
    assert ece == pytest.approx(0.225, abs=1e-12)


def test_slides_reliability_table():
    table = reliability_table(SLIDES_CONF, SLIDES_CORRECT, n_bins=2)
    assert list(table.columns) == [
        "bin", "lower", "upper", "count", "mean_confidence", "accuracy", "ci_low", "ci_high", "gap",
    ]
    assert table["bin"].tolist() == [0, 1]
    assert table["lower"].tolist() == [0.0, 0.5] and table["upper"].tolist() == [0.5, 1.0]
    assert table["count"].tolist() == [4, 4]
    np.testing.assert_allclose(table["accuracy"], [0.5, 0.75], atol=1e-12)
    np.testing.assert_allclose(table["mean_confidence"], [0.15, 0.85], atol=1e-12)
    np.testing.assert_allclose(table["gap"], [0.35, -0.10], atol=1e-12)
    # 2 of 4 at 95 %: 0.5 -+ z / (1 + z^2/4) * sqrt(0.25/4 + z^2/64)
    half = Z95 / (1 + Z95**2 / 4) * math.sqrt(0.25 / 4 + Z95**2 / 64)
    assert table.loc[0, "ci_low"] == pytest.approx(0.5 - half, abs=1e-12)
    assert table.loc[0, "ci_high"] == pytest.approx(0.5 + half, abs=1e-12)
    assert (table.loc[1, "ci_low"], table.loc[1, "ci_high"]) == pytest.approx(
        wilson_by_hand(3, 4), abs=1e-12
    )


def test_reliability_table_with_an_empty_bin():
    conf = [0.05, 0.1, 0.2, 0.6, 0.7, 0.75, 1.0]
    correct = [0, 0, 1, 1, 0, 1, 1]
    table = reliability_table(conf, correct, n_bins=4, alpha=0.1)
    assert table["count"].tolist() == [3, 0, 2, 2]  # 0.75 opens the last bin, 1.0 closes it
    np.testing.assert_allclose(table["mean_confidence"], [0.35 / 3, np.nan, 0.65, 0.875])
    np.testing.assert_allclose(table["accuracy"], [1 / 3, np.nan, 0.5, 1.0])
    np.testing.assert_allclose(table["gap"], [1 / 3 - 0.35 / 3, np.nan, -0.15, 0.125])
    empty = table.loc[1]
    assert np.isnan(empty["ci_low"]) and np.isnan(empty["ci_high"])
    assert (table.loc[2, "ci_low"], table.loc[2, "ci_high"]) == pytest.approx(
        wilson_by_hand(1, 2, z=1.6448536269514722), abs=1e-12
    )
    ece = expected_calibration_error(conf, correct, n_bins=4)
    assert ece == pytest.approx((0.65 / 3 * 3 + 0.15 * 2 + 0.125 * 2) / 7, abs=1e-12)


@pytest.mark.parametrize("binning", ["uniform", "quantile"])
def test_ece_equals_weighted_gaps_of_table(binning):
    conf, correct = calibrated_model(3000, seed=5, power=2)
    table = reliability_table(conf, correct, n_bins=15, binning=binning)
    assert table["count"].sum() == 3000
    filled = table[table["count"] > 0]
    from_table = (filled["count"] / 3000 * filled["gap"].abs()).sum()
    ece = expected_calibration_error(conf, correct, n_bins=15, binning=binning)
    assert ece == pytest.approx(from_table, abs=1e-12)


# ------------------------------------------------------------------------------------------
# ece_interval
# ------------------------------------------------------------------------------------------


def test_calibrated_model_has_small_ece_and_interval_covering_zero():
    # ECE = 0 is the boundary where the bootstrap alone fails; the calibration test restores
    # coverage: over 40 perfectly calibrated samples the 95 % interval should contain 0 about 38
    # times (P(<= 34 | p = .95) < 3 %), and the p-values should not pile up near 0.
    results = []
    for seed in range(40):
        conf, correct = calibrated_model(5_000, seed=seed)
        results.append(ece_interval(conf, correct, n_boot=200, seed=seed))
    ece = np.array([r.ece for r in results])
    assert np.all((0 < ece) & (ece < 0.04))
    assert np.all([r.debiased < r.ece for r in results])
    assert sum(r.ci_low == 0.0 for r in results) >= 35
    assert sum(r.p_value <= 0.05 for r in results) <= 5
    assert np.all([r.ci_low <= r.ece <= r.ci_high or r.ci_low == 0 for r in results])


def test_calibration_test_rejects_a_miscalibrated_model():
    conf, correct = calibrated_model(5_000, seed=1, power=1.3)  # mildly overconfident
    result = ece_interval(conf, correct, n_boot=300, seed=1)
    assert result.p_value < 0.01
    assert result.ci_low > 0


def test_null_eces_follow_bernoulli_labels():
    # Under consistency resampling, each bin's label sum is a sum of Bernoulli(c_i): with one bin
    # and all confidences 0.5, ECE = |Binomial(n, .5) / n - .5|, mean sqrt(.25 / n) * sqrt(2 / pi).
    conf = np.full(400, 0.5)
    eces = calibration._null_eces(conf, np.array([0.0, 1.0]), 4000, np.random.default_rng(0), None)
    assert eces.mean() == pytest.approx(np.sqrt(0.25 / 400) * np.sqrt(2 / np.pi), rel=0.05)


def test_ece_interval_result_fields():
    conf, correct = calibrated_model(1000, seed=0, power=2)
    result = ece_interval(conf, correct, n_boot=50, level=0.9, seed=4)
    assert isinstance(result, ECEResult)
    assert result.ece == pytest.approx(expected_calibration_error(conf, correct), abs=1e-15)
    assert (result.n, result.n_boot, result.seed, result.level) == (1000, 50, 4, 0.9)
    assert 0 < result.p_value <= 1


def test_overconfident_model_interval_excludes_zero_and_covers_truth():
    # correct ~ Bernoulli(c^3) with c ~ U(0, 1): every bin is overconfident, so the true ECE is
    # E[c - c^3] = 1/4 for any binning. Check that on a huge sample of the known probabilities.
    big = np.random.default_rng(2).random(2_000_000)
    bins = np.minimum((big * 10).astype(int), 9)
    true_ece = np.abs(np.bincount(bins, weights=big**3 - big)).sum() / big.size
    assert true_ece == pytest.approx(0.25, abs=2e-3)

    covered = 0
    for seed in range(20):
        conf, correct = calibrated_model(5000, seed=seed, power=3)
        result = ece_interval(conf, correct, n_boot=200, seed=seed)
        assert result.ci_low > 0.2
        covered += result.ci_low < true_ece < result.ci_high
    assert covered >= 16  # nominal 19 of 20; P(covered <= 15) < 2 % at 95 % coverage


@pytest.mark.parametrize("binning", ["uniform", "quantile"])
def test_ece_interval_reproducible_and_seed_dependent(binning):
    conf, correct = calibrated_model(2000, seed=4, power=2)
    first = ece_interval(conf, correct, binning=binning, n_boot=100, seed=7)
    again = ece_interval(conf, correct, binning=binning, n_boot=100, seed=7)
    other = ece_interval(conf, correct, binning=binning, n_boot=100, seed=8)
    assert first == again
    assert (other.ci_low, other.ci_high, other.debiased) != (first.ci_low, first.ci_high, first.debiased)
    assert other.ece == first.ece


@pytest.mark.parametrize("binning", ["uniform", "quantile"])
def test_bootstrap_bin_sums_equal_those_of_explicit_resamples_with_fixed_edges(binning):
    # The bootstrap keeps the observed bins (quantile edges are not recomputed per resample): each
    # replicate's per-bin sums are those of the resampled examples binned by the observed edges.
    rng = np.random.default_rng(6)
    conf = np.round(rng.random(60), 2)  # ties
    correct = (rng.random(60) < conf).astype(float)
    idx, edges = bin_index(conf, n_bins=7, binning=binning)
    order = np.argsort(conf, kind="stable")
    residual_sorted = (correct - conf)[order]
    starts = calibration._bin_starts(conf[order], edges)
    got = calibration._bootstrap_bin_sums(residual_sorted, starts, 8, np.random.default_rng(5), None)
    draws = np.random.default_rng(5).integers(0, 60, size=(8, 60))  # the draws of _resample_counts
    nonempty = np.unique(idx)
    expected = [np.bincount(idx[order][d], weights=residual_sorted[d], minlength=7)[nonempty] / 60 for d in draws]
    np.testing.assert_allclose(got, expected, atol=1e-12)


def test_ece_interval_does_not_depend_on_chunking(monkeypatch):
    conf, correct = calibrated_model(300, seed=9, power=2)
    whole = ece_interval(conf, correct, n_boot=120, seed=3)
    monkeypatch.setattr(calibration, "_CHUNK_CELLS", 1000)  # 3 replicates per chunk
    calls = []
    chunked = ece_interval(conf, correct, n_boot=120, seed=3, progress=calls.append)
    assert chunked == whole
    assert 1 < len(calls) <= 40  # 20 steps for the bootstrap, 20 for the calibration test
    assert calls == sorted(calls) and calls[-1] == 1.0


# ------------------------------------------------------------------------------------------
# Selective prediction
# ------------------------------------------------------------------------------------------


def test_slides_selective_curve():
    curve = selective_prediction_curve(SLIDES_CONF, SLIDES_CORRECT)
    assert list(curve.columns) == [
        "threshold", "coverage", "n_covered", "selective_accuracy", "ci_low", "ci_high",
    ]
    assert curve["threshold"].tolist() == SLIDES_CONF[::-1]
    assert curve["n_covered"].tolist() == list(range(1, 9))
    np.testing.assert_allclose(curve["coverage"], np.arange(1, 9) / 8)
    np.testing.assert_allclose(
        curve["selective_accuracy"], [1, 1 / 2, 2 / 3, 3 / 4, 4 / 5, 4 / 6, 5 / 7, 5 / 8]
    )
    assert (curve.loc[2, "ci_low"], curve.loc[2, "ci_high"]) == pytest.approx(
        wilson_by_hand(2, 3), abs=1e-12
    )


def test_selective_curve_groups_ties():
    conf = [0.9, 0.5, 0.9, 0.1]
    correct = [1, 1, 0, 1]
    curve = selective_prediction_curve(conf, correct)
    assert curve["threshold"].tolist() == [0.9, 0.5, 0.1]
    assert curve["n_covered"].tolist() == [2, 3, 4]
    np.testing.assert_allclose(curve["selective_accuracy"], [1 / 2, 2 / 3, 3 / 4])
    # step function: 1/2 * 2/4 + 2/3 * 1/4 + 3/4 * 1/4
    assert coverage_accuracy_area(conf, correct) == pytest.approx(0.25 + 1 / 6 + 0.1875, abs=1e-12)


def test_all_equal_confidences_give_one_row_and_area_equal_to_accuracy():
    correct = [1, 0, 1, 1, 0]
    curve = selective_prediction_curve([0.6] * 5, correct)
    assert len(curve) == 1
    assert curve.loc[0, "coverage"] == 1.0 and curve.loc[0, "selective_accuracy"] == 0.6
    assert coverage_accuracy_area([0.6] * 5, correct) == pytest.approx(0.6, abs=1e-12)


def test_area_equals_mean_running_accuracy_for_distinct_confidences():
    rng = np.random.default_rng(11)
    conf = rng.permutation(np.linspace(0.01, 0.99, 40))
    correct = (rng.random(40) < conf).astype(int)
    ranked = correct[np.argsort(-conf)]
    brute = np.mean([ranked[:k].mean() for k in range(1, 41)])
    assert coverage_accuracy_area(conf, correct) == pytest.approx(brute, abs=1e-12)


def test_perfectly_ranked_model_is_monotone():
    # Every correct example is more confident than every wrong one.
    conf = np.random.default_rng(12).random(500)
    correct = (conf > 0.4).astype(int)
    curve = selective_prediction_curve(conf, correct)
    accuracy = curve["selective_accuracy"].to_numpy()  # rows in increasing coverage
    assert np.all(np.diff(accuracy) <= 0)
    assert np.all(accuracy[curve["threshold"] > 0.4] == 1.0)
    assert np.all(np.diff(curve["coverage"]) > 0)
    assert coverage_accuracy_area(conf, correct) > correct.mean() + 0.1


def test_random_ranking_area_is_about_accuracy():
    rng = np.random.default_rng(13)
    conf = rng.random(20_000)
    correct = (rng.random(20_000) < 0.7).astype(int)
    assert coverage_accuracy_area(conf, correct) == pytest.approx(correct.mean(), abs=0.02)


def test_accuracy_at_coverage_on_slides_example():
    top3 = accuracy_at_coverage(SLIDES_CONF, SLIDES_CORRECT, coverage=3 / 8)
    assert isinstance(top3, SelectiveResult)
    assert (top3.threshold, top3.n_covered, top3.coverage) == (0.8, 3, 0.375)
    assert top3.accuracy == pytest.approx(2 / 3)
    assert (top3.ci_low, top3.ci_high) == pytest.approx(wilson_by_hand(2, 3), abs=1e-12)
    # 0.3 needs 2.4 examples: rounds up to the top 3
    assert accuracy_at_coverage(SLIDES_CONF, SLIDES_CORRECT, coverage=0.3) == SelectiveResult(
        0.3, 0.375, 0.8, 3, top3.accuracy, top3.ci_low, top3.ci_high
    )
    everything = accuracy_at_coverage(SLIDES_CONF, SLIDES_CORRECT, coverage=1.0)
    assert (everything.threshold, everything.n_covered, everything.accuracy) == (0.0, 8, 5 / 8)


def test_accuracy_at_coverage_includes_ties_whole():
    conf = [0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.9, 0.9, 0.1]
    correct = [0, 0, 0, 0, 0, 0, 0, 1, 0, 1]
    result = accuracy_at_coverage(conf, correct, coverage=0.3)
    assert (result.threshold, result.n_covered, result.coverage, result.accuracy) == (0.3, 9, 0.9, 1 / 9)
    # coverage 0.2 is met exactly by the two 0.9s, 0.2000001 is not
    assert accuracy_at_coverage(conf, correct, coverage=0.2).n_covered == 2
    assert accuracy_at_coverage(conf, correct, coverage=0.2000001).n_covered == 9


# ------------------------------------------------------------------------------------------
# Input validation
# ------------------------------------------------------------------------------------------

DATA_FUNCTIONS = [
    expected_calibration_error,
    reliability_table,
    lambda c, y: ece_interval(c, y, n_boot=10),
    selective_prediction_curve,
    coverage_accuracy_area,
    lambda c, y: accuracy_at_coverage(c, y, coverage=0.5),
]

BAD_DATA = [
    ([0.5, np.nan], [1, 0], "confidence contains NaN"),
    ([0.5, 0.6], [1, np.nan], "correct contains NaN"),
    ([0.5, 0.6, 0.7], [1, 0], "same length"),
    ([0.5, 1.2], [1, 0], r"confidence must lie in \[0, 1\]"),
    ([-0.1, 0.6], [1, 0], r"confidence must lie in \[0, 1\]"),
    ([0.5, 0.6], [1, 2], "correct must be 0/1"),
    ([0.5, 0.6], [1, -0.5], "correct must be 0/1"),
    ([], [], "empty"),
    ([[0.5, 0.6]], [[1, 0]], "one-dimensional"),
]


@pytest.mark.parametrize("function", DATA_FUNCTIONS)
@pytest.mark.parametrize(("conf", "correct", "message"), BAD_DATA)
def test_bad_data_raises(function, conf, correct, message):
    with pytest.raises(ValueError, match=message):
        function(conf, correct)


def test_accepts_bool_and_pandas_input():
    conf = pd.Series(SLIDES_CONF)
    correct = pd.Series(SLIDES_CORRECT).astype(bool)
    assert expected_calibration_error(conf, correct, n_bins=2) == pytest.approx(0.225, abs=1e-12)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: bin_index([0.5], n_bins=0), "n_bins"),
        (lambda: bin_index([0.5], n_bins=2.5), "n_bins"),
        (lambda: bin_index([0.5], binning="equal"), "binning"),
        (lambda: bin_index([np.nan]), "confidence contains NaN"),
        (lambda: bin_index([]), "empty"),
        (lambda: expected_calibration_error([0.5], [1], binning="kmeans"), "binning"),
        (lambda: ece_interval([0.5], [1], n_boot=0), "n_boot"),
        (lambda: ece_interval([0.5], [1], level=1.0), "level"),
        (lambda: reliability_table([0.5], [1], alpha=0), "alpha"),
        (lambda: accuracy_at_coverage([0.5], [1], coverage=0), "coverage"),
        (lambda: accuracy_at_coverage([0.5], [1], coverage=1.5), "coverage"),
    ],
)
def test_bad_parameters_raise(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# ------------------------------------------------------------------------------------------
# area_interval
# ------------------------------------------------------------------------------------------


def test_area_interval_replicates_equal_area_of_explicit_resamples(monkeypatch):
    rng = np.random.default_rng(11)
    conf = np.round(rng.random(50), 1)  # many ties
    correct = (rng.random(50) < conf).astype(float)
    conf_sorted, correct_sorted = calibration._sort_with_labels(conf, correct)
    counts = np.stack([np.bincount(d, minlength=50) for d in rng.integers(0, 50, size=(6, 50))])
    monkeypatch.setattr(calibration, "_resample_counts", lambda rng, n, k: counts[:k])
    result = calibration.area_interval(conf, correct, n_boot=6, level=0.5, seed=0)
    explicit = [coverage_accuracy_area(np.repeat(conf_sorted, c), np.repeat(correct_sorted, c)) for c in counts]
    assert (result.ci_low, result.ci_high) == pytest.approx(tuple(np.quantile(explicit, [0.25, 0.75])), abs=1e-12)
    assert result.area == pytest.approx(coverage_accuracy_area(conf, correct), abs=1e-15)


def test_area_interval_covers_the_true_area():
    # correct ~ Bernoulli(c), c ~ U(0, 1): a(coverage q) = mean of c over the top q = 1 - q / 2,
    # so the true area is the integral of 1 - q/2 over [0, 1] = 3/4.
    covered = 0
    for seed in range(20):
        conf, correct = calibrated_model(2_000, seed=seed)
        result = calibration.area_interval(conf, correct, n_boot=200, seed=seed)
        assert result.ci_low <= result.area <= result.ci_high
        covered += result.ci_low < 0.75 < result.ci_high
    assert covered >= 16
