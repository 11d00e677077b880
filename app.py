"""evalcore dashboard: entry point and navigation. Start it with ``streamlit run app.py``.

Streamlit reads this file in two ways. ``streamlit run app.py`` finds the ``st.App`` at the end and imports the file
as a module to serve it: every request passes :class:`pages.common.guard.RequestGuard` first (sign-in for uploads,
downloads and metrics; upload bounds), the same server as ``pages/common/server.py``. Each script run of a session
then executes the file as ``__main__``: sign-in, navigation, the sidebar and the page.
"""

import streamlit as st

from pages.common import data_source, hosting, render, run_slots, saved_analysis, selection, session_link, sign_in
from evalcore.data.validation import EvalDataError
from evalcore.data.display import literal

PAGES = [
    st.Page("pages/data.py", title="Data", icon=":material/upload_file:", default=True),
    st.Page("pages/models.py", title="Models", icon=":material/tune:"),
    st.Page("pages/calibration.py", title="Calibration", icon=":material/target:"),
    st.Page("pages/subgroups.py", title="Subgroups", icon=":material/account_tree:"),
    st.Page("pages/leaderboard.py", title="Leaderboard", icon=":material/leaderboard:"),
    st.Page("pages/compare.py", title="Compare", icon=":material/compare_arrows:"),
    st.Page("pages/history.py", title="History", icon=":material/timeline:"),
    st.Page("pages/sampling.py", title="Labeling budget", icon=":material/checklist:"),
    st.Page("pages/label.py", title="Label", icon=":material/label:"),
    st.Page("pages/autoeval.py", title="AI-assisted evaluation", icon=":material/smart_toy:"),
    st.Page("pages/report.py", title="Report", icon=":material/description:"),
    st.Page("pages/workspace.py", title="Workspace", icon=":material/inventory_2:"),
]


def main() -> None:
    """Sign-in, the sidebar (data, level, selection) and the page."""
    # With sign-in configured, nothing (not even the page list) shows before a team member has signed in.
    page = st.navigation(PAGES, position="hidden" if sign_in.configured() and sign_in.email() is None else "sidebar")
    sign_in.require()
    if (warning := hosting.open_instance_warning()) is not None:  # no sign-in, reachable from the network
        st.warning(warning, icon=":material/lock_open:")
    session_link.restore_data()  # a reload (new session): the upload, demo or dataset named in the address
    saved_analysis.follow_link(page.url_path)
    session_link.restore_settings()  # and the selection and level in the address

    with st.sidebar:
        st.markdown("**evalcore** · precise evaluation with scarce labels")
        sign_in.account()
        try:
            data = data_source.active_data()
            st.caption(f"Data: {literal(data.label)}")
            if data.report.design:  # labels from a labeling campaign: its design's estimate is every page's number
                st.caption(literal(data.report.design))
            selection.level_picker(data)
            st.caption(selection.describe(selection.current(data)))
            if data.samples is not None:
                st.caption("Repeated samples: the example is the unit. Every view uses one row per (model, example), "
                           "the mean over its samples: cluster-robust intervals for means, bootstraps that resample "
                           "examples with all their samples.")
            if page.url_path in saved_analysis.VIEWS:
                saved_analysis.offer(page.url_path)
        except EvalDataError:
            lost = data_source.source()["type"] == "lost"
            st.caption("Data: the data this address names is no longer on the server (see the Data page)." if lost else
                       "Data: the upload needs fixing (see the Data page).")
        render.format_picker()

    session_link.publish()  # the address names the data and the settings, so that a reload keeps them
    page.run()
    session_link.publish()  # what the page changed (a page that stops early changes nothing it has not rerun for)


if __name__ == "__main__":  # a session's script run
    # An emoji icon: Streamlit draws it as an inline SVG, where a ":material/...:" favicon is fetched from Google's
    # servers.
    st.set_page_config(page_title="evalcore", page_icon="📊", layout="wide")
    # a few script runs compute at once (pages.common.run_slots): the server keeps answering however many sessions open
    with run_slots.slot(lambda: st.spinner("Many people are using the dashboard: waiting for a turn...")):
        main()
else:  # imported by `streamlit run app.py`: the guarded server of this script
    from pages.common.server import MIDDLEWARE

    app = st.App(__file__, middleware=MIDDLEWARE)
