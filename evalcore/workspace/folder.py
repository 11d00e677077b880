"""Where the workspace is: one rule for the command line, the dashboard (``make run``, ``evalcore serve``, the Docker
image) and the API, so that what one of them saves the others see.

``EVALCORE_WORKSPACE`` where it is set (the Docker image sets ``/data``); else the per-user data folder
``$XDG_DATA_HOME/evalcore/workspace`` (``~/.local/share/evalcore/workspace`` when ``XDG_DATA_HOME`` is unset or not
an absolute path, as the XDG Base Directory specification says), the same whatever folder a command runs from.
"""

from __future__ import annotations

import os
from pathlib import Path

WORKSPACE_ENV = "EVALCORE_WORKSPACE"


def default_root() -> Path:
    """The workspace folder every entry point uses unless told another (see the module docstring)."""
    chosen = os.environ.get(WORKSPACE_ENV)
    if chosen:
        return Path(chosen)
    data_home = os.environ.get("XDG_DATA_HOME", "")
    base = Path(data_home) if os.path.isabs(data_home) else Path.home() / ".local" / "share"
    return base / "evalcore" / "workspace"
