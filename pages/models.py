"""Models page: choose models, tasks, groups and metric (the confidence level is in the sidebar); see each model's
overall number (:mod:`evalcore.stats.overall`)."""

import pandas as pd
import streamlit as st

from evalcore.stats import figures
from evalcore.data.display import literal
from evalcore.data.schema import BATTLES, SUMMARY
from evalcore.stats import headline, overall
from evalcore.stats.summaries import mean_table
from pages.common import data_source as ds
from pages.common import overall_cache as oc
from pages.common import render, selection
from pages.common.navigation import ensure_app_navigation

ensure_app_navigation()

st.title("Models")
answer_box, chart_box = st.container(), st.container()  # the answer and its chart first, filled below
st.subheader("What every view analyses", anchor=False)
st.caption("The choice is kept when you switch pages.")

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
metric = st.radio("Metric", opts.metrics or ["(none)"], horizontal=True, key="w_metric",
                  index=list(opts.metrics).index(sel.metric) if sel.metric in opts.metrics else 0,
                  disabled=not opts.metrics)
changed = selection.update(data, models=models, tasks=tasks, groups=groups,
                           metric=metric if opts.metrics else None)
if changed != sel:
    st.rerun()  # app.py drew the sidebar's selection summary before this page ran: redraw it

rows = selection.apply(data.log, sel, kind)
selection.require(sel, rows, min_models=2 if kind == BATTLES else 1, link=False)  # battles: both models selected
st.subheader("Details", anchor=False)
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
else:
    if kind != SUMMARY and sel.metric is None:
        if data.report.outputs_only:
            st.info("This log holds the models' outputs only: no label, score or confidence, so there is no value "
                    "to estimate yet. Label the outputs with a comparison campaign of these models on the Label "
                    "page; its labels give each model's accuracy and their difference.")
            st.page_link("pages/label.py", label="Label: start a comparison campaign")
        else:
            st.info("This log has no labeled metric ('correct' or 'score'), so there is no headline number yet.")
        st.stop()
    metric = "correct" if kind == SUMMARY else sel.metric
    over = st.radio("Overall number", list(overall.NAMES), format_func=lambda o: overall.NAMES[o].capitalize()
                    + (" (default)" if o == overall.DEFAULT else ""), horizontal=True, key="w_over",
                    help="Mean over tasks: each task weighs the same, as on the Leaderboard and in the report. "
                         "Pooled over examples: every example weighs the same, so large tasks count more.")
    table = oc.overall((data.key, sel.models, sel.tasks, sel.groups), metric, sel.level, rows, over,
                       summary=kind == SUMMARY)
    several = bool((table["n_tasks"] > 1).any())
    interval = overall.interval_name(metric, data.report.design)
    if over == "tasks" and several:
        interval = (f"normal joined with Wilson at the effective number of examples (per task {interval}; se = "
                    "sqrt(sum of the tasks' se²) / number of tasks)")
    st.caption(f"{'Accuracy' if metric == 'correct' else f'Mean {metric}'} per model, {overall.NAMES[over]}, over "
               f"the labeled rows of the selection, with {figures.percent(sel.level)} {interval} intervals. "
               "Unlabeled rows are counted, not used.")
    if table.attrs["interval_note"]:
        st.info(literal(table.attrs["interval_note"]))
    label, what = ("accuracy", "accuracy") if metric == "correct" else ("mean score", "score")
    label = f"{label} ({overall.NAMES[over]})"

table = table.sort_values("estimate", ascending=False, ignore_index=True)
with answer_box:
    render.answer(headline.lead_sentence(table, sel.level, what))
with chart_box:
    render.chart(figures.interval_dots(table.assign(label=table["model"]), "label",
                                       f"{label.capitalize()} by model, best first", what,
                                       f"{figures.percent(sel.level)} intervals"), f"{label} by model")
render.table(table, f"{label} by model")
