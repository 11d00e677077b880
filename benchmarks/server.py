"""Start and stop a Streamlit server of the dashboard on a free port.

One launcher for everything that needs a live server: the server and browser benchmarks, the browser tests
(tests/e2e) and the Docker test (which runs the Dockerfile's CMD from a fresh virtual environment).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
POLL_SECONDS = 0.05
START_TIMEOUT = 120.0
_PORT_CLASH = re.compile(r"port \d+ is not available|address already in use", re.I)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def healthy(url: str) -> bool:
    """Whether ``url``/_stcore/health answers 200 "ok"."""
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
            return response.status == 200 and response.read().decode().strip() == "ok"
    except OSError:
        return False


def stop(process: subprocess.Popen) -> None:
    """SIGTERM the server's process group, SIGKILL it if it has not exited after 15 s."""
    for sig, wait in ((signal.SIGTERM, 15), (signal.SIGKILL, 5)):
        if process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=wait)


def app_command(port: int, python: str = sys.executable) -> list[str]:
    """``streamlit run app.py`` on 127.0.0.1:``port``, not reacting to source edits while it runs."""
    return [python, "-m", "streamlit", "run", "pages/common/server.py", "--server.headless", "true", "--server.address",
            "127.0.0.1", "--server.port", str(port), "--server.fileWatcherType", "none"]


@dataclass
class Server:
    url: str
    process: subprocess.Popen
    startup_seconds: float
    log_path: Path


@contextlib.contextmanager
def streamlit_server(
    command: Callable[[int], list[str]] = app_command,
    cwd: Path = ROOT,
    env: dict[str, str] | None = None,
    log_path: Path | None = None,
    timeout: float = START_TIMEOUT,
    attempts: int = 3,
) -> Iterator[Server]:
    """Run ``command(port)`` in ``cwd`` (environment ``env``, default ours) on a free port until the block ends.

    ``startup_seconds`` is the time from spawning the process until ``/_stcore/health`` answers "ok" (polled every
    50 ms); the answer only counts while our own process is alive (another server may hold the port). A lost race
    for the port is retried on a new one. The server runs in its own process group, terminated on exit, also after
    an exception. Raises RuntimeError with the end of the server's log when it does not become healthy.
    """
    env = {**(os.environ if env is None else env), "PYTHONUNBUFFERED": "1"}
    with contextlib.ExitStack() as stack:
        if log_path is None:
            log_path = Path(stack.enter_context(tempfile.TemporaryDirectory())) / "streamlit.log"
        failures = []
        for _ in range(attempts):
            port = free_port()
            url = f"http://127.0.0.1:{port}"
            with log_path.open("wb") as log:
                start = time.perf_counter()
                process = subprocess.Popen(command(port), cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT,
                                           stdin=subprocess.DEVNULL, start_new_session=True)
                try:
                    while process.poll() is None and time.perf_counter() - start < timeout and not healthy(url):
                        time.sleep(POLL_SECONDS)
                    if process.poll() is None and healthy(url):
                        yield Server(url, process, time.perf_counter() - start, log_path)
                        return
                finally:
                    stop(process)
            tail = log_path.read_text(errors="replace")[-3000:]
            failures.append(f"port {port}: exit code {process.returncode}\n{tail}")
            if not _PORT_CLASH.search(tail):
                break
        raise RuntimeError(f"streamlit did not become healthy within {timeout:.0f} s:\n" + "\n---\n".join(failures))


async def live_session(url: str) -> tuple[str, object]:
    """A live Streamlit session of the server at ``url``: its id and its open websocket (the session lives while
    the websocket does; close it to end the session). Opens the app's websocket, asks for a script run and reads
    the new session's id."""
    import asyncio

    import websockets
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    connection = await websockets.connect(url.replace("http://", "ws://") + "/_stcore/stream", max_size=None)
    back = BackMsg()
    back.rerun_script.query_string = ""
    await connection.send(back.SerializeToString())
    while True:
        message = ForwardMsg()
        message.ParseFromString(await asyncio.wait_for(connection.recv(), 60))
        if message.WhichOneof("type") == "new_session":
            return message.new_session.initialize.session_id, connection


@contextlib.contextmanager
def oidc_provider(users: list[dict]) -> Iterator[str]:
    """An OpenID Connect provider on loopback (``oidc_provider_mock``) offering ``users`` (their claims) to sign in;
    its issuer URL, once its discovery document answers (within 30 s)."""
    port = free_port()
    claims = [arg for user in users for arg in ("--user-claims", json.dumps(user))]
    process = subprocess.Popen([sys.executable, "-m", "oidc_provider_mock", "--port", str(port), *claims],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    issuer = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"{issuer}/.well-known/openid-configuration", timeout=1):
                    break
            except OSError:  # not listening yet
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("the OpenID Connect provider did not start") from None
                time.sleep(0.1)
        yield issuer
    finally:
        stop(process)
