"""Series under hostile use (issue 51): run times a day ahead or outside years 1-9999 refused when given and set
aside with a note when a log records them, never a baseline when kept from before; a dataset saved for a series is
added to it or not kept at all; bounds on series names and metadata; a series mixing metrics or models compares
what it can and says what it cannot."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from dataclasses import replace

import pandas as pd
import pytest

from crafted import series_runs
from evalcore.data.validation import load_eval_log, validate
from evalcore.errors import EvalDataError
from evalcore.history import series_changes
from evalcore.history.gate import baseline_and_reference
from evalcore.history.load import read_series
from evalcore.workspace import Workspace, catalog
from evalcore.workspace.workspace import iso_time, logged_time

FUTURE = ("9999-12-31", "2999-01-01T00:00:00Z", "a day and an hour from now")
OVERFLOW = ("0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00")


def inspect_log(created: str, n: int = 30) -> bytes:
    """An Inspect AI JSON log of ``n`` samples whose run started at ``created`` (``eval.created``)."""
    samples = [{"id": i, "epoch": 1, "scores": {"match": {"value": "C" if i % 3 else "I"}}} for i in range(n)]
    return json.dumps({"version": 2, "status": "success",
                       "eval": {"task": "t", "model": "m/x", "created": created, "scorers": [{"name": "match"}]},
                       "results": {"scores": [{"name": "match", "scorer": "match"}]}, "samples": samples}).encode()


# ------------------------------------------------------------------------------------------------ item 4: times
@pytest.mark.parametrize("text", FUTURE)
def test_a_time_more_than_a_day_ahead_is_refused_saying_why(text):
    if text == FUTURE[-1]:
        text = (datetime.now(timezone.utc) + timedelta(days=1, hours=1)).isoformat()
    with pytest.raises(EvalDataError, match="more than a day in the future"):
        iso_time(text)


@pytest.mark.parametrize("text", OVERFLOW)
def test_a_time_outside_years_1_to_9999_in_utc_is_refused_not_an_overflow(text):
    with pytest.raises(EvalDataError, match="outside the times that can be kept"):
        iso_time(text)


def test_times_within_a_day_and_in_the_past_are_kept_in_utc():
    assert iso_time("2026-11-01T12:00:00+02:00") == "2026-11-01T10:00:00+00:00"
    assert iso_time("0001-01-01T00:00:00Z") == "0001-01-01T00:00:00+00:00"
    soon = datetime.now(timezone.utc) + timedelta(hours=23)  # a clock a little ahead
    assert iso_time(soon.isoformat()) == soon.isoformat(timespec="seconds")
    assert logged_time({"when": "2026-01-21T03-44-18.458309"}) == ("2026-01-21T03:44:18+00:00", "")
    assert logged_time({}) == (None, "")


@pytest.mark.parametrize("created, why", [("2999-01-01T00:00:00+00:00", "more than a day in the future"),
                                          ("0001-01-01T00:00:00+14:00", "outside the times that can be kept")])
def test_a_logs_own_bad_time_falls_back_to_the_save_time_with_a_note(tmp_path, created, why):
    ws = Workspace(tmp_path / "ws")
    record = ws.add_dataset(load_eval_log(inspect_log(created)), "inspect")
    run = ws.add_to_series(record.id, "arc")
    assert run.run_time == record.created and why in run.note and "when it was saved" in run.note
    assert [r.run_time for r in ws.series_runs("arc")] == [record.created]


def test_a_given_bad_time_saves_nothing(tmp_path):
    ws = Workspace(tmp_path / "ws")
    frame = validate(series_runs(n_runs=1)[0])
    for text in (*FUTURE[:-1], *OVERFLOW):
        with pytest.raises(EvalDataError, match="The run time"):
            ws.save_run(lambda: ws.add_dataset(frame, "run"), "s", text)
    assert ws.datasets() == [] and ws.series() == []


def test_a_run_stamped_ahead_before_the_bound_is_never_the_baseline(tmp_path):
    """A run kept with the time 9999-12-31 (before such times were refused) sorts last for good: it is flagged and
    neither the gate's baseline nor its reference; the latest run before it is."""
    ws = Workspace(tmp_path / "ws")
    ids = []
    for i, frame in enumerate(series_runs(n_runs=3)):
        record = ws.add_dataset(validate(frame), f"n{i}")
        ws.add_to_series(record.id, "s", f"2026-11-1{i}T00:00:00Z")
        ids.append(record.id)
    with catalog.transaction(ws.catalog) as db:
        db.execute("UPDATE series_runs SET run_time = '9999-12-31T00:00:00+00:00' WHERE dataset_id = ?", (ids[1],))
    entries = ws.series_runs("s")
    assert [e.name for e in entries] == ["n0", "n2", "n1"] and [e.stamped_ahead for e in entries] == [0, 0, 1]
    base, reference = baseline_and_reference(entries, None, "a new run")
    assert (base.name, reference.name) == ("n2", "n0")
    with pytest.raises(EvalDataError, match="stamped more than a day in the future"):
        baseline_and_reference(entries[2:], None, "a new run")


