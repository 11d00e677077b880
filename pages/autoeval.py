"""AI-assisted evaluation page: PPI / PPI++ estimates, effective-sample-size curves, Bradley-Terry rankings."""

import streamlit as st

from evalcore.stats import figures
from evalcore.ppi import figures as ppi_figures
from evalcore.ppi.autoeval import METHOD_NAMES
from evalcore.data.features import numeric_columns
from evalcore.data.validation import EvalDataError
from evalcore.data.display import literal
from evalcore.stats.figures import percent
from evalcore.ppi.curves import ALL_MODELS, default_grid
from evalcore.data.schema import BATTLES, LOG
from pages.common import autoeval_cache as ac
from pages.common import data_source as ds
from pages.common import render, selection
from pages.common.navigation import ensure_app_navigation

ensure_app_navigation()

ANNOTATOR_NAMES = {"confidence": "the model's own confidence (top-1 probability)",
                   "proxy": "the proxy column (an AI annotator's estimate)"}
METRICS = {"correct": "accuracy (0/1 correct)", "score": "the per-example score"}

st.title("AI-assisted evaluation")
st.caption("A few human labels and many examples scored by an AI annotator (a judge, or the model's own "
           "confidence): prediction-powered inference (PPI, PPI++) gives unbiased metrics with tighter intervals "
           "than the labels alone, and says how many labels the annotator is worth (Boyeau et al., AutoEval Done "
           "Right).")

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
            reference = st.selectbox("Reference model (coefficient fixed at 0)", rows.models(), key="ae_reference")
            table = ac.battles_from_statistics(key, level, reference, rows)
            st.caption(f"From per-pair statistics. {percent(level)} intervals for each "
                       "Bradley-Terry coefficient against the reference; PPI++ (with the judge) stays valid whatever "
                       "the judge's quality.")
            render.chart(figures.interval_dots(table.rename(columns={"coefficient": "estimate"}).assign(
                label=table["model"]), "model", "Bradley-Terry strength", "coefficient",
                f"{percent(level)} intervals"), "bradley-terry")
        else:
            annotators = [a for a in ("proxy", "confidence") if a in rows]
            if not annotators or sel.metric is None:
                st.info("PPI needs a labeled metric and an annotator column (`proxy` or `confidence`).")
                st.stop()
            annotator = st.radio("Annotator", annotators, format_func=ANNOTATOR_NAMES.get, horizontal=True,
                                 key="ae_annotator")
            table = ac.from_moments(key, sel.metric, annotator, level, rows)
            st.caption(f"From moments. {percent(level)} intervals: PPI++ contains each "
                       "model's true mean that often whatever the annotator's quality; ESS is the number of labeled "
                       "examples a classical estimate would need for the same precision — a plug-in from moments "
                       "that treats λ as known, so optimistic by a few % at small n (ImageNet-X, n = 100: "
                       "1.51–1.53 × n against 1.41–1.50 × n realised).")
            render.chart(figures.interval_dots(table.assign(label=table["model"] + " · " + table["method"]), "label",
                                               f"Mean {sel.metric}: classical vs PPI++", sel.metric,
                                               f"{percent(level)} intervals", by="method"), "classical vs ppi++")
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


def show_curves(prefix: str, name: str, curves, models, caption: str) -> None:
    """The split study's ESS / MSE / width / coverage panels, rank correlation and table."""
    shown = st.selectbox("Curves for", [ALL_MODELS, *models], key=f"{prefix}_curve_model")
    render.chart(ppi_figures.ess_curves_figure(curves, level, shown), f"{name}ess curves")
    st.caption(caption)
    render.chart(ppi_figures.rank_correlation_figure(curves), f"{name}rank correlation")
    st.caption("Ranks from Bonferroni intervals with ties (overlapping intervals share a rank), compared with "
               "the ranking on all data.")
    render.table(curves, f"{name}ess curves")


