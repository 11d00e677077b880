"""One session uploads hostile files while another keeps working: the server stays healthy and stops on SIGTERM.

A server of its own (the test ends it with SIGTERM, as ``docker stop`` does). The bounds asserted here are the
issue's: ``/_stcore/health`` answers within 1 s throughout, the other session's pages keep rendering, every
hostile file gets a clear message, and the server exits within Docker's default 10 s stop timeout.
"""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from benchmarks.browser import CHROMIUM, CHROMIUM_ARGS
from benchmarks.hostile import IDLE, Probe, exercise, upload_and_read, write_corpus
from benchmarks.server import streamlit_server

SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"
VIEWPORT = {"width": 1400, "height": 1000}

EXPECTED = {  # file name: (accepted, fragments of the message)
    "bomb.csv.gz": (False, ["expands beyond 200 MB", "EVALCORE_MAX_FILE_MB"]),
    "wide.csv": (False, ["100,000 columns", "EVALCORE_MAX_COLUMNS"]),
    "commas.csv": (False, ["Line 2 is 5,242,880 bytes long", "EVALCORE_MAX_LINE_KB"]),
    "large.csv.gz": (True, ["2,000,000 rows and 20 models"]),
}


@pytest.mark.slow
def test_hostile_uploads_do_not_starve_other_sessions(playwright_instance, tmp_path: Path):
    files = write_corpus(tmp_path, list(EXPECTED))
    browser = playwright_instance.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    try:
        with streamlit_server(log_path=SCREENSHOTS / "streamlit-hostile.log", timeout=90) as server:
            pages = []
            for _ in range(2):
                page = browser.new_context(viewport=VIEWPORT, base_url=server.url).new_page()
                page.goto(server.url)
                page.wait_for_selector(IDLE, state="attached", timeout=120_000)
                pages.append(page)
            attacker, bystander = pages
            with Probe(server.url, server.process.pid) as probe:
                for _, path in files:
                    accepted, message, _ = upload_and_read(attacker, path)
                    want, fragments = EXPECTED[path.name]
                    assert accepted == want, message
                    for fragment in fragments:
                        assert fragment in message, f"{fragment!r} not in {message!r}"
                    assert "Traceback" not in message
                    assert exercise(bystander, 1) < 30
            assert max(probe.latencies) < 1.0, f"health latencies up to {max(probe.latencies):.2f} s"
            assert max(probe.memory) < 4 * 2**30

            start = time.monotonic()
            server.process.send_signal(signal.SIGTERM)
            server.process.wait(timeout=10)
            assert time.monotonic() - start < 10
    finally:
        browser.close()
