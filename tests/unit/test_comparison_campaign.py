"""Comparison campaigns (evalcore.labeling.comparison) in a real SQLite workspace, on logs of the models' outputs
alone: such a log validates and saves; claims for two annotators; outputs returned literally; verdicts and class
answers (identical outputs share one verdict); the estimate against a hand computation; refusals that name what is
wrong; an acknowledged label survives kill -9; a version-4 catalog migrates."""

from __future__ import annotations

import json
import math
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pandas as pd
import pytest
from scipy.stats import t as student_t

from evalcore.data.validation import report_of, validate
from evalcore.errors import EvalDataError
from evalcore.labeling import Campaign, ComparisonCampaign
from evalcore.labeling.comparison import verdicts
from evalcore.workspace import Workspace, catalog

OWNER, ALICE, BOB = "owner@team.org", "alice@team.org", "bob@team.org"
N = 80
HOSTILE = {"q0": "<script>alert(1)</script>", "q1": "=cmd|' /C calc'!A0", "q2": "\u202egnp.exe"}


def _outputs(n: int = N, seed: int = 0, models=("A", "B"), same: float = 0.6, hostile: bool = False):
    """A log of outputs only (choices A-D) and each example's right answer: each later model repeats the first
    model's choice with probability ``same``."""
    rng = np.random.default_rng(seed)
    truth = rng.choice(list("ABCD"), n)
    first = np.where(rng.random(n) < 0.7, truth, rng.choice(list("ABCD"), n))
    rows = []
    for k, model in enumerate(models):
        out = first if k == 0 else np.where(rng.random(n) < same, first, rng.choice(list("ABCD"), n))
        for i in range(n):
            text = HOSTILE.get(f"q{i}", out[i]) if hostile and k == 1 else out[i]
            rows.append({"model": model, "example_id": f"q{i}", "input": f"Question {i}?", "output": text})
    return pd.DataFrame(rows), dict(zip([f"q{i}" for i in range(n)], truth))


def _save(ws: Workspace, frame: pd.DataFrame, name: str = "outputs") -> str:
    return ws.add_dataset(frame.to_csv(index=False).encode(), name, owner=OWNER, shared=True).id


@pytest.fixture()
def workspace(tmp_path):
    ws = Workspace(tmp_path / "ws")
    frame, truth = _outputs()
    return ws, _save(ws, frame), truth


# ------------------------------------------------------------------------------------------------ the log
def test_a_log_of_outputs_alone_validates_and_saves_with_a_note(tmp_path):
    frame, _ = _outputs(n=10)
    checked = validate(frame)
    report = checked.attrs["report"]
    assert report["kind"] == "log" and report["n_models"] == 2
    assert any("outputs only" in n and "comparison campaign" in n for n in report["notes"]), report["notes"]
    assert {"correct", "score", "confidence", "proxy"}.isdisjoint(checked.columns)
    assert report_of(checked).outputs_only and not report_of(validate(frame.assign(correct=1))).outputs_only
    record = Workspace(tmp_path / "ws").add_dataset(frame.to_csv(index=False).encode(), "outs", owner=OWNER)
    assert record.kind == "log" and record.models == 2
    with pytest.raises(EvalDataError, match="at least one value column.*'output'"):
        validate(frame.drop(columns="output"))


# ------------------------------------------------------------------------------------------------ claims, outputs
def test_two_annotators_at_once_never_get_the_same_example(workspace):
    ws, dataset, _ = workspace
    campaign = Campaign.create(ws, dataset, models=["A", "B"], design="srs", budget=40, seed=3, owner=OWNER,
                               shared=True)
    assert isinstance(campaign, ComparisonCampaign) and campaign.info.kind == "comparison"
    got: dict[str, list] = {ALICE: [], BOB: []}
    errors = []

    def annotate(who: str) -> None:
        opened = Campaign.open(ws, campaign.id, viewer=who)  # each annotator its own connection, as in the server
        try:
            for _ in range(15):
                eid = opened.next(who)
                got[who].append(eid)
                opened.record(eid, who, dict.fromkeys(opened.info.models, 1))
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(repr(exc))

    threads = [threading.Thread(target=annotate, args=(who,)) for who in got]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    handed = got[ALICE] + got[BOB]
    assert len(handed) == 30 == len(set(handed))  # never the same example twice
    assert len(campaign.history()) == 30 and campaign.estimate().labels == 30
    assert [r.id for r in Campaign.list(ws, viewer=ALICE)] == [campaign.id]


