"""Labels and campaigns under hostile use (issue 51): nobody signed in opens no owned campaign, a typed name is an
author and never a member's address, labels follow the design (inside the budget, in the queue's order), and every
text a person types or imports is bounded."""

from __future__ import annotations

import pandas as pd
import pytest

from evalcore.errors import EvalDataError
from evalcore.labeling.campaign import Campaign, author
from evalcore.workspace import Workspace, catalog

BOB, ALICE = "bob@team.org", "alice@team.org"
N = 300


def _dataset(ws: Workspace, owner: str | None = None, shared: bool = False) -> str:
    frame = pd.DataFrame({"model": "m", "example_id": [f"q{i}" for i in range(N)],
                          "confidence": [0.3 + 0.6 * (i % 7) / 6 for i in range(N)], "correct": ""})
    return ws.add_dataset(frame.to_csv(index=False).encode(), "pool", owner=owner, shared=shared).id


# ------------------------------------------------------------------------------------------------ item 1
def test_nobody_signed_in_opens_no_owned_campaign(tmp_path):
    ws = Workspace(tmp_path / "ws")
    dataset = _dataset(ws, owner=BOB, shared=True)
    private = Campaign.create(ws, dataset, "m", "srs", budget=10, owner=BOB)
    shared = Campaign.create(ws, dataset, "m", "srs", budget=10, owner=BOB, shared=True)
    for campaign in (private, shared):
        with pytest.raises(PermissionError, match="belongs to an owner, and nobody is signed in here"):
            Campaign.open(ws, campaign.id)  # viewer None: an instance without sign-in
        assert Campaign.open(ws, campaign.id, viewer="BOB@Team.org").id == campaign.id
    with pytest.raises(PermissionError, match="private to its owner"):
        Campaign.open(ws, private.id, viewer=ALICE)
    assert Campaign.open(ws, shared.id, viewer=ALICE).id == shared.id
    ownerless = Campaign.create(ws, _dataset(ws), "m", "srs", budget=10)
    assert Campaign.open(ws, ownerless.id).id == ownerless.id
    assert [c.id for c in Campaign.list(ws)] == [ownerless.id]  # the list and open agree


def test_a_typed_name_is_an_author_never_a_members_address():
    assert author("  alice ") == "alice" and author("") is None and author(None) is None
    for address in ("alice@example.org", " ALICE@team.org", "a@b"):
        with pytest.raises(EvalDataError, match="looks like an e-mail address"):
            author(address)


# ------------------------------------------------------------------------------------------------ item 6
def _filled(campaign: Campaign, positions, value=1, annotator=None) -> pd.DataFrame:
    """The export's rows at ``positions`` of the whole queue, labeled ``value``."""
    queue = pd.DataFrame([dict(r) for r in catalog.rows(campaign.workspace.catalog, "SELECT example_id, position "
                                                        "FROM queue WHERE campaign_id = ? ORDER BY position",
                                                        (campaign.id,))])
    table = queue.iloc[list(positions)][["example_id"]].assign(label=value).reset_index(drop=True)
    if annotator is not None:
        table["annotator"] = annotator
    return table


def test_a_label_past_the_budget_is_refused(tmp_path):
    ws = Workspace(tmp_path / "ws")
    campaign = Campaign.create(ws, _dataset(ws), "m", "srs", budget=10, seed=1)
    with pytest.raises(EvalDataError, match=r"line 2: The example 'q\d+' is at position 251 of the queue, past the "
                                            r"campaign's budget of 10 labels"):
        campaign.import_labels(_filled(campaign, [250]))
    assert campaign.history().empty and campaign.estimate().labels == 0
    assert campaign.import_labels(_filled(campaign, range(10))) == 10  # the budget itself, in order
    assert campaign.estimate().labels == 10 == int(campaign.export()["label"].notna().sum())


def test_labels_from_the_end_of_the_queue_are_refused(tmp_path):
    """An active campaign run to ±0.05: its queue's end holds the examples the model is surest of; 120 labels of
    1 from there gave an estimate of 1.000 and "you can stop"."""
    ws = Workspace(tmp_path / "ws")
    campaign = Campaign.create(ws, _dataset(ws), "m", "neyman", target=0.05, seed=1)
    with pytest.raises(EvalDataError) as refused:
        campaign.import_labels(_filled(campaign, range(N - 120, N)))
    said = str(refused.value)
    assert "nothing was recorded" in said and f"position {N - 119} of the queue, but the example at position 1" in said
    assert "label the examples in the order `evalcore label export` lists them" in said and "115 more" in said
    estimate = campaign.estimate()
    assert estimate.labels == 0 and not estimate.stop
    handed = [campaign.next("ann") for _ in range(1)]  # one example handed out: position 0 (claimed, unlabeled)
    assert campaign.import_labels(_filled(campaign, range(1, 30))) == 29  # in order after it
    with pytest.raises(EvalDataError, match="position 32 of the queue, but the example at position 31"):
        campaign.import_labels(_filled(campaign, [31]))
    assert handed == _filled(campaign, [0])["example_id"].tolist()


