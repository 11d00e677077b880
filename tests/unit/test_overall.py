"""The one definition of a model's overall number (evalcore.stats.overall), checked against hand computations."""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from evalcore.stats.intervals import wilson_interval
from evalcore.stats.overall import interval_name, overall_table, with_overall


def _log() -> pd.DataFrame:
    """Model a: 3 of 4 correct on task t1, 0 of 2 on t2; model b: 2 of 4 on t1, 2 of 2 on t2."""
    rows = [("a", "t1", c) for c in (1, 1, 1, 0)] + [("a", "t2", c) for c in (0, 0)]
    rows += [("b", "t1", c) for c in (1, 1, 0, 0)] + [("b", "t2", c) for c in (1, 1)]
    return pd.DataFrame(rows, columns=["model", "task", "correct"]).assign(
        example_id=lambda f: f.groupby("model").cumcount().astype(str))


def test_mean_over_tasks_by_hand():
    table = overall_table(_log(), "correct", 0.05).set_index("model")
    # a: (3/4 + 0/2) / 2 = 0.375; b: (2/4 + 2/2) / 2 = 0.75 — b first although both pool 3 of 6 and 4 of 6
    assert table.loc["a", "estimate"] == pytest.approx(0.375)
    assert table.loc["b", "estimate"] == pytest.approx(0.75)
    assert list(table.index) == ["b", "a"]
    # se of a: sqrt(0.75 * 0.25 / 4 + v0) / 2, v0 = Jeffreys (0 + 1/2) / (2 + 1) = 1/6: (1/6)(5/6) / 2
    v0 = (1 / 6) * (5 / 6) / 2
    se = np.sqrt(0.75 * 0.25 / 4 + v0) / 2
    assert table.loc["a", "se"] == pytest.approx(se)
    z = norm.ppf(0.975)
    assert table.loc["a", "ci_low"] == pytest.approx(max(0.375 - z * se, 0))
    assert table.loc["a", "ci_high"] == pytest.approx(0.375 + z * se)
    assert table.loc["a", "n_tasks"] == 2 and table.loc["a", "n"] == 6


def test_pooled_over_examples_by_hand():
    table = overall_table(_log(), "correct", 0.1, over="examples").set_index("model")
    assert table.loc["a", "estimate"] == pytest.approx(3 / 6) and table.loc["b", "estimate"] == pytest.approx(4 / 6)
    low, high = wilson_interval(np.array([3.0]), np.array([6.0]), 0.1)
    assert (table.loc["a", "ci_low"], table.loc["a", "ci_high"]) == pytest.approx((low[0], high[0]))


def test_one_task_is_the_pooled_number_with_its_own_interval():
    log = _log().query("task == 't1'")
    tasks, pooled = overall_table(log, "correct"), overall_table(log, "correct", over="examples")
    pd.testing.assert_frame_equal(tasks, pooled)
    low, high = wilson_interval(np.array([3.0]), np.array([4.0]), 0.05)
    a = tasks.set_index("model").loc["a"]
    assert (a["estimate"], a["ci_low"], a["ci_high"]) == pytest.approx((0.75, low[0], high[0]))


def test_a_summary_gives_the_same_numbers_as_its_log():
    summary = pd.DataFrame({"model": ["a", "a", "b", "b"], "task": ["t1", "t2", "t1", "t2"],
                            "n": [4, 2, 4, 2], "n_correct": [3, 0, 2, 2]})
    for over in ("tasks", "examples"):
        pd.testing.assert_frame_equal(overall_table(summary, alpha=0.05, over=over, summary=True),
                                      overall_table(_log(), "correct", 0.05, over=over))


def test_an_unknown_estimand_is_refused():
    with pytest.raises(ValueError, match="over must be one of"):
        overall_table(_log(), over="models")


def test_a_high_accuracy_interval_joins_normal_and_wilson_at_the_effective_n():
    # 19/20 and 17/20: estimate 0.9, se = sqrt(0.95*0.05/20 + 0.85*0.15/20) / 2 = sqrt(0.00875) / 2
    summary = pd.DataFrame({"model": ["a", "a"], "task": ["t1", "t2"], "n": [20, 20], "n_correct": [19, 17]})
    row = overall_table(summary, summary=True).iloc[0]
    se = np.sqrt(0.00875) / 2
    z = norm.ppf(0.975)
    n_eff = 0.9 * 0.1 / se**2  # 41.14: Wilson's interval at 0.9 of 41.14 reaches lower than the normal one
    k = 0.9 * n_eff
    wilson_low = (k + z**2 / 2) / (n_eff + z**2) - z / (n_eff + z**2) * np.sqrt(k * (n_eff - k) / n_eff + z**2 / 4)
    assert row.ci_low == pytest.approx(wilson_low) and row.ci_low == pytest.approx(0.7718, abs=5e-4)
    assert row.ci_high == pytest.approx(0.9 + z * se)  # the normal one reaches higher: 0.992
    assert row.ci_low < 0.9 - z * se


def test_with_overall_puts_the_one_overall_interval_on_the_boards_overall_rows_only():
    board = pd.DataFrame({"model": ["a", "a", "b", "b"], "scope": ["task", "overall", "task", "overall"],
                          "name": ["t", "overall", "t", "overall"], "estimate": [0.5, 0.5, 0.7, 0.7],
                          "ci_low": [0.4, 0.41, 0.6, 0.61], "ci_high": [0.6, 0.59, 0.8, 0.79]})
    board.attrs["paired"] = True
    table = pd.DataFrame({"model": ["b", "a"], "estimate": [0.7, 0.5], "ci_low": [0.62, 0.42],
                          "ci_high": [0.78, 0.58]})
    out = with_overall(board, table)
    assert out["ci_low"].tolist() == [0.4, 0.42, 0.6, 0.62] and out["ci_high"].tolist() == [0.6, 0.58, 0.8, 0.78]
    assert out.attrs == {"paired": True} and board["ci_low"].tolist() == [0.4, 0.41, 0.6, 0.61]  # a copy
    with pytest.raises(ValueError, match=r"lacks models of the board: \['a'\]"):
        with_overall(board, table.iloc[:1])


def test_the_interval_is_named_by_the_design_of_a_campaigns_estimate():
    """Wilson for 0/1 cells and Student-t for scores; a labeling campaign's summary (its report's ``design``, as
    Campaign.design_sentence writes it) names its estimator's normal interval, whatever the campaign is called."""
    from evalcore.labeling.estimate import ESTIMATORS
    from evalcore.labeling.queue import DESIGN_NAMES

    assert (interval_name("correct"), interval_name("accuracy"), interval_name("score")) == \
        ("Wilson", "Wilson", "Student-t")
    for design, estimator in ESTIMATORS.items():
        said = (f"m (v2): estimated from 60 labels, {DESIGN_NAMES[design]} ({estimator}), in the labeling campaign "
                "'m · srs (Horvitz-Thompson (sample mean))'; its interval is the design's.")
        assert interval_name("correct", said) == f"{estimator}, design's"
