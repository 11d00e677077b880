"""Claims, conflicts and adjudication of a labeling campaign (evalcore.labeling.campaign), in a real SQLite
workspace: a late label after an expired claim and overlap labels that disagree are pending, never averaged, in the
estimator's input and the export; the owner or a named adjudicator settles them; a version-3 catalog migrates."""

from __future__ import annotations

import math
import sqlite3
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from evalcore.errors import EvalDataError
from evalcore.labeling import campaign as campaign_module
from evalcore.labeling.campaign import LABELED_COLUMNS, Campaign, settle
from evalcore.workspace import Workspace, catalog

OWNER, ALICE, BOB, CAROL = "owner@team.org", "alice@team.org", "bob@team.org", "carol@team.org"
N = 100


@pytest.fixture()
def workspace(tmp_path):
    rng = np.random.default_rng(0)
    ws = Workspace(tmp_path / "ws")
    frame = pd.DataFrame({"model": "m", "example_id": [f"q{i}" for i in range(N)], "correct": np.nan,
                          "confidence": rng.uniform(0.3, 1.0, N).round(3)})
    record = ws.add_dataset(frame.to_csv(index=False).encode(), "pool", owner=OWNER, shared=True)
    return ws, record.id


@pytest.fixture()
def clock(monkeypatch):
    """The campaign module's clock, set by the test (claims expire by it)."""
    now = [1_000_000.0]
    monkeypatch.setattr(campaign_module, "time", SimpleNamespace(time=lambda: now[0]))
    return now


def _row(frame: pd.DataFrame, example_id: str) -> dict:
    return frame.set_index("example_id").loc[example_id].to_dict()


def test_a_late_label_after_an_expired_claim_is_pending_not_averaged_until_adjudicated(workspace, clock):
    ws, dataset = workspace
    campaign = Campaign.create(ws, dataset, "m", "srs", budget=20, owner=OWNER, shared=True, seed=1)
    first = campaign.next(ALICE)
    clock[0] += campaign_module.CLAIM_SECONDS + 1  # alice's claim expires: bob gets the same example
    assert campaign.next(BOB) == first
    campaign.record(first, BOB, 1)
    campaign.record(first, ALICE, 0)  # late, on her expired claim: kept as a second opinion
    labeled = campaign._labeled()
    assert list(labeled.frame.columns) == list(LABELED_COLUMNS) and (labeled.pending, labeled.skipped) == (1, 0)
    row = _row(labeled.frame, first)
    assert math.isnan(row["value"]) and (row["low"], row["high"], row["status"]) == (0.0, 1.0, "pending")
    exported = _row(campaign.export(), first)
    assert math.isnan(exported["label"]) and exported["status"] == "pending"  # not 0.5
    assert campaign.labeled_examples()["correct"].isna().all()
    assert campaign.estimate().pending == 1
    queue = campaign.pending()
    assert queue[["example_id", "annotator", "value"]].values.tolist() == [[first, ALICE, 0.0], [first, BOB, 1.0]]

    with pytest.raises(PermissionError, match=f"{ALICE} may not adjudicate.*ask the owner to name you"):
        campaign.adjudicate(first, 1, ALICE)
    campaign.adjudicate(first, "correct", OWNER, note="the answer is right")
    row = _row(campaign._labeled().frame, first)
    assert (row["value"], row["low"], row["high"], row["status"]) == (1.0, 1.0, 1.0, "adjudicated")
    exported = _row(campaign.export(), first)
    assert (exported["label"], exported["status"], exported["adjudicator"]) == (1.0, "adjudicated", OWNER)
    assert campaign.pending().empty and campaign.estimate().pending == 0
    campaign.adjudicate(first, 0, OWNER)  # a second decision replaces the first, which stays in the history
    history = campaign.adjudications()
    assert history["value"].tolist() == [1.0, 0.0] and history["replaced_by"].iloc[0] == history["id"].iloc[1]
    assert _row(campaign._labeled().frame, first)["value"] == 0.0


