"""Shared fixtures: the real reference data in ../shared/data (tests skip cleanly when it is absent)."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable

import pytest
from hypothesis import settings

# The per-user data folder (the default workspace, evalcore.workspace.folder.default_root) is a temporary one for the
# whole run, subprocesses and servers included, so that no test writes to the real user's workspace; a test that
# needs a workspace of its own still sets EVALCORE_WORKSPACE.
_DATA_HOME = tempfile.mkdtemp(prefix="evalcore-test-data-")
os.environ["XDG_DATA_HOME"] = _DATA_HOME
atexit.register(shutil.rmtree, _DATA_HOME, ignore_errors=True)

# CI replays a fixed set of generated examples (reproducible runs); local runs keep exploring new ones.
settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI") == "true":
    settings.load_profile("ci")

#: /work/main/tests/conftest.py -> /work/shared/data, i.e. ../shared/data relative to the project root.
SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The folder ../shared/data; the test is skipped when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data not present: real-data test skipped")
    return SHARED_DATA


@pytest.fixture(scope="session")
def shared_file(shared_data: Path) -> Callable[[str], Path]:
    """``shared_file(name)``: the path of ../shared/data/<name> (a file or a folder, e.g. ``"ecosystem/lm_eval"``); the
    test is skipped when it is absent.

    Session-scoped so that module-scoped fixtures (e.g. a fit on the real data shared by several tests) can use it.
    """

    def get(name: str) -> Path:
        path = shared_data / name
        if not path.exists():
            pytest.skip(f"../shared/data/{name} not present: real-data test skipped")
        return path

    return get


@pytest.fixture(scope="session")
def optional_shared_file() -> Callable[[str], Path | None]:
    """``optional_shared_file(name)``: the path of ../shared/data/<name>, or None when it is absent — for a test whose
    main part needs no real data and that adds a step on the real file where it is present."""

    def get(name: str) -> Path | None:
        path = SHARED_DATA / name
        return path if path.exists() else None

    return get


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """Browser files first, then files with slow tests, then the rest, each file's tests in their order: the two
    workers (``-n 2 --dist loadfile``) take files in this order, so the long ones start early and the suite does
    not end waiting on one long file while the other worker is idle (the longest-first rule of scheduling)."""
    def rank(item) -> int:
        return 0 if item.get_closest_marker("e2e") else 1 if item.get_closest_marker("slow") else 2

    first: dict[str, int] = {}
    for item in items:
        path = str(item.path)
        first[path] = min(first.get(path, 2), rank(item))
    items.sort(key=lambda item: first[str(item.path)])
