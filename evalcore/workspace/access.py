"""Who may see and who may change a workspace item.

Identities are compared in their :func:`canonical` form, so ``BOB@EXAMPLE.ORG`` and ``bob@example.org`` are one
owner. An item without an owner is visible to everyone who can open the instance, and only a caller without an
identity changes it (an instance without sign-in, or the command line): signed-in members see it read-only. An item
with an owner is private to that owner unless it is shared with the team (every signed-in member, the team being
defined by the instance's sign-in configuration), and only its owner changes it. A viewer who may not see an item
gets :class:`PermissionError`; an id that names no item, :class:`LookupError`, so that the two cases can be told
apart by the owner only through the message, never by guessing ids (analysis ids carry 192 random bits).
"""

from __future__ import annotations

import secrets


#: random bytes of an item's id (192 bits)
ID_BYTES = 24


def new_id() -> str:
    """An unguessable id (:data:`ID_BYTES` random bytes, :func:`secrets.token_urlsafe`) that never starts with "-",
    so the command line reads it as an argument, not as an option (one id in 64 would)."""
    while True:
        token = secrets.token_urlsafe(ID_BYTES)
        if not token.startswith("-"):
            return token


def canonical(identity: str | None) -> str | None:
    """The one spelling of an owner or a viewer: surrounding blanks stripped, an e-mail address (anything with an
    ``@``) lowercased whole; None and a blank string are None (nobody)."""
    if identity is None:
        return None
    text = str(identity).strip()
    if not text:
        return None
    return text.lower() if "@" in text else text


def visible(owner: str | None, shared: bool, viewer: str | None) -> bool:
    """Whether ``viewer`` (None: nobody signed in) may see an item owned by ``owner``."""
    owner, viewer = canonical(owner), canonical(viewer)
    return owner is None or owner == viewer or (shared and viewer is not None)


def may_change(owner: str | None, viewer: str | None) -> bool:
    """Whether ``viewer`` may rename, share or delete an item owned by ``owner``: its owner only; an item without an
    owner only where nobody signs in (``viewer`` None)."""
    return canonical(owner) == canonical(viewer)


def check(kind: str, item_id: str, owner: str | None, shared: bool, viewer: str | None) -> None:
    """Raise :class:`PermissionError` when ``viewer`` may not see the item."""
    if not visible(owner, shared, viewer):
        raise PermissionError(f"This {kind} ({item_id}) is private to its owner: ask them to share it with the team.")


def check_change(item_id: str, owner: str | None, viewer: str | None) -> None:
    """Raise :class:`PermissionError`, saying who may, when ``viewer`` may not change the item."""
    if may_change(owner, viewer):
        return
    if canonical(owner) is None:
        raise PermissionError(f"This item ({item_id}) has no owner: it was saved where nobody signs in (or from the "
                              "command line without --owner), so signed-in members see it read-only. It can be "
                              "changed only on an instance without sign-in.")
    raise PermissionError(f"Only its owner ({canonical(owner)}) can change or delete this item ({item_id}).")


def may_decide(owner: str | None, shared: bool, viewer: str | None) -> bool:
    """Whether ``viewer`` may accept a run of a series owned by ``owner`` (or pin it): the series' owner (an owner
    of None: only a caller without an identity, as :func:`may_change`), or any signed-in member when the run is
    ``shared`` with the team and the series has an owner. Nobody decides for a team without signing in."""
    owner, viewer = canonical(owner), canonical(viewer)
    return may_change(owner, viewer) or (shared and owner is not None and viewer is not None)


def check_decide(series: str, owner: str | None, shared: bool, viewer: str | None) -> None:
    """Raise :class:`PermissionError`, naming the owner and what to do, when ``viewer`` may not decide."""
    if may_decide(owner, shared, viewer):
        return
    owner = canonical(owner)
    if owner is None:
        raise PermissionError(f"The series {series!r} has no owner: it was made where nobody signs in (or from the "
                              "command line without --owner), so only an instance without sign-in or the command "
                              "line without --by can accept or pin its runs.")
    raise PermissionError(f"Only the owner of the series {series!r} ({owner}) or a signed-in member, on a run shared "
                          "with the team, can accept or pin its runs: sign in, or ask them to share the run.")


def who(owner: str | None, shared: bool) -> str:
    """Who sees and who changes an item, in one sentence (the command line says it of each dataset it saves)."""
    owner = canonical(owner)
    if owner is None:
        return ("Owner: none. Everyone who can open the dashboard sees it; signed-in team members see it read-only, "
                "and only an instance without sign-in can rename, share or delete it (give it an owner with --owner).")
    if shared:
        return (f"Owner: {owner}. Shared: every signed-in team member sees it; only {owner} can rename, share or "
                "delete it.")
    return (f"Owner: {owner}. Private: only {owner} sees it (once signed in) and can rename, share or delete it; "
            "it is hidden where nobody signs in.")


def team_member(email: str | None, emails: list[str] | tuple[str, ...] = (),
                domains: list[str] | tuple[str, ...] = ()) -> bool:
    """Whether a signed-in e-mail address belongs to the team: listed in ``emails``, or its domain (after the last
    ``@``, exactly, not a subdomain) listed in ``domains`` (with or without a leading ``@``). Case-insensitive, as
    the domain part of an address is. An empty configuration admits nobody: a team instance never falls open."""
    address = (email or "").strip().lower()
    if address.count("@") != 1 or address.startswith("@") or address.endswith("@"):
        return False
    if address in {e.strip().lower() for e in emails}:
        return True
    return address.rsplit("@", 1)[1] in {d.strip().lower().lstrip("@") for d in domains}
