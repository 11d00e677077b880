"""The HTML report in chromium, offline: every request other than the file itself is blocked and recorded; the
charts must render with no console error and no blocked request (the report needs nothing from the network)."""

from __future__ import annotations

import pytest

from conftest import VIEWPORT
from evalcore.demo import synthetic as demo
from evalcore.data.validation import validate
from evalcore.report import build_report

HOSTILE = "</script><script>window.pwned=1</script><img src=x onerror=window.pwned=2>"


@pytest.fixture(scope="module")
def offline_browser(browser):
    """The session's chromium (one Playwright per test process: a second sync_playwright would clash)."""
    return browser


def open_offline(browser, path):
    """The report opened from disk with every non-file request aborted; (page, blocked, console errors)."""
    context = browser.new_context(viewport=VIEWPORT)
    blocked, errors = [], []

    def route(r):
        if r.request.url.startswith("file://"):
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    return context, page, blocked, errors


@pytest.mark.parametrize("which", ["log", "battles"])
def test_the_report_renders_offline_with_every_chart_and_no_request(offline_browser, tmp_path, which):
    if which == "log":
        frame = demo.synthetic_benchmark(seed=0).log
        frame["model"] = frame["model"].replace({"cirrus": HOSTILE})
    else:
        frame = demo.pairwise_battles(seed=0).battles
    report = build_report(validate(frame))
    path = tmp_path / "report.html"
    path.write_text(report.html(), encoding="utf-8")
    assert path.stat().st_size < 15 * 2**20
    context, page, blocked, errors = open_offline(offline_browser, path)
    try:
        expected = sum(len(s.figures) for s in report.sections)
        assert expected > 0
        page.wait_for_function(f"document.querySelectorAll('.js-plotly-plot .main-svg').length >= {expected}",
                               timeout=60_000)
        assert page.locator(".plotly-graph-div").count() == expected
        assert blocked == [] and errors == []
        assert page.evaluate("window.pwned") is None  # a model's name is text, never markup or script
        if which == "log":
            assert page.get_by_text(HOSTILE).first.is_visible() or page.locator("td", has_text="window.pwned").count()
        assert page.locator("#summary + ul li").count() >= (2 if which == "log" else 1)
    finally:
        context.close()
