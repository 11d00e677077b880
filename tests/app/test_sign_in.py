"""Sign-in in the pages: only a verified team address (or a listed account) gets in, addresses are one identity
whatever their case, a signed-out session is back at the sign-in page, and an instance without sign-in that the
network reaches says so on every page."""

from __future__ import annotations

import pytest
from streamlit import config

from evalcore.workspace import Workspace
from evalcore.workspace.identity import SignOuts
from test_pages import assert_no_exception, goto, open_app, texts
from test_workspace_page import team_app


@pytest.fixture()
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALCORE_WORKSPACE", str(tmp_path / "ws"))
    return tmp_path / "ws"


def test_an_unverified_address_of_a_member_is_refused(folder):
    at = team_app({"is_logged_in": True, "email": "alice@team.example", "email_verified": False, "sub": "x"})
    assert any("does not confirm that alice@team.example belongs to this account" in t for t in texts(at.error))
    assert not at.dataframe and [t.value for t in at.title] == ["evalcore"]
    assert [b.label for b in at.button] == ["Sign out"]
    at = team_app({"is_logged_in": True, "email": "alice@team.example", "sub": "x"})  # no claim at all
    assert any("does not confirm" in t for t in texts(at.error))


def test_the_address_is_one_identity_whatever_its_case(folder):
    at = team_app({"is_logged_in": True, "email": "ALICE@Team.Example", "email_verified": True})
    assert [t.value for t in at.title] == ["Data"]
    assert any("Signed in as alice@" in t for t in texts(at.sidebar.caption))


def test_a_signed_out_session_is_back_at_the_sign_in_page(folder):
    user = {"is_logged_in": True, "email": "bob@team.example", "email_verified": True, "iat": 1_800_000_000}
    assert [t.value for t in team_app(user).title] == ["Data"]
    Workspace(folder)  # the catalog the sign-outs live in
    SignOuts(folder / "catalog.sqlite").remember(user)
    at = team_app(user)  # the same cookie again (a copy kept after signing out)
    assert [b.label for b in at.button] == ["Sign in"] and not at.dataframe
    assert [t.value for t in team_app({**user, "iat": 1_800_000_600}).title] == ["Data"]  # signing in again works


@pytest.fixture()
def on_the_network(monkeypatch):
    previous = config.get_option("server.address")
    config.set_option("server.address", "0.0.0.0")
    yield
    config.set_option("server.address", previous)


@pytest.mark.parametrize("allowed, sentence", [(False, "saved items are read-only"),
                                               (True, "Anyone who can reach this instance can save")])
def test_an_instance_without_sign_in_on_the_network_says_so_on_every_page(folder, on_the_network, monkeypatch,
                                                                           allowed, sentence):
    if allowed:
        monkeypatch.setenv("EVALCORE_ALLOW_ANONYMOUS_CHANGES", "1")
    at = open_app()
    for page in ("data", "models", "workspace"):
        if page != "data":
            goto(at, page)
        assert_no_exception(at)
        assert any(sentence in t for t in texts(at.warning)), page


def test_no_banner_on_loopback(folder):
    at = open_app()
    assert not any("sign-in" in t for t in texts(at.warning))
