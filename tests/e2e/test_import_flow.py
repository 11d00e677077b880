"""Logs of evaluation tools through the real uploader: several files at once, recognised and combined."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

if os.environ.get("CI") != "true":  # in CI a missing playwright must be a loud collection error
    pytest.importorskip("playwright.sync_api", reason="playwright not installed: browser tests skipped "
                                                      "(pip install -r requirements-test.txt)")
from playwright.sync_api import Page, expect  # noqa: E402

from e2e_helpers import (SIDEBAR, UPLOADER, expect_charts, goto_page, inspect_arc_logs, open_app, screenshot,  # noqa: E402
                         wait_idle)

pytestmark = pytest.mark.e2e


def test_two_inspect_logs_uploaded_together_become_one_two_model_log(page: Page, shared_data: Path):
    """The two Inspect AI JSON logs of ARC (two models) chosen together in the file dialog: one log, two models,
    the tool named in the report, the Models page comparing them."""
    files = inspect_arc_logs(shared_data)
    open_app(page)
    page.locator(UPLOADER).set_input_files([str(f) for f in files])
    expect(page.get_by_text("Columns of 2 files")).to_be_visible()
    wait_idle(page)
    success = page.locator("[data-testid='stAlertContentSuccess']").first
    expect(success).to_contain_text(re.compile(r"upload · 2 files: a log table with [\d,]+ rows and 2 models"))
    expect(page.get_by_text(re.compile(r"Read Inspect AI \(2 files\)"))).to_be_visible()
    screenshot(page, "import-inspect-data")
    goto_page(page, "Models")
    expect(page.locator(SIDEBAR)).to_contain_text("2 model(s)")
    expect_charts(page, 1)
    screenshot(page, "import-inspect-models")
