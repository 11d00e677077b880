"""The dashboard's server: ``streamlit run pages/common/server.py`` serves ``app.py`` as an ``st.App`` whose
requests pass :class:`pages.common.guard.RequestGuard` first (sign-in for uploads, downloads and metrics; upload
bounds). ``make run``, the Docker image, ``evalcore serve`` and the browser tests all start this file."""

import logging
import sys
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

app = st.App(ROOT / "app.py", middleware=[Middleware(RequestGuard)])
