"""Subgroup estimates (issue 3; Fogliato et al. 2024, Sections 3, 4.2 and Appendix A): known answers.

Direct estimates and s_g^2 by hand; EB's boundary behaviour (EB = DT when A is huge, EB = SR when A is at its
floor, never a zero-width interval); a simulation from the EB model itself (EB beats DT, near the oracle, with
average robust coverage); the synthetic demo with known truth; bad input; MMLU-Pro (skipped without
../shared/data).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalcore.demo.synthetic import synthetic_benchmark
from evalcore.subgroups.robust_intervals import robust_critical_value
from evalcore.data.reading import EvalDataError
from evalcore.subgroups.estimates import MIN_UNITS, REGRESSORS, RESULT_COLUMNS, direct_estimates, empirical_bayes, unit_variances

Z975 = 1.959963984540054  # standard normal 0.975 quantile
T975 = {1: 12.706204736174698, 2: 4.302652729749464}  # Student-t 0.975 quantiles (1 and 2 df), from tables


def canonical_log(model, group, values, metric="correct", **extra) -> pd.DataFrame:
    """A canonical per-example log (the shape evalcore.data.validation.validate returns) from per-row lists."""
    model, group = list(map(str, model)), list(map(str, group))
    frame = pd.DataFrame({
        "model": model,
        "example_id": [f"ex{i}" for i in range(len(model))],
        "task": "all",
        "category": "all",
        "group": group,
        metric: np.asarray(values, dtype=float),
    })
    for name, column in extra.items():
        frame[name] = column
    return frame


def wilson_by_hand(k, n, z=Z975):
    center = (k + z * z / 2) / (n + z * z)
    half = z / (n + z * z) * np.sqrt(k * (n - k) / n + z * z / 4)
    return center - half, center + half


def mse(estimate, truth) -> float:
    return float(np.mean((np.asarray(estimate) - np.asarray(truth)) ** 2))


def coverage(low, high, truth) -> float:
    truth = np.asarray(truth)
    return float(np.mean((np.asarray(low) <= truth) & (truth <= np.asarray(high))))


# ---------------------------------------------------------------------------------------------------- 1. direct


def test_direct_estimates_binary_means_and_wilson_intervals_by_hand():
    rows = [  # (model, group, correct); NaN = unlabeled
        ("m", "a", 1), ("m", "a", 1), ("m", "a", 0), ("m", "a", np.nan), ("m", "a", np.nan),
        ("m", "b", 0), ("m", "b", 0), ("m", "b", 0), ("m", "b", 0), ("m", "b", 1),
        ("m", "c", np.nan), ("m", "c", np.nan),  # no label at all: no row
        ("m2", "a", 1),
    ]
    log = canonical_log(*zip(*rows))
    out = direct_estimates(log)
    assert list(out.columns) == ["model", "group", "n", "estimate", "se", "ci_low", "ci_high"]
    out = out.set_index(["model", "group"])
    assert list(out.index) == [("m", "a"), ("m", "b"), ("m2", "a")]
    assert out["n"].tolist() == [3, 5, 1]
    assert out["estimate"].tolist() == pytest.approx([2 / 3, 1 / 5, 1.0], abs=1e-15)
    # 2 of 3 at 95 %: Wilson [0.2076596, 0.9385081] (p-hat form of Brown, Cai & DasGupta 2001, by hand)
    assert out.loc[("m", "a"), ["ci_low", "ci_high"]].tolist() == pytest.approx([0.2076596, 0.9385081], abs=1e-7)
    assert out.loc[("m", "b"), ["ci_low", "ci_high"]].tolist() == pytest.approx(wilson_by_hand(1, 5), abs=1e-12)
    # 1 of 1: [1 / (1 + z^2), 1]
    assert out.loc[("m2", "a"), ["ci_low", "ci_high"]].tolist() == pytest.approx([1 / (1 + Z975**2), 1.0])
    assert out.loc[("m", "a"), "se"] == pytest.approx(np.sqrt(2 / 3 * 1 / 3 / 3))
    assert out.loc[("m", "b"), "se"] == pytest.approx(np.sqrt(0.2 * 0.8 / 5))
    assert np.isnan(out.loc[("m2", "a"), "se"])


def test_direct_estimates_continuous_student_t_intervals_by_hand():
    rows = [("m", "a", 1.0), ("m", "a", 2.0), ("m", "a", 4.0), ("m", "a", np.nan),
            ("m", "b", 3.0), ("m", "b", 5.0)]
    log = canonical_log(*zip(*rows), metric="score")
    out = direct_estimates(log, metric="score").set_index("group")
    assert out["n"].tolist() == [3, 2]
    # a: mean 7/3, sd^2 = ((4 + 1 + 25) / 9) / 2 = 7/3; b: mean 4, sd^2 = 2
    se_a = np.sqrt(7 / 3 / 3)
    assert out.loc["a", ["estimate", "se"]].tolist() == pytest.approx([7 / 3, se_a])
    assert out.loc["b", ["estimate", "se"]].tolist() == pytest.approx([4.0, 1.0])
    assert out.loc["a", ["ci_low", "ci_high"]].tolist() == pytest.approx(
        [7 / 3 - T975[2] * se_a, 7 / 3 + T975[2] * se_a], rel=1e-9)
    assert out.loc["b", ["ci_low", "ci_high"]].tolist() == pytest.approx([4 - T975[1], 4 + T975[1]], rel=1e-9)


# ---------------------------------------------------------------------------------------------------- 2. s_g^2


def test_binary_variances_use_the_jeffreys_mean_so_all_right_or_all_wrong_is_never_zero():
    units = pd.DataFrame({"model": "m", "n": [10, 10, 10, 1, 1], "estimate": [1.0, 0.0, 0.3, 1.0, 0.0]})
    s2 = unit_variances(units, "correct")
    # p = (10 + 0.5) / 11 -> p (1 - p) / 10 = 10.5 * 0.5 / 121 / 10
    assert s2[0] == pytest.approx(5.25 / 1210, rel=1e-12)
    assert s2[1] == pytest.approx(5.25 / 1210, rel=1e-12)
    assert s2[2] == pytest.approx(3.5 * 7.5 / 121 / 10, rel=1e-12)
    assert s2[3] == pytest.approx(0.75 * 0.25, rel=1e-12) and s2[4] == pytest.approx(0.1875, rel=1e-12)
    assert (s2 > 0).all()


def test_binary_variances_with_the_synthetic_estimate_average_the_two_binomial_variances():
    units = pd.DataFrame({"model": "m", "n": [10, 10, 10, 1], "estimate": [1.0, 0.0, 0.3, 1.0]})
    # own Jeffreys variances 5.25 / 1210, 5.25 / 1210, 3.5 * 7.5 / 1210, 0.1875 (as above); at the centre:
    # 0.6 -> 0.24 / 10; 1.2 and -0.1 -> the edges 10.5 / 11 and 0.5 / 11, 5.25 / 1210; n = 1, 0.5 -> 0.25
    s2 = unit_variances(units, "correct", center=np.array([0.6, 1.2, -0.1, 0.5]))
    np.testing.assert_allclose(s2, [(5.25 / 1210 + 0.024) / 2, 5.25 / 1210, (26.25 / 1210 + 5.25 / 1210) / 2,
                                    (0.1875 + 0.25) / 2], rtol=1e-12)


def test_a_hat_is_raised_by_one_standard_error_clustered_by_group():
    from evalcore.subgroups.estimates import _moments

    eps = np.array([0.3, 0.1, -0.2, 0.4, 0.0, -0.1])
    s2 = np.full(6, 0.01)
    d = eps**2 - s2  # 0.08, 0, 0.03, 0.15, -0.01, 0: mean 0.0416667
    clusters = np.array(["a", "a", "b", "b", "c", "c"])
    # cluster sums of d - mean: 0.08 - 2m, 0.18 - 2m, -0.01 - 2m; SE^2 = 3/2 * sum^2 / 36
    m = d.mean()
    se = np.sqrt(1.5 * ((0.08 - 2 * m) ** 2 + (0.18 - 2 * m) ** 2 + (-0.01 - 2 * m) ** 2)) / 6
    a_hat, kappa = _moments(eps, s2, clusters)
    assert a_hat == pytest.approx(m + se, rel=1e-12)
    mu4 = np.mean(eps**4 - 6 * s2 * eps**2 + 3 * s2**2)
    assert kappa == pytest.approx(max(mu4 / m**2, 1 + 32 * 0.01**4 / (6 * 0.01**2 * m**2)), rel=1e-12)
    # one cluster per unit: the ordinary standard error of the mean, sqrt(6/5 sum (d - m)^2) / 6
    a_units, _ = _moments(eps, s2, np.arange(6))
    assert a_units == pytest.approx(m + np.sqrt(1.2 * np.sum((d - m) ** 2)) / 6, rel=1e-12)


CONTINUOUS_ROWS = [  # model, group, score
    ("m", "a", 1.0), ("m", "a", 2.0), ("m", "a", 3.0),  # n 3, sd^2 1, squares 2
    ("m", "b", 5.0), ("m", "b", 5.0),  # n 2, sd^2 0 -> pooled
    ("m", "c", 7.0),  # n 1 -> pooled
    ("m", "d", 0.0), ("m", "d", 4.0),  # n 2, sd^2 8, squares 8
    ("m2", "a", 0.0), ("m2", "a", 2.0),  # n 2, sd^2 2
    ("m2", "b", 1.0),  # n 1 -> m2's pooled variance 2
]
# m: pooled = (2 + 0 + 0 + 8) / (2 + 1 + 0 + 1) = 2.5; m2: 2 / 1 = 2
CONTINUOUS_S2 = {("m", "a"): 1 / 3, ("m", "b"): 2.5 / 2, ("m", "c"): 2.5 / 1, ("m", "d"): 8 / 2,
                 ("m2", "a"): 2 / 2, ("m2", "b"): 2 / 1}


def continuous_units(rows):
    frame = pd.DataFrame(rows, columns=["model", "group", "score"])
    stats = frame.groupby(["model", "group"])["score"].agg(n="count", estimate="mean", sd="std")
    return stats.reset_index()


def test_continuous_variances_pool_within_the_model_for_one_example_or_constant_groups():
    units = continuous_units(CONTINUOUS_ROWS)
    s2 = unit_variances(units, "score")
    assert dict(zip(zip(units["model"], units["group"]), s2)) == pytest.approx(CONTINUOUS_S2, rel=1e-12)


def test_empirical_bayes_uses_the_same_variances_as_unit_variances():
    log = canonical_log(*zip(*CONTINUOUS_ROWS), metric="score")
    out = empirical_bayes(log, metric="score", regressor="mean")
    implied = out["A"] * out["shrinkage"] / (1 - out["shrinkage"])  # shrinkage = s2 / (s2 + A)
    assert dict(zip(zip(out["model"], out["group"]), implied)) == pytest.approx(CONTINUOUS_S2, rel=1e-9)


def test_a_model_without_any_within_group_spread_borrows_the_pooled_variance_of_all_models():
    # m3 has only one-example groups: its own pooled variance is undefined, so it takes all models'
    # (2 + 8 + 2) / (2 + 1 + 1 + 1) = 2.4 rather than 0 (which gave zero-width intervals before the fix)
    rows = CONTINUOUS_ROWS + [("m3", "a", 1.0), ("m3", "b", 9.0)]
    units = continuous_units(rows)
    s2 = dict(zip(zip(units["model"], units["group"]), unit_variances(units, "score")))
    assert s2 == pytest.approx({**CONTINUOUS_S2, ("m3", "a"): 2.4, ("m3", "b"): 2.4}, rel=1e-12)
    out = empirical_bayes(canonical_log(*zip(*rows), metric="score"), metric="score", regressor="linear")
    assert np.isfinite(out[["eb", "eb_low", "eb_high"]].to_numpy()).all()
    assert (out["eb_high"] - out["eb_low"] > 0.1).all()
    assert (out["shrinkage"] > 0).all()


def test_continuous_metric_without_any_spread_is_refused_with_a_clear_message():
    rows = [("m", g, float(g)) for g in range(6)]  # one example per group: no variance information at all
    with pytest.raises(EvalDataError, match="Cannot estimate the variance of 'score'"):
        empirical_bayes(canonical_log(*zip(*rows), metric="score"), metric="score", regressor="mean")


# ---------------------------------------------------------------------------------------------------- 3. boundaries


@pytest.mark.parametrize("regressor", REGRESSORS)
def test_eb_equals_direct_when_a_is_huge(regressor):
    """Group means 0, 10, ..., 390 and per-example noise sd 0.01: A ~ 1.4e4 >> s^2 ~ 2e-5, weight on SR ~ 1e-9."""
    rng = np.random.default_rng(1)
    n = rng.integers(3, 9, size=40)
    group = np.repeat(np.arange(40), n)
    score = 10.0 * group + rng.normal(0.0, 0.01, group.size)
    log = canonical_log(["m"] * group.size, [f"g{g}" for g in group], score, metric="score")
    out = empirical_bayes(log, metric="score", regressor=regressor)
    assert out["A"].min() > 1e3
    assert out["shrinkage"].max() < 1e-6
    assert np.abs(out["eb"] - out["direct"]).max() < 1e-3
    # m2 = s^2 / A ~ 0: cva -> z_{0.975} and w -> 1, so the robust interval is eb +/- 1.96 s_g
    sd = log.groupby("group")["score"].std().reindex(out["group"]).to_numpy()
    s = sd / np.sqrt(out["n"].to_numpy())
    np.testing.assert_allclose((out["eb_high"] - out["eb_low"]) / 2, Z975 * s, rtol=1e-3)


@pytest.mark.parametrize("regressor", REGRESSORS)
def test_eb_equals_synthetic_when_a_is_at_its_floor_yet_intervals_keep_their_width(regressor):
    """200 groups with the same mean (up to |delta| <= 0.01) and values +/-1 around it: eps^2 << s^2, so
    mean(eps^2 - s^2) < 0 and A is the floor 2 mean(s^4) / (G mean(s^2)) of each fold (G = 100 units)."""
    rng = np.random.default_rng(2)
    sizes = rng.choice([10, 20, 40], size=200)
    delta = rng.uniform(-0.01, 0.01, size=200)
    model, group, score = [], [], []
    for g, (size, d) in enumerate(zip(sizes, delta)):
        values = 0.5 + d + np.tile([1.0, -1.0], size // 2)
        model += ["m"] * size
        group += [f"g{g}"] * size
        score += list(values)
    log = canonical_log(model, group, score, metric="score")
    out = empirical_bayes(log, metric="score", regressor=regressor)
    n = out["n"].to_numpy(dtype=float)
    s2 = (n / (n - 1)) / n  # sample variance of n/2 values +1 and n/2 values -1 is n / (n - 1)
    folds = out.groupby("A").indices  # the fold of a unit is the set of units sharing its fitted A
    assert sorted(len(idx) for idx in folds.values()) == [100, 100]
    for a_hat, idx in folds.items():
        assert a_hat == pytest.approx(2 * np.mean(s2[idx] ** 2) / (idx.size * np.mean(s2[idx])), rel=1e-9)
    assert out["shrinkage"].min() > 0.9  # s^2 / (s^2 + A); observed 0.94 (n_g = 10) to 0.99 (n_g = 40)
    assert np.abs(out["eb"] - out["synthetic"]).max() < 1e-3  # = w |Z - f| <= 0.06 * 0.02
    # the intervals are the robust ones, hence never of zero width: cva(s^2 / A, kappa) * w * s, w = A / (A + s^2)
    a_col, kappa = out["A"].to_numpy(), out["kappa"].to_numpy()
    half = np.array([robust_critical_value(s2[i] / a_col[i], kappa[i], 0.05) for i in range(len(out))])
    half *= a_col / (a_col + s2) * np.sqrt(s2)
    np.testing.assert_allclose((out["eb_high"] - out["eb_low"]) / 2, half, rtol=1e-6)
    assert (out["eb_high"] - out["eb_low"] > 0.01).all()
    assert (out["eb_low"] < out["eb"]).all() and (out["eb"] < out["eb_high"]).all()


def test_features_stay_aligned_with_units_when_groups_sort_differently_from_insertion():
    """score = 2 x_g + model offset exactly (noise 1e-3): the linear SR must recover it for every unit,
    whatever the order of the log's rows and of the group names (g10 sorts before g2)."""
    rng = np.random.default_rng(3)
    x = rng.normal(0.0, 1.0, size=30)
    order = rng.permutation(30)
    model, group, score, feature = [], [], [], []
    for m, offset in (("zeta", 1.0), ("alpha", -1.0)):
        for g in order:
            for _ in range(4):
                model.append(m)
                group.append(f"g{g}")
                score.append(2 * x[g] + offset + rng.normal(0.0, 1e-3))
                feature.append(x[g])
    log = canonical_log(model, group, score, metric="score", x=feature)
    # chosen explicitly: x nearly determines the score (r > 0.9), so it is not a default feature. The group's
    # difficulty is off: with two models it is the other model's score when predicting but the pooled group mean
    # when fitting (estimates._training_difficulty), which the exact recovery checked here does not allow for
    out = empirical_bayes(log, metric="score", regressor="linear", features=["x"], group_difficulty=False)
    assert np.abs(out["synthetic"] - out["direct"]).max() < 0.02  # spread of direct: ~4


