"""Fixtures for the AppTest-driven page tests.

Why ``live_server_navigation`` exists
-------------------------------------
The app keeps its page scripts in a folder named ``pages/`` next to ``app.py``. Streamlit treats such an app as a
legacy (v1) multipage app until ``st.navigation`` has been called once in the process; a live server flips the
class-wide flag ``PagesManager.uses_pages_directory`` to False on app.py's first run and it stays False.
``pages/common/navigation.ensure_app_navigation`` handles the one run where it is still True (a first visitor's deep
link) by flipping it and calling ``st.rerun()``.

``AppTest.run()`` however resets the flag to None before *every* run, so under AppTest every run after a
``switch_page`` starts in legacy mode, runs the page script directly and is rerun by ``ensure_app_navigation``. That
rerun drops one-shot widget events (a clicked ``st.button`` such as "Load demo" is lost). The fixture below keeps
the flag False after each ``PagesManager`` is created, which is exactly the state of a live server after its first
run. ``test_first_visit_deep_link_runs_through_app_py`` opts out (by requesting ``fresh_server``) to test the
deep-link path itself.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def fresh_server() -> None:
    """Request this to run AppTest like a freshly started server (legacy pages-folder mode on the first run)."""


@pytest.fixture(autouse=True)
def live_server_navigation(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run the app from the project root, in st.navigation mode as a live server does after its first run."""
    monkeypatch.chdir(ROOT)
    if "fresh_server" in request.fixturenames:
        return
    from streamlit.runtime.pages_manager import PagesManager

    original_init = PagesManager.__init__

    def init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    monkeypatch.setattr(PagesManager, "__init__", init)
