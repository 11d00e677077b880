"""Subgroups page: the answer first (the range of the leading model's subgroup estimates, and how much narrower
empirical Bayes makes the small subgroups' intervals), then its forest plot sorted by the estimate; direct vs
synthetic-regression vs empirical Bayes estimates per subgroup, the fit diagnostics in an expander, and a holdout
study."""

import pandas as pd
import streamlit as st

from evalcore.stats import figures, glossary
from evalcore.subgroups import figures as subgroups_figures
from evalcore.subgroups.answer import range_sentence, what_of
from evalcore.data.features import numeric_columns
from evalcore.data.validation import EvalDataError
from evalcore.data.display import literal
from evalcore.subgroups.holdout import summarize
from evalcore.data.schema import LOG
from evalcore.subgroups.estimates import REGRESSORS, fit_summary
from evalcore.stats.overall import NAMES as OVERALL_NAMES
from pages.common import data_source as ds
from pages.common import overall_cache as oc
from pages.common import render, selection
from pages.common import subgroup_summary
from pages.common import subgroups_cache as sc
from pages.common.navigation import ensure_app_navigation

ensure_app_navigation()

PAGE_SIZE = 60
TERMS = glossary.TERMS
# benchmarks/coverage/eb.py: MMLU-Pro, 29 models, 5-30 questions per subgroup (the same for every model)
EB_COVERAGE_BY_ACCURACY = ("Measured on held-out MMLU-Pro subsamples (5 to 30 questions per subgroup): the average "
                           "coverage holds, but not evenly: at a 90% level the most accurate fifth of subgroups is "
                           "covered 86-92% of the time, the other fifths 90-94%.")
SINGLE_GROUP = ("The selection has a single group: subgroup estimates compare at least two groups, and empirical "
                "Bayes borrows strength across several (model, group) units.")
REGRESSOR_NAMES = {"xgboost": "XGBoost (tuned by cross-validation)", "linear": "linear (Fay-Herriot)",
                   "mean": "each model's grand mean (James-Stein)"}
#: the columns of the fit diagnostics, one plain line each
FIT_COLUMNS = {
    "units": "the model's subgroups with labeled examples (one empirical Bayes unit each).",
    "median_n": "the median number of labeled examples per subgroup.",
    "sr_r2": "how much of the spread of the direct estimates the synthetic regression predicts out of fold "
             "(weighted by n; noise keeps it below 1; below 0 when it predicts worse than the model's mean; empty "
             "for a model with fewer than 3 subgroups or whose subgroups differ no more than their sampling noise, "
             "where there is nothing to explain).",
    "mean_shrinkage": "the average weight on the synthetic estimate, s²/(s² + A): 0 keeps the direct estimate, "
                      "1 replaces it by the prediction.",
    "A_min, A_max": "the variance of the true subgroup values around the synthetic regression, fitted on each of the "
                    "two cross-fitting folds (smaller: the prediction is closer, so small subgroups borrow more).",
    "kappa_min, kappa_max": "the kurtosis of those true values on the two folds (heavier tails widen the robust "
                            "intervals).",
}


def terms(*names: str) -> str:
    """A tooltip with the glossary line of each term."""
    return "\n\n".join(TERMS[name] for name in names)


def sidebar_level() -> float:
    """The sidebar's level (the selection's); the default while the data cannot be used."""
    try:
        return selection.current(ds.active_data()).level
    except EvalDataError:
        return selection.DEFAULT_LEVEL


st.title("Subgroups")
answer_box, chart_box = st.container(), st.container()  # the answer and the forest plot first, filled below
st.caption("How accurate is a model on each subgroup, when some subgroups have only a handful of examples? Three "
           "estimates per subgroup: the direct one (DT, from its own examples), the synthetic one (SR, predicted "
           "from what is known about the subgroup) and empirical Bayes (EB), which borrows strength from the "
           "prediction where a subgroup has few examples and keeps the direct estimate where it has many, after "
           f"{glossary.PAPERS['subgroups']}.", help=terms("direct", "synthetic", "empirical Bayes"))

