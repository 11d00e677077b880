"""The one-model Inspect AI log in the browser (issue 26): the Leaderboard and Subgroups pages explain what one model
can show, with its numbers, and show no red error; the 90% level chosen in the sidebar is the level both pages
state."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

if os.environ.get("CI") != "true":  # in CI a missing playwright must be a loud collection error
    pytest.importorskip("playwright.sync_api", reason="playwright not installed: browser tests skipped "
                                                      "(pip install -r requirements-test.txt)")
from playwright.sync_api import Page, expect  # noqa: E402

from e2e_helpers import (ANSWER, ERROR_ALERT, EXCEPTION, LEVEL_SLIDER, PLOTLY, SIDEBAR, UPLOADER, goto_page,  # noqa: E402
                         screenshot, wait_idle)

pytestmark = pytest.mark.e2e

CAPTIONS = "[data-testid='stMain'] [data-testid='stCaptionContainer']"
INFO = "[data-testid='stAlertContentInfo']"
#: one model (openai/gpt-4o-mini), one task (popularity), 10 samples of which 8 are right (the header's accuracy 0.8)
ONE_MODEL = "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval"
#: literal() puts an invisible word joiner after a colon
SOLO = r"openai/gpt-4o-mini:\u2060? "


def no_error(page: Page) -> None:
    expect(page.locator(EXCEPTION)).to_have_count(0)
    expect(page.locator(ERROR_ALERT)).to_have_count(0)


def test_a_one_model_inspect_log_on_leaderboard_and_subgroups_at_the_sidebar_level(page: Page, shared_data: Path):
    path = shared_data / "ecosystem" / "inspect_ai" / ONE_MODEL
    if not path.is_file():
        pytest.skip("the one-model Inspect AI log is not in ../shared/data/ecosystem/inspect_ai")
    page.goto("/")
    expect(page.locator("h1").first).to_have_text("Data")
    wait_idle(page)
    page.locator(UPLOADER).set_input_files(str(path))
    wait_idle(page)
    expect(page.locator(SIDEBAR)).to_contain_text(f"Data: upload · {ONE_MODEL}")
    expect(page.locator(SIDEBAR)).to_contain_text("1 model(s)")

    # Wilson 95% interval of 8 of 10: 0.490-0.943 (hand-computed: (8 + z²/2 -/+ z sqrt(8*2/10 + z²/4)) / (10 + z²))
    goto_page(page, "Leaderboard")
    no_error(page)
    expect(page.locator(ANSWER).first).to_have_text(
        re.compile(SOLO + r"overall accuracy 0\.800 \(95% interval 0\.490–0\.943\)\."))
    expect(page.locator(INFO).first).to_contain_text("needs at least two models")
    expect(page.locator(PLOTLY)).to_have_count(1)  # its accuracy per task
    screenshot(page, "one-model-leaderboard")

    goto_page(page, "Subgroups")
    no_error(page)
    expect(page.locator(INFO).first).to_contain_text("The selection has a single group")
    expect(page.locator(ANSWER).first).to_have_text(
        re.compile(SOLO + r"accuracy 0\.800 \(95% interval 0\.490–0\.943\) in its single subgroup, all\."))

    slider = page.locator(LEVEL_SLIDER)
    slider.focus()
    page.keyboard.press("ArrowLeft")  # 95% -> 90% (the levels are 80%, 83.4%, 90%, 95%, 99%)
    wait_idle(page)
    expect(page.locator(SIDEBAR)).to_contain_text("level 90%")
    # Wilson 90% interval of 8 of 10: 0.541-0.931
    no_error(page)
    expect(page.locator(ANSWER).first).to_contain_text("(90% interval 0.541–0.931)")
    expect(page.locator(CAPTIONS).filter(has_text="90% Wilson interval")).to_have_count(1)
    expect(page.locator(CAPTIONS).filter(has_text="95%")).to_have_count(0)
    screenshot(page, "one-model-subgroups-90")

    goto_page(page, "Leaderboard")
    no_error(page)
    expect(page.locator(ANSWER).first).to_contain_text("overall accuracy 0.800 (90% interval 0.541–0.931)")
    expect(page.locator(CAPTIONS).filter(has_text="90% Wilson interval")).to_have_count(1)
    expect(page.locator(CAPTIONS).filter(has_text="95%")).to_have_count(0)
