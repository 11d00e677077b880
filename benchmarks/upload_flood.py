"""Uploads before sign-in against a live team instance: what the server holds while strangers push files.

``python -m benchmarks.upload_flood`` starts the dashboard with sign-in configured (a provider that is never
reached: nobody signs in), then has ``--clients`` connections each PUT ``--mb`` megabytes to
``/_stcore/upload_file/<session>/<file>`` as fast as the server takes them, the attack of issue 23 (8 x 190 MB).
It prints one Markdown table: the answers, the bytes the server read of the bodies, the server's peak and final
memory (RSS of its process tree), and the seconds it took.
"""

from __future__ import annotations

import argparse
import socket
import tempfile
import threading
import time
from pathlib import Path

from benchmarks.hostile import _tree_rss
from benchmarks.server import app_command, streamlit_server

MB = 2**20
SECRETS = ('[auth]\nredirect_uri = "http://127.0.0.1:9/oauth2callback"\ncookie_secret = "benchmark-cookie-secret-xx"\n'
           'client_id = "x"\nclient_secret = "y"\nserver_metadata_url = "http://127.0.0.1:9/.well-known/openid"\n'
           '[team]\ndomains = ["team.example"]\n')


def push(url: str, path: str, megabytes: int, answers: list[str], sent: list[int]) -> None:
    """PUT ``megabytes`` of multipart body; record the status line and how much the server accepted."""
    host, port = url.removeprefix("http://").split(":")
    body = b"x" * MB
    done = 0
    with socket.create_connection((host, int(port)), timeout=60) as sock:
        sock.sendall(f"PUT {path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: {megabytes * MB}\r\n"
                     "Content-Type: multipart/form-data; boundary=x\r\n\r\n".encode())
        try:
            for _ in range(megabytes):
                sock.sendall(body)
                done += 1
        except OSError:
            pass  # the server closed the connection: it reads no more
        try:
            answers.append(sock.recv(4096).split(b"\r\n", 1)[0].decode(errors="replace"))
        except OSError as exc:
            answers.append(f"connection closed ({exc.__class__.__name__})")
    sent.append(done)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--mb", type=int, default=190)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        (Path(home) / ".streamlit").mkdir()
        (Path(home) / ".streamlit" / "secrets.toml").write_text(SECRETS)
        import os
        env = {**os.environ, "HOME": home, "EVALCORE_WORKSPACE": str(Path(home) / "ws")}
        with streamlit_server(app_command, env=env) as server:
            time.sleep(2)
            baseline = _tree_rss(server.process.pid)
            answers: list[str] = []
            sent: list[int] = []
            peak = baseline
            start = time.perf_counter()
            threads = [threading.Thread(target=push, args=(server.url, f"/_stcore/upload_file/s{i}/f{i}", args.mb,
                                                          answers, sent)) for i in range(args.clients)]
            for thread in threads:
                thread.start()
            while any(t.is_alive() for t in threads):
                peak = max(peak, _tree_rss(server.process.pid))
                time.sleep(0.05)
            seconds = time.perf_counter() - start
            time.sleep(2)
            final = _tree_rss(server.process.pid)
    print("| attack | answers | MB the clients got in before the server closed | RSS before | peak | after | seconds |")
    print("|---|---|---:|---:|---:|---:|---:|")
    print(f"| {args.clients} x {args.mb} MB PUT before sign-in | {', '.join(sorted(set(answers)))} | "
          f"{sum(sent):,} | {baseline / MB:,.0f} MB | {peak / MB:,.0f} MB | {final / MB:,.0f} MB | {seconds:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
