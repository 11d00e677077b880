"""Models page: choose models, tasks, groups, metric and confidence level; see each model's headline number."""

import pandas as pd
import streamlit as st

from evalcore.stats import figures
from evalcore.data.display import literal
from evalcore.stats.intervals import wilson_interval
from evalcore.data.schema import BATTLES, SUMMARY
from evalcore.stats.summaries import mean_table
from pages.common import data_source as ds
from pages.common import render, selection
from pages.common.navigation import ensure_app_navigation

ensure_app_navigation()

st.title("Models")
st.caption("What every view analyses. The choice is kept when you switch pages.")

data = ds.try_active_data()
if data is None:
    st.stop()
kind = data.report.kind
opts = selection.options(data)
sel = selection.current(data)

models = st.multiselect("Models", opts.models, default=list(sel.models), key="w_models")
c1, c2 = st.columns(2)
tasks = c1.multiselect("Tasks (empty = all)", opts.tasks, default=list(sel.tasks), key="w_tasks",
                       disabled=not opts.tasks)
groups = c2.multiselect("Groups (empty = all)", opts.groups, default=list(sel.groups), key="w_groups",
                        disabled=not opts.groups)
c3, c4 = st.columns(2)
metric = c3.radio("Metric", opts.metrics or ["(none)"], horizontal=True, key="w_metric",
                  index=list(opts.metrics).index(sel.metric) if sel.metric in opts.metrics else 0,
                  disabled=not opts.metrics)
level = c4.select_slider("Confidence level of intervals", selection.LEVELS, value=sel.level, key="w_level",
                         format_func=figures.percent)
changed = selection.update(data, models=models, tasks=tasks, groups=groups,
                           metric=metric if opts.metrics else None, level=level)
if changed != sel:
    st.rerun()  # app.py drew the sidebar's selection summary before this page ran: redraw it

rows = selection.apply(data.log, sel, kind)
selection.require(sel, rows, min_models=2 if kind == BATTLES else 1, link=False)  # battles: both models selected
st.subheader("Headline numbers")
if kind == BATTLES:
    st.caption(f"Human-vote win rate per model over the selected battles, with {figures.percent(sel.level)} Wilson intervals.")
    if "outcome" not in rows or rows.count("outcome") == 0:
        st.info("These battles carry no human votes: the win-rate table needs the 'outcome' column.")
        st.stop()
    rows = selection.examples(rows, "The win-rate table", (data.key, sel.models), ("model_a", "model_b", "outcome"))
    if rows is None:
        st.stop()
    long = pd.concat([
        pd.DataFrame({"model": rows["model_a"], "win": 1 - rows["outcome"]}),
        pd.DataFrame({"model": rows["model_b"], "win": rows["outcome"]}),
    ])
    table = mean_table(long.rename(columns={"win": "correct"}), ["model"], "correct", sel.alpha)
    label, what = "human win rate", "win rate"
elif kind == SUMMARY:
    st.caption(f"Accuracy pooled over all examples of the selected tasks, with {figures.percent(sel.level)} Wilson intervals.")
    pooled = rows.groupby("model", as_index=False)[["n", "n_correct"]].sum()
    low, high = wilson_interval(pooled["n_correct"], pooled["n"], sel.alpha)
    table = pooled.assign(estimate=pooled["n_correct"] / pooled["n"], ci_low=low, ci_high=high)
    label, what = "accuracy", "accuracy"
else:
    if sel.metric is None:
        st.info("This log has no labeled metric ('correct' or 'score'), so there is no headline number yet.")
        st.stop()
    interval = "Wilson" if sel.metric == "correct" else "Student-t"
    st.caption(f"Mean {sel.metric} per model over the labeled rows of the selection, with {figures.percent(sel.level)} "
               f"{interval} intervals. Unlabeled rows are counted, not used.")
    table = mean_table(rows, ["model"], sel.metric, sel.alpha)
    if table.attrs["interval_note"]:
        st.info(literal(table.attrs["interval_note"]))
    label, what = ("accuracy", "accuracy") if sel.metric == "correct" else ("mean score", "score")

render.chart(figures.interval_dots(table.assign(label=table["model"]), "label", f"{label.capitalize()} by model",
                                   what, f"{figures.percent(sel.level)} intervals"), f"{label} by model")
render.table(table, f"{label} by model")
