"""Render time of each dashboard page's first screen after an upload (issue 26, "fast first screens").

For MMLU-Pro (``../shared/data/mmlu_pro_per_question.csv.gz``: 29 models, 347,215 rows, no confidence) and
ImageNet-X (``../shared/data/imagenet_x_predictions.csv.gz``: 4 models x 50,000 images with a confidence), every page
(Data, Models, Calibration, Subgroups, Leaderboard, Labeling budget, AI-assisted, Report) is driven headlessly with
``streamlit.testing.v1.AppTest`` from app.py, as tests/app do:

* each measurement starts from empty caches (the process-wide result store, Streamlit's caches and the data
  source's engine views are cleared) and a new session, so the first render after the upload is what is timed;
* the upload itself goes through the Data page's uploader: for the Data page, that run *is* the first screen (read,
  validate, show the report); for every other page it happens untimed before, as a user uploads then opens a page;
* ``first s``: wall-clock seconds of the page's first script run after switching to it (every computation the
  first screen triggers, in this process); ``rerun s``: the next run with nothing changed (cached steps only);
* what a first screen leaves for later (Calibration's selective prediction and breakdown on a large log, the Report
  page's "Build the report") is then asked for as a user would (the expander opened, the button clicked) and timed
  in a second table.

Module imports are warmed once before the first measurement (a live server imports them at start). Wall-clock
times on a shared machine: the load of other processes shows; medians over ``--reps`` repetitions.

``python -m benchmarks.pages [--reps R] [--data mmlu imagenet] [--pages calibration report]`` prints a Markdown
table of medians; targets: < 3 s for every first screen (issue 26; Calibration of ImageNet-X < 5 s in its
"Done when"). ``--permalink`` adds the table of :mod:`benchmarks.permalink` (a saved Leaderboard analysis of
MMLU-Pro opened by its link on a freshly started server, in chromium).
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA_DIR = ROOT.parent / "shared" / "data"
APP = str(ROOT / "app.py")

#: page script (pages/<name>.py) -> title shown
PAGES = {
    "data": "Data", "models": "Models", "calibration": "Calibration", "subgroups": "Subgroups",
    "leaderboard": "Leaderboard", "sampling": "Labeling budget", "autoeval": "AI-assisted evaluation",
    "report": "Report",
}
#: short name -> (label in the table, file)
DATASETS = {
    "mmlu": ("MMLU-Pro", DATA_DIR / "mmlu_pro_per_question.csv.gz"),
    "imagenet": ("ImageNet-X", DATA_DIR / "imagenet_x_predictions.csv.gz"),
}
TARGET_S = 3.0
TIMEOUT_S = 600


@dataclass
class Row:
    page: str
    data: str
    first: list[float] = field(default_factory=list)
    rerun: list[float] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _navigation_mode() -> None:
    """Run pages in st.navigation mode as a live server does after its first run (tests/app/conftest.py explains:
    without it every AppTest run after a page switch runs the page twice)."""
    from streamlit.runtime.pages_manager import PagesManager

    if getattr(PagesManager, "_evalcore_bench", False):
        return
    original = PagesManager.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    PagesManager.__init__ = init
    PagesManager._evalcore_bench = True


def fresh_caches() -> None:
    """Forget every computed result of the process: the first render after this computes what it shows."""
    import streamlit as st

    from pages.common import data_source
    from pages.common.store import store

    store().clear()
    st.cache_data.clear()
    st.cache_resource.clear()
    with data_source._LOGS_LOCK:
        data_source._LOGS.clear()
    data_source._stored.cache_clear()
    gc.collect()


def _run(at, what: str) -> float:
    start = time.perf_counter()
    at.run()
    seconds = time.perf_counter() - start
    problems = [e.message for e in at.exception]
    if problems:
        raise RuntimeError(f"{what} raised: {problems[0]}")
    return seconds


#: what a page computes on request, timed after its first screen: (row label, page, how to ask for it)
ON_DEMAND = {
    "calibration": [("Calibration: open selective prediction", "cal_selective_on_demand"),
                    ("Calibration: open the breakdown", "cal_breakdown_on_demand")],
    "report": [("Report: Build the report", "Build the report")],
}


def on_demand(at, page: str) -> dict[str, float]:
    """Seconds of each on-request step of ``page`` (an expander opened, a button clicked) that its first screen
    left for later; steps already done with the first screen (a small log) are not timed."""
    out = {}
    for label, what in ON_DEMAND.get(page, []):
        if what.endswith("_on_demand"):
            if what not in at.session_state:
                continue
            at.session_state[what] = True
        else:
            buttons = [b for b in at.button if b.label == what]
            if not buttons:
                continue
            buttons[0].click()
        out[label] = _run(at, label)
    return out


def measure(page: str, path: Path, later: dict[str, list[float]] | None = None) -> tuple[float, float]:
    """(first render s, rerun s) of ``page`` after uploading ``path`` in a new session with empty caches; the
    seconds of its on-request steps are appended to ``later`` (by label)."""
    from streamlit.testing.v1 import AppTest

    fresh_caches()
    at = AppTest.from_file(APP, default_timeout=TIMEOUT_S)
    _run(at, "the Data page")
    at.file_uploader(key="uploader").set_value((path.name, path.read_bytes(), "application/gzip"))
    upload = _run(at, "the upload")
    if page == "data":
        first = upload
    else:
        at.switch_page(f"pages/{page}.py")
        first = _run(at, page)
    titles = [t.value for t in at.title]
    if titles != [PAGES[page]]:
        raise RuntimeError(f"expected the {PAGES[page]} page, got titles {titles}")
    rerun = _run(at, f"{page} (rerun)")
    if later is not None:
        for label, seconds in on_demand(at, page).items():
            later.setdefault(label, []).append(seconds)
    return first, rerun


def warm_up() -> None:
    """Import what the pages import (a live server has done so before its first visitor)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=TIMEOUT_S)
    at.run()
    for page in PAGES:
        at.switch_page(f"pages/{page}.py")
        at.run()


