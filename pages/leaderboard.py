"""Leaderboard page: task, category and overall scores with bootstrap intervals, pairwise differences, rank intervals."""

import streamlit as st

from evalcore import figures
from evalcore.data import EvalDataError
from evalcore.schema import BATTLES, LOG
from pages.common import data_source as ds
from pages.common import leaderboard_cache as lc
from pages.common import render, selection
from pages.common.navigation import ensure_app_navigation

ensure_app_navigation()

st.title("Leaderboard")
st.caption("Which differences between models are real, and how stable is the ranking? Scores per task, per "
           "category and overall (the plain mean of tasks), with bootstrap intervals.")

data = ds.try_active_data()
if data is None:
    st.stop()
sel = selection.current(data)
kind = data.report.kind
if kind == BATTLES or (kind == LOG and sel.metric != "correct"):
    st.info("The leaderboard needs per-example 0/1 correctness (`correct`) or a leaderboard summary "
            "(model, task, category, n, n_correct). Load the synthetic demo or upload such data on the Data page.")
    st.stop()
if len(sel.models) < 2:
    st.warning("Choose at least two models on the Models page to compare them.")
    st.stop()

rows = selection.apply(data.frame, sel, kind)
key = (data.key, sel.models, sel.tasks, sel.groups)
with st.expander("Settings", icon=":material/settings:"):
    c1, c2, c3, c4 = st.columns(4)
    level = c1.select_slider("Interval level for single models", selection.LEVELS, value=0.834,
                             format_func=figures.percent, key="lb_level",
                             help="83.4%: two models whose intervals do not overlap differ at about the 5% level "
                                  "(Goldstein & Healy).")
    n_boot = c2.select_slider("Bootstrap replicates", [500, 1000, 2000, 5000, 10000], value=2000, key="lb_boot")
    seed = int(c3.number_input("Seed", 0, 2**31 - 1, 0, key="lb_seed"))
    normalized = c4.toggle("Normalized accuracy", key="lb_norm",
                           help="(raw - low) / (high - low) per task, with low/high the bootstrap minimum and "
                                "maximum over models and replicates (the paper's choice).")

source = rows
try:
    table = lc.board(key, level, n_boot, seed, normalized, source)
except EvalDataError as exc:
    st.error(str(exc))
    st.stop()
if table.attrs.get("paired"):
    how = "paired bootstrap: the examples of each task resampled jointly for all models, keeping their correlation"
else:
    note = table.attrs.get("bootstrap_note", "")
    how = "binomial resampling of each (model, task) count" + (f" ({note})" if note else "")
st.caption(f"Intervals: {figures.percent(level)} bootstrap percentile intervals, {how}; {n_boot:,} replicates, "
           f"seed {seed}. Scores are {'normalized' if normalized else 'raw'} accuracies.")

overall = table[table["scope"] == "overall"].sort_values("estimate", ascending=False)
render.chart(figures.interval_dots(overall.assign(label=overall["model"]), "label", "Overall score", "score",
                                   f"{figures.percent(level)} bootstrap intervals · plain mean of tasks"),
             "overall score")
wide = table[table["scope"] != "task"].assign(
    value=lambda t: [render.ci(e, lo, hi) for e, lo, hi in zip(t["estimate"], t["ci_low"], t["ci_high"])])
render.table(wide.pivot(index="model", columns="name", values="value").reset_index(), "leaderboard")
render.table(table, "leaderboard (long, all tasks)")

st.subheader("Pairwise differences")
top = st.slider("Compare the top k models", 2, min(8, len(overall)), min(3, len(overall)), key="lb_top")
models = tuple(overall["model"].head(top))
diffs = lc.differences((*key, normalized), models, n_boot, seed, source)
diffs = diffs.assign(label=diffs["model_a"] + " − " + diffs["model_b"], estimate=diffs["diff"])
st.caption(f"Difference of overall scores with 95% intervals, Bonferroni-corrected over the {len(diffs)} pairs "
           "shown: an interval excluding 0 is a real difference.")
render.chart(figures.interval_dots(diffs, "label", "Pairwise differences", "difference",
                                   "95% Bonferroni-corrected bootstrap intervals", reference=0.0), "pairwise differences")
render.table(diffs.drop(columns=["label", "estimate"]), "pairwise differences")