def test_outputs_come_back_literally(tmp_path):
    ws = Workspace(tmp_path / "ws")
    frame, _ = _outputs(hostile=True)
    campaign = Campaign.create(ws, _save(ws, frame), models=["A", "B"], design="srs", budget=N, owner=OWNER,
                               shared=True)
    for eid, text in HOSTILE.items():
        assert campaign.outputs(eid)["B"] == text
        assert campaign.outputs(eid)["A"] == frame.loc[(frame["model"] == "A") & (frame["example_id"] == eid),
                                                       "output"].item()
    assert list(campaign.outputs("q5")) == ["A", "B"]  # the campaign's order


# ------------------------------------------------------------------------------------------------ labels
def test_verdicts_identical_outputs_and_class_answers(tmp_path):
    ws = Workspace(tmp_path / "ws")
    frame, _ = _outputs(models=("A", "B", "C"), same=0.5, seed=1)
    campaign = Campaign.create(ws, _save(ws, frame), models=["A", "B", "C"], design="disagreement", budget=20,
                               seed=0, owner=OWNER, shared=True)
    assert campaign.info.outputs == "class"
    done = 0
    while done < 2:  # an example where two of the three models gave the same choice
        eid = campaign.next(ALICE)
        out = campaign.outputs(eid)
        groups = pd.Series(out).groupby(pd.Series(out)).groups
        if len(groups) != 2:
            campaign.record(eid, ALICE, skipped=True)
            continue
        pair = next(list(g) for g in groups.values() if len(g) == 2)
        alone = next(list(g) for g in groups.values() if len(g) == 1)[0]
        with pytest.raises(EvalDataError, match=f"No verdict for the output of '{alone}'"):
            campaign.record(eid, ALICE, {pair[0]: 1})
        with pytest.raises(EvalDataError, match="share one verdict"):
            campaign.record(eid, ALICE, {pair[0]: 1, pair[1]: 0, alone: 0})
        if done == 0:  # one verdict for the shared output serves both models
            campaign.record(eid, ALICE, {pair[0]: 1, alone: "wrong"})
            expected = {pair[0]: 1, pair[1]: 1, alone: 0}
        else:  # the right answer once: lower case is the same choice
            campaign.record(eid, ALICE, f"  {out[alone].lower()} ")
            expected = {pair[0]: 0, pair[1]: 0, alone: 1}
        assert campaign.history()["verdicts"].iloc[-1] == expected
        done += 1
    with pytest.raises(EvalDataError, match="does not compare"):
        campaign.record(eid, ALICE, {"Z": 1})
    skips = campaign.history()["skipped"].sum()
    assert campaign.verdicts()[["A", "B", "C"]].isna().all(axis=1).sum() == skips  # a skip is unknown (NaN)


def test_one_examples_verdicts_by_hand():
    outputs = {"A": " B", "B": "b", "C": "B "}  # A and C the same output once stripped; "b" another output
    assert verdicts(outputs, {"A": 1, "B": "no"}, "class") == {"A": 1, "B": 0, "C": 1}
    assert verdicts(outputs, "b", "class") == {"A": 1, "B": 1, "C": 1}  # a single letter, without case
    assert verdicts({"A": "cat", "B": "Cat"}, "cat", "class") == {"A": 1, "B": 0}  # a word, with case
    assert verdicts({"A": "3", "B": "4"}, 3, "class") == {"A": 1, "B": 0}  # classes numbered
    with pytest.raises(EvalDataError, match="not 1 \\(right\\) or 0"):
        verdicts(outputs, {"A": 0.5, "B": 1}, "class")


