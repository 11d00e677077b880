"""The dashboard's server: ``streamlit run pages/common/server.py`` serves ``app.py`` as an ``st.App`` whose
requests pass :class:`pages.common.guard.RequestGuard` first (sign-in for uploads, downloads and metrics; upload
bounds). ``make run``, the Docker image, ``evalcore serve`` and the browser tests all start this file."""

import sys
from pathlib import Path

import streamlit as st
from starlette.middleware import Middleware

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # Streamlit puts this file's folder on the path; app.py imports pages.common
    sys.path.insert(0, str(ROOT))

from pages.common.guard import RequestGuard  # noqa: E402

app = st.App(ROOT / "app.py", middleware=[Middleware(RequestGuard)])
