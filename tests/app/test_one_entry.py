"""``streamlit run app.py``, the conventional command, serves the guarded app (issue 38: it served the dashboard
without :class:`pages.common.guard.RequestGuard`, and a visitor who never signed in had uploads answered 204 and held).

Each test starts ``streamlit run app.py`` as a user would, opens a live session over its websocket and PUTs a small
file to that session's upload address. With sign-in configured (a real OpenID Connect provider on loopback, as in
tests/e2e/test_team_instance.py) the visitor's upload, downloads and metrics are refused (403); without sign-in the
same upload is taken (204), so the refusal is the guard's sign-in rule, not a bad request. The visitor carries
Streamlit's XSRF token, which anyone gets by asking (without it Streamlit itself refuses every upload)."""

from __future__ import annotations

import asyncio
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from benchmarks.concurrent_sessions import in_own_thread
from benchmarks.server import live_session, oidc_provider, streamlit_server

pytestmark = pytest.mark.slow
BOUNDARY = "evalcoreboundary"


def app_py(port: int) -> list[str]:
    return [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.address",
            "127.0.0.1", "--server.port", str(port), "--server.fileWatcherType", "none"]


def answer(url: str, method: str = "GET", body: bytes | None = None, headers: dict | None = None) -> tuple[int, str]:
    """The status and the text of the answer to one request."""
    request = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode("utf-8", "replace")


def status(url: str) -> int:
    return answer(url)[0]


def xsrf_headers(url: str) -> dict[str, str]:
    """What a visitor's browser sends with an upload: the XSRF cookie Streamlit hands to anyone (set here by the
    health check) and the same token in the X-Xsrftoken header."""
    from http.cookies import SimpleCookie

    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=30) as response:
        token = SimpleCookie(response.headers["Set-Cookie"])["_streamlit_xsrf"].value
    return {"Cookie": f"_streamlit_xsrf={token}", "X-Xsrftoken": token}


def upload(url: str) -> tuple[int, str]:
    """The answer to a visitor's PUT of a 1 KB CSV into a live session of the server at ``url``, with the XSRF
    token a browser carries."""

    async def put() -> tuple[int, str]:
        session, connection = await live_session(url)
        body = (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"v.csv\"\r\n"
                "Content-Type: text/csv\r\n\r\n").encode() + b"x" * 1024 + f"\r\n--{BOUNDARY}--\r\n".encode()
        try:
            return await asyncio.to_thread(answer, f"{url}/_stcore/upload_file/{session}/file0", "PUT", body,
                                           {"Content-Type": f"multipart/form-data; boundary={BOUNDARY}",
                                            **xsrf_headers(url)})
        finally:
            await connection.close()

    return in_own_thread(asyncio.run, put())


@pytest.fixture(scope="module")
def provider():
    """An OpenID Connect provider on loopback (oidc_provider_mock) with one team member."""
    with oidc_provider([{"sub": "alice@team.example", "email": "alice@team.example", "email_verified": True}]) as url:
        yield url


def serve_app_py(tmp_path: Path, provider_url: str | None):
    """``streamlit run app.py`` with a home of its own: sign-in configured (``[auth]`` in its secrets) when a
    provider is given."""
    home = tmp_path / "home"
    (home / ".streamlit").mkdir(parents=True)
    env = {**os.environ, "HOME": str(home), "EVALCORE_WORKSPACE": str(tmp_path / "ws"),
           "AUTHLIB_INSECURE_TRANSPORT": "1"}

    def command(port: int) -> list[str]:
        if provider_url is not None:
            (home / ".streamlit" / "secrets.toml").write_text(
                f'[auth]\nredirect_uri = "http://127.0.0.1:{port}/oauth2callback"\n'
                'cookie_secret = "a-test-cookie-secret-of-enough-length"\nclient_id = "evalcore"\n'
                f'client_secret = "evalcore-secret"\nserver_metadata_url = "{provider_url}/.well-known/openid-configuration"'
                '\n\n[team]\ndomains = ["team.example"]\n')
        return app_py(port)

    return streamlit_server(command, env=env, log_path=tmp_path / "streamlit.log")


def test_streamlit_run_app_py_with_sign_in_refuses_a_visitors_upload(tmp_path, provider):
    with serve_app_py(tmp_path, provider) as server:
        code, text = upload(server.url)
        assert code == 403 and text.startswith("Sign in first: this evalcore instance serves uploads"), text
        assert status(f"{server.url}/_stcore/metrics") == 403
        assert status(f"{server.url}/media/0123456789abcdef.csv") == 403
        assert status(f"{server.url}/_stcore/health") == 200


def test_streamlit_run_app_py_without_sign_in_takes_the_same_upload(tmp_path):
    with serve_app_py(tmp_path, None) as server:
        assert upload(server.url)[0] == 204
        assert status(f"{server.url}/_stcore/metrics") == 200
