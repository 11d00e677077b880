"""Leaderboard page: who leads, by how much, and which models the data tell apart (the answer first, then the
overall chart best first); task, category and overall scores with bootstrap intervals, pairwise differences, rank
intervals, weighted scores, the Bayesian model and the task-weighting map. A log of one model gets its own scores
and a plain word on what comparisons need."""

import pandas as pd
import streamlit as st

from evalcore.stats import figures, glossary, headline
from evalcore.leaderboard import figures as leaderboard_figures
from evalcore.leaderboard.answer import lead_answer
from evalcore.data.validation import EvalDataError
from evalcore.data.display import literal
from evalcore.leaderboard.mcmc import ESS_MIN, RHAT_MAX, convergence_problems
from evalcore.data.schema import BATTLES, LOG, SUMMARY
from evalcore.stats.overall import interval_name, with_overall
from pages.common import data_source as ds
from pages.common import overall_cache as oc
from pages.common import leaderboard_cache as lc
from pages.common import render, selection
from pages.common.navigation import ensure_app_navigation

ensure_app_navigation()
#: the level at which two non-overlapping intervals differ at about 5% (Goldstein & Healy 1995), offered as an option
COMPARISON_LEVEL = 0.834
_MAX_DRAWS = 20000  # "Draw more" stops doubling here (about 25 s of sampling and summary on VTAB-1k)
PAPER = glossary.PAPERS["leaderboard"]
CITE = PAPER.split(",")[0]  # "Longjohn et al. (2024)"
TERMS = glossary.TERMS

st.title("Leaderboard")
answer_box, chart_box = st.container(), st.container()  # the answer and the overall chart first, filled below
st.caption("Which differences between models are real, and how stable is the ranking? Scores per task, per "
           f"category and overall (the mean over tasks), with bootstrap intervals, after {PAPER}; the overall "
           "accuracy's interval is the one every page shows for it.",
           help=TERMS["bootstrap"])


def one_model(model: str) -> None:
    """A log of one model: its overall and per-task accuracy with their intervals, and what comparing needs."""
    key = (data.key, sel.models, sel.tasks, sel.groups)
    whole = oc.overall(key, "correct", sel.level, rows, summary=kind == SUMMARY)
    per_task = lc.per_task(key, sel.level, kind == SUMMARY, rows)
    pct = figures.percent(sel.level)
    interval = interval_name("correct", data.report.design)  # a labeling campaign's: its design's estimator
    with answer_box:
        render.answer(headline.lead_sentence(whole, sel.level, "overall accuracy"))
    st.info(f"This log holds one model, {literal(model)}, so there is no ranking to show: above is its overall "
            f"accuracy (the mean over tasks) and below its accuracy on each task, each with its {pct} interval. "
            "Comparing models (who leads and by how much, pairwise differences, rank intervals, weighted scores) "
            "needs at least two models: on the Data page, upload a second model's log together with this one "
            "(choose both files at once).", icon=":material/info:")
    with chart_box:
        render.chart(figures.interval_dots(per_task.assign(label=per_task["task"]), "label",
                                           f"Accuracy of {model} per task, best first", "accuracy",
                                           f"{pct} {interval} intervals"), "accuracy per task")
    several = len(per_task) > 1
    st.caption(f"Per task: accuracy over the task's labeled examples with its {pct} {interval} interval. Overall: "
               "the mean over tasks" + (f", with a {pct} normal interval (se = sqrt(sum of the tasks' se²) / number "
                                       "of tasks)." if several else " (one task: that task's own interval)."),
               help=TERMS.get(interval))
    render.table(whole, "overall accuracy")
    render.table(per_task, "accuracy per task")


data = ds.try_active_data()
if data is None:
    st.stop()
sel = selection.current(data)
kind = data.report.kind
if kind == BATTLES or (kind == LOG and sel.metric != "correct"):
    st.info("The leaderboard needs per-example 0/1 correctness (`correct`) or a leaderboard summary "
            "(model, task, category, n, n_correct). Load the synthetic demo or upload such data on the Data page.")
    st.stop()
rows = selection.apply(data.log, sel, kind)
available = selection.options(data).models
if len(available) == 1:  # the data, not the selection, has one model: say what it can show
    selection.require(sel, rows)
    one_model(available[0])
    st.stop()