# --------------------------------------------------------------------------- pairwise battles
if kind == BATTLES:
    st.subheader("Bradley-Terry ranking from human votes and an AI judge")
    models = sorted(set(rows["model_a"]) | set(rows["model_b"]))
    c1, c2 = st.columns(2)
    judge = c1.radio("Judge output", ["probability", "hard"], horizontal=True, key="ae_judge",
                     format_func={"probability": "probability that B wins", "hard": "hard label (> 0.5)"}.get)
    reference = c2.selectbox("Reference model (coefficient fixed at 0)", models, key="ae_reference")
    try:
        table = ac.bradley_terry((data.key, sel.models), alpha, judge, reference, rows)
    except EvalDataError as exc:
        st.error(literal(exc))
        st.stop()
    voted = "judge" in rows and rows["outcome"].notna().all() and rows["judge"].notna().all()
    if voted:
        fit_tab, curve_tab = st.tabs(["Bradley-Terry", "ESS curves"])
    else:
        fit_tab = st.container()
    with fit_tab:
        st.caption(f"{table.attrs['n']:,} battles with a human vote, {table.attrs['N']:,} judged by the AI only. "
                   "P(B beats A) = 1 / (1 + exp(ζ_A − ζ_B)); PPI++ (eq. 6) corrects the judge's bias with the "
                   "human votes, λ tuned to minimise the trace of the sandwich covariance.")
        show_notes(table.attrs["notes"])
        render.chart(figures.interval_dots(
            table.rename(columns={"coefficient": "estimate"}), label="model", by="method",
            title="Bradley-Terry coefficients", x_title=f"coefficient (log-odds against {reference})",
            subtitle=f"{percent(level)} marginal intervals per coefficient · reference {reference} fixed at 0",
            reference=0.0), "bradley-terry coefficients")
        st.caption(f"Interval: {percent(level)} normal interval for each coefficient on its own. Rank: 1 + the number "
                   f"of models whose Bonferroni interval (all {len(models)} models at once) lies entirely above; "
                   "overlapping intervals share a rank.")
        render.table(table[["model", "method", "coefficient", "se", "ci_low", "ci_high", "rank", "lam"]],
                     "bradley-terry coefficients")
        methods = list(dict.fromkeys(table["method"]))  # classical, PPI, PPI++: the order they were fitted in
        ranking = table.pivot(index="model", columns="method", values="rank")[methods].reset_index()
        st.markdown("**Ranks by method**")
        render.table(ranking, "bradley-terry ranks by method")
    if voted:
        with curve_tab:
            st.caption("Every battle has a human vote, so the judge's worth can be measured: random subsets of n "
                       "battles keep their votes, the others keep only the judge; the truth is the classical fit "
                       "on all votes (the paper's Figure 4).")
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
                        f"ESS per coefficient = n · Var(classical) / Var(method) (band 5–95% of splits; dots: "
                        f"n · MSE ratio). MSE and coverage: means over {splits:,} splits with 95% Monte Carlo "
                        f"intervals, against the fit on all {total:,} votes. Seed {seed}."
                        + (f" Splits without a finite classical estimate (a model that won or lost every vote) "
                           f"are left out: up to {failed.max():.0%} at the smallest n." if failed.max() > 0 else ""))
    st.stop()

# --------------------------------------------------------------------------- per-example logs
metrics = [m for m in ("correct", "score") if m in rows and rows[m].notna().any()]
annotators = [a for a in ("confidence", "proxy") if a in rows and rows[a].notna().any()]
if kind != LOG or not metrics or not annotators:
    st.info("This page needs a per-example log with a human-labeled metric (`correct` or `score`, missing where "
            "unlabeled) and an annotator's estimate of it on every example (the model's `confidence` or a `proxy` "
            "column), or pairwise battles with human `outcome` votes and a `judge`. Load a demo or upload such data "
            "on the Data page.")
    st.stop()

c1, c2, c3 = st.columns(3)
metric = c1.selectbox("Metric", metrics, format_func=METRICS.get, key="ae_metric")
if metric != "correct" and "confidence" in annotators:
    annotators.remove("confidence")  # a top-1 probability estimates accuracy, not another score
