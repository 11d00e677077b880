"""mean_table: per-cell means with Wilson (binary) or Student-t (real-valued) intervals."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evalcore.stats.summaries import mean_table


def test_binary_metric_uses_wilson_and_counts_unlabeled():
    frame = pd.DataFrame({
        "model": ["a"] * 5 + ["b"] * 3,
        "correct": [1, 1, 0, 1, np.nan, 0, 0, 1],
    })
    table = mean_table(frame, ["model"], "correct", alpha=0.05)
    a = table.set_index("model").loc["a"]
    assert (a["n"], a["n_unlabeled"]) == (4, 1)
    assert a["estimate"] == pytest.approx(0.75)
    assert a["se"] == pytest.approx(math.sqrt(0.75 * 0.25 / 4))
    # Wilson 3 of 4 by hand
    z = stats.norm.ppf(0.975)
    centre = (0.75 + z**2 / 8) / (1 + z**2 / 4)
    half = z / (1 + z**2 / 4) * math.sqrt(0.75 * 0.25 / 4 + z**2 / 64)
    assert (a["ci_low"], a["ci_high"]) == pytest.approx((centre - half, centre + half))


def test_real_metric_uses_student_t():
    frame = pd.DataFrame({"model": ["m"] * 4, "task": ["t"] * 4, "score": [1.0, 2.0, 3.0, 6.0]})
    row = mean_table(frame, ["model", "task"], "score", alpha=0.1).iloc[0]
    sd = np.std([1, 2, 3, 6], ddof=1)
    half = stats.t.ppf(0.95, 3) * sd / 2
    assert row["estimate"] == pytest.approx(3.0)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((3 - half, 3 + half))
    assert list(mean_table(frame, ["model", "task"], "score").columns) == [
        "model", "task", "n", "n_unlabeled", "estimate", "se", "ci_low", "ci_high"]


def test_single_value_cell_has_no_spread():
    frame = pd.DataFrame({"model": ["m", "n", "n"], "score": [0.5, 0.1, 0.3]})
    table = mean_table(frame, ["model"], "score").set_index("model")
    assert np.isnan(table.loc["m", "se"]) and np.isnan(table.loc["m", "ci_low"])
    assert not np.isnan(table.loc["n", "ci_low"])


def test_wilson_coverage_on_simulated_cells():
    rng = np.random.default_rng(0)
    p = 0.8
    frame = pd.DataFrame({"cell": np.repeat(np.arange(400), 50), "correct": (rng.random(20000) < p).astype(float)})
    table = mean_table(frame, ["cell"], "correct", alpha=0.05)
    coverage = ((table["ci_low"] <= p) & (p <= table["ci_high"])).mean()
    assert 0.92 <= coverage <= 0.98


def test_bounds_clip_the_t_interval_of_a_probability():
    frame = pd.DataFrame({"model": ["m", "m"], "confidence": [0.05, 0.95]})
    unclipped = mean_table(frame, ["model"], "confidence").iloc[0]
    assert unclipped["ci_low"] < 0 and unclipped["ci_high"] > 1
    clipped = mean_table(frame, ["model"], "confidence", bounds=(0.0, 1.0)).iloc[0]
    assert (clipped["ci_low"], clipped["ci_high"]) == (0.0, 1.0)
    assert clipped["estimate"] == pytest.approx(0.5)


def test_cell_without_labels_gets_nan_not_an_error():
    frame = pd.DataFrame({"model": ["a", "a", "b"], "correct": [1.0, 0.0, np.nan]})
    table = mean_table(frame, ["model"], "correct").set_index("model")
    assert (table.loc["b", "n"], table.loc["b", "n_unlabeled"]) == (0, 1)
    assert np.isnan(table.loc["b", "estimate"]) and np.isnan(table.loc["b", "ci_low"])
    assert table.loc["a", "estimate"] == 0.5


def test_summary_from_log_counts_labeled_rows():
    from evalcore.stats.summaries import summary_from_log

    log = pd.DataFrame({"model": ["a", "a", "a", "b", "b", "b"], "task": ["t", "t", "u", "t", "t", "u"],
                        "category": ["c", "c", "d", "c", "c", "d"], "correct": [1, 0, np.nan, 1, 1, 0]})
    summary = summary_from_log(log).set_index(["model", "task"])
    assert summary.loc[("a", "t"), ["n", "n_correct"]].tolist() == [2, 1]
    assert ("a", "u") not in summary.index  # no labeled row
    assert summary.loc[("b", "t"), "accuracy"] == 1.0 and summary.loc[("b", "u"), "category"] == "d"


def test_all_correct_cells_have_a_nonzero_se_and_wilson_width():
    frame = pd.DataFrame({"model": ["a"] * 10 + ["b"] * 10 + ["c"], "correct": [1] * 10 + [0] * 10 + [1]})
    table = mean_table(frame, ["model"], "correct", alpha=0.05).set_index("model")
    p = 10.5 / 11  # Jeffreys mean of 10 of 10
    assert table.loc["a", "se"] == pytest.approx(math.sqrt(p * (1 - p) / 10))
    assert table.loc["b", "se"] == pytest.approx(table.loc["a", "se"])
    z2 = stats.norm.ppf(0.975) ** 2
    assert table.loc["a", "ci_low"] == pytest.approx(10 / (10 + z2)) and table.loc["a", "ci_high"] == 1.0
    assert table.loc["c", "ci_low"] == pytest.approx(1 / (1 + z2))  # one label: Wilson's (0.21, 1)
    assert table.attrs["interval_note"] == ""


def test_single_or_identical_scores_get_no_interval_and_a_note():
    frame = pd.DataFrame({"model": ["a", "b", "b", "c", "c"], "score": [0.7, 0.4, 0.4, 0.2, 0.6]})
    table = mean_table(frame, ["model"], "score").set_index("model")
    assert table.loc[["a", "b"], ["se", "ci_low", "ci_high"]].isna().all().all()  # n = 1; sd = 0
    assert table.loc["b", "estimate"] == 0.4 and table.loc["c", "ci_high"] > table.loc["c", "ci_low"]
    assert "No interval for 2 cell(s) of 'score'" in table.attrs["interval_note"]
