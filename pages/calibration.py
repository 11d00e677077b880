"""Calibration page: reliability diagrams, ECE with intervals, selective prediction, breakdown by task/group."""

import streamlit as st

from evalcore.stats import figures
from evalcore.calibration import figures as calibration_figures
from evalcore.data.display import literal
from evalcore.data.schema import LOG
from pages.common import calibration_cache as cc
from pages.common import data_source as ds
from pages.common import render, selection
from pages.common.navigation import ensure_app_navigation

ensure_app_navigation()

st.title("Calibration")
st.caption("Does a model's confidence mean what it says? Reliability diagrams and expected calibration error "
           "(ECE), and how accuracy grows when the model may abstain on its least confident examples.")

data = ds.try_active_data()
if data is None:
    st.stop()
if data.lazy is not None:
    sel = selection.current(data)
    rows = selection.apply(data.lazy, sel)
    selection.require(sel, rows)
    if "confidence" not in rows:
        st.info("Calibration needs the model's `confidence`; this dataset has none.")
        st.stop()
    with st.expander("Settings", expanded=False, icon=":material/settings:"):
        s1, s2, s3 = st.columns(3)
        n_bins = s1.slider("Bins (equal-width)", 2, 30, 10, key="cal_bins")
        n_boot = s2.select_slider("Bootstrap replicates", [200, 500, 1000, 2000, 5000], value=500, key="cal_boot")
        seed = int(s3.number_input("Seed", 0, 2**31 - 1, 0, key="cal_seed"))
    table, reliability = cc.in_engine((data.key, sel.models, sel.tasks, sel.groups), n_bins, n_boot, seed,
                                      sel.level, rows)
    st.subheader("Calibration error by model")
    st.caption(f"Computed in the engine. ECE intervals (paired Poisson bootstrap, {n_boot:,} replicates, seed {seed}): "
               f"over repeated samples of this size the interval contains the model's ECE for these bins about "
               f"{figures.percent(sel.level)} of the time; it excludes 0 only when the test of perfect calibration "
               "(`p_value`) rejects. The debiased ECE is median-unbiased.")
    render.chart(figures.interval_dots(table.rename(columns={"debiased": "estimate"}), "model",
                                       "Expected calibration error", "ECE",
                                       f"debiased ECE with {figures.percent(sel.level)} intervals · {n_bins} bins",
                                       reference=0.0), "ECE by model")
    render.table(table, "calibration by model")
    st.subheader("Reliability diagrams")
    names = list(reliability)
    for tab, model in zip(st.tabs([literal(m) for m in names], key="cal_model_tab", on_change="rerun"), names):
        if not tab.open:  # only the open tab's diagram is built and sent to the browser
            continue
        with tab:
            row = table.set_index("model").loc[model]
            ece_text = render.ci(row["ece"], row["ci_low"], row["ci_high"])
            render.chart(calibration_figures.reliability_diagram(reliability[model], model, sel.level, ece_text),
                         f"reliability {model}")
            render.table(reliability[model], f"reliability table {model}")
    st.info("Selective prediction and the breakdown by task or group need every example in memory: this dataset is "
            "analysed in the engine, so they are not shown.")
    st.stop()
frame = data.frame
missing = [c for c in ("correct", "confidence") if c not in frame]
if data.report.kind != LOG or missing:
    st.info("Calibration needs a per-example log with a 0/1 `correct` column and the model's `confidence` "
            f"(missing here: {', '.join(missing) or 'a per-example log'}). Load the synthetic or scikit-learn demo, "
            "or map those columns on the Data page.")
    st.page_link("pages/data.py", label="Go to the Data page", icon=":material/upload_file:")
    st.stop()

sel = selection.current(data)
rows = selection.apply(frame, sel)
selection.require(sel, rows)
usable = rows[rows["correct"].notna() & rows["confidence"].notna()]
n_unlabeled = int(rows["correct"].isna().sum())
n_no_conf = int((rows["correct"].notna() & rows["confidence"].isna()).sum())
st.caption(f"Using {len(usable):,} labeled rows with a confidence from {len(sel.models)} model(s). Left out: "
           f"{n_unlabeled:,} unlabeled rows (no `correct`), {n_no_conf:,} labeled rows without a confidence.")
if usable.empty:
    st.warning("No labeled row with a confidence in the selection: widen the selection on the Models page.")
    st.stop()