if not annotators:
    st.info("The score needs an annotator's estimate of it: map a column to `proxy` on the Data page.")
    st.stop()
annotator = c2.selectbox("Annotator", annotators, format_func=ANNOTATOR_NAMES.get, key="ae_annotator")
tasks = sorted(rows["task"].astype(str).unique())
task = c3.selectbox("Task", ["all tasks", *tasks], key="ae_task") if len(tasks) > 1 else "all tasks"
if task != "all tasks":
    rows = rows[rows["task"] == task]
extra = numeric_columns(rows)
with st.expander("Settings", icon=":material/settings:"):
    s1, s2 = st.columns(2)
    more = s1.multiselect("More annotators to compare (numeric columns)", extra, key="ae_more",
                          help="Other columns holding an annotator's estimate of the same metric, e.g. a second "
                               "judge; they appear in the annotator-quality view.")
    has_weight = "weight" in rows and rows["weight"].notna().any()
    weighted = s2.checkbox("Correct for covariate shift with the `weight` column", value=False, key="ae_weighted",
                           disabled=not has_weight,
                           help="Importance weights dP/dQ of the labeled examples (Supplement B) when the labeled "
                                "examples were not drawn at random from the unlabeled pool.")
    self_normalize = s2.checkbox("Self-normalize the weights (mean 1)", value=True, key="ae_selfnorm",
                                 disabled=not weighted)
    boot_seed = int(s1.number_input("Seed of the ESS bootstrap", 0, 2**31 - 1, 0, key="ae_boot_seed"))
all_annotators = tuple(dict.fromkeys([annotator, *[a for a in annotators if a != annotator], *more]))
key = (data.key, sel.models, sel.tasks, sel.groups, task, metric, all_annotators, weighted)
try:
    mats = ac.matrices(key, metric, all_annotators, weighted, rows)
except EvalDataError as exc:
    st.error(literal(exc))
    st.stop()
st.caption(f"{len(mats.models)} model(s) on {mats.n + mats.N:,} examples: {mats.n:,} human-labeled, "
           f"{mats.N:,} scored by the annotator only. Annotator: {ANNOTATOR_NAMES.get(annotator, annotator)}.")

tab_names = ["ESS curves", "Annotator quality"] if mats.fully_labeled else \
    ["Estimates", "Projection", "Annotator quality"]
tabs = dict(zip(tab_names, st.tabs(tab_names)))

