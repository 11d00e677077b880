"""Start and stop the dashboard's streamlit server for the server and browser benchmarks."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
POLL_SECONDS = 0.05
START_TIMEOUT = 120.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def healthy(url: str) -> bool:
    """Whether ``url``/_stcore/health answers 200."""
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
        return False


@dataclass
class Server:
    url: str
    process: subprocess.Popen
    startup_seconds: float


def _stop(process: subprocess.Popen) -> None:
    """SIGTERM the server's process group, SIGKILL it if it has not exited after 10 s."""
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


@contextlib.contextmanager
def streamlit_server(root: Path = ROOT) -> Iterator[Server]:
    """Run ``python -m streamlit run app.py`` in ``root`` on a free port until the block ends.

    ``startup_seconds`` is the time from spawning the process until ``/_stcore/health`` answers 200, polled every
    50 ms. The server runs in its own process group, which is terminated on exit, also after an exception.
    """
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
           "--server.port", str(port), "--server.address", "127.0.0.1"]
    with tempfile.TemporaryFile() as log:
        start = time.perf_counter()
        process = subprocess.Popen(cmd, cwd=root, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True)
        try:
            while not healthy(url):
                if process.poll() is not None:
                    log.seek(0)
                    raise RuntimeError(f"streamlit exited with code {process.returncode}:\n"
                                       f"{log.read().decode(errors='replace')[-2000:]}")
                if time.perf_counter() - start > START_TIMEOUT:
                    raise RuntimeError(f"streamlit did not become healthy within {START_TIMEOUT:.0f} s")
                time.sleep(POLL_SECONDS)
            yield Server(url, process, time.perf_counter() - start)
        finally:
            _stop(process)
