"""First render of each dashboard page in Debian's chromium, driven by playwright (never a downloaded browser)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]
#: URL path of each page (as streamlit derives it from pages/<name>.py; "" is the default page, Data).
PAGES = {"data": "", "models": "models", "calibration": "calibration", "subgroups": "subgroups"}
RENDER_TIMEOUT_MS = 120_000

# The page is rendered when the script run has finished *and* its main content is visible: the run state alone
# also reads "notRunning" between the first paint and the start of the run.
_RENDERED = """
(page) => {
  const app = document.querySelector("[data-testid='stApp']");
  if (!app || app.getAttribute("data-test-script-state") !== "notRunning") return false;
  const visible = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  const outsideExpanders = (el) => el.closest("[data-testid='stExpander']") === null;
  if (page === "data") {
    // the validation report of the demo: its success message and the preview table
    const report = [...document.querySelectorAll("[data-testid='stAlertContainer']")]
      .some((el) => visible(el) && el.textContent.includes("rows and"));
    const tables = [...document.querySelectorAll("[data-testid='stDataFrame']")]
      .filter((el) => visible(el) && outsideExpanders(el));
    return report && tables.length > 0;
  }
  return [...document.querySelectorAll("[data-testid='stPlotlyChart'] .main-svg")].some(visible);
}
"""


def chromium_available() -> bool:
    return CHROMIUM.exists()


@contextlib.contextmanager
def chromium() -> Iterator[object]:
    """A headless chromium (``/usr/bin/chromium``) launched through playwright."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


def time_first_render(browser, base_url: str, page: str) -> float:
    """Seconds from ``goto`` until ``page`` is rendered with its main content, in a fresh browser context."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        tab = context.new_page()
        start = time.perf_counter()
        tab.goto(f"{base_url}/{PAGES[page]}", wait_until="commit", timeout=RENDER_TIMEOUT_MS)
        tab.wait_for_function(_RENDERED, arg=page, timeout=RENDER_TIMEOUT_MS, polling=50)
        return time.perf_counter() - start
    finally:
        context.close()


def time_page_switch(browser, base_url: str, page: str) -> float:
    """Seconds from clicking ``page``'s sidebar link until it is rendered, after opening the Data page in the same
    browser context: how the dashboard feels in use (the browser has loaded Streamlit's scripts once)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        tab = context.new_page()
        tab.goto(base_url, wait_until="commit", timeout=RENDER_TIMEOUT_MS)
        tab.wait_for_function(_RENDERED, arg="data", timeout=RENDER_TIMEOUT_MS, polling=50)
        link = tab.locator(f"[data-testid='stSidebarNav'] a[href$='/{PAGES[page]}']")
        start = time.perf_counter()
        link.click()
        tab.wait_for_url(f"**/{PAGES[page]}", timeout=RENDER_TIMEOUT_MS)
        tab.wait_for_function(_RENDERED, arg=page, timeout=RENDER_TIMEOUT_MS, polling=50)
        return time.perf_counter() - start
    finally:
        context.close()