selection.require(sel, rows, min_models=2)
key = (data.key, sel.models, sel.tasks, sel.groups)
tasks = selection.tasks(rows)
with st.expander("Settings", icon=":material/settings:"):
    c1, c2, c3, c4 = st.columns(4)
    compare = c1.toggle(f"Comparison intervals ({figures.percent(COMPARISON_LEVEL)})", False, key="lb_compare",
                        help=f"Single models' intervals at {figures.percent(COMPARISON_LEVEL)} instead of the "
                             f"chosen {figures.percent(sel.level)}. {TERMS['83.4%']}")
    n_boot = c2.select_slider("Bootstrap replicates", [500, 1000, 2000, 5000, 10000], value=2000, key="lb_boot")
    seed = int(c3.number_input("Seed", 0, 2**31 - 1, 0, key="lb_seed"))
    norm = c4.selectbox("Scores", list(lc.NORMALIZATIONS), format_func=lc.NORMALIZATIONS.get, key="lb_norm",
                        help="Normalized accuracy = (raw - low) / (high - low) per task. low/high: the lowest and "
                             "highest observed accuracy of the selected models (fixed by the data); the bootstrap "
                             f"minimum and maximum over models and replicates (the choice of {CITE}: these extremes "
                             "are random, so the normalized scores themselves move with the seed and the number of "
                             "replicates, by as much as half an interval); or your chance level and ceiling.")
    if norm == "observed":
        st.caption("Observed min–max: each interval is the union of two bootstraps, one holding each task's bounds "
                   "at their observed values, one moving them with the replicated accuracies of the models that "
                   "attain them. Measured coverage of the overall normalized score at 95% "
                   "(benchmarks/coverage/ranks.py), per model: 0.96 on MMLU-Pro subsamples (14 tasks), 0.97–0.98 in "
                   "simulations with 4 tasks (0.90–0.91 with the bounds held fixed, the intervals then a third to "
                   "a half narrower).")
    if norm == "bootstrap":
        st.caption(f"Bootstrap min–max (the choice of {CITE}): the per-task bounds are extremes of random "
                   "replicates, so the normalized point estimates change with the seed and the number of "
                   "replicates. The observed min–max gives the same scores for every seed.")
    bounds: tuple = ()
    if norm == "chance":
        st.caption("Chance level and ceiling per task, as fractions (e.g. chance 0.1 for a 10-class task). A model "
                   "below chance gets a negative normalized score.")
        edited = st.data_editor(pd.DataFrame({"task": tasks, "chance": 0.0, "ceiling": 1.0}), key="lb_bounds",
                                hide_index=True, disabled=["task"], num_rows="fixed",
                                column_config={"chance": st.column_config.NumberColumn(min_value=0.0, max_value=1.0),
                                               "ceiling": st.column_config.NumberColumn(min_value=0.0,
                                                                                        max_value=1.0)})
        bounds = tuple(zip(edited["task"], edited["chance"].astype(float), edited["ceiling"].astype(float)))
normalized = norm != "raw"
level = COMPARISON_LEVEL if compare else sel.level

source = rows


def scored(at: float) -> pd.DataFrame:
    """The board at level ``at``; with raw accuracies its overall rows are the overall number of every page, the
    report and the CLI (:func:`evalcore.stats.overall.with_overall`), the tasks and categories bootstrap intervals."""
    board = lc.board(key, at, n_boot, seed, norm, bounds, source)
    if normalized:
        return board
    return with_overall(board, oc.overall(key, "correct", at, source, summary=kind == SUMMARY))


try:
    table = scored(level)
except EvalDataError as exc:
    st.error(literal(exc))
    st.stop()
if table.attrs.get("paired"):
    how = "paired bootstrap: the examples of each task resampled jointly for all models, keeping their correlation"
    if table.attrs.get("bootstrap_note"):
        how += f" ({literal(table.attrs['bootstrap_note'])})"
else:
    note = table.attrs.get("bootstrap_note", "")
    how = "binomial resampling of each (model, task) count" + (f" ({literal(note)})" if note else "")
overall_words = ("the overall score (normalized) too" if normalized else
                 "the overall accuracy (the mean over tasks) has the one interval every page, the report and the "
                 "command line show for it: normal, joined with Wilson's at the effective number of examples")
st.caption(f"Intervals: {figures.percent(level)} bootstrap percentile intervals per task and category, {how}; "
           f"{n_boot:,} replicates, seed {seed}; {overall_words}. Scores: {lc.NORMALIZATIONS[norm]}."
           + (f" Comparison intervals ({figures.percent(level)}, not the chosen {figures.percent(sel.level)}): two "
              "models whose intervals do not overlap differ at about the 5% level." if compare else ""),
           help=TERMS["83.4%"] if compare else TERMS["bootstrap"])