# ---------------------------------------------------------------------------------------------------- 4. simulation

SIGMA, A_TRUE = 0.5, 0.01  # per-example sd, prior variance of mu_g around f(x_g)


def simulated_log(seed: int, n_groups: int = 200, n_min: int = 5, n_max: int = 40):
    """mu_g ~ N(f(x_g), A), f(x) = 0.5 + 0.3 x; n_g examples with score ~ N(mu_g, SIGMA^2), so that
    Z_g ~ N(mu_g, SIGMA^2 / n_g); the EB code sees only the examples and estimates s_g^2 from them."""
    rng = np.random.default_rng(seed)
    x = rng.normal(0.0, 1.0, n_groups)
    mu = 0.5 + 0.3 * x + rng.normal(0.0, np.sqrt(A_TRUE), n_groups)
    n = rng.integers(n_min, n_max + 1, n_groups)
    g = np.repeat(np.arange(n_groups), n)
    names = np.array([f"g{k}" for k in range(n_groups)])
    log = canonical_log(["m"] * g.size, names[g], mu[g] + rng.normal(0.0, SIGMA, g.size), metric="score", x=x[g])
    return log, pd.Series(mu, index=names), pd.Series(SIGMA**2 / n, index=names)


@pytest.mark.slow
@pytest.mark.parametrize("alpha", [0.05, 0.10])
def test_simulation_from_the_eb_model_beats_direct_near_the_oracle_with_average_coverage(alpha):
    """30 seeded repetitions, 200 groups, n_g in [5, 40].

    n_g >= 5 because s_g^2 is estimated from the examples: with n_g = 2 (one degree of freedom) s_g^2 is often
    far too small and the average coverage at alpha = 0.1 drops to ~0.86 (observed), which is a property of the
    plug-in s_g^2, not of the EB construction. The oracle (known f, A and s_g^2) has MSE ratio
    mean(A s^2 / (A + s^2)) / mean(s^2) = 0.352 here; observed EB/DT 0.381, SR/DT 0.667, average EB coverage
    0.960 (alpha 0.05) and 0.903 (alpha 0.1), DT coverage 0.946 / 0.894.
    """
    eb_mse, sr_mse, dt_mse, oracle_mse, cover = [], [], [], [], []
    for seed in range(30):
        log, mu, s2 = simulated_log(seed)
        out = empirical_bayes(log, metric="score", regressor="linear", alpha=alpha, seed=seed)
        truth, s2 = mu.reindex(out["group"]).to_numpy(), s2.reindex(out["group"]).to_numpy()
        eb_mse.append(mse(out["eb"], truth))
        sr_mse.append(mse(out["synthetic"], truth))
        dt_mse.append(mse(out["direct"], truth))
        oracle_mse.append(np.mean(A_TRUE * s2 / (A_TRUE + s2)))
        cover.append(coverage(out["eb_low"], out["eb_high"], truth))
    ratio = np.mean(eb_mse) / np.mean(dt_mse)
    assert ratio < 1.0
    assert np.mean(eb_mse) < np.mean(sr_mse)
    assert ratio < np.mean(oracle_mse) / np.mean(dt_mse) + 0.1  # within 0.1 of the oracle's ratio
    assert np.mean(cover) >= 1 - alpha - 0.02


