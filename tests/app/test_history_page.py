"""The History page (issue 40) on a workspace series made as CI makes it: the answer names the latest run and the
change planted in it, the chart has one point per run with the flagged run marked, a click (or the picker) opens
that run's comparison with its baseline, and the address opens a series."""

from __future__ import annotations

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from evalcore.data.validation import validate
from evalcore.workspace import Workspace
from crafted import series_runs
from test_pages import assert_no_exception, open_page, shown

SERIES = "bot / nightly"


def series_frames() -> list[pd.DataFrame]:
    """Five runs of one model on the same 1,200 examples (tasks math and chat): each the same truth with 3% of the
    answers flipped at random; run 4 (nightly-3) loses 30% of its right answers on math (400 examples)."""
    return series_runs(n_runs=5, flip=0.03, keep=0.7, seed=4)


@pytest.fixture()
def series_workspace(tmp_path, monkeypatch):
    ws = Workspace(tmp_path / "ws")
    for i, frame in enumerate(series_frames()):
        record = ws.add_dataset(validate(frame), f"nightly-{i}")
        ws.add_to_series(record.id, SERIES, f"2026-11-{10 + i}T02:00:00Z", {"commit": f"c{i}"})
    monkeypatch.setenv("EVALCORE_WORKSPACE", str(tmp_path / "ws"))
    return ws


def open_history(series: str | None = None) -> AppTest:
    return open_page("history", **({"series": series} if series is not None else {}))


def test_the_history_answers_with_the_latest_run_and_the_last_change(series_workspace):
    at = open_history(SERIES)
    answer = shown(at.main.subheader[0].value)
    assert answer.startswith("bot's accuracy in the latest of 5 runs, nightly-4 (2026-11-14), is ")
    # the planted loss (run 3 on math) is the last change flagged, and run 4 (math recovered) is flagged better
    assert "the last change flagged came with it: better by" in answer and "on task=math against nightly-3" in answer
    trend = next(e.value for e in at.dataframe if "estimate" in e.value and "n_tasks" in e.value)
    assert list(trend["run"]) == [f"nightly-{i}" for i in range(5)]
    math = series_frames()[3]
    by_hand = (math[math["task"] == "math"]["correct"].mean() + math[math["task"] == "chat"]["correct"].mean()) / 2
    assert trend.loc[3, "estimate"] == pytest.approx(by_hand)  # the mean over the 2 tasks, as on every page
    flagged = next(e.value for e in at.dataframe if "q_value" in e.value)
    worst = flagged[flagged["difference"] < 0]
    assert set(worst["run"]) == {"nightly-3"} and "task=math" in set(worst["slice"])
    assert at.selectbox(key="hi_run").value == "nightly-4"  # the last flagged run opens below
    assert any("could see changes of" in c.value for c in at.caption)


def test_the_picker_opens_a_runs_comparison_and_the_address_a_series(series_workspace):
    at = open_history(SERIES)
    at.selectbox(key="hi_run").set_value("nightly-3")
    at.run()
    assert_no_exception(at)
    sentence = next(m.value for m in at.markdown if "nightly\\-3" in m.value or "nightly-3" in m.value)
    assert "worse than" in shown(sentence) and "a regression" in shown(sentence)
    missing = open_history("no such series")
    assert any("No series named" in w.value for w in missing.warning)
    assert missing.selectbox(key="hi_series").value == SERIES


def test_a_workspace_without_series_says_how_to_make_one(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALCORE_WORKSPACE", str(tmp_path / "empty"))
    at = open_history()
    assert any("--series" in i.value for i in at.info)


def test_the_trend_of_one_task_is_its_accuracy_per_run(series_workspace):
    at = open_history(SERIES)
    at.selectbox(key="hi_trend_task").set_value("math")
    at.run()
    assert_no_exception(at)
    trend = next(e.value for e in at.dataframe if "estimate" in e.value and "n_tasks" in e.value)
    by_hand = [frame.loc[frame["task"] == "math", "correct"].mean() for frame in series_frames()]
    assert trend["estimate"].tolist() == pytest.approx(by_hand) and set(trend["n"]) == {400}
