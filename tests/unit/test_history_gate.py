"""The gate of a series (issue 50): a series that loses 0.5 points at each run passes every gate against the previous
run, but fails against its reference by the run where the cumulative drop is detectable; a failed run is never the
next baseline until a member accepts it (who and when kept, refused for others with the owner named); the catalog
upgraded from version 5."""

from __future__ import annotations

import sqlite3

import numpy as np
import pandas as pd
import pytest

from evalcore.compare import compare_runs
from evalcore.compare.power import minimum_detectable_difference
from evalcore.compare.runs import runs_from_logs
from evalcore.data.validation import validate
from evalcore.history.gate import baseline_and_reference, gate, record
from evalcore.workspace import Workspace
from evalcore.workspace.catalog import SCHEMA_VERSION

N = 12_000  # MMLU-Pro-sized: 12,032 questions
SERIES = "bot / nightly"
OWNER, MEMBER = "alice@example.org", "bob@example.org"


def slowly_worse(n_runs: int = 10, seed: int = 50) -> list[pd.DataFrame]:
    """``n_runs`` runs of model "bot" on the same N examples (4 tasks of 3,000): run 0 right on 70%; each later run
    changes 1,804 answers of the one before, in each task 233 right ones to wrong and 218 wrong ones to right: 60
    fewer right answers, 0.5 points below the last overall and in every task (exact McNemar p = 0.16 against it, 0.5
    in a task: no single step is significant)."""
    rng = np.random.default_rng(seed)
    right = rng.random(N) < 0.7
    task = np.array(["law", "math", "history", "biology"])[np.arange(N) % 4]
    runs = []
    for _ in range(n_runs):
        runs.append(pd.DataFrame({"model": "bot", "example_id": np.arange(N), "task": task,
                                  "correct": right.astype(float)}))
        right = right.copy()
        for name in np.unique(task):
            lose = rng.choice(np.flatnonzero(right & (task == name)), 233, replace=False)
            gain = rng.choice(np.flatnonzero(~right & (task == name)), 218, replace=False)
            right[lose], right[gain] = False, True
    return runs


def _pair(base: pd.DataFrame, new: pd.DataFrame):
    log = runs_from_logs([("base", validate(base)), ("new", validate(new))], named=True)
    return compare_runs(log, "base", "new")


def test_a_slowly_regressing_series_fails_the_gate_once_its_cumulative_drop_is_detectable(tmp_path):
    runs = slowly_worse()
    for earlier, later in zip(runs, runs[1:]):  # each run 60 right answers (0.5 points) below the last
        assert later["correct"].sum() == earlier["correct"].sum() - 60
    # the old gate (against the latest run) passes every one of them
    assert [_pair(a, b).verdict for a, b in zip(runs, runs[1:])] == ["inconclusive"] * 9
    # the cumulative drop 0.5 k points against run 0 exceeds the minimum detectable difference from run k on
    detectable = next(k for k in range(1, 10) if 0.005 * k >= minimum_detectable_difference(
        N, int((runs[k]["correct"] != runs[0]["correct"]).sum()),
        int(((runs[k]["correct"] == 1) & (runs[0]["correct"] == 1)).sum()), 0.95))
    ws = Workspace(tmp_path / "ws")
    verdicts, baselines = [], []
    for k, frame in enumerate(runs):
        frame = validate(frame)
        if k:  # CI: the gate first, then the run saved into the series
            found = gate(ws, SERIES, frame, f"run{k}", ws.content_digest(frame), "bot")
            record(ws, found)
            verdicts.append(found.verdict)
            baselines.append((found.baseline.name, found.reference.name))
        ws.add_to_series(ws.add_dataset(frame, f"run{k}").id, SERIES, f"2026-11-{10 + k:02d}T02:00:00Z")
    first = verdicts.index("regression") + 1
    assert 2 <= first <= detectable <= 5, (first, detectable, verdicts)
    assert verdicts[:first - 1] == ["inconclusive"] * (first - 1)
    assert set(verdicts[first - 1:]) == {"regression"}  # the drop only grows: every later run fails too
    # a failed run is never the next baseline: after run f fails, every later run is compared with run f - 1
    assert [b for b, _ in baselines[first:]] == [f"run{first - 1}"] * (9 - first)
    assert {r for _, r in baselines} == {"run0"}
    statuses = {r.name: r.status for r in ws.series_runs(SERIES)}
    assert statuses["run0"] == "" and statuses[f"run{first - 1}"] == "passed" and statuses["run9"] == "failed"


