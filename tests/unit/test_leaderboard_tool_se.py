"""The leaderboard of a summary with the tool's own standard errors (column ``se``): the task interval is
estimate +- z se, the other cells keep their binomial bootstrap (evalcore.leaderboard.bootstrap)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalcore.data.validation import load_eval_logs
from evalcore.leaderboard.bootstrap import bootstrap_replicates, leaderboard

Z95 = 1.959963984540054  # the standard normal's 0.975 quantile
FIXTURE = Path(__file__).resolve().parents[1] / "data" / "ecosystem27" / "alpaca_eval_leaderboard" / "leaderboard.csv"


def _summary(se=(0.05, np.nan)) -> pd.DataFrame:
    return pd.DataFrame({"model": ["a", "b", "a", "b"], "task": ["t", "t", "u", "u"], "category": "c",
                         "n": 100, "n_correct": [60, 40, 70, 50], "se": [*se, np.nan, np.nan]})


def test_task_interval_is_estimate_plus_minus_z_se():
    board = leaderboard(_summary(), level=0.95, n_boot=2000, seed=3)
    cell = board[(board["model"] == "a") & (board["name"] == "t")].iloc[0]
    assert cell["estimate"] == 0.6
    assert cell["ci_low"] == pytest.approx(0.6 - Z95 * 0.05) and cell["ci_high"] == pytest.approx(0.6 + Z95 * 0.05)
    assert cell["ci_low"] == pytest.approx(0.50200180077)
    assert "1 of 4 (model, task) cells the tool's own standard error" in board.attrs["bootstrap_note"]


def test_cells_without_se_keep_their_binomial_replicates():
    plain = bootstrap_replicates(_summary().drop(columns="se"), n_boot=500, seed=3)
    mixed = bootstrap_replicates(_summary(), n_boot=500, seed=3)
    assert plain.se is None and plain.note == ""
    np.testing.assert_array_equal(mixed.values[:, 1, :], plain.values[:, 1, :])  # model b: no se anywhere
    np.testing.assert_array_equal(mixed.values[:, 0, 1], plain.values[:, 0, 1])  # model a, task u
    # model a, task t: normal replicates with the tool's standard error
    assert mixed.values[:, 0, 0].std() == pytest.approx(0.05, rel=0.08)
    assert mixed.values[:, 0, 0].mean() == pytest.approx(0.6, abs=0.006)


def test_without_se_nothing_changes():
    a = leaderboard(_summary(se=(np.nan, np.nan)), n_boot=300, seed=1)
    b = leaderboard(_summary().drop(columns="se"), n_boot=300, seed=1)
    pd.testing.assert_frame_equal(a, b)
    assert a.attrs["bootstrap_note"] == ""


def test_alpaca_eval_leaderboard_end_to_end():
    frame = load_eval_logs([FIXTURE])
    board = leaderboard(frame, level=0.95, n_boot=1000, seed=0).set_index(["model", "scope"])
    shopee = board.loc[("Shopee-SlimMoA-v1", "task")]
    # 623 / 805 +- 1.96 x 0.430175221492396 / 100
    assert shopee["estimate"] == pytest.approx(0.7739130434782608)
    assert (shopee["ci_low"], shopee["ci_high"]) == pytest.approx((0.7654817640665945, 0.7823443228899272))
    baseline = board.loc[("gpt4_1106_preview", "task")]
    assert baseline["ci_low"] == baseline["ci_high"] == baseline["estimate"]  # se 0
    gpt4o = board.loc[("gpt-4o-2024-05-13", "task")]  # no lc_standard_error: the binomial bootstrap of 463 / 805
    assert 0.03 < gpt4o["ci_high"] - gpt4o["ci_low"] < 0.08
