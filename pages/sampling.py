"""Labeling-budget page: how many labels the question needs (the answer first), then the strata, the budget per
stratum, the examples to label and the estimate after labeling."""

import numpy as np
import pandas as pd
import streamlit as st
from scipy.stats import norm

from evalcore.stats import figures, headline
from evalcore.stats.glossary import PAPERS, TERMS
from evalcore.sampling import designs as sampling
from evalcore.sampling import figures as sampling_figures
from evalcore.sampling import plan
from evalcore.sampling.annotation import read_labels
from evalcore.data.validation import EvalDataError
from evalcore.data.display import literal
from evalcore.data.schema import LOG
from pages.common import data_source as ds
from pages.common import overall_cache as oc
from pages.common import render, selection
from pages.common import sampling_cache as sc
from pages.common.subgroups_cache import feature_screen
from pages.common.navigation import ensure_app_navigation

ensure_app_navigation()

ESTIMATORS = {"ht": "plain average (strata weighted by size)", "df": "proxy-assisted average",
              "df_tuned": "proxy-assisted average, tuned weight"}
#: the words of this page, each with its glossary line as a tooltip
WORDS = {"SRS": "simple random sampling", "stratified": "stratified sampling", "proportional": "proportional",
         "Neyman": "Neyman allocation", "Horvitz-Thompson": "plain average", "proxy": "proxy"}


def words_row() -> None:
    """The page's methods by name, each with its one-line explanation as a tooltip."""
    for column, (term, word) in zip(st.columns(len(WORDS)), WORDS.items()):
        column.caption(word, help=TERMS[term])


st.title("Labeling budget")
answer_box, chart_box = st.container(), st.container()  # the answer and its chart first, filled below
st.caption("A large pool with the model's predictions and labels for only some examples: how many labels an "
           f"estimate of accuracy needs, which examples to label, and the estimate once the labels are back. Method: "
           f"{PAPERS['sampling']}.")

OPENS_ON = "The page opens on the selection's leading model (the best overall accuracy), as the report does."


def opening(models: list[str], rows) -> int:
    """Where the model picker opens: the selection's leader among ``models`` (the report's labeling section plans
    for the same model)."""
    return models.index(oc.leader((data.key, sel.models, sel.tasks, sel.groups), "correct", sel.level, rows, models))


data = ds.try_active_data()
if data is None:
    st.stop()