def test_free_text_needs_a_verdict_per_output_and_disagreements_are_adjudicated(tmp_path):
    """Two annotators (overlap 2) who judge an example differently make it disputed: unknown in the estimate (its
    interval bounds it at both ends), in the adjudication queue with both labels, until the owner or a named
    adjudicator decides; nobody else may. A skipped example waits there too. Agreeing labels settle by themselves."""
    ws = Workspace(tmp_path / "ws")
    rows = [{"model": m, "example_id": f"q{i}", "output": f"{m} wrote a long answer to question {i}, at length."
             if (i % 2 or m == "A") else f"A wrote a long answer to question {i}, at length."}
            for i in range(30) for m in ("A", "B")]
    campaign = Campaign.create(ws, _save(ws, pd.DataFrame(rows)), models=["A", "B"], design="disagreement",
                               budget=10, seed=0, owner=OWNER, shared=True, overlap=2)
    assert campaign.info.outputs == "text" and campaign.info.pool["N_D"] == 15  # the odd examples differ
    eid = campaign.next(ALICE)
    assert campaign.next(BOB) == eid  # overlap 2
    with pytest.raises(EvalDataError, match="free text"):
        campaign.record(eid, ALICE, "A")
    campaign.record(eid, ALICE, {"A": 1, "B": 0})
    campaign.record(eid, BOB, {"A": 0, "B": 0})
    drawn = campaign.verdicts()
    assert drawn.at[eid, "status"] == "disputed" and drawn.loc[eid, ["A", "B"]].isna().all()
    estimate = campaign.estimate()
    assert estimate.labels == 0 and estimate.skipped == 1
    queue = campaign.pending()
    assert queue["annotator"].tolist() == [ALICE, BOB] and set(queue["reason"]) == {"labels disagree"}
    assert queue["verdicts"].tolist() == [{"A": 1, "B": 0}, {"A": 0, "B": 0}]
    with pytest.raises(PermissionError, match=f"{BOB} may not adjudicate.*owner \\({OWNER}\\)"):
        campaign.adjudicate(eid, {"A": 0, "B": 1}, BOB)
    campaign.set_adjudicators([BOB], viewer=OWNER)
    campaign.adjudicate(eid, {"A": 0, "B": 1}, BOB, note="B's answer is the right one")
    drawn = campaign.verdicts()
    assert drawn.at[eid, "status"] == "adjudicated" and drawn.loc[eid, ["A", "B"]].tolist() == [0.0, 1.0]
    assert campaign.pending().empty and campaign.version()[1] > 0
    decided = campaign.adjudications()
    assert decided[["adjudicator", "note"]].values.tolist() == [[BOB, "B's answer is the right one"]]
    export = campaign.export().set_index("example_id")
    assert export.loc[eid, ["status", "correct A", "correct B", "adjudicator"]].tolist() == ["adjudicated", 0, 1, BOB]
    # agreeing labels settle by themselves; a skip waits for an adjudication
    other = campaign.next(ALICE)
    campaign.record(other, ALICE, {"A": 1, "B": 0})
    assert campaign.next(BOB) == other
    campaign.record(other, BOB, {"A": 1, "B": 0})
    assert campaign.verdicts().at[other, "status"] == "labeled"
    with pytest.raises(EvalDataError, match="2 label\\(s\\) that agree"):
        campaign.adjudicate(other, {"A": 0, "B": 0}, OWNER)
    hard = campaign.next(ALICE)
    campaign.record(hard, ALICE, skipped=True)
    assert campaign.pending()["reason"].tolist() == ["skipped"]
    campaign.adjudicate(hard, {"A": 1, "B": 1}, OWNER)
    assert campaign.verdicts().at[hard, "status"] == "adjudicated" and campaign.estimate().skipped == 0


def test_the_estimate_equals_a_hand_computation(workspace):
    ws, dataset, truth = workspace
    campaign = Campaign.create(ws, dataset, models=["A", "B"], design="disagreement", budget=12, seed=5,
                               owner=OWNER, shared=True)
    n_pool = campaign.info.pool["N"]
    frame = ws.dataset(dataset, OWNER)
    wide = frame.pivot(index="example_id", columns="model", values="output")
    differ = wide.index[wide["A"] != wide["B"]]
    assert campaign.info.pool["N_D"] == len(differ) and n_pool == N
    labeled = []
    while (eid := campaign.next(ALICE)) is not None:
        assert eid in differ  # the disagreement design queues only the examples whose outputs differ
        campaign.record(eid, ALICE, truth[eid])
        labeled.append(eid)
    assert len(labeled) == 12
    d = np.array([int(wide.at[e, "A"] == truth[e]) - int(wide.at[e, "B"] == truth[e]) for e in labeled], float)
    f, n, m = len(differ) / N, len(d), len(differ)
    delta = f * d.mean()
    se = f * math.sqrt((1 - n / m) * (d @ d / (n - 1)) / n)  # d's second moment about zero
    half = student_t.ppf(0.975, n - 1) * se
    estimate = campaign.estimate()
    assert estimate.labels == 12 and estimate.stop  # the budget is used
    assert estimate.difference == pytest.approx(delta)
    # the difference lies within ±N_D/N (it is 0 outside the disagreement set): the interval is cut there
    assert (estimate.ci_low, estimate.ci_high) == pytest.approx((max(delta - half, -f), min(delta + half, f)))
    assert estimate.decided is None  # the campaign does not ask for a decision


