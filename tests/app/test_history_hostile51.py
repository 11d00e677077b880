"""The History page under hostile use (issue 51): it never raises on a series whose latest run has a score metric,
whose runs lack the model followed or share no example, and says what it cannot compare; a pin refused by the
page's rule names the owner; dropdowns show names as they are (no Markdown backslashes); names stored before the
bound are shown cut, and bidirectional controls in table cells as their codes."""

from __future__ import annotations

import pandas as pd
import pytest

from crafted import series_runs
from evalcore.data.validation import validate
from evalcore.workspace import Workspace
from test_pages import assert_no_exception, open_page, shown, texts
from test_workspace_page import team_app

ALICE, BOB = "alice@team.example", "bob@team.example"


@pytest.fixture()
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALCORE_WORKSPACE", str(tmp_path / "ws"))
    return tmp_path / "ws"


def _series(folder, frames: list[pd.DataFrame], name: str = "s", names: list[str] | None = None,
            owner: str | None = None) -> Workspace:
    ws = Workspace(folder)
    for i, frame in enumerate(frames):
        record = ws.add_dataset(validate(frame), names[i] if names else f"n{i}")
        ws.add_to_series(record.id, name, f"2026-11-1{i}T00:00:00Z", viewer=owner)
    return ws


def _all_text(at) -> str:
    return " ".join(texts(at.warning) + texts(at.info) + texts(at.caption) + texts(at.error) + texts(at.subheader)
                    + texts(at.markdown))


def test_a_latest_run_with_a_score_is_compared_with_the_runs_that_have_one(folder):
    frames = series_runs(n_runs=4, seed=4)
    for i in (2, 3):
        frames[i] = frames[i].assign(score=frames[i]["correct"] * 0.5 + 0.25).drop(columns="correct")
    _series(folder, frames)
    at = open_page("history", series="s")
    assert_no_exception(at)
    assert shown(at.main.subheader[0].value).startswith("bot's mean score in the latest of 2 runs, n3")
    said = " ".join(texts(at.warning))
    assert "n0 records 0/1 correctness, not a score" in said and "n1 records 0/1 correctness" in said
    changes = [e.value for e in at.dataframe if "q_value" in e.value][-1]  # every run and slice compared
    assert set(changes["run"]) == {"n3"} and set(changes["baseline"]) == {"n2"}


def test_a_run_without_the_model_is_left_out_never_better_by_n_a(folder):
    frames = series_runs(n_runs=4, seed=4)
    frames[2] = frames[2].assign(model="other")
    _series(folder, frames)
    at = open_page("history", series="s")
    assert_no_exception(at)
    everything = _all_text(at)
    assert "n/a" not in everything and "n2 holds no result of bot (its models: other)" in everything
    changes = [e.value for e in at.dataframe if "q_value" in e.value][-1]  # every run and slice compared
    assert ("n2" not in set(changes["run"]) | set(changes["baseline"])) and changes["difference"].notna().all()
    assert set(zip(changes["run"], changes["baseline"])) == {("n1", "n0"), ("n3", "n1")}
    decisions = next(e.value for e in at.dataframe if "decision" in e.value)
    assert list(decisions["run"]) == ["n0", "n1", "n2", "n3"]  # the gate's table lists every run
    at.selectbox(key="hi_run").set_value("n1")
    at.run()
    assert_no_exception(at)


def test_a_latest_run_without_the_model_and_runs_sharing_no_example_are_said(folder):
    frames = series_runs(n_runs=4, seed=4)
    frames[3] = frames[3].assign(model="other")  # the latest run: another model
    frames[2] = frames[2].assign(example_id=frames[2]["example_id"] + 10_000)  # another dataset
    _series(folder, frames)
    at = open_page("history", series="s")
    assert_no_exception(at)
    everything = _all_text(at)
    assert "n3 holds no result of bot" in everything and "n/a" not in everything
    at.selectbox(key="hi_run").set_value("n2")
    at.run()
    assert_no_exception(at)
    assert any("share no example" in t for t in texts(at.info))


def test_a_pin_refused_by_the_pages_rule_names_the_owner(folder):
    """alice's series of runs without an owner: bob, signed in, sees it, but only alice pins its baseline (the
    runs are not shared); an ownerless series only where nobody signs in."""
    ws = _series(folder, series_runs(n_runs=3, seed=4), owner=ALICE)
    _series(folder, series_runs(n_runs=3, seed=5), name="ci")
    for series, said in (("s", f"Only the owner of the series 's' ({ALICE})"), ("ci", "The series 'ci' has no owner")):
        bob = team_app({"is_logged_in": True, "email": BOB, "email_verified": True})
        bob.switch_page("pages/history.py")
        bob.query_params["series"] = series
        bob.run()
        bob.selectbox(key="hi_baseline").set_value("n1")
        bob.run()
        bob.button(key="hi_pin").click()
        bob.run()
        assert_no_exception(bob)
        assert any(said in t for t in texts(bob.error)), texts(bob.error)
        assert ws.series_baseline(series) is None


def test_dropdowns_show_names_as_they_are_and_stored_long_names_cut(folder, monkeypatch):
    odd = "bot / nightly_v2 (a*b) [x]"
    _series(folder, series_runs(n_runs=3, seed=4), name=odd, names=["run_1", "run*2", "ev\u202eil"])
    long = "L" * 100_000  # stored before the bound on names (here: with the bound raised)
    monkeypatch.setenv("EVALCORE_MAX_NAME_CHARS", "1000000")
    _series(folder, series_runs(n_runs=2, seed=5), name=long)
    monkeypatch.delenv("EVALCORE_MAX_NAME_CHARS")
    at = open_page("history", series=odd)
    assert_no_exception(at)
    series = at.selectbox(key="hi_series")
    assert odd in series.options and "\\" not in odd  # shown as it is, no Markdown escapes
    assert next(o for o in series.options if o.startswith("LLL")) == "L" * 200 + "…(cut)"
    assert at.selectbox(key="hi_run").options == ["run*2", "ev\\u202eil"]  # the override shown as its code
    trend = next(e.value for e in at.dataframe if "n_tasks" in e.value)
    assert list(trend["run"]) == ["run_1", "run*2", "ev\\u202eil"]
    at.selectbox(key="hi_series").set_value(long)
    at.run()
    assert_no_exception(at)
    assert "series" not in at.query_params  # too long for an address
    workspace = open_page("workspace")
    assert_no_exception(workspace)
    listed = next(e.value for e in workspace.dataframe if "latest run" in e.value)
    assert sorted(map(len, listed["series"])) == [len(odd), 206]
