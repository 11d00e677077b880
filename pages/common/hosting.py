"""Whether people other than the one at this machine can reach the instance, and whether they may change saved items.

An instance without sign-in has no idea who is asking: on a loopback address only this machine reaches it (a
laptop's ``make run``), but an instance listening on the network lets anyone who reaches it save, rename, share and
delete. There, unless sign-in is configured or ``EVALCORE_ALLOW_ANONYMOUS_CHANGES`` says that is wanted (an
instance behind the team's own access control), the pages keep saved items read-only. The Workspace API itself
does not look at this: it is the dashboard's rule for anonymous visitors.
"""

from __future__ import annotations

import ipaddress
import os

from streamlit import config

from . import sign_in

ALLOW_ENV = "EVALCORE_ALLOW_ANONYMOUS_CHANGES"
OPEN_CHANGES = ("Anyone who can reach this instance can save, rename, share and delete saved items: it has no "
                "sign-in.")
READ_ONLY = (f"This instance has no sign-in and is reachable from the network, so saved items are read-only: "
             f"configure sign-in, or set {ALLOW_ENV}=1 to let anyone change them.")


def reachable_by_others() -> bool:
    """Whether the server listens beyond loopback: Streamlit's ``server.address`` unset, empty, ``0.0.0.0``,
    ``::``, another address or a host name is reachable; ``localhost``, ``127.x.x.x`` and ``::1`` are not."""
    address = str(config.get_option("server.address") or "").strip().strip("[]")
    if address.lower() == "localhost":
        return False
    try:
        return not ipaddress.ip_address(address).is_loopback
    except ValueError:  # empty (every interface) or a host name
        return True


def anonymous_changes_allowed() -> bool:
    """Whether ``EVALCORE_ALLOW_ANONYMOUS_CHANGES`` is ``1``, ``true`` or ``yes`` (any case)."""
    return os.environ.get(ALLOW_ENV, "").strip().lower() in {"1", "true", "yes"}


def changes_allowed() -> bool:
    """Whether this session may save, rename, share and delete saved items: sign-in is configured, or the
    instance is not reachable by others, or anonymous changes are allowed explicitly."""
    return sign_in.configured() or not reachable_by_others() or anonymous_changes_allowed()


def open_instance_warning() -> str | None:
    """The banner of an instance without sign-in that others can reach (one sentence: whether anyone can change
    saved items, or why they are read-only); None with sign-in or on loopback."""
    if sign_in.configured() or not reachable_by_others():
        return None
    return OPEN_CHANGES if anonymous_changes_allowed() else READ_ONLY