overall = table[table["scope"] == "overall"].sort_values(["estimate", "model"], ascending=[False, True], kind="stable")
every = lc.differences(key, sel.level, n_boot, seed, source)
# the answer at the sidebar's level (the chart may show the 83.4% comparison intervals); the differences are of raw
# accuracies, so they speak of the leader only when the scores are raw
at_level = overall if not compare else scored(sel.level).query("scope == 'overall'")
with answer_box:
    render.answer(lead_answer(at_level, sel.level, every if norm == "raw" else None,
                              "overall accuracy" if norm == "raw" else "overall normalized score"))
with chart_box:
    render.chart(figures.interval_dots(overall.assign(label=overall["model"]), "label", "Overall score, best first",
                                       "score", f"{figures.percent(level)} "
                                       + ("bootstrap intervals" if normalized else "intervals (normal/Wilson)")
                                       + (" (comparison)" if compare else "") + " · mean over tasks"),
                 "overall score")
# one row per model, best overall first; the overall column first, then the categories in the board's order
wide = table[table["scope"] != "task"].assign(
    value=lambda t: [render.ci(e, lo, hi) for e, lo, hi in zip(t["estimate"], t["ci_low"], t["ci_high"])])
columns = ["overall", *[c for c in pd.unique(wide.loc[wide["scope"] == "category", "name"]) if c != "overall"]]
render.table(wide.pivot(index="model", columns="name", values="value").reindex(index=list(overall["model"]),
                                                                                columns=columns)
             .rename_axis(index="model", columns=None).reset_index(), "leaderboard")
with st.expander("Every score with its interval (one row per model and task, category or overall)",
                 icon=":material/table:"):
    render.table(table, "leaderboard (long, all tasks)")

st.subheader("Pairwise differences", help=TERMS["simultaneous"])
most = min(8, len(overall))  # a slider needs two distinct ends: with two models there is nothing to choose
top = st.slider("Compare the top k models", 2, most, min(3, most), key="lb_top") if most > 2 else most
models = set(overall["model"].head(top))
diffs = every[every["model_a"].isin(models) & every["model_b"].isin(models)]
diffs = diffs.assign(label=diffs["model_a"] + " − " + diffs["model_b"], estimate=diffs["diff"])
st.caption(f"Difference of overall raw accuracies with simultaneous {figures.percent(sel.level)} intervals: all "
           f"{len(every)} intervals (every pair of the {len(overall)} models, of which the {len(diffs)} among the top "
           f"{top} are shown) hold together {figures.percent(sel.level)} of the time (studentized maximum over the "
           "bootstrap replicates). An interval excluding 0 is a real "
           "difference; the rank intervals below follow from the same intervals.")
render.chart(figures.interval_dots(diffs, "label", "Pairwise differences", "difference",
                                   f"simultaneous {figures.percent(sel.level)} bootstrap intervals (all pairs)",
                                   reference=0.0),
             "pairwise differences")
with st.expander("Pairwise differences: the table", icon=":material/table:"):
    render.table(diffs.drop(columns=["label", "estimate"]), "pairwise differences")

st.subheader("Rank intervals", help=TERMS["rank interval"])
method = st.selectbox("Rank by", list(lc.RANK_METHODS), format_func=lc.RANK_METHODS.get, key="lb_rank")
ranked = lc.ranks(key, method, sel.level, n_boot, seed, source).sort_values("rank")
st.caption(f"Rank on the observed data (1 = best) with {figures.percent(sel.level)} intervals that hold for all "
           "models together. By mean or "
           "geometric mean: best rank = 1 + the models surely ahead, worst = the number of models − those surely "
           "behind, from the simultaneous intervals of the differences. By average rank: the statistic ± the "
           f"studentized maximum over models. mean_rank: the average over replicates ({CITE}, Table 8).")
render.chart(figures.interval_dots(ranked.assign(label=ranked["model"], estimate=ranked["rank"]), "label",
                                   f"Rank by {lc.RANK_METHODS[method]}", "rank",
                                   f"simultaneous {figures.percent(sel.level)} bootstrap intervals"),
             "rank intervals")
with st.expander("Rank intervals: best and worst rank of each model (table)", icon=":material/table:"):
    render.table(ranked, "rank intervals")

