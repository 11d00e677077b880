"""evalcore.ppi.curves: split studies (Boyeau et al., Sections 2.3-2.4, Figures 1-3, 6, Supplement C.2).

Known answers: the per-split sums reproduce ppi_mean / classical_mean on the same split; classical ESS = n; seeded
results independent of the number of threads; a perfect annotator is worth (almost) the whole pool, a useless one
nothing (PPI++) or less than nothing (PPI); coverage near nominal; real ImageNet-X data (ResNet50 accuracy 0.7613).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalcore.ppi.means import classical_mean, ppi_mean
from evalcore.ppi.curves import ALL_MODELS, _split_estimates, annotator_quality, default_grid, ess_curves
from evalcore.data.reading import EvalDataError


def _population(rng, T, noise=(0.05, 0.2)):
    """M = len(noise) models: p ~ Beta(3, 2) shifted per model, y ~ Bernoulli(p), annotator p + N(0, noise)."""
    base = rng.beta(3.0, 2.0, (T, 1))
    p = np.clip(base - np.arange(len(noise)) * 0.1, 0.0, 1.0)
    y = (rng.random((T, 1)) < p).astype(float)
    yhat = np.clip(p + rng.normal(0.0, 1.0, p.shape) * np.asarray(noise), 0.0, 1.0)
    return y, yhat


def _totals(yhat):
    return {"h": yhat.sum(0), "hh": (yhat * yhat).sum(0), "pooled": yhat.var(axis=0, ddof=1)}


# ---------------------------------------------------------------------------------------------- _split_estimates


def test_split_estimates_match_ppi_mean():
    rng = np.random.default_rng(0)
    y, yhat = _population(rng, 300)
    idx = np.stack([rng.choice(300, 50, replace=False) for _ in range(3)])
    out = _split_estimates(y, yhat, _totals(yhat), idx, 0.1)
    for s in range(3):
        lab = np.zeros(300, dtype=bool)
        lab[idx[s]] = True
        refs = {"classical": classical_mean(y[lab], 0.1),
                "ppi": ppi_mean(y[lab], yhat[lab], yhat[~lab], 0.1, lam=1.0),
                "ppi++": ppi_mean(y[lab], yhat[lab], yhat[~lab], 0.1)}
        for method, ref in refs.items():
            est, se, lam = out[method]
            np.testing.assert_allclose(est[s], ref.estimate, rtol=0, atol=1e-10)
            np.testing.assert_allclose(se[s], ref.se, rtol=0, atol=1e-10)
            np.testing.assert_allclose(lam[s], ref.lam, rtol=0, atol=1e-10)
        np.testing.assert_allclose(out["var_classical"][s], refs["classical"].se ** 2, rtol=1e-10)
    # ppi with lam = 0 equals classical on the same split
    zero = ppi_mean(y[idx[0]], yhat[idx[0]], np.delete(yhat, idx[0], axis=0), 0.1, lam=0.0)
    np.testing.assert_allclose(out["classical"][0][0], zero.estimate, atol=1e-12)


# ---------------------------------------------------------------------------------------------- ess_curves


@pytest.fixture(scope="module")
def pop():
    return _population(np.random.default_rng(1), 4000)


def test_classical_rows_have_ess_n(pop):
    y, yhat = pop
    frame = ess_curves(y, yhat, [50, 200], splits=300, seed=3, models=["a", "b"], n_jobs=1)
    cl = frame[frame["method"] == "classical"]
    assert len(cl) == 2 * 3  # two n, two models + "all models"
    np.testing.assert_allclose(cl["ess"], cl["n"], rtol=1e-12)
    per_model = cl[cl["model"] != ALL_MODELS]
    np.testing.assert_array_equal(per_model["ess_empirical"].to_numpy(), per_model["n"].to_numpy(dtype=float))
    # "all models": mean of per-model MSEs vs MSE of the model-averaged errors, summed in another order (1 ulp)
    np.testing.assert_allclose(cl["ess_empirical"], cl["n"], rtol=1e-14)
    assert (cl["lam"] == 0).all()
    assert set(frame["model"]) == {"a", "b", ALL_MODELS}
    assert set(frame["method"]) == {"classical", "ppi", "ppi++"}
    assert frame.attrs["splits"] == 300 and frame.attrs["total"] == 4000
    ppi = frame[frame["method"] == "ppi"]
    assert (ppi["lam"] == 1).all()
    pp = frame[frame["method"] == "ppi++"]
    assert ((pp["lam"] > 0) & (pp["lam"] <= 1)).all()


def test_reproducible_across_jobs(pop):
    y, yhat = pop
    a = ess_curves(y, yhat, [40, 100], splits=260, seed=5, n_jobs=1)  # 3 units per n (chunks of 125)
    b = ess_curves(y, yhat, [40, 100], splits=260, seed=5, n_jobs=2)
    pd.testing.assert_frame_equal(a, b)
    c = ess_curves(y, yhat, [40, 100], splits=260, seed=6, n_jobs=2)
    assert not np.allclose(a["mse"], c["mse"])


def test_perfect_and_useless_annotators(pop):
    y, _ = pop
    T = y.shape[0]
    n = 100
    perfect = ess_curves(y[:, 0], y[:, 0], [n], splits=200, seed=0, n_jobs=1).set_index(["method", "model"])
    # rectifier variance 0: ESS = n Var(y)/n / (Var(y)/N) ~ N = T - n
    assert perfect.at[("ppi", "0"), "ess"] == pytest.approx(T - n, rel=0.05)
    assert perfect.at[("ppi++", "0"), "ess"] > 10 * n
    noise = np.random.default_rng(9).random(T)
    useless = ess_curves(y[:, 0], noise, [n], splits=500, seed=0, n_jobs=1).set_index(["method", "model"])
    assert useless.at[("ppi++", "0"), "ess"] / n == pytest.approx(1.0, abs=0.1)
    # PPI with lam = 1 adds the annotator's variance: Var(y - u) = Var(y) + 1/12 -> ESS/n ~ 0.23/(0.23+0.083+...)
    assert useless.at[("ppi", "0"), "ess"] / n < 0.8
    assert useless.at[("ppi", "0"), "ess_empirical"] / n < 0.9


def test_coverage_near_nominal(pop):
    y, yhat = pop
    frame = ess_curves(y, yhat, [100], splits=500, alpha=0.1, seed=2, n_jobs=2).set_index(["method", "model"])
    for method in ("classical", "ppi", "ppi++"):
        for model in ("0", "1"):
            assert abs(frame.at[(method, model), "coverage"] - 0.90) < 0.04
    # better annotator for model 0 (noise 0.05) than model 1 (0.2)
    assert frame.at[("ppi++", "0"), "ess"] > frame.at[("ppi++", "1"), "ess"] > 100
    row = frame.loc[("ppi++", "0")]
    assert row["ess_low"] <= row["ess"] <= row["ess_high"]
    assert row["coverage_low"] <= row["coverage"] <= row["coverage_high"]


def test_bad_grid_and_inputs(pop):
    y, yhat = pop
    T = y.shape[0]
    with pytest.raises(EvalDataError, match=rf"must lie in \[2, {T - 2}\]"):
        ess_curves(y, yhat, [10, T - 1], splits=10)
    with pytest.raises(EvalDataError, match=r"must lie in \[2, "):
        ess_curves(y, yhat, [1], splits=10)
    with pytest.raises(EvalDataError, match="rows but yhat has"):
        ess_curves(y, yhat[:-1], [10], splits=10)
    with pytest.raises(ValueError, match="splits"):
        ess_curves(y, yhat, [10], splits=1)
    with pytest.raises(EvalDataError, match="at least 40"):
        default_grid(30)
    grid = default_grid(10_000, points=20)
    assert grid[0] == 20 and grid[-1] == 2000 and grid == sorted(set(grid))


# ---------------------------------------------------------------------------------------------- real data


def test_imagenet_x_ess(shared_file):
    rows = pd.read_csv(shared_file("imagenet_x_predictions.csv.gz"),
                       usecols=["model", "file_name", "correct", "predicted_probability"])
    y = rows.pivot(index="file_name", columns="model", values="correct").astype(float)
    yhat = rows.pivot(index="file_name", columns="model", values="predicted_probability")
    assert y.shape == (50_000, 4) and not y.isna().any().any()
    assert y["ResNet50"].mean() == pytest.approx(0.7613, abs=5e-5)
    models = list(y.columns)
    frame = ess_curves(y.to_numpy(), yhat.to_numpy(dtype=float), [100, 500, 1000], splits=250, alpha=0.1, seed=0,
                       models=models, n_jobs=2)
    table = frame[frame["method"] != "classical"].assign(ess_ratio=lambda f: f["ess"] / f["n"])
    print("\nImageNet-X ESS/n (plug-in, mean over 250 splits):")
    print(table.pivot_table(index=["method", "model"], columns="n", values="ess_ratio").round(3).to_string())
    print("ImageNet-X ESS/n (empirical, n MSE_classical / MSE):")
    print(table.assign(r=lambda f: f["ess_empirical"] / f["n"])
          .pivot_table(index=["method", "model"], columns="n", values="r").round(3).to_string())
    print("coverage / lam of PPI++:")
    print(frame[frame["method"] == "ppi++"].pivot_table(index="model", columns="n", values=["coverage", "lam"])
          .round(3).to_string())
    pp = table[table["method"] == "ppi++"]
    assert len(pp) == 3 * 5
    assert (pp["ess_ratio"] > 1.2).all()
    assert ((pp["coverage"] - 0.90).abs() < 0.05).all()
    assert ((pp["lam"] > 0) & (pp["lam"] <= 1)).all()


# ---------------------------------------------------------------------------------------------- annotator quality


def test_annotator_quality_orders_annotators():
    rng = np.random.default_rng(21)
    T = 3000
    p = rng.beta(3.0, 2.0, T)
    y = (rng.random(T) < p).astype(float)
    good = np.clip(p + rng.normal(0, 0.05, T), 0, 1)
    bad = np.clip(p + rng.normal(0, 0.4, T), 0, 1)
    calls = []
    q = annotator_quality(y, {"good": good, "bad": bad}, n=100, splits=200, seed=0, n_jobs=1,
                          progress=calls.append).set_index("annotator")
    assert q.at["good", "quality"] == pytest.approx(np.corrcoef(y, good)[0, 1], abs=1e-12)
    assert q.at["good", "quality"] > q.at["bad", "quality"] > 0
    assert q.at["good", "ess_ratio"] > q.at["bad", "ess_ratio"] >= 0.9
    assert q.at["good", "ess_ratio_low"] <= q.at["good", "ess_ratio"] <= q.at["good", "ess_ratio_high"]
    assert calls and calls[-1] == pytest.approx(1.0) and all(0 < c <= 1 for c in calls)
    assert (q["n"] == 100).all()


# ---------------------------------------------------------------------------------------------- Bradley-Terry


def _voted_battles(n_battles: int, seed: int = 0) -> pd.DataFrame:
    from evalcore.demo import synthetic as demo

    return demo.pairwise_battles(seed=seed, n_battles=n_battles, human_fraction=1.0).battles


def test_bt_ess_curves_classical_is_n_and_an_informative_judge_helps():
    from evalcore.ppi.curves import bt_ess_curves

    battles = _voted_battles(4000)
    curves = bt_ess_curves(battles, [300, 800], splits=60, alpha=0.1, seed=1)
    classical = curves[curves["method"] == "classical"]
    np.testing.assert_allclose(classical["ess"], classical["n"], rtol=1e-12)
    np.testing.assert_allclose(classical["ess_empirical"], classical["n"], rtol=1e-12)
    plus = curves[(curves["method"] == "ppi++") & (curves["model"] == "all models")]
    assert (plus["ess"] > 1.2 * plus["n"]).all()  # the demo judge reads each battle (82% agreement)
    assert ((plus["lam"] > 0) & (plus["lam"] <= 1)).all()
    assert set(curves["model"]) == set(battles["model_a"]) - {"atlas-l"} | {"all models"}  # reference left out
    assert (curves["failed"] == 0).all()
    again = bt_ess_curves(battles, [300, 800], splits=60, alpha=0.1, seed=1, n_jobs=1)
    pd.testing.assert_frame_equal(curves, again)


def test_bt_ess_curves_count_splits_without_a_finite_classical_fit():
    from evalcore.ppi.curves import bt_ess_curves

    curves = bt_ess_curves(_voted_battles(2000), [30, 400], splits=40, seed=0)
    failed = curves.groupby("n")["failed"].first()
    assert failed[30] > 0  # with 30 votes over 8 models some model often wins (or loses) all its battles
    assert failed[400] == 0


def test_bt_ess_curves_need_every_vote():
    from evalcore.ppi.curves import bt_ess_curves

    battles = _voted_battles(500)
    battles.loc[3, "outcome"] = np.nan
    with pytest.raises(EvalDataError, match="human outcome and a judge value on every battle"):
        bt_ess_curves(battles, [100], splits=10)


def test_all_correct_splits_get_the_jeffreys_width_not_zero():
    rng = np.random.default_rng(4)
    y = (rng.random((400, 2)) < [0.995, 0.6]).astype(float)  # model 0: most size-5 splits are all correct
    frame = ess_curves(y, rng.random((400, 2)), [5], splits=200, seed=1, models=["a", "b"], n_jobs=1)
    a = frame[(frame["method"] == "classical") & (frame["model"] == "a")].iloc[0]
    p = 5.5 / 6  # the Jeffreys mean of 5 of 5
    assert a["width"] > 0.9 * 2 * 1.6448536 * np.sqrt(p * (1 - p) / 5)  # nearly every split is 5 of 5
    assert a["coverage"] > 0.9  # the floor keeps the truth inside; a width of 0 would cover only when exact