with st.expander("Settings", expanded=False, icon=":material/settings:"):
    s1, s2, s3, s4 = st.columns(4)
    n_bins = s1.slider("Bins", 2, 30, 10, key="cal_bins")
    binning = s2.radio("Binning", ["uniform", "quantile"], horizontal=True, key="cal_binning",
                       help="uniform: equal-width bins on [0, 1]; quantile: bins with equal numbers of examples.")
    n_boot = s3.select_slider("Bootstrap replicates", [200, 500, 1000, 2000, 5000], value=500, key="cal_boot")
    seed = int(s4.number_input("Seed", 0, 2**31 - 1, 0, key="cal_seed"))
    target = st.slider("Coverage for 'accuracy at coverage'", 0.05, 1.0, 0.8, 0.05, key="cal_coverage")

params = cc.Params(n_bins=n_bins, binning=binning, n_boot=n_boot, seed=seed, level=sel.level)
models = [m for m in sel.models if (usable["model"] == m).any()]
key = (data.key, sel.models, sel.tasks, sel.groups)
per_model = cc.per_model(key, params, models, usable)

st.subheader("Calibration error by model")
st.caption(f"ECE intervals ({n_boot:,} bootstrap replicates, seed {seed}): over repeated samples of this size, the "
           f"interval contains the model's population ECE for these same bins about {figures.percent(sel.level)} of "
           "the time. It excludes 0 only when a test of perfect calibration (labels redrawn from the confidences, "
           "p-value in `p_calibrated`) rejects, and nearly always when it does: an interval reaching 0 means no "
           "measurable miscalibration. The debiased ECE is median-unbiased (the true ECE is above it half the time). "
           "Accuracy: Wilson interval. Area under the selective curve: bootstrap percentile interval.")
summary = cc.summary_table(per_model, target)
ece_rows = summary.rename(columns={"ece_debiased": "estimate", "ece_low": "ci_low", "ece_high": "ci_high"})
render.chart(figures.interval_dots(ece_rows, "model", "Expected calibration error", "ECE",
                                   f"debiased ECE with {figures.percent(sel.level)} intervals · {n_bins} {binning} bins",
                                   reference=0.0), "ECE by model")
render.table(summary, "calibration summary")

st.subheader("Reliability diagrams")
st.caption(f"Accuracy against mean confidence per bin; bands are {figures.percent(sel.level)} Wilson intervals; bars count the "
           "examples per bin. Empty bins are listed in the table, not drawn.")
for tab, model in zip(st.tabs([literal(m) for m in models], key="cal_model_tab", on_change="rerun"), models):
    if not tab.open:  # only the open tab's diagram is built and sent to the browser
        continue
    with tab:
        res = per_model[model]
        ece_text = render.ci(res.ece.ece, res.ece.ci_low, res.ece.ci_high)
        render.chart(calibration_figures.reliability_diagram(res.table, model, sel.level, ece_text), f"reliability {model}")
        render.table(res.table, f"reliability table {model}")

st.subheader("Selective prediction")
st.caption(f"Selective accuracy among the examples whose confidence is at least the threshold, against the "
           f"fraction answered (coverage); bands are pointwise {figures.percent(sel.level)} Wilson intervals. A well-ranked "
           "model's curve falls as coverage grows.")
render.chart(calibration_figures.selective_curves({m: per_model[m].curve for m in models}, sel.level), "selective prediction")

st.subheader("Breakdown")
by = st.radio("Break ECE down by", ["task", "category", "group"], horizontal=True, key="cal_by")
cells = usable.groupby(["model", by], observed=True).size()
if len(cells) > 400:
    st.info(f"{len(cells)} (model, {by}) cells: choose fewer models or {by}s on the Models page to break down.")
else:
    breakdown = cc.breakdown(key, params, by, usable)
    st.caption(f"Debiased ECE per (model, {by}) with {figures.percent(sel.level)} intervals ({n_boot:,} replicates, seed "
               f"{seed}); small cells have wide intervals.")
    render.chart(figures.interval_dots(breakdown.rename(columns={"debiased": "estimate"}), by, f"ECE by {by}", "ECE",
                                       f"debiased ECE with {figures.percent(sel.level)} intervals", by="model",
                                       reference=0.0),
                 f"ECE by {by}")
    render.table(breakdown, f"ECE by {by}")
