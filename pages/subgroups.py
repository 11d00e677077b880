"""Subgroups page: direct vs synthetic-regression vs empirical Bayes estimates per subgroup, and a holdout study."""

import pandas as pd
import streamlit as st

from evalcore.stats import figures
from evalcore.subgroups import figures as subgroups_figures
from evalcore.data.features import numeric_columns
from evalcore.data.validation import EvalDataError
from evalcore.data.display import literal
from evalcore.subgroups.holdout import summarize
from evalcore.data.schema import LOG
from evalcore.subgroups.estimates import REGRESSORS, fit_summary
from evalcore.stats.summaries import mean_table
from pages.common import data_source as ds
from pages.common import render, selection
from pages.common import subgroup_summary
from pages.common import subgroups_cache as sc
from pages.common.navigation import ensure_app_navigation

ensure_app_navigation()

PAGE_SIZE = 60
# benchmarks/coverage/eb.py: MMLU-Pro, 29 models, 5-30 questions per subgroup (the same for every model)
EB_COVERAGE_BY_ACCURACY = ("Measured on held-out MMLU-Pro subsamples (5 to 30 questions per subgroup): the average "
                           "coverage holds, but not evenly: at a 90% level the most accurate fifth of subgroups is "
                           "covered 86-92% of the time, the other fifths 90-94%.")
SINGLE_GROUP = ("The selection has a single group: subgroup estimates compare at least two groups, and empirical "
                "Bayes borrows strength across several (model, group) units.")
REGRESSOR_NAMES = {"xgboost": "XGBoost (tuned by cross-validation)", "linear": "linear (Fay-Herriot)",
                   "mean": "each model's grand mean (James-Stein)"}

st.title("Subgroups")
st.caption("Precise per-subgroup accuracy when some subgroups have only a handful of examples: empirical Bayes "
           "(EB) borrows strength from a synthetic regression (SR) across subgroups and models, and falls back on "
           "the direct estimate (DT) where a subgroup has enough data.")

# Per-subgroup estimates uploaded here (pages/common/subgroup_summary.py) need no per-example log.
if st.radio("Estimate from", ["log", "summary"], horizontal=True, key="sg_source",
            format_func={"log": "the loaded per-example log",
                         "summary": "per-subgroup estimates (upload group, estimate, se)"}.get) == "summary":
    subgroup_summary.show()
    st.stop()

data = ds.try_active_data()
if data is None:
    st.stop()
sel = selection.current(data)
if data.report.kind != LOG or sel.metric is None:
    st.info("Subgroup estimates need a per-example log with a labeled metric (`correct` or `score`). Load the "
            "synthetic or scikit-learn demo, or map those columns on the Data page.")
    st.stop()
level = figures.percent(sel.level)


def direct_only(rows, why: str) -> None:
    """What the page shows when empirical Bayes cannot run: why, and the direct estimate of each subgroup."""
    st.info(f"{why} The direct estimate of each subgroup needs no borrowing: it is below, with its {level} "
            f"interval ({'Wilson' if sel.metric == 'correct' else 'Student-t'}).", icon=":material/info:")
    render.table(mean_table(rows, ["model", "group"], sel.metric, sel.alpha), "direct subgroup estimates")
    st.stop()


rows = selection.apply(data.log, sel)
selection.require(sel, rows)
examples = selection.examples(rows, "The holdout study, automatic subgroups and extra feature columns",
                              (data.key, sel.models, sel.tasks, sel.groups))
