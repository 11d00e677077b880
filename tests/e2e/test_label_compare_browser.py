"""Two annotators in two browsers label one comparison campaign (issue 48) to its stop on the Label page, with the
keyboard: each reads which output is right (the models' names from the page's closed section), presses its number;
they never get the same example, and the answer read on the page is the campaign's (an instance without sign-in,
each annotator's name in the page's address)."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from playwright.sync_api import expect

from e2e_helpers import open_label, screenshot, shown_example, wait_idle
from evalcore.labeling import Campaign
from evalcore.labeling.comparison import comparison_sentence
from evalcore.workspace import Workspace
from test_workspace_flow import dashboard, new_page

pytestmark = pytest.mark.slow
N = 60
HEADINGS = "[data-testid='stMain'] h3"  # the answer, then "Example <id>"
NAMED = re.compile(r"^Output (\d+): (.+)$")


def _log() -> tuple[pd.DataFrame, dict[str, str]]:
    """Class outputs: A is always right; B gives another class on half of the examples."""
    rows, truth = [], {}
    for i in range(N):
        right = ["cat", "dog", "bird"][i % 3]
        truth[f"q{i}"] = right
        rows += [{"model": "A", "example_id": f"q{i}", "input": f"Picture {i}: which animal?", "output": right},
                 {"model": "B", "example_id": f"q{i}", "input": f"Picture {i}: which animal?",
                  "output": "fish" if i % 2 else right}]
    return pd.DataFrame(rows), truth


def _named(page) -> dict[int, list[str]]:
    """Output number -> its models, read in the section "Which model gave which output" (opened where closed)."""
    lines = page.locator("[data-testid='stExpander'] [data-testid='stText']").filter(has_text=NAMED)
    if not lines.first.is_visible():
        page.get_by_text("Which model gave which output").click()
        expect(lines.first).to_be_visible()
    found = {}
    for text in lines.all_inner_texts():
        match = NAMED.match(text.strip())
        found[int(match[1])] = match[2].split(", ")
    return found


def test_two_annotators_label_a_comparison_to_its_stop(browser, tmp_path):
    frame, truth = _log()
    ws = Workspace(tmp_path / "ws")
    dataset = ws.add_dataset(frame.to_csv(index=False).encode(), "outputs").id
    campaign = Campaign.create(ws, dataset, models=["A", "B"], decide=True, seed=4)
    with dashboard(tmp_path / "ws") as server:
        pages = []
        for name in ("alice", "bob"):
            _, page = new_page(browser, server.url)
            open_label(page, f"campaign={campaign.id}&annotator={name}")
            pages.append(page)
        seen = []
        for step in range(N):
            page = pages[step % 2]
            if page.get_by_text("You can stop").count():
                break
            example = shown_example(page)
            assert example is not None, page.locator("[data-testid='stMain']").inner_text()[:2000]
            assert example not in seen, f"{example} was handed out twice"
            seen.append(example)
            outputs = campaign.outputs(example)
            [right] = [k for k, models in _named(page).items() if outputs[models[0]] == truth[example]]
            page.keyboard.press(str(right))
            expect(page.locator(HEADINGS).filter(has_text=re.compile("^Example "))).not_to_have_text(
                f"Example {example}")
            wait_idle(page)
        else:
            pytest.fail("the stop rule never fired")
        page.reload()  # the answer as of every label given (the other annotator's last one included)
        wait_idle(page)
        answer = page.locator(HEADINGS).first.inner_text().replace("\u2060", "")
        _named(page)  # the models' names shown, for the screenshot
        screenshot(page, "label-comparison-decided")
    history = campaign.history()
    assert sorted(history["example_id"]) == sorted(seen) and set(history["annotator"]) == {"alice", "bob"}
    assert history["answer"].tolist() == [truth[e] for e in history["example_id"]]
    estimate = campaign.estimate()
    assert estimate.stop and estimate.decided == "A"
    assert answer == comparison_sentence(campaign.info, estimate)
    assert answer.startswith("A is better than B by ") and f"decided after {len(seen)} labels" in answer
