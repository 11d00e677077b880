"""Many people opening the dashboard at the same moment: every session renders and the server keeps answering.

:func:`open_at_once` starts ``n`` browser sessions (contexts of one headless chromium, driven by Playwright's async
API) at the same instant against a running server. Each opens the dashboard (the Data page, with the demo or after
uploading a log), then clicks to a second page (Models) and waits until it has drawn its chart. Meanwhile a thread
asks ``/_stcore/health`` every 0.25 s and records how long each answer took (a request that fails or times out
counts as its time-out), and another samples the server's resident memory (its process tree).

``python -m benchmarks.concurrent_sessions [--sessions 12 30] [--entry server app] [--data demo upload]`` starts a
fresh server for each run and prints one Markdown row per run: sessions, how many rendered, p50/p95 of the time until the second page was
drawn, the worst health latency and the peak memory. The browser test
``tests/e2e/test_concurrent_sessions.py`` asserts on the same measurements.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from benchmarks.browser import CHROMIUM, CHROMIUM_ARGS
from benchmarks.hostile import _tree_rss
from benchmarks.server import ROOT, app_command, streamlit_server

MB = 2**20
HEALTH_EVERY_S = 0.25
HEALTH_TIMEOUT_S = 30.0
SESSION_TIMEOUT_MS = 240_000
IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"
CHART = "[data-testid='stPlotlyChart'] .main-svg"
UPLOADER = "[data-testid='stFileUploader'] input[type=file]"


@dataclass
class LoadResult:
    """What :func:`open_at_once` measured: per session the seconds until its second page was drawn (None where it
    did not render, with the reason in ``failures``), every health answer's latency and the peak memory (bytes)."""

    sessions: int
    render_s: list[float | None]
    health_s: list[float]
    peak_rss: int
    failures: list[str] = field(default_factory=list)

    @property
    def rendered(self) -> int:
        return sum(t is not None for t in self.render_s)

    @property
    def worst_health_s(self) -> float:
        return max(self.health_s, default=float("inf"))

    def render_quantile(self, q: float) -> float:
        done = [t for t in self.render_s if t is not None]
        return float(np.quantile(done, q)) if done else float("nan")

    def row(self, label: str) -> str:
        return (f"| {label} | {self.sessions} | {self.rendered}/{self.sessions} | {self.render_quantile(0.5):.1f} | "
                f"{self.render_quantile(0.95):.1f} | {self.worst_health_s:.2f} | {self.peak_rss / MB:,.0f} |")


HEADER = ("| run | sessions | rendered | render p50 (s) | render p95 (s) | worst health (s) | peak RSS (MB) |\n"
          "|---|---:|---:|---:|---:|---:|---:|")


def write_upload_log(path: Path, models: int = 4, examples: int = 5000, seed: int = 0) -> Path:
    """A CSV log to upload: ``models`` models on ``examples`` examples of 5 tasks, with 0/1 correctness and a
    confidence (the calibration and subgroup views have something to show)."""
    rng = np.random.default_rng(seed)
    skill = np.linspace(0.55, 0.85, models)
    rows = ["model,example_id,task,correct,confidence"]
    for m, p in enumerate(skill):
        confidence = np.clip(rng.normal(p, 0.15, examples), 0.01, 0.99)
        correct = rng.random(examples) < confidence
        rows += [f"model-{m},q{i},task-{i % 5},{int(c)},{q:.4f}" for i, (c, q) in enumerate(zip(correct, confidence))]
    path.write_text("\n".join(rows) + "\n")
    return path


def _health_latency(url: str) -> float:
    start = time.perf_counter()
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=HEALTH_TIMEOUT_S) as response:
            response.read()
    except OSError:
        return HEALTH_TIMEOUT_S
    return time.perf_counter() - start


def _watch(url: str, pid: int, stop: threading.Event, health: list[float], peak: list[int]) -> None:
    """Until ``stop``: health latencies into ``health``, the largest memory of ``pid``'s tree into ``peak[0]``."""
    while not stop.is_set():
        health.append(_health_latency(url))
        peak[0] = max(peak[0], _tree_rss(pid))
        stop.wait(HEALTH_EVERY_S)