if mats.fully_labeled:
    with tabs["ESS curves"]:
        st.caption("Every example is labeled, so the annotator's worth can be measured: random subsets of n "
                   "examples play the labeled set and the rest keep only the annotator's value; the full-data mean "
                   "is the truth (the paper's Figures 1, 2 and 6).")
        total = mats.n
        splits, lo, hi, seed = split_settings("ae", total, 5, min(20, max(5, total // 10)), min(2000, total // 2))
        try:
            grid = tuple(default_grid(total, 20, lo, hi))
            curves = ac.curves(key, annotator, grid, splits, alpha, seed, mats)
        except EvalDataError as exc:
            st.error(literal(exc))
            st.stop()
        show_curves("ae", "", curves, mats.models,
                    f"ESS = n · Var(classical) / Var(method): the labels the classical estimate would need for the "
                    f"same precision. Dots: realised, n · MSE(classical) / MSE(method) over the splits — the number "
                    f"to trust; line and band (5–95% of splits): the plug-in, which treats PPI++'s λ as known and "
                    f"so overstates it at small n (ImageNet-X, n = 100: 1.51–1.53 × n plug-in, 1.41–1.50 × n "
                    f"realised). Width: mean {percent(level)} "
                    f"interval width (band 5–95%). MSE and coverage: means over {splits:,} splits with 95% Monte "
                    f"Carlo intervals; coverage should sit at {percent(level)}. Seed {seed}.")
    with tabs["Annotator quality"]:
        n_q = int(st.number_input("Labeled examples n", 5, max(5, total - 2), min(500, max(5, total // 4)),
                                  key="ae_quality_n"))
        try:
            qual = ac.quality_curves(key, n_q, splits, alpha, seed, mats)
        except EvalDataError as exc:
            st.error(literal(exc))
            st.stop()
        render.chart(ppi_figures.annotator_quality_figure(qual), "ess against annotator quality")
        st.caption(f"Quality: correlation of the annotator with the human labels. ESS/n of PPI++ at n = {n_q:,} "
                   f"(mean over {splits:,} splits, bars 5–95%); 1 = no gain, PPI++ never does worse than the "
                   f"labels alone (λ → 0). Seed {seed}.")
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
    show_notes(table.attrs["notes"])
    render.chart(figures.interval_dots(
        table, label="model", by="method", title="Estimates with and without the annotator",
        x_title=METRICS[metric], subtitle=f"{percent(level)} marginal intervals · n = {mats.n:,} labels, "
                                          f"N = {mats.N:,} annotator-only"), "ppi interval comparison")
    st.caption(f"Interval: {percent(level)} normal interval for each model on its own (PPI++: λ per model, "
               "clipped to [0, 1]). ESS = n · Var(classical) / Var(method): the labels the classical estimate "
               "would need for the same precision, counting the variance that estimating λ from the same labels "
               f"adds (bootstrap), with a {percent(level)} bootstrap interval over the labeled examples "
               f"({ac.N_BOOT} replicates, seed {boot_seed}). ess_plugin treats λ as known and overstates PPI++ "
               "(ImageNet-X, n = 100: 1.51–1.53 × n against 1.41–1.50 × n realised). Rank: from Bonferroni "
               "intervals over "
               "all models, overlapping intervals tie." + (" Weighted by the importance weights." if weighted else ""))
    render.table(table.drop(columns=["chi2_low", "chi2_high"]), "ppi estimates")
    st.markdown("**Simultaneous intervals (PPI++)**")
    st.caption(f"Both hold for all {len(mats.models)} models at once with probability {percent(level)}: the "
               "chi-square confidence ellipsoid's projections, and Bonferroni (narrower for several models).")
    columns = ["model", "estimate", "chi2_low", "chi2_high", "bonferroni_low", "bonferroni_high", "rank"]
    simultaneous = table.loc[table["method"] == METHOD_NAMES["ppi++"], columns]
    render.table(simultaneous, "simultaneous intervals")

with tabs["Projection"]:
    proj = ac.projection(key, annotator, alpha, mats)
    width = st.number_input("Target interval width (full width)", 0.002, 1.0, 0.05, 0.005, format="%.3f",
                            key="ae_width")
    render.chart(ppi_figures.projection_figure(proj, actual_n=mats.n, target_width=float(width), level=level),
                 "projected precision")
    st.caption("Projected from the current labels' variances and covariance with the annotator, as more of the "
               "pool gets labeled (λ re-tuned at each n). Plug-in values: the curve is as good as those estimates.")
    try:
        need = ac.needed(key, annotator, alpha, float(width), mats)
    except EvalDataError as exc:
        st.error(literal(exc))
        st.stop()
    st.caption(f"Labels needed for a {percent(level)} interval no wider than {width:.3f}, with the annotator "
               "(PPI++) and without it (classical); empty when even labeling the whole pool does not reach it.")
    render.table(need, "labels needed")
    render.table(proj, "projected precision")

with tabs["Annotator quality"]:
    qual = ac.quality(key, alpha, boot_seed, mats)
    render.chart(ppi_figures.annotator_quality_figure(qual), "ess against annotator quality")
    st.caption(f"Quality: correlation of each annotator with the human labels on the {mats.n:,} labeled examples. "
               f"ESS/n of PPI++ at the current n, counting the variance of the estimated λ, bars: "
               f"{percent(level)} bootstrap interval ({ac.N_BOOT} replicates, "
               f"seed {boot_seed}); 1 = no gain.")
    render.table(qual, "annotator quality")