# ---------------------------------------------------------------------------------------------------- 5. demo


@pytest.fixture(scope="module")
def bench():
    return synthetic_benchmark(seed=0, label_fraction=0.15)


@pytest.fixture(scope="module")
def demo_results(bench):
    return {}


def demo_eb(bench, cache, regressor):
    if regressor not in cache:
        cache[regressor] = empirical_bayes(bench.log, regressor=regressor)
    return cache[regressor]


def with_truth(out, truth):
    merged = out.merge(truth[["model", "group", "p_true"]], on=["model", "group"], how="left", validate="1:1")
    assert merged["p_true"].notna().all()
    return merged


@pytest.mark.parametrize("regressor", REGRESSORS)
def test_demo_eb_beats_direct_against_the_known_truth(bench, demo_results, regressor):
    """Observed EB/DT MSE ratios 0.10 (xgboost), 0.13 (linear), 0.28 (mean); EB coverage 0.966 / 0.962 / 0.945."""
    out = demo_eb(bench, demo_results, regressor)
    assert list(out.columns) == RESULT_COLUMNS
    labeled = bench.log[bench.log["correct"].notna()].groupby(["model", "group"]).size()
    assert len(out) == len(labeled)
    assert out.set_index(["model", "group"])["n"].to_dict() == labeled.to_dict()
    m = with_truth(out, bench.truth)
    assert mse(m["eb"], m["p_true"]) < 0.5 * mse(m["direct"], m["p_true"])
    assert coverage(m["eb_low"], m["eb_high"], m["p_true"]) >= 0.9
    assert np.isfinite(out[["eb", "eb_low", "eb_high", "synthetic", "A", "kappa"]].to_numpy()).all()
    assert (out["A"] > 0).all() and (out["kappa"] >= 1).all()
    assert ((out["shrinkage"] > 0) & (out["shrinkage"] < 1)).all()
    assert (out["eb_high"] > out["eb_low"]).all()


