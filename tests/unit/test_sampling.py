"""evalcore.sampling.designs: stratified sampling designs and estimators (Fogliato et al., Sections 3-4, Appendix A).

Known answers: hand-computed HT (eq. 1) and DF (eq. 2) estimates; the analytic design variances (eqs. 3-5, with
the exact S_h) against Monte Carlo; Proposition 1's ordering; allocation rules; error messages.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalcore.data.reading import EvalDataError
from evalcore.sampling.designs import (
    stratum_variance, allocate_budget, design_efficiency, draw_sample, estimate, feature_strata, group_strata, kmeans_strata, labels_needed, monte_carlo, predicted_mse, stratum_spread,
)

# ---------------------------------------------------------------------------------------------- tiny population

STRATA = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1, 1])
Z = np.array([1, 0, 1, 1, 1, 1, 0, 1, 0, 1], dtype=float)
PROXY = np.array([0.8, 0.4, 0.5, 0.5, 0.9, 0.7, 0.3, 0.6, 0.6, 0.6])
SAMPLE = np.array([0, 1, 4, 5, 6])


def test_ht_by_hand():
    # W = (4/10, 6/10); stratum 0 sample z = (1, 0): mean 0.5, s^2 = 0.5; stratum 1 z = (1, 1, 0): mean 2/3,
    # s^2 = (1/9 + 1/9 + 4/9) / 2 = 1/3.  theta = 0.4 * 0.5 + 0.6 * 2/3 = 0.6.
    # Var = 0.16 * (1 - 2/4) * 0.5 / 2 + 0.36 * (1 - 3/6) * (1/3) / 3 = 0.02 + 0.02 = 0.04, se = 0.2.
    e = estimate(Z, SAMPLE, STRATA)
    assert e.estimate == pytest.approx(0.6)
    assert e.se == pytest.approx(0.2)
    assert e.ci_low == pytest.approx(0.6 - 1.959963984540054 * 0.2)
    assert e.ci_high == pytest.approx(0.6 + 1.959963984540054 * 0.2)
    assert e.n == 5 and e.coefficient == 0.0 and e.counts.tolist() == [2, 3]
    # z aligned with the sample gives the same answer
    assert estimate(Z[SAMPLE], SAMPLE, STRATA).estimate == pytest.approx(0.6)
    # values outside the sample are ignored (may be NaN)
    zn = Z.copy()
    zn[[2, 3, 7, 8, 9]] = np.nan
    assert estimate(zn, SAMPLE, STRATA).estimate == pytest.approx(0.6)


def test_df_by_hand():
    # mean proxy over the pool = (0.8+0.4+0.5+0.5 + 0.9+0.7+0.3+0.6+0.6+0.6) / 10 = 0.59.
    # residuals: stratum 0 (0.2, -0.4): mean -0.1, s^2 = 0.18; stratum 1 (0.1, 0.3, -0.3): mean 1/30,
    # s^2 = ((1/15)^2 + (4/15)^2 + (1/3)^2) / 2 = 0.09333...
    # theta = 0.59 + 0.4 * (-0.1) + 0.6 / 30 = 0.57
    # Var = 0.16 * 0.5 * 0.18 / 2 + 0.36 * 0.5 * 0.093333 / 3 = 0.0072 + 0.0056 = 0.0128
    e = estimate(Z, SAMPLE, STRATA, proxy=PROXY, estimator="df")
    assert e.estimate == pytest.approx(0.57)
    assert e.se == pytest.approx(np.sqrt(0.0128))
    assert e.coefficient == 1.0


def test_df_tuned_coefficient_by_hand():
    # a_h = W_h^2 (1 - f_h) / n_h = (0.16 * 0.5 / 2, 0.36 * 0.5 / 3) = (0.04, 0.06)
    # stratum 0: cov(z, p) = (0.5 * 0.2 + (-0.5) * (-0.2)) / 1 = 0.2, var(p) = 0.08
    # stratum 1: z = (1, 1, 0) (mean 2/3), p = (0.9, 0.7, 0.3) (mean 0.6333):
    #   cov = ((1/3)(0.2667) + (1/3)(0.0667) + (-2/3)(-0.3333)) / 2 = 0.16667,
    #   var(p) = (0.0711 + 0.0044 + 0.1111) / 2 = 0.09333
    # c = (0.04 * 0.2 + 0.06 * 0.16667) / (0.04 * 0.08 + 0.06 * 0.09333) = 0.018 / 0.0088
    e = estimate(Z, SAMPLE, STRATA, proxy=PROXY, estimator="df_tuned")
    c = 0.018 / 0.0088
    assert e.coefficient == pytest.approx(c)
    r = Z - c * PROXY
    theta = c * 0.59 + 0.4 * r[[0, 1]].mean() + 0.6 * r[[4, 5, 6]].mean()
    assert e.estimate == pytest.approx(theta)


def test_estimate_errors():
    with pytest.raises(EvalDataError, match="Stratum 1 has 1 label"):
        estimate(Z, np.array([0, 4, 5]), STRATA)
    zn = Z.copy()
    zn[4] = np.nan
    with pytest.raises(EvalDataError, match="no label value"):
        estimate(zn, SAMPLE, STRATA)
    with pytest.raises(EvalDataError, match="outside the pool"):
        estimate(Z, np.array([0, 1, 4, 5, 10]), STRATA)
    with pytest.raises(EvalDataError, match="repeated"):
        estimate(Z, np.array([0, 1, 4, 4, 5]), STRATA)
    with pytest.raises(EvalDataError, match="needs the proxy"):
        estimate(Z, SAMPLE, STRATA, estimator="df")
    pn = PROXY.copy()
    pn[9] = np.nan
    with pytest.raises(EvalDataError, match="proxy"):
        estimate(Z, SAMPLE, STRATA, proxy=pn, estimator="df")


# ---------------------------------------------------------------------------------------------- populations


def _population(n=4000, seed=1):
    rng = np.random.default_rng(seed)
    proxy = rng.beta(4, 1.5, n)
    z = (rng.random(n) < proxy).astype(float)
    return z, proxy


def _mc_variance(z, proxy, strata, alloc, estimator, reps, seed):
    ss = np.random.SeedSequence(seed).spawn(reps)
    vals = np.empty(reps)
    for i, s in enumerate(ss):
        idx = draw_sample(strata, alloc, seed=s)
        vals[i] = estimate(z, idx, strata, proxy=proxy, estimator=estimator).estimate
    return vals


@pytest.mark.parametrize("estimator", ["ht", "df"])
@pytest.mark.parametrize("design", ["srs", "proportional", "neyman"])
def test_design_variance_matches_monte_carlo(design, estimator):
    z, proxy = _population(3000)
    n = 120
    strata = np.zeros(z.size, int) if design == "srs" else kmeans_strata(proxy, 4)
    values = z if estimator == "ht" else z - proxy
    spread = np.sqrt(stratum_variance(strata, values))  # the exact S_h of Z (HT) or Z - Zhat (DF)
    if design == "srs":
        alloc = np.array([n])
    else:
        alloc = allocate_budget(strata, n, design, spread=spread)
    predicted = predicted_mse(proxy, strata, alloc, estimator, spread=spread)
    # fast vectorised Monte Carlo through monte_carlo's machinery is tested elsewhere; here 20,000 replicates of
    # the plain estimator with the design's allocation
    from evalcore.stats.parallel import random_subsets
    from evalcore.sampling.designs import _members, _combine

    rng = np.random.default_rng(11)
    reps = 20000
    nh = np.bincount(strata)
    means = np.zeros((reps, nh.size))
    for h, m in enumerate(_members(strata, nh)):
        pos = random_subsets(rng, nh[h], int(alloc[h]), reps)
        means[:, h] = values[m[pos]].mean(axis=1)
    theta, _ = _combine(nh / nh.sum(), nh, alloc, means, np.zeros_like(means))
    assert np.var(theta, ddof=1) == pytest.approx(predicted, rel=0.05)


def test_design_variance_monte_carlo_with_public_functions():
    # the same check with draw_sample + estimate (fewer replicates, so a looser tolerance)
    z, proxy = _population(2000, seed=4)
    strata = kmeans_strata(proxy, 3)
    spread = np.sqrt(stratum_variance(strata, z))
    alloc = allocate_budget(strata, 60, "proportional")
    vals = _mc_variance(z, proxy, strata, alloc, "ht", 3000, 0)
    assert np.var(vals, ddof=1) == pytest.approx(predicted_mse(proxy, strata, alloc, spread=spread), rel=0.1)


def test_proposition_1_ordering_with_exact_spread():
    z, proxy = _population(20000, seed=2)
    strata = kmeans_strata(proxy, 6)
    for estimator, values in (("ht", z), ("df", z - proxy)):
        spread = np.sqrt(stratum_variance(strata, values))
        srs_spread = np.sqrt(stratum_variance(np.zeros(z.size, int), values))
        for n in (100, 500, 2000):
            v_srs = predicted_mse(proxy, np.zeros(z.size, int), [n], estimator, spread=srs_spread)
            v_p = predicted_mse(proxy, strata, allocate_budget(strata, n, "proportional"), estimator, spread=spread)
            v_o = predicted_mse(proxy, strata, allocate_budget(strata, n, "neyman", spread=spread), estimator,
                                spread=spread)
            assert v_o <= v_p * (1 + 1e-3) and v_p <= v_srs


# ---------------------------------------------------------------------------------------------- allocation


def test_allocation_rules():
    rng = np.random.default_rng(0)
    strata = np.repeat(np.arange(5), [500, 300, 100, 50, 10])
    proxy = np.concatenate([np.full(500, 0.99), np.full(300, 0.9), np.full(100, 0.7), np.full(50, 0.5),
                            rng.random(10)])
    for budget in (10, 37, 200, 555, 960):
        for method in ("proportional", "neyman"):
            a = allocate_budget(strata, budget, method, proxy=proxy)
            assert a.sum() == budget
            assert (a >= 2).all() and (a <= np.bincount(strata)).all()
    a = allocate_budget(strata, 192, "proportional")
    assert a.tolist() == [100, 60, 20, 10, 2]  # exactly proportional
    a = allocate_budget(strata, 150, "proportional")
    exact = 150 * np.array([500, 300, 100, 50, 10]) / 960
    assert np.all(np.abs(a - exact) < 1)
    # 96 labels: stratum 4's share (1) is clamped to 2 and the other 94 go proportionally to the rest:
    # 94 * (500, 300, 100, 50) / 950 = (49.47, 29.68, 9.89, 4.95) -> largest remainders -> (49, 30, 10, 5)
    assert allocate_budget(strata, 96, "proportional").tolist() == [49, 30, 10, 5, 2]
    spread = np.array([0.1, 0.3, 0.2, 0.5, 0.0])
    a = allocate_budget(strata, 200, "neyman", spread=spread)
    target = np.array([500, 300, 100, 50, 10]) * spread
    free = a[:4]  # stratum 4 (S_h = 0) is clamped to 2; the rest follow N_h S_h
    cont = (200 - 2) * target[:4] / target[:4].sum()
    assert np.all(np.abs(free - cont) < 1) and a[4] == 2
    # all spreads zero -> proportional
    assert allocate_budget(strata, 96, "neyman", spread=np.zeros(5)).tolist() == [49, 30, 10, 5, 2]
    # caps: a tiny stratum cannot exceed N_h and the remainder goes elsewhere
    a = allocate_budget(np.repeat([0, 1], [1000, 3]), 100, "neyman", spread=[0.01, 10.0])
    assert a.tolist() == [97, 3]
    # empty strata (unused labels) get 0
    a = allocate_budget(np.repeat([0, 2], [50, 50]), 10)
    assert a.tolist() == [5, 0, 5]


def test_allocation_errors():
    strata = np.repeat([0, 1, 2], [5, 5, 5])
    with pytest.raises(EvalDataError, match="exceeds the pool of N = 15"):
        allocate_budget(strata, 16)
    with pytest.raises(EvalDataError, match="at most budget // 2 = 2"):
        allocate_budget(strata, 5)
    with pytest.raises(EvalDataError, match="only 1 example"):
        allocate_budget(np.array([0, 0, 0, 1]), 3)
    for bad in (-1, 2.5, "x"):
        with pytest.raises(EvalDataError, match="whole number"):
            allocate_budget(strata, bad)
    with pytest.raises(EvalDataError, match="proxy"):
        allocate_budget(strata, 6, "neyman")


def test_stratum_spread_plugins():
    strata = np.array([0, 0, 1, 1])
    p = np.array([0.2, 0.4, 0.9, 0.7])
    assert stratum_spread(strata, p) == pytest.approx(np.sqrt([0.3 * 0.7, 0.8 * 0.2]))
    assert stratum_spread(strata, p, "df") == pytest.approx(np.sqrt([(0.16 + 0.24) / 2, (0.09 + 0.21) / 2]))
    q = p**2 + 0.01
    assert stratum_spread(strata, p, "ht", "brier", q) == pytest.approx(np.sqrt([0.01 + 0.01, 0.01 + 0.01]))
    assert stratum_spread(strata, p, "df", "brier", q) == pytest.approx([0.1, 0.1])
    assert stratum_spread(strata, p, "ht", "brier") == pytest.approx([0.1, 0.1])
    with pytest.raises(EvalDataError, match="proxy_sq"):
        stratum_spread(strata, p, "df", "brier")


# ---------------------------------------------------------------------------------------------- sampling


def test_draw_sample():
    strata = np.repeat([0, 1, 2], [40, 30, 30])
    alloc = [5, 3, 7]
    idx = draw_sample(strata, alloc, seed=3)
    assert np.bincount(strata[idx], minlength=3).tolist() == alloc
    assert np.unique(idx).size == idx.size and np.all(np.diff(idx) > 0)
    assert np.array_equal(idx, draw_sample(strata, alloc, seed=3))
    assert not np.array_equal(idx, draw_sample(strata, alloc, seed=4))
    srs = draw_sample(np.zeros(100, int), [10], seed=1)
    assert srs.size == 10
    with pytest.raises(EvalDataError, match="only 30"):
        draw_sample(strata, [5, 31, 1])


def test_strata_builders():
    p = np.array([0.9, 0.1, 0.5, 0.12, 0.91, 0.52])
    assert kmeans_strata(p, 3).tolist() == [2, 0, 1, 0, 2, 1]
    with pytest.raises(EvalDataError, match="single value"):
        kmeans_strata(np.full(10, 0.7), 4)
    assert kmeans_strata(np.array([0.1, 0.1, 0.9]), 5).tolist() == [0, 0, 1]
    assert group_strata(["b", "a", "c", "a"]).tolist() == [1, 0, 2, 0]
    with pytest.raises(EvalDataError, match="no group"):
        group_strata(["a", None, "b"])
    rng = np.random.default_rng(0)
    feats = np.concatenate([rng.normal(0, 0.1, (30, 2)), rng.normal(5, 0.1, (30, 2))])
    proxy = np.r_[np.full(30, 0.9), np.full(30, 0.2)]
    s = feature_strata(feats, 2, seed=0, proxy=proxy)
    assert s[:30].tolist() == [1] * 30 and s[30:].tolist() == [0] * 30
    s = feature_strata(feats, 2, seed=0)
    assert s[:30].tolist() == [0] * 30


# ---------------------------------------------------------------------------------------------- planning


def test_design_efficiency():
    z, proxy = _population(20000, seed=3)
    df = design_efficiency(proxy, [100, 400], n_strata=8)
    assert len(df) == 12 and list(df.columns) == ["budget", "design", "estimator", "predicted_mse",
                                                  "relative_efficiency"]
    srs = df[(df.design == "srs") & (df.estimator == "ht")]
    assert srs.relative_efficiency.tolist() == [1.0, 1.0]
    zbar = proxy.mean()
    for n, m in zip([100, 400], srs.predicted_mse):
        assert m == pytest.approx((1 - n / proxy.size) * zbar * (1 - zbar) / n)
    for n in (100, 400):
        block = df[df.budget == n].set_index(["design", "estimator"]).predicted_mse
        assert block[("neyman", "ht")] <= block[("proportional", "ht")] <= block[("srs", "ht")]
        assert block[("srs", "df")] < block[("srs", "ht")]
    one = design_efficiency(proxy, 100, n_strata=8)
    assert len(one) == 6


def test_labels_needed():
    _, proxy = _population(20000, seed=3)
    out = labels_needed(proxy, 0.05, n_strata=8)
    assert len(out) == 6
    # the plug-in count that trusts the proxy: the smallest n whose predicted SRS width is at most the target
    srs = int(out[(out.design == "srs") & (out.estimator == "ht")].labels_needed_calibrated.iloc[0])
    strata = np.zeros(proxy.size, int)
    width = lambda n: 2 * 1.959963984540054 * np.sqrt(predicted_mse(proxy, strata, [n]))  # noqa: E731
    assert width(srs) <= 0.05 < width(srs - 1)
    assert (out.labels_needed_calibrated <= srs).all()
    # without labels the count shown first is the worst case over the recalibration family; for SRS + HT its
    # variance is at most that of an accuracy of 1/2: (1 - n/N) 0.25 / n <= limit  <=>  n >= 0.25 / (limit + 0.25/N)
    assert out.attrs["basis"] == "worst case" and (out.labels_needed == out.labels_needed_worst).all()
    limit = (0.05 / (2 * 1.959963984540054)) ** 2
    worst_srs = out[(out.design == "srs") & (out.estimator == "ht")].labels_needed.iloc[0]
    assert srs < worst_srs <= int(np.ceil(0.25 / (limit + 0.25 / proxy.size)))
    with pytest.raises(EvalDataError, match="positive"):
        labels_needed(proxy, 0)


def test_monte_carlo_agrees_and_is_independent_of_n_jobs():
    rng = np.random.default_rng(5)
    n = 20000
    proxy = rng.beta(5, 1, n)
    z = (rng.random(n) < proxy).astype(float)
    seen = []
    mc = monte_carlo(z, proxy, [200], n_strata=6, reps=2000, seed=1, n_jobs=2, progress=seen.append)
    assert seen[-1] == pytest.approx(1.0) and all(np.diff(seen) > 0)
    assert len(mc) == 6
    assert mc.relative_efficiency.iloc[0] == 1.0
    # simulated MSE within Monte Carlo error (plus the plug-in's own error) of the prediction
    for row in mc.itertuples():
        assert abs(row.mse - row.predicted_mse) < 4 * row.mse_se + 0.05 * row.predicted_mse
        assert 0.92 < row.coverage < 0.98
    again = monte_carlo(z, proxy, [200], n_strata=6, reps=300, seed=1, n_jobs=1)
    par = monte_carlo(z, proxy, [200], n_strata=6, reps=300, seed=1, n_jobs=2)
    pd.testing.assert_frame_equal(again, par)


def test_interval_coverage_and_tuned_df():
    rng = np.random.default_rng(8)
    n_pool = 5000
    proxy = rng.beta(3, 1, n_pool)
    z = (rng.random(n_pool) < proxy).astype(float)
    truth = z.mean()
    strata = np.zeros(n_pool, int)
    useless = rng.random(n_pool)
    hits, err = 0, {"ht": [], "useless": [], "perfect": []}
    ss = np.random.SeedSequence(2).spawn(1500)
    for s in ss:
        idx = draw_sample(strata, [100], seed=s)
        e = estimate(z, idx, strata)
        hits += e.ci_low <= truth <= e.ci_high
        err["ht"].append(e.estimate - truth)
        err["useless"].append(estimate(z, idx, strata, useless, "df_tuned").estimate - truth)
        err["perfect"].append(estimate(z, idx, strata, z + 0.0, "df_tuned").estimate - truth)
    assert 0.93 < hits / len(ss) < 0.97
    mse = {k: float(np.mean(np.square(v))) for k, v in err.items()}
    assert mse["useless"] < 1.1 * mse["ht"]
    assert mse["perfect"] < 0.01 * mse["ht"]


def test_neyman_budget_beyond_the_informative_strata_goes_to_the_others():
    # strata 0-1 have spread, stratum 2 (proxy 1.0) has none: with 100 labels the first two are taken whole
    # (30 + 20) and the remaining 50 go to the spread-less stratum, never taken back from the informative ones
    strata = np.repeat([0, 1, 2], [30, 20, 200])
    proxy = np.repeat([0.5, 0.8, 1.0], [30, 20, 200])
    alloc = allocate_budget(strata, 100, "neyman", proxy=proxy)
    assert alloc.tolist() == [30, 20, 50]
    assert allocate_budget(strata, 40, "neyman", proxy=proxy)[2] == 2


def test_simulate_design_known_answers():
    """SRS without replacement: E[s^2] = S^2 (divisor N - 1), so the mean squared width is exactly
    (2 z)^2 (1 - n/N) S^2 / n; the HT estimate is unbiased. A census has width 0 and the pool's mean."""
    from evalcore.sampling.designs import simulate_design

    rng = np.random.default_rng(6)
    z = (rng.random(2000) < 0.7).astype(float)
    one = np.zeros(z.size, dtype=int)
    sims = simulate_design(z, one, [200], reps=2000, seed=1)
    q = 1.959963984540054
    expected = (2 * q) ** 2 * (1 - 200 / 2000) * z.var(ddof=1) / 200
    squared = sims["width"] ** 2
    assert abs(squared.mean() - expected) <= 4 * squared.std() / np.sqrt(len(sims))
    assert abs(sims["estimate"].mean() - z.mean()) <= 4 * sims["estimate"].std() / np.sqrt(len(sims))
    census = simulate_design(z, one, [2000], reps=3, seed=1)
    assert (census["width"] == 0).all() and np.allclose(census["estimate"], z.mean()) and census["covered"].all()
