"""The instance's workspace (a folder: ``EVALCORE_WORKSPACE``, else the per-user data folder the command line uses
too, :func:`evalcore.workspace.folder.default_root`) and who is looking at it.

With sign-in configured (:mod:`pages.common.sign_in`) the viewer is the signed-in team member, who owns what they
save; without it the instance is single-user, every item has no owner and ``viewer()`` is None (the Workspace page
says so). :func:`locked` says when this session may not change saved items at all (:mod:`pages.common.hosting`).
"""

from __future__ import annotations

from pathlib import Path

from evalcore.workspace import Workspace, default_root
from evalcore.workspace.access import canonical

from . import hosting, sign_in
from .store import cached


def root() -> Path:
    """The instance's workspace folder: the command line's too (:func:`evalcore.workspace.folder.default_root`)."""
    return default_root()


@cached("Opening the workspace...")
def _open(folder: str) -> Workspace:
    return Workspace(folder)


def workspace() -> Workspace:
    """The workspace of this instance (created when missing)."""
    return _open(str(root()))


def viewer() -> str | None:
    """The signed-in team member (canonical, :func:`evalcore.workspace.access.canonical`), None on a single-user
    instance."""
    return canonical(sign_in.email())


def locked() -> str | None:
    """Why this session may not save, rename, share or delete saved items (an instance reachable from the network
    without sign-in, :func:`.hosting.changes_allowed`), or None when it may."""
    return None if hosting.changes_allowed() else hosting.open_instance_warning()
