"""Calibration page: reliability diagrams, ECE with intervals, selective prediction, breakdown by task/group."""

import streamlit as st

from evalcore.calibration import answer
from evalcore.stats import figures
from evalcore.calibration import figures as calibration_figures
from evalcore.data.display import literal
from evalcore.data.schema import LOG
from evalcore.stats.glossary import PAPERS, TERMS
from pages.common import calibration_cache as cc
from pages.common import data_source as ds
from pages.common import overall_cache as oc
from pages.common import render, selection
from pages.common.navigation import ensure_app_navigation

ensure_app_navigation()

st.title("Calibration")
answer_box, chart_box = st.container(), st.container()  # the answer and its chart first, filled below
st.caption("Does a model's confidence mean what it says? Expected calibration error (ECE) and reliability diagrams, "
           "and how accuracy grows when the model may abstain on its least confident examples (selective "
           f"prediction); definitions as in {PAPERS['calibration']}.")

data = ds.try_active_data()
if data is None:
    st.stop()
missing = [c for c in ("correct", "confidence") if data.report.kind != LOG or c not in data.log]
if data.report.kind != LOG or missing:
    st.info("Calibration needs a per-example log with a 0/1 `correct` column and the model's `confidence` "
            f"(missing here: {', '.join(missing) or 'a per-example log'}). Load the synthetic or scikit-learn demo, "
            "or map those columns on the Data page.")
    st.page_link("pages/data.py", label="Go to the Data page", icon=":material/upload_file:")
    st.stop()

sel = selection.current(data)
rows = selection.apply(data.log, sel)
selection.require(sel, rows)
with st.expander("Settings", expanded=False, icon=":material/settings:"):
    s1, s2, s3 = st.columns(3)
    n_bins = s1.slider("Bins (equal-width)", 2, 30, 10, key="cal_bins")
    n_boot = s2.select_slider("Bootstrap replicates", [200, 500, 1000, 2000, 5000], value=500, key="cal_boot",
                              help=TERMS["bootstrap"])
    seed = int(s3.number_input("Seed", 0, 2**31 - 1, 0, key="cal_seed"))
    target = st.slider("Coverage for 'accuracy at coverage'", 0.05, 1.0, 0.8, 0.05, key="cal_coverage")
params = cc.Params(n_bins=n_bins, n_boot=n_boot, seed=seed, level=sel.level)
key = (data.key, sel.models, sel.tasks, sel.groups)
table, reliability = cc.by_model(key, params, rows)
if table.empty:
    st.warning("No labeled row with a confidence in the selection: widen the selection on the Models page.")
    st.stop()
labeled = rows.count("correct")
st.caption(f"Using {int(table['n'].sum()):,} labeled rows with a confidence from {len(table)} model(s). Left out: "
           f"{rows.n_rows - labeled:,} unlabeled rows (no `correct`), {labeled - int(table['n'].sum()):,} labeled rows "
           "without a confidence.")

ranked = answer.ranked(table)
with answer_box:
    render.answer(answer.sentence(table, sel.level))
with chart_box:
    render.chart(figures.interval_dots(ranked.rename(columns={answer.ESTIMATE: "estimate"}), "model",
                                       "Expected calibration error by model, best calibrated first", "ECE",
                                       f"debiased ECE with {figures.percent(sel.level)} intervals · {n_bins} bins",
                                       reference=0.0), "ECE by model")

st.subheader("Calibration error by model", anchor=False, help=TERMS["ECE"])
st.caption(f"ECE intervals (paired bootstrap, {n_boot:,} replicates, seed {seed}): over repeated samples of this size, "
           f"the interval contains the model's ECE for these bins about {figures.percent(sel.level)} of the time. It "
           "excludes 0 only when a test of perfect calibration (`p_value`) rejects: an interval reaching 0 means no "
           "measurable miscalibration. The debiased ECE is median-unbiased (the true ECE is above it half the time).")
with st.expander("ECE table by model (plug-in and debiased ECE, intervals, calibration test, accuracy and mean "
                 "confidence)"):
    render.table(table, "calibration by model")

st.subheader("Reliability diagrams", anchor=False, help=TERMS["reliability diagram"])
st.caption(f"Accuracy against mean confidence per bin; bands are {figures.percent(sel.level)} Wilson intervals; bars "
           "count the examples per bin. Empty bins are listed in the table, not drawn.")
