"""The Subgroups page on logs that cannot support empirical Bayes (issue 26): a one-model log with a single group
(an Inspect log) and a one-model log with three subgroups get a plain explanation and the direct estimates, never
an exception or a red error."""

from __future__ import annotations

import pandas as pd
import pytest

from test_pages import csv_bytes, goto, open_app, table_with, texts, upload

#: correct answers out of 10 per subgroup, counted by hand
CORRECT = {"g0": 7, "g1": 5, "g2": 2}


def one_model_log(groups: bool) -> pd.DataFrame:
    rows = []
    for g, (group, right) in enumerate(CORRECT.items()):
        for i in range(10):
            row = {"model": "solo-model", "example_id": f"q{10 * g + i}", "correct": float(i < right),
                   "confidence": 0.55 + 0.04 * i}
            if groups:
                row["group"] = group
            rows.append(row)
    return pd.DataFrame(rows)


def subgroups_of(frame: pd.DataFrame):
    at = open_app()
    upload(at, "one-model.csv", csv_bytes(frame))
    goto(at, "subgroups")
    assert not at.exception and not texts(at.error) and not texts(at.warning)
    return at


@pytest.mark.parametrize("feature", [False, True])
def test_a_single_group_is_explained_with_the_automatic_subgroups_offer(feature):
    frame = one_model_log(groups=False)
    if feature:  # a numeric column from which subgroups can be formed
        frame["length"] = frame.index % 7
    at = subgroups_of(frame)
    [note] = texts(at.info)
    assert note.startswith("The selection has a single group: subgroup estimates compare at least two groups")
    assert ("tick 'Form subgroups automatically' to form subgroups" in note) == feature
    assert ("Add a `group` column to the log (or numeric feature columns" in note) == (not feature)
    table = table_with(at, "model", "group", "n", "estimate", "ci_low", "ci_high")
    assert table[["model", "n"]].values.tolist() == [["solo-model", 30]]
    assert table["estimate"].iloc[0] == pytest.approx(14 / 30)
    assert table["ci_low"].iloc[0] < 14 / 30 < table["ci_high"].iloc[0]
    assert not at.get("plotly_chart")  # no forest plot of a single unit


def test_one_model_with_three_subgroups_gets_the_direct_estimates():
    at = subgroups_of(one_model_log(groups=True))
    [note] = texts(at.info)
    assert "needs at least 4 (model, group) units with labels; this selection has 3" in note
    assert "The direct estimate of each subgroup needs no borrowing" in note
    table = table_with(at, "model", "group", "n", "estimate", "ci_low", "ci_high").set_index("group")
    assert table["n"].to_dict() == {"g0": 10, "g1": 10, "g2": 10}
    assert table["estimate"].to_dict() == pytest.approx({g: right / 10 for g, right in CORRECT.items()})
    assert ((table["ci_low"] < table["estimate"]) & (table["estimate"] < table["ci_high"])).all()