def test_demo_output_is_reproducible_by_seed(bench, demo_results):
    first = demo_eb(bench, demo_results, "xgboost")
    pd.testing.assert_frame_equal(empirical_bayes(bench.log, regressor="xgboost", seed=0), first)
    other = empirical_bayes(bench.log, regressor="xgboost", seed=1)
    assert list(other.columns) == RESULT_COLUMNS
    assert not np.allclose(other["eb"], first["eb"])  # other folds and A


@pytest.mark.parametrize("regressor", ["xgboost", "linear"])
def test_demo_one_model_alone(bench, regressor):
    """Observed EB/DT 0.22 (xgboost) and 0.41 (linear)."""
    log = bench.log[bench.log["model"] == "atlas-m"]
    out = empirical_bayes(log, regressor=regressor)
    assert set(out["model"]) == {"atlas-m"} and list(out.columns) == RESULT_COLUMNS
    m = with_truth(out, bench.truth)
    assert mse(m["eb"], m["p_true"]) < mse(m["direct"], m["p_true"])
    assert np.isfinite(out[["eb", "eb_low", "eb_high"]].to_numpy()).all()
    assert (out["eb_high"] > out["eb_low"]).all()


@pytest.mark.parametrize("regressor", REGRESSORS)
def test_cross_fitting_a_units_synthetic_estimate_ignores_its_own_labels(bench, regressor):
    """SR of unit g comes from f fitted on the other fold (paper Section 4.2), so flipping every label of g
    changes its direct estimate but not its synthetic one (an in-sample f would move towards the new Z_g)."""
    log = bench.log
    if regressor == "xgboost":
        log = log[log["model"].isin(["atlas-l", "cirrus"])]  # fewer units: faster
    model, group = "atlas-l", "scenes/g01"
    before = empirical_bayes(log, regressor=regressor).set_index(["model", "group"])
    unit = (log["model"] == model) & (log["group"] == group) & log["correct"].notna()
    assert unit.sum() >= 20
    after = empirical_bayes(log.assign(correct=log["correct"].where(~unit, 1 - log["correct"])),
                            regressor=regressor).set_index(["model", "group"])
    assert after.loc[(model, group), "direct"] == pytest.approx(1 - before.loc[(model, group), "direct"])
    assert after.loc[(model, group), "synthetic"] == pytest.approx(before.loc[(model, group), "synthetic"],
                                                                   rel=1e-9, abs=1e-12)


