"""Browser tests: a live `streamlit run app.py` server driven by Debian's chromium through Playwright.

Fixtures
- ``app_url``  (session): starts the dashboard on a free port, waits for ``/_stcore/health``, yields its base
  URL, then terminates the server's whole process group. Its log goes to ``screenshots/streamlit-<worker>.log``.
- ``browser``  (session): chromium at /usr/bin/chromium (never a downloaded browser).
- ``page``     (function): a fresh browser context (so a fresh Streamlit session) per test; on failure a
  screenshot ``screenshots/FAILED-<test>.png`` is saved.

When /usr/bin/chromium is absent the tests are skipped, except in CI (``CI=true``), where that is a failure:
CI installs chromium with tests/ensure_chromium.sh.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchmarks.browser import CHROMIUM_ARGS
from benchmarks.server import streamlit_server

E2E_DIR = Path(__file__).resolve().parent
ROOT = E2E_DIR.parents[1]
SCREENSHOTS = E2E_DIR / "screenshots"
CHROMIUM = "/usr/bin/chromium"
HEALTH_TIMEOUT_S = 90
VIEWPORT = {"width": 1400, "height": 1000}


# --------------------------------------------------------------------------------------------- marking / skipping

def pytest_collection_modifyitems(config, items):
    """Every test in this folder is an ``e2e`` test (conftest hooks see the whole session: filter by path)."""
    for item in items:
        if E2E_DIR in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.e2e)


def require_chromium() -> None:
    """Skip (or, in CI, fail) when Debian's chromium or the playwright package is missing."""
    in_ci = os.environ.get("CI") == "true"
    if not os.path.exists(CHROMIUM):
        if in_ci:
            pytest.fail(f"CI=true but chromium is missing at {CHROMIUM}: the browser tests cannot run. "
                        "tests/ensure_chromium.sh should have installed it (apt-get install chromium).",
                        pytrace=False)
        pytest.skip(f"chromium not found at {CHROMIUM}: browser tests skipped (apt-get install chromium to run them)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as exc:
        if in_ci:
            pytest.fail(f"CI=true but the playwright package is not importable: {exc}", pytrace=False)
        pytest.skip(f"playwright not installed ({exc}): browser tests skipped (pip install -r requirements-test.txt)")


# --------------------------------------------------------------------------------------------- the server

@pytest.fixture(scope="session")
def app_url():
    """Base URL of a live dashboard started from the repository root with this interpreter's streamlit."""
    require_chromium()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    log_path = SCREENSHOTS / f"streamlit-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.log"
    try:
        server = streamlit_server(log_path=log_path, timeout=HEALTH_TIMEOUT_S)
        with server as running:
            yield running.url
    except RuntimeError as exc:
        pytest.fail(f"{exc}\n(log: {log_path})", pytrace=False)


# --------------------------------------------------------------------------------------------- the browser

@pytest.fixture(scope="session")
def playwright_instance():
    require_chromium()
    from playwright.sync_api import sync_playwright

    pw = sync_playwright().start()
    try:
        yield pw
    finally:
        pw.stop()


@pytest.fixture(scope="session")
def browser(playwright_instance):
    b = playwright_instance.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
    try:
        yield b
    finally:
        b.close()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


@pytest.fixture
def page(request, browser, app_url):
    """A page in a fresh context (a fresh Streamlit session); a screenshot is kept when the test fails."""
    from playwright.sync_api import expect

    expect.set_options(timeout=30_000)
    failure_shot = SCREENSHOTS / f"FAILED-{request.node.name}.png"
    failure_shot.unlink(missing_ok=True)  # a stale one from an earlier failing run would mislead
    context = browser.new_context(viewport=VIEWPORT, accept_downloads=True, base_url=app_url)
    context.set_default_timeout(30_000)
    pg = context.new_page()
    js_errors: list[str] = []
    pg.on("pageerror", lambda exc: js_errors.append(str(exc)))
    try:
        yield pg
    finally:
        rep = getattr(request.node, "rep_call", None)
        if rep is not None and rep.failed:
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            try:
                pg.screenshot(path=str(failure_shot), full_page=True)
            except Exception as exc:  # the screenshot is a debugging aid only
                print(f"could not save the failure screenshot: {exc}")
        if js_errors:
            print("uncaught JavaScript errors in the page:\n" + "\n".join(js_errors))
        context.close()
