"""evalcore.subgroups.area: per-subgroup summaries checked, and their robust EB estimates laid out for the forest
plot."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalcore.subgroups import figures as subgroups_figures
from evalcore.subgroups.area import area_estimates, area_summary, suggest_roles
from evalcore.data.validation import EvalDataError
from evalcore.subgroups.robust_intervals import ebci

SUMMARY = pd.DataFrame({
    "Model Name": ["a", "a", "a", "a", "b", "b", "b", "b"],
    "Subgroup": ["g1", "g2", "g3", "g4", "g1", "g2", "g3", "g4"],
    "Accuracy": [0.61, 0.72, 0.55, 0.80, 0.50, 0.66, 0.71, np.nan],
    "StdErr": [0.05, 0.08, 0.03, 0.10, 0.04, 0.06, 0.09, 0.05],
    "count": [100, 40, 250, 25, 100, 40, 250, 25],
    "difficulty": [0.2, 0.5, 0.1, 0.9, 0.2, 0.5, 0.1, 0.9],
})


def test_suggest_roles_by_synonyms_any_case():
    assert suggest_roles(list(SUMMARY.columns)) == {"group": "Subgroup", "estimate": "Accuracy", "se": "StdErr",
                                                    "model": "Model Name", "n": "count"}
    assert suggest_roles(["x", "y"]) == dict.fromkeys(["group", "estimate", "se", "model", "n"])


def test_area_estimates_are_ebci_per_model_in_forest_plot_layout():
    summary = area_summary(SUMMARY, features=["difficulty"])
    assert summary.has_model and summary.has_n and summary.features == ("difficulty",)
    assert list(summary.frame.index) == list(range(1, 9))  # rows as in the file
    result = area_estimates(summary, alpha=0.1)
    z = 1.6448536269514722
    for model, rows in SUMMARY.groupby("Model Name"):
        expected = ebci(rows["Accuracy"], rows["StdErr"], rows[["difficulty"]], weights=1 / rows["StdErr"] ** 2,
                        alpha=0.1)
        got = result.table[result.table["model"] == model]
        complete = rows.dropna(subset=["Accuracy"])
        assert list(got["group"]) == list(complete["Subgroup"])
        np.testing.assert_allclose(got["eb"], expected.table["eb"], rtol=1e-14)
        np.testing.assert_allclose(got["eb_low"], expected.table["ci_low"], rtol=1e-14)
        np.testing.assert_allclose(got["eb_high"], expected.table["ci_high"], rtol=1e-14)
        np.testing.assert_allclose(got["synthetic"], expected.table["fit"], rtol=1e-14)
        np.testing.assert_allclose(got["direct_high"], complete["Accuracy"] + z * complete["StdErr"], rtol=1e-14)
        assert list(got["n"]) == list(complete["count"]) and got["n"].dtype == "Int64"
        fit = result.fits.set_index("model").loc[model]
        assert fit["mu2"] == expected.mu2 and fit["kappa"] == expected.kappa
        assert fit["delta_difficulty"] == expected.delta["difficulty"]
    assert result.notes == ("model 'b': 1 of 4 rows left out for a missing value (1 without estimate): row 8.",)
    equal = area_estimates(summary, alpha=0.1, weights="equal")
    one = SUMMARY[SUMMARY["Model Name"] == "a"]
    assert equal.fits["mu2"].iloc[0] == ebci(one["Accuracy"], one["StdErr"], one[["difficulty"]], alpha=0.1).mu2


def test_summary_without_model_or_n_draws_a_forest_plot():
    raw = SUMMARY[SUMMARY["Model Name"] == "a"][["Subgroup", "Accuracy", "StdErr"]]
    summary = area_summary(raw)
    assert not summary.has_model and not summary.has_n
    result = area_estimates(summary)
    assert "model" not in result.table.columns and "model" not in result.fits.columns
    assert "n" not in result.table.columns
    fig = subgroups_figures.forest_plot(result.table, 0.95, direct_interval="normal")
    assert list(fig.layout.yaxis.ticktext) == ["g1", "g2", "g3", "g4"]  # no "(n=..)" without sizes
    assert "DT: 95% normal intervals" in fig.layout.title.subtitle.text
    assert fig.data[0].customdata[0][0] == "g1" and "normal" in fig.data[0].hovertemplate


@pytest.mark.parametrize("raw, roles, features, message", [
    (SUMMARY[["Subgroup", "Accuracy"]], None, (), "The summary needs a column for se"),
    (SUMMARY.assign(StdErr=[0.1, 0, 0.1, 0.1, 0.1, 0.1, -1, 0.1]), None, (),
     "Column 'StdErr' (se) must be positive: a standard error of 0 or less in rows 2, 7"),
    (SUMMARY.assign(Accuracy=["0.5", "n/a", 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]), None, (),
     "Column 'Accuracy' (estimate) must hold numbers; row 2 hold 'n/a'"),
    (SUMMARY.assign(Subgroup="g1"), None, (), "Each subgroup must appear once per model, but rows 1, 2, 3, 4, 5"),
    (SUMMARY.assign(Subgroup=[None, "g", "h", "i", "j", "k", "l", "m"]), None, (),
     "Column 'Subgroup' (group) is empty in row 1"),
    (SUMMARY.assign(count=[1.5, 2, 3, 4, 5, 6, 7, 8]), None, (), "Column 'count' (n) must be a whole number"),
    (SUMMARY, {"group": "Subgroup", "estimate": "Accuracy", "se": "Accuracy"}, (), "'Accuracy' chosen for more"),
    (SUMMARY, None, ["Subgroup"], "'Subgroup' chosen for more than one role or as a feature"),
    (SUMMARY.rename(columns={"difficulty": "n"}), {"group": "Subgroup", "estimate": "Accuracy", "se": "StdErr"},
     ["n"], "carry a role's name"),
    (SUMMARY, None, ["absent"], "'absent' are not in the file"),
])
def test_bad_summaries(raw, roles, features, message):
    with pytest.raises(EvalDataError) as info:
        area_summary(raw, roles, features)
    assert message in str(info.value)


def test_too_few_subgroups_names_the_model():
    raw = SUMMARY.iloc[[0, 1, 4, 5, 6]]
    with pytest.raises(EvalDataError, match="model 'a': 2 complete rows cannot fit 2 regression coefficients"):
        area_estimates(area_summary(raw, features=["difficulty"]))