def test_demo_continuous_metric(bench):
    """score = correct + N(0, 0.5^2) on the labeled examples: E[score] is still p_true. Observed EB/DT 0.099,
    EB coverage 0.974."""
    rng = np.random.default_rng(5)
    log = bench.log.copy()
    log["score"] = log["correct"] + rng.normal(0.0, 0.5, len(log))  # NaN (unlabeled) stays NaN
    out = empirical_bayes(log.drop(columns="correct"), metric="score", regressor="linear")
    m = with_truth(out, bench.truth)
    assert mse(m["eb"], m["p_true"]) < 0.5 * mse(m["direct"], m["p_true"])
    assert coverage(m["eb_low"], m["eb_high"], m["p_true"]) >= 0.9
    assert np.isfinite(out[["eb", "eb_low", "eb_high"]].to_numpy()).all()
    assert (out["eb_high"] > out["eb_low"]).all()


# ---------------------------------------------------------------------------------------------------- 6. bad input


def binary_log(n_models=1, n_groups=6, n=10, seed=0, p=0.6):
    rng = np.random.default_rng(seed)
    rows = [(f"m{m}", f"g{g}", float(rng.random() < p)) for m in range(n_models) for g in range(n_groups)
            for _ in range(n)]
    return canonical_log(*zip(*rows))


