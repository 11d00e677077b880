"""A workspace dataset larger than the dashboard loads (EVALCORE_ENGINE_ROWS) is analysed in the engine, through the
same path as a log in memory: every view works on it, the per-example ones (selective prediction, the holdout study,
the sample to label, ESS curves) whenever the selected examples fit in EVALCORE_FETCH_MB; beyond that bound the
views show what the reductions give and one message says what to do."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from evalcore.data.validation import validate
from evalcore.stats.intervals import DEFAULT_LEVEL
from evalcore.stats.overall import overall_table
from evalcore.workspace import Workspace
from pages.common.report_cache import Built
from pages.common.store import store
from test_pages import assert_no_exception, goto, open_app, texts

NUMBERS = re.compile(r'<script type="application/json" id="evalcore-numbers">(.*?)</script>', re.S)


def big_log(n: int = 600, seed: int = 2) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    parts = [pd.DataFrame({"model": m, "example_id": [f"q{i}" for i in range(n)], "task": [f"t{i % 3}" for i in range(n)],
                           "correct": (rng.random(n) < p).astype(float), "confidence": rng.uniform(0.3, 1, n)})
             for m, p in (("small", 0.55), ("large", 0.8))]
    return pd.concat(parts, ignore_index=True)


def open_saved(tmp_path, monkeypatch, raw: pd.DataFrame, name: str):
    """A session on ``raw`` saved to a fresh workspace with EVALCORE_ENGINE_ROWS = 1,000: it opens in the engine.
    Returns the app and the dataset's record."""
    monkeypatch.setenv("EVALCORE_WORKSPACE", str(tmp_path / "ws"))
    monkeypatch.setenv("EVALCORE_ENGINE_ROWS", "1000")
    raw.to_parquet(tmp_path / f"{name}.parquet")
    record = Workspace(tmp_path / "ws").add_log(tmp_path / f"{name}.parquet", name)
    at = open_app()
    goto(at, "workspace")
    at.button(key="ws_open").click()
    at.run()
    assert_no_exception(at)
    return at, record


@pytest.fixture()
def opened(tmp_path, monkeypatch):
    """A session on a saved 1,200-row dataset with EVALCORE_ENGINE_ROWS = 1,000: it opens in the engine."""
    raw = big_log()
    at, record = open_saved(tmp_path, monkeypatch, raw, "big run")
    return at, validate(raw), record


def test_data_and_models_pages_work_in_the_engine(opened):
    at, frame, record = opened
    assert any("workspace · big run" in t for t in texts(at.sidebar.caption))
    goto(at, "data")
    assert any("analysed in the engine (DuckDB)" in t for t in texts(at.info))
    assert len(at.dataframe[-1].value) == 200  # the preview: the first 200 rows from the engine
    goto(at, "models")
    table = at.dataframe[0].value.set_index("model").sort_index()
    expected = overall_table(frame, "correct", 0.05).set_index("model").sort_index()  # the mean over tasks
    np.testing.assert_allclose(table["estimate"], expected["estimate"], atol=1e-12)
    np.testing.assert_allclose(table["ci_low"], expected["ci_low"], atol=1e-12)
    at.multiselect(key="w_models").set_value(["large"])
    at.run()
    assert_no_exception(at)
    assert at.dataframe[0].value["model"].tolist() == ["large"]


def test_the_labeling_page_draws_the_sample_in_the_engine(opened):
    at, frame, _ = opened
    at.switch_page("pages/sampling.py")
    at.run()
    assert_no_exception(at)
    assert not texts(at.error) and not texts(at.info)
    headers = [h.value for h in at.subheader]
    assert {"Examples to label", "Estimate after labeling", "Monte Carlo check"} <= set(headers)  # fully labeled
    picked = next(d.value for d in at.dataframe if "stratum" in d.value.columns and "example_id" in d.value.columns)
    assert 2 <= len(picked) <= 600 and picked["example_id"].is_unique
    assert set(picked["example_id"]) <= set(frame["example_id"])


