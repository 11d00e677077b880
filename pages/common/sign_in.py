"""Optional sign-in: OpenID Connect through Streamlit's ``st.login`` / ``st.user`` (Authlib).

Configured in ``.streamlit/secrets.toml``::

    [auth]                      # Streamlit's own section: the provider
    redirect_uri = "https://evalcore.example.org/oauth2callback"
    cookie_secret = "a long random string"
    client_id = "..."
    client_secret = "..."
    server_metadata_url = "https://login.example.org/.well-known/openid-configuration"

    [team]                      # evalcore's: who may use the instance
    domains = ["example.org"]   # every verified address of these domains (exactly, not subdomains)
    emails = ["guest@partner.com"]
    accounts = [{issuer = "https://login.example.org", subject = "248289761001"}]   # by the provider's account id

With ``[auth]`` every page needs sign-in and only team members get past the sign-in page
(:func:`evalcore.workspace.identity.judge`: a *verified* e-mail address of the team, or a listed account); their
identity owns what they save. An ``[auth]`` without ``[team]`` admits nobody. Signing out is remembered
(:class:`evalcore.workspace.identity.SignOuts`), so a copy of the old session cookie no longer signs in. Without
``[auth]`` the instance has no sign-in: nobody signs in and saved items have no owner.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from evalcore.data.display import literal
from evalcore.workspace.identity import SignOuts, Team, Verdict, judge


def _secrets_section(name: str) -> dict:
    try:
        return dict(st.secrets.get(name) or {})
    except FileNotFoundError:  # no secrets.toml at all: Streamlit raises a subclass of it
        return {}


def configured() -> bool:
    """Whether this instance asks for sign-in (an ``[auth]`` section in its secrets)."""
    return bool(_secrets_section("auth"))


def team() -> Team:
    """The team of ``[team]``."""
    return Team.from_config(_secrets_section("team"))


def sign_outs() -> SignOuts:
    """The sign-outs remembered in this instance's workspace."""
    from .workspace_store import root

    return SignOuts(root() / "catalog.sqlite")


def verdict(claims: dict[str, Any]) -> Verdict:
    """Whether signed-in ``claims`` may use the instance, and as whom; a signed-out session may not."""
    if sign_outs().signed_out(claims):
        return Verdict(None, "This session has signed out: sign in again.", signed_out=True)
    return judge(claims, team())


def _claims() -> dict[str, Any] | None:
    """The signed-in account's claims; None when nobody is signed in."""
    return dict(st.user.to_dict()) if st.user.is_logged_in else None


def email() -> str | None:
    """The signed-in team member's identity (the verified e-mail address in lower case, else issuer#subject);
    None on an instance without sign-in or before a team member has signed in."""
    if not configured():
        return None
    claims = _claims()
    return None if claims is None else verdict(claims).identity


def sign_out() -> None:
    """End this session: remember its sign-out (the old cookie stops working), then clear the cookie."""
    claims = _claims()
    if claims is not None:
        sign_outs().remember(claims)
    st.logout()


def require() -> None:
    """On an instance with sign-in, stop every page until a team member has signed in."""
    if not configured():
        return
    claims = _claims()
    found = None if claims is None else verdict(claims)
    if found is None or found.signed_out:
        st.title("evalcore")
        st.write("This evalcore instance belongs to a team: sign in to open it.")
        st.button("Sign in", icon=":material/login:", type="primary", on_click=st.login, key="sign_in")
        st.stop()
    if found.identity is None:
        st.title("evalcore")
        st.error(literal(found.reason))
        st.button("Sign out", icon=":material/logout:", on_click=sign_out, key="sign_out_refused")
        st.stop()


def account() -> None:
    """Who is signed in, and a way out (nothing on an instance without sign-in)."""
    if email() is not None:
        st.caption(f"Signed in as {literal(email())}")
        st.button("Sign out", icon=":material/logout:", on_click=sign_out, key="sign_out")
