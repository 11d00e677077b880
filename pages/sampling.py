"""Labeling-budget page: stratify on the proxy, allocate the budget, pick the examples, estimate after labeling."""

import numpy as np
import pandas as pd
import streamlit as st
from scipy.stats import norm

from evalcore.stats import figures
from evalcore.sampling import designs as sampling
from evalcore.sampling import figures as sampling_figures
from evalcore.sampling.annotation import read_labels
from evalcore.data.validation import EvalDataError
from evalcore.data.display import literal
from evalcore.data.schema import LOG
from pages.common import data_source as ds
from pages.common import render, selection
from pages.common import sampling_cache as sc
from pages.common.subgroups_cache import feature_screen
from pages.common.navigation import ensure_app_navigation

ensure_app_navigation()

ESTIMATORS = {"ht": "HT (plain stratified mean)", "df": "DF (difference estimator, proxy-assisted)",
              "df_tuned": "DF with tuned coefficient (PPI++-style)"}

st.title("Labeling budget")
st.caption("A large pool with model predictions, labels for only n examples: which examples to label, how much "
           "precision each design buys, and the estimate with its interval once the labels are back "
           "(Fogliato et al., stratification on predicted performance).")

data = ds.try_active_data()
if data is None:
    st.stop()
sel = selection.current(data)
kind = data.report.kind
sources = [s for s in ("confidence", "proxy") if s in data.log and data.log.count(s)] if kind == LOG else []
if kind != LOG or "correct" not in data.log or not sources:
    st.info("This page needs a per-example log with 0/1 correctness (`correct`, labeled or not) and a proxy of it: "
            "the model's `confidence` or a surrogate's `proxy` column. Load a demo or upload such a log on the "
            "Data page.")
    st.stop()
rows = selection.apply(data.log, sel, kind)
selection.require(sel, rows)
examples = selection.examples(rows, "Drawing the sample to label, uploading the labels and the Monte Carlo check",
                              (data.key, sel.models, sel.tasks, sel.groups))
if examples is None:  # beyond the memory bound: the designs' predicted efficiency from a proxy histogram
    c1, c2, c3 = st.columns(3)
    model = c1.selectbox("Model", list(sel.models), key="sp_model")
    source = c2.selectbox("Proxy of correctness", sources, format_func=sc.PROXY_SOURCES.get, key="sp_proxy")
    n_strata = c3.slider("Strata", 1, 20, 10, key="sp_strata")
    try:
        curves = sc.from_histogram((data.key, sel.models, sel.tasks, sel.groups), model, source, n_strata, rows)
    except EvalDataError as exc:
        st.error(literal(exc))
        st.stop()
    st.caption("From a histogram of the proxy (4,096 bins; strata: optimal 1-D k-means between bins). Predicted, "
               "not measured: the relative efficiency assumes the proxy is calibrated; below 1 is more precise than "
               "a simple random sample of the same size.")
    render.chart(sampling_figures.efficiency_curves(curves), "relative efficiency by budget")
    render.table(curves, "predicted design efficiency")
    st.stop()
if "confidence" in sources:
    sources.append("calibrated")
rows = examples
c1, c2, c3 = st.columns(3)
model = c1.selectbox("Model", [m for m in sel.models if (rows["model"] == m).any()], key="sp_model")
tasks = sorted(rows.loc[rows["model"] == model, "task"].astype(str).unique())
task = c2.selectbox("Task", ["all tasks", *tasks], key="sp_task") if len(tasks) > 1 else "all tasks"
source = c3.selectbox("Proxy of correctness", sources, format_func=sc.PROXY_SOURCES.get, key="sp_proxy")
with st.expander("Settings", icon=":material/settings:"):
    s0, s1, s2 = st.columns(3)
    features = tuple(feature_screen((data.key, sel.models, sel.tasks, sel.groups), "correct", rows).features)
    bases = ["proxy"] + (["features"] if features else []) + (
        ["groups"] if rows["group"].nunique() > 1 else [])
    basis = s0.selectbox("Strata from", bases, format_func=sc.STRATA_BASES.get, key="sp_basis")
    n_strata = s1.slider("Strata", 1, 20, 10, key="sp_strata", disabled=basis == "groups",
                         help="More strata usually mean more precision (the paper's advice) but need ≥ 2 labels "
                              "each; 1 = simple random sampling.")
    seed = int(s2.number_input("Seed", 0, 2**31 - 1, 0, key="sp_seed"))