def test_a_failure_after_the_save_leaves_no_dataset_half_added(tmp_path, monkeypatch):
    """Saved for a series, a dataset is added to it or not kept: a summary table (not a per-example log) and a
    failure while adding (a full disk, a defect) delete it again."""
    ws = Workspace(tmp_path / "ws")
    summary = pd.DataFrame({"model": ["a", "b"], "task": "t", "accuracy": [0.7, 0.6], "n": 100})
    with pytest.raises(EvalDataError, match="per-example logs.*Nothing was saved"):
        ws.save_run(lambda: ws.add_dataset(summary.to_csv(index=False).encode(), "summary"), "s")
    assert ws.datasets() == []

    def broken(*args, **kwargs):
        raise OverflowError("date value out of range")

    monkeypatch.setattr("evalcore.history.run_summary", broken)
    frame = validate(series_runs(n_runs=1)[0])
    with pytest.raises(OverflowError):
        ws.save_run(lambda: ws.add_dataset(frame, "run", owner="alice@team.org"), "s")
    assert ws.datasets(viewer="alice@team.org") == [] and ws.series("alice@team.org") == []
    assert not list((tmp_path / "ws" / "data").glob("*.parquet"))  # its data file went with it
    monkeypatch.undo()
    record, run = ws.save_run(lambda: ws.add_dataset(frame, "run"), "s", "2026-11-01T00:00:00Z", {"commit": "c1"})
    assert run.dataset_id == record.id and run.meta == {"commit": "c1"}


# ------------------------------------------------------------------------------------------------ item 2: bounds
def test_series_names_and_metadata_are_bounded_naming_the_bound(tmp_path):
    ws = Workspace(tmp_path / "ws")
    frame = validate(series_runs(n_runs=1)[0])
    record = ws.add_dataset(frame, "run")
    for series, meta, said in (("s" * 201, {}, "The series' name has 201 characters; it may have at most 200"),
                               ("s", {"k" * 201: "v"}, "The metadata key .* has 201 characters; it may have at "
                                                       "most 200"),
                               ("s", {"note": "x" * 10_000}, "The run's metadata .* it may have at most 10,000")):
        with pytest.raises(EvalDataError, match=said):
            ws.add_to_series(record.id, series, "2026-11-01T00:00:00Z", meta)
        with pytest.raises(EvalDataError, match="EVALCORE_MAX_"):
            ws.save_run(lambda: ws.add_dataset(frame, "again"), series, None, meta)
    assert ws.series() == [] and len(ws.datasets()) == 1
    assert ws.add_to_series(record.id, "s" * 200, None, {"k" * 200: "v" * 9_000}).series == "s" * 200


# ------------------------------------------------------------------------------------------------ item 5: mixed series
def _mixed(tmp_path) -> Workspace:
    """Four runs of bot: n1 holds another model only, n3 (the latest) records a score instead of 0/1."""
    ws = Workspace(tmp_path / "ws")
    frames = series_runs(n_runs=4, seed=4)
    frames[1] = frames[1].assign(model="other")
    frames[3] = frames[3].assign(score=frames[3]["correct"] * 0.5 + 0.25).drop(columns="correct")
    for i, frame in enumerate(frames):
        ws.add_to_series(ws.add_dataset(validate(frame), f"n{i}").id, "s", f"2026-11-1{i}T00:00:00Z")
    return ws


def test_a_mixed_series_compares_the_runs_it_can_and_says_why_not_the_others(tmp_path):
    series = read_series(_mixed(tmp_path), "s")
    assert (series.model, series.metric) == ("bot", "score")
    kept = series.comparable()
    assert [r.name for r in kept.runs] == ["n3"]
    assert kept.left_out == ("n0 records 0/1 correctness, not a score", "n1 holds no result of bot (its models: "
                             "other)", "n2 records 0/1 correctness, not a score")
    # the changes never compare a run without the metric or the model (it read "better by n/a points")
    assert series_changes(series.runs, "score").empty and series_changes(series.runs, "correct").empty
    correct = replace(series, metric="correct").comparable()
    assert [r.name for r in correct.runs] == ["n0", "n2"] and len(correct.left_out) == 2
    changes = series_changes(correct.runs, "correct")
    assert set(changes["run"]) == {"n2"} and set(changes["baseline"]) == {"n0"}
    assert changes["difference"].notna().all()


def test_dataset_and_analysis_names_are_bounded(tmp_path):
    """Names a person types (a dataset's, a rename, an analysis') have at most MAX_NAME_CHARS characters: a longer
    one is refused naming the bound, and nothing is saved."""
    from evalcore.data.limits import MAX_NAME_CHARS
    from evalcore.workspace import Workspace

    ws = Workspace(tmp_path / "ws")
    log = b"model,example_id,correct\na,1,1\na,2,0\nb,1,1\nb,2,1\n"
    with pytest.raises(EvalDataError, match=f"The dataset's name has {MAX_NAME_CHARS + 1:,} characters; it may have "
                                            f"at most {MAX_NAME_CHARS:,}"):
        ws.add_dataset(log, "n" * (MAX_NAME_CHARS + 1))
    assert ws.datasets() == []
    saved = ws.add_dataset(log, "n" * MAX_NAME_CHARS)
    with pytest.raises(EvalDataError, match="The new name has"):
        ws.rename(saved.id, "r" * (MAX_NAME_CHARS + 1))
    with pytest.raises(EvalDataError, match="The analysis' name has"):
        ws.save_analysis(saved.id, "models", name="v" * (MAX_NAME_CHARS + 1))
    assert ws.dataset_record(saved.id).name == "n" * MAX_NAME_CHARS and ws.analyses() == []
