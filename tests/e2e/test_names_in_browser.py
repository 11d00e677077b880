"""Hostile names in a real browser: an uploaded log whose names are Markdown, HTML, LaTeX, Streamlit directives,
emoji shortcodes and image links is shown literally on every page, and no page makes the browser contact any
server but the app's own."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

if os.environ.get("CI") != "true":  # in CI a missing playwright must be a loud collection error
    pytest.importorskip("playwright.sync_api", reason="playwright not installed: browser tests skipped "
                                                      "(pip install -r requirements-test.txt)")
from playwright.sync_api import Page, expect  # noqa: E402

from benchmarks.hostile import names_log  # noqa: E402
from e2e_helpers import PLOTLY, SIDEBAR, expect_charts, goto_page, wait_idle  # noqa: E402

pytestmark = pytest.mark.e2e

IMAGE = "![pic](http://127.0.0.1:9/x.png)"
MODELS = [f"**boldname** {IMAGE}", "<b>bname</b> <br> end", '<a href="http://example.invalid/">linkname</a>',
          ":red[redname] :smile: :material/home: $x^2$"]
TASKS = {"t-one _itask_": "cat $y$", "t-two http://example.invalid/": ":blue[bluecat]",
         f"t-three {IMAGE}": "**catbold**"}
GROUPS = ["`g1`", "# g2", "- g3", "> g4"]
FILENAME = "**file** $z$ :smile:.csv"
MARKUP = {  # what must never appear: elements a name could create
    "bold or italic text from a name": "strong, em, b, i",
    "an image": "[data-testid='stMarkdownContainer'] img, [data-testid='stCaptionContainer'] img",
    "LaTeX": ".katex",
    "coloured text": ".stMarkdownColoredText, .stMarkdownColoredBackground, .stMarkdownBadge",
    "a Material icon": "[data-testid='stMarkdownContainer'] span[role='img'], "
                       "[data-testid='stCaptionContainer'] span[role='img']",
    "a link": "[data-testid='stMarkdownContainer'] a, [data-testid='stCaptionContainer'] a",
}
APP_BOLD = {"evalcore", "log", "on average across subgroups", "Ranks by method", "Simultaneous intervals (PPI++)",
            # the Labeling-budget page's list of the assumption behind each number
            "relative_efficiency, predicted_mse, predicted_se", "calibrated", "efficiency_low – efficiency_high",
            "srs + ht = 1", "proportional", "Neyman", "DF",
            # ... and of the columns of the labels-needed table
            "labels_needed", "meets_target", "labels_for_probability"}
PAGES = [("Models", 1), ("Calibration", 4), ("Subgroups", 2), ("Leaderboard", 5), ("Labeling budget", 3),
         ("AI-assisted evaluation", 3), ("Data", 0)]


def write_hostile_log(path: Path) -> None:
    frame = names_log(MODELS, TASKS, GROUPS, seed=5)
    frame["correct"] = frame["correct"].astype("Int64")
    frame.to_csv(path, index=False)


def visible(locator) -> str:
    """The text of all elements of ``locator``, without the invisible word joiners that split ':' patterns."""
    return " ".join(locator.all_inner_texts()).replace("\u2060", "")


def assert_no_markup_from_names(page: Page, title: str) -> None:
    for what, selector in MARKUP.items():
        found = page.locator(selector)
        texts = [t.strip() for t in found.all_inner_texts() if t.strip()]  # (Streamlit draws some icons in <i>)
        if what.startswith("bold"):  # the app's own bold text is allowed
            texts = [t for t in texts if t not in APP_BOLD]
        assert not texts, f"{title}: {what} rendered from a name: {texts}"
    body = page.locator("[data-testid='stApp']").inner_text()
    assert "😄" not in body, f"{title}: an emoji shortcode from a name was replaced"


def test_hostile_names_render_literally_and_fetch_nothing(page: Page, app_url: str, tmp_path: Path):
    outside: list[str] = []

    def only_the_app(route):
        if route.request.url.startswith(app_url):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    page.route("**/*", only_the_app)
    path = tmp_path / FILENAME
    write_hostile_log(path)
    page.goto("/")
    wait_idle(page)
    page.locator("[data-testid='stFileUploader'] input[type=file]").set_input_files(str(path))
    # the demo's report is on the page before the upload: wait for the upload's own
    expect(page.locator("[data-testid='stAlertContentSuccess']", has_text="upload ·")).to_be_visible()
    wait_idle(page)
    assert f"Columns of {FILENAME}" in visible(page.locator("h3"))
    assert f"Data: upload · {FILENAME}" in visible(page.locator(SIDEBAR))
    assert_no_markup_from_names(page, "Data")

    for title, n_charts in PAGES:
        goto_page(page, title)
        if n_charts:
            expect_charts(page, n_charts)
            page.wait_for_timeout(500)  # plotly draws its text after the chart appears
        assert_no_markup_from_names(page, title)
        if title == "Calibration":
            tabs = page.get_by_role("tab")
            expect(tabs).to_have_count(len(MODELS))
            shown = [visible(tab) for tab in tabs.all()]
            assert sorted(shown) == sorted(MODELS) and shown[1:] == sorted(shown[1:]), shown  # the leader first
        if title == "Models":
            svg_text = " ".join(page.locator(f"{PLOTLY} .main-svg text").all_text_contents())
            assert "<b>bname</b>" in svg_text, svg_text        # drawn as characters, not as bold
            assert 'href="http://example.invalid/"' in svg_text  # the link is text, not an <a>
            assert page.locator(f"{PLOTLY} .main-svg a").count() == 0
            bold = page.locator(f"{PLOTLY} .main-svg tspan[style*='bold']").all_text_contents()
            assert not any("bname" in t for t in bold), bold
    assert not outside, f"the browser was asked to fetch from other servers: {sorted(set(outside))}"