def test_a_neyman_campaign_reads_the_confidences_and_weights_its_strata(tmp_path):
    """A log with each model's confidence: the Neyman design queues only the examples whose outputs differ, in
    strata of the difference the confidences predict; its estimate is the stratified one (``Σ W_h mean_h(d)`` times
    N_D/N, by hand from the labels), the export's inclusion probabilities are ``n_h / N_h`` and the decided rule,
    whose confidence sequence needs a simple random sample, is refused."""
    ws = Workspace(tmp_path / "ws")
    frame, truth = _outputs(n=200, seed=3)
    rng = np.random.default_rng(3)
    frame["confidence"] = np.round(rng.uniform(0.05, 0.95, len(frame)), 3)
    dataset = _save(ws, frame, "with confidences")
    with pytest.raises(EvalDataError, match="decided rule reads a confidence sequence"):
        Campaign.create(ws, dataset, models=["A", "B"], design="neyman", decide=True, owner=OWNER)
    campaign = Campaign.create(ws, dataset, models=["A", "B"], design="neyman", budget=40, seed=2, owner=OWNER,
                               shared=True)
    pool = campaign.info.pool
    assert sum(pool["strata"]) == pool["M"] == pool["N_D"] and len(pool["strata"]) > 1
    wide = frame.pivot(index="example_id", columns="model", values="output")
    while (eid := campaign.next(ALICE)) is not None:
        assert wide.at[eid, "A"] != wide.at[eid, "B"]
        campaign.record(eid, ALICE, truth[eid])
    drawn = campaign.verdicts()
    assert len(drawn) == 40
    d = drawn["A"] - drawn["B"]
    w = np.asarray(pool["strata"]) / pool["M"]
    by_hand = pool["N_D"] / pool["N"] * float(w @ d.groupby(drawn["stratum"]).mean().reindex(range(w.size)))
    estimate = campaign.estimate()
    assert estimate.stop and estimate.difference == pytest.approx(by_hand)
    assert estimate.ci_low < by_hand < estimate.ci_high
    export = campaign.export()
    counts = drawn["stratum"].value_counts()
    expected = [counts[h] / pool["strata"][h] for h in drawn.loc[export["example_id"], "stratum"]]
    assert export["inclusion_probability"].tolist() == pytest.approx(expected)


# ------------------------------------------------------------------------------------------------ refusals
def test_refusals_name_how_many_examples_are_shared_and_missing_outputs_are_said(tmp_path):
    ws = Workspace(tmp_path / "ws")
    frame, _ = _outputs(n=30)
    apart = frame.assign(example_id=np.where(frame["model"] == "B", "r" + frame["example_id"], frame["example_id"]))
    with pytest.raises(EvalDataError, match="share 0 examples"):
        Campaign.create(ws, _save(ws, apart, "apart"), models=["A", "B"], design="srs", owner=OWNER)
    few = frame[(frame["model"] == "A") | frame["example_id"].isin([f"q{i}" for i in range(5)])]
    with pytest.raises(EvalDataError, match="share 5 examples.*at least 20"):
        Campaign.create(ws, _save(ws, few, "few"), models=["A", "B"], design="srs", owner=OWNER)
    gaps = frame[~((frame["model"] == "B") & frame["example_id"].isin(["q3", "q4", "q7"]))]
    campaign = Campaign.create(ws, _save(ws, gaps, "gaps"), models=["A", "B"], design="srs", budget=27,
                               owner=OWNER, shared=True)
    assert any("3 examples lack an output of 'B'" in n for n in campaign.info.notes), campaign.info.notes
    queued = {campaign.next(f"a{k}@team.org") for k in range(27)}
    assert len(queued) == 27 and not queued & {"q3", "q4", "q7"}  # left out, not guessed
    with pytest.raises(EvalDataError, match="has no model Z; its models are A, B"):
        Campaign.create(ws, _save(ws, frame), models=["A", "Z"], design="srs", owner=OWNER)
    with pytest.raises(EvalDataError, match="design must be one of srs, disagreement, neyman"):
        Campaign.create(ws, _save(ws, frame), models=["A", "B"], design="cluster", owner=OWNER)
    with pytest.raises(EvalDataError, match="Neyman design reads each model's confidence"):  # the log has none
        Campaign.create(ws, _save(ws, frame), models=["A", "B"], design="neyman", owner=OWNER)