async def _session(browser, url: str, second_page: str, upload: Path | None, start: asyncio.Event) -> float:
    """One visitor: open the dashboard (uploading ``upload`` when given), then click to ``second_page`` and wait
    for its chart; the seconds from the common start until then."""
    context = await browser.new_context(viewport={"width": 1400, "height": 1000}, base_url=url)
    try:
        page = await context.new_page()
        page.set_default_timeout(SESSION_TIMEOUT_MS)
        await start.wait()
        began = time.perf_counter()
        await page.goto("/", wait_until="commit")
        await page.wait_for_selector(UPLOADER, state="attached")
        if upload is not None:
            await page.locator(UPLOADER).set_input_files(str(upload))
            await page.locator("[data-testid='stAlertContentSuccess']").filter(
                has_text=f"upload · {upload.name}").first.wait_for()
        await page.locator("[data-testid='stSidebarNav'] a", has_text=second_page).click()
        await page.locator("h1", has_text=second_page).first.wait_for()
        await page.locator(CHART).first.wait_for()
        await page.wait_for_selector(IDLE, state="attached")
        exceptions = await page.locator("[data-testid='stException']").count()
        if exceptions:
            raise RuntimeError(f"the page shows {exceptions} exception(s)")
        return time.perf_counter() - began
    finally:
        await context.close()


def _niced_chromium() -> Path:
    """A wrapper that runs Debian's chromium at a lower priority (``nice -n 10``), its renderers included: the
    visitors' browsers run on their own machines, not on the server's two cores, so here they yield the CPU to the
    server they load rather than compete with it as equals (thirty renderers drawing charts would otherwise take
    most of the machine and measure the browsers, not the server)."""
    wrapper = Path(tempfile.gettempdir()) / "evalcore-niced-chromium"
    if not wrapper.exists():
        wrapper.write_text(f'#!/bin/sh\nexec nice -n 10 {CHROMIUM} "$@"\n')
        wrapper.chmod(0o755)
    return wrapper


async def _all_sessions(url: str, n: int, second_page: str, upload: Path | None) -> tuple[list, list[str]]:
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=str(_niced_chromium()), headless=True, args=CHROMIUM_ARGS)
        try:
            start = asyncio.Event()
            tasks = [asyncio.create_task(_session(browser, url, second_page, upload, start)) for _ in range(n)]
            await asyncio.sleep(0.5)  # every context made: the sessions start together
            start.set()
            outcomes = await asyncio.gather(*tasks, return_exceptions=True)
        finally:
            await browser.close()
    times = [t if isinstance(t, float) else None for t in outcomes]
    failures = [f"{type(t).__name__}: {str(t).splitlines()[0] if str(t) else ''}" for t in outcomes
                if not isinstance(t, float)]
    return times, failures


def open_at_once(url: str, pid: int, n: int, second_page: str = "Models", upload: Path | None = None) -> LoadResult:
    """``n`` browser sessions opening the server at ``url`` (process ``pid``) together; see the module docstring."""
    stop, health, peak = threading.Event(), [], [_tree_rss(pid)]
    watcher = threading.Thread(target=_watch, args=(url, pid, stop, health, peak), daemon=True)
    watcher.start()
    try:
        times, failures = in_own_thread(asyncio.run, _all_sessions(url, n, second_page, upload))
    finally:
        stop.set()
        watcher.join()
    health.append(_health_latency(url))  # and it still answers afterwards
    return LoadResult(n, times, health, peak[0], failures)


def entry_command(entry: str):
    """The server's command: ``server`` (pages/common/server.py, what ``make run`` starts) or ``app`` (the
    conventional ``streamlit run app.py``)."""
    if entry == "server":
        return app_command
    return lambda port: [*app_command(port)[:4], "app.py", *app_command(port)[5:]]


def in_own_thread(function, *args):
    """``function(*args)`` in a thread of its own: a test worker that ran a browser test first holds the session's
    sync Playwright, whose event loop is running in the main thread, and there ``asyncio.run`` refuses to start."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(function, *args).result()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, nargs="+", default=[12, 30])
    parser.add_argument("--entry", choices=("server", "app"), nargs="+", default=["server", "app"])
    parser.add_argument("--data", choices=("demo", "upload"), nargs="+", default=["demo", "upload"],
                        help="the demo, or a generated 20,000-row log (write_upload_log) that each session uploads")
    args = parser.parse_args()
    print(HEADER)
    with tempfile.TemporaryDirectory() as folder:
        log = write_upload_log(Path(folder) / "upload_log.csv")
        for entry in args.entry:
            for data in args.data:
                for n in args.sessions:
                    with streamlit_server(entry_command(entry), cwd=ROOT) as server:
                        result = open_at_once(server.url, server.process.pid, n,
                                              upload=log if data == "upload" else None)
                    print(result.row(f"{entry}, {data}"), flush=True)
                    for failure in result.failures[:3]:
                        print(f"|   {failure[:150]} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
