"""Saved analyses in a real browser: a permalink survives a server restart, and sign-in against a real OpenID Connect
provider on loopback (the ``oidc-provider-mock`` package) keeps one user's private analysis from another.

Each test starts its own dashboard servers (the session-wide one of conftest has no workspace of its own).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from playwright.sync_api import expect

from benchmarks.server import app_command, oidc_provider, streamlit_server
from conftest import SCREENSHOTS, VIEWPORT, require_chromium
from e2e_helpers import SIDEBAR, download_bytes, goto_page, wait_idle

pytestmark = pytest.mark.slow
TEAM = ("alice@team.example", "bob@team.example", "eve@elsewhere.example")
#: an account of the provider that claims alice's address without the provider verifying it
MALLORY = {"sub": "mallory", "email": "alice@team.example", "email_verified": False}


def dashboard(workspace: Path, home: Path | None = None, secrets=None):
    """A dashboard server on ``workspace``; ``secrets(port)`` (the text of secrets.toml) goes to ``home``."""
    env = {**os.environ, "EVALCORE_WORKSPACE": str(workspace)}
    if home is not None:
        env["HOME"] = str(home)  # Streamlit reads ~/.streamlit/secrets.toml
        env["AUTHLIB_INSECURE_TRANSPORT"] = "1"  # the provider on loopback speaks http

    def command(port: int) -> list[str]:
        if secrets is not None:
            (home / ".streamlit").mkdir(parents=True, exist_ok=True)
            (home / ".streamlit" / "secrets.toml").write_text(secrets(port))
        return app_command(port)

    log = SCREENSHOTS / f"workspace-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}-{time.time_ns()}.log"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return streamlit_server(command, env=env, log_path=log)


def new_page(browser, url: str):
    context = browser.new_context(viewport=VIEWPORT, accept_downloads=True, base_url=url)
    context.set_default_timeout(60_000)
    return context, context.new_page()


def save_analysis(page, name: str) -> str:
    """Save the current view through the sidebar; returns the link's path (``/?analysis=...``)."""
    page.locator(SIDEBAR).get_by_role("button", name="Save analysis").click()
    page.get_by_label("Name").fill(name)
    page.get_by_role("button", name="Save", exact=True).click()
    wait_idle(page)
    link = page.locator("code", has_text="?analysis=").first.inner_text().strip()
    return link[link.index("/?analysis="):]


def test_a_saved_analysis_reopens_after_a_server_restart_with_the_same_numbers(browser, tmp_path):
    require_chromium()
    workspace = tmp_path / "ws"
    with dashboard(workspace) as server:
        context, page = new_page(browser, server.url)
        page.goto("/")
        wait_idle(page)
        goto_page(page, "Leaderboard")
        page.locator("[data-testid='stExpander'] summary", has_text="Settings").first.click()
        seed_0 = download_bytes(page, "Download leaderboard (CSV)")
        seed = page.get_by_label("Seed")
        seed.fill("11")
        seed.press("Enter")
        wait_idle(page)
        link = save_analysis(page, "leaderboard, seed 11")
        before = download_bytes(page, "Download leaderboard (CSV)")  # after the save's rerun: seed 11 for sure
        assert before != seed_0  # the seed moves the bootstrap intervals
        context.close()
    with dashboard(workspace) as restarted:  # a new process: nothing cached, only the workspace folder
        context, page = new_page(browser, restarted.url)
        page.goto(link)
        wait_idle(page)
        expect(page.locator("h1").first).to_have_text("Leaderboard")
        expect(page.get_by_label("Seed")).to_have_value("11")
        assert download_bytes(page, "Download leaderboard (CSV)") == before
        assert "analysis=" in page.url
        goto_page(page, "Calibration")  # query parameters survive page switches
        page.wait_for_url("**analysis=*")
        context.close()


@pytest.fixture(scope="module")
def provider():
    """An OpenID Connect provider on loopback with predefined users: the team's three (their subject is their
    verified e-mail address) and mallory, whose unverified e-mail claim is alice's address."""
    require_chromium()
    with oidc_provider([{"sub": user, "email": user, "email_verified": True} for user in TEAM] + [MALLORY]) as url:
        yield url


def sign_in(browser, url: str, user: str):
    """A fresh browser context signed in as ``user``."""
    context, page = new_page(browser, url)
    page.goto("/")
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("button", name=user, exact=True).click()  # the provider's page: a predefined user
    page.wait_for_url(f"{url}/**")
    wait_idle(page)
    return context, page


def test_sign_in_keeps_a_private_analysis_from_another_team_member(browser, tmp_path, provider):
    def secrets(port: int) -> str:
        return (f'[auth]\nredirect_uri = "http://127.0.0.1:{port}/oauth2callback"\n'
                'cookie_secret = "a-test-cookie-secret-of-enough-length"\nclient_id = "evalcore"\n'
                f'client_secret = "evalcore-secret"\nserver_metadata_url = "{provider}/.well-known/openid-configuration"\n'
                '\n[team]\ndomains = ["team.example"]\n')

    with dashboard(tmp_path / "ws", home=tmp_path / "home", secrets=secrets) as server:
        context, page = new_page(browser, server.url)
        page.goto("/")
        wait_idle(page)
        expect(page.get_by_role("button", name="Sign in")).to_be_visible()
        assert page.locator("h1", has_text="Data").count() == 0  # nothing before sign-in
        context.close()

        alice, page = sign_in(browser, server.url, "alice@team.example")
        expect(page.locator(SIDEBAR)).to_contain_text("Signed in as alice@")  # user text is shown literally:
        expect(page.locator(SIDEBAR)).to_contain_text("team.example")       # a word joiner follows the @
        goto_page(page, "Calibration")
        link = save_analysis(page, "alice's calibration")
        page.goto(link)
        wait_idle(page)
        expect(page.locator("h1").first).to_have_text("Calibration")
        alice.close()

        bob, page = sign_in(browser, server.url, "bob@team.example")
        page.goto(link)
        wait_idle(page)
        expect(page.get_by_text("private to the user who saved it")).to_be_visible()
        assert page.locator("[data-testid='stPlotlyChart']").count() == 0  # no data shown
        bob.close()

        eve, page = sign_in(browser, server.url, "eve@elsewhere.example")
        expect(page.get_by_text("is not on this instance's team")).to_be_visible()
        eve.close()
