"""No surprises in the browser: a reload (F5) keeps the upload and the level; two unrelated logs uploaded together get
a warning naming both files."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

if os.environ.get("CI") != "true":  # in CI a missing playwright must be a loud collection error
    pytest.importorskip("playwright.sync_api", reason="playwright not installed: browser tests skipped "
                                                      "(pip install -r requirements-test.txt)")
from playwright.sync_api import Page, expect  # noqa: E402

from e2e_helpers import (ANSWER, LEVEL_SLIDER, SIDEBAR, UPLOADER, goto_page, screenshot, wait_idle)  # noqa: E402

pytestmark = pytest.mark.e2e

CSV = "model,example_id,task,correct\n" + "".join(
    f"{m},q{i},arc,{(i + k) % 2}\n" for k, m in enumerate(["reload-alpha", "reload-beta"]) for i in range(6))


def open_data_page(page: Page) -> None:
    page.goto("/")
    expect(page.locator("h1").first).to_have_text("Data")
    wait_idle(page)


def test_a_reload_keeps_the_upload_and_the_level(page: Page, tmp_path: Path):
    path = tmp_path / "reload_run.csv"
    path.write_text(CSV)
    open_data_page(page)
    page.locator(UPLOADER).set_input_files(str(path))
    expect(page.get_by_text("Columns of reload_run.csv")).to_be_visible()
    wait_idle(page)
    sidebar = page.locator(SIDEBAR)
    expect(sidebar).to_contain_text("Data: upload · reload_run.csv")
    expect(sidebar).to_contain_text("level 95%")
    slider = page.locator(LEVEL_SLIDER)
    slider.focus()
    page.keyboard.press("ArrowLeft")  # 95% -> 90% (the levels are 80%, 83.4%, 90%, 95%, 99%)
    wait_idle(page)
    expect(sidebar).to_contain_text("level 90%")
    expect(page).to_have_url(re.compile(r"[?&]upload=[0-9a-f]{64}"))
    expect(page).to_have_url(re.compile(r"[?&]level=0\.9(&|$)"))

    page.reload()
    expect(page.locator("h1").first).to_have_text("Data")
    wait_idle(page)
    sidebar = page.locator(SIDEBAR)
    expect(sidebar).to_contain_text("Data: upload · reload_run.csv")
    expect(sidebar).to_contain_text("level 90%")
    expect(sidebar).not_to_contain_text("demo")
    expect(page.locator(LEVEL_SLIDER)).to_have_attribute("aria-valuetext", "90%")
    expect(page.get_by_text("Columns of reload_run.csv")).to_be_visible()
    # literal() puts an invisible word joiner after a colon (no Markdown emoji shortcode): the pattern allows it
    expect(page.locator(ANSWER).first).to_have_text(
        re.compile(r"reload_run\.csv:\u2060? 2 models, 1 task, 6 examples; 1 note\."))
    screenshot(page, "reload-keeps-upload")

    goto_page(page, "Models")  # a page switch keeps the address's data and level; a reload there stays there
    expect(page).to_have_url(re.compile(r"/models\?.*upload=[0-9a-f]{64}"))
    page.reload()
    expect(page.locator("h1").first).to_have_text("Models")
    wait_idle(page)
    expect(page.locator(SIDEBAR)).to_contain_text("Data: upload · reload_run.csv")
    expect(page.locator(SIDEBAR)).to_contain_text("level 90%")


def test_two_unrelated_logs_together_get_a_warning_naming_both(page: Page, tmp_path: Path):
    questions = tmp_path / "questions_bench.csv"
    questions.write_text("model,example_id,task,correct\nllm-a,q1,law,1\nllm-a,q2,law,0\nllm-b,q1,law,1\n"
                         "llm-b,q2,law,1\n")
    images = tmp_path / "images_bench.csv"
    images.write_text("model,example_id,task,correct\nresnet,img1.jpg,fish,1\nresnet,img2.jpg,fish,0\n"
                      "vit,img1.jpg,fish,1\nvit,img2.jpg,fish,1\n")
    open_data_page(page)
    page.locator(UPLOADER).set_input_files([str(questions), str(images)])
    expect(page.get_by_text("Columns of 2 files")).to_be_visible()
    wait_idle(page)
    warning = page.locator("[data-testid='stAlertContentWarning']", has_text="share no example and no task")
    expect(warning.first).to_be_visible()
    expect(warning.first).to_contain_text(re.compile(
        r"questions_bench\.csv and images_bench\.csv share no example and no task:\u2060? they are analysed as one log"))
    expect(warning.first).to_contain_text("Upload them separately if they are different benchmarks")
    expect(page.locator(ANSWER).first).to_contain_text("4 models, 2 tasks, 4 examples; 1 warning")
    screenshot(page, "unrelated-logs-warning")
