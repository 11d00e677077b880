"""First screen of a saved analysis opened by its permalink after a server restart (issue 26, "fast first screens":
"the first permalink open after a restart 12 s").

A temporary workspace (``EVALCORE_WORKSPACE``) receives MMLU-Pro (``../shared/data/mmlu_pro_per_question.csv.gz``)
as a saved dataset and a Leaderboard analysis on it, through :class:`evalcore.workspace.Workspace` (as "Save
analysis" stores them), while a first server runs on that workspace; that server is stopped. Then, per repetition:

* a fresh ``streamlit run pages/common/server.py`` (a new process: nothing computed, nothing cached) starts on a
  free port, headless, on the same workspace; its start-up (until ``/_stcore/health``) is not timed;
* ``first s``: in headless chromium (Debian's, flags of tests/e2e), a new browser context goes to
  ``/?analysis=<id>``; timed from ``page.goto`` until the app is idle
  (``[data-testid='stApp'][data-test-script-state='notRunning']``) *and* the Leaderboard's answer sentence (the
  main area's first ``<h3>``, "... leads ...") is visible;
* ``second s``: the same in a second new browser context (a new session) on the same server.

``python -m benchmarks.permalink [--reps R] [--settle S]`` (``--settle``: seconds the fresh server stays idle
before the first open, as a server restarted some time before its first visitor) prints a Markdown table row per open (median over ``--reps``); target
< 3 s. ``--profile`` instead runs the same permalink once in a bare ``AppTest`` (a new process, empty caches) under
cProfile and prints the top functions by cumulative time.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "mmlu_pro_per_question.csv.gz"
APP = str(ROOT / "app.py")
TARGET_S = 3.0
TIMEOUT_MS = 180_000
VIEWPORT = {"width": 1400, "height": 1000}

#: idle (the script run finished) and the answer sentence shown; the run state alone also reads "notRunning"
#: between the first paint and the start of the run, hence the answer too
_READY = """
() => {
  const app = document.querySelector("[data-testid='stApp']");
  if (!app || app.getAttribute("data-test-script-state") !== "notRunning") return false;
  const h = document.querySelector("[data-testid='stMain'] h3");
  if (!h) return false;
  const r = h.getBoundingClientRect();
  return r.width > 0 && r.height > 0 && h.textContent.includes("leads");
}
"""

#: the answer sentence visible (the page's run may still be going on below it)
_ANSWER = """
() => {
  const h = document.querySelector("[data-testid='stMain'] h3");
  if (!h) return false;
  const r = h.getBoundingClientRect();
  return r.width > 0 && r.height > 0 && h.textContent.includes("leads");
}
"""


def prepare(workspace: Path, data: Path = DATA) -> str:
    """Save ``data`` and a Leaderboard analysis on it into ``workspace``; returns the analysis id."""
    from evalcore.workspace import Workspace

    ws = Workspace(workspace)
    dataset = ws.add_dataset(data.read_bytes(), data.name)
    record = ws.save_analysis(dataset.id, "leaderboard", settings={}, selection={"level": 0.95},
                              name="leaderboard · MMLU-Pro")
    return record.id


def _env(workspace: Path) -> dict[str, str]:
    return {**os.environ, "EVALCORE_WORKSPACE": str(workspace)}


def open_link(browser, url: str, analysis_id: str) -> tuple[float, float]:
    """(seconds until idle with the answer visible, seconds until the answer is visible, the run possibly still
    going) from ``page.goto(permalink)``, in a new browser context."""
    context = browser.new_context(viewport=VIEWPORT, base_url=url)
    try:
        page = context.new_page()
        start = time.perf_counter()
        page.goto(f"/?analysis={analysis_id}", timeout=TIMEOUT_MS)
        page.wait_for_function(_ANSWER, timeout=TIMEOUT_MS, polling=50)
        answer = time.perf_counter() - start
        page.wait_for_function(_READY, timeout=TIMEOUT_MS, polling=50)
        seconds = time.perf_counter() - start
        if page.locator("[data-testid='stException']").count():
            raise RuntimeError("the permalink's page shows an exception")
        return seconds, answer
    finally:
        context.close()


def measure(reps: int, log_dir: Path, settle: float = 0.0) -> dict[str, list[float]]:
    """Per repetition a fresh server, ``settle`` seconds after it is healthy the first open, then the second."""
    from playwright.sync_api import sync_playwright

    from benchmarks.browser import CHROMIUM, CHROMIUM_ARGS
    from benchmarks.server import streamlit_server

    times: dict[str, list[float]] = {"first": [], "second": [], "startup": [], "first answer": [],
                                     "second answer": []}
    with tempfile.TemporaryDirectory(prefix="evalcore-permalink-") as folder:
        workspace = Path(folder) / "workspace"
        # the server that "saved" the analysis: running on the workspace while it is saved, then stopped
        with streamlit_server(env=_env(workspace), log_path=log_dir / "permalink-save.log"):
            analysis_id = prepare(workspace)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
            try:
                for rep in range(reps):
                    with streamlit_server(env=_env(workspace), log_path=log_dir / f"permalink-{rep}.log") as server:
                        times["startup"].append(server.startup_seconds)
                        time.sleep(settle)
                        for key in ("first", "second"):
                            idle, answer = open_link(browser, server.url, analysis_id)
                            times[key].append(idle)
                            times[f"{key} answer"].append(answer)
                    print(f"rep {rep + 1}: start-up {times['startup'][-1]:.2f} s, first {times['first'][-1]:.2f} s "
                          f"(answer {times['first answer'][-1]:.2f} s), second {times['second'][-1]:.2f} s "
                          f"(answer {times['second answer'][-1]:.2f} s)", file=sys.stderr, flush=True)
            finally:
                browser.close()
    return times


def markdown(times: dict[str, list[float]], reps: int) -> str:
    def med(v):
        return f"{statistics.median(v):.2f}"

    lines = [f"Median over {reps} repetition(s) (a fresh server each); server start-up (until healthy, not timed "
             f"in the rows) {med(times['startup'])} s.", "",
             "| open | data | idle s | answer shown s | < 3 s | note |", "|---|---|---:|---:|---|---|"]
    notes = {"first": "first permalink open after a restart (new process)",
             "second": "second open, new session, same server"}
    for key in ("first", "second"):
        meets = "yes" if statistics.median(times[key]) < TARGET_S else "no"
        lines.append(f"| Leaderboard permalink: {key} open | MMLU-Pro | {med(times[key])} | "
                     f"{med(times[key + ' answer'])} | {meets} | {notes[key]} |")
    return "\n".join(lines)


def profile(top: int = 40) -> None:
    """The permalink in a bare AppTest (this process: empty caches), under cProfile; prints the top functions."""
    import cProfile
    import pstats

    from benchmarks.pages import _navigation_mode

    with tempfile.TemporaryDirectory(prefix="evalcore-permalink-") as folder:
        workspace = Path(folder) / "workspace"
        os.environ["EVALCORE_WORKSPACE"] = str(workspace)
        # saved in another process, so that this one has imported nothing of the app's (as a fresh server)
        import subprocess

        analysis_id = subprocess.run(
            [sys.executable, "-c", "import sys; from pathlib import Path; from benchmarks.permalink import prepare; "
             "print(prepare(Path(sys.argv[1])))", str(workspace)],
            cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
        _navigation_mode()
        from streamlit.testing.v1 import AppTest

        start = time.perf_counter()
        imports = time.perf_counter()
        at = AppTest.from_file(APP, default_timeout=600)
        at.query_params["analysis"] = analysis_id
        profiler = cProfile.Profile()
        # the script runs in the script runner's thread: profile there (cProfile sees only its own thread)
        from streamlit.runtime.scriptrunner.script_runner import ScriptRunner

        original = ScriptRunner._run_script

        def profiled(self, rerun_data):
            profiler.enable()
            try:
                return original(self, rerun_data)
            finally:
                profiler.disable()

        ScriptRunner._run_script = profiled
        t0 = time.perf_counter()
        at.run()
        run1 = time.perf_counter() - t0
        titles = [t.value for t in at.title]
        if titles and titles != ["Leaderboard"]:
            at.run()  # the switch to the analysis's view
        total = time.perf_counter() - t0
        ScriptRunner._run_script = original
        print(f"AppTest permalink: first run {run1:.2f} s, until the Leaderboard {total:.2f} s "
              f"(titles {[t.value for t in at.title]}, answer {[s.value for s in at.subheader][:1]}, "
              f"exceptions {[e.message for e in at.exception]}); setup {imports - start:.2f} s")
        stats = pstats.Stats(profiler, stream=sys.stdout)
        stats.sort_stats("cumulative").print_stats(top)
        stats.sort_stats("tottime").print_stats(top // 2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--profile", action="store_true", help="profile the permalink in a bare AppTest instead")
    parser.add_argument("--settle", type=float, default=0.0,
                        help="seconds between the server's health answer and the first open (default 0: at once)")
    parser.add_argument("--logs", type=Path, default=None, help="folder for the servers' logs (default: temporary)")
    args = parser.parse_args(argv)
    os.chdir(ROOT)
    sys.path.insert(0, str(ROOT))
    if args.profile:
        profile()
        return 0
    with contextlib.ExitStack() as stack:
        logs = args.logs or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="evalcore-logs-")))
        logs.mkdir(parents=True, exist_ok=True)
        times = measure(args.reps, logs, args.settle)
    print(markdown(times, args.reps))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