if examples is None:  # beyond the memory bound: the units and covariates come from aggregate queries
    key = (data.key, sel.models, sel.tasks, sel.groups)
    with st.expander("Settings", icon=":material/settings:"):
        c1, c2 = st.columns(2)
        regressor = c1.selectbox("Synthetic regression", REGRESSORS, format_func=REGRESSOR_NAMES.get, key="sg_reg")
        seed = int(c2.number_input("Seed", 0, 2**31 - 1, 0, key="sg_seed"))
    try:
        table = sc.estimates(key, sel.metric, regressor, sel.level, seed, None, rows)
    except EvalDataError as exc:
        direct_only(rows, literal(exc))
    if table["group"].nunique() < 2:
        direct_only(rows, f"{SINGLE_GROUP} Add a `group` column to the log to compare subgroups.")
    st.info(f"EB intervals are robust empirical Bayes intervals (Armstrong, Kolesar & "
            f"Plagborg-Moller 2022): they cover the true subgroup values {level} of the time **on average across "
            f"subgroups**, not for each subgroup. DT intervals ({'Wilson' if sel.metric == 'correct' else 'Student-t'}) "
            f"cover each subgroup {level} of the time. Seed {seed}.", icon=":material/info:")
    st.caption(EB_COVERAGE_BY_ACCURACY)
    st.caption("Group difficulty learned from the other models (a feature of the synthetic regression): "
               f"{table.attrs.get('group_difficulty', (False, 'off'))[1]}.")
    st.subheader("Fit")
    render.table(fit_summary(table), "empirical Bayes fit")
    st.subheader("Forest plot")
    model = st.selectbox("Model", sorted(table["model"].unique()), key="sg_model")
    one = table[table["model"] == model].sort_values(["n", "group"], ascending=[False, True])
    means = mean_table(rows, ["model"], sel.metric, sel.alpha).set_index("model")
    st.caption(f"{literal(model)}: overall {sel.metric} {render.ci(*means.loc[model, ['estimate', 'ci_low', 'ci_high']])}"
               f" ({level} interval; dotted line). The {min(PAGE_SIZE, len(one))} largest of {len(one)} subgroups.")
    render.chart(subgroups_figures.forest_plot(one.head(PAGE_SIZE), sel.level, overall=float(means.loc[model, "estimate"]),
                                     title=f"{model}: subgroup estimates"), f"forest {model}")
    st.subheader("Shrinkage")
    render.chart(subgroups_figures.shrinkage_plot(table), "shrinkage")
    render.table(table, "subgroup estimates")
    st.caption("The synthetic regression uses the confidence and proxy means with the model and task indicators.")
    st.stop()
rows = examples
key = (data.key, sel.models, sel.tasks, sel.groups)
features = numeric_columns(rows)
screen = sc.feature_screen(key, sel.metric, rows)

with st.expander("Settings", icon=":material/settings:"):
    c1, c2, c3 = st.columns(3)
    regressor = c1.selectbox("Synthetic regression", REGRESSORS, format_func=REGRESSOR_NAMES.get, key="sg_reg")
    seed = int(c2.number_input("Seed", 0, 2**31 - 1, 0, key="sg_seed"))
    chosen = c3.multiselect("Feature columns (means per subgroup)", features, default=screen.features,
                            key="sg_features")
    auto = st.checkbox("Form subgroups automatically (k-means on the feature columns, k by silhouette score)",
                       value=rows["group"].nunique() < 2 and bool(screen.features), key="sg_auto",
                       disabled=not features)
    if screen.set_aside:
        st.caption("Numeric columns that are not features by default (choose them above if you want them):")
        render.table(pd.DataFrame(screen.set_aside, columns=["column", "reason"]), "columns set aside as features")

if auto:
    try:
        rows = sc.grouped(key, tuple(chosen or screen.features), seed, rows)
    except EvalDataError as exc:
        st.error(literal(exc))
        st.stop()
    key = (*key, "auto", tuple(chosen or screen.features), seed)

if rows["group"].nunique() < 2:
    offer = ("Choose feature columns under **Settings** above and tick **Form subgroups automatically** to form "
             "subgroups from them, or add a `group` column to the log." if features else
             "Add a `group` column to the log (or numeric feature columns, from which subgroups can be formed "
             "automatically).")
    direct_only(rows, f"{SINGLE_GROUP} {offer}")

labeled = rows[rows[sel.metric].notna()]
st.caption(f"Using {len(labeled):,} labeled rows ({rows['group'].nunique()} subgroups, {len(sel.models)} model(s)); "
           f"{len(rows) - len(labeled):,} unlabeled rows contribute only their features. Seed {seed}.")
try:
    table = sc.estimates(key, sel.metric, regressor, sel.level, seed, tuple(chosen), rows)
except EvalDataError as exc:
    direct_only(rows, literal(exc))

st.info(f"EB intervals are robust empirical Bayes intervals (Armstrong, Kolesar & Plagborg-Moller 2022): they cover "
        f"the true subgroup values {level} of the time **on average across subgroups**, not for each subgroup. DT "
        f"intervals ({'Wilson' if sel.metric == 'correct' else 'Student-t'}) cover each subgroup {level} of the "
        "time.", icon=":material/info:")
st.caption(EB_COVERAGE_BY_ACCURACY)
st.caption("Group difficulty learned from the other models (a feature of the synthetic regression): "
           f"{table.attrs.get('group_difficulty', (False, 'off'))[1]}.")

