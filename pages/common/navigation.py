"""Make sure every run goes through app.py's ``st.navigation``.

Streamlit treats an app with a ``pages/`` folder as a legacy multipage app until ``st.navigation`` has been
called once in the process. On a freshly started server, a first visitor who opens a deep link (e.g.
``/calibration``) therefore runs that page script directly, with Streamlit's automatic sidebar and without
app.py's page config and sidebar. Each page calls :func:`ensure_app_navigation` first: in that situation it
switches the process to ``st.navigation`` mode and reruns, so app.py builds the navigation and runs the page.
"""

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager


def ensure_app_navigation() -> None:
    """Rerun through app.py when Streamlit is still in legacy pages-folder mode."""
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()
