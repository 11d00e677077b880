"""evalcore.ppi.autoeval: canonical log -> PPI matrices and tables (Boyeau et al., Section 2).

Known answers: hand-built logs with their pivots and labeled masks; every refusal names the example ids to fix;
the classical row is the hand mean of the labeled values; the PPI++ row is ppi_mean on the pivot.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalcore.ppi.autoeval import estimate_table, log_matrices, quality_table
from evalcore.ppi.means import ess_bootstrap, ppi_mean
from evalcore.data.reading import EvalDataError

NAN = np.nan


def _log() -> pd.DataFrame:
    """Models A and B on examples e1..e5; e1, e2, e3 labeled (correct present for both models), e4, e5 not."""
    rows = [
        # model, example_id, correct, confidence, proxy, weight, group
        ("A", "e1", 1.0, 0.9, 0.8, 1.0, "g1"),
        ("A", "e2", 0.0, 0.4, 0.3, 2.0, "g1"),
        ("A", "e3", 1.0, 0.7, 0.6, 0.5, "g2"),
        ("A", "e4", NAN, 0.8, 0.5, 1.5, "g2"),
        ("A", "e5", NAN, 0.3, 0.2, 1.0, "g1"),
        ("B", "e1", 1.0, 0.6, 0.7, 1.0, "g1"),
        ("B", "e2", 1.0, 0.5, 0.9, 2.0, "g1"),
        ("B", "e3", 0.0, 0.2, 0.1, 0.5, "g2"),
        ("B", "e4", NAN, 0.9, 0.4, 1.5, "g2"),
        ("B", "e5", NAN, 0.1, 0.3, 1.0, "g1"),
    ]
    return pd.DataFrame(rows, columns=["model", "example_id", "correct", "confidence", "proxy", "weight", "group"])


def test_pivot_and_mask():
    d = log_matrices(_log(), "correct", ["confidence", "proxy"], use_weight=True)
    assert d.models == ("A", "B")
    assert d.example_ids.tolist() == ["e1", "e2", "e3", "e4", "e5"]
    assert d.labeled.tolist() == [True, True, True, False, False]
    assert d.n == 3 and d.N == 2 and not d.fully_labeled
    np.testing.assert_array_equal(d.y[:3], [[1, 1], [0, 1], [1, 0]])
    assert np.isnan(d.y[3:]).all()
    np.testing.assert_array_equal(d.annotators["confidence"], [[0.9, 0.6], [0.4, 0.5], [0.7, 0.2], [0.8, 0.9],
                                                               [0.3, 0.1]])
    np.testing.assert_array_equal(d.weights, [1.0, 2.0, 0.5, 1.5, 1.0])
    assert d.groups.tolist() == ["g1", "g1", "g2", "g2", "g1"]
    y, yhat, yhat_u = d.parts("proxy")
    np.testing.assert_array_equal(yhat_u, [[0.5, 0.4], [0.2, 0.3]])
    assert y.shape == yhat.shape == (3, 2)
    # row order in the log does not matter
    shuffled = log_matrices(_log().sample(frac=1.0, random_state=0), "correct", ["confidence"])
    np.testing.assert_array_equal(shuffled.annotators["confidence"], d.annotators["confidence"])
    assert log_matrices(_log(), "correct", ["confidence"]).weights is None


@pytest.mark.parametrize("edit, pattern", [
    (lambda r: r.drop(index=r.index[(r.model == "B") & (r.example_id == "e3")]),
     r"1 example\(s\) have no row for some of the selected models, e\.g\. e3"),
    (lambda r: r.assign(correct=np.where((r.model == "A") & (r.example_id == "e4"), 1.0, r.correct)),
     r"labeled for some models but not others, e\.g\. e4"),
    (lambda r: r.assign(confidence=np.where((r.model == "B") & (r.example_id == "e5"), NAN, r.confidence)),
     r"Annotator 'confidence' is missing on 1 example\(s\) \(unlabeled ones among them\), e\.g\. e5"),
    (lambda r: r.assign(confidence=np.where((r.model == "A") & (r.example_id == "e2"), NAN, r.confidence)),
     r"Annotator 'confidence' is missing on 1 example\(s\) \(labeled ones among them\), e\.g\. e2"),
    (lambda r: r.assign(confidence=np.where(r.example_id.isin(["e2", "e5"]) & (r.model == "B"), 1.2, r.confidence)),
     r"Annotator 'confidence' lies outside \[0, 1\] on 2 example\(s\), e\.g\. e2, e5"),
    (lambda r: pd.concat([r, r.iloc[[1]]], ignore_index=True),
     r"Example ids appear twice for the same model: e2"),
    (lambda r: r.assign(correct=np.where(r.example_id == "e1", r.correct, NAN)),
     r"Only 1 labeled example\(s\)"),
    (lambda r: r.assign(weight=np.where((r.model == "B") & (r.example_id == "e4"), 9.0, r.weight)),
     r"weight differs between models for example\(s\) e4"),
    (lambda r: r.assign(weight=np.where(r.example_id == "e3", 0.0, r.weight)),
     r"Labeled example\(s\) e3 have no positive weight"),
    (lambda r: r.drop(columns="weight"), r"No 'weight' column"),
    (lambda r: r.assign(correct=NAN), r"no 'correct' values"),
])
def test_refusals_name_examples(edit, pattern):
    with pytest.raises(EvalDataError, match=pattern):
        log_matrices(edit(_log()), "correct", ["confidence"], use_weight=True)


def test_unknown_annotator_refused():
    with pytest.raises(EvalDataError, match=r"\['judge'\] are not in the log"):
        log_matrices(_log(), "correct", ["confidence", "judge"])
    with pytest.raises(EvalDataError, match=r"\(none\)"):
        log_matrices(_log(), "correct", [])


def test_score_metric_has_no_bounds():
    rows = _log().rename(columns={"correct": "score"})
    rows["proxy"] = rows["proxy"] * 10  # scores on a 0-10 scale are fine
    d = log_matrices(rows, "score", ["proxy"])
    assert d.metric == "score" and d.annotators["proxy"].max() == pytest.approx(9.0)


def _big_log(seed=0, T=80, labeled=30):
    rng = np.random.default_rng(seed)
    models = ["m1", "m2", "m3"]
    skill = {"m1": 0.8, "m2": 0.6, "m3": 0.4}
    frames = []
    for m in models:
        p = np.clip(skill[m] + rng.normal(0, 0.15, T), 0.01, 0.99)
        correct = (rng.random(T) < p).astype(float)
        correct[labeled:] = NAN
        frames.append(pd.DataFrame({"model": m, "example_id": [f"x{i:03d}" for i in range(T)], "correct": correct,
                                    "confidence": np.clip(p + rng.normal(0, 0.05, T), 0, 1),
                                    "group": np.where(np.arange(T) % 2 == 0, "even", "odd")}))
    return pd.concat(frames, ignore_index=True)


def test_estimate_table_rows():
    rows = _big_log()
    d = log_matrices(rows, "correct", ["confidence"])
    table = estimate_table(d, "confidence", alpha=0.1)
    assert set(table["method"]) == {"classical (labels only)", "PPI (λ = 1)", "PPI++ (tuned λ)"}
    cl = table[table["method"] == "classical (labels only)"].set_index("model")
    hand = rows.dropna(subset=["correct"]).groupby("model")["correct"].mean()
    for m in ("m1", "m2", "m3"):
        assert cl.at[m, "estimate"] == pytest.approx(hand[m], abs=1e-12)
    y, yhat, yhat_u = d.parts("confidence")
    ref = ppi_mean(y, yhat, yhat_u, alpha=0.1, bounds=(0.0, 1.0))
    pp = table[table["method"] == "PPI++ (tuned λ)"]
    np.testing.assert_allclose(pp["estimate"], ref.estimate, atol=1e-14)
    np.testing.assert_allclose(pp["ci_low"], ref.ci_low, atol=1e-14)
    np.testing.assert_allclose(pp["lam"], ref.lam, atol=1e-14)
    np.testing.assert_allclose(pp["ess_plugin"], ref.ess, rtol=1e-12)  # the plug-in: λ treated as known
    ess, low, high = ess_bootstrap(y, yhat, yhat_u, None, 200, 0.9, 0)  # the table's defaults
    np.testing.assert_allclose(pp["ess_ratio"], ess / 30, rtol=1e-12)  # λ's estimation counted
    assert (pp["ess"].to_numpy() <= pp["ess_plugin"].to_numpy() + 1e-9).all()
    assert (pp["ess_low"].to_numpy() <= pp["ess"].to_numpy()).all() and (pp["ess"] <= pp["ess_high"]).all()
    assert pp["model"].tolist() == ["m1", "m2", "m3"]
    assert pd.api.types.is_integer_dtype(table["rank"]) and (table["rank"] >= 1).all()
    assert (table["rank"] <= 3).all() and (table.groupby("method")["rank"].min() == 1).all()
    assert (table["n"] == 30).all()
    # the classical estimate uses no unlabeled examples: N = 0 on its rows, 50 on the PPI rows
    assert (cl["N"] == 0).all() and (table.loc[table["method"] != "classical (labels only)", "N"] == 50).all()
    ppi = table[table["method"] == "PPI (λ = 1)"]
    assert (ppi["lam"] == 1).all()


def test_estimate_table_strata_and_quality():
    rows = _big_log(seed=1)
    d = log_matrices(rows, "correct", ["confidence"])
    table = estimate_table(d, "confidence", strata=d.groups)
    strat = table[table["method"] == "stratified PPI++"]
    assert len(strat) == 3 and strat["model"].tolist() == ["m1", "m2", "m3"]
    assert strat["estimate"].between(0, 1).all()
    q = quality_table(d)
    assert len(q) == 3 and (q["annotator"] == "confidence").all()
    y, yhat, _ = d.parts("confidence")
    assert q.loc[0, "quality"] == pytest.approx(np.corrcoef(y[:, 0], yhat[:, 0])[0, 1], abs=1e-12)
    pp = table[table["method"] == "PPI++ (tuned λ)"]
    np.testing.assert_allclose(q["ess_ratio"], pp["ess_ratio"], rtol=1e-12)