def _run2_failed(tmp_path) -> tuple[Workspace, list[str], list[str]]:
    """(workspace, dataset ids, digests) of a series of four runs of OWNER's, shared, whose run2 failed the gate
    against run1 and run0."""
    ws = Workspace(tmp_path / "ws")
    ids = []
    for k, frame in enumerate(slowly_worse(4)):
        saved = ws.add_dataset(validate(frame), f"run{k}", owner=OWNER, shared=True)
        ids.append(saved.id)
        ws.add_to_series(saved.id, SERIES, f"2026-11-{10 + k:02d}T02:00:00Z", viewer=OWNER)
    digests = [r.digest for r in ws.series_runs(SERIES, OWNER)]
    ws.record_verdict(SERIES, digests[2], "failed", ids[1], ids[0])
    return ws, ids, digests


def test_accepting_a_run_makes_it_the_baseline_and_the_reference_with_who_and_when(tmp_path):
    ws, ids, digests = _run2_failed(tmp_path)
    entries = ws.series_runs(SERIES, OWNER)
    assert [r.accepted for r in entries] == [True, True, False, True]  # never gated: accepted as saved
    base, reference = baseline_and_reference(entries, None, "a new run's digest")
    assert (base.name, reference.name) == ("run3", "run0")
    base, reference = baseline_and_reference(entries, None, digests[3])  # run3 gated again: runs before it only
    assert (base.name, reference.name) == ("run1", "run0")  # run2 failed: not the baseline
    accepted = ws.accept_run(SERIES, ids[2], MEMBER.upper())  # a signed-in member, on a run shared with the team
    assert (accepted.status, accepted.decided_by) == ("accepted", MEMBER) and accepted.decided_at.startswith("20")
    ws.record_verdict(SERIES, digests[2], "failed")  # a gate run again does not undo an acceptance
    entries = ws.series_runs(SERIES, OWNER)
    assert entries[2].status == "accepted"
    base, reference = baseline_and_reference(entries, None, digests[3])
    assert (base.name, reference.name) == ("run2", "run2")  # accepted by a member: the drift up to it acknowledged
    ws.pin_baseline(SERIES, ids[0], OWNER)
    assert [r.name for r in baseline_and_reference(ws.series_runs(SERIES, OWNER), ws.series_baseline(SERIES),
                                                   digests[3])] == ["run0", "run0"]
    history = ws.series_decisions(SERIES)
    assert [(d["status"], d["who"]) for d in history] == [("failed", None), ("accepted", MEMBER), ("failed", None)]
    assert (history[0]["baseline"], history[0]["reference"]) == (ids[1], ids[0])


def test_only_the_owner_or_a_signed_in_member_on_a_shared_run_decides(tmp_path):
    ws = Workspace(tmp_path / "ws")
    frame = validate(slowly_worse(1)[0])
    shared = ws.add_dataset(frame, "shared", owner=OWNER, shared=True)
    private = ws.add_dataset(frame.assign(correct=1.0), "open")  # no owner: seen by all, shared with nobody
    for record_ in (shared, private):
        ws.add_to_series(record_.id, SERIES, viewer=OWNER)
    with pytest.raises(PermissionError, match=f"owner of the series '{SERIES}' \\({OWNER}\\).*sign in"):
        ws.accept_run(SERIES, private.id, MEMBER)  # a run not shared with the team
    with pytest.raises(PermissionError, match=OWNER):
        ws.accept_run(SERIES, private.id, None)  # nobody signed in, on a series with an owner
    with pytest.raises(PermissionError, match=OWNER):
        ws.pin_baseline(SERIES, private.id, MEMBER)
    assert ws.accept_run(SERIES, private.id, OWNER).decided_by == OWNER
    assert ws.accept_run(SERIES, shared.id, MEMBER).decided_by == MEMBER
    with pytest.raises(LookupError, match="No series named 'nope'"):
        ws.accept_run("nope", shared.id, OWNER)
    ownerless = Workspace(tmp_path / "ws2")
    run = ownerless.add_dataset(frame, "run")
    ownerless.add_to_series(run.id, SERIES)
    with pytest.raises(PermissionError, match="no owner"):
        ownerless.accept_run(SERIES, run.id, MEMBER)
    assert ownerless.accept_run(SERIES, run.id).status == "accepted"  # where nobody signs in


