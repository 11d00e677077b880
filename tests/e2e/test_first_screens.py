"""First screens in the browser (issue 26): ImageNet-X (4 models x 50,000 images) uploaded through the real uploader;
the Calibration page opens with its answer sentence, the ECE chart and the reliability diagram, and leaves selective
prediction (a bootstrap of every image) for when the user opens it; the Report page says what it will hold and builds
it on its button. No timing is asserted here:
``benchmarks/pages.py`` measures the render times.

Known answers: on ImageNet-X, ViT is the best-calibrated model (plug-in ECE 0.0138 with 10 equal-width bins) and
SimCLR the least (0.0493); the sentence carries the debiased ECE and interval of
:func:`evalcore.calibration.estimators.calibration_by_model` with the page's defaults (10 bins, 500 replicates,
seed 0, 95%).
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from e2e_helpers import PLOTLY, goto_page, screenshot, wait_idle
from evalcore.calibration import answer, estimators
from evalcore.data.display import WORD_JOINER
from evalcore.data.validation import load_eval_log

IMAGENET = "imagenet_x_predictions.csv.gz"


@pytest.fixture(scope="module")
def imagenet_table(shared_file):
    path = shared_file(IMAGENET)
    frame = load_eval_log((path.name, path.read_bytes()))
    table = estimators.calibration_by_model(frame, n_bins=10, n_boot=500, level=0.95, seed=0).set_index("model")
    return path, table


@pytest.mark.slow
def test_imagenet_x_calibration_opens_with_its_answer(page: Page, imagenet_table):
    path, table = imagenet_table
    assert table["ece"].idxmin() == "ViT" and table["ece"].idxmax() == "SimCLR"
    assert table.loc["ViT", "ece"] == pytest.approx(0.0138, abs=5e-5)
    assert table.loc["SimCLR", "ece"] == pytest.approx(0.0493, abs=5e-5)

    page.goto("/")
    expect(page.locator("h1").first).to_have_text("Data")
    wait_idle(page)
    page.locator("[data-testid='stFileUploader'] input[type=file]").set_input_files(str(path))
    expect(page.locator("[data-testid='stAlertContentSuccess']").first).to_contain_text(
        "200,000 rows and 4 models", timeout=120_000)
    wait_idle(page)

    goto_page(page, "Calibration")
    expected = answer.sentence(table.reset_index(), 0.95)
    assert expected.startswith("ViT is best calibrated") and "SimCLR is the least" in expected
    heading = page.locator("h3").first  # the answer: the first subheader, right under the title
    expect(heading).to_contain_text("ViT is best calibrated")
    assert heading.inner_text().replace(WORD_JOINER, "") == expected  # the names are shown literally
    # then the chart, best calibrated first, and the open tab's reliability diagram; no bootstrap of every image yet
    expect(page.locator(PLOTLY)).to_have_count(2)
    expect(page.locator(PLOTLY).first).to_contain_text("best calibrated first")
    expect(page.get_by_text("Computed when opened: 200,000 examples x 500 bootstrap replicates").first).to_be_visible()
    expect(page.get_by_role("tab")).to_have_text(["ViT", "DINO", "ResNet50", "SimCLR"])  # the leader (ViT) first
    screenshot(page, "first-screen-imagenet-calibration")

    # selective prediction when opened
    page.get_by_text("Selective-prediction curves and the area under them").click()
    wait_idle(page)
    expect(page.locator(PLOTLY)).to_have_count(3, timeout=120_000)
    expect(page.locator("[data-testid='stException']")).to_have_count(0)

    # the Report page: what it will hold first, built on the button (200,000 rows), then what it holds and its headline
    goto_page(page, "Report")
    expect(page.locator("h3").first).to_contain_text("The report of these 200,000 rows of 4 models is built when you ask")
    page.get_by_role("button", name="Build the report").click()
    wait_idle(page)
    expect(page.get_by_role("button", name="Download the report (HTML)")).to_be_visible(timeout=120_000)
    expect(page.locator("h3").first).to_contain_text("The report holds Accuracy by model")
    expect(page.locator("h3").first).to_contain_text("for 200,000 rows of 4 models. Top model:")
    assert "Top model: ViT, overall accuracy" in page.locator("h3").first.inner_text().replace(WORD_JOINER, "")
    screenshot(page, "first-screen-imagenet-report-built")
