"""evalcore.sampling.designs: predictions that do not overpromise, and intervals that are never zero-width short of a census.

Known answers: the recalibration family at hand-computed points; efficiency_range for a proxy that says nothing
(constant true accuracy: the design effect of the allocation, and DF's extra residual variance); the Wilson
fallback for an all-correct sample with the effective sample size by hand; the real-data acceptance rule (the
default prediction within 0.1 of Monte Carlo, or Monte Carlo inside the shown range) on subsampled fully labeled
pools.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalcore.sampling.designs import (allocate_budget, draw_sample, efficiency_range, estimate, kmeans_strata,
                                      labels_needed, recalibrated, simulate_design)

Q95 = 1.959963984540054


def test_recalibrated_known_values():
    p = np.array([0.0, 0.2, 0.5, 0.8, 1.0])
    # shift 0, slope 1: the proxy clipped to [0.01, 0.99]
    assert recalibrated(p, 0.0, 1.0) == pytest.approx([0.01, 0.2, 0.5, 0.8, 0.99])
    # slope 0: the constant sigmoid(shift), whatever the proxy
    assert recalibrated(p, 1.0, 0.0) == pytest.approx(np.full(5, 1 / (1 + np.exp(-1.0))))
    # slope 2 at p = 0.8: sigmoid(2 log 4) = 16 / 17
    assert recalibrated(0.8, 0.0, 2.0) == pytest.approx(16 / 17)


def test_efficiency_range_when_the_proxy_says_nothing():
    # two strata of 100, budget 20 (10 + 10); family = {g = 0.5 everywhere} plus the proxy itself.
    strata = np.repeat([0, 1], 100)
    proxy = np.where(strata == 0, 0.6, 0.9)
    frame = efficiency_range(proxy, 20, strata=strata, shifts=(0.0,), slopes=(0.0,))
    rows = frame.set_index(["design", "estimator"])
    # predicted (calibrated proxy): proportional HT = sum W_h S_h^2 / S^2 = (0.5*0.24 + 0.5*0.09) / (0.75*0.25)
    assert rows.loc[("proportional", "ht"), "predicted"] == pytest.approx(0.165 / 0.1875)
    # g = 0.5: no gain from strata, proportional = 1 exactly (the design effect of an exact proportional split)
    assert rows.loc[("proportional", "ht"), "high"] == pytest.approx(1.0)
    # g = 0.5: DF's residual Z - p has variance 0.25 + var(p) = 0.25 + 0.0225 in the pool, so SRS + DF = 1.09
    assert rows.loc[("srs", "df"), "high"] == pytest.approx(0.2725 / 0.25)
    assert (frame["low"] <= frame["predicted"] + 1e-12).all() and (frame["predicted"] <= frame["high"] + 1e-12).all()
    assert frame.loc[(frame["design"] == "srs") & (frame["estimator"] == "ht"), ["predicted", "low", "high"]
                     ].to_numpy() == pytest.approx(np.ones((1, 3)))


def test_neyman_range_reaches_far_above_one_for_an_overconfident_proxy():
    # a proxy of exactly 1 on most examples: Neyman gives those strata the minimum, which a slope-0.5 or slope-0
    # truth punishes; proportional stays near 1 at worst.
    rng = np.random.default_rng(0)
    proxy = np.where(rng.random(2000) < 0.8, 1.0, rng.uniform(0.3, 0.9, 2000))
    rows = efficiency_range(proxy, 200, n_strata=5).set_index(["design", "estimator"])
    assert rows.loc[("neyman", "ht"), "predicted"] < 0.5 < 2.0 < rows.loc[("neyman", "ht"), "high"]
    assert rows.loc[("proportional", "ht"), "high"] < 1.05


def test_all_correct_sample_gets_a_wilson_interval_not_zero_width():
    strata = np.repeat([0, 1], 100)
    proxy = np.linspace(0.5, 0.99, 200)
    index = draw_sample(strata, [10, 10], seed=0)
    z = np.ones(200)
    # n_eff = 1 / sum_h W_h^2 (1 - f_h) / n_h = 1 / (2 * 0.25 * 0.9 / 10) = 200 / 9; Wilson lower at p = 1 is
    # n / (n + q^2)
    n_eff = 200 / 9
    for name in ("ht", "df_tuned"):
        e = estimate(z, index, strata, proxy=proxy, estimator=name)
        assert e.se == 0.0 and e.estimate == 1.0
        assert e.ci_low == pytest.approx(n_eff / (n_eff + Q95**2)) and e.ci_high == 1.0
    # DF leaves [0, 1] before clipping (mean proxy + mean residual > 1 here): estimate and interval clipped
    e = estimate(z, index, strata, proxy=proxy, estimator="df")
    assert 0.9 < e.ci_low < e.estimate <= e.ci_high == 1.0


def test_census_keeps_its_exact_zero_width_answer():
    strata = np.repeat([0, 1], 3)
    z = np.array([1.0, 1, 1, 0, 1, 1])
    e = estimate(z, np.arange(6), strata)
    assert e.estimate == pytest.approx(5 / 6) and e.ci_low == e.ci_high == pytest.approx(5 / 6)


def test_interval_of_a_mixed_sample_is_the_normal_one_inside_bounds():
    strata = np.repeat([0, 1], 50)
    index = draw_sample(strata, allocate_budget(strata, 20), seed=1)
    z = (np.arange(100) % 3 != 0).astype(float)
    e = estimate(z, index, strata)
    assert e.se > 0 and e.ci_low == pytest.approx(e.estimate - Q95 * e.se)
    assert e.ci_high == pytest.approx(min(1.0, e.estimate + Q95 * e.se))


def _subsample(proxy, z, size, seed):
    keep = np.random.default_rng(seed).permutation(len(z))[:size]
    return proxy[keep], z[keep]


def test_default_prediction_is_honest_on_fully_labeled_pools(shared_file):
    from benchmarks.sampling import HONESTY_PAIRS, honesty_study
    from evalcore.demo.sklearn_models import sklearn_models

    frame = pd.read_csv(shared_file("imagenet_x_predictions.csv.gz"),
                        usecols=["model", "correct", "predicted_probability"])
    pools = [("ImageNet-X", m, *_subsample(part["predicted_probability"].to_numpy(float),
                                           part["correct"].to_numpy(float), 5000, i))
             for i, (m, part) in enumerate(frame.groupby("model"))]
    demo = sklearn_models(seed=0)
    pools += [("sklearn demo", m, part["confidence"].to_numpy(float), part["correct"].to_numpy(float))
              for m, part in demo.groupby("model")]
    study = honesty_study(pools, budgets=(100, 500), reps=300, n_jobs=1)
    default = study[(study["design"] == HONESTY_PAIRS[0][0]) & (study["estimator"] == HONESTY_PAIRS[0][1])]
    assert len(default) == 20 and set(default["model"]) >= {"knn-15", "ResNet50"}
    assert default["honest"].all(), default[~default["honest"]].to_string()
    # the example: Neyman on knn-15 is predicted far below 1 but is worse than SRS; its range says so
    knn = study[(study["model"] == "knn-15") & (study["design"] == "neyman") & (study["n"] == 500)].iloc[0]
    assert knn["predicted"] < 0.2 and knn["monte_carlo"] > 1 and knn["high"] > knn["monte_carlo"]


def test_labels_needed_worst_case_never_promises_fewer_labels():
    rng = np.random.default_rng(0)
    proxy = np.where(rng.random(3000) < 0.8, 1.0, rng.uniform(0.3, 0.9, 3000))
    frame = labels_needed(proxy, 0.1, n_strata=5).set_index(["design", "estimator"])
    # without labels the number shown first is the worst case, never below the count that trusts the proxy
    assert frame.attrs["basis"] == "worst case"
    assert (frame["labels_needed"] == frame["labels_needed_worst"]).all()
    assert (frame["labels_needed_worst"] >= frame["labels_needed_calibrated"]).all()
    # the overconfident proxy promises Neyman needs few labels; the worst case needs more than SRS
    trusted = frame["labels_needed_calibrated"]
    assert trusted.loc[("neyman", "ht")] < trusted.loc[("srs", "ht")]
    assert frame.loc[("neyman", "ht"), "labels_needed_worst"] > frame.loc[("srs", "ht"), "labels_needed_worst"]


def test_labels_needed_from_a_pilot_delivers_the_width():
    """Known truth: E[Z | p] = sigmoid(-1 + 0.6 logit p) (an overconfident proxy). From 300 pilot labels the count
    shown first gives a mean realised width within 5 % of the target (MC SE of the mean width ~0.2 %), while the
    count that trusts the proxy falls short; the count from the true curve (no pilot error) is a lower bound."""
    rng = np.random.default_rng(3)
    proxy = rng.beta(4, 1, 20000)
    truth = recalibrated(proxy, -1.0, 0.6)
    z = (rng.random(proxy.size) < truth).astype(float)
    pilot = np.full(z.size, np.nan)
    picked = rng.choice(z.size, 300, replace=False)
    pilot[picked] = z[picked]
    strata = kmeans_strata(proxy, 5)
    frame = labels_needed(proxy, 0.04, strata=strata, labels=pilot).set_index(["design", "estimator"])
    assert frame.attrs["basis"] == "labels"
    for design in ("proportional", "neyman"):
        n = int(frame.loc[(design, "df"), "labels_needed"])
        alloc = allocate_budget(strata, n, design, proxy=proxy, estimator="df")
        widths = simulate_design(z, strata, alloc, proxy=proxy, reps=300, seed=1)
        mean = widths.loc[widths["estimator"] == "df", "width"].mean()
        assert mean <= 1.05 * 0.04, (design, n, mean)
        short = int(frame.loc[(design, "df"), "labels_needed_calibrated"])
        alloc = allocate_budget(strata, short, design, proxy=proxy, estimator="df")
        widths = simulate_design(z, strata, alloc, proxy=proxy, reps=300, seed=1)
        assert widths.loc[widths["estimator"] == "df", "width"].mean() > 1.05 * 0.04


def test_meets_target_is_the_share_of_samples_that_meet_it():
    """Known truth, every label at hand: the stated chance that one sample meets the target is a lower bound of the
    share of 400 simulated samples that do (MC SE <= 0.025; allowance 0.05), and not a loose one (the plan takes
    the least favourable calibration of a tiny confidence region: within 0.2)."""
    rng = np.random.default_rng(4)
    proxy = rng.beta(4, 1.5, 20000)
    z = (rng.random(proxy.size) < recalibrated(proxy, 0.5, 0.8)).astype(float)
    strata = kmeans_strata(proxy, 5)
    frame = labels_needed(proxy, 0.05, strata=strata, labels=z, probability=0.9).set_index(["design", "estimator"])
    row = frame.loc[("proportional", "ht")]
    assert 0.45 <= row["meets_target"] <= 0.55  # the count whose planned variance is at the limit: about one half
    shares = []
    for n, stated in ((int(row["labels_needed"]), row["meets_target"]), (int(row["labels_for_probability"]), 0.9)):
        widths = simulate_design(z, strata, allocate_budget(strata, n, "proportional"), reps=400, seed=2)["width"]
        shares.append(float((widths <= 0.05).mean()))
        assert stated - 0.05 <= shares[-1] <= stated + 0.2, (n, shares[-1], stated)
    assert shares[0] < shares[1]
