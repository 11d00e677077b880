"""The betting confidence sequence (evalcore.stats.sequential): its definition by hand, its coverage over every
sample size at once by simulation with known truth, and its census."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evalcore.stats.sequential import TRUNCATION, betting_cs


def _capital_by_hand(y, population: int, m: float, alpha: float) -> float:
    """The largest hedged capital (K⁺ + K⁻)/2 over the draws for the candidate mean m, written out as the paper's
    recursion, one draw at a time (Waudby-Smith & Ramdas 2024, eq. (26); without replacement, NeurIPS 2020)."""
    up = down = 1.0
    best = 1.0
    total, mean_sum, var_sum = 0.0, 0.0, 0.0
    for t, value in enumerate(y, start=1):
        mu_hat = (0.5 + mean_sum) / t  # μ̂_{t-1} = (1/2 + Σ_{i<t} y_i) / t
        var_hat = (0.25 + var_sum) / t
        lam = math.sqrt(2 * math.log(2 / alpha) / (var_hat * t * math.log(1 + t)))
        mu = (population * m - total) / (population - t + 1)
        if not 0 <= mu <= 1:
            return math.inf
        mu = min(max(mu, 1e-12), 1 - 1e-12)
        up *= 1 + min(lam, TRUNCATION / mu) * (value - mu)
        down *= 1 - min(lam, TRUNCATION / (1 - mu)) * (value - mu)
        best = max(best, (up + down) / 2)
        total += value
        mean_sum += value
        var_sum += (value - (0.5 + mean_sum - value) / t) ** 2
    return best


def test_the_sequence_is_the_set_of_means_whose_capital_never_reached_one_over_alpha():
    rng = np.random.default_rng(3)
    y = (rng.random(60) < 0.7).astype(float)
    low, high = betting_cs(y, 500, 0.05, grid=201)
    grid = np.linspace(0, 1, 201)
    kept = [m for m in grid if _capital_by_hand(y, 500, m, 0.05) < 20]
    assert kept, "the sequence is never empty here"
    step = grid[1] - grid[0]
    assert low[-1] == pytest.approx(max(min(kept) - step, 0)) and high[-1] == pytest.approx(min(max(kept) + step, 1))
    assert np.all(np.diff(low) >= 0) and np.all(np.diff(high) <= 0)  # a running intersection


@pytest.mark.parametrize("values", ["0/1", "0, 1/2, 1"])
def test_it_covers_at_every_sample_size_at_once(values):
    """300 populations of 800 values, each sampled without replacement to 400 draws: the sequence misses the mean
    at some draw in at most α + 2 Monte Carlo s.e. of them (a fixed-n 95% interval read after every draw misses far
    more often: checked alongside, the check can fail)."""
    rng = np.random.default_rng(11)
    misses = naive = 0
    reps = 300
    for _ in range(reps):
        pop = (rng.random(800) < 0.35).astype(float)
        if values != "0/1":
            pop = pop / 2 + (rng.random(800) < 0.3) / 2
        y = pop[rng.permutation(800)[:400]]
        low, high = betting_cs(y, 800, 0.05)
        truth = pop.mean()
        misses += bool(((low > truth) | (high < truth)).any())
        n = np.arange(1, 401)
        mean = np.cumsum(y) / n
        sd = np.sqrt(np.maximum(np.cumsum(y * y) / n - mean**2, 1e-12))
        half = 1.96 * sd / np.sqrt(n) * np.sqrt(1 - n / 800)
        naive += bool((np.abs(mean - truth)[19:] > half[19:]).any())
    assert misses / reps <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / reps)
    assert naive / reps > 0.15


def test_a_census_pins_the_mean():
    rng = np.random.default_rng(0)
    pop = (rng.random(300) < 0.4).astype(float)
    low, high = betting_cs(pop[rng.permutation(300)], 300, 0.05)
    # the last draw is the one value left: the mean is known to within 1/N (and a grid step each side)
    assert low[-1] <= pop.mean() <= high[-1] and high[-1] - low[-1] <= 1 / 300 + 2.5 / 1000


def test_values_outside_zero_one_are_refused():
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        betting_cs([0.5, 1.5], 10, 0.05)