level, alpha = sel.level, sel.alpha  # the level chosen once, in the sidebar

key = (data.key, sel.models, sel.tasks, sel.groups, model, task, source)
skey = (*key, basis)  # what depends on the strata
try:
    pool = sc.pool(key, model, None if task == "all tasks" else task, source, seed, features, rows)
    if len(pool) < 2:
        raise EvalDataError(f"The pool of {model} ({task}) has {len(pool)} example(s): sampling needs at least 2 "
                            "(and an interval at least 2 labels); choose another model or task.")
    strata = sc.strata(key, basis, n_strata, seed, pool)
except EvalDataError as exc:
    st.error(literal(exc))
    st.stop()
n_pool, labeled = len(pool), int(pool["z"].notna().sum())
fully_labeled = labeled == n_pool
st.caption(f"Pool: {n_pool:,} examples of {literal(model)} ({literal(task)}); {labeled:,} already labeled"
           f"{' (all: the Monte Carlo check below is available)' if fully_labeled else ''}. Proxy: "
           f"{sc.PROXY_SOURCES[source]}. {len(np.unique(strata))} strata from {sc.STRATA_BASES[basis]}. Seed {seed}.")

if source == "calibrated":
    st.caption("Calibrated on the rows that already have a label, cross-fitted: no example's calibrated value uses "
               "its own label. For a strictly unbiased DF estimate, label new examples rather than re-using the "
               "calibration rows.")
