"""evalcore.leaderboard.mcmc: rank-normalized R-hat and bulk / tail ESS (Vehtari et al. 2021) on known answers.

iid chains: R-hat ~ 1 and ESS ~ the number of draws; AR(1) chains x_t = rho x_{t-1} + e_t: ESS = S (1 - rho) /
(1 + rho); chains with shifted means: R-hat >> 1; chains differing only in scale: the classic split-R-hat misses
it, the folded (rank) R-hat does not (the paper's Figure 3 example).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.signal import lfilter
from scipy.stats import multivariate_normal, norm

from evalcore.leaderboard.mcmc import convergence_problems, ess_bulk, ess_tail, rank_rhat, split_rhat


def _ar1(rho: float, chains: int, draws: int, seed: int) -> np.ndarray:
    e = np.random.default_rng(seed).standard_normal((chains, draws + 200))
    return lfilter([1.0], [1.0, -rho], e, axis=1)[:, 200:]  # burn 200 to reach stationarity


def test_iid_chains_converge_with_full_ess():
    x = np.random.default_rng(0).standard_normal((4, 2000, 3))
    assert (rank_rhat(x) < 1.005).all()
    np.testing.assert_allclose(ess_bulk(x), 8000, rtol=0.1)
    np.testing.assert_allclose(ess_tail(x), 8000, rtol=0.2)
    assert not convergence_problems(rank_rhat(x), ess_bulk(x), ess_tail(x))


def _tail_ess_ar1(rho: float, draws: int) -> float:
    """Exact ESS of the indicator x <= q_0.05 of a Gaussian AR(1): S / (1 + 2 sum_k corr_k), with
    corr_k = (Phi_2(q, q; rho^k) - p^2) / (p (1 - p)) (bivariate normal CDF)."""
    q, p, total = norm.ppf(0.05), 0.05, 0.0
    for k in range(1, 400):
        r = rho**k
        if r < 1e-6:
            break
        total += (multivariate_normal(mean=[0, 0], cov=[[1, r], [r, 1]]).cdf([q, q]) - p * p) / (p * (1 - p))
    return draws / (1 + 2 * total)


@pytest.mark.parametrize("rho", [0.5, 0.9])
def test_ar1_chains_have_the_known_ess(rho):
    x = _ar1(rho, 4, 10000, seed=1)
    assert ess_bulk(x) == pytest.approx(40000 * (1 - rho) / (1 + rho), rel=0.15)  # Gaussian: ranks change nothing
    assert ess_tail(x) == pytest.approx(_tail_ess_ar1(rho, 40000), rel=0.15)  # 23,700 at 0.5; 4,670 at 0.9
    assert rank_rhat(x) < 1.01


def test_shifted_chains_are_flagged():
    x = np.random.default_rng(2).standard_normal((4, 1000))
    x[0] += 1.0
    assert rank_rhat(x) > 1.05
    problems = convergence_problems(rank_rhat(x), ess_bulk(x), ess_tail(x))
    assert problems and "R-hat" in problems[0]


def test_scale_difference_is_seen_by_the_folded_rhat_only():
    x = np.random.default_rng(3).standard_normal((4, 1000))
    x[0] *= 3.0  # same mean, one chain three times as wide
    assert split_rhat(x) < 1.01  # the classic R-hat compares means only
    assert rank_rhat(x) > 1.05


def test_heavy_tails_and_constants_are_defined():
    x = np.random.default_rng(4).standard_cauchy((4, 1000))
    assert rank_rhat(x) < 1.01 and ess_bulk(x) == pytest.approx(4000, rel=0.15)  # ranks tame the Cauchy tails
    const = np.ones((4, 100))
    assert rank_rhat(const) == 1.0 and ess_bulk(const) == 400 and ess_tail(const) == 400


def test_few_draws_are_refused():
    with pytest.raises(ValueError, match="at least 4 draws"):
        rank_rhat(np.zeros((2, 3)))


def test_problems_name_the_failing_diagnostics():
    assert convergence_problems(1.008, 500.0, 450.0) == []
    said = convergence_problems(1.038, 100.0, 90.0)
    assert len(said) == 3 and "1.038" in said[0] and "100" in said[1] and "90" in said[2]


def test_vectorised_ranks_average_ties_as_scipy():
    from scipy.stats import rankdata

    from evalcore.leaderboard.mcmc import _average_ranks, diagnose

    flat = np.random.default_rng(6).integers(0, 5, size=(200, 7)).astype(float)  # many ties
    np.testing.assert_array_equal(_average_ranks(flat), rankdata(flat, axis=0))
    x = _ar1(0.5, 4, 500, seed=7)[..., None] * [1.0, 2.0]
    rhat, bulk, tail = diagnose(x)
    np.testing.assert_array_equal(rhat, rank_rhat(x))
    np.testing.assert_array_equal(bulk, ess_bulk(x))
    np.testing.assert_array_equal(tail, ess_tail(x))
