"""Upload bounds under concurrency, against the running dashboard (``pages/common/server.py`` behind
:class:`pages.common.guard.RequestGuard`): ten PUTs in flight together, each within the bounds alone but not
together. Issue 38: the guard compared each request with what was already held, so all ten were accepted.

Each PUT states its length and ``Expect: 100-continue`` and sends its body only once the server asks for it (the
app reads it): every request's headers reach the guard before any body does, so all ten are in flight together,
and a refused one costs nothing. Small bounds (``EVALCORE_SESSION_UPLOAD_MB=20``, ``EVALCORE_UPLOADS_MB=30``) and
5 MB files keep the test light."""

from __future__ import annotations

import asyncio
import os
import socket
import threading
from urllib.parse import urlparse

import pytest

from benchmarks.concurrent_sessions import in_own_thread
from benchmarks.server import live_session, streamlit_server

MB = 2**20
FILE_BYTES = 5 * MB
BOUNDS = {"EVALCORE_SESSION_UPLOAD_MB": "20", "EVALCORE_UPLOADS_MB": "30"}
BOUNDARY = "evalcoreboundary"

pytestmark = pytest.mark.slow


def put(url: str, session: str, number: int, ready: threading.Barrier) -> tuple[int, int, str]:
    """(status, bytes stated, answer) of one upload of :data:`FILE_BYTES` bytes; its headers are sent, then it
    waits for the other requests' headers (``ready``) before it reads the server's first answer."""
    body = (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f{number}.csv\"\r\n"
            "Content-Type: text/csv\r\n\r\n").encode() + b"x" * FILE_BYTES + f"\r\n--{BOUNDARY}--\r\n".encode()
    where = urlparse(url)
    with socket.create_connection((where.hostname, where.port), timeout=60) as sock:
        sock.sendall((f"PUT /_stcore/upload_file/{session}/file{number} HTTP/1.1\r\nHost: {where.netloc}\r\n"
                      f"Content-Type: multipart/form-data; boundary={BOUNDARY}\r\nContent-Length: {len(body)}\r\n"
                      "Expect: 100-continue\r\n\r\n").encode())
        ready.wait(30)
        reader = sock.makefile("rb")
        status = int(reader.readline().split()[1])
        if status == 100:
            while reader.readline() not in (b"\r\n", b""):
                pass
            sock.sendall(body)
            status = int(reader.readline().split()[1])
        headers = {}
        while (line := reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        answer = reader.read(int(headers.get("content-length", 0))).decode("utf-8", "replace")
    return status, len(body), answer


def chunked_put(url: str, session: str, n_bytes: int) -> tuple[int, str]:
    """(status, answer) of an upload of ``n_bytes`` sent in 1 MB chunks without a Content-Length."""
    where = urlparse(url)
    with socket.create_connection((where.hostname, where.port), timeout=60) as sock:
        sock.sendall((f"PUT /_stcore/upload_file/{session}/chunked HTTP/1.1\r\nHost: {where.netloc}\r\n"
                      f"Content-Type: multipart/form-data; boundary={BOUNDARY}\r\n"
                      "Transfer-Encoding: chunked\r\n\r\n").encode())
        head = (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"c.csv\"\r\n"
                "Content-Type: text/csv\r\n\r\n").encode()
        try:
            for part in [head, *[b"x" * MB] * (n_bytes // MB), f"\r\n--{BOUNDARY}--\r\n".encode()]:
                sock.sendall(b"%x\r\n%s\r\n" % (len(part), part))
            sock.sendall(b"0\r\n\r\n")
        except OSError:  # the server answered and closed before the whole body was sent
            pass
        reader = sock.makefile("rb")
        status = int(reader.readline().split()[1])
        headers = {}
        while (line := reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        return status, reader.read(int(headers.get("content-length", 0))).decode("utf-8", "replace")


def concurrent_puts(url: str, sessions: list[str]) -> list[tuple[str, int, int, str]]:
    """One PUT per entry of ``sessions``, all in flight together: (session, status, bytes, answer) each."""
    ready = threading.Barrier(len(sessions))
    results: list = [None] * len(sessions)

    def one(i: int) -> None:
        results[i] = (sessions[i], *put(url, sessions[i], i, ready))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(sessions))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert all(results), "a PUT did not finish"
    return results


def test_ten_concurrent_uploads_never_pass_the_session_or_global_bound():
    in_own_thread(_ten_concurrent_uploads)


def _ten_concurrent_uploads() -> None:
    env = {**os.environ, **BOUNDS, "STREAMLIT_SERVER_ENABLE_XSRF_PROTECTION": "false"}
    with streamlit_server(env=env, timeout=90) as server:
        loop = asyncio.new_event_loop()
        sessions = []  # each session lives while its websocket is open
        try:
            sessions = [loop.run_until_complete(live_session(server.url)) for _ in range(3)]
            first, second, third = (session for session, _ in sessions)

            # one session: 10 x 5 MB together against 20 MB a session -> at most 3 (each states 5 MB and a little)
            results = concurrent_puts(server.url, [first] * 10)
            accepted = [r for r in results if r[1] == 204]
            refused = [r for r in results if r[1] != 204]
            assert sum(r[2] for r in accepted) <= 20 * MB
            assert len(accepted) == 3
            assert all(r[1] == 413 and "20 MB" in r[3] and "EVALCORE_SESSION_UPLOAD_MB" in r[3] for r in refused)

            # all sessions: 15 MB held; 10 more across two other sessions against 30 MB in all -> at most 2
            results = concurrent_puts(server.url, [second, third] * 5)
            accepted = [r for r in results if r[1] == 204]
            refused = [r for r in results if r[1] != 204]
            assert 15 * MB + sum(r[2] for r in accepted) <= 30 * MB
            assert len(accepted) == 2
            assert all(r[1] == 413 and "30 MB" in r[3] and "EVALCORE_UPLOADS_MB" in r[3] for r in refused)

            # the requests have ended: their reservations are gone, and what the session holds still counts
            late = concurrent_puts(server.url, [first])
            assert late[0][1] == 413 and "EVALCORE_SESSION_UPLOAD_MB" in late[0][3]

            # without a Content-Length the bytes count as they arrive: 3 MB more fit into the 30 MB, 6 MB do not
            status, answer = chunked_put(server.url, second, 6 * MB)
            assert status == 413 and "30 MB" in answer and "EVALCORE_UPLOADS_MB" in answer
            assert chunked_put(server.url, second, 3 * MB)[0] == 204
        finally:
            for _, connection in sessions:
                loop.run_until_complete(connection.close())
            loop.close()