@pytest.mark.parametrize("n_groups", [1, MIN_UNITS - 1])
def test_too_few_units_is_refused_with_a_clear_message(n_groups):
    with pytest.raises(EvalDataError, match=f"at least {MIN_UNITS} .*units.* has {n_groups}"):
        empirical_bayes(binary_log(n_groups=n_groups), regressor="mean")


@pytest.mark.parametrize("regressor", REGRESSORS)
def test_one_subgroup_with_several_models_falls_back_to_folds_over_units(regressor):
    out = empirical_bayes(binary_log(n_models=6, n_groups=1, n=20), regressor=regressor)
    assert len(out) == 6 and out["group"].nunique() == 1
    assert out["A"].nunique() == 2  # two folds
    assert np.isfinite(out[["eb", "eb_low", "eb_high"]].to_numpy()).all()
    assert (out["eb_high"] > out["eb_low"]).all()


def test_non_binary_correct_is_refused():
    log = binary_log()
    log.loc[3, "correct"] = 0.5
    with pytest.raises(EvalDataError, match="must be 0/1.*'score'"):
        empirical_bayes(log, regressor="mean")
    with pytest.raises(EvalDataError, match="must be 0/1"):
        direct_estimates(log)


def test_missing_metric_column_and_no_labels_are_refused():
    log = binary_log()
    with pytest.raises(EvalDataError, match="no 'score' column"):
        empirical_bayes(log, metric="score", regressor="mean")
    with pytest.raises(EvalDataError, match="no 'score' column"):
        direct_estimates(log, metric="score")
    with pytest.raises(EvalDataError, match="No row has a 'correct' label"):
        empirical_bayes(log.assign(correct=np.nan), regressor="mean")


def test_unknown_regressor_is_refused():
    with pytest.raises(EvalDataError, match="Unknown regressor 'forest'.*xgboost, linear, mean"):
        empirical_bayes(binary_log(), regressor="forest")


def test_unknown_or_non_numeric_feature_columns_are_refused():
    log = binary_log().assign(emb_0=0.1, label="x")
    with pytest.raises(EvalDataError, match="Feature columns not found.*emb_1.*emb_0"):
        empirical_bayes(log, regressor="mean", features=["emb_0", "emb_1"])
    with pytest.raises(EvalDataError, match="Feature columns not found.*label"):
        empirical_bayes(log, regressor="mean", features=["label"])
    assert len(empirical_bayes(log, regressor="linear", features=["emb_0"])) == 6


@pytest.mark.parametrize("regressor", REGRESSORS)
def test_one_example_and_all_correct_subgroups_get_finite_nonzero_width_intervals(regressor):
    rng = np.random.default_rng(4)
    rows = []
    for m in ("m0", "m1"):
        for g in range(30):
            n = [1, 1, 3, 8, 25][g % 5]
            p = 1.0 if g % 3 == 0 else 0.7  # every third group all right
            rows += [(m, f"g{g}", float(rng.random() < p)) for _ in range(n)]
        rows += [(m, "all-wrong", 0.0) for _ in range(6)]
    out = empirical_bayes(canonical_log(*zip(*rows)), regressor=regressor)
    values = out[["eb", "eb_low", "eb_high", "synthetic", "shrinkage", "A", "kappa"]].to_numpy()
    assert np.isfinite(values).all()
    assert (out["eb_high"] - out["eb_low"] > 1e-3).all()
    assert ((out["shrinkage"] > 0) & (out["shrinkage"] < 1)).all()
    assert (out.loc[out["n"] == 1, ["direct_low", "direct_high"]].notna()).all().all()  # Wilson at n = 1