def test_beyond_the_memory_bound_the_views_say_what_to_do(tmp_path, monkeypatch):
    """Examples with long ids make the selection about 2 MB: above EVALCORE_FETCH_MB = 1, each per-example view
    says so once, with the bound and what to do, and shows what the reductions give."""
    from evalcore.sampling.designs import design_efficiency_of_log

    monkeypatch.setenv("EVALCORE_FETCH_MB", "1")
    raw = big_log(n=3000)
    raw["example_id"] = raw["example_id"] + "-" + "x" * 300
    raw["group"] = [f"g{i % 8}" for i in range(len(raw))]
    raw["proxy"] = raw["confidence"]
    raw.loc[raw.index % 3 != 0, "correct"] = np.nan
    at, _ = open_saved(tmp_path, monkeypatch, raw, "long ids")
    for page, view in (("calibration", "Selective prediction"), ("sampling", "Drawing the sample"),
                       ("subgroups", "The holdout study"), ("autoeval", "Effective-sample-size curves")):
        at.switch_page(f"pages/{page}.py")
        at.run()
        assert_no_exception(at)
        assert not texts(at.error), page
        said = [t for t in texts(at.info) if "EVALCORE_FETCH_MB" in t]
        assert len(said) == 1 and said[0].startswith("long ids") is False, (page, texts(at.info))
        assert view in said[0] and "6,000 rows" in said[0] and "Models page" in said[0], said
    at.switch_page("pages/sampling.py")
    at.run()
    table = at.dataframe[0].value
    budgets = sorted(table["budget"].unique())
    expected = design_efficiency_of_log(validate(raw), "large", budgets, "confidence", 10)
    pd.testing.assert_frame_equal(table.reset_index(drop=True), expected, check_dtype=False, atol=1e-6, rtol=0.02)


def test_the_leaderboard_page_works_in_the_engine(opened):
    from evalcore.leaderboard import bootstrap as aggregate
    from evalcore.stats.overall import overall_table, with_overall

    at, frame, _ = opened
    goto(at, "leaderboard")
    assert not texts(at.error)
    long = next(d.value for d in at.dataframe if "scope" in d.value.columns)
    expected = aggregate.leaderboard(frame, level=DEFAULT_LEVEL, n_boot=2000, seed=0)  # one path: the same bootstrap
    expected = with_overall(expected, overall_table(frame, "correct", 1 - DEFAULT_LEVEL))  # the one overall interval
    both = long.merge(expected, on=["model", "scope", "name"], suffixes=("", "_memory"))
    assert len(both) == len(expected)
    for column in ("estimate", "ci_low", "ci_high"):
        np.testing.assert_allclose(both[column], both[f"{column}_memory"], atol=1e-12)
    assert any("Weighted scores" == h.value for h in at.subheader)


def test_the_calibration_page_works_in_the_engine(opened):
    from evalcore.calibration import estimators as calibration

    at, frame, _ = opened
    goto(at, "calibration")
    assert not texts(at.error)
    table = at.dataframe[0].value.set_index("model").sort_index()
    expected = calibration.calibration_by_model(frame, n_bins=10, n_boot=50).set_index("model").sort_index()
    np.testing.assert_allclose(table["ece"], expected["ece"], atol=1e-12)
    reliability = at.dataframe[1].value
    memory = calibration.reliability_table(*[frame.loc[frame["model"] == "large", c].to_numpy()  # first tab
                                             for c in ("confidence", "correct")], 10)
    pd.testing.assert_frame_equal(reliability, memory, check_dtype=False, atol=1e-12)
    assert not texts(at.info)
    assert {"Selective prediction", "Breakdown"} <= {h.value for h in at.subheader}
    selective = next(d.value for d in at.dataframe if "accuracy_at_coverage" in d.value.columns)
    large = frame[frame["model"] == "large"]
    expected = calibration.accuracy_at_coverage(large["confidence"].to_numpy(), large["correct"].to_numpy(), 0.8)
    assert selective.set_index("model").loc["large", "accuracy_at_coverage"] == pytest.approx(expected.accuracy)