def test_an_import_records_only_the_importers_identity(tmp_path):
    ws = Workspace(tmp_path / "ws")
    campaign = Campaign.create(ws, _dataset(ws, owner=BOB, shared=True), "m", "srs", budget=20, owner=BOB,
                               shared=True)
    outsider = _filled(campaign, range(3), annotator=["eve@outside.org", ALICE, None])
    with pytest.raises(EvalDataError, match=r"line 2: the file names 'eve@outside.org' as the annotator: the labels "
                                            r"of a campaign with an owner are imported as the member who imports "
                                            r"them \(alice@team.org\) only"):
        campaign.import_labels(outsider, by=ALICE)
    with pytest.raises(EvalDataError, match="line 3: the file names 'alice@team.org'.*nobody: give --by EMAIL"):
        campaign.import_labels(outsider.iloc[1:], by=None)
    assert campaign.history().empty
    assert campaign.import_labels(_filled(campaign, range(3), annotator=["Alice@Team.org", ALICE, None]),
                                  by=ALICE) == 3
    assert campaign.history()["annotator"].tolist() == [ALICE] * 3

    ownerless = Campaign.create(ws, _dataset(ws), "m", "srs", budget=20)
    with pytest.raises(EvalDataError, match="line 3: The name 'alice@team.org' looks like an e-mail address"):
        ownerless.import_labels(_filled(ownerless, range(2), annotator=["carol", ALICE]))
    assert ownerless.import_labels(_filled(ownerless, range(2), annotator=["carol", None])) == 2
    assert ownerless.history()["annotator"].tolist() == ["carol", "import"]


def test_a_comparisons_import_follows_the_design_too(tmp_path):
    ws = Workspace(tmp_path / "ws")
    frame = pd.DataFrame({"model": ["A"] * N + ["B"] * N, "example_id": [f"q{i}" for i in range(N)] * 2,
                          "output": [f"x{i % 3}" for i in range(N)] + [f"x{i % 2}" for i in range(N)],
                          "target": [f"x{i % 3}" for i in range(N)] * 2})
    dataset = ws.add_dataset(frame.to_csv(index=False).encode(), "outputs").id
    campaign = Campaign.create(ws, dataset, models=["A", "B"], design="srs", budget=10, seed=2)
    late = _filled(campaign, [5, 12]).drop(columns="label").assign(**{"correct A": 1, "correct B": 0})
    with pytest.raises(EvalDataError) as refused:
        campaign.import_labels(late)
    said = str(refused.value)
    assert "line 2: the example" in said and "position 6 of the queue, but the example at position 1" in said
    assert "line 3: The example" in said and "position 13 of the queue, past the campaign's budget of 10" in said
    assert campaign.history().empty


# ------------------------------------------------------------------------------------------------ item 2
def test_every_text_typed_or_imported_is_bounded(tmp_path):
    ws = Workspace(tmp_path / "ws")
    dataset = _dataset(ws)
    with pytest.raises(EvalDataError, match="The campaign's name has 201 characters; it may have at most 200"):
        Campaign.create(ws, dataset, "m", "srs", budget=20, name="n" * 201)
    campaign = Campaign.create(ws, dataset, "m", "srs", budget=20, overlap=2, name="n" * 200)
    first = campaign.next("ann")
    with pytest.raises(EvalDataError, match="The note has 10,001 characters; it may have at most 10,000: shorten "
                                            "it .nothing was recorded.. The bound is EVALCORE_MAX_NOTE_CHARS"):
        campaign.record(first, "ann", 1, note="x" * 10_001)
    with pytest.raises(EvalDataError, match="The annotator's name has 201 characters; it may have at most 200"):
        campaign.next("a" * 201)
    with pytest.raises(EvalDataError, match="The annotator's name has 5,000,000 characters"):
        author("b" * 5_000_000)
    campaign.record(first, "ann", 1, note="x" * 10_000)  # the bound itself
    campaign.next("bea")
    campaign.record(first, "bea", 0)
    with pytest.raises(EvalDataError, match="The note has 50,000,000 characters"):
        campaign.adjudicate(first, 1, "ann", note="y" * 50_000_000)
    with pytest.raises(EvalDataError, match="line 2: The annotator's name has 201 characters"):
        campaign.import_labels(_filled(campaign, [1], annotator="c" * 201))
    assert campaign.history()["note"].str.len().fillna(0).max() == 10_000 and campaign.adjudications().empty
