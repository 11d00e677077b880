"""The Label page under a team: an AI judge, overlap 2 and disagreements waiting for adjudication, in chromium.

``python -m benchmarks.label_team [--examples 5000] [--clicks 30] [--repeats 3]`` (also ``python -m
benchmarks.run --only label-team``) saves a generated log of one model (no label yet; a confidence, an AI judge's
0/1 verdict and the example's text) in a temporary workspace and plans two PPI++ campaigns with overlap 2 on it:

* one where two annotators gave 100 labels (50 examples, some disagreeing): a third annotator opens it in chromium,
  types a name and labels with the keys; measured per key press: until the next example's id is shown (**click to
  next**, target 0.5 s) and until the script run has finished (**page settled**, target 1 s);
* one with 1,000 labels (500 examples, a tenth disagreeing: pending adjudication): the same browser opens its
  address until the answer is shown and the run has finished (**open**, target 2 s; the campaign's first visit: its
  estimate is computed), then once more (cached by the labels' version); and the agreement section opened there
  until its statistics are shown (**agreement**, computed once per new label, no target).

Targets are issue 47's, for an idle 2-core machine.
"""

from __future__ import annotations

import argparse
import os
import re
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.core import Result, markdown_table

#: the page's headings: the answer first, then "Example <id>"
ANSWER = EXAMPLE = "[data-testid='stMain'] h3"
IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"
TARGETS = {"click": 0.5, "settled": 1.0, "open": 2.0}


def _log(n: int) -> pd.DataFrame:
    """``n`` examples of one model: confidence, an 85%-accurate AI judge's verdict (the ``proxy`` role), text."""
    rng = np.random.default_rng(0)
    truth = (rng.random(n) < 0.75).astype(float)
    return pd.DataFrame({"model": "m", "example_id": [f"q{i}" for i in range(n)], "correct": np.nan,
                         "confidence": rng.uniform(0.3, 1.0, n).round(3),
                         "proxy": np.where(rng.random(n) < 0.85, truth, 1 - truth),
                         "question": [f"Question {i}: what is {i} + 1?" for i in range(n)],
                         "response": [str(i + 1) for i in range(n)]})


def _labeled(workspace, dataset_id: str, judge: pd.Series, examples: int, seed: int):
    """A PPI++ campaign, overlap 2, whose first ``examples`` examples two annotators labeled (imported: each label
    the judge's verdict, wrong 15% of the time; the second annotator disagrees with the first on a tenth)."""
    from evalcore.labeling.campaign import Campaign

    campaign = Campaign.create(workspace, dataset_id, "m", "ppi", target=0.02, overlap=2, seed=seed,
                               name=f"{examples * 2:,} labels")
    rng = np.random.default_rng(seed)
    ids = campaign.export()["example_id"].iloc[:examples]
    first = np.abs(judge.loc[ids].to_numpy() - (rng.random(examples) < 0.15))
    second = np.abs(first - (rng.random(examples) < 0.1))
    for who, values in (("ann-a", first), ("ann-b", second)):
        campaign.import_labels(pd.DataFrame({"example_id": ids, "label": values.astype(int)}), who)
    return campaign


def _settle(page) -> None:
    page.wait_for_selector(IDLE, state="attached", timeout=120_000)


def measure(examples: int = 5000, clicks: int = 30, repeats: int = 3) -> list[Result]:
    """The rows of the table (see the module docstring)."""
    from playwright.sync_api import expect, sync_playwright

    from benchmarks.browser import CHROMIUM, CHROMIUM_ARGS, chromium_available
    from benchmarks.server import app_command, streamlit_server
    from evalcore.data.validation import validate
    from evalcore.workspace import Workspace

    click = Result("label-click-next", f"Label page, PPI++ campaign with an AI judge, overlap 2, 100 labels: key "
                                       "press until the next example's id is shown (third annotator)",
                   target=TARGETS["click"])
    settled = Result("label-click-settled", "the same key press until the script run has finished",
                     target=TARGETS["settled"])
    opened = Result("label-open-1000", "a campaign with 1,000 labels (about 50 awaiting adjudication) opened from its "
                                       "address in the same browser: its first visit (estimate computed), until the "
                                       "answer is shown and the run has finished", target=TARGETS["open"])
    again = Result("label-open-1000-again", "the same address opened again (estimate cached by the labels' "
                                            "version)", target=TARGETS["open"])
    agreement = Result("label-agreement-1000", "the agreement section opened on that campaign until its statistics "
                                               "are shown (bootstrap intervals, once per new label)")
    results = [click, settled, opened, again, agreement]
    if not chromium_available():
        for r in results:
            r.note = f"skipped: {CHROMIUM} not found"
        return results
    with tempfile.TemporaryDirectory() as folder:
        workspace = Workspace(Path(folder) / "ws")
        log = _log(examples)
        judge = log.set_index("example_id")["proxy"]
        dataset = workspace.add_dataset(validate(log), f"{examples:,} examples")
        env = {**os.environ, "EVALCORE_WORKSPACE": str(workspace.root)}
        with streamlit_server(app_command, env=env) as server, sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)

            def new_page():
                page = browser.new_context(viewport={"width": 1400, "height": 1000}, base_url=server.url).new_page()
                page.set_default_timeout(120_000)
                return page

            for repeat in range(repeats):
                small = _labeled(workspace, dataset.id, judge, 50, seed=2 * repeat)
                page = new_page()
                page.goto(f"/label?campaign={small.id}")
                page.get_by_label(re.compile("^Your name")).fill(f"bench{repeat}")
                page.keyboard.press("Enter")
                shown = page.locator(EXAMPLE).filter(has_text=re.compile("^Example "))
                expect(shown).to_be_visible()
                _settle(page)
                page.locator("[data-testid='stMain'] h1").click()  # the keys go to the page, not the name field
                for k in range(clicks):
                    before = shown.inner_text()
                    start = time.perf_counter()
                    page.keyboard.press("y" if k % 3 else "n")
                    expect(shown).not_to_have_text(before)
                    click.samples.append(time.perf_counter() - start)
                    _settle(page)
                    settled.samples.append(time.perf_counter() - start)

                big = _labeled(workspace, dataset.id, judge, 500, seed=2 * repeat + 1)
                for result in (opened, again):
                    start = time.perf_counter()
                    page.goto(f"/label?campaign={big.id}")
                    expect(page.locator(ANSWER).first).to_contain_text("labels")
                    _settle(page)
                    result.samples.append(time.perf_counter() - start)
                start = time.perf_counter()
                page.get_by_text("Agreement: between annotators").click()
                expect(page.get_by_text(re.compile("^(Cohen's kappa|Krippendorff's alpha)"))).to_be_visible()
                _settle(page)
                agreement.samples.append(time.perf_counter() - start)
                page.context.close()
            browser.close()
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=5000)
    parser.add_argument("--clicks", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    results = measure(args.examples, args.clicks, args.repeats)
    print(markdown_table(results))
    print(f"\nclick to next: p95 {np.quantile(results[0].samples, 0.95):.2f} s; page settled: p95 "
          f"{np.quantile(results[1].samples, 0.95):.2f} s" if results[0].samples else "")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