def test_a_version_5_catalog_gains_the_verdicts(tmp_path):
    root = tmp_path / "ws"
    ws = Workspace(root)
    record_ = ws.add_dataset(validate(slowly_worse(1)[0]), "run0")
    ws.add_to_series(record_.id, SERIES)
    with sqlite3.connect(root / "catalog.sqlite") as db:  # as the previous release left it
        db.execute("DROP TABLE series_verdicts")
        db.execute("PRAGMA user_version = 5")
    assert Workspace(root).series_runs(SERIES)[0].status == ""  # read before any write: never gated
    ws = Workspace(root)
    ws.accept_run(SERIES, record_.id)
    assert sqlite3.connect(root / "catalog.sqlite").execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 7
    assert ws.series_runs(SERIES)[0].status == "accepted"


def test_the_history_changes_compare_each_run_with_its_gate_baseline(tmp_path):
    """The History page's changes (series_changes with Series.gate_baselines): run2 failed the gate, so run3 is
    compared with run1 (the latest accepted run before it), not with run2; once a member accepts run2, run3 is
    compared with run2. A pinned run stays the baseline of every run."""
    from evalcore.history import series_changes
    from evalcore.history.load import read_series

    ws, ids, _ = _run2_failed(tmp_path)
    series = read_series(ws, SERIES, OWNER).comparable()
    assert series.gate_baselines() == (None, "run0", "run1", "run1")
    table = series_changes(series.runs, "correct", series.gate_baselines(), slices=False)
    assert table[["run", "baseline"]].values.tolist() == [["run1", "run0"], ["run2", "run1"], ["run3", "run1"]]
    # run3 - run1 is two steps of 60 answers: 120 fewer right of 12,000
    assert table.loc[table["run"] == "run3", "difference"].iloc[0] == pytest.approx(-120 / N)
    ws.accept_run(SERIES, ids[2], OWNER)
    series = read_series(ws, SERIES, OWNER).comparable()
    assert series.gate_baselines() == (None, "run0", "run1", "run2")
    pinned = series_changes(series.runs, "correct", "run0", slices=False)
    assert set(pinned["baseline"]) == {"run0"} and len(pinned) == 3
    with pytest.raises(ValueError, match="one per run"):
        series_changes(series.runs, "correct", ("run0",), slices=False)


def test_the_gate_never_takes_a_run_of_another_model_as_baseline(tmp_path):
    """A series whose latest run holds another model only: the gate compares the new run of "bot" with the latest
    run that holds bot (run0), as the History page leaves the other run out, instead of announcing the other run."""
    runs = slowly_worse(3)
    ws = Workspace(tmp_path / "ws")
    saved = ws.add_dataset(validate(runs[0]), "run0")
    ws.add_to_series(saved.id, SERIES, "2026-11-10T02:00:00Z")
    other = ws.add_dataset(validate(runs[1].assign(model="other")), "other1")
    ws.add_to_series(other.id, SERIES, "2026-11-11T02:00:00Z")
    new = validate(runs[2])
    found = gate(ws, SERIES, new, "run2", ws.content_digest(new), "bot")
    assert found.baseline.name == "run0" and found.reference.name == "run0"
    assert found.against_baseline.overall["difference"].iloc[0] == pytest.approx(-120 / N)
