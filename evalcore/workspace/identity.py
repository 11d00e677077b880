"""Who a signed-in account is: the team's rule for an OpenID Connect provider's claims, and sign-outs that stick.

An account counts as a team member when

* the provider **verifies** its e-mail address (the ``email_verified`` claim is true, OpenID Connect Core 1.0
  §5.1) and that address, compared in lower case, is listed in ``[team] emails`` or its domain in ``[team] domains``;
  or
* the account itself is listed in ``[team] accounts`` by issuer and subject (``iss`` and ``sub``, the only pair
  OpenID Connect guarantees to be stable and unique, §5.7), for a provider that does not verify e-mail addresses.

An unverified ``email`` claim is never an identity: any account of some providers can claim any address. The
identity that owns saved items is the verified address in lower case, else ``issuer#subject``.

A sign-out is remembered as the :func:`fingerprint` of the signed-in claims (they carry the time the provider
issued them, so a later sign-in has another fingerprint): a copy of the old session cookie, which Streamlit signs
but does not expire on the server, then no longer signs anyone in. :class:`SignOuts` keeps them in the workspace
catalog until the claims' own expiry (``exp``), or :data:`REMEMBER_SECONDS` when they state none.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from evalcore.errors import EvalDataError
from evalcore.workspace import catalog
from evalcore.workspace.access import canonical, team_member

#: how long a sign-out without an ``exp`` claim is remembered: Streamlit's auth cookie lives 30 days
REMEMBER_SECONDS = 30 * 24 * 3600
_TABLE = "CREATE TABLE IF NOT EXISTS sign_outs (fingerprint TEXT PRIMARY KEY, until REAL NOT NULL)"


@dataclass(frozen=True)
class Team:
    """The ``[team]`` section: e-mail addresses, e-mail domains, and accounts as (issuer, subject) pairs."""

    emails: tuple[str, ...] = ()
    domains: tuple[str, ...] = ()
    accounts: frozenset[tuple[str, str]] = frozenset()

    @classmethod
    def from_config(cls, section: Mapping[str, Any]) -> "Team":
        """From ``emails = [...]``, ``domains = [...]`` and ``accounts = [{issuer = "...", subject = "..."}]``."""
        accounts = frozenset((str(a.get("issuer", "")).rstrip("/"), str(a.get("subject", "")))
                             for a in section.get("accounts", []) if isinstance(a, Mapping))
        return cls(tuple(str(e) for e in section.get("emails", [])), tuple(str(d) for d in section.get("domains", [])),
                   accounts)


@dataclass(frozen=True)
class Verdict:
    """The outcome for one account: its ``identity`` (None when refused) and, when refused, ``reason``;
    ``signed_out`` when the refusal is that the session has signed out (the sign-in page is the answer)."""

    identity: str | None
    reason: str = ""
    signed_out: bool = False


def verified_email(claims: Mapping[str, Any]) -> str | None:
    """The claims' e-mail address in lower case when the provider verified it (``email_verified`` true or "true")."""
    verified = claims.get("email_verified")
    if verified is True or (isinstance(verified, str) and verified.strip().lower() == "true"):
        address = canonical(claims.get("email"))
        return address if address and "@" in address else None
    return None


def judge(claims: Mapping[str, Any], team: Team) -> Verdict:
    """Whether the signed-in ``claims`` belong to ``team``, and as whom."""
    email = verified_email(claims)
    account = (str(claims.get("iss", "")).rstrip("/"), str(claims.get("sub", "")))
    if email is not None and team_member(email, team.emails, team.domains):
        return Verdict(email)
    if account[1] and account in team.accounts:
        return Verdict(email or f"{account[0]}#{account[1]}")
    claimed = str(claims.get("email") or "").strip()
    if claimed and email is None:
        return Verdict(None, f"The sign-in provider does not confirm that {claimed} belongs to this account "
                             "(email_verified is not true), so the address cannot identify you. Verify the address "
                             "with the provider, or ask the administrator to list the account by issuer and subject "
                             "in [team] accounts.")
    return Verdict(None, f"{claimed or 'This account'} is not on this instance's team. Ask its administrator to add "
                         "your address or domain to [team] in the instance's secrets.toml.")


def fingerprint(claims: Mapping[str, Any]) -> str:
    """sha256 of the claims in canonical JSON (without Streamlit's own keys ``is_logged_in``, ``origin`` and
    ``tokens``): one signed-in session's mark."""
    kept = {str(k): v for k, v in claims.items() if k not in ("is_logged_in", "origin", "tokens")}
    text = json.dumps(kept, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class SignOuts:
    """Sign-outs remembered in the workspace catalog ``catalog_path`` (shared by every server of the workspace)."""

    def __init__(self, catalog_path: Path) -> None:
        self.path = Path(catalog_path)

    def remember(self, claims: Mapping[str, Any], now: float | None = None) -> None:
        """Remember that the session of ``claims`` signed out (and forget expired sign-outs)."""
        now = time.time() if now is None else now
        try:
            until = float(claims.get("exp"))
        except (TypeError, ValueError):
            until = now + REMEMBER_SECONDS
        with catalog.transaction(self.path) as db:
            db.execute(_TABLE)
            db.execute("DELETE FROM sign_outs WHERE until < ?", (now,))
            db.execute("INSERT OR REPLACE INTO sign_outs VALUES (?, ?)", (fingerprint(claims), max(until, now + 60)))

    def signed_out(self, claims: Mapping[str, Any]) -> bool:
        """Whether the session of ``claims`` has signed out."""
        try:
            return bool(catalog.rows(self.path, "SELECT 1 FROM sign_outs WHERE fingerprint = ?",
                                     (fingerprint(claims),)))
        except (sqlite3.OperationalError, EvalDataError):  # no sign-out recorded yet: the table does not exist
            return False