def test_the_subgroups_page_works_in_the_engine(tmp_path, monkeypatch):
    from evalcore.subgroups.estimates import empirical_bayes

    raw = big_log()
    raw["group"] = [f"g{i % 8}" for i in range(len(raw))]
    raw["length"] = np.random.default_rng(3).gamma(2.0, 50.0, len(raw)).round()  # a feature column
    at, _ = open_saved(tmp_path, monkeypatch, raw, "grouped")
    goto(at, "subgroups")
    assert not texts(at.error)
    shown = next(d.value for d in at.dataframe if "eb" in d.value.columns)
    expected = empirical_bayes(validate(raw), seed=0, features=["length"], alpha=0.05)
    pd.testing.assert_frame_equal(shown.reset_index(drop=True)[expected.columns], expected, check_dtype=False,
                                  atol=1e-9)
    assert not [t for t in texts(at.info) if "memory" in t]
    assert at.button(key="sg_run") is not None  # the holdout study is offered
    assert "length" in at.multiselect(key="sg_features").options  # the stored feature column reaches the page
    at.checkbox(key="sg_auto").set_value(True)  # automatic subgroups: k-means on the features
    at.run()
    assert_no_exception(at)
    assert not texts(at.error)
    groups = next(d.value for d in at.dataframe if "eb" in d.value.columns)["group"]
    assert set(groups) != {f"g{i}" for i in range(8)}  # the groups were formed from the features


def test_the_ai_assisted_page_works_in_the_engine(tmp_path, monkeypatch):
    from evalcore.ppi.means import ppi_mean_by_model

    raw = big_log()
    raw["proxy"] = np.clip(raw["correct"] * 0.6 + 0.2 + np.random.default_rng(1).normal(0, 0.1, len(raw)), 0, 1)
    raw.loc[raw["example_id"].str[1:].astype(int) % 3 != 0, "correct"] = np.nan  # a third of the examples labeled
    at, _ = open_saved(tmp_path, monkeypatch, raw, "judged")
    at.switch_page("pages/autoeval.py")
    at.run()
    at.selectbox(key="ae_annotator").set_value("proxy")
    at.run()
    assert_no_exception(at)
    assert not texts(at.error)
    assert {"Estimates", "Projection", "Annotator quality"} <= {t.label for t in at.tabs}
    table = next(d.value for d in at.dataframe if "method" in d.value.columns)
    tuned = table[table["method"] == "PPI++ (tuned λ)"].set_index("model").sort_index()
    expected = ppi_mean_by_model(validate(raw), "proxy", alpha=0.1).set_index("model").sort_index()
    np.testing.assert_allclose(tuned["estimate"], expected["estimate"], atol=1e-9)
    assert (table["method"] == "classical (labels only)").sum() == 2


def test_the_report_page_builds_the_report_in_the_engine(opened):
    at, frame, _ = opened
    goto(at, "report")
    built = [value for value, _ in store()._data.values() if isinstance(value, Built)][-1]
    assert "Calibration" in built.sections and "Leaderboard" in built.sections
    numbers = json.loads(NUMBERS.search(built.html.decode()).group(1))["sections"]
    shown = pd.DataFrame(numbers["accuracy"]["tables"]["by model"]).set_index("model").sort_index()
    expected = overall_table(frame, "correct", 0.05).set_index("model").sort_index()
    np.testing.assert_allclose(shown["estimate"], expected["estimate"], atol=1e-12)
    assert any("Covers 1,200 rows" in t for t in texts(at.caption))


def test_battles_in_the_engine_get_their_report(tmp_path, monkeypatch):
    from evalcore.demo.synthetic import pairwise_battles

    battles = pairwise_battles(0, n_models=4, n_battles=1500).battles
    at, _ = open_saved(tmp_path, monkeypatch, battles, "arena")
    goto(at, "models")
    assert any("win rate" in t for t in texts(at.caption))
    at.switch_page("pages/autoeval.py")
    at.run()
    assert_no_exception(at)
    table = at.dataframe[0].value
    coefficients = table[table["method"] == table["method"].iloc[-1]].set_index("model")  # PPI++: the tuned fit
    from evalcore.ppi.bradley_terry import bradley_terry_of_log

    expected = bradley_terry_of_log(validate(battles), alpha=0.1).set_index("model")
    np.testing.assert_allclose(coefficients.loc[expected.index, "coefficient"], expected["coefficient"], atol=1e-9)
    goto(at, "report")
    built = [value for value, _ in store()._data.values() if isinstance(value, Built)][-1]
    assert built.sections == ("Pairwise battles (Bradley-Terry)",)
    assert built.summary[0].startswith("Strongest model in the battles:")
