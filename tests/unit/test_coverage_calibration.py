"""Coverage of the calibration intervals (benchmarks/coverage/calibration.py holds the populations and the full table).

Each coverage test fails when the measured coverage is more than 3 points below nominal beyond Monte Carlo noise:
``measured + 2 MC SE >= nominal - 0.03`` (MC SE = sqrt(c (1 - c) / reps)). Seeded; a few seconds each.
"""

import numpy as np
import pytest

from benchmarks import ece_coverage
from benchmarks.coverage import calibration as cov
from evalcore.calibration import estimators as cal
from evalcore.stats.intervals import wilson_interval


def holds(row) -> bool:
    return row.measured + 2 * row.mc_se >= row.nominal - 0.03


def test_selective_interval_inflation_by_hand():
    # 16 examples by decreasing confidence; the top 8 (q = 1/2) hold 7 correct: a = 7/8. h = ceil(sqrt 16) = 4, so
    # the accuracy at the threshold is that of ranks 5-12: (8 - 4) / 8 = 1/2. Jeffreys mean 7.5 / 9, variance
    # 7.5 * 1.5 / 81; inflation 1 + (1/2) (7/8 - 1/2)^2 / (7.5 * 1.5 / 81) = 1.50625; effective count 8 / 1.50625.
    correct = np.array([1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0], float)
    conf = np.linspace(0.99, 0.5, 16)
    result = cal.accuracy_at_coverage(conf, correct, coverage=0.5)
    assert (result.n_covered, result.accuracy) == (8, 7 / 8)
    inflation = 1 + 0.5 * (7 / 8 - 1 / 2) ** 2 / (7.5 * 1.5 / 81)
    assert inflation == pytest.approx(1.50625)
    low, high = wilson_interval(7 / 8 * 8 / inflation, 8 / inflation)
    assert (result.ci_low, result.ci_high) == pytest.approx((float(low), float(high)), abs=1e-12)
    plain = wilson_interval(7, 8)
    assert result.ci_high - result.ci_low > float(plain[1] - plain[0])  # wider than the plain Wilson interval
    # all examples (q = 1): no threshold, the plain Wilson interval
    everything = cal.accuracy_at_coverage(conf, correct, coverage=1.0)
    assert (everything.ci_low, everything.ci_high) == pytest.approx(tuple(map(float, wilson_interval(8, 16))))
    # the curve's row at the same coverage carries the same interval
    curve = cal.selective_prediction_curve(conf, correct)
    assert curve.loc[7, ["ci_low", "ci_high"]].tolist() == pytest.approx([result.ci_low, result.ci_high])


def test_beta_selective_truth_is_the_top_fraction_accuracy():
    # the closed form against a large simulated population
    rng = np.random.default_rng(0)
    conf = rng.beta(5, 2, 400_000)
    assert cov.beta_selective_truth(0.8) == pytest.approx(cov.top_accuracy(conf, conf, 0.8), abs=2e-3)


def test_selective_coverage_simulated():
    (row,) = [r for r in cov.selective_rows(300, 1, [("simulated", cov._beta_draw, cov.beta_selective_truth)])
              if r.setting.endswith("q=0.8")]
    assert holds(row), row


def test_selective_coverage_imagenet_x(shared_file):
    shared_file("imagenet_x_predictions.csv.gz")
    conf, correct = cov._imagenet()["DINO"]  # the model the plain Wilson interval covered worst
    rows = cov.selective_rows(300, 1, [("DINO", ece_coverage.subsampler(conf, correct),
                                        lambda q: cov.top_accuracy(conf, correct, q))])
    assert all(holds(r) for r in rows), rows


def test_engine_ece_and_bin_coverage_simulated():
    case = ece_coverage.beta_case(0.9, cov.N)
    ece_row, bin_row = cov.engine_rows(100, 1, [(case.name, case.draw, case.truth, cov._beta_bin_accuracy(0.9))])
    assert ece_row.reps == 100 and holds(ece_row), ece_row
    assert holds(bin_row), bin_row