# Per-subgroup estimates uploaded here (pages/common/subgroup_summary.py) need no per-example log.
if st.radio("Estimate from", ["log", "summary"], horizontal=True, key="sg_source",
            format_func={"log": "the loaded per-example log",
                         "summary": "per-subgroup estimates (upload group, estimate, se)"}.get) == "summary":
    subgroup_summary.show(sidebar_level(), answer_box)
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
what = what_of(sel.metric)
DIRECT_INTERVAL = "Wilson" if sel.metric == "correct" else "Student-t"


def leading(key: tuple, rows, models) -> str:
    """The model with the best overall number (mean over tasks) among ``models``: the one the page opens on."""
    return oc.leader(key, sel.metric, sel.level, rows, sorted(models))


def direct_only(key: tuple, rows, why: str) -> None:
    """What the page shows when empirical Bayes cannot run: the answer from the direct estimates, why EB does not
    run, and the direct estimate of each subgroup."""
    table = sc.direct(key, sel.metric, sel.level, rows)
    shown = table[table["n"] > 0]
    if not shown.empty:
        with answer_box:
            render.answer(range_sentence(shown, leading(key, rows, shown["model"].unique()), sel.level, sel.metric,
                                         empirical_bayes=False))
    st.info(f"{why} The direct estimate of each subgroup needs no borrowing: it is below, with its {level} "
            f"interval ({DIRECT_INTERVAL}).", icon=":material/info:")
    st.caption(f"Direct estimate of each (model, subgroup) from its own labeled examples, with its {level} "
               f"{DIRECT_INTERVAL} interval.", help=TERMS["direct"])
    render.table(table, "direct subgroup estimates")
    st.stop()


def notes(table: pd.DataFrame) -> None:
    """What the EB and DT intervals mean, at the sidebar's level."""
    st.info(f"Empirical Bayes (EB) intervals cover the true subgroup values {level} of the time on average across "
            f"subgroups, not for each subgroup (robust EB intervals of {glossary.PAPERS['ebci']}). Direct (DT) "
            f"intervals ({DIRECT_INTERVAL}) cover each subgroup {level} of the time.", icon=":material/info:")
    st.caption(EB_COVERAGE_BY_ACCURACY, help=TERMS["EBCI"])


def fit_diagnostics(table: pd.DataFrame) -> None:
    """The fit table in an expander, with one line per column."""
    with st.expander("Fit diagnostics", icon=":material/table:"):
        st.caption("How the empirical Bayes fit went, one row per model:", help=TERMS["empirical Bayes"])
        st.markdown("\n".join(f"- `{column}`: {line}" for column, line in FIT_COLUMNS.items()))
        render.table(fit_summary(table), "empirical Bayes fit")
        st.caption("Group difficulty learned from the other models (a feature of the synthetic regression): "
                   f"{table.attrs.get('group_difficulty', (False, 'off'))[1]}.")
    fallback, why = table.attrs.get("direct_fallback", (0, ""))
    if fallback:  # units without an honest EB interval keep their direct one: said where the estimates are shown
        st.info(literal(why) + ".", icon=":material/info:")


