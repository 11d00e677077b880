"""Optional sign-in: OpenID Connect through Streamlit's ``st.login`` / ``st.user`` (Authlib).

Configured in ``.streamlit/secrets.toml``::

    [auth]                      # Streamlit's own section: the provider
    redirect_uri = "https://evalcore.example.org/oauth2callback"
    cookie_secret = "a long random string"
    client_id = "..."
    client_secret = "..."
    server_metadata_url = "https://login.example.org/.well-known/openid-configuration"

    [team]                      # evalcore's: who may use the instance
    domains = ["example.org"]   # every address of these domains (exactly, not subdomains)
    emails = ["guest@partner.com"]

With ``[auth]`` every page needs sign-in, the signed-in e-mail address owns what it saves, and only team members
(:func:`evalcore.workspace.access.team_member`) get past the sign-in page; an ``[auth]`` without ``[team]`` admits
nobody. Without ``[auth]`` the instance is single-user: nobody signs in and saved items have no owner.
"""

from __future__ import annotations

import streamlit as st

from evalcore.display import literal
from evalcore.workspace.access import team_member


def _secrets_section(name: str) -> dict:
    try:
        return dict(st.secrets.get(name) or {})
    except FileNotFoundError:  # no secrets.toml at all: Streamlit raises a subclass of it
        return {}


def configured() -> bool:
    """Whether this instance asks for sign-in (an ``[auth]`` section in its secrets)."""
    return bool(_secrets_section("auth"))


def team() -> tuple[list[str], list[str]]:
    """The team's (e-mail addresses, e-mail domains) from ``[team]``."""
    section = _secrets_section("team")
    return [str(e) for e in section.get("emails", [])], [str(d) for d in section.get("domains", [])]


def email() -> str | None:
    """The signed-in team member's e-mail address; None on a single-user instance."""
    if not configured() or not st.user.is_logged_in:
        return None
    address = st.user.get("email")
    return str(address) if team_member(address, *team()) else None


def require() -> None:
    """On an instance with sign-in, stop every page until a team member has signed in."""
    if not configured():
        return
    if not st.user.is_logged_in:
        st.title("evalcore")
        st.write("This evalcore instance belongs to a team: sign in to open it.")
        st.button("Sign in", icon=":material/login:", type="primary", on_click=st.login, key="sign_in")
        st.stop()
    if email() is None:
        st.title("evalcore")
        st.error(f"{literal(st.user.get('email') or 'This account')} is not on this instance's team. Ask its "
                 "administrator to add your address or domain to [team] in the instance's secrets.toml.")
        st.button("Sign out", icon=":material/logout:", on_click=st.logout, key="sign_out_refused")
        st.stop()


def account() -> None:
    """Who is signed in, and a way out (nothing on a single-user instance)."""
    if email() is not None:
        st.caption(f"Signed in as {literal(email())}")
        st.button("Sign out", icon=":material/logout:", on_click=st.logout, key="sign_out")