def test_labels_that_agree_settle_and_a_label_without_a_claim_is_refused(workspace, clock):
    ws, dataset = workspace
    campaign = Campaign.create(ws, dataset, "m", "srs", budget=20, owner=OWNER, shared=True, seed=2)
    first = campaign.next(ALICE)
    clock[0] += campaign_module.CLAIM_SECONDS + 1
    assert campaign.next(BOB) == first
    campaign.record(first, BOB, 1)
    campaign.record(first, ALICE, 1)
    assert _row(campaign._labeled().frame, first)["status"] == "labeled" and campaign.pending().empty
    with pytest.raises(EvalDataError, match="has 2 labels that agree .settled at 1.: only examples whose labels"):
        campaign.adjudicate(first, 0, OWNER)
    second = campaign.next(BOB)
    with pytest.raises(EvalDataError, match="has no label yet"):
        campaign.adjudicate(second, 0, OWNER)
    campaign.record(second, BOB, 0)
    with pytest.raises(EvalDataError, match="has one label yet"):
        campaign.adjudicate(second, 1, OWNER)
    with pytest.raises(EvalDataError, match=f"{CAROL} holds no claim on the example"):
        campaign.record(second, CAROL, 1)  # never handed to carol
    campaign.record(second, BOB, 1)  # changing one's own label needs no claim
    lost = campaign.next(ALICE)
    clock[0] += campaign_module.CLAIM_SECONDS + 1
    assert campaign.next(CAROL) == lost
    later = campaign.next(ALICE)  # asking again, alice gives her expired claim up
    assert later != lost
    with pytest.raises(EvalDataError, match=f"{ALICE} holds no claim on the example '{lost}'"):
        campaign.record(lost, ALICE, 1)
    campaign.record(later, ALICE, None, skipped=True)
    labeled = campaign._labeled()
    row = _row(labeled.frame, later)
    assert math.isnan(row["value"]) and (row["low"], row["high"], row["status"]) == (0.0, 1.0, "skipped")
    assert (labeled.skipped, labeled.pending) == (1, 0)
    assert _row(campaign.export(), later)["status"] == "skipped"


def test_overlap_disagreements_go_to_the_queue_and_a_named_adjudicator_settles_them(workspace):
    ws, dataset = workspace
    campaign = Campaign.create(ws, dataset, "m", "proportional", budget=30, owner=OWNER, shared=True, overlap=2)
    given = {}
    for value_a, value_b in ((1, 1), (1, 0), (0, 0), (0, 1)):
        example = campaign.next(ALICE)
        assert campaign.next(BOB) == example
        campaign.record(example, ALICE, value_a)
        campaign.record(example, BOB, value_b, note="**not** sure <b>")
        given[example] = (value_a, value_b)
    disputed = [e for e, (a, b) in given.items() if a != b]
    queue = campaign.pending()
    assert queue["example_id"].drop_duplicates().tolist() == disputed and len(queue) == 4
    assert queue.loc[queue["annotator"] == BOB, "note"].tolist() == ["**not** sure <b>"] * 2
    frame = campaign._labeled().frame.set_index("example_id")
    assert frame.loc[disputed, "status"].eq("pending").all() and frame.loc[disputed, "value"].isna().all()
    agreed = [e for e in given if e not in disputed]
    assert frame.loc[agreed, "value"].tolist() == [given[e][0] for e in agreed]

    with pytest.raises(PermissionError, match="Only its owner"):
        campaign.set_adjudicators([CAROL], viewer=ALICE)
    assert campaign.set_adjudicators([" Carol@Team.org ", CAROL], viewer=OWNER) == (CAROL,)
    assert Campaign.open(ws, campaign.id, viewer=CAROL).info.adjudicators == (CAROL,)
    with pytest.raises(PermissionError, match="may not adjudicate"):
        campaign.adjudicate(disputed[0], 1, BOB)
    for example in disputed:
        campaign.adjudicate(example, 1, CAROL)
    assert campaign.pending().empty
    labeled = campaign.labeled_examples().set_index("example_id")
    assert labeled.loc[disputed, "correct"].tolist() == [1.0, 1.0]
    assert labeled.loc[disputed, "status"].tolist() == ["adjudicated"] * 2


def test_scores_agree_within_a_quarter_of_the_scale_and_settle_at_their_mean():
    """Scale 1-5 (range 4): labels within 1 point agree (mean); 2 and 5 (3 points apart) are pending."""
    labels = pd.DataFrame({"example_id": ["a", "a", "b", "b", "c"], "value": [3.0, 4.0, 2.0, 5.0, 4.5]})
    got = settle(labels, pd.Series({"d": 2.0}), "score", (1.0, 5.0))
    assert got.loc["a", ["value", "low", "high", "status"]].tolist() == [3.5, 3.5, 3.5, "labeled"]
    assert math.isnan(got.loc["b", "value"]) and got.loc["b", ["low", "high", "status"]].tolist() == [2.0, 5.0,
                                                                                                       "pending"]
    assert got.loc["c", "value"] == 4.5 and got.loc["d", "status"] == "adjudicated"
    ties = settle(pd.DataFrame({"example_id": ["x", "x"], "value": [0.5, 1.0]}), pd.Series(dtype=float),
                  "pairwise", (0.0, 1.0))
    assert ties.loc["x", "status"] == "pending"  # a tie and a win for B disagree


