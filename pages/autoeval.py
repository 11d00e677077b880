"""AI-assisted evaluation page: what the human labels and the AI judge say together (the answer first: the leading
model with its interval and what the judge is worth in labels), then the chart sorted by the estimate, then details
(effective-sample-size curves, projections, the judge's quality, Bradley-Terry rankings of battles). Battles decided
by an AI judge alone (no human vote) get the judge's own Bradley-Terry ranking, labelled as the AI judge's."""

import numpy as np
import pandas as pd
import streamlit as st

from evalcore.stats import headline
from evalcore.stats.glossary import PAPERS, TERMS
from evalcore.ppi import figures as ppi_figures
from evalcore.ppi.autoeval import METHOD_NAMES, has_human_votes
from evalcore.data.features import numeric_columns
from evalcore.data.validation import EvalDataError
from evalcore.data.display import literal
from evalcore.stats.figures import percent
from evalcore.ppi.curves import ALL_MODELS, default_grid
from evalcore.data.schema import BATTLES, LOG
from pages.common import autoeval_cache as ac
from pages.common import data_source as ds
from pages.common import overall_cache as oc
from pages.common import render, selection
from pages.common.navigation import ensure_app_navigation

ensure_app_navigation()

ANNOTATOR_NAMES = {"confidence": "the model's own confidence (top-1 probability)",
                   "proxy": "the proxy column (an AI annotator's estimate)"}
METRICS = {"correct": "accuracy (0/1 correct)", "score": "the per-example score"}
WHAT = {"correct": "accuracy", "score": "mean score"}
#: the words of this page, each with its glossary line as a tooltip
WORDS = {"PPI": "prediction-powered inference", "PPI++": "PPI++ (tuned weight)", "lambda": "weight on the judge",
         "ESS": "effective sample size"}
#: the method whose estimate the answer gives, best first
ANSWER_METHODS = (METHOD_NAMES["stratified ppi++"], METHOD_NAMES["ppi++"])


def pooled_note(table: pd.DataFrame, metric: str, rows) -> None:
    """Beside the answer: its number is pooled over the examples (labels and judge together), with the leader's
    overall number of the other pages (the mean over tasks) where the selection has several tasks."""
    method = next((m for m in ANSWER_METHODS if (table["method"] == m).any()), None)
    if method is None:
        return
    top = table[table["method"] == method].sort_values("estimate", ascending=False, kind="stable").iloc[0]
    examples = int(top["n"]) + (int(top["N"]) if pd.notna(top.get("N")) else 0) if "n" in top else None
    pooled = "pooled over its examples" if examples is None else f"pooled over its {headline.count(examples)} examples"
    whole = oc.overall((data.key, sel.models, sel.tasks, sel.groups), metric, level, rows)
    note = headline.beside_overall(str(top["model"]), pooled, whole, level, WHAT.get(metric, metric))
    if note:
        st.caption(literal(note))


def words_row(*extra: str) -> None:
    """The page's methods by name, each with its one-line explanation as a tooltip."""
    words = {**WORDS, **{term: term for term in extra}}
    for column, (term, word) in zip(st.columns(len(words)), words.items()):
        column.caption(word, help=TERMS[term])


def ranked(table: pd.DataFrame, value: str = "estimate") -> pd.DataFrame:
    """The rows grouped by model, models best first by the answer's method (PPI++), methods in their fitted order
    within a model."""
    method = next((m for m in ANSWER_METHODS if (table["method"] == m).any()), table["method"].iloc[-1])
    order = table[table["method"] == method].sort_values(value, ascending=False, kind="stable")["model"].tolist()
    order += [m for m in dict.fromkeys(table["model"]) if m not in order]
    position = {m: i for i, m in enumerate(order)}
    methods = {m: i for i, m in enumerate(dict.fromkeys(table["method"]))}
    keys = table["model"].map(position) * len(methods) + table["method"].map(methods)
    return table.iloc[np.argsort(keys.to_numpy(), kind="stable")].reset_index(drop=True)


def as_counts(table: pd.DataFrame, *columns: str) -> pd.DataFrame:
    """Effective sample sizes are counts of labels: shown as whole numbers."""
    present = [c for c in columns if c in table]
    return table.assign(**{c: table[c].round() for c in present})


