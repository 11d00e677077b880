"""Helpers for the browser tests (imported by the test modules of this folder)."""

from __future__ import annotations

import re
from pathlib import Path

from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"
IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"
EXCEPTION = "[data-testid='stException']"
PLOTLY = "[data-testid='stPlotlyChart']"
ERROR_ALERT = "[data-testid='stAlertContentError']"
SIDEBAR = "[data-testid='stSidebar']"
NAV_LINK = "[data-testid='stSidebarNav'] a"
UPLOADER = "[data-testid='stFileUploader'] input[type=file]"
ANSWER = "[data-testid='stMain'] h3"  # the page's one-sentence answer, first under its title
LEVEL_SLIDER = f"{SIDEBAR} [data-testid='stSlider'] input[type='range']"
RERUN_START_MS = 300   # lets a rerun triggered by the last interaction start before waiting for the idle state
IDLE_TIMEOUT_MS = 120_000


def wait_idle(page: Page) -> None:
    """Wait until the script run triggered by the last interaction has finished, then require no exception."""
    page.wait_for_timeout(RERUN_START_MS)
    page.wait_for_selector(IDLE, state="attached", timeout=IDLE_TIMEOUT_MS)
    exceptions = page.locator(EXCEPTION)
    if exceptions.count():
        text = "\n---\n".join(exceptions.all_inner_texts())
        raise AssertionError(f"the app shows {exceptions.count()} exception(s) on {page.url}:\n{text}")


def shown_example(page: Page) -> str | None:
    """The id of the example the Label page shows (its heading "Example <id>", under the answer); None if none."""
    for text in page.locator(ANSWER).all_inner_texts():
        if text.startswith("Example "):
            return text.removeprefix("Example ").strip().replace("\u2060", "")
    return None


def open_label(page: Page, query: str) -> None:
    """Open the Label page at ``/label?<query>`` (e.g. ``campaign=ID``) and wait until it has rendered."""
    page.goto(f"/label?{query}")
    wait_idle(page)
    expect(page.locator("h1", has_text="Label")).to_be_visible()


def open_app(page: Page) -> None:
    """Open the dashboard on its Data page and wait until it has rendered."""
    page.goto("/")
    expect(page.locator("h1").first).to_have_text("Data")
    wait_idle(page)


def inspect_arc_logs(shared_data) -> list:
    """The two Inspect AI logs of ARC (two models, shared examples with text) in ../shared/data/ecosystem; the test
    is skipped where they are missing."""
    import pytest

    folder = shared_data / "ecosystem" / "inspect_ai"
    files = [folder / "data_arc_qwen.json", folder / "data_arc_sonnet.json"]
    if not all(f.is_file() for f in files):
        pytest.skip("the Inspect AI sample logs are not in ../shared/data/ecosystem")
    return files


def load_demo(page: Page, label: str) -> None:
    """Pick the demo whose description contains ``label`` on the Data page and load it."""
    page.get_by_role("combobox").first.click()  # the demo picker
    page.get_by_role("option", name=re.compile(label)).click()
    page.get_by_role("button", name="Load demo").click()
    wait_idle(page)


def goto_page(page: Page, title: str) -> None:
    """Open a page through the sidebar navigation and wait until it has rendered."""
    page.locator(NAV_LINK, has_text=title).click()
    expect(page.locator("h1").first).to_have_text(title)
    wait_idle(page)


def expect_charts(page: Page, minimum: int = 1) -> int:
    """At least ``minimum`` plotly charts drawn on the page; returns how many."""
    expect(page.locator(PLOTLY).first).to_be_visible()
    expect(page.locator(".js-plotly-plot").first).to_be_visible()
    try:  # the page's later charts may still be mounting after the first one shows
        page.wait_for_function(f"() => document.querySelectorAll(\"{PLOTLY}\").length >= {minimum}",
                               timeout=10_000)
    except PlaywrightTimeout:
        pass  # the assertion below names the count found
    n = page.locator(PLOTLY).count()
    assert n >= minimum, f"expected at least {minimum} plotly chart(s) on {page.url}, found {n}"
    return n


def screenshot(page: Page, name: str) -> Path:
    """Full-page screenshot to screenshots/<name>.png.

    Streamlit scrolls inside its main container, not the document, so the viewport is stretched to the
    content's height for the shot and restored afterwards.
    """
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    size = page.viewport_size or {"width": 1400, "height": 1000}
    height = page.evaluate(
        "() => Math.max(document.documentElement.scrollHeight,"
        " ...[...document.querySelectorAll(\"[data-testid='stMain'], [data-testid='stSidebarContent']\")]"
        ".map(e => e.scrollHeight))")
    page.set_viewport_size({"width": size["width"], "height": max(size["height"], min(int(height) + 40, 12_000))})
    try:
        page.screenshot(path=str(path), full_page=True, animations="disabled")
    finally:
        page.set_viewport_size(size)
    return path


def download_bytes(page: Page, label: str) -> bytes:
    """The bytes of the download whose button says ``label``."""
    with page.expect_download() as info:
        page.get_by_role("button", name=label).click()
    return Path(info.value.path()).read_bytes()
