"""The Compare page (issue 28) in a real browser: two tools' logs uploaded together, the verdict sentence first, and
the text of an example where the two models differ, shown as text.

Known answers from the two Inspect AI logs of ARC-Easy (../shared/data/ecosystem/inspect_ai): claude-sonnet-4-0
answered examples 1-5, all right; qwen2.5:0.5b examples 1-3, right on 1 only. Shared examples: 1, 2, 3. The default
base is the better model (sonnet, 3/3 on the shared examples), new is qwen (1/3): worse by 2/3 = 66.7 points;
examples 2 and 3 are "only base right", example 2 (the mold spores question) first.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

if os.environ.get("CI") != "true":  # in CI a missing playwright must be a loud collection error
    pytest.importorskip("playwright.sync_api", reason="playwright not installed: browser tests skipped "
                                                      "(pip install -r requirements-test.txt)")
from playwright.sync_api import Page, expect  # noqa: E402

from e2e_helpers import (ANSWER, ERROR_ALERT, UPLOADER, goto_page, inspect_arc_logs, open_app, screenshot,  # noqa: E402
                         wait_idle)

pytestmark = pytest.mark.e2e

QUESTION = "Which piece of safety equipment is used to keep mold spores from entering the respiratory system?"


def test_two_inspect_logs_compared_with_the_verdict_and_the_differing_example(page: Page, shared_data: Path):
    files = inspect_arc_logs(shared_data)
    open_app(page)
    page.locator(UPLOADER).set_input_files([str(f) for f in files])
    wait_idle(page)
    expect(page.locator("[data-testid='stAlertContentSuccess']").first).to_contain_text("2 models")
    goto_page(page, "Compare")
    answer = page.locator(ANSWER).first
    # names are shown literally: a word joiner (U+2060) follows each ':' so that no shortcode can start
    expect(answer).to_contain_text(re.compile(
        r"ollama/qwen2\.5:\u2060?0\.5b is worse than anthropic/claude-sonnet-4-0 by 66\.7 points"))
    expect(answer).to_contain_text("3 shared examples")
    expect(page.locator(ERROR_ALERT)).to_have_count(0)
    texts = page.locator("[data-testid='stText']")
    expect(texts.filter(has_text=QUESTION)).to_have_count(1)  # the input of example 2, as text
    expect(texts.filter(has_text=re.compile(r"^ANSWER:D"))).to_have_count(1)  # qwen's output: Markdown-free
    expect(texts.filter(has_text=re.compile(r"^ANSWER: B$"))).to_have_count(1)  # sonnet's output
    screenshot(page, "compare-inspect-arc")


def test_promptfoo_export_compared_without_an_error(page: Page, shared_data: Path):
    """promptfoo's sample export: two models, two riddles, both wrong on both (correct 0): the same score, and
    the riddles' text readable in the browser."""
    export = shared_data / "ecosystem" / "promptfoo" / "sample-export.json"
    if not export.is_file():
        pytest.skip("the promptfoo sample export is not in ../shared/data/ecosystem")
    page.goto("/")
    expect(page.locator("h1").first).to_have_text("Data")
    wait_idle(page)
    page.locator("[data-testid='stFileUploader'] input[type=file]").set_input_files([str(export)])
    wait_idle(page)
    goto_page(page, "Compare")
    expect(page.locator(ANSWER).first).to_contain_text("scores the same as")
    expect(page.locator(ANSWER).first).to_contain_text("2 shared examples")
    expect(page.locator(ERROR_ALERT)).to_have_count(0)
    answer = page.locator("[data-testid='stText']").filter(has_text=re.compile(r"^An echo\.$"))
    expect(answer).to_have_count(1)  # gpt-5's output (the base: tied at 0, first by name)


def test_two_files_of_one_model_are_two_runs_with_the_verdict_above_the_settings(page: Page, tmp_path: Path):
    """base.csv (right on 3 of 4 examples) and new.csv (1 of 4) of one model m, chosen together (issue 37): two runs
    named after the files, base the first; new is worse by 50 points (4 shared examples), and the sentence sits
    above the settings."""
    files = []
    for name, right in (("base.csv", "1,1,1,0"), ("new.csv", "1,0,0,0")):
        path = tmp_path / name
        path.write_text("model,example_id,correct\n" + "".join(f"m,{i},{c}\n" for i, c in enumerate(right.split(","))))
        files.append(str(path))
    open_app(page)
    page.locator(UPLOADER).set_input_files(files)
    wait_idle(page)
    expect(page.locator(ERROR_ALERT)).to_have_count(0)
    goto_page(page, "Compare")
    answer = page.locator(ANSWER).first
    expect(answer).to_contain_text("new is worse than base by 50.0 points")
    expect(answer).to_contain_text("4 shared examples")
    base = page.get_by_text("Base (the reference)", exact=True).first
    assert answer.bounding_box()["y"] < base.bounding_box()["y"]
    screenshot(page, "compare-two-runs")
