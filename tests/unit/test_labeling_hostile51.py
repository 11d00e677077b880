"""Labels and campaigns under hostile use (issue 51): nobody signed in opens no owned campaign, a typed name is an
author and never a member's address, labels follow the design (inside the budget, in the queue's order), and every
text a person types or imports is bounded."""

from __future__ import annotations

import pandas as pd
import pytest

from evalcore.errors import EvalDataError
from evalcore.labeling.campaign import Campaign, author
from evalcore.workspace import Workspace

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