def test_a_version_3_catalog_is_migrated_with_its_campaign_and_labels(workspace):
    ws, dataset = workspace
    campaign = Campaign.create(ws, dataset, "m", "srs", budget=20, owner=OWNER, shared=True, overlap=2)
    example = campaign.next(ALICE)
    campaign.next(BOB)
    campaign.record(example, ALICE, 1)
    campaign.record(example, BOB, 0)
    db = sqlite3.connect(ws.catalog)  # back to version 3, as a catalog written before adjudication was
    db.executescript("DROP TABLE adjudications; ALTER TABLE campaigns DROP COLUMN adjudicators; "
                     "PRAGMA user_version = 3;")
    db.close()
    reopened = Campaign.open(Workspace(ws.root), campaign.id, viewer=OWNER)  # a writer opens it: step 4 runs once
    db = sqlite3.connect(ws.catalog)
    assert db.execute("PRAGMA user_version").fetchone()[0] == catalog.SCHEMA_VERSION
    db.close()
    assert reopened.info.adjudicators == () and len(reopened.history()) == 2
    assert reopened.pending()["example_id"].unique().tolist() == [example]
    reopened.adjudicate(example, 0, OWNER)
    assert _row(reopened.export(), example)["label"] == 0.0


def test_each_annotator_is_measured_against_the_adjudicated_and_agreed_labels_only(workspace):
    """Overlap 2: (1, 1) and (0, 0) agree, (1, 0) is adjudicated 1, and one example only alice labeled (it settles
    itself and says nothing of her): alice agrees with 3 of her 3 checked labels, bob with 2 of 3."""
    ws, dataset = workspace
    campaign = Campaign.create(ws, dataset, "m", "srs", budget=20, owner=OWNER, shared=True, overlap=2)
    for a, b in ((1, 1), (0, 0), (1, 0)):
        example = campaign.next(ALICE)
        assert campaign.next(BOB) == example
        campaign.record(example, ALICE, a)
        campaign.record(example, BOB, b)
    campaign.adjudicate(example, 1, OWNER)
    campaign.record(campaign.next(ALICE), ALICE, 0)
    quality = campaign.annotator_quality().set_index("annotator")
    assert quality.loc[[ALICE, BOB], "n_settled"].tolist() == [3, 3]
    assert quality.loc[ALICE, "agree_settled"] == 1.0 and quality.loc[BOB, "agree_settled"] == pytest.approx(2 / 3)
    found = campaign.agreement()
    assert found.quality.equals(campaign.annotator_quality()) and found.annotators.n == 3
    assert found.judge is None  # this pool has no judge verdicts


def test_a_skipped_example_waits_in_the_adjudication_queue_and_its_decision_settles_it(tmp_path):
    """Skipped examples are the hard ones: they join the adjudication queue (reason "skipped"), and the owner's
    decision turns their worst-to-best range into a settled value in the estimate."""
    from evalcore.labeling.campaign import Campaign
    from evalcore.workspace import Workspace

    ws = Workspace(tmp_path / "ws")
    n = 60
    frame = pd.DataFrame({"model": "m", "example_id": [f"e{i}" for i in range(n)], "correct": np.nan,
                          "confidence": np.linspace(0.5, 0.99, n).round(3)})
    dataset = ws.add_dataset(frame.to_csv(index=False).encode(), "pool", owner="olivia@team.org", shared=True)
    campaign = Campaign.create(ws, dataset.id, "m", "srs", budget=20, owner="olivia@team.org", shared=True, seed=1)
    first = campaign.next("ann@team.org")
    campaign.record(first, "ann@team.org", None, note="cannot tell", skipped=True)
    for _ in range(5):
        campaign.record(campaign.next("ann@team.org"), "ann@team.org", 1)
    queue = campaign.pending()
    assert queue[["example_id", "reason", "note"]].values.tolist() == [[first, "skipped", "cannot tell"]]
    assert np.isnan(queue["value"].iloc[0])
    before = campaign.estimate()
    assert before.skipped == 1 and before.labels == 5
    campaign.adjudicate(first, 0, "olivia@team.org")
    after = campaign.estimate()
    assert campaign.pending().empty and after.skipped == 0 and after.labels == 6
    assert after.estimate == pytest.approx(5 / 6)
    assert campaign.export().set_index("example_id").loc[first, "status"] == "adjudicated"
