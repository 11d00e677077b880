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
