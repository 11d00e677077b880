"""Who may see a workspace item.

An item without an owner belongs to a single-user instance: everyone who can open the instance sees it. An item with
an owner is private to that owner unless it is shared with the team (every signed-in member, the team being defined
by the instance's sign-in configuration). A viewer who may not see an item gets :class:`PermissionError`; an id
that names no item, :class:`LookupError`, so that the two cases can be told apart by the owner only through the
message, never by guessing ids (analysis ids carry 192 random bits).
"""

from __future__ import annotations


def visible(owner: str | None, shared: bool, viewer: str | None) -> bool:
    """Whether ``viewer`` (None: nobody signed in) may see an item owned by ``owner``."""
    return owner is None or owner == viewer or (shared and viewer is not None)


def check(kind: str, item_id: str, owner: str | None, shared: bool, viewer: str | None) -> None:
    """Raise :class:`PermissionError` when ``viewer`` may not see the item."""
    if not visible(owner, shared, viewer):
        raise PermissionError(f"This {kind} ({item_id}) is private to its owner: ask them to share it with the team.")


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
