"""Memory of a live dashboard through one session's life: before, with an uploaded log, after the session ended.

``python -m benchmarks.session_memory`` starts the dashboard with a 10 s reconnect window
(``server.disconnectedSessionTTL``), uploads a generated log of 2,500,000 rows (59 MB) in a browser session, closes
it, waits for the request guard's janitor, then lets a second visitor open and close a session. It prints one
Markdown row: the server's memory (RSS of its process tree) at each step. ``EVALCORE_CACHE_MB`` is taken from the
environment (the shared result cache keeps what it is allowed to keep).
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.browser import CHROMIUM_ARGS
from benchmarks.hostile import _tree_rss
from benchmarks.server import app_command, streamlit_server

MB = 2**20
TTL_S = 10
SETTLE_S = 40  # the janitor runs every 15 s


def write_log(path: Path, rows: int = 2_500_000) -> None:
    rng = np.random.default_rng(0)
    with path.open("w") as handle:
        handle.write("model,example_id,correct,confidence\n")
        for model in ("alpha", "beta"):
            correct, confidence = rng.integers(0, 2, rows // 2), rng.random(rows // 2)
            handle.write("".join(f"{model},q{i},{k},{p:.6f}\n" for i, (k, p) in enumerate(zip(correct, confidence))))


def main() -> int:
    from playwright.sync_api import expect, sync_playwright

    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "big_upload.csv"
        write_log(log)
        command = lambda port: app_command(port) + ["--server.disconnectedSessionTTL", str(TTL_S)]  # noqa: E731
        env = {**os.environ, "EVALCORE_WORKSPACE": str(Path(folder) / "ws")}
        with streamlit_server(command, env=env) as server, sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS)
            context = browser.new_context(base_url=server.url)
            page = context.new_page()
            page.goto("/")
            page.wait_for_timeout(4000)
            before = _tree_rss(server.process.pid)
            page.locator("[data-testid='stFileUploader'] input[type=file]").set_input_files(str(log))
            expect(page.locator("[data-testid='stAlertContentSuccess']").first).to_contain_text(
                f"upload · {log.name}", timeout=180_000)
            held = _tree_rss(server.process.pid)
            context.close()
            time.sleep(TTL_S + SETTLE_S)
            ended = _tree_rss(server.process.pid)
            visitor = browser.new_context(base_url=server.url)
            visitor.new_page().goto("/")
            time.sleep(8)
            visitor.close()
            time.sleep(TTL_S + SETTLE_S)
            next_visit = _tree_rss(server.process.pid)
    print("| step | before | with the upload | its session ended | after the next visitor's session |")
    print("|---|---:|---:|---:|---:|")
    print(f"| 59 MB log, EVALCORE_CACHE_MB={os.environ.get('EVALCORE_CACHE_MB', '1024')} | {before / MB:,.0f} MB | "
          f"{held / MB:,.0f} MB | {ended / MB:,.0f} MB | {next_visit / MB:,.0f} MB |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