def _seconds(values: list[float]) -> str:
    return f"{statistics.median(values):.2f}" if values else "–"


def markdown(rows: list[Row], reps: int, later: dict[tuple[str, str], list[float]] | None = None) -> str:
    lines = [f"Median over {reps} repetition(s); first = first render after the upload (empty caches), "
             "rerun = the next run with nothing changed.", "",
             "| page | data | first render s | rerun s | < 3 s | note |", "|---|---|---:|---:|---|---|"]
    for r in rows:
        meets = "–" if not r.first else ("yes" if statistics.median(r.first) < TARGET_S else "no")
        lines.append(f"| {PAGES[r.page]} | {r.data} | {_seconds(r.first)} | {_seconds(r.rerun)} | {meets} | "
                     f"{'; '.join(sorted(set(r.problems)))[:120]} |")
    if later:
        lines += ["", "Computed on request after the first screen (median seconds of that run):", "",
                  "| step | data | s |", "|---|---|---:|"]
        lines += [f"| {label} | {data} | {_seconds(v)} |" for (label, data), v in later.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--data", nargs="+", choices=list(DATASETS), default=list(DATASETS))
    parser.add_argument("--pages", nargs="+", choices=list(PAGES), default=list(PAGES))
    parser.add_argument("--permalink", action="store_true",
                        help="also time a saved Leaderboard analysis opened by its permalink after a server restart "
                             "(benchmarks.permalink: live servers and chromium; its table follows)")
    args = parser.parse_args(argv)
    os.chdir(ROOT)
    sys.path.insert(0, str(ROOT))
    _navigation_mode()
    warm_up()
    rows, later = [], {}
    for name in args.data:
        label, path = DATASETS[name]
        for page in args.pages:
            row, steps = Row(page, label), {}
            for _ in range(args.reps):
                try:
                    first, rerun = measure(page, path, steps)
                    row.first.append(first)
                    row.rerun.append(rerun)
                except Exception as exc:  # reported in the table, not raised: a benchmark reports
                    row.problems.append(f"{type(exc).__name__}: {exc}")
            print(f"{PAGES[page]} · {label}: first {_seconds(row.first)} s, rerun {_seconds(row.rerun)} s"
                  + (f" ({row.problems[0]})" if row.problems else ""), file=sys.stderr, flush=True)
            rows.append(row)
            later.update({(step, label): seconds for step, seconds in steps.items()})
    print(markdown(rows, args.reps, later))
    if args.permalink:
        import tempfile

        from benchmarks import permalink

        with tempfile.TemporaryDirectory(prefix="evalcore-logs-") as logs:
            print("\n" + permalink.markdown(permalink.measure(args.reps, Path(logs)), args.reps))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
