"""The AI-assisted evaluation page (PPI / PPI++, ESS curves, Bradley-Terry) driven through AppTest.

Expected numbers are computed here from the demo data by hand-written formulas (not through the page's cache).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize
from streamlit.testing.v1 import AppTest

from test_pages import (assert_no_exception, assert_tables_downloadable, charts, csv_bytes, independent_demo,
                        load_demo, open_app, small_log, table_with, texts, upload)

TITLE = "AI-assisted evaluation"


def goto_autoeval(at: AppTest) -> AppTest:
    at.switch_page("pages/autoeval.py")
    at.run()
    assert_no_exception(at)
    assert [t.value for t in at.title] == [TITLE]
    return at


def hand_ppi_plus(y: np.ndarray, yhat: np.ndarray, yhat_u: np.ndarray) -> tuple[float, float, float]:
    """PPI++ for one model written out: (estimate, se, lambda) with lambda = Cov_n / ((1 + n/N) Var(pooled))."""
    n, N = len(y), len(yhat_u)
    cov_n = np.mean((y - y.mean()) * (yhat - yhat.mean()))
    lam = float(np.clip(cov_n / ((1 + n / N) * np.var(np.concatenate([yhat, yhat_u]), ddof=1)), 0, 1))
    estimate = lam * yhat_u.mean() + np.mean(y - lam * yhat)
    se = np.sqrt(np.var(y - lam * yhat, ddof=1) / n + lam**2 * np.var(yhat_u, ddof=1) / N)
    return float(estimate), float(se), lam


def test_synthetic_demo_estimates_match_hand_computed_ppi():
    at = open_app()
    at.select_slider(key="w_level").set_value(0.9)  # the sidebar's level (the paper reports 90% intervals)
    at = goto_autoeval(at)
    assert not texts(at.error)
    frame = independent_demo("synthetic")
    table = table_with(at, "model", "method", "estimate", "lam", "ess_ratio")
    assert set(table["method"]) == {"classical (labels only)", "PPI (λ = 1)", "PPI++ (tuned λ)"}
    for model, rows in frame.groupby("model"):
        labeled = rows[rows["correct"].notna()]
        unlabeled = rows[rows["correct"].isna()]
        classical = table[(table["model"] == model) & (table["method"] == "classical (labels only)")].iloc[0]
        assert classical["estimate"] == pytest.approx(labeled["correct"].mean(), abs=1e-12)
        assert classical["ess_ratio"] == pytest.approx(1.0)
        est, se, lam = hand_ppi_plus(labeled["correct"].to_numpy(float), labeled["confidence"].to_numpy(float),
                                     unlabeled["confidence"].to_numpy(float))
        plus = table[(table["model"] == model) & (table["method"] == "PPI++ (tuned λ)")].iloc[0]
        assert plus["estimate"] == pytest.approx(est, abs=1e-12)
        assert plus["se"] == pytest.approx(se, rel=1e-9)
        assert plus["lam"] == pytest.approx(lam, abs=1e-12)
        assert plus["ci_high"] - plus["ci_low"] == pytest.approx(2 * 1.6448536269514722 * se, rel=1e-9)  # 90%
        assert plus["ess_plugin"] >= 0.999 * len(labeled)  # PPI++ never loses to the labels alone (plug-in)
        assert plus["ess_low"] <= plus["ess"] <= plus["ess_high"]  # its bootstrap interval brackets it
        assert classical["ess_low"] == classical["ess_high"] == len(labeled)
    simultaneous = table_with(at, "chi2_low", "bonferroni_low")
    assert (simultaneous["chi2_high"] - simultaneous["chi2_low"]
            > simultaneous["bonferroni_high"] - simultaneous["bonferroni_low"]).all()
    needed = table_with(at, "n_classical", "n_ppi")
    assert (needed["n_ppi"] <= needed["n_classical"]).all()
    quality = table_with(at, "annotator", "quality", "ess_ratio")
    assert set(quality["annotator"]) == {"confidence", "proxy"}
    assert (quality["ess_ratio_low"] <= quality["ess_ratio"]).all()
    assert (quality["ess_ratio"] <= quality["ess_ratio_high"]).all()
    assert len(charts(at)) == 3  # interval comparison, projection, annotator quality
    captions = " ".join(texts(at.caption))
    assert "90% normal interval for each model on its own" in captions
    assert_tables_downloadable(at)


def test_stratified_design_adds_stratified_ppi_rows():
    at = goto_autoeval(open_app())
    at.selectbox(key="ae_design").set_value("annotator")
    at.run()
    assert_no_exception(at)
    table = table_with(at, "model", "method", "estimate")
    strat = table[table["method"] == "stratified PPI++"]
    assert len(strat) == table["model"].nunique()
    plain = table[table["method"] == "PPI++ (tuned λ)"].set_index("model")["estimate"]
    assert np.allclose(strat.set_index("model")["estimate"], plain, atol=0.02)  # same target, other design


def test_sklearn_demo_fully_labeled_shows_ess_curves():
    at = open_app()
    load_demo(at, "sklearn")
    goto_autoeval(at)
    assert not texts(at.error)
    at.number_input(key="ae_splits").set_value(40)
    at.run()
    assert_no_exception(at)
    curves = table_with(at, "n", "method", "model", "ess", "coverage", "rank_corr")
    assert set(curves["method"]) == {"classical", "ppi", "ppi++"}
    classical = curves[curves["method"] == "classical"]
    assert np.allclose(classical["ess"], classical["n"]) and np.allclose(classical["ess_empirical"], classical["n"])
    assert "all models" in set(curves["model"])
    assert ((curves["coverage"] >= 0) & (curves["coverage"] <= 1)).all()
    assert len(charts(at)) == 3  # ESS curves, rank correlation, annotator quality
    assert any("Seed 0" in c for c in texts(at.caption))
    quality = table_with(at, "annotator", "quality", "ess_ratio_low")
    assert set(quality["annotator"]) == {"confidence", "proxy"}
    assert_tables_downloadable(at)


def bt_mle(labeled: pd.DataFrame, models: list[str], reference: str) -> dict[str, float]:
    """Classical Bradley-Terry MLE by direct minimisation of the logistic loss (independent of evalcore)."""
    free = [m for m in models if m != reference]
    pos = {m: i for i, m in enumerate(free)}

    def loss(beta):
        full = {reference: 0.0, **{m: beta[pos[m]] for m in free}}
        d = np.array([full[b] - full[a] for a, b in zip(labeled["model_a"], labeled["model_b"])])
        y = labeled["outcome"].to_numpy(float)
        return np.sum(np.logaddexp(0, d) - y * d)

    fit = minimize(loss, np.zeros(len(free)), method="BFGS", options={"gtol": 1e-10})
    return {reference: 0.0, **{m: float(fit.x[pos[m]]) for m in free}}


def test_battles_demo_bradley_terry_matches_the_mle_and_moves_with_the_reference():
    at = open_app()
    load_demo(at, "battles")
    goto_autoeval(at)
    assert not texts(at.error)
    battles = independent_demo("battles")
    labeled = battles[battles["outcome"].notna()]
    models = sorted(set(battles["model_a"]) | set(battles["model_b"]))
    table = table_with(at, "model", "method", "coefficient", "rank", "lam")
    assert set(table["method"]) == {"classical (labels only)", "PPI (λ = 1)", "PPI++ (tuned λ)"}
    classical = table[table["method"] == "classical (labels only)"].set_index("model")["coefficient"]
    expected = bt_mle(labeled, models, models[0])
    for model in models:
        assert classical[model] == pytest.approx(expected[model], abs=1e-5)
    plus = table[table["method"] == "PPI++ (tuned λ)"]
    assert 0 <= plus["lam"].iloc[0] <= 1
    width = lambda rows: (rows["ci_high"] - rows["ci_low"]).to_numpy()  # noqa: E731
    assert width(plus)[1:].mean() < width(table[table["method"] == "classical (labels only)"])[1:].mean()
    assert len(charts(at)) == 1
    assert_tables_downloadable(at)

    at.selectbox(key="ae_reference").set_value(models[2])
    at.run()
    moved = table_with(at, "model", "method", "coefficient")
    moved = moved[moved["method"] == "classical (labels only)"].set_index("model")["coefficient"]
    for model in models:  # same fit, another anchor: every coefficient shifts by the new reference's old value
        assert moved[model] == pytest.approx(classical[model] - classical[models[2]], abs=1e-5)


def test_labels_given_for_some_models_only_are_refused_with_the_example():
    at = open_app()
    upload(at, "small.csv", csv_bytes(small_log()))
    goto_autoeval(at)
    errors = " ".join(texts(at.error))
    assert "labeled for some models but not others" in errors and "q4" in errors


def test_annotator_missing_on_a_labeled_example_is_refused():
    log = small_log()
    log["correct"] = log["correct"].fillna(0)
    log.loc[(log["example_id"] == "q3") & (log["model"] == "m-beta"), "confidence"] = np.nan
    unlabeled = log[log["example_id"] == "q3"].assign(example_id="q9", correct=np.nan, confidence=0.5)
    at = open_app()
    upload(at, "gap.csv", csv_bytes(pd.concat([log, unlabeled])))
    goto_autoeval(at)
    errors = " ".join(texts(at.error))
    assert "Annotator 'confidence' is missing" in errors and "q3" in errors


def test_battles_with_every_vote_fall_back_to_classical_and_say_so():
    battles = independent_demo("battles").head(400).copy()
    rng = np.random.default_rng(0)
    battles["outcome"] = (rng.random(len(battles)) < battles["judge"]).astype(float)
    at = open_app()
    upload(at, "votes.csv", csv_bytes(battles))
    goto_autoeval(at)
    assert not texts(at.error)
    assert any("only the classical estimate" in i for i in texts(at.info))
    table = table_with(at, "model", "method", "coefficient")
    assert set(table["method"]) == {"classical (labels only)"}
    # every battle voted: the judge's worth is measured by random splits (the paper's Figure 4)
    curves = table_with(at, "n", "method", "model", "ess", "failed")
    assert set(curves["method"]) == {"classical", "ppi", "ppi++"}
    classical = curves[curves["method"] == "classical"]
    assert np.allclose(classical["ess"], classical["n"])
    assert ((curves["failed"] >= 0) & (curves["failed"] < 1)).all()
    assert len(charts(at)) == 3  # coefficients, ESS curves, rank correlation


def test_constant_proxy_gets_lambda_zero_with_a_note():
    frame = independent_demo("synthetic")
    frame = frame[frame["task"] == frame["task"].iloc[0]].assign(proxy=0.7)
    at = open_app()
    upload(at, "flat.csv", csv_bytes(frame.drop(columns=["confidence"])))
    goto_autoeval(at)
    assert not texts(at.error)
    assert any("constant" in i and "λ = 0" in i for i in texts(at.info))
    table = table_with(at, "model", "method", "estimate", "lam")
    plus = table[table["method"] == "PPI++ (tuned λ)"].set_index("model")
    classical = table[table["method"] == "classical (labels only)"].set_index("model")
    assert (plus["lam"] == 0).all()
    assert np.allclose(plus["estimate"], classical["estimate"], atol=1e-12)


def test_importance_weights_change_the_estimate_to_the_weighted_mean():
    frame = independent_demo("synthetic")
    frame = frame[frame["task"] == frame["task"].iloc[0]].copy()
    ids = sorted(frame["example_id"].unique())
    weight = dict(zip(ids, np.linspace(0.5, 2.0, len(ids))))
    frame["weight"] = frame["example_id"].map(weight)
    at = open_app()
    upload(at, "weighted.csv", csv_bytes(frame))
    goto_autoeval(at)
    at.checkbox(key="ae_weighted").check()
    at.run()
    assert_no_exception(at)
    table = table_with(at, "model", "method", "estimate")
    classical = table[table["method"] == "classical (labels only)"].set_index("model")["estimate"]
    for model, rows in frame.groupby("model"):
        lab = rows[rows["correct"].notna()]
        w = lab["weight"].to_numpy() / lab["weight"].mean()  # self-normalized (the default)
        assert classical[model] == pytest.approx(np.mean(w * lab["correct"].to_numpy()), abs=1e-12)


def test_any_per_example_score_with_a_proxy_annotator():
    rng = np.random.default_rng(3)
    rows = []
    for model, shift in (("m-one", 0.0), ("m-two", 0.4)):
        for i in range(300):
            truth = rng.normal(2.0 + shift, 1.0)
            rows.append({"model": model, "example_id": f"e{i}", "score": truth if i < 120 else np.nan,
                         "proxy": truth + rng.normal(0, 0.5)})
    log = pd.DataFrame(rows)
    at = open_app()
    upload(at, "scores.csv", csv_bytes(log))
    goto_autoeval(at)
    assert not texts(at.error)
    assert at.selectbox(key="ae_metric").value == "score"
    assert at.selectbox(key="ae_annotator").value == "proxy"  # a confidence would estimate accuracy only
    table = table_with(at, "model", "method", "estimate", "lam")
    for model, part in log.groupby("model"):
        lab, unl = part[part["score"].notna()], part[part["score"].isna()]
        classical = table[(table["model"] == model) & (table["method"] == "classical (labels only)")].iloc[0]
        assert classical["estimate"] == pytest.approx(lab["score"].mean(), abs=1e-12)
        est, se, lam = hand_ppi_plus(lab["score"].to_numpy(), lab["proxy"].to_numpy(), unl["proxy"].to_numpy())
        plus = table[(table["model"] == model) & (table["method"] == "PPI++ (tuned λ)")].iloc[0]
        assert plus["estimate"] == pytest.approx(est, abs=1e-12) and plus["lam"] == pytest.approx(lam)
        assert plus["se"] < classical["se"]  # a good annotator (noise sd 0.5 against spread 1) narrows the interval


def test_imagenet_x_upload_gives_ess_curves_above_n(shared_file):
    """The real ImageNet-X log (4 models x 50,000 images, top-1 probability as the annotator) through the uploader."""
    at = open_app()
    upload(at, "imagenet_x_predictions.csv.gz", shared_file("imagenet_x_predictions.csv.gz").read_bytes(),
           "application/gzip")
    goto_autoeval(at)
    assert not texts(at.error)
    curves = table_with(at, "n", "method", "model", "ess", "coverage")
    plus = curves[(curves["model"] == "all models") & (curves["method"] == "ppi++")]
    assert (plus["ess"] > 1.3 * plus["n"]).all()  # the paper's ~50% gain
    assert ((plus["coverage"] - 0.9).abs() < 0.08).all()