st.subheader("Fit")
fit = fit_summary(table)
st.caption("sr_r2: how much of the spread of the direct estimates the synthetic regression predicts out of fold "
           "(weighted by n; noise caps it below 1; below 0 when it predicts worse than the model's mean; empty for a "
           "model with fewer than 3 subgroups or whose subgroups differ no more than their sampling noise, where "
           "there is nothing to explain). A: variance of the true subgroup values around the synthetic "
           "regression, fitted on each of the two cross-fitting folds (min and max shown); kappa: their kurtosis; "
           "shrinkage: weight on the synthetic estimate, s²/(s² + A).")
render.table(fit, "empirical Bayes fit")

st.subheader("Forest plot")
f1, f2, f3 = st.columns([2, 1, 2])
model = f1.selectbox("Model", sorted(table["model"].unique()), key="sg_model")
order = f2.selectbox("Sort by", ["size", "EB estimate", "name"], key="sg_sort")
needle = f3.text_input("Filter subgroups", key="sg_filter", placeholder="part of a subgroup name")
one = table[(table["model"] == model) & table["group"].str.contains(needle, case=False, regex=False)]
one = {"size": one.sort_values(["n", "group"], ascending=[False, True]),
       "EB estimate": one.sort_values(["eb", "group"], ascending=[False, True]),
       "name": one.sort_values("group")}[order]
pages = max(1, -(-len(one) // PAGE_SIZE))
page = st.number_input(f"Page (of {pages}, {PAGE_SIZE} subgroups each)", 1, pages, 1, key="sg_page") if pages > 1 else 1
shown = one.iloc[(page - 1) * PAGE_SIZE: page * PAGE_SIZE]
overall = mean_table(labeled[labeled["model"] == model], ["model"], sel.metric, sel.alpha).iloc[0]
study = st.session_state.get("sg_study")
truth = None
if study is not None and study[0] == (key, sel.metric, regressor, sel.level, seed, tuple(chosen)):
    truth = study[1].units.query("model == @model").set_index("group")["truth"]
st.caption(f"{literal(model)}: overall {sel.metric} "
           f"{render.ci(overall['estimate'], overall['ci_low'], overall['ci_high'])} ({level} interval; dotted line). "
           f"{len(one)} subgroups match.")
if shown.empty:
    st.warning("No subgroup matches the filter.")
else:
    render.chart(subgroups_figures.forest_plot(shown, sel.level, overall=float(overall["estimate"]), truth=truth,
                                     title=f"{model}: subgroup estimates"), f"forest {model}")

st.subheader("Shrinkage")
render.chart(subgroups_figures.shrinkage_plot(table), "shrinkage")
render.table(table, "subgroup estimates")

st.subheader("Holdout study: how much does EB help on this data?")
st.caption("From the labeled rows: repeatedly keep the labels of a small sample (the same examples for every model; "
           "the paper's design: proportional to subgroup size, the smallest subgroup with 50+ examples gets 10), hide "
           "the rest, estimate with DT, SR and EB, and compare with the full-data values. The full-data value is the "
           "mean over a subgroup's labeled examples, of which the sample is a part, so each method estimates that "
           "finite pool: the sampled labels count as known, the rest is predicted (DT with the finite-population "
           "correction). Needs models labeled on the same examples. Runs on all cores.")
h1, h2 = st.columns(2)
reps = h1.select_slider("Repetitions", [50, 100, 200, 500, 1000], value=200, key="sg_reps")
design = h2.selectbox("Sample per subgroup", ["proportional", 10, 20, 50], key="sg_design",
                      format_func=lambda d: "proportional to size" if d == "proportional" else f"{d} examples")
if st.button("Run the holdout study", icon=":material/science:", key="sg_run"):
    try:
        result = sc.holdout(key, sel.metric, regressor, sel.level, seed, reps, design, labeled, tuple(chosen))
    except EvalDataError as exc:
        st.error(literal(exc))
    else:
        st.session_state["sg_study"] = ((key, sel.metric, regressor, sel.level, seed, tuple(chosen)), result)
        st.rerun()
if truth is not None:
    result = study[1]
    by_model = summarize(result.units, by_model=True)
    st.caption(f"{result.n_repetitions} repetitions, design {result.design}, seed {result.seed}. MSE ratios below 1 "
               "mean more precise than the direct estimate; coverage is averaged over subgroups.")
    for note in result.notes:
        st.info(literal(note), icon=":material/info:")
    render.table(result.summary, "holdout summary")
    render.chart(subgroups_figures.holdout_mse_chart(by_model), "holdout MSE ratios")
    render.chart(subgroups_figures.holdout_coverage_width(by_model, sel.level), "holdout coverage and width")
    render.table(result.units, "holdout per subgroup")