def judge_lead(table: pd.DataFrame, what: str, n_battles: int) -> str:
    """'By the AI judge's verdicts alone (805 battles, no human vote), m leads on strength ...': the judge's own
    ranking, never presented as people's."""
    return (f"By the AI judge's verdicts alone ({headline.count(n_battles)} battles, no human vote), "
            f"{headline.lead_sentence(table, level, what)} This is the judge's ranking: nothing corrects its bias, "
            "and the intervals are valid for the judge's preferences, not for people's.")


JUDGE_CAPTION = ("The AI judge's ranking: the battles carry no human vote, so the Bradley-Terry model is fitted to the "
                 "judge's verdicts alone (its probability that B wins, or its hard verdict). Nothing corrects the "
                 "judge's bias; the intervals are valid for the judge's preferences, not for people's. Add human "
                 "votes (`outcome`) on some battles to correct it (PPI++).")


def lead(table: pd.DataFrame, what: str, n_labels: int, judge: str = "the AI judge") -> str:
    """'With 3,480 human labels and the AI judge, atlas-l leads on accuracy at 0.841 (95% interval 0.829–0.852);
    no other model is within its interval; for it the judge is worth about 514 extra labels (effective sample size
    3,994, 95% interval 3,910–4,094).'"""
    method = next((m for m in ANSWER_METHODS if (table["method"] == m).any()), None)
    if method is None:
        return headline.lead_sentence(table, level, what)
    rows = table[table["method"] == method]
    first = headline.lead_sentence(rows, level, what).rstrip(".")
    top = rows.sort_values("estimate", ascending=False, kind="stable").iloc[0]
    if len(rows) == 1:
        first = f"{top['model']}'s {what} is {headline.interval(top['estimate'], top['ci_low'], top['ci_high'])}"
    sentence = f"With {headline.count(n_labels)} human labels and {judge}, {first}"
    if "ess" not in top or pd.isna(top["ess"]):
        return sentence + "."
    extra = float(top["ess"]) - n_labels
    ess = f"effective sample size {headline.count(top['ess'])}"
    if pd.notna(top.get("ess_low")) and pd.notna(top.get("ess_high")) and top["ess_low"] < top["ess_high"]:
        ess += f", {percent(level)} interval {headline.count(top['ess_low'])}{headline.DASH}" \
               f"{headline.count(top['ess_high'])}"
    worth = (f"the judge is worth about {headline.count(extra)} extra labels" if extra >= 0.5 else
             "the judge adds no labels' worth")
    return f"{sentence}; {'for it ' if len(rows) > 1 else ''}{worth} ({ess})."


st.title("AI-assisted evaluation")
answer_box, chart_box = st.container(), st.container()  # the answer and its chart first, filled below
st.caption("A few human labels and many examples scored by an AI judge (another model, or the model's own "
           "confidence): the labels correct the judge's bias, so the estimate stays unbiased and its interval is "
           f"tighter than from the labels alone, and the page says how many labels the judge is worth. Methods: "
           f"{PAPERS['autoeval']}; the tuned weight from {PAPERS['ppi++']}.")

data = ds.try_active_data()
if data is None:
    st.stop()
sel = selection.current(data)
kind = data.report.kind
level, alpha = sel.level, sel.alpha  # the level chosen once, in the sidebar
rows = selection.apply(data.log, sel, kind)
selection.require(sel, rows, min_models=2 if kind == BATTLES else 1)  # a battle needs both its models selected
examples = selection.examples(rows, "Effective-sample-size curves, stratified and weighted PPI and the annotator "
                              "comparison", (data.key, sel.models, sel.tasks, sel.groups))