st.subheader("Rank intervals")
method = st.selectbox("Rank by", list(lc.RANK_METHODS), format_func=lc.RANK_METHODS.get, key="lb_rank")
ranked = lc.ranks(key, method, n_boot, seed, source).sort_values("rank")
st.caption("Rank on the observed data (1 = best) with the 95% interval of the rank over bootstrap replicates.")
render.chart(figures.interval_dots(ranked.assign(label=ranked["model"], estimate=ranked["rank"]), "label",
                                   f"Rank by {lc.RANK_METHODS[method]}", "rank", "95% bootstrap intervals"),
             "rank intervals")
render.table(ranked, "rank intervals")

summary = lc.summary(key, rows) if kind == LOG else rows

st.subheader("Bayesian hierarchical model")
st.caption("Beta-binomial model per model across tasks (paper Section 2.2): Y ~ Binomial(N, theta), theta ~ "
           "Beta(alpha, beta), Exponential(1/10000) priors; Gibbs sampling with slice steps, 4 chains.")
if st.toggle("Fit the Bayesian model", key="lb_bayes"):
    draws = st.select_slider("Draws per chain", [1000, 2000, 5000], value=2000, key="lb_draws")
    bboard, probs = lc.bayes_tables(key, draws, seed, level, summary)
    st.caption(f"{figures.percent(level)} equal-tailed posterior predictive intervals (the paper's Table 7), "
               f"{draws:,} draws per chain (first half burn-in), seed {seed}. Convergence: largest R-hat "
               f"{bboard['rhat'].max():.3f}, smallest effective sample size {bboard['ess'].min():,.0f}.")
    bwide = bboard[bboard["scope"] != "task"].assign(
        value=lambda t: [render.ci(e, lo, hi) for e, lo, hi in zip(t["estimate"], t["ci_low"], t["ci_high"])])
    render.table(bwide.pivot(index="model", columns="name", values="value").reset_index(), "bayesian leaderboard")
    render.table(bboard, "bayesian leaderboard (long, with diagnostics)")
    render.chart(figures.rank_probability_bars(probs, "overall score (plain mean of tasks) under the posterior"),
                 "posterior rank probabilities")
    render.table(probs, "posterior rank probabilities")

st.subheader("Task-weighting map")
categories = sorted(summary["category"].unique())
if len(categories) < 3:
    st.info(f"The weighting map needs three task categories; this data has {len(categories)} "
            f"({', '.join(categories)}). With fewer there is no trade-off between categories to map.")
    st.stop()
t1, t2, t3 = st.columns(3)
chosen = t1.multiselect("Three categories", categories, default=categories[:3], max_selections=3, key="lb_cats")
z = t2.select_slider("Gray zone: within z standard errors", [1.0, 1.4, 2.0, 3.0], value=2.0, key="lb_z",
                     help="z = 2 under independence; z = 2·sqrt(1/2) ≈ 1.4 allows for correlation between models.")
se_source = t3.radio("Standard errors", ["binomial", "bootstrap"], horizontal=True, key="lb_se")
if len(chosen) != 3:
    st.info("Choose exactly three categories.")
    st.stop()
try:
    wmap = lc.weighting_map(key, tuple(chosen), z, se_source, normalized, seed, summary)
except EvalDataError as exc:
    st.error(str(exc))
    st.stop()
st.caption(f"Each point is one weighting of the three categories (1% steps); its colour is the model with the best "
           f"weighted score. Gray: the top two are within {z:g} standard errors of their difference ({se_source} "
           "standard errors), too close to call.")
render.chart(figures.ternary_figure(wmap), "task weighting map")
p1, p2 = st.columns([1, 3])
fmt = p1.radio("Publication version", ["png", "svg", "pdf"], format_func=str.upper, horizontal=True, key="lb_fmt")
p2.download_button(f"Download the static map ({fmt.upper()}, python-ternary)",
                   lc.static_map(key, tuple(chosen), z, se_source, normalized, seed, fmt, wmap),
                   file_name=f"task-weighting-map.{fmt}", key="lb_static", icon=":material/download:")
share = (wmap.assign(region=wmap["winner"].where(~wmap["gray"], "too close to call"))
         .groupby("region").size().rename("share of weightings").div(len(wmap)).reset_index())
render.table(share, "task weighting map regions")
