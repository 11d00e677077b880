"""Confidence sequences: intervals that hold at every sample size at once, so a rule on the estimate crossing a value
("stop when the interval excludes zero"), read after every label, keeps its error rate.

:func:`betting_cs` is the hedged-capital betting confidence sequence for the mean of a finite population of values in
[0, 1] sampled without replacement (Waudby-Smith & Ramdas, *Estimating means of bounded random variables by
betting*, JRSS-B 2024, Theorem 3 and eq. (26); *Confidence sequences for sampling without replacement*, NeurIPS 2020,
for the conditional mean). For a candidate mean m of a population of N values, after t - 1 draws summing to
``S_{t-1}`` the next draw's conditional mean is ``μ_t(m) = (N m - S_{t-1}) / (N - t + 1)``; two gamblers bet on
the next draw being above and below it,

    ``K_t⁺(m) = Π_{i≤t} (1 + λ_i⁺ (y_i - μ_i(m)))``,  ``K_t⁻(m) = Π_{i≤t} (1 - λ_i⁻ (y_i - μ_i(m)))``,

with the predictable plug-in bet ``λ_i = sqrt(2 log(2/α) / (σ̂²_{i-1} i log(1 + i)))`` truncated at
``c / μ_i(m)`` and ``c / (1 - μ_i(m))`` (c = 1/2), ``σ̂²`` the regularised running variance
``(1/4 + Σ (y_j - μ̂_j)²) / (t + 1)`` and ``μ̂_t = (1/2 + Σ y_j) / (t + 1)``. Their average
``K_t = (K_t⁺ + K_t⁻) / 2`` is a non-negative martingale with initial value 1 under m, so by Ville's inequality
``P(∃ t: K_t(m) ≥ 1/α) ≤ α``: the set of m whose capital has never reached ``1/α`` is a (1 - α) confidence
sequence. A candidate m that the draws already contradict (``μ_t(m)`` outside [0, 1]) is excluded.

Neither reference package installs here (``confseq`` needs a C++ toolchain with Boost, ``expectation`` Python 3.12),
so this is written with numpy, vectorised over a grid of candidate means and every sample size at once, and tested
by its definition (by hand on small samples) and by simulation: its miscoverage over all sample sizes at once is
at most α (``tests/unit/test_sequential.py``).
"""

from __future__ import annotations

import math

import numpy as np

#: the bets' truncation: never more than half of what would lose everything on one draw
TRUNCATION = 0.5
#: candidate means on [0, 1]: the sequence is the hull of the candidates never excluded, widened by one step of the
#: grid (1 / (GRID - 1)) on each side so that no mean between two grid points is left out
GRID = 1001
#: rows of the (draws x candidates) capital matrix computed at a time: after each block the candidates already
#: excluded are dropped, so a long sequence costs little more than its first blocks
_CHUNK = 128


def _bets(y: np.ndarray, alpha: float) -> np.ndarray:
    """The predictable plug-in bets λ_1..λ_n (λ_t uses the draws before t only)."""
    t = np.arange(1, y.size + 1, dtype=float)
    mean = (0.5 + np.cumsum(y)) / (t + 1)
    previous_mean = np.r_[0.5, mean[:-1]]
    var = (0.25 + np.cumsum((y - previous_mean) ** 2)) / (t + 1)
    previous_var = np.r_[0.25, var[:-1]]
    return np.sqrt(2 * math.log(2 / alpha) / (previous_var * t * np.log1p(t)))


def betting_cs(y, population: int, alpha: float, grid: int = GRID) -> tuple[np.ndarray, np.ndarray]:
    """The (1 - ``alpha``) betting confidence sequence for the mean of a population of ``population`` values in
    [0, 1] from the draws ``y`` (in the order drawn, without replacement): arrays ``low``, ``high`` of the sequence
    after each draw (the running intersection: each at least as narrow as the one before). See the module
    docstring."""
    y = np.asarray(y, dtype=float)
    n = y.size
    if n == 0:
        return np.zeros(0), np.zeros(0)
    if not (np.isfinite(y).all() and (y >= 0).all() and (y <= 1).all()):
        raise ValueError("betting_cs needs values in [0, 1].")
    if n > population:
        raise ValueError(f"{n} draws without replacement from a population of {population}.")
    m = np.linspace(0.0, 1.0, grid)
    lam = _bets(y, alpha)
    before = np.r_[0.0, np.cumsum(y)[:-1]]  # S_{t-1}
    remaining = population - np.arange(n, dtype=float)  # N - t + 1
    alive = np.arange(grid)  # candidates not excluded yet (once excluded, always: computed no further)
    log_up = np.zeros(grid)
    log_down = np.zeros(grid)
    low, high = np.full(n, np.nan), np.full(n, np.nan)
    threshold = math.log(1 / alpha)
    for start in range(0, n, _CHUNK):
        if not alive.size:
            break
        rows = slice(start, min(start + _CHUNK, n))
        mu = (population * m[alive][None, :] - before[rows, None]) / remaining[rows, None]
        impossible = (mu < 0) | (mu > 1)
        mu_c = np.clip(mu, 1e-12, 1 - 1e-12)
        step = y[rows, None] - mu_c
        up = np.minimum(lam[rows, None], TRUNCATION / mu_c)
        down = np.minimum(lam[rows, None], TRUNCATION / (1 - mu_c))
        cum_up = log_up[alive] + np.cumsum(np.log1p(up * step), axis=0)
        cum_down = log_down[alive] + np.cumsum(np.log1p(-down * step), axis=0)
        log_capital = np.logaddexp(cum_up, cum_down) - math.log(2)
        kept = ~np.logical_or.accumulate(impossible | (log_capital >= threshold), axis=0)
        some = kept.any(axis=1)
        first = alive[np.argmax(kept, axis=1)]
        last = alive[kept.shape[1] - 1 - np.argmax(kept[:, ::-1], axis=1)]
        low[rows] = np.where(some, m[np.maximum(first - 1, 0)], np.nan)
        high[rows] = np.where(some, m[np.minimum(last + 1, grid - 1)], np.nan)
        log_up[alive], log_down[alive] = cum_up[-1], cum_down[-1]
        alive = alive[kept[-1]]
    return low, high
