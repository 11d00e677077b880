"""Report page: the stakeholder report (one self-contained HTML file) of the session's data and selection."""

import re

import streamlit as st

from evalcore.report import Settings
from evalcore.stats.glossary import TERMS
from pages.common import data_source as ds
from pages.common import report_cache as rc
from pages.common import render, selection
from pages.common.navigation import ensure_app_navigation

ensure_app_navigation()

st.title("Report")
answer_box = st.container()  # what the report holds and its headline, first; filled below
st.caption("One HTML file to send to people who will not open the dashboard: a summary written from the numbers, "
           "every method the data supports with its intervals and what they mean, and where the numbers come from. "
           "It opens offline in any browser (the charts are embedded) — the same report as `evalcore report`.")

data = ds.try_active_data()
if data is None:
    st.stop()
sel = selection.current(data)
rows = selection.apply(data.log, sel, data.report.kind)
selection.require(sel, rows)

c1, c2, c3 = st.columns([2, 1, 1])
title = c1.text_input("Title", "Evaluation report", max_chars=200, key="rp_title")
seed = int(c2.number_input("Seed", 0, 2**31 - 1, 0, key="rp_seed", help="Seeds every bootstrap and fold."))
n_boot = c3.select_slider("Bootstrap replicates", [200, 500, 1000, 2000], value=1000, key="rp_boot",
                          help=TERMS["bootstrap"])
settings = Settings(level=sel.level, seed=seed, n_boot=n_boot)
scope = f"{data.label}; selection: {selection.describe(sel)}"  # plain text: the report escapes it
n_rows = selection.n_rows(rows)
st.caption(f"Covers {n_rows:,} rows: {selection.describe(sel)} (change it on the Models page). "
           f"Seed {seed}.")

key = (data.key, sel, settings, title)
n_models = len(sel.models)
built = rc.built(key)
if built is None:
    # a small selection's report comes with the first screen; a large one's (seconds of bootstraps) on the button
    small = n_rows <= rc.AT_ONCE_ROWS
    if small or st.button("Build the report", type="primary", icon=":material/description:", key="rp_build"):
        built = rc.build(key, rows, rc.input_files(data), settings, title, scope)
if built is None:
    with answer_box:
        render.answer(f"The report of these {n_rows:,} rows of {n_models} model{'s' if n_models != 1 else ''} "
                      "is built when you ask for it: every method the data support, each bootstrapped, which takes "
                      "a few seconds.")
    st.caption(f"Press Build the report: selections of up to {rc.AT_ONCE_ROWS:,} rows are built as the page opens. "
               "The report is kept while its data, selection and settings stay the same.")
    st.stop()

with answer_box:
    render.answer(rc.sentence(built, n_rows, n_models))
file_name = (re.sub(r"[^0-9A-Za-z]+", "-", title).strip("-").lower() or "evalcore-report") + ".html"
st.download_button("Download the report (HTML)", built.html, file_name=file_name, mime="text/html",
                   type="primary", icon=":material/download:", key="rp_download")
st.caption(f"{len(built.html) / 2**20:.1f} MB · sections: {', '.join(built.sections) or 'none'}.")

st.subheader("Summary", anchor=False)
for line in built.summary or ("This data supports none of the report's methods.",):
    st.text(f"• {line}")
if built.skipped:
    with st.expander("Not in this report"):
        for line in built.skipped:
            st.text(line)
st.caption("Time per section: " + ", ".join(f"{name} {seconds:.1f} s" for name, seconds in built.timings) + ".")
