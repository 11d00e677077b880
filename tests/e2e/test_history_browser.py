"""The History page in a real browser (issue 40): a series built from the command line as CI builds it, opened from
its address (``/history?series=NAME``); the answer names the latest run and its last flagged change, the chart
draws one point per run, and a click on the flagged run's point opens its comparison with its baseline.

Known answers: the runs of :func:`crafted.series_runs` (four runs of one model on 1,200 examples, run3 losing
a fifth of its right answers on math); against the previous run, run3 is flagged worse on math and overall.
"""

from __future__ import annotations

import os
import re
import time
import urllib.parse
from pathlib import Path

import pytest
from playwright.sync_api import expect

from benchmarks.server import app_command, streamlit_server
from conftest import SCREENSHOTS, VIEWPORT
from crafted import evalcore, write_series_runs
from e2e_helpers import ANSWER, PLOTLY, wait_idle

pytestmark = pytest.mark.e2e
SERIES = "bot / nightly"


def test_a_series_from_ci_opens_from_its_address_and_a_click_compares_a_run(browser, tmp_path: Path):
    paths = write_series_runs(tmp_path)
    for i, path in enumerate(paths):
        out = evalcore("workspace", "add", str(path), "--name", f"nightly-{i}", "--series", SERIES, "--time",
                       f"2026-11-1{i}T02:00:00Z", "--workspace", str(tmp_path / "ws"), cwd=tmp_path)
        assert out.returncode == 0, out.stderr
    env = {**os.environ, "EVALCORE_WORKSPACE": str(tmp_path / "ws")}
    log = SCREENSHOTS / f"history-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}-{time.time_ns()}.log"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with streamlit_server(app_command, env=env, log_path=log) as server:
        context = browser.new_context(viewport=VIEWPORT, base_url=server.url)
        context.set_default_timeout(60_000)
        page = context.new_page()
        try:
            page.goto(f"/history?series={urllib.parse.quote(SERIES)}")
            expect(page.locator("h1").first).to_have_text("History")
            wait_idle(page)
            answer = page.locator(ANSWER).first
            expect(answer).to_contain_text("bot's accuracy in the latest of 4 runs, nightly-3 (2026-11-13), is ")
            expect(answer).to_contain_text(re.compile("the last change flagged came with it:\u2060? worse by"))  # joiner
            expect(answer).to_contain_text("on task=math against nightly-2 (paired)")
            chart = page.locator(PLOTLY).first
            points = chart.locator(".scatterlayer .trace .points path")
            expect(points).to_have_count(5)  # the 4 runs, and the ring around the reference (the first accepted run)
            red = chart.locator(".scatterlayer .trace .points path[style*='rgb(197, 48, 48)']")
            expect(red).to_have_count(1)  # run3: a change flagged worse
            # the flagged run's comparison opens below; a click on nightly-1's point (the second blue one) opens its
            expect(page.locator("[data-testid='stMarkdown']", has_text="nightly-3 is worse than nightly-2")).to_have_count(1)
            expect(page.get_by_text("this comparison could see changes of").first).to_be_visible()
            chart.locator(".scatterlayer .trace .points path[style*='rgb(43, 108, 176)']").nth(1).click(force=True)
            wait_idle(page)
            expect(page.locator("[data-testid='stMarkdown']", has_text=re.compile(
                r"nightly-1 (is better than|is worse than|scores the same as) nightly-0"))).to_have_count(1)
            page.screenshot(path=str(SCREENSHOTS / "history-series.png"), full_page=True)
        finally:
            context.close()
