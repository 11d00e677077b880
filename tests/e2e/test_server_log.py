"""The server's log carries the dashboard's own messages, not thousands of framework warnings (issue 26).

The server is started as ``make run`` starts it (only .streamlit/config.toml's settings, no --server.fileWatcherType
override), pages are drawn in a browser, and the log must hold no inotify overflow and no missing-ScriptRunContext
warning.
"""

from __future__ import annotations

import sys

from e2e_helpers import goto_page, wait_idle

from benchmarks.server import streamlit_server

VIEWPORT = {"width": 1400, "height": 1000}
NOISE = ("Inotify queue overflowed", "missing ScriptRunContext")


def make_run_command(port: int) -> list[str]:
    return [sys.executable, "-m", "streamlit", "run", "pages/common/server.py", "--server.port", str(port)]


def test_server_log_has_no_framework_noise(tmp_path, browser):
    log_path = tmp_path / "streamlit.log"
    with streamlit_server(make_run_command, log_path=log_path, timeout=90) as server:
        page = browser.new_context(viewport=VIEWPORT, base_url=server.url).new_page()
        page.set_default_timeout(60_000)
        page.goto("/")
        wait_idle(page)
        for title in ("Models", "Leaderboard", "Subgroups", "Calibration"):
            goto_page(page, title)
        page.context.close()
    log = log_path.read_text(errors="replace")
    for noise in NOISE:
        assert noise not in log, f"{log.count(noise)} '{noise}' lines in the server log:\n{log[-3000:]}"