budget = int(st.number_input("Labels you can afford (budget n)", 2, n_pool, min(500, max(2, n_pool // 5)),
                             key="sp_budget"))

st.subheader("Strata")
render.chart(sampling_figures.strata_histogram(pool["proxy"].to_numpy(), strata, basis=sc.STRATA_BASES[basis]),
             "strata on the proxy")

st.subheader("Budget allocation")
try:
    alloc = sc.allocations(skey, n_strata, seed, budget, pool, strata)
except EvalDataError as exc:
    st.error(literal(exc))
    st.stop()
st.caption("Proportional: n_h ∝ N_h. Neyman: n_h ∝ N_h·S_h, with S_h the proxy's plug-in spread "
           "sqrt(p̄_h(1 − p̄_h)) (actual)" + (" or the labels' own spread (ideal)" if fully_labeled else "") +
           ". Integer budgets by largest remainder, at least 2 per stratum.")
render.chart(sampling_figures.allocation_bars(alloc.drop(columns=["proxy_mean"])), "budget per stratum")
render.table(alloc, "budget per stratum")

st.subheader("Predicted precision")
low = 2 * len(np.unique(strata))
grid = np.unique(np.geomspace(low, max(low + 1, min(n_pool // 2, max(5000, 2 * budget))), 50).astype(int))
curves = sc.efficiency(skey, n_strata, seed, tuple(int(b) for b in grid), pool, strata)
st.caption("Relative efficiency = predicted MSE / MSE of the plain average of a simple random sample (SRS + HT), "
           "with the proxy in place of the unknown labels (the paper's eqs. 3–5 and 8). 0.5 = the same precision "
           "with half the labels; it is only as good as the proxy's calibration.")
render.chart(sampling_figures.efficiency_curves(curves), "relative efficiency by budget")
at_budget = sc.efficiency(skey, n_strata, seed, (budget,), pool, strata)
ranges = sc.efficiency_range(skey, n_strata, seed, (budget,), pool, strata)
at_budget = at_budget.assign(predicted_se=np.sqrt(at_budget["predicted_mse"]),
                             efficiency_low=ranges["low"].to_numpy(), efficiency_high=ranges["high"].to_numpy())
render.table(at_budget, "predicted precision at the budget")
st.markdown(
    "What each number rests on:\n"
    "- **relative_efficiency, predicted_mse, predicted_se** (and the curves above): the proxy is *calibrated* — "
    "among examples with proxy p, a share p is correct. Unverified for a raw confidence.\n"
    "- **efficiency_low – efficiency_high**: the same designs when the true accuracy curve is any "
    "sigmoid(a + b·logit(p)) with a from −2 to 2 and b from 0 (the proxy says nothing) to 2 (it understates the "
    "differences): the range a miscalibrated proxy allows. Nothing is promised below efficiency_low.\n"
    "- **srs + ht = 1**: the reference, by definition.\n"
    "- **proportional** is never worse than simple random sampling in expectation, however bad the proxy "
    "(efficiency_high ≈ 1); **Neyman** and **DF** can be much worse when the proxy is off — prefer proportional "
    "until the proxy is checked against labels (e.g. calibrate it on a first batch of labels: proxy "
    "*calibrated*).")
w1, w2 = st.columns(2)
width = w1.number_input("Target interval width (full width, as a fraction)", 0.002, 0.5, 0.05, 0.005,
                        format="%.3f", key="sp_width")
probability = w2.select_slider("Chance that one sample meets it", [0.5, 0.8, 0.9, 0.95, 0.99], value=0.9,
                               format_func=figures.percent, key="sp_meet")
needed = sc.needed(skey, n_strata, seed, float(width), alpha, float(probability), pool, strata)
plan_basis = needed.attrs["basis"]
st.caption(
    f"**labels_needed**: labels that give a {figures.percent(level)} interval no wider than {width:.3f} "
    f"(± {width / 2:.3f}) on average; **meets_target**: the chance that one sample of that size does (under the least "
    "favourable calibration the plan assumes; usually higher); "
    f"**labels_for_probability**: labels for a {figures.percent(probability)} chance. "
    + ("Planned from the labels at hand: the proxy recalibrated on them (Platt, sigmoid(a + b·logit p)), taking the "
       "least favourable (a, b) of their 90% confidence region, so a few labels do not make the plan optimistic. "
       if plan_basis == "labels" else
       f"No usable labels at hand (fewer than {sampling.MIN_PILOT}, or all alike): planned for the worst miscalibration "
       "of the range above, "
       "so honest but costly — label a pilot sample (e.g. 200 at random) and add its labels to the log to plan "
       "with fewer. ")
    + "labels_needed_calibrated trusts the proxy's calibration (too few labels when it is off: up to 1.27 × "
      "the target width with ImageNet-X's raw confidence); labels_needed_worst is the worst case.")
render.table(needed, "labels needed")

st.subheader("Examples to label")
design = st.radio("Design", list(sc.DESIGNS), format_func=sc.DESIGNS.get, index=1, horizontal=True,
                  key="sp_design", help="Default: stratified with proportional allocation (the paper's "
                                        "recommendation; never worse than simple random sampling in expectation). "
                                        "Neyman pays off only if the proxy is calibrated.")
try:
    chosen, used = sc.sample(skey, n_strata, seed, budget, design, pool, strata)
except EvalDataError as exc:
    st.error(literal(exc))
    st.stop()
picked = pool.iloc[chosen][["example_id", "proxy"]].assign(stratum=used[chosen] + 1)
st.caption(f"{len(picked):,} examples drawn at random within each stratum (seed {seed}); send this list to the "
           "annotators, then upload their labels below.")
render.table(picked, "examples to label")

st.subheader("Estimate after labeling")
upload = st.file_uploader("Labels from the annotators (CSV with example_id and correct)", key="sp_labels",
                          type=["csv", "tsv", "txt", "gz", "parquet"])
labels = pool["z"].iloc[chosen].to_numpy(dtype=float)
if upload is not None:
    try:
        given = read_labels(ds.read_upload(upload.getvalue()), picked["example_id"])
    except EvalDataError as exc:
        st.error(literal(exc))
        st.stop()
    from_file = picked["example_id"].map(given).to_numpy(dtype=float)
    labels = np.where(np.isfinite(from_file), from_file, labels)
missing = int(np.isnan(labels).sum())
if missing:
    st.info(f"{missing:,} of the {len(picked):,} selected examples have no label yet: download the list above, "
            "have them labeled, and upload the labels here.")
else:
    z = pool["z"].to_numpy(dtype=float).copy()
    z[chosen] = labels
    try:
        ests = pd.DataFrame([
            {"estimator": name, "estimate": e.estimate, "se": e.se, "ci_low": e.ci_low, "ci_high": e.ci_high,
             "coefficient": e.coefficient, "n": e.n}
            for name in ESTIMATORS
            for e in [sampling.estimate(z, chosen, used, proxy=pool["proxy"].to_numpy(), estimator=name,
                                        alpha=alpha)]])
    except EvalDataError as exc:
        st.error(literal(exc))
        st.stop()
    truth = float(np.mean(pool["z"])) if fully_labeled else None
    st.caption(f"{figures.percent(level)} normal intervals from the design-based variance with the finite-population "
               f"correction: over repeated draws of the sample, {figures.percent(level)} of such intervals contain "
               "the pool's accuracy." + (f" Dotted line: the pool's true accuracy {truth:.4f}." if truth else ""))
    render.chart(figures.interval_dots(ests.assign(label=ests["estimator"].map(ESTIMATORS)), "label",
                                       f"Accuracy of {model}", "accuracy", f"{sc.DESIGNS[design]}, n = {len(picked)}",
                                       reference=truth), "estimates after labeling")
    render.table(ests, "estimates after labeling")

if fully_labeled:
    st.subheader("Monte Carlo check")
    st.caption("The pool is fully labeled, so repeated sampling shows each design's real MSE and interval coverage "
               "(the paper's Figure 1 and Table 1), next to the predictions above. Runs on all cores.")
    choices = [b for b in (50, 100, 200, 500, 1000, 2000, 5000) if 2 * len(np.unique(strata)) <= b <= n_pool // 2]
    if not choices:
        st.info(f"The Monte Carlo check needs a pool of at least 100 examples (budgets of 50 or more labels, at "
                f"most half the pool); this pool has {n_pool:,}.")
        st.stop()
    m1, m2 = st.columns(2)
    reps = m1.select_slider("Samples per design and budget", [200, 500, 1000, 2000, 5000], value=1000,
                            key="sp_reps")
    budgets = m2.multiselect("Budgets", choices, default=[b for b in (100, 500, 1000) if b in choices] or choices[:3],
                             key="sp_mc_budgets")
    if st.button("Run the Monte Carlo check", icon=":material/science:", key="sp_mc_run") and budgets:
        st.session_state["sp_mc"] = (skey, n_strata, seed, tuple(sorted(budgets)), reps, alpha)
    spec = st.session_state.get("sp_mc")
    if spec is not None and spec[0] == skey and spec[1:] == (n_strata, seed, tuple(sorted(budgets)), reps, alpha):
        try:
            mc = sc.monte_carlo(*spec, pool, strata)
        except EvalDataError as exc:
            st.error(literal(exc))
            st.stop()
        z_crit = norm.ppf(1 - alpha / 2)
        st.caption(f"{reps:,} samples per design and budget, seed {seed}. Bands: ±2 Monte Carlo standard errors of "
                   f"the MSE; coverage of the {figures.percent(level)} intervals (z = {z_crit:.2f}) should be near "
                   f"{figures.percent(level)}.")
        render.chart(sampling_figures.monte_carlo_curves(mc, level), "monte carlo mse")
        shown = sc.efficiency_range(skey, n_strata, seed, tuple(sorted(budgets)), pool, strata)
        shown = shown.drop(columns="predicted").rename(columns={"low": "predicted_low", "high": "predicted_high"})
        render.table(mc.merge(shown, on=["budget", "design", "estimator"], how="left"), "monte carlo results")
        st.caption("relative_efficiency, mse, coverage: measured on this pool by repeated sampling. "
                   "predicted_*: from the proxy alone, as above (calibrated proxy; low–high under miscalibration).")
