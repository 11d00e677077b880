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


def test_the_gate_side_rejected_runs_the_reference_the_drift_and_an_acceptance(series_workspace):
    """The gate failed nightly-3 (its planted loss) against nightly-2 and nightly-0: the page crosses it and rings
    the reference nightly-0 on the chart, draws the drift of nightly-4 from nightly-0, names the next comparison's
    baseline (nightly-4, the latest accepted run) and reference, and lists each run's decision; a member (here
    nobody signs in: the series has no owner) accepts nightly-3, which becomes the reference."""
    import json

    ws = series_workspace
    entries = ws.series_runs(SERIES)
    ws.record_verdict(SERIES, entries[3].digest, "failed", entries[2].dataset_id, entries[0].dataset_id)
    ws.record_verdict(SERIES, entries[4].digest, "passed", entries[2].dataset_id, entries[0].dataset_id)
    at = open_history(SERIES)
    assert_no_exception(at)
    said = [shown(m.value) for m in at.markdown]
    assert any(t.startswith("Since its reference nightly-0 (2026-11-10), nightly-4 moved by ") for t in said), said
    assert any("compares the next run with its baseline nightly-4 (the latest accepted run) and its reference "
               "nightly-0" in shown(c.value) for c in at.caption)
    decisions = next(e.value for e in at.dataframe if "decision" in e.value)
    assert decisions.set_index("run").loc["nightly-3", ["decision", "baseline", "reference"]].tolist() == [
        "failed the gate (rejected)", "nightly-2", "nightly-0"]
    assert decisions.set_index("run").loc["nightly-0", "decision"] == "never gated (accepted as saved)"
    figure = json.loads(at.get("plotly_chart")[0].proto.spec)
    traces = {t.get("name"): t for t in figure["data"]}
    assert traces["rejected by the gate"]["x"] == ["2026-11-13T02:00:00.000000"]
    assert traces["reference"]["x"] == ["2026-11-10T02:00:00.000000"]
    assert "nightly-4 − nightly-0" in figure["layout"]["annotations"][0]["text"]
    # the changes compare each run with its gate baseline: nightly-4 with nightly-2, not with the rejected nightly-3
    changes = next(e.value for e in at.dataframe if "q_value" in e.value and len(e.value) > 4)
    overall = changes[changes["slice"] == "overall"].set_index("run")["baseline"]
    assert overall.to_dict() == {"nightly-1": "nightly-0", "nightly-2": "nightly-1", "nightly-3": "nightly-2",
                                 "nightly-4": "nightly-2"}
    at.selectbox(key="hi_accept_run").set_value("nightly-3")
    at.button(key="hi_accept").click()
    at.run()
    assert_no_exception(at)
    assert ws.series_runs(SERIES)[3].status == "accepted"
    assert any("and its reference nightly-3" in shown(c.value) for c in at.caption)
    changes = next(e.value for e in at.dataframe if "q_value" in e.value and len(e.value) > 4)
    assert changes[changes["slice"] == "overall"].set_index("run").at["nightly-4", "baseline"] == "nightly-3"