if examples is None:  # beyond the memory bound: estimates from moments and per-pair statistics
    key = (data.key, sel.models, sel.tasks, sel.groups)
    try:
        if kind == BATTLES:
            reference = st.selectbox("Reference model (strength fixed at 0)", rows.models(), key="ae_reference")
            table = ac.battles_from_statistics(key, level, reference, rows)
            by_judge = table.attrs.get("labels") == "judge"
            if "method" not in table:  # one fit: the judge's own, PPI++ (λ > 0) or the classical one
                table = table.assign(method=METHOD_NAMES["judge"] if by_judge else
                                     METHOD_NAMES["ppi++"] if table["lam"].iloc[0] > 0 else METHOD_NAMES["classical"])
            table = ranked(table.rename(columns={"coefficient": "estimate"})).rename(
                columns={"estimate": "coefficient"})
            shown = table.rename(columns={"coefficient": "estimate"})
            strength = f"strength (log-odds against {reference})"
            with answer_box:
                render.answer(judge_lead(shown, strength, table.attrs["N"]) if by_judge else
                              headline.lead_sentence(shown[shown["method"] == shown["method"].iloc[-1]], level,
                                                     strength))
            with chart_box:
                render.chart(ppi_figures.estimates_figure(
                    shown, ("The AI judge's " if by_judge else "") + "Bradley-Terry coefficients (strength), "
                    "strongest first", "strength (log-odds against the reference)",
                    f"{percent(level)} intervals · reference {reference} fixed at 0", reference=0.0),
                    "bradley-terry")
                words_row("Bradley-Terry")
            st.caption(f"From per-pair statistics. {JUDGE_CAPTION}" if by_judge else
                       f"From per-pair statistics. {percent(level)} intervals for each model's Bradley-Terry "
                       "strength against the reference; PPI++ (with the judge) stays valid whatever the judge's "
                       "quality.")
            for note in table.attrs.get("notes", []):
                st.info(literal(note), icon=":material/info:")
        else:
            annotators = [a for a in ("proxy", "confidence") if a in rows]
            if not annotators or sel.metric is None:
                st.info("PPI needs a labeled metric and an annotator column (`proxy` or `confidence`).")
                st.stop()
            annotator = st.radio("Annotator", annotators, format_func=ANNOTATOR_NAMES.get, horizontal=True,
                                 key="ae_annotator")
            table = ranked(as_counts(ac.from_moments(key, sel.metric, annotator, level, rows), "ess", "ess_low",
                                     "ess_high"))
            n_labels = int(table["n"].max()) if "n" in table else 0
            with answer_box:
                render.answer(lead(table, WHAT.get(sel.metric, sel.metric), n_labels))
                pooled_note(table, sel.metric, rows)
            with chart_box:
                render.chart(ppi_figures.estimates_figure(
                    table, f"{WHAT.get(sel.metric, sel.metric).capitalize()} with and without the judge, best first",
                    METRICS.get(sel.metric, sel.metric), f"{percent(level)} intervals"), "classical vs ppi++")
                words_row()
            st.caption(f"From moments. {percent(level)} intervals: PPI++ contains each model's true mean that often "
                       "whatever the judge's quality. The effective sample size is the number of human labels alone "
                       "that would give the same precision — a plug-in from moments that treats the weight on the "
                       "judge as known, so optimistic by a few % at small n (ImageNet-X, n = 100: 1.51–1.53 × n "
                       "against 1.41–1.50 × n realised).")
    except EvalDataError as exc:
        st.error(literal(exc))
        st.stop()
    render.table(table, "estimates")
    st.stop()
rows = examples


def show_notes(notes) -> None:
    for note in notes:
        st.info(literal(note), icon=":material/info:")