def forest(table: pd.DataFrame, key: tuple, rows, filters: bool, truth_of=None) -> None:
    """The answer sentence and the forest plot of one model (the leading one by default), sorted by the EB estimate;
    ``filters`` adds the sort, filter and page controls."""
    models = sorted(table["model"].unique())
    first = leading(key, rows, models)
    with chart_box:
        f1, f2, f3 = st.columns([2, 1, 2])
        model = f1.selectbox("Model", models, index=models.index(first), key="sg_model",
                             help="The page opens on the model with the best overall number.")
        order, needle = "EB estimate", ""
        if filters:
            order = f2.selectbox("Sort by", ["EB estimate", "size", "name"], key="sg_sort")
            needle = f3.text_input("Filter subgroups", key="sg_filter", placeholder="part of a subgroup name")
        one = table[(table["model"] == model) & table["group"].str.contains(needle, case=False, regex=False)]
        one = {"size": one.sort_values(["n", "group"], ascending=[False, True]),
               "EB estimate": one.sort_values(["eb", "group"], ascending=[False, True]),
               "name": one.sort_values("group")}[order]
        pages = max(1, -(-len(one) // PAGE_SIZE))
        page = (st.number_input(f"Page (of {pages}, {PAGE_SIZE} subgroups each)", 1, pages, 1, key="sg_page")
                if pages > 1 and filters else 1)
        shown = one.iloc[(page - 1) * PAGE_SIZE: page * PAGE_SIZE]
        whole = oc.overall(key, sel.metric, sel.level, rows).set_index("model").loc[model]
        st.caption(f"{literal(model)}: overall {what} ({OVERALL_NAMES['tasks']}) "
                   f"{render.ci(whole['estimate'], whole['ci_low'], whole['ci_high'])} ({level} interval; dotted "
                   f"line). {len(one)} subgroups match"
                   + (f"; the {len(shown)} with the highest EB estimate shown." if len(shown) < len(one)
                      and order == "EB estimate" and page == 1 else "."))
        if shown.empty:
            st.warning("No subgroup matches the filter.")
        else:
            render.chart(subgroups_figures.forest_plot(shown, sel.level, overall=float(whole["estimate"]),
                                                       truth=truth_of(model) if truth_of else None,
                                                       title=f"{model}: subgroup estimates, highest first"
                                                       if order == "EB estimate" else f"{model}: subgroup estimates"),
                         f"forest {model}")
    with answer_box:
        render.answer(range_sentence(table, model, sel.level, sel.metric))


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
        direct_only(key, rows, literal(exc))
    if table["group"].nunique() < 2:
        direct_only(key, rows, f"{SINGLE_GROUP} Add a `group` column to the log to compare subgroups.")
    forest(table, key, rows, filters=False)
    notes(table)
    st.caption(f"Seed {seed}.")
    fit_diagnostics(table)
    st.subheader("Shrinkage", anchor=False, help=TERMS["shrinkage"])
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
    offer = ("Choose feature columns under Settings above and tick 'Form subgroups automatically' to form "
             "subgroups from them, or add a `group` column to the log." if features else
             "Add a `group` column to the log (or numeric feature columns, from which subgroups can be formed "
             "automatically).")
    direct_only(key, rows, f"{SINGLE_GROUP} {offer}")

labeled = rows[rows[sel.metric].notna()]
try:
    table = sc.estimates(key, sel.metric, regressor, sel.level, seed, tuple(chosen), rows)
except EvalDataError as exc:
    direct_only(key, rows, literal(exc))

study = st.session_state.get("sg_study")
current = (key, sel.metric, regressor, sel.level, seed, tuple(chosen))
fresh = study is not None and study[0] == current


def truth_of(model: str):
    """The holdout study's full-data values of ``model``'s subgroups (hollow diamonds on the forest plot)."""
    return study[1].units.query("model == @model").set_index("group")["truth"]


forest(table, key, rows, filters=True, truth_of=truth_of if fresh else None)
st.caption(f"Using {len(labeled):,} labeled rows ({rows['group'].nunique()} subgroups, {len(sel.models)} model(s)); "
           f"{len(rows) - len(labeled):,} unlabeled rows contribute only their features. Seed {seed}.")
notes(table)
fit_diagnostics(table)

st.subheader("Shrinkage", anchor=False, help=TERMS["shrinkage"])
render.chart(subgroups_figures.shrinkage_plot(table), "shrinkage")
render.table(table, "subgroup estimates")

st.subheader("Holdout study: how much does EB help on this data?", anchor=False)
st.caption("From the labeled rows: repeatedly keep the labels of a small sample (the same examples for every model; "
           "the design of Fogliato et al. (2024): proportional to subgroup size, the smallest "
           "subgroup with 50+ examples gets 10), hide "
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
        st.session_state["sg_study"] = (current, result)
        st.rerun()
if fresh:
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