# ------------------------------------------------------------------------------------------------ durability
def test_an_acknowledged_label_survives_kill_9(workspace):
    ws, dataset, _ = workspace
    campaign = Campaign.create(ws, dataset, models=["A", "B"], design="disagreement", budget=10, owner=OWNER,
                               shared=True)
    script = textwrap.dedent(f"""
        import os, signal
        from evalcore.workspace import Workspace
        from evalcore.labeling import Campaign
        c = Campaign.open(Workspace({str(ws.root)!r}), {campaign.id!r}, viewer={ALICE!r})
        e = c.next({ALICE!r})
        c.record(e, {ALICE!r}, {{"A": 1, "B": 0}})
        print(e, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert done.returncode == -signal.SIGKILL, done.stderr
    acknowledged = done.stdout.strip()
    history = campaign.history()
    assert history[["example_id", "annotator"]].values.tolist() == [[acknowledged, ALICE]]
    assert history["verdicts"].iloc[0] == {"A": 1, "B": 0}


def test_a_version_4_catalog_is_migrated_with_its_campaign_and_labels(tmp_path):
    ws = Workspace(tmp_path / "ws")
    frame, _ = _outputs(n=30)
    dataset = _save(ws, frame)
    one = Campaign.create(ws, dataset, "A", "srs", budget=10, owner=OWNER, shared=True)
    example = one.next(ALICE)
    one.record(example, ALICE, 1)
    db = sqlite3.connect(ws.catalog)  # back to version 4, as a catalog written before comparison campaigns
    db.executescript("DROP TABLE comparison_labels; DROP TABLE comparison_examples; DROP TABLE comparisons; "
                     "PRAGMA user_version = 4;")
    db.close()
    assert [r.kind for r in Campaign.list(ws, viewer=OWNER)] == ["model"]  # read as it is, before any write
    reopened = Campaign.open(Workspace(ws.root), one.id, viewer=OWNER)
    assert type(reopened) is Campaign and reopened.current_labels()["example_id"].tolist() == [example]
    compared = Campaign.create(ws, dataset, models=["A", "B"], design="srs", budget=10, owner=OWNER, shared=True)
    db = sqlite3.connect(ws.catalog)
    assert db.execute("PRAGMA user_version").fetchone()[0] == catalog.SCHEMA_VERSION
    stored = db.execute("SELECT models, outputs FROM comparisons WHERE campaign_id = ?", (compared.id,)).fetchone()
    db.close()
    assert json.loads(stored[0]) == ["A", "B"] and stored[1] == "class"
    assert {r.kind for r in Campaign.list(ws, viewer=OWNER)} == {"model", "comparison"}


def test_a_neyman_campaign_says_what_its_first_estimate_needs(tmp_path):
    from evalcore.labeling.comparison import comparison_sentence

    ws = Workspace(tmp_path / "ws")
    frame, truth = _outputs(n=200, seed=3)
    frame["confidence"] = np.round(np.random.default_rng(4).uniform(0.05, 0.95, len(frame)), 3)
    campaign = Campaign.create(ws, _save(ws, frame), models=["A", "B"], design="neyman", budget=40, seed=1,
                               owner=OWNER, shared=True)
    eid = campaign.next(ALICE)
    campaign.record(eid, ALICE, truth[eid])
    said = comparison_sentence(campaign.info, campaign.estimate())
    assert f"needs 2 labels in each of the design's {len(campaign.info.pool['strata'])} strata" in said, said