models = list(reliability)
first = oc.leader(key, "correct", sel.level, rows, models)  # the tabs open on the selection's leader, as the report
models = [first, *[m for m in models if m != first]]
for tab, model in zip(st.tabs([literal(m) for m in models], key="cal_model_tab", on_change="rerun"), models):
    if not tab.open:  # only the open tab's diagram is built and sent to the browser
        continue
    with tab:
        row = table.set_index("model").loc[model]
        ece_text = render.ci(row["ece"], row["ci_low"], row["ci_high"])
        render.chart(calibration_figures.reliability_diagram(reliability[model], model, sel.level, ece_text),
                     f"reliability {model}")
        with st.expander(f"Bins of {literal(model)} (count, mean confidence, accuracy and its interval, gap)"):
            render.table(reliability[model], f"reliability table {model}")

# Selective prediction and the breakdown bootstrap every example: with the first screen on small logs, when opened
# on large ones (cc.AT_ONCE), so a large upload's first screen is the answer, its chart and the diagrams.
n_usable = int(table["n"].sum())
now = cc.at_once(n_usable, params)
later = "" if now else (f" Computed when opened: {n_usable:,} examples x {n_boot:,} bootstrap replicates take a "
                        "few seconds.")


_fetched: list = []


def usable_examples():
    """The selection's labeled examples with a confidence (fetched once per run, cached), or None after saying why
    not (once)."""
    if not _fetched:
        examples = selection.examples(rows, "Selective prediction and the breakdown by task or group", key,
                                      ("model", "task", "category", "group", "correct", "confidence"))
        _fetched.append(None if examples is None else
                        examples[examples["correct"].notna() & examples["confidence"].notna()])
    return _fetched[0]


st.subheader("Selective prediction", anchor=False, help=TERMS["selective prediction"])
st.caption("Accuracy when the model answers only its most confident examples, against the share answered "
           "(coverage), and the area under that curve with its interval." + later)
selective_box = st.expander("Selective-prediction curves and the area under them", expanded=now,
                            on_change="rerun", key="cal_selective" + ("" if now else "_on_demand"))
if selective_box.open:
    with selective_box:
        usable = usable_examples()
        if usable is not None:
            per_model = cc.selective(key, params, models, usable)
            st.caption(f"Selective accuracy among the examples whose confidence is at least the threshold, against "
                       f"the fraction answered (coverage); bands are pointwise {figures.percent(sel.level)} intervals "
                       "of the accuracy at that coverage (Wilson's, widened for the threshold being a quantile of "
                       "these data). A well-ranked model's curve falls as coverage grows.")
            render.chart(calibration_figures.selective_curves({m: per_model[m].curve for m in models}, sel.level),
                         "selective prediction")
            st.caption(f"Area under the selective-accuracy curve (higher is better; one minus the area under the "
                       f"risk-coverage curve, AURC): bootstrap percentile interval ({n_boot:,} replicates, seed "
                       f"{seed}); accuracy at coverage {figures.percent(target)}: the curve's interval at that "
                       "coverage.", help=TERMS["AURC"])
            render.table(cc.selective_table(per_model, target), "selective prediction")

st.subheader("Breakdown", anchor=False, help=TERMS["ECE"])
st.caption("The ECE of each model within each task, category or group." + later)
breakdown_box = st.expander("ECE by task, category or group", expanded=now, on_change="rerun",
                            key="cal_breakdown" + ("" if now else "_on_demand"))
if breakdown_box.open:
    with breakdown_box:
        by = st.radio("Break ECE down by", ["task", "category", "group"], horizontal=True, key="cal_by")
        usable = usable_examples()
        if usable is not None:
            cells = usable.groupby(["model", by], observed=True).size()
            if len(cells) > 400:
                st.info(f"{len(cells)} (model, {by}) cells: choose fewer models or {by}s on the Models page to break "
                        "down.")
            else:
                breakdown = cc.breakdown(key, params, by, usable)
                st.caption(f"Debiased ECE per (model, {by}) with {figures.percent(sel.level)} intervals "
                           f"({n_boot:,} replicates, seed {seed}); small cells have wide intervals.")
                render.chart(figures.interval_dots(breakdown.rename(columns={"debiased": "estimate"}), by,
                                                   f"ECE by {by}", "ECE",
                                                   f"debiased ECE with {figures.percent(sel.level)} intervals",
                                                   by="model", reference=0.0),
                             f"ECE by {by}")
                render.table(breakdown, f"ECE by {by}")