def test_xgboost_accepts_model_names_that_xgboost_feature_names_forbid():
    log = binary_log(n_models=2, n_groups=6)
    log["model"] = log["model"].map({"m0": "gpt [beta]", "m1": "a<b"})
    out = empirical_bayes(log, regressor="xgboost")  # crashed before the fix (feature names with [ ] <)
    assert set(out["model"]) == {"gpt [beta]", "a<b"} and np.isfinite(out["eb"]).all()


# ---------------------------------------------------------------------------------------------------- 7. real data

MMLU_MODELS = ["Llama-2-7b-hf", "Meta-Llama-3-8B", "Mixtral-8x7B-v0.1", "Qwen1.5-72B-Chat", "gemini-1.5-pro-002"]


def test_mmlu_pro_subsample_eb_is_closer_to_the_full_data_truth_than_direct(shared_file):
    """5 LLMs x 91 src subgroups; 10 questions per subgroup (the same for every model), 3 seeded draws.

    Truth = direct estimate on all questions of the unit. Observed MSE ratio EB/DT per draw 0.594, 0.673,
    0.611 (SR/DT 0.88, 0.80, 0.84); EB coverage of the truth 0.921, 0.875, 0.943 (DT 0.965-0.971).
    """
    from evalcore.data.validation import load_eval_log

    log = load_eval_log(shared_file("mmlu_pro_per_question.csv.gz"))
    log = log[log["model"].isin(MMLU_MODELS)]
    truth = direct_estimates(log).set_index(["model", "group"])["estimate"]
    questions = log[["group", "example_id"]].drop_duplicates().sort_values(["group", "example_id"])
    eb_mse, dt_mse, cover = [], [], []
    for seed in range(3):
        picked = questions.sample(frac=1.0, random_state=seed).groupby("group").head(10)["example_id"]
        sample = log[log["example_id"].isin(set(picked))]
        out = empirical_bayes(sample, regressor="linear", seed=seed)
        assert len(out) == 5 * 91 and (out["n"] <= 10).all()
        t = truth.reindex(pd.MultiIndex.from_frame(out[["model", "group"]])).to_numpy()
        eb_mse.append(mse(out["eb"], t))
        dt_mse.append(mse(out["direct"], t))
        cover.append(coverage(out["eb_low"], out["eb_high"], t))
    assert np.mean(eb_mse) / np.mean(dt_mse) < 0.9
    assert max(e / d for e, d in zip(eb_mse, dt_mse)) < 1.0
    assert np.mean(cover) >= 0.85


def test_fit_summary_r2_by_hand():
    from evalcore.subgroups.estimates import fit_summary

    direct = np.array([0.2, 0.6, 0.5])
    table = pd.DataFrame({"model": ["m"] * 3, "group": ["a", "b", "c"], "n": [1, 1, 2],
                          "direct": direct, "direct_low": direct - 0.0196, "direct_high": direct + 0.0196,
                          "synthetic": [0.3, 0.5, 0.5], "shrinkage": [0.5, 0.5, 0.2],
                          "A": [0.01, 0.02, 0.02], "kappa": [3.0, 5.0, 5.0]})
    row = fit_summary(table).iloc[0]
    # weighted mean 0.45; residual SS 0.01 + 0.01 + 0 = 0.02; total SS 0.0625 + 0.0225 + 2 * 0.0025 = 0.09,
    # against a noise of (1 + 1 + 2) * 0.01^2 = 0.0004
    assert row["sr_r2"] == pytest.approx(1 - 0.02 / 0.09)
    assert (row["units"], row["A_min"], row["A_max"], row["kappa_max"]) == (3, 0.01, 0.02, 5.0)


def test_fit_summary_r2_is_empty_where_it_means_nothing():
    from evalcore.subgroups.estimates import fit_summary

    direct = np.array([0.2, 0.6, 0.5])
    base = {"model": ["m"] * 3, "group": ["a", "b", "c"], "n": [1, 1, 2], "direct": direct,
            "synthetic": [0.3, 0.5, 0.5], "shrinkage": 0.5, "A": 0.01, "kappa": 3.0}
    # spread 0.09 no larger than the noise (1 + 1 + 2) * (0.3 / 1.96)^2 * ... = 0.36: noise over noise
    noisy = pd.DataFrame({**base, "direct_low": direct - 0.3 * 1.96, "direct_high": direct + 0.3 * 1.96})
    assert np.isnan(fit_summary(noisy).iloc[0]["sr_r2"])
    two = pd.DataFrame({**base, "direct_low": direct - 0.01, "direct_high": direct + 0.01}).head(2)
    assert np.isnan(fit_summary(two).iloc[0]["sr_r2"])  # one or two subgroups: was -inf or wild


def _units_log(shared: bool, n_models: int = 3, groups: int = 8, per_group: int = 12, seed: int = 0):
    rng = np.random.default_rng(seed)
    rows = []
    for m in range(n_models):
        for g in range(groups):
            for i in range(per_group):
                example = f"g{g}-e{i}" if shared else f"m{m}-g{g}-e{i}"
                rows.append({"model": f"m{m}", "example_id": example, "task": "t", "group": f"g{g}",
                             "correct": float(rng.random() < 0.3 + 0.05 * g)})
    return pd.DataFrame(rows)


