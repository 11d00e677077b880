"""Who a signed-in account is: only a verified e-mail address of the team, or a listed account, counts; sign-outs
are remembered so that an old session cookie no longer signs in."""

from __future__ import annotations

from evalcore.workspace import Workspace
from evalcore.workspace.identity import REMEMBER_SECONDS, SignOuts, Team, fingerprint, judge, verified_email

TEAM = Team.from_config({"domains": ["example.org"], "emails": ["guest@partner.com"],
                         "accounts": [{"issuer": "https://login.example.org/", "subject": "248289761001"}]})


def claims(**extra):
    return {"iss": "https://login.example.org", "sub": "u-1", "iat": 1_700_000_000, **extra}


def test_a_verified_team_address_is_the_identity_in_lower_case():
    verdict = judge(claims(email="Alice@Example.ORG", email_verified=True), TEAM)
    assert verdict.identity == "alice@example.org"
    assert judge(claims(email="guest@partner.com", email_verified="true"), TEAM).identity == "guest@partner.com"


def test_an_unverified_address_never_counts_even_when_it_names_a_member():
    for flag in (False, "false", None, 1, "yes"):
        extra = {} if flag is None else {"email_verified": flag}
        verdict = judge(claims(email="alice@example.org", **extra), TEAM)
        assert verdict.identity is None
        assert "does not confirm" in verdict.reason and "email_verified" in verdict.reason
    assert verified_email(claims(email="alice@example.org", email_verified=False)) is None


def test_outsiders_and_subdomains_are_refused_with_the_reason():
    for address in ("eve@elsewhere.org", "eve@sub.example.org", "eve@example.org.evil.com"):
        verdict = judge(claims(email=address, email_verified=True), TEAM)
        assert verdict.identity is None and "not on this instance's team" in verdict.reason


def test_an_account_listed_by_issuer_and_subject_counts_without_an_address():
    listed = claims(sub="248289761001")
    assert judge(listed, TEAM).identity == "https://login.example.org#248289761001"
    assert judge({**listed, "email": "x@y.z", "email_verified": True}, TEAM).identity == "x@y.z"
    assert judge({**listed, "iss": "https://other.example"}, TEAM).identity is None  # same subject, other issuer
    assert judge(claims(sub="248289761002"), TEAM).identity is None


def test_an_empty_team_admits_nobody():
    assert judge(claims(email="alice@example.org", email_verified=True), Team()).identity is None


def test_the_fingerprint_ignores_streamlits_own_keys_and_changes_with_each_sign_in():
    first = claims(email="a@example.org", email_verified=True)
    assert fingerprint(first) == fingerprint({**first, "is_logged_in": True, "origin": "http://x"})
    assert fingerprint(first) != fingerprint({**first, "iat": first["iat"] + 1})


def test_a_sign_out_is_remembered_in_the_workspace_until_the_claims_expire(tmp_path):
    workspace = Workspace(tmp_path / "ws")
    sign_outs = SignOuts(workspace.catalog)
    session = claims(email="a@example.org", email_verified=True, exp=2_000_000_000)
    later = {**session, "iat": session["iat"] + 60}
    assert not sign_outs.signed_out(session)
    sign_outs.remember(session, now=1_700_000_100)
    assert SignOuts(workspace.catalog).signed_out(session)  # another server of the same workspace sees it
    assert not sign_outs.signed_out(later)  # signing in again is a new session
    # expired sign-outs are forgotten when the next one is remembered
    sign_outs.remember(later, now=2_000_000_001)
    assert not sign_outs.signed_out(session) and sign_outs.signed_out(later)


def test_a_sign_out_without_expiry_is_kept_as_long_as_the_cookie_lives(tmp_path):
    sign_outs = SignOuts(Workspace(tmp_path / "ws").catalog)
    session = claims(email="a@example.org", email_verified=True)
    sign_outs.remember(session, now=1_000.0)
    sign_outs.remember(claims(sub="other"), now=1_000.0 + REMEMBER_SECONDS - 1)
    assert sign_outs.signed_out(session)
    sign_outs.remember(claims(sub="third"), now=1_000.0 + REMEMBER_SECONDS + 1)
    assert not sign_outs.signed_out(session)


def test_no_catalog_yet_means_nobody_signed_out(tmp_path):
    assert not SignOuts(tmp_path / "missing" / "catalog.sqlite").signed_out(claims())
