"""Wilson score interval: hand computations, reference values, edge cases and input errors."""

import math

import numpy as np
import pytest
from scipy.stats import binomtest

from evalcore.stats.intervals import wilson_interval

Z95 = 1.959963984540054  # Phi^{-1}(0.975)
Z90 = 1.6448536269514722  # Phi^{-1}(0.95)


def wilson_by_hand(k, n, z):
    """The textbook (proportion) form, written independently of the implementation."""
    p = k / n
    denom = 1 + z**2 / n
    center = (p + z**2 / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z**2 / (4 * n**2))
    return center - half, center + half


def test_two_of_four_matches_hand_computation():
    low, high = wilson_interval(2, 4)
    # p = 0.5 so the interval is symmetric: 0.5 -+ z/(1 + z^2/4) * sqrt(1/16 + z^2/64)
    half = Z95 / (1 + Z95**2 / 4) * math.sqrt(0.25 / 4 + Z95**2 / 64)
    assert low == pytest.approx(0.5 - half, abs=1e-12)
    assert high == pytest.approx(0.5 + half, abs=1e-12)
    assert low == pytest.approx(0.15003898915214953, abs=1e-12)
    assert high == pytest.approx(0.8499610108478505, abs=1e-12)


def test_zero_of_ten_known_upper_bound():
    low, high = wilson_interval(0, 10)
    assert low == 0.0
    assert high == pytest.approx(Z95**2 / (10 + Z95**2), abs=1e-15)  # z^2 / (n + z^2)
    assert high == pytest.approx(0.27753279986288926, abs=1e-15)  # scipy binomtest, "wilson"


def test_all_successes_upper_bound_is_one():
    low, high = wilson_interval(10, 10)
    assert high == 1.0
    assert low == pytest.approx(10 / (10 + Z95**2), rel=1e-12)


def test_alpha_sets_the_level():
    low, high = wilson_interval(3, 7, alpha=0.10)
    exp_low, exp_high = wilson_by_hand(3, 7, Z90)
    assert low == pytest.approx(exp_low, abs=1e-12)
    assert high == pytest.approx(exp_high, abs=1e-12)
    wide_low, wide_high = wilson_interval(3, 7, alpha=0.05)
    assert wide_low < low < high < wide_high


def test_vectorised_against_scipy_reference():
    k = np.array([[0, 1, 5], [17, 50, 99]])
    n = np.array([[5, 3, 5], [40, 100, 100]])
    low, high = wilson_interval(k, n, alpha=0.01)
    assert low.shape == high.shape == k.shape
    for i, j in np.ndindex(k.shape):
        ref = binomtest(int(k[i, j]), int(n[i, j])).proportion_ci(0.99, method="wilson")
        assert low[i, j] == pytest.approx(ref.low, abs=1e-12)
        assert high[i, j] == pytest.approx(ref.high, abs=1e-12)


def test_n_zero_gives_nan_and_broadcasts():
    low, high = wilson_interval(np.array([0, 2, 0]), np.array([10, 4, 0]))
    assert np.isnan(low[2]) and np.isnan(high[2])
    assert not np.isnan(low[:2]).any() and not np.isnan(high[:2]).any()
    scalar_low, scalar_high = wilson_interval(0, 0)
    assert np.isnan(scalar_low) and np.isnan(scalar_high)


def test_bounds_stay_in_unit_interval_and_bracket_estimate():
    n = np.arange(1, 60)
    for k in (np.zeros_like(n), n // 3, n):
        low, high = wilson_interval(k, n)
        assert ((0 <= low) & (low <= k / n) & (k / n <= high) & (high <= 1)).all()


@pytest.mark.parametrize(
    ("k", "n", "alpha", "message"),
    [
        (1, 4, 0.0, "alpha"),
        (1, 4, 1.5, "alpha"),
        (5, 4, 0.05, "successes"),
        (-1, 4, 0.05, "successes"),
        (0, -1, 0.05, "n must be"),
        (float("nan"), 4, 0.05, "NaN"),
    ],
)
def test_invalid_input_raises(k, n, alpha, message):
    with pytest.raises(ValueError, match=message):
        wilson_interval(k, n, alpha)