def test_group_difficulty_is_on_exactly_when_some_model_has_labels_on_examples_another_was_not_scored_on():
    from evalcore.subgroups.estimates import empirical_bayes, group_difficulty_default, group_difficulty_feature

    used, reason = group_difficulty_default(group_difficulty_feature(_units_log(shared=True)))
    assert not used and "same examples" in reason
    used, reason = group_difficulty_default(group_difficulty_feature(_units_log(shared=False)))
    assert used and "24 of 24" in reason  # 3 models x 8 groups, every unit has other models' examples
    assert not group_difficulty_default(group_difficulty_feature(_units_log(shared=False, n_models=1)))[0]
    table = empirical_bayes(_units_log(shared=False), regressor="linear")
    assert table.attrs["group_difficulty"][0] is True
    forced = empirical_bayes(_units_log(shared=False), regressor="linear", group_difficulty=False)
    assert forced.attrs["group_difficulty"] == (False, "as chosen")
    assert not np.allclose(table["synthetic"], forced["synthetic"])  # the feature reached the regression


# group h: A scored on e1, e2; B on e2, e3; C on e3, e4 (labels in the tuples); group k: all three on k1
_DIFFICULTY_ROWS = [("A", "h", "e1", 1.0), ("A", "h", "e2", 0.0), ("B", "h", "e2", 1.0), ("B", "h", "e3", 1.0),
                    ("C", "h", "e3", 0.0), ("C", "h", "e4", 1.0),
                    ("A", "k", "k1", 1.0), ("B", "k", "k1", 0.0), ("C", "k", "k1", 1.0)]


def _difficulty_log(rows):
    return pd.DataFrame(rows, columns=["model", "group", "example_id", "correct"]).assign(task="t")


def test_group_difficulty_by_hand_uses_only_examples_the_units_model_was_not_scored_on():
    from evalcore.subgroups.estimates import group_difficulty_feature

    d = group_difficulty_feature(_difficulty_log(_DIFFICULTY_ROWS)).to_dict()
    # A: not scored on e3, e4 -> B e3 = 1, C e3 = 0, C e4 = 1: 2 / 3
    # B: not scored on e1, e4 -> A e1 = 1, C e4 = 1: 1;  C: not scored on e1, e2 -> A e1 = 1, A e2 = 0, B e2 = 1: 2 / 3
    assert d[("A", "h")] == pytest.approx(2 / 3) and d[("B", "h")] == 1.0 and d[("C", "h")] == pytest.approx(2 / 3)
    # group k: everyone scored on the one example, so nothing is free of the unit's own noise
    assert all(np.isnan(d[(m, "k")]) for m in "ABC")


def test_a_units_group_difficulty_does_not_move_with_its_own_labels():
    from evalcore.subgroups.estimates import group_difficulty_feature

    before = group_difficulty_feature(_difficulty_log(_DIFFICULTY_ROWS))
    flipped = [(m, g, e, 1.0 - y if m == "B" else y) for m, g, e, y in _DIFFICULTY_ROWS]  # all of B's labels
    after = group_difficulty_feature(_difficulty_log(flipped))
    assert after[("B", "h")] == before[("B", "h")]  # B's own noise does not reach B's feature
    assert after[("A", "h")] == pytest.approx(1 / 3) and after[("C", "h")] == pytest.approx(1 / 3)  # B e3, B e2 flip


def test_with_a_few_shared_examples_the_feature_is_on_and_ignores_them():
    """Each model draws its own 6 of a group's 20 examples, so pairs share some: on, from the others only."""
    from evalcore.subgroups.estimates import empirical_bayes, group_difficulty_feature

    rng = np.random.default_rng(4)
    rows = [(f"m{m}", f"g{g}", f"g{g}-e{e}", float(rng.random() < 0.2 + 0.07 * g))
            for m in range(3) for g in range(8) for e in rng.choice(20, 6, replace=False)]
    log = _difficulty_log(rows)
    d = group_difficulty_feature(log)
    one = log[log["group"] == "g0"]
    own = set(one.loc[one["model"] == "m0", "example_id"])
    others = one[(one["model"] != "m0") & ~one["example_id"].isin(own)]
    assert d[("m0", "g0")] == pytest.approx(others["correct"].mean())
    assert empirical_bayes(log, regressor="linear").attrs["group_difficulty"][0] is True


def test_eb_estimates_lie_inside_their_intervals():
    from evalcore.subgroups.estimates import empirical_bayes

    log = _units_log(shared=True, groups=12, per_group=6, seed=3)
    log.loc[log["group"].isin(["g10", "g11"]), "correct"] = 1.0  # all correct: an unclipped fit can pass 1
    for regressor in ("linear", "xgboost"):
        table = empirical_bayes(log, regressor=regressor)
        assert ((table["eb_low"] <= table["eb"]) & (table["eb"] <= table["eb_high"])).all()
        assert table["eb"].between(0, 1).all()
