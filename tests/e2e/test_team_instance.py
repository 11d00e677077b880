"""A team instance with sign-in, in a real browser against a real OpenID Connect provider on loopback: uploads
work once signed in, an unverified e-mail claim is no identity, nothing a visitor sends before signing in is
taken, uploads, downloads and metrics need a signed-in session, and signing out ends the session for good."""

from __future__ import annotations

import socket
import urllib.error
import urllib.request

import pytest
from playwright.sync_api import expect

from e2e_helpers import SIDEBAR, goto_page, wait_idle
from test_workspace_flow import dashboard, new_page, provider, sign_in  # noqa: F401 - provider is a fixture

pytestmark = pytest.mark.slow
ONE_MODEL_EVAL = "ecosystem/inspect_ai/2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval"
CSV = "model,example_id,correct\n" + "".join(f"{m},q{i},{int((i * (3 + k)) % 5 > 0)}\n"
                                             for k, m in enumerate(("alpha", "beta")) for i in range(40))


def team_secrets(provider_url: str):
    def secrets(port: int) -> str:
        return (f'[auth]\nredirect_uri = "http://127.0.0.1:{port}/oauth2callback"\n'
                'cookie_secret = "a-test-cookie-secret-of-enough-length"\nclient_id = "evalcore"\n'
                f'client_secret = "evalcore-secret"\nserver_metadata_url = "{provider_url}/.well-known/openid-configuration"\n'
                '\n[team]\ndomains = ["team.example"]\n')
    return secrets


def status(url: str, method: str = "GET", data: bytes | None = None, cookie: str | None = None) -> int:
    request = urllib.request.Request(url, method=method, data=data, headers={"Cookie": cookie} if cookie else {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def status_before_body(url: str, path: str, length: int) -> int:
    """The status a server answers to a PUT announcing ``length`` bytes, sending none of them: a guard that reads
    no body answers at once."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(f"PUT {path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: {length}\r\n"
                     "Content-Type: multipart/form-data; boundary=x\r\n\r\n".encode())
        return int(sock.recv(4096).split(b" ", 2)[1])


def cookie_header(context) -> str:
    return "; ".join(f"{c['name']}={c['value']}" for c in context.cookies())


def test_a_signed_in_member_uploads_a_real_file_and_strangers_get_nothing(browser, tmp_path, provider,
                                                                         optional_shared_file):
    log = tmp_path / "team_log.csv"
    log.write_text(CSV)
    with dashboard(tmp_path / "ws", home=tmp_path / "home", secrets=team_secrets(provider)) as server:
        # before sign-in: uploads, downloads and metrics are refused without reading the body
        assert status_before_body(server.url, "/_stcore/upload_file/some-session/some-file", 190 * 2**20) == 403
        assert status(f"{server.url}/_stcore/metrics") == 403
        assert status(f"{server.url}/media/0123456789abcdef.csv") == 403
        assert status(f"{server.url}/_stcore/health") == 200

        # an account whose provider does not verify the e-mail it claims (alice's) is not alice
        mallory, page = sign_in(browser, server.url, "mallory")
        refusal = page.locator("[data-testid='stAlertContentError']")  # user text shown literally: a word joiner
        expect(refusal).to_contain_text("does not confirm that alice@")   # follows the @
        expect(refusal).to_contain_text("team.example belongs to this account")
        assert page.locator("h1", has_text="Data").count() == 0
        assert status(f"{server.url}/_stcore/metrics", cookie=cookie_header(mallory)) == 403
        mallory.close()

        alice, page = sign_in(browser, server.url, "alice@team.example")
        expect(page.locator(SIDEBAR)).to_contain_text("Signed in as alice@")
        page.locator("[data-testid='stFileUploader'] input[type=file]").set_input_files(str(log))
        expect(page.get_by_text(f"Columns of {log.name}")).to_be_visible()
        wait_idle(page)
        success = page.locator("[data-testid='stAlertContentSuccess']").first
        expect(success).to_contain_text("80 rows and 2 models")
        expect(page.get_by_text("failed unexpectedly")).to_have_count(0)
        goto_page(page, "Models")
        expect(page.locator(SIDEBAR)).to_contain_text(f"Data: upload · {log.name}")
        eval_log = optional_shared_file(ONE_MODEL_EVAL)
        if eval_log is not None:  # a real Inspect AI log through the same uploader
            goto_page(page, "Data")
            page.locator("[data-testid='stFileUploader'] input[type=file]").set_input_files(str(eval_log))
            wait_idle(page)
            expect(page.get_by_text("failed unexpectedly")).to_have_count(0)
            expect(page.locator("[data-testid='stAlertContentSuccess']").first).to_contain_text("rows and")
        assert status(f"{server.url}/_stcore/metrics", cookie=cookie_header(alice)) == 200

        # signing out ends the session: a copy of the old cookie signs nobody in
        kept = alice.cookies()
        page.locator(SIDEBAR).get_by_role("button", name="Sign out").click()
        page.wait_for_timeout(1500)
        alice.close()
        replay, page = new_page(browser, server.url)
        replay.add_cookies(kept)
        page.goto("/")
        wait_idle(page)
        expect(page.get_by_role("button", name="Sign in")).to_be_visible()
        assert page.locator("h1", has_text="Data").count() == 0
        assert status(f"{server.url}/_stcore/metrics", cookie=cookie_header(replay)) == 403
        replay.close()
