"""AlpacaEval leaderboard CSVs (evalcore.importers.alpaca_eval_leaderboard), from files written in the shape of
tatsu-lab/alpaca_eval ``src/alpaca_eval/main.py`` (``leaderboard.csv``, empty first header cell) and
``src/alpaca_eval/leaderboards/data_AlpacaEval*/*_leaderboard.csv`` (/work/notes/formats27.md section 6)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import evalcore.data  # noqa: F401 - evalcore.data first (evalcore.importers imports it back)
from evalcore.data.validation import EvalDataError, load_eval_logs, report_of
from evalcore.importers import alpaca_eval_leaderboard as alpaca
from evalcore.importers.base import LogFile
from evalcore.importers.detect import tool_of

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "ecosystem27" / "alpaca_eval_leaderboard" / "leaderboard.csv"
AE1 = (",win_rate,standard_error,n_wins,n_wins_base,n_draws,n_total,mode\n"
       "vicuna-13b,74.6583850931677,1.5314906992150217,600,203,2,805,minimal\n"
       "guanaco-65b,72.91925465838509,1.5671962820425132,587,218,0,805,minimal\n").encode()


def test_leaderboard_csv_is_a_summary_of_the_length_controlled_win_rate():
    frame = load_eval_logs([FIXTURE])
    assert report_of(frame).kind == "summary"
    assert list(frame["model"]) == ["gpt-4o-2024-05-13", "Shopee-SlimMoA-v1", "gpt4_1106_preview"]
    assert set(frame["task"]) == {"alpaca_eval_2"} and set(frame["n"]) == {805}
    # round(57.45682883335095% x 805 = 462.53) = 463; 77.4515432873834% x 805 = 623.48 -> 623; 50% x 805 = 402.5 -> 402
    assert list(frame["n_correct"]) == [463, 623, 402]
    assert math.isnan(frame["se"].iloc[0])  # lc_standard_error empty
    assert frame["se"].iloc[1] == pytest.approx(0.00430175221492396)
    assert frame["se"].iloc[2] == 0.0  # the baseline: 50% by construction
    notes = " ".join(report_of(frame).notes)
    assert "accuracy = 'length_controlled_winrate' / 100" in notes and "AI judge" in notes
    assert "'gpt4_1106_preview' is the baseline" in notes
    assert "1 of 3 models have no 'lc_standard_error'" in notes


def test_raw_values_are_the_tool_s_fractions():
    [imported] = alpaca.convert([LogFile("leaderboard.csv", FIXTURE.read_bytes())])
    assert list(imported.frame["accuracy"]) == pytest.approx([0.5745682883335095, 0.774515432873834, 0.5])


def test_first_version_uses_the_win_rate_and_is_named_after_its_file():
    frame = load_eval_logs([("data_AlpacaEval/text_davinci_003_leaderboard.csv", AE1)])
    assert set(frame["task"]) == {"alpaca_eval (text_davinci_003)"}
    assert list(frame["n_correct"]) == [601, 587]  # 74.658% x 805 = 601.0; 72.919% x 805 = 587.0
    assert list(frame["se"]) == pytest.approx([0.015314906992150217, 0.015671962820425132])
    assert "accuracy = 'win_rate' / 100 (the raw win rate)" in " ".join(report_of(frame).notes)


def test_partial_length_controlled_column_without_its_standard_error_keeps_the_win_rate():
    data = (",win_rate,standard_error,n_wins,n_wins_base,n_draws,n_total,mode,avg_length,discrete_win_rate,"
            "length_controlled_winrate\n"
            "a,60.0,1.0,480,320,0,800,minimal,100,60.0,55.0\n"
            "b,40.0,1.0,320,480,0,800,minimal,100,40.0,\n").encode()
    frame = load_eval_logs([("x_leaderboard.csv", data)])
    assert list(frame["n_correct"]) == [480, 320] and set(frame["task"]) == {"alpaca_eval (x)"}


def test_pandas_round_trip_header_and_bad_rows():
    data = ("Unnamed: 0,win_rate,standard_error,n_wins,n_wins_base,n_draws,n_total,length_controlled_winrate,"
            "lc_standard_error\n"
            "a,60.0,1.0,480,320,0,800,55.0,2.0\n"
            "b,40.0,1.0,320,480,0,800,150.0,2.0\n"
            "c,40.0,1.0,320,480,0,800,45.0,2.0\n").encode()
    assert tool_of(LogFile("leaderboard.csv", data)) == alpaca.TOOL
    frame = load_eval_logs([("leaderboard.csv", data)])
    assert list(frame["model"]) == ["a", "c"] and list(frame["n_correct"]) == [440, 360]  # 55%, 45% of 800
    assert list(frame["se"]) == pytest.approx([0.02, 0.02])
    assert "1 of 3 rows of leaderboard.csv were left out" in " ".join(report_of(frame).notes)


def test_no_usable_row():
    data = b",win_rate,standard_error,n_total\na,,1.0,800\n"
    with pytest.raises(EvalDataError, match="leaderboard.csv: no row has a model name, a 'win_rate' between 0 and 100"):
        load_eval_logs([("leaderboard.csv", data)])


def test_other_csvs_stay_tables():
    assert tool_of(LogFile("t.csv", b"model,task,n,accuracy\na,t,10,0.5\n")) == "table"
    assert tool_of(LogFile("t.csv", b"model,win_rate,n_total\na,50,10\n")) == "table"  # named index, no n_wins_base
    assert tool_of(LogFile("t.csv", b",win_rate,standard_error\na,50,1\n")) == "table"  # no n_total
    assert tool_of(LogFile("t.csv", b"model,win_rate,n_wins_base,n_total\na,50,1,10\n")) == alpaca.TOOL


def test_the_leaderboard_of_evaluators_is_named_and_refused():
    """AlpacaEval's evaluators leaderboard rates annotators (agreement with humans), not models."""
    data = (b",Human agreement,Price [$/1000 examples],Time [seconds/1000 examples],Spearman corr.,Pearson corr.,"
            b"Bias,Variance,Proba. prefer longer,# parsed,mode\n"
            b"alpaca_eval_gpt4_fn,70.98,14.47,5046.1,0.95,0.94,27.6,11.1,0.75,2592,verified\n"
            b"humans,65.7,300.0,36800.0,1.0,1.0,0.0,34.3,0.64,2592,verified\n")
    file = LogFile("leaderboard.csv", data)
    assert tool_of(file) == alpaca.TOOL
    with pytest.raises(EvalDataError, match=r"^leaderboard\.csv: this is AlpacaEval's leaderboard of evaluators .*"
                                            r"holds no model's results"):
        load_eval_logs([("leaderboard.csv", data)])
