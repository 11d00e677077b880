"""End-to-end flows through the dashboard in a real browser (see conftest.py for the server and browser)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

if os.environ.get("CI") != "true":  # in CI a missing playwright must be a loud collection error
    pytest.importorskip("playwright.sync_api", reason="playwright not installed: browser tests skipped "
                                                      "(pip install -r requirements-test.txt)")
from playwright.sync_api import Page, expect  # noqa: E402

from e2e_helpers import (ERROR_ALERT, NAV_LINK, PLOTLY, SIDEBAR, expect_charts, goto_page, load_demo,  # noqa: E402
                         open_app, screenshot, wait_idle)

pytestmark = pytest.mark.e2e

UPLOAD_MODELS = ["aurora-small", "basalt-large", "cobalt-medium"]


def leader_first(frame: pd.DataFrame, models: list[str]) -> list[str]:
    """``models`` with the one of the best overall number (the mean over tasks, evalcore's overall_table) first: the
    order of Calibration's diagram tabs."""
    from evalcore.data.validation import validate
    from evalcore.stats.overall import overall_table

    rows = frame[frame["model"].isin(models)].astype({"correct": float})
    leader = str(overall_table(validate(rows)).iloc[0]["model"])
    return [leader, *[m for m in models if m != leader]]
N_EXAMPLES = 100  # per model: 300 rows in all


def upload(page: Page, path: Path) -> None:
    page.locator("[data-testid='stFileUploader'] input[type=file]").set_input_files(str(path))
    expect(page.get_by_text(f"Columns of {path.name}")).to_be_visible()
    wait_idle(page)


def write_log(path: Path, bad_confidence: bool = False) -> pd.DataFrame:
    """A small per-example log: 3 models x 100 examples, 3 tasks, 2 groups, ~15% unlabeled rows."""
    rng = np.random.default_rng(7)
    rows = []
    for m, model in enumerate(UPLOAD_MODELS):
        skill = 0.55 + 0.15 * m
        for i in range(N_EXAMPLES):
            confidence = float(np.clip(rng.normal(skill, 0.15), 0.02, 0.99))
            correct = int(rng.random() < confidence) if rng.random() > 0.15 else None
            rows.append({"model": model, "example_id": f"ex{i:03d}", "task": ["arith", "geo", "trivia"][i % 3],
                         "group": ["north", "south"][i % 2], "correct": correct,
                         "confidence": round(confidence, 4)})
    frame = pd.DataFrame(rows)
    frame["correct"] = frame["correct"].astype("Int64")
    if bad_confidence:
        frame.loc[[5, 17, 150], "confidence"] = [1.5, 1.2, -0.1]
    frame.to_csv(path, index=False)
    return frame


def test_demo_pages_render(page: Page):
    """First open: the Data page with the demo loaded; then every page through the sidebar navigation."""
    open_app(page)
    expect(page.get_by_role("heading", name="Validation report")).to_be_visible()
    expect(page.locator("[data-testid='stAlertContentSuccess']").first).to_contain_text(
        re.compile(r"demo · Synthetic benchmark.*a log table with [\d,]+ rows and 5 models"))
    expect(page.locator(NAV_LINK)).to_have_count(12)  # Label and History: test_label_browser.py, test_history_browser.py

    for title, charts in (("Data", 0), ("Models", 1), ("Calibration", 4), ("Subgroups", 2), ("Leaderboard", 5),
                          ("Compare", 1), ("Labeling budget", 3), ("AI-assisted evaluation", 1), ("Report", 0)):
        goto_page(page, title)
        if charts:
            expect_charts(page, charts)
        if title == "Data":
            expect(page.get_by_role("heading", name="Validation report")).to_be_visible()
        if title == "Calibration":
            expect(page.get_by_role("tab")).to_have_count(5)
        if title == "Subgroups":
            expect(page.get_by_text("on average across subgroups")).to_be_visible()
        screenshot(page, f"demo-{title.lower()}")


def test_upload_log_then_models_and_calibration(page: Page, tmp_path: Path):
    """A valid CSV through the real uploader: the report counts it right and the views use it."""
    path = tmp_path / "uploaded_log.csv"
    frame = write_log(path)
    open_app(page)
    upload(page, path)

    success = page.locator("[data-testid='stAlertContentSuccess']").first
    expect(success).to_contain_text(f"upload · {path.name}")
    expect(success).to_contain_text(f"{len(frame):,} rows and {len(UPLOAD_MODELS)} models")
    n_unlabeled = int(frame["correct"].isna().sum())
    expect(page.get_by_text(f"{n_unlabeled:,} of {len(frame):,} rows have no 'correct' label")).to_be_visible()
    screenshot(page, "upload-data")

    goto_page(page, "Models")
    expect(page.locator(SIDEBAR)).to_contain_text(f"Data: upload · {path.name}")
    expect(page.locator(SIDEBAR)).to_contain_text(f"{len(UPLOAD_MODELS)} model(s) · all tasks · all groups")
    expect_charts(page, 1)
    for model in UPLOAD_MODELS:
        expect(page.locator(PLOTLY).first).to_contain_text(model)
    screenshot(page, "upload-models")

    goto_page(page, "Calibration")
    expect_charts(page, 4)
    labeled = int((frame["correct"].notna() & frame["confidence"].notna()).sum())
    expect(page.get_by_text(f"Using {labeled:,} labeled rows with a confidence from {len(UPLOAD_MODELS)} model(s)")
           ).to_be_visible()
    tabs = page.get_by_role("tab")
    expect(tabs).to_have_text(leader_first(frame, UPLOAD_MODELS))  # the diagram opens on the selection's leader
    tabs.nth(2).click()
    wait_idle(page)
    expect(page.get_by_role("tabpanel").locator(PLOTLY).first).to_be_visible()
    screenshot(page, "upload-calibration")

    goto_page(page, "Subgroups")
    expect_charts(page, 2)
    labeled_rows = int(frame["correct"].notna().sum())
    expect(page.get_by_text(f"Using {labeled_rows:,} labeled rows")).to_be_visible()
    screenshot(page, "upload-subgroups")

    # the selection made on the Models page is what the Calibration page analyses
    goto_page(page, "Models")
    dropped = UPLOAD_MODELS[1]
    page.get_by_role("button", name=f"Remove {dropped}").click()
    wait_idle(page)
    kept = [m for m in UPLOAD_MODELS if m != dropped]
    expect(page.locator(SIDEBAR)).to_contain_text(f"{len(kept)} model(s) · all tasks")
    expect(page.locator(PLOTLY).first).not_to_contain_text(dropped)
    goto_page(page, "Calibration")
    expect(page.get_by_role("tab")).to_have_text(leader_first(frame, kept))
    expect(page.get_by_text(f"from {len(kept)} model(s)")).to_be_visible()
    expect_charts(page, 4)


def test_upload_with_confidence_out_of_range_shows_error(page: Page, tmp_path: Path):
    """Confidences outside [0, 1]: an error alert naming the column, on the Data page and on the views."""
    path = tmp_path / "bad_confidence.csv"
    write_log(path, bad_confidence=True)
    open_app(page)
    upload(page, path)

    error = page.locator(ERROR_ALERT).filter(has_text="confidence")
    expect(error).to_have_count(1)
    expect(error).to_contain_text(re.compile(r"Column 'confidence'.*must lie in \[0, 1\]"))
    expect(error).to_contain_text("1.5")
    expect(page.get_by_role("heading", name="Validation report")).to_have_count(0)
    screenshot(page, "bad-upload-data")

    goto_page(page, "Calibration")
    expect(page.locator(SIDEBAR)).to_contain_text("the upload needs fixing")
    expect(page.locator(ERROR_ALERT).filter(has_text="confidence")).to_have_count(1)
    expect(page.locator(PLOTLY)).to_have_count(0)
    screenshot(page, "bad-upload-calibration")


def test_sidebar_describes_an_upload_at_once(page: Page, tmp_path: Path):
    """Right after an upload, with no other interaction, the sidebar describes the uploaded data.

    Regression: app.py draws the sidebar before the page runs, so pages/data.py must rerun after taking an
    upload; without that the sidebar kept naming the previous data (and its selection) until the next click.
    """
    path = tmp_path / "sidebar_log.csv"
    write_log(path)
    open_app(page)
    upload(page, path)
    expect(page.locator(SIDEBAR)).to_contain_text(f"Data: upload · {path.name}", timeout=5_000)
    expect(page.locator(SIDEBAR)).to_contain_text(f"{len(UPLOAD_MODELS)} model(s)", timeout=5_000)


def test_chart_format_svg(page: Page):
    """The sidebar radio switches chart downloads to SVG: pages still render and the camera button saves SVG."""
    open_app(page)
    goto_page(page, "Models")
    expect_charts(page, 1)
    chart = page.locator(PLOTLY).first
    chart.hover()
    expect(chart.locator(".modebar-btn[data-title*='Download']")).to_have_attribute(
        "data-title", re.compile(r"^Download plot as a png\s*$", re.I))

    radio = page.locator(SIDEBAR).get_by_role("radiogroup", name="Chart download format")
    radio.locator("label", has_text="SVG").click()
    wait_idle(page)
    expect(radio.get_by_role("radio", name="SVG")).to_be_checked()
    expect_charts(page, 1)

    chart = page.locator(PLOTLY).first
    chart.hover()
    button = chart.locator(".modebar-btn[data-title*='Download']")
    expect(button).to_be_visible()
    expect(button).to_have_attribute("data-title", "Download plot")  # plotly's title for non-png formats
    with page.expect_download() as info:
        button.click()
    download = info.value
    assert download.suggested_filename == "accuracy-mean-over-tasks-by-model.svg"  # the chart names its estimand
    assert Path(download.path()).read_bytes().lstrip().startswith(b"<svg")
    screenshot(page, "svg-models")

    goto_page(page, "Calibration")
    expect_charts(page, 4)
    expect(radio.get_by_role("radio", name="SVG")).to_be_checked()
    screenshot(page, "svg-calibration")


def test_vtab_summary_leaderboard(page: Page, shared_file):
    """The real VTAB-1k summary through the uploader: leaderboard charts, the Bayesian gray zone, static map file."""
    path = shared_file("vtab_1k.csv")
    open_app(page)
    upload(page, path)
    expect(page.locator("[data-testid='stAlertContentSuccess']").first).to_contain_text("summary")
    goto_page(page, "Leaderboard")
    expect_charts(page, 5)  # overall, pairwise, ranks, weighted score, weighting map
    expect(page.locator(PLOTLY).first).to_contain_text("Sup-Rotation-100%")
    page.get_by_text("Bayesian posterior", exact=True).click()
    wait_idle(page)
    expect(page.get_by_text(re.compile("posterior standard deviations of the Bayesian model"))).to_be_visible()
    expect(page.locator(ERROR_ALERT)).to_have_count(0)
    with page.expect_download() as info:
        page.get_by_role("button", name=re.compile(r"Download the static map \(PNG")).click()
    download = info.value
    assert download.suggested_filename == "task-weighting-map.png"
    assert Path(download.path()).read_bytes().startswith(b"\x89PNG")
    screenshot(page, "vtab-leaderboard")


def test_labeling_budget_download_the_examples_to_label(page: Page):
    """The sklearn demo (fully labeled) on the Labeling-budget page: charts, then the list for the annotators."""
    open_app(page)
    load_demo(page, "scikit-learn")
    goto_page(page, "Labeling budget")
    expect_charts(page, 4)  # strata, allocation, efficiency curves, estimates
    budget = int(page.get_by_label("Labels you can afford (budget n)").input_value())
    with page.expect_download() as info:
        page.get_by_role("button", name="Download examples to label (CSV)").click()
    picked = pd.read_csv(info.value.path())
    assert list(picked.columns) == ["example_id", "proxy", "stratum"]
    assert len(picked) == budget and picked["example_id"].is_unique
    expect(page.locator(ERROR_ALERT)).to_have_count(0)
    screenshot(page, "labeling-budget")


def test_ai_assisted_bradley_terry_and_ess_curves(page: Page):
    """Battles demo: Bradley-Terry coefficients by three methods, downloaded as CSV; sklearn demo: ESS curves."""
    open_app(page)
    load_demo(page, "Pairwise battles")
    goto_page(page, "AI-assisted evaluation")
    expect_charts(page, 1)
    expect(page.locator(PLOTLY).first).to_contain_text("Bradley-Terry coefficients")
    with page.expect_download() as info:
        page.get_by_role("button", name="Download bradley-terry coefficients (CSV)").click()
    table = pd.read_csv(info.value.path())
    assert set(table["method"]) == {"classical (labels only)", "PPI (λ = 1)", "PPI++ (tuned λ)"}
    reference = table[table["model"] == table["model"].min()]
    assert (reference["coefficient"] == 0).all() and (reference["se"] == 0).all()
    expect(page.locator(ERROR_ALERT)).to_have_count(0)
    screenshot(page, "ai-assisted-bradley-terry")

    goto_page(page, "Data")
    load_demo(page, "scikit-learn")
    goto_page(page, "AI-assisted evaluation")
    expect_charts(page, 2)  # ESS curves and rank correlation (annotator quality sits in the second tab)
    expect(page.locator(PLOTLY).first).to_contain_text("Effective sample size")
    expect(page.locator(ERROR_ALERT)).to_have_count(0)
    screenshot(page, "ai-assisted-ess-curves")


def test_subgroups_from_an_uploaded_per_subgroup_summary(page: Page, tmp_path: Path):
    """The Subgroups page's own uploader takes a summary (group, estimate, se) and draws the forest plot."""
    rng = np.random.default_rng(11)
    se = rng.uniform(0.02, 0.1, 30)
    path = tmp_path / "per_subgroup.csv"
    pd.DataFrame({"subgroup": [f"topic-{i:02d}" for i in range(30)], "accuracy": 0.7 + rng.normal(0, 0.05, 30),
                  "std_error": se, "n": rng.integers(10, 400, 30)}).to_csv(path, index=False)
    open_app(page)
    goto_page(page, "Subgroups")
    page.get_by_text("per-subgroup estimates (upload group, estimate, se)").click()
    wait_idle(page)
    page.locator("[data-testid='stFileUploader'] input[type=file]").set_input_files(str(path))
    wait_idle(page)
    expect(page.get_by_text(f"{path.name}: 30 rows, 4 columns.")).to_be_visible()
    expect(page.get_by_text("on average across subgroups")).to_be_visible()
    expect_charts(page, 1)
    expect(page.locator(PLOTLY).first).to_contain_text("topic-00 (n=")
    expect(page.locator(ERROR_ALERT)).to_have_count(0)
    screenshot(page, "subgroups-summary")