sel = selection.current(data)
kind = data.report.kind
sources = [s for s in plan.SOURCES if s in data.log and data.log.count(s)] if kind == LOG else []
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
    model = c1.selectbox("Model", list(sel.models), index=opening(list(sel.models), rows), key="sp_model",
                         help=OPENS_ON)
    source = c2.selectbox("Proxy of correctness", sources, format_func=sc.PROXY_SOURCES.get, key="sp_proxy")
    n_strata = c3.slider("Strata", 1, 20, plan.N_STRATA, key="sp_strata")
    try:
        curves = sc.from_histogram((data.key, sel.models, sel.tasks, sel.groups), model, source, n_strata, rows)
    except EvalDataError as exc:
        st.error(literal(exc))
        st.stop()
    st.caption("From a histogram of the proxy (4,096 bins; strata: optimal 1-D k-means between bins). Predicted, "
               "not measured: the relative efficiency (squared error over that of a simple random sample of the "
               "same size) assumes the proxy is calibrated; below 1 is more precise than a simple random sample.")
    row = curves[(curves["design"] == "proportional") & (curves["estimator"] == "ht")]
    if len(row):
        row = row.iloc[len(row) // 2]
        with answer_box:
            render.answer(f"Stratified by {sc.PROXY_SOURCES[source]} (proportional allocation), {model}'s accuracy "
                          f"needs about {headline.number(row['relative_efficiency'])} times the labels of simple "
                          f"random sampling for the same precision (predicted at {headline.count(row['budget'])} "
                          "labels, if the proxy is calibrated).")
    with chart_box:
        render.chart(sampling_figures.efficiency_curves(curves), "relative efficiency by budget")
        words_row()
    render.table(curves, "predicted design efficiency")
    st.stop()
if "confidence" in sources:
    sources.append("calibrated")
rows = examples
c1, c2, c3 = st.columns(3)
present = [m for m in sel.models if (rows["model"] == m).any()]
model = c1.selectbox("Model", present, index=opening(present, rows), key="sp_model", help=OPENS_ON)
tasks = sorted(rows.loc[rows["model"] == model, "task"].astype(str).unique())
task = c2.selectbox("Task", ["all tasks", *tasks], key="sp_task") if len(tasks) > 1 else "all tasks"
source = c3.selectbox("Proxy of correctness", sources, format_func=sc.PROXY_SOURCES.get, key="sp_proxy")
with st.expander("Settings", icon=":material/settings:"):
    s0, s1, s2 = st.columns(3)
    features = tuple(feature_screen((data.key, sel.models, sel.tasks, sel.groups), "correct", rows).features)
    bases = ["proxy"] + (["features"] if features else []) + (
        ["groups"] if rows["group"].nunique() > 1 else [])
    basis = s0.selectbox("Strata from", bases, format_func=sc.STRATA_BASES.get, key="sp_basis")
    n_strata = s1.slider("Strata", 1, 20, plan.N_STRATA, key="sp_strata", disabled=basis == "groups",
                         help="More strata usually mean more precision (Fogliato et al. 2024) but need at least 2 "
                              "labels each; 1 = simple random sampling.")
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
n_made = len(np.unique(strata))
st.caption(f"Pool: {headline.count(n_pool)} examples of {literal(model)} ({literal(task)}); {headline.count(labeled)} "
           f"already labeled{' (all: the repeated-sampling check below is available)' if fully_labeled else ''}. "
           f"Proxy: {sc.PROXY_SOURCES[source]}. {n_made} strata from {sc.STRATA_BASES[basis]}. Seed {seed}.")

if source == "calibrated":
    st.caption("Calibrated on the rows that already have a label, cross-fitted: no example's calibrated value uses "
               "its own label. For a strictly unbiased proxy-assisted estimate, label new examples rather than "
               "re-using the calibration rows.")

# --------------------------------------------------------------------------- the answer: labels needed
st.subheader("Labels needed", anchor=False)
w1, w2, w3, w4 = st.columns(4)
width = w1.number_input("Target interval width (full width, as a fraction)", 0.002, 0.5, plan.WIDTH, 0.005,
                        format="%.3f", key="sp_width")
probability = w2.select_slider("Chance that one sample meets it", [0.5, 0.8, 0.9, 0.95, 0.99],
                               value=plan.PROBABILITY, format_func=figures.percent, key="sp_meet")
design = w3.radio("Design", list(sc.DESIGNS), format_func=sc.DESIGNS.get,
                  index=list(sc.DESIGNS).index(plan.DESIGN), key="sp_design",
                  help="Default: stratified with proportional allocation (recommended by Fogliato et al. 2024; "
                       "never worse than simple random sampling in expectation). Neyman allocation pays off only "
                       "if the proxy is calibrated. " + TERMS["stratified"])
budget = int(w4.number_input("Labels you can afford (budget n)", 2, n_pool, min(500, max(2, n_pool // 5)),
                             key="sp_budget"))  # the sample drawn below: its allocation, precision and list
try:  # the report's plan too (evalcore.sampling.plan): the same numbers on the same data and settings
    planned = sc.needed(skey, n_strata, seed, float(width), alpha, float(probability), pool, strata)
except EvalDataError as exc:  # e.g. a stratum of one example on a small pool
    st.error(literal(exc))
    st.stop()
plan_basis = planned.needed.attrs["basis"]
needed = planned.needed.assign(plan=[sampling_figures.DESIGN_LABELS[(d, e)] for d, e in
                                     zip(planned.needed["design"], planned.needed["estimator"])])


def answer_sentence() -> str:
    """How many labels the chosen design needs, against simple random sampling, in one sentence."""
    what = f"{model}'s accuracy" + ("" if task == "all tasks" else f" on {task}")
    by = {"proxy": sc.PROXY_SOURCES[source], "features": "the feature columns",
          "groups": "the existing groups"}[basis]
    half, level_text = f"±{width / 2:.3g}", figures.percent(level)
    srs, stratified = planned.srs, planned.row(planned.design if design == "srs" else design)
    if np.isnan(srs["labels_needed"]) or np.isnan(stratified["labels_needed"]):
        return f"The labels {what} needs cannot be planned from this pool."
    allocation = "proportional" if design in ("srs", "proportional") else "Neyman"
    chosen = srs if design == "srs" else stratified
    chance = (f"{headline.count(chosen['labels_for_probability'])} give a {figures.percent(probability)} chance "
              "that one sample does")
    if design == "srs":
        return (f"About {headline.count(srs['labels_needed'])} labels drawn by simple random sampling estimate "
                f"{what} to {half} at {level_text} on average, against {headline.count(stratified['labels_needed'])}"
                f" stratified by {by} ({allocation} allocation); {chance}.")
    return (f"About {headline.count(stratified['labels_needed'])} labels, stratified by {by} ({allocation} "
            f"allocation), estimate {what} to {half} at {level_text} on average, against "
            f"{headline.count(srs['labels_needed'])} with simple random sampling; {chance}.")


with answer_box:
    render.answer(answer_sentence())
with chart_box:
    render.chart(sampling_figures.labels_needed_figure(needed, level, float(width), float(probability)),
                 "labels needed by plan")
    words_row()
basis_text = (
    "Planned from the labels at hand: the proxy recalibrated on them (Platt, sigmoid(a + b·logit p)), taking the "
    "least favourable (a, b) of a one-sided 90% region of that fit (a fixed safety margin of the plan, not the "
    "interval's level), so a few labels do not make the plan optimistic."
    if plan_basis == "labels" else
    f"No usable labels at hand (fewer than {sampling.MIN_PILOT}, or all alike): planned for the worst "
    "miscalibration of the proxy, so honest but costly. Label a pilot sample (e.g. 200 at random) and add its "
    "labels to the log to plan with fewer.")
st.caption(f"Labels for a {figures.percent(level)} interval no wider than {width:.3f} (±{width / 2:.3f}) on "
           f"average, and for a {figures.percent(probability)} chance that one sample meets it. {basis_text}")
render.table(needed.sort_values("labels_needed", kind="stable")[["plan", "labels_needed", "labels_for_probability", "meets_target", "design", "estimator",
                     "labels_needed_calibrated", "labels_needed_worst"]], "labels needed")
with st.expander("What the labels-needed columns mean", icon=":material/functions:"):
    st.caption(
        f"labels_needed: labels that give a {figures.percent(level)} interval no wider than the target on average; "
        "meets_target: the chance that one sample of that size does (under the least favourable calibration the "
        "plan assumes; usually higher); labels_for_probability: labels for a "
        f"{figures.percent(probability)} chance. labels_needed_calibrated trusts the proxy's calibration (too few "
        "labels when it is off: up to 1.27 × the target width with ImageNet-X's raw confidence); "
        "labels_needed_worst is the worst case. design and estimator: srs = simple random sample, proportional and "
        "neyman = stratified; ht = plain average (Horvitz-Thompson), df = proxy-assisted (difference estimator).")

# --------------------------------------------------------------------------- details
st.subheader("Strata", anchor=False)
render.chart(sampling_figures.strata_histogram(pool["proxy"].to_numpy(), strata, basis=sc.STRATA_BASES[basis]),
             "strata on the proxy")

st.subheader("Budget per stratum", anchor=False)
try:
    alloc = sc.allocations(skey, n_strata, seed, budget, pool, strata)
except EvalDataError as exc:
    st.error(literal(exc))
    st.stop()
st.caption("Proportional allocation gives each stratum labels in proportion to its size; Neyman allocation gives "
           "more where the answers vary more (from the proxy: actual" + (", or from the labels: ideal" if
                                                                      fully_labeled else "") + ").")
render.chart(sampling_figures.allocation_bars(alloc.drop(columns=["proxy_mean"])), "budget per stratum")
with st.expander("Allocation formulas", icon=":material/functions:"):
    st.caption("Proportional: n_h ∝ N_h. Neyman: n_h ∝ N_h·S_h, with N_h the stratum's size and S_h the proxy's "
               "plug-in spread sqrt(p̄_h(1 − p̄_h)) (actual)" + (" or the labels' own spread (ideal)" if fully_labeled
                                                                 else "") +
               ". Whole labels by largest remainder, at least 2 per stratum. The designs' variance uses the proxy "
               f"in place of the unknown labels (equations 3–5 and 8 of {PAPERS['sampling']}).")
    render.table(alloc, "budget per stratum")

st.subheader("Predicted precision", anchor=False)
low = 2 * n_made
grid = np.unique(np.geomspace(low, max(low + 1, min(n_pool // 2, max(5000, 2 * budget))), 50).astype(int))
curves = sc.efficiency(skey, n_strata, seed, tuple(int(b) for b in grid), pool, strata)
st.caption("Relative efficiency: the squared error of each plan over that of the plain average of a simple random "
           "sample of the same size, predicted with the proxy in place of the unknown labels. 0.5 = the same "
           "precision with half the labels; it is only as good as the proxy's calibration.")
render.chart(sampling_figures.efficiency_curves(curves), "relative efficiency by budget")
at_budget = sc.efficiency(skey, n_strata, seed, (budget,), pool, strata)
ranges = sc.efficiency_range(skey, n_strata, seed, (budget,), pool, strata)
at_budget = at_budget.assign(plan=[sampling_figures.DESIGN_LABELS[(d, e)] for d, e in
                                   zip(at_budget["design"], at_budget["estimator"])],
                             predicted_se=np.sqrt(at_budget["predicted_mse"]),
                             efficiency_low=ranges["low"].to_numpy(), efficiency_high=ranges["high"].to_numpy())
with st.expander("Predicted precision at the budget and what it rests on", icon=":material/functions:"):
    render.table(at_budget, "predicted precision at the budget")
    st.markdown(
        "What each number rests on:\n"
        "- relative_efficiency, predicted_mse, predicted_se (and the curves above): the proxy is calibrated — "
        "among examples with proxy p, a share p is correct. Unverified for a raw confidence.\n"
        "- efficiency_low – efficiency_high: the same designs when the true accuracy curve is any "
        "sigmoid(a + b·logit(p)) with a from −2 to 2 and b from 0 (the proxy says nothing) to 2 (it understates the "
        "differences): the range a miscalibrated proxy allows. Nothing is promised below efficiency_low.\n"
        "- srs with ht (simple random sample, plain average) = 1: the reference, by definition.\n"
        "- proportional allocation is never worse than simple random sampling in expectation, however bad the "
        "proxy (efficiency_high ≈ 1); Neyman allocation and the proxy-assisted average (df) can be much worse when "
        "the proxy is off — prefer proportional until the proxy is checked against labels (e.g. calibrate it on a "
        "first batch of labels: proxy calibrated).")

st.subheader("Examples to label", anchor=False)
try:
    chosen, used = sc.sample(skey, n_strata, seed, budget, design, pool, strata)
except EvalDataError as exc:
    st.error(literal(exc))
    st.stop()
picked = pool.iloc[chosen][["example_id", "proxy"]].assign(stratum=used[chosen] + 1)
st.caption(f"{headline.count(len(picked))} examples drawn at random within each stratum ({sc.DESIGNS[design]}, "
           f"seed {seed}); send this list to the annotators, then upload their labels below.")
render.table(picked, "examples to label")

st.subheader("Estimate after labeling", anchor=False)
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
    st.info(f"{headline.count(missing)} of the {headline.count(len(picked))} selected examples have no label yet: "
            "download the list above, "
            "have them labeled, and upload the labels here.")
else:
    z = pool["z"].to_numpy(dtype=float).copy()
    z[chosen] = labels
    try:
        ests = pd.DataFrame([
            {"estimator": name, "method": ESTIMATORS[name], "estimate": e.estimate, "se": e.se, "ci_low": e.ci_low,
             "ci_high": e.ci_high,
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
               "the pool's accuracy." + (f" Dotted line: the pool's true accuracy {headline.number(truth)}."
                                         if truth else ""))
    render.chart(figures.interval_dots(ests, "method",
                                       f"Accuracy of {model}", "accuracy",
                                       f"{sc.DESIGNS[design]}, n = {headline.count(len(picked))}",
                                       reference=truth), "estimates after labeling")
    render.table(ests, "estimates after labeling")

if fully_labeled:
    st.subheader("Monte Carlo check", anchor=False)
    st.caption("The pool is fully labeled, so drawing many samples (a Monte Carlo check) shows each design's real "
               f"squared error and interval coverage (as in Figure 1 and Table 1 of {PAPERS['sampling']}), next to "
               "the predictions above. Runs on all cores.")
    choices = [b for b in (50, 100, 200, 500, 1000, 2000, 5000) if 2 * len(np.unique(strata)) <= b <= n_pool // 2]
    if not choices:
        st.info(f"The Monte Carlo check needs a pool of at least 100 examples (budgets of 50 or more labels, at "
                f"most half the pool); this pool has {headline.count(n_pool)}.")
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
        st.caption(f"{headline.count(reps)} samples per design and budget, seed {seed}. Bands: ±2 Monte Carlo "
                   "standard errors of "
                   f"the MSE; coverage of the {figures.percent(level)} intervals (z = {z_crit:.2f}) should be near "
                   f"{figures.percent(level)}.")
        render.chart(sampling_figures.monte_carlo_curves(mc, level), "monte carlo mse")
        shown = sc.efficiency_range(skey, n_strata, seed, tuple(sorted(budgets)), pool, strata)
        shown = shown.drop(columns="predicted").rename(columns={"low": "predicted_low", "high": "predicted_high"})
        render.table(mc.merge(shown, on=["budget", "design", "estimator"], how="left"), "monte carlo results")
        st.caption("relative_efficiency, mse, coverage: measured on this pool by repeated sampling. "
                   "predicted_*: from the proxy alone, as above (calibrated proxy; low–high under miscalibration).")
