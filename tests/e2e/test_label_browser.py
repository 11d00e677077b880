"""Two signed-in team members in two browsers label one campaign to its stop rule on the Label page, with the
keyboard; no example is labeled twice, and the estimate they see equals an independent Horvitz-Thompson computation
from the stored labels and inclusion probabilities (a real OpenID Connect provider on loopback)."""

from __future__ import annotations

import re
import statistics
import time

import numpy as np
import pandas as pd
import pytest
from playwright.sync_api import expect

from e2e_helpers import open_label, shown_example, wait_idle
from evalcore.labeling.campaign import Campaign
from evalcore.workspace import Workspace
from test_team_instance import team_secrets
from test_workspace_flow import dashboard, provider, sign_in  # noqa: F401 - provider is a fixture

pytestmark = pytest.mark.slow
ALICE, BOB = "alice@team.example", "bob@team.example"
N = 300
EXAMPLE = "[data-testid='stMain'] h3"  # the answer, then "Example <id>"


def test_two_members_label_one_campaign_to_its_stop_rule(browser, tmp_path, provider):
    rng = np.random.default_rng(0)
    truth = {f"q{i}": int(rng.random() < 0.8) for i in range(N)}
    frame = pd.DataFrame({"model": "m", "example_id": list(truth), "correct": np.nan,
                          "confidence": rng.uniform(0.5, 1.0, N).round(3),
                          "question": [f"Question {i}?" for i in range(N)], "response": [f"{i}" for i in range(N)]})
    ws = Workspace(tmp_path / "ws")
    dataset = ws.add_dataset(frame.to_csv(index=False).encode(), "to label", owner=ALICE, shared=True)
    campaign = Campaign.create(ws, dataset.id, "m", "srs", target=0.1, owner=ALICE, shared=True, seed=2)
    with dashboard(tmp_path / "ws", home=tmp_path / "home", secrets=team_secrets(provider)) as server:
        pages = []
        for member in (ALICE, BOB):
            context, page = sign_in(browser, server.url, member)
            open_label(page, f"campaign={campaign.id}")
            pages.append(page)
        seen, clicks = [], []
        for step in range(N):
            page = pages[step % 2]
            if page.get_by_text("You can stop").count():
                break
            example = shown_example(page)
            assert example is not None, page.locator("[data-testid='stMain']").inner_text()[:2000]
            if example in seen:  # the other member's label came in since this page drew: it shows a new one
                page.reload()
                wait_idle(page)
                example = shown_example(page)
            assert example not in seen, f"{example} was handed out twice"
            seen.append(example)
            start = time.perf_counter()
            page.keyboard.press("y" if truth[example] else "n")
            expect(page.locator(EXAMPLE).filter(has_text=re.compile("^Example "))).not_to_have_text(
                f"Example {example}")
            clicks.append(time.perf_counter() - start)
            wait_idle(page)
        else:
            pytest.fail("the stop rule never fired")
        page.reload()  # the answer as of every label given (the other member's last one included)
        wait_idle(page)
        answer = page.locator(EXAMPLE).first.inner_text()
    table = campaign.export()
    labeled = table[table["label"].notna()]
    assert sorted(labeled["example_id"]) == sorted(seen)
    assert set(campaign.current_labels()["annotator"]) == {ALICE, BOB}
    assert all(labeled.set_index("example_id")["label"] == pd.Series(truth)[labeled["example_id"]].to_numpy())
    ht = float((labeled["label"] / labeled["inclusion_probability"]).sum()) / N
    estimate = campaign.estimate()
    assert estimate.stop and estimate.estimate == pytest.approx(ht)
    assert f"{ht:.3f}" in answer and f"{estimate.ci_low:.3f}" in answer and f"{estimate.ci_high:.3f}" in answer
    print(f"{len(seen)} labels; click to next example: median {statistics.median(clicks):.2f} s, "
          f"p95 {np.quantile(clicks, 0.95):.2f} s")