summary = lc.summary(key, rows) if kind == LOG else rows
categories = [str(c) for c in pd.unique(summary["category"].astype(str))]
task_share = summary.drop_duplicates("task")["category"].astype(str).value_counts(normalize=True)

st.subheader("Weighted scores")
st.caption("S(w) = Σ w_c × (mean accuracy over category c's tasks). The default weights (each category's share of "
           "the tasks) give the plain mean of tasks; weights are rescaled to sum to 1.")
cols = st.columns(min(len(categories), 4))
raw_w = {c: cols[i % len(cols)].number_input(literal(c), 0.0, 1.0, float(task_share[c]), 0.05, format="%.3f",
                                                    key=f"lb_w_{c}")
         for i, c in enumerate(categories)}
if sum(raw_w.values()) <= 0:
    st.warning("All category weights are 0: give at least one category a positive weight.")
    st.stop()
weights = tuple((c, v / sum(raw_w.values())) for c, v in raw_w.items())
scores = lc.weighted(key, weights, level, n_boot, seed, norm, bounds, summary).sort_values("score", ascending=False)
shown_w = ", ".join(f"{c} {w:.2f}" for c, w in weights)
st.caption(f"Weights {literal(shown_w)}. Intervals: {figures.percent(level)} normal intervals score ± z·SE with the "
           "binomial standard error, tasks independent.")
render.chart(figures.interval_dots(scores.assign(label=scores["model"], estimate=scores["score"]), "label",
                                   "Weighted score", "score", f"{figures.percent(level)} intervals · {shown_w}"),
             "weighted score")
render.table(scores, "weighted scores")

st.subheader("Bayesian hierarchical model", help=TERMS["posterior"])
st.caption(f"Beta-binomial model per model across tasks ({PAPER}, Section 2.2): Y ~ Binomial(N, theta), theta ~ "
           "Beta(alpha, beta); Gibbs sampling with slice steps, 4 chains.")
draws, prior = 2000, ()
if st.toggle("Fit the Bayesian model", key="lb_bayes"):
    b1, b2 = st.columns(2)
    draws = b1.select_slider("Draws per chain", [1000, 2000, 5000], value=2000, key="lb_draws")
    prior_kind = b2.radio("Priors on alpha and beta", ["exponential", "normal"], horizontal=True, key="lb_prior",
                          format_func={"exponential": f"Exponential(rate 1/10000) ({CITE})",
                                       "normal": "Normal(mean, sd) truncated at 0"}.get,
                          help=f"Exponential(rate 1/10000): the priors of {CITE}.")
    if prior_kind == "normal":
        st.caption("Per model: alpha and beta act like prior counts of correct and wrong answers (the simulation "
                   f"of {CITE} uses N(2000, 10)).")
        edited = st.data_editor(pd.DataFrame({"model": list(sel.models), "alpha_mean": 10.0, "alpha_sd": 100.0,
                                              "beta_mean": 10.0, "beta_sd": 100.0}),
                                key="lb_prior_table", hide_index=True, disabled=["model"], num_rows="fixed")
        prior = tuple(edited.itertuples(index=False, name=None))
    more_key = (key, draws, seed, prior)  # "Draw more" doublings of the chosen draws, per data and settings
    more = st.session_state.setdefault("lb_more", {}).get(more_key, 1)
    draws *= more
    try:
        bboard = lc.bayes_board(key, draws, seed, prior, level, summary)
    except (EvalDataError, ValueError) as exc:
        st.error(f"Cannot fit the Bayesian model: {literal(exc)}")
        st.stop()
    probs = lc.rank_probabilities(key, draws, seed, prior, weights, summary)
    prior_text = "truncated normal priors (your table)" if prior else "Exponential(1/10000) priors"
    st.caption(f"{figures.percent(level)} equal-tailed posterior predictive intervals (as in {CITE}, Table 7), "
               f"{draws:,} draws per chain (first half burn-in), {prior_text}, seed {seed}. Convergence "
               f"(rank-normalized, Vehtari et al. 2021): largest R-hat {headline.number(bboard['rhat'].max(), 4)}, "
               f"smallest bulk effective sample size {headline.count(bboard['ess_bulk'].min())}, smallest tail "
               f"effective sample size {headline.count(bboard['ess_tail'].min())}.", help=TERMS["R-hat"])
    problems = convergence_problems(bboard["rhat"], bboard["ess_bulk"], bboard["ess_tail"])
    if problems:
        st.warning(f"The chains have not converged: {'; '.join(problems)} (trust the draws when every R-hat is "
                   f"below {RHAT_MAX} and every effective sample size above {ESS_MIN}). The posterior intervals and "
                   "rank probabilities below may be wrong: draw more.", icon=":material/warning:")
        if draws < _MAX_DRAWS:
            st.button(f"Draw more ({2 * draws:,} draws per chain)", key="lb_draw_more",
                      on_click=lambda: st.session_state["lb_more"].update({more_key: 2 * more}))
        else:
            st.caption(f"{draws:,} draws per chain is the page's limit. Chains that still disagree usually mean the "
                       "data cannot pin the model down (e.g. very few tasks per model): read these results as "
                       "unreliable.")
    elif more > 1:
        st.caption(f"Converged after {more}× the chosen draws.")
    bwide = bboard[bboard["scope"] != "task"].assign(
        value=lambda t: [render.ci(e, lo, hi) for e, lo, hi in zip(t["estimate"], t["ci_low"], t["ci_high"])])
    render.table(bwide.pivot(index="model", columns="name", values="value").reset_index(), "bayesian leaderboard")
    with st.expander("Sampler diagnostics: R-hat and effective sample sizes of every score", icon=":material/table:"):
        st.caption(f"R-hat: {TERMS['R-hat']} ess_bulk, ess_tail: the effective sample sizes of the draws in the bulk "
                   f"and the tails of the posterior (trust the draws above {ESS_MIN}).", help=TERMS["posterior"])
        render.table(bboard, "bayesian leaderboard (long, with diagnostics)")
    render.chart(leaderboard_figures.rank_probability_bars(probs, f"weighted score under the posterior · {shown_w}"),
                 "posterior rank probabilities")
    render.table(probs, "posterior rank probabilities")