def split_settings(prefix: str, total: int, smallest: int, low: int, high: int) -> tuple[int, int, int, int]:
    """Inputs of a split study: (splits per n, smallest n, largest n, seed); ``low``/``high`` are the defaults."""
    c1, c2, c3, c4 = st.columns(4)
    splits = int(c1.number_input("Splits per n", 10, 2000, 250, 10, key=f"{prefix}_splits"))
    lo = int(c2.number_input("Smallest n", smallest, max(smallest, total // 4), low, key=f"{prefix}_nmin"))
    hi = int(c3.number_input("Largest n", lo + 1, max(lo + 1, total - 2), max(lo + 1, high), key=f"{prefix}_nmax"))
    seed = int(c4.number_input("Seed", 0, 2**31 - 1, 0, key=f"{prefix}_seed"))
    return splits, lo, hi, seed


def curves_answer(curves: pd.DataFrame, total: int, what: str, unit: str = "labels") -> str:
    """The measured worth of the judge at the middle labeled size n of the split study, over all models."""
    rows = curves[(curves["model"] == ALL_MODELS) & (curves["method"] == "ppi++")].sort_values("n")
    if rows.empty:
        return f"The split study could not measure what the judge is worth for {what}."
    row = rows.iloc[(len(rows) - 1) // 2]
    n = int(row["n"])
    measured = row["ess_empirical"] if pd.notna(row["ess_empirical"]) else row["ess"]
    return (f"Measured on {headline.count(total)} fully labeled {unit}: with {headline.count(n)} human labels and "
            f"the AI judge, {what} is as precise as with about {headline.count(measured)} labels alone, "
            f"{headline.number(measured / n)} times as many (effective sample size; 5–95% of random splits "
            f"{headline.count(row['ess_low'])}{headline.DASH}{headline.count(row['ess_high'])}), averaged over "
            "the models.")


def show_curves(prefix: str, name: str, curves, models, caption: str) -> None:
    """The split study's ESS / MSE / width / coverage panels, rank correlation and table."""
    shown = st.selectbox("Curves for", [ALL_MODELS, *models], key=f"{prefix}_curve_model")
    render.chart(ppi_figures.ess_curves_figure(curves, level, shown), f"{name}ess curves")
    st.caption(caption)
    render.chart(ppi_figures.rank_correlation_figure(curves), f"{name}rank correlation")
    st.caption("Ranks from Bonferroni intervals with ties (overlapping intervals share a rank), compared with "
               "the ranking on all data.")
    with st.expander("Split-study table (effective sample size, error, width, coverage per n)",
                     icon=":material/table:"):
        render.table(curves, f"{name}ess curves")


# --------------------------------------------------------------------------- pairwise battles
if kind == BATTLES:
    by_judge = not has_human_votes(rows) and "judge" in rows  # the AI judge's verdicts alone: its own ranking
    st.subheader("The AI judge's Bradley-Terry ranking (no human votes)" if by_judge else
                 "Bradley-Terry ranking from human votes and an AI judge", anchor=False)
    models = sorted(set(rows["model_a"]) | set(rows["model_b"]))
    c1, c2 = st.columns(2)
    judge = c1.radio("Judge output", ["probability", "hard"], horizontal=True, key="ae_judge",
                     format_func={"probability": "probability that B wins", "hard": "hard label (> 0.5)"}.get)
    reference = c2.selectbox("Reference model (strength fixed at 0)", models, key="ae_reference")
    try:
        table = ac.bradley_terry((data.key, sel.models), alpha, judge, reference, rows)
    except EvalDataError as exc:
        st.error(literal(exc))
        st.stop()
    table = ranked(table.rename(columns={"coefficient": "estimate"})).rename(columns={"estimate": "coefficient"})
    shown = table.rename(columns={"coefficient": "estimate"})
    strength = f"strength (log-odds against {reference})"
    with answer_box:
        render.answer(judge_lead(shown, strength, table.attrs["N"]) if by_judge else
                      lead(shown, strength, table.attrs["n"]).replace(" human labels", " human votes"))
    with chart_box:
        render.chart(ppi_figures.estimates_figure(
            shown, ("The AI judge's " if by_judge else "") + "Bradley-Terry coefficients (strength), strongest first",
            f"strength (log-odds against {reference})",
            f"{percent(level)} intervals per model · reference {reference} fixed at 0", reference=0.0),
            "bradley-terry coefficients")
        words_row("Bradley-Terry")
    voted = "judge" in rows and "outcome" in rows and rows["outcome"].notna().all() and rows["judge"].notna().all()
    if voted:
        fit_tab, curve_tab = st.tabs(["Bradley-Terry", "Effective sample size"])
    else:
        fit_tab = st.container()
    with fit_tab:
        if by_judge:
            st.caption(f"{headline.count(table.attrs['N'])} battles decided by the AI judge, none with a human vote. "
                       f"The chance that B beats A grows with B's strength minus A's. {JUDGE_CAPTION} Interval: "
                       f"{percent(level)} normal interval for each strength on its own.")
        else:
            st.caption(f"{headline.count(table.attrs['n'])} battles with a human vote, "
                       f"{headline.count(table.attrs['N'])} judged by the AI only. The chance that B beats A grows "
                       "with B's strength minus A's; the human votes correct the judge's bias (PPI++, with the weight "
                       f"on the judge tuned for the narrowest intervals). Interval: {percent(level)} normal interval "
                       "for each strength on its own.")
        show_notes(table.attrs["notes"])
        render.table(table[["model", "method", "coefficient", "se", "ci_low", "ci_high", "rank"]],
                     "bradley-terry coefficients")
        with st.expander("Fit diagnostics (standard errors, weight on the judge, ranks by method)",
                         icon=":material/functions:"):
            fitted = ("the classical logistic fit to the AI judge's verdicts (λ = 0: no human vote to weigh the "
                      "judge against)" if by_judge else f"PPI++ (equation 6 of {PAPERS['autoeval']}) with λ, the "
                      "weight on the judge, tuned to minimise the trace of the sandwich covariance")
            st.caption(f"P(B beats A) = 1 / (1 + exp(ζ_A − ζ_B)); {fitted}. Rank: 1 + the number of models whose "
                       f"Bonferroni interval (all {len(models)} models at once) lies entirely above; overlapping "
                       "intervals share a rank.")
            render.table(table[["model", "method", "coefficient", "se", "ci_low", "ci_high", "rank", "lam"]],
                         "bradley-terry coefficients with the weight on the judge")
            methods = list(dict.fromkeys(table["method"]))  # classical, PPI, PPI++: the order they were fitted in
            order = list(dict.fromkeys(table["model"]))
            ranking = table.pivot(index="model", columns="method", values="rank")[methods].loc[order].reset_index()
            st.caption("Ranks by method")
            render.table(ranking, "bradley-terry ranks by method")
    if voted:
        with curve_tab:
            st.caption("Every battle has a human vote, so the judge's worth can be measured: random subsets of n "
                       "battles keep their votes, the others keep only the judge; the truth is the classical fit "
                       f"on all votes (as in Figure 4 of {PAPERS['autoeval']}).")
            total = len(rows)
            splits, lo, hi, seed = split_settings("ae_bt", total, 10, min(10 * len(models), max(10, total // 10)),
                                                  min(2000, total // 4))
            try:
                grid = tuple(default_grid(total, 12, lo, hi))
                curves = ac.bt_curves((data.key, sel.models), grid, splits, alpha, seed, judge, reference, rows)
            except EvalDataError as exc:
                st.error(literal(exc))
                st.stop()
            failed = curves.groupby("n")["failed"].first()
            show_curves("ae_bt", "bradley-terry ", curves, [m for m in models if m != reference],
                        f"Effective sample size per strength = n · Var(classical) / Var(method) (band 5–95% of "
                        f"splits; dots: n · MSE ratio). Error and coverage: means over {headline.count(splits)} "
                        f"splits with 95% Monte Carlo intervals, against the fit on all {headline.count(total)} "
                        f"votes. Seed {seed}."
                        + (f" Splits without a finite classical estimate (a model that won or lost every vote) "
                           f"are left out: up to {failed.max():.0%} at the smallest n." if failed.max() > 0 else ""))
    st.stop()

# --------------------------------------------------------------------------- per-example logs
metrics = [m for m in ("correct", "score") if m in rows and rows[m].notna().any()]
annotators = [a for a in ("confidence", "proxy") if a in rows and rows[a].notna().any()]
if kind != LOG or not metrics or not annotators:
    st.info("This page needs a per-example log with a human-labeled metric (`correct` or `score`, missing where "
            "unlabeled) and an annotator's estimate of it on every example (the model's `confidence` or a `proxy` "
            "column), or pairwise battles (human `outcome` votes and/or an AI `judge`'s verdicts). Load a demo or "
            "upload such data on the Data page.")
    st.stop()

c1, c2, c3 = st.columns(3)
metric = c1.selectbox("Metric", metrics, format_func=METRICS.get, key="ae_metric")
if metric != "correct" and "confidence" in annotators:
    annotators.remove("confidence")  # a top-1 probability estimates accuracy, not another score
if not annotators:
    st.info("The score needs an annotator's estimate of it: map a column to `proxy` on the Data page.")
    st.stop()
annotator = c2.selectbox("Annotator (the AI judge)", annotators, format_func=ANNOTATOR_NAMES.get, key="ae_annotator")
tasks = sorted(rows["task"].astype(str).unique())
task = c3.selectbox("Task", ["all tasks", *tasks], key="ae_task") if len(tasks) > 1 else "all tasks"
if task != "all tasks":
    rows = rows[rows["task"] == task]
what = WHAT[metric] + ("" if task == "all tasks" else f" on {task}")
extra = numeric_columns(rows)
with st.expander("Settings", icon=":material/settings:"):
    s1, s2 = st.columns(2)
    more = s1.multiselect("More annotators to compare (numeric columns)", extra, key="ae_more",
                          help="Other columns holding an annotator's estimate of the same metric, e.g. a second "
                               "judge; they appear in the annotator-quality view.")
    has_weight = "weight" in rows and rows["weight"].notna().any()
    weighted = s2.checkbox("Correct for covariate shift with the `weight` column", value=False, key="ae_weighted",
                           disabled=not has_weight,
                           help="Importance weights dP/dQ of the labeled examples (Supplement B of "
                                f"{PAPERS['autoeval']}) when the labeled examples were not drawn at random from the "
                                "unlabeled pool.")
    self_normalize = s2.checkbox("Self-normalize the weights (mean 1)", value=True, key="ae_selfnorm",
                                 disabled=not weighted)
    boot_seed = int(s1.number_input("Seed of the effective-sample-size bootstrap", 0, 2**31 - 1, 0,
                                    key="ae_boot_seed"))
all_annotators = tuple(dict.fromkeys([annotator, *[a for a in annotators if a != annotator], *more]))
key = (data.key, sel.models, sel.tasks, sel.groups, task, metric, all_annotators, weighted)
try:
    mats = ac.matrices(key, metric, all_annotators, weighted, rows)
except EvalDataError as exc:
    st.error(literal(exc))
    st.stop()
st.caption(f"{len(mats.models)} model(s) on {headline.count(mats.n + mats.N)} examples: {headline.count(mats.n)} "
           f"human-labeled, {headline.count(mats.N)} scored by the annotator only. Annotator: "
           f"{ANNOTATOR_NAMES.get(annotator, annotator)}.")

tab_names = ["Effective sample size", "Annotator quality"] if mats.fully_labeled else \
    ["Estimates", "Projection", "Annotator quality"]
tabs = dict(zip(tab_names, st.tabs(tab_names)))

if mats.fully_labeled:
    with tabs["Effective sample size"]:
        st.caption("Every example is labeled, so the judge's worth can be measured: random subsets of n examples "
                   "play the labeled set and the rest keep only the judge's value; the full-data mean is the truth "
                   f"(as in Figures 1, 2 and 6 of {PAPERS['autoeval']}).")
        total = mats.n
        splits, lo, hi, seed = split_settings("ae", total, 5, min(20, max(5, total // 10)), min(2000, total // 2))
        try:
            grid = tuple(default_grid(total, 20, lo, hi))
            curves = ac.curves(key, annotator, grid, splits, alpha, seed, mats)
        except EvalDataError as exc:
            st.error(literal(exc))
            st.stop()
        with answer_box:
            render.answer(curves_answer(curves, total, what, "examples"))
        with chart_box:
            words_row()
        show_curves("ae", "", curves, mats.models,
                    "Effective sample size = n · Var(classical) / Var(method): the human labels alone that would "
                    "give the same precision. Dots: realised, n · MSE(classical) / MSE(method) over the splits — "
                    "the number to trust; line and band (5–95% of splits): the plug-in, which treats PPI++'s weight "
                    "on the judge as known and so overstates it at small n (ImageNet-X, n = 100: 1.51–1.53 × n "
                    f"plug-in, 1.41–1.50 × n realised). Width: mean {percent(level)} interval width (band 5–95%). "
                    f"Error and coverage: means over {headline.count(splits)} splits with 95% Monte Carlo "
                    f"intervals; coverage should sit at {percent(level)}. Axes start where the data are (n, "
                    f"effective sample size, error and width on log scales). Seed {seed}.")
    with tabs["Annotator quality"]:
        n_q = int(st.number_input("Labeled examples n", 5, max(5, total - 2), min(500, max(5, total // 4)),
                                  key="ae_quality_n"))
        try:
            qual = ac.quality_curves(key, n_q, splits, alpha, seed, mats)
        except EvalDataError as exc:
            st.error(literal(exc))
            st.stop()
        render.chart(ppi_figures.annotator_quality_figure(qual), "ess against annotator quality")
        st.caption(f"Quality: correlation of the annotator with the human labels. Effective sample size / n of "
                   f"PPI++ at n = {headline.count(n_q)} (mean over {headline.count(splits)} splits, bars 5–95%); "
                   "1 = no gain, PPI++ never does worse than the labels alone (weight on the judge → 0). "
                   f"Seed {seed}.")
        render.table(qual, "annotator quality")
    st.stop()

with tabs["Estimates"]:
    c1, c2 = st.columns(2)
    designs = ["random"] + (["groups"] if len(set(mats.groups)) > 1 else []) + ["annotator"]
    design = c1.selectbox("How the labels were chosen", designs, format_func=ac.DESIGNS.get, key="ae_design")
    n_strata = int(c2.slider("Strata", 2, 20, 10, key="ae_strata", disabled=design != "annotator"))
    try:
        table = ac.estimates(key, annotator, alpha, weighted, self_normalize, design, n_strata, boot_seed, mats)
    except EvalDataError as exc:
        st.error(literal(exc))
        st.stop()
    table = ranked(as_counts(table, "ess", "ess_low", "ess_high", "ess_plugin"))
    with answer_box:
        render.answer(lead(table, what, mats.n))
        if task == "all tasks":
            pooled_note(table, metric, rows)
    with chart_box:
        render.chart(ppi_figures.estimates_figure(
            table, f"{WHAT[metric].capitalize()} with and without the judge, best first", METRICS[metric],
            f"{percent(level)} intervals per model · n = {headline.count(mats.n)} labels, "
            f"N = {headline.count(mats.N)} judged only"), "ppi interval comparison")
        words_row()
    show_notes(table.attrs["notes"])
    st.caption(f"Interval: {percent(level)} normal interval for each model on its own. Classical: the human "
               "labels alone; PPI: labels plus the judge, fully trusted; PPI++: the weight on the judge tuned per "
               "model (0 to 1). Effective sample size: the human labels alone that would give the same precision, "
               "counting the noise of tuning the weight on the same labels (bootstrap), with a "
               f"{percent(level)} bootstrap interval over the labeled examples ({ac.N_BOOT} replicates, seed "
               f"{boot_seed})." + (" Weighted by the importance weights." if weighted else ""))
    render.table(table[[c for c in ("model", "method", "estimate", "ci_low", "ci_high", "ess", "ess_low",
                                    "ess_high", "n", "N") if c in table]], "estimates by model")
    with st.expander("Estimate diagnostics and simultaneous intervals (weight on the judge, plug-in effective "
                     "sample size, ranks)", icon=":material/functions:"):
        st.caption("lam: the weight λ on the judge (PPI++ clips it to [0, 1]). ess_plugin treats λ as known and "
                   "overstates PPI++ (ImageNet-X, n = 100: 1.51–1.53 × n against 1.41–1.50 × n realised); ess_ratio "
                   "= ess / n. Rank: from Bonferroni intervals over all models, overlapping intervals tie.")
        render.table(table.drop(columns=["chi2_low", "chi2_high"]), "ppi estimates")
        st.caption(f"Simultaneous intervals (PPI++): both hold for all {len(mats.models)} models at once with "
                   f"probability {percent(level)}: the chi-square confidence ellipsoid's projections (chi2_low, "
                   "chi2_high), and Bonferroni (narrower for several models).")
        columns = ["model", "estimate", "chi2_low", "chi2_high", "bonferroni_low", "bonferroni_high", "rank"]
        simultaneous = table.loc[table["method"] == METHOD_NAMES["ppi++"], columns]
        render.table(simultaneous, "simultaneous intervals")

with tabs["Projection"]:
    proj = ac.projection(key, annotator, alpha, mats)
    width = st.number_input("Target interval width (full width)", 0.002, 1.0, 0.05, 0.005, format="%.3f",
                            key="ae_width")
    render.chart(ppi_figures.projection_figure(proj, actual_n=mats.n, target_width=float(width), level=level),
                 "projected precision")
    st.caption("Projected from the current labels' variances and covariance with the judge, as more of the pool "
               "gets labeled (the weight on the judge re-tuned at each n). Plug-in values: the curve is as good as "
               "those estimates. Both axes are logarithmic, so they start where the data are.")
    try:
        need = ac.needed(key, annotator, alpha, float(width), mats)
    except EvalDataError as exc:
        st.error(literal(exc))
        st.stop()
    st.caption(f"Labels needed for a {percent(level)} interval no wider than {width:.3f}, with the judge (PPI++) "
               "and without it (classical); empty when even labeling the whole pool does not reach it.")
    render.table(need, "labels needed")
    with st.expander("Projected precision table", icon=":material/table:"):
        render.table(proj, "projected precision")

with tabs["Annotator quality"]:
    qual = ac.quality(key, alpha, boot_seed, mats)
    render.chart(ppi_figures.annotator_quality_figure(qual), "ess against annotator quality")
    st.caption(f"Quality: correlation of each annotator with the human labels on the {headline.count(mats.n)} "
               "labeled examples. Effective sample size / n of PPI++ at the current n, counting the noise of "
               f"tuning the weight on the judge, bars: {percent(level)} bootstrap interval ({ac.N_BOOT} replicates, "
               f"seed {boot_seed}); 1 = no gain.")
    render.table(qual, "annotator quality")
