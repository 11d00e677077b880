"""A dozen people opening the dashboard at the same moment: every session renders, the server keeps answering
(benchmarks.concurrent_sessions drives the browsers and measures; thirty sessions are a row of that benchmark, not a
test: their 30 browsers take both cores for 3-4 minutes and slow every other test beside them).

Each test starts its own server, so the sessions arrive at a cold cache, as after a restart or at a stand-up: they
share one log and one DuckDB connection per data key, which froze the whole server for good when two sessions
queried it at once. Each session opens the Data page (the demo, or after uploading the same generated log) and then
the Models page, until its chart is drawn.
"""

from __future__ import annotations

from benchmarks.concurrent_sessions import entry_command, open_at_once, write_upload_log
from benchmarks.server import streamlit_server

from conftest import require_chromium

#: the worst time /_stcore/health may take while the sessions load: "a few seconds on 2 cores", where the browsers
#: of the test take most of the machine (measured 1.5-3.1 s for 12 sessions on a quiet machine, 5.7 s beside
#: another test worker's busy processes); a frozen server answers no probe again (each times out at 30 s)
WORST_HEALTH_S = 10.0


def _opened_at_once(entry: str, sessions: int, upload=None):
    require_chromium()
    with streamlit_server(entry_command(entry)) as server:
        result = open_at_once(server.url, server.process.pid, sessions, upload=upload)
    print(result.row(f"{entry}, {'upload' if upload else 'demo'}"))
    assert result.rendered == sessions, f"{result.rendered} of {sessions} sessions rendered: {result.failures[:3]}"
    assert result.worst_health_s < WORST_HEALTH_S, (
        f"/_stcore/health took up to {result.worst_health_s:.1f} s while {sessions} sessions opened")
    assert result.health_s[-1] < WORST_HEALTH_S  # and it still answers once they have
    return result


def test_twelve_sessions_open_the_demo_at_once_on_the_server_script():
    _opened_at_once("server", 12)


def test_twelve_sessions_upload_a_log_at_once_on_streamlit_run_app(tmp_path):
    _opened_at_once("app", 12, upload=write_upload_log(tmp_path / "upload_log.csv"))