st.subheader("Task-weighting map")
if len(categories) < 3:
    st.info(f"The weighting map needs three task categories; this data has {len(categories)} "
            f"({literal(', '.join(categories))}). With fewer there is no trade-off between categories to map.")
    st.stop()
SE_LABELS = {"binomial": "binomial", "bootstrap": "bootstrap", "bayes": "Bayesian posterior"}
t1, t2, t3 = st.columns(3)
chosen = t1.multiselect("Three categories", categories, default=categories[:3], max_selections=3, key="lb_cats")
z = t2.select_slider("Gray zone: within z standard errors", [1.0, 1.4, 2.0, 3.0], value=2.0, key="lb_z",
                     help="z = 2 under independence; z = 2·sqrt(1/2) ≈ 1.4 allows for correlation between models.")
se_source = t3.radio("Standard errors", list(SE_LABELS), format_func=SE_LABELS.get, horizontal=True, key="lb_se")
if len(chosen) != 3:
    st.info("Choose exactly three categories.")
    st.stop()
try:
    map_key = (key, tuple(chosen), z, se_source, n_boot, seed, norm, bounds, draws, prior)
    wmap = lc.weighting_map(*map_key, summary)
except (EvalDataError, ValueError) as exc:
    st.error(literal(exc))
    st.stop()
se_text = {"binomial": "binomial standard errors, tasks and models independent",
           "bootstrap": f"standard errors from the {n_boot:,} bootstrap replicates",
           "bayes": f"posterior standard deviations of the Bayesian model ({draws:,} draws per chain)"}[se_source]
st.caption(f"Each point is one weighting of the three categories (1% steps); its colour is the model with the best "
           f"weighted score. Gray: the top two are within {z:g} standard errors of their difference ({se_text}), "
           "too close to call.")
render.chart(leaderboard_figures.ternary_figure(wmap), "task weighting map")
p1, p2 = st.columns([1, 3])
fmt = p1.radio("Publication version", ["png", "svg", "pdf"], format_func=str.upper, horizontal=True, key="lb_fmt")
p2.download_button(f"Download the static map ({fmt.upper()}, python-ternary)",  # drawn on click (~2 s), not on load
                   lambda: lc.static_map(map_key, fmt, wmap),
                   file_name=f"task-weighting-map.{fmt}", key="lb_static", icon=":material/download:")
share = (wmap.assign(region=wmap["winner"].where(~wmap["gray"], "too close to call"))
         .groupby("region").size().rename("share of weightings").div(len(wmap)).reset_index())
render.table(share, "task weighting map regions")
