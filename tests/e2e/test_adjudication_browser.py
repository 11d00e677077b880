"""Two signed-in team members label one campaign with overlap 2 in two browsers and disagree on some examples; the
owner clears the adjudication queue on the Label page, and the estimate then uses the settled values (issue 47:
"two annotators with overlap 2 produce an adjudication queue that the owner clears in the browser"; a real OpenID
Connect provider on loopback)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from playwright.sync_api import expect

from e2e_helpers import open_label, shown_example, wait_idle
from evalcore.labeling.campaign import Campaign
from evalcore.workspace import Workspace
from test_label_browser import EXAMPLE
from test_team_instance import team_secrets
from test_workspace_flow import dashboard, provider, sign_in  # noqa: F401 - provider is a fixture

pytestmark = pytest.mark.slow
ALICE, BOB = "alice@team.example", "bob@team.example"
BUDGET = 6


def _label_all(page, value_of) -> list[str]:
    """Label every example the queue hands this member, with the keyboard; the ids labeled."""
    done = []
    while not page.get_by_text("The queue is done for you").count():
        example = shown_example(page)
        assert example is not None, page.locator("[data-testid='stMain']").inner_text()[:2000]
        page.keyboard.press("y" if value_of(example) else "n")
        expect(page.locator(EXAMPLE).filter(has_text=re.compile(f"^Example {example}$"))).to_have_count(0)
        wait_idle(page)
        done.append(example)
        assert len(done) <= BUDGET
    return done


def test_the_owner_clears_the_adjudication_queue_in_the_browser(browser, tmp_path, provider):
    rng = np.random.default_rng(1)
    n = 40
    frame = pd.DataFrame({"model": "m", "example_id": [f"q{i}" for i in range(n)], "correct": np.nan,
                          "confidence": rng.uniform(0.5, 1.0, n).round(3),
                          "question": [f"Question {i}?" for i in range(n)], "response": [f"{i}" for i in range(n)]})
    ws = Workspace(tmp_path / "ws")
    dataset = ws.add_dataset(frame.to_csv(index=False).encode(), "to label", owner=ALICE, shared=True)
    campaign = Campaign.create(ws, dataset.id, "m", "srs", budget=BUDGET, owner=ALICE, shared=True, overlap=2, seed=3)
    with dashboard(tmp_path / "ws", home=tmp_path / "home", secrets=team_secrets(provider)) as server:
        pages = {}
        for member in (ALICE, BOB):
            _, page = sign_in(browser, server.url, member)
            open_label(page, f"campaign={campaign.id}")
            pages[member] = page
        alice = _label_all(pages[ALICE], lambda e: True)
        bob = _label_all(pages[BOB], lambda e: int(e[1:]) % 2 == 1)  # bob: right only on odd ids
        assert sorted(alice) == sorted(bob)  # overlap 2: each example labeled by both
        disputed = sorted(e for e in alice if int(e[1:]) % 2 == 0)
        assert disputed, "the seed gives at least one even id"
        assert sorted(campaign.pending()["example_id"].unique()) == disputed
        page = pages[ALICE]
        page.reload()
        wait_idle(page)
        expect(page.get_by_text(f"Adjudication queue ({len(disputed)} pending)")).to_be_visible()
        for left in range(len(disputed), 0, -1):
            settled = page.locator("[data-testid='stRadio']", has_text="Settled label").first
            settled.get_by_text("incorrect", exact=True).click()  # the first pending example's settled label
            wait_idle(page)
            page.get_by_role("button", name="Settle").first.click()
            wait_idle(page)
            expect(page.get_by_text(f"Adjudication queue ({left - 1} pending)")).to_be_visible()
        answer = page.locator(EXAMPLE).first.inner_text()
    assert campaign.pending().empty
    table = campaign.export().set_index("example_id")
    assert (table.loc[disputed, "status"] == "adjudicated").all() and (table.loc[disputed, "label"] == 0).all()
    estimate = campaign.estimate()
    assert estimate.pending == 0 and estimate.labels == BUDGET
    assert estimate.estimate == pytest.approx(1 - len(disputed) / BUDGET)  # the settled values, never averages
    assert "await adjudication" not in answer
