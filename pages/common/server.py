"""The dashboard's server: ``app.py`` as an ``st.App`` whose requests pass :class:`pages.common.guard.RequestGuard`
first (sign-in for uploads, downloads and metrics; upload bounds), the page imports warmed in the background and
Streamlit's "missing ScriptRunContext" warning dropped.

``streamlit run app.py`` is the command: it imports ``app.py``, whose ``st.App`` takes :data:`MIDDLEWARE` from here
(importing this module sets up the rest). ``streamlit run pages/common/server.py`` serves the same guarded app; the
installed ``evalcore serve`` starts it (the installed dashboard is a package, this file its fixed path)."""

import ast
import importlib.util
import logging
import sys
import threading
from pathlib import Path

import streamlit as st
from starlette.middleware import Middleware

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # Streamlit puts this file's folder on the path; app.py imports pages.common
    sys.path.insert(0, str(ROOT))

from pages.common.guard import RequestGuard  # noqa: E402

# Streamlit warns "missing ScriptRunContext" each time a thread outside a script run asks for one (worker threads of
# the numerical libraries, the server's own threads); repeated thousands of times it buries the dashboard's own
# messages. Exactly that warning is dropped (a filter: Streamlit resets its loggers' levels when it reads its config).
MISSING_CONTEXT_LOGGER = "streamlit.runtime.scriptrunner_utils.script_run_context"


def _not_missing_context(record: logging.LogRecord) -> bool:
    return "missing ScriptRunContext" not in str(record.msg)


logging.getLogger(MISSING_CONTEXT_LOGGER).addFilter(_not_missing_context)

def page_imports() -> list[str]:
    """The modules ``app.py`` and the pages import (read from their source, not run): what a first visit imports."""
    names = []
    for script in [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py"))]:
        for node in ast.parse(script.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Import):
                names += [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names += [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
    return [name for name in dict.fromkeys(names) if _is_module(name)]


def _is_module(name: str) -> bool:
    """Whether ``name`` is an importable module (``from a import b`` names a module or an attribute of one)."""
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # the parent is a module, not a package: ``name`` is an attribute
        return False


def _warm_imports() -> None:
    """Import the pages' modules (scipy.stats, plotly, DuckDB, ...) in the background after start, so the first
    visitor after a restart does not wait for them (about 3 s of a first permalink open)."""
    for name in page_imports():
        importlib.import_module(name)


threading.Thread(target=_warm_imports, name="evalcore-warm-imports", daemon=True).start()
#: what stands in front of Streamlit's routes, for ``app.py``'s ``st.App`` and this file's
MIDDLEWARE = [Middleware(RequestGuard)]
app = st.App(ROOT / "app.py", middleware=MIDDLEWARE)
