"""Time from a click on the Label page to the next example on screen, on a 1,000,000-example dataset.

``python -m benchmarks.label_click [--examples 1000000] [--clicks 40]`` saves a generated log of one model (no label
yet; a confidence and the example's text) in a temporary workspace, plans a Neyman campaign to ±0.02 on it, starts
the dashboard, opens ``/label?campaign=ID`` in chromium and presses the "correct"/"incorrect" keys: it prints the
dataset's and the campaign's set-up times and the median and p95 of the time from the key press until the next
example's id is shown (the first example's page load apart: it reads the dataset once, then it is cached).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.browser import CHROMIUM, CHROMIUM_ARGS
from benchmarks.server import app_command, streamlit_server

EXAMPLE = "[data-testid='stMain'] h3"
IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"


def main() -> int:
    from playwright.sync_api import expect, sync_playwright

    from evalcore.data.validation import validate
    from evalcore.labeling.campaign import Campaign
    from evalcore.workspace import Workspace

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=1_000_000)
    parser.add_argument("--clicks", type=int, default=40)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    n = args.examples
    frame = pd.DataFrame({"model": "m", "example_id": [f"q{i}" for i in range(n)], "correct": np.nan,
                          "confidence": rng.uniform(0.3, 1.0, n).round(3),
                          "question": [f"Question {i}?" for i in range(n)], "response": [str(i) for i in range(n)]})
    with tempfile.TemporaryDirectory() as folder:
        workspace = Workspace(Path(folder) / "ws")
        start = time.perf_counter()
        dataset = workspace.add_dataset(validate(frame), f"{n:,} examples")
        saved = time.perf_counter() - start
        start = time.perf_counter()
        campaign = Campaign.create(workspace, dataset.id, "m", "neyman", target=0.02)
        created = time.perf_counter() - start
        env = {**os.environ, "EVALCORE_WORKSPACE": str(workspace.root)}
        with streamlit_server(app_command, env=env) as server, sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
            page = browser.new_context(viewport={"width": 1400, "height": 1000}, base_url=server.url).new_page()
            page.set_default_timeout(120_000)
            start = time.perf_counter()
            page.goto(f"/label?campaign={campaign.id}")
            page.get_by_label("Your name (each label carries it)").fill("bench")
            page.keyboard.press("Enter")
            expect(page.locator(EXAMPLE).filter(has_text=re.compile("^Example "))).to_be_visible()
            first = time.perf_counter() - start
            page.wait_for_selector(IDLE, state="attached")
            page.locator("[data-testid='stMain'] h1").click()  # the keys go to the page, not the name field
            times = []
            for k in range(args.clicks):
                shown = page.locator(EXAMPLE).filter(has_text=re.compile("^Example ")).inner_text()
                start = time.perf_counter()
                page.keyboard.press("y" if k % 3 else "n")
                expect(page.locator(EXAMPLE).filter(has_text=re.compile("^Example "))).not_to_have_text(shown)
                times.append(time.perf_counter() - start)
                page.wait_for_selector(IDLE, state="attached")
            browser.close()
    print("| examples | save dataset (s) | plan campaign (s) | first example (s) | click to next: median (s) | p95 (s) |")
    print("|---:|---:|---:|---:|---:|---:|")
    print(f"| {n:,} | {saved:.1f} | {created:.1f} | {first:.1f} | {statistics.median(times):.2f} | "
          f"{np.quantile(times, 0.95):.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
