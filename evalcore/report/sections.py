"""The report's sections, one per method: a validated log in, its tables, figures and key facts out.

Each section function takes the log — a per-example log or battles as the engine's log object (a frame in memory
wrapped by :func:`evalcore.engine.as_log`, or a log stored in an engine: the same reductions either way), a
leaderboard summary as its frame — and the report's :class:`Settings`, and returns a :class:`Section`, or None when
the log does not support the method (e.g. no ``confidence`` column for calibration). The numbers are the API's own:
each section calls the same functions as the dashboard's pages, with the report's level and seed, so a table in the
report equals that function's output. Parts that need per-example arrays (selective prediction, the labeling plan)
fetch them within the memory bound (:func:`evalcore.engine.fetch`) and say so when they do not fit.

The modules of the methods a log may not support (calibration, the labeling plan, prediction-powered inference,
Bradley-Terry) are imported by their section when it runs, not with this module: ``evalcore report`` of a log
without confidences or battles (MMLU-Pro) then never loads them, 0.06 s of the command's start.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from evalcore.leaderboard import bootstrap as aggregate
from evalcore.stats import figures
from evalcore.subgroups import figures as subgroups_figures
from evalcore.sampling import plan
from evalcore.stats.figures import percent
from evalcore.stats.intervals import DEFAULT_LEVEL
from evalcore.engine import ExamplesTooLarge, fetch, reductions
from evalcore.data.schema import BATTLES, LOG, SUMMARY
from evalcore.data.validation import report_of
from evalcore.subgroups.estimates import empirical_bayes
from evalcore.stats.overall import DEFAULT as DEFAULT_OVER, NAMES as overall_names, interval_name, overall_table, \
    with_overall

#: subgroups drawn in the forest plot (the largest ones); the table keeps every subgroup
FOREST_GROUPS = 30
#: reliability diagrams drawn (the worst-calibrated models); the table keeps every model
RELIABILITY_FIGURES = 4
#: models drawn in the selective-prediction figure
SELECTIVE_MODELS = 8


@dataclass(frozen=True)
class Settings:
    """What the report computes with. ``level`` is the confidence level of every interval; ``seed`` seeds every
    bootstrap and fold; ``target_width`` is the full width of the interval the labeling plan aims at. ``base`` and
    ``new`` (two models of the log) ask for the Comparison section (:mod:`evalcore.report.comparison`), with the
    slices of the ``by`` columns, the non-inferiority ``margin`` and the false discovery rate ``fdr``."""

    level: float = DEFAULT_LEVEL
    seed: int = 0
    n_boot: int = 1000
    n_bins: int = 10
    n_strata: int = plan.N_STRATA
    target_width: float = plan.WIDTH
    regressor: str = "xgboost"
    base: str | None = None
    new: str | None = None
    by: tuple[str, ...] = ()
    margin: float = 0.0
    fdr: float = 0.1
    #: the series the comparison's base comes from, as a sentence (``evalcore report NEW --series NAME``), or ""
    series: str = ""

    @property
    def alpha(self) -> float:
        return 1.0 - self.level


@dataclass
class Section:
    """One method's part of the report. ``meaning`` says in one line what its intervals mean; ``tables`` are the
    API's frames (name -> frame, shown and embedded as data); ``facts`` the numbers the summary is written from."""

    key: str
    title: str
    intro: str
    meaning: str
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    figures: list[go.Figure] = field(default_factory=list)
    facts: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def metric_of(log) -> str | None:
    """The labeled metric of a per-example log: ``correct`` when present, else ``score``."""
    return next((m for m in ("correct", "score") if m in log and log.count(m)), None)


def models_of(log, kind: str) -> list[str]:
    """The sorted models of a log (of either side of battles) or of a summary."""
    if kind == SUMMARY:
        return sorted(log["model"].astype(str).unique())
    return log.models()


def _quietly(fn, *args, **kwargs):
    """``fn(...)`` with its warnings collected as notes: (result, notes)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn(*args, **kwargs)
    return result, list(dict.fromkeys(str(w.message) for w in caught))


# ------------------------------------------------------------------------------------------------ accuracy
def accuracy(log: pd.DataFrame, kind: str, s: Settings) -> Section | None:
    """Each model's overall metric, the mean over tasks (:func:`evalcore.stats.overall.overall_table`: the same
    number as the leaderboard's overall estimate and the summary's)."""
    if kind == BATTLES:
        return None
    if kind == SUMMARY:
        table = overall_table(log, alpha=s.alpha, summary=True)
        metric = "accuracy"
        interval = f"{interval_name(metric, report_of(log).design)} interval"  # a campaign's: its estimator's
    else:
        metric = metric_of(log)
        if metric is None:
            return None
        table = overall_table(log, metric, s.alpha)
        interval = f"{interval_name(metric)} interval" + (
            " on the per-example means (repeated samples: Kish's effective n for 0/1)" if "n_repeats" in log else "")
    several = bool((table["n_tasks"] > 1).any())
    if several:
        interval = (f"Normal interval of the mean over tasks (standard error sqrt(sum of the tasks' squared standard "
                    f"errors) / number of tasks; per task a {interval})")
    what = "accuracy" if metric in ("correct", "accuracy") else f"mean {metric}"
    fig = figures.interval_dots(table.assign(label=table["model"].astype(str)), "label",
                                f"{what.capitalize()} by model",
                                f"{what} ({overall_names[DEFAULT_OVER]})", f"{percent(s.level)} intervals")
    best = table.iloc[0]
    return Section(
        "accuracy", f"{what.capitalize()} by model",
        f"{what.capitalize()} of each model, {overall_names[DEFAULT_OVER]}" + (
            " (each task weighs the same whatever its number of examples)." if several
            else " (one task: the mean over all its labeled examples)."),
        f"{interval}: over repeated samples of this size it contains the model's true {what} {percent(s.level)} "
        "of the time.",
        {"by model": table}, [fig],
        {"metric": what, "top": str(best["model"]), "estimate": float(best["estimate"]),
         "ci_low": float(best["ci_low"]), "ci_high": float(best["ci_high"]), "n_models": len(table)},
        [table.attrs["interval_note"]] if table.attrs.get("interval_note") else [])


# ------------------------------------------------------------------------------------------------ leaderboard
def leaderboard(log: pd.DataFrame, kind: str, s: Settings, overall: pd.DataFrame | None = None) -> Section | None:
    """Bootstrap leaderboard, rank intervals and simultaneous pairwise differences
    (:mod:`evalcore.leaderboard.bootstrap`), all three from one set of replicates: a pair is distinguishable when
    its simultaneous interval excludes 0, and the rank intervals are read off the same intervals over all pairs."""
    if kind == BATTLES or len(models_of(log, kind)) < 2 or (kind == LOG and metric_of(log) != "correct"):
        return None
    rep, notes = _quietly(aggregate.bootstrap_replicates, log, n_boot=s.n_boot, seed=s.seed)
    if overall is None:  # the accuracy section's table, else the same computation
        overall = overall_table(log, "correct", s.alpha, summary=kind == SUMMARY)
    board = with_overall(aggregate.leaderboard(rep, level=s.level), overall)
    ranks = aggregate.rank_intervals(rep, method="mean", level=s.level, seed=s.seed)
    diffs = aggregate.pairwise_differences(rep, level=s.level)
    overall = board[board["scope"] == "overall"].sort_values(["estimate", "model"], ascending=[False, True],
                                                             ignore_index=True)  # the accuracy section's order
    categories = board[board["scope"] == "category"]
    separated = (diffs["ci_low"] > 0) | (diffs["ci_high"] < 0)
    top = str(overall["model"].iloc[0])
    tied = diffs[((diffs["model_a"] == top) | (diffs["model_b"] == top)) & ~separated]
    tied_with = sorted((set(tied["model_a"].astype(str)) | set(tied["model_b"].astype(str))) - {top})
    fig = figures.interval_dots(overall.assign(label=overall["model"].astype(str)), "label", "Overall accuracy",
                                "accuracy (mean over tasks)", f"{percent(s.level)} intervals (normal/Wilson)")
    tables = {"overall": overall[["model", "estimate", "ci_low", "ci_high"]],
              "rank intervals": ranks.sort_values("rank", ignore_index=True),
              "pairwise differences": diffs}
    if categories["name"].nunique() > 1:
        tables["by category"] = (categories.rename(columns={"name": "category"})
                                 [["category", "model", "estimate", "ci_low", "ci_high"]]
                                 .sort_values(["category", "estimate"], ascending=[True, False], ignore_index=True))
    return Section(
        "leaderboard", "Leaderboard",
        "Overall accuracy (the mean over tasks) with its interval, the rank of each model with its interval, "
        "and which pairs of models differ.",
        "Overall accuracy: the interval of the accuracy section above. Categories, pairwise differences and ranks: "
        f"{percent(s.level)} bootstrap percentile intervals ({s.n_boot:,} replicates, seed {s.seed}; "
        + ("examples resampled jointly for all models" if kind == LOG else "binomial resampling of each task's "
           "counts") + "); the intervals of the pairwise differences hold all together "
        f"{percent(s.level)} of the time (studentized maximum over all pairs), a pair differs when its interval "
        "excludes 0, and the rank intervals follow from the same intervals: every model's true rank lies in its "
        f"interval, for all models together, {percent(s.level)} of the time.",
        tables, [fig],
        {"top": top, "estimate": float(overall["estimate"].iloc[0]), "ci_low": float(overall["ci_low"].iloc[0]),
         "ci_high": float(overall["ci_high"].iloc[0]), "pairs": len(diffs), "separated": int(separated.sum()),
         "tied_with": tied_with},
        notes)


# ------------------------------------------------------------------------------------------------ subgroups
def subgroups(log: pd.DataFrame, kind: str, s: Settings, top: str | None = None,
              overall: pd.DataFrame | None = None) -> Section | None:
    """Empirical Bayes and direct estimates per (model, group) (:func:`evalcore.subgroups.estimates.empirical_bayes`)."""
    metric = metric_of(log) if kind == LOG else None
    if metric is None or "group" not in log or _labeled_groups(log, metric) < 2:
        return None
    table, notes = _quietly(empirical_bayes, log, metric=metric, regressor=s.regressor, alpha=s.alpha, seed=s.seed)
    model = top if top in set(table["model"].astype(str)) else str(table["model"].iloc[0])
    mine = table[table["model"].astype(str) == model].sort_values("n", ascending=False, ignore_index=True)
    means = overall if overall is not None else overall_table(log, metric, s.alpha)  # the model's overall number
    reference = float(means.loc[means["model"].astype(str) == model, "estimate"].iloc[0])  # the forest plot's line
    fig = subgroups_figures.forest_plot(mine.head(FOREST_GROUPS), level=s.level, overall=reference,
                              title=f"{model}: subgroups (the {min(FOREST_GROUPS, len(mine))} largest)",
                              direct_interval="Wilson" if metric == "correct" else "Student-t")
    width = mine["eb_high"] - mine["eb_low"]
    widest = mine.loc[width.idxmax()]
    return Section(
        "subgroups", "Subgroups",
        f"Accuracy per subgroup: the direct estimate (DT) from each subgroup's own examples, and the empirical Bayes "
        f"estimate (EB) that borrows strength from a regression on the subgroups' features ({s.regressor}).",
        f"EB intervals are robust empirical Bayes intervals (Armstrong, Kolesár & Plagborg-Møller 2022): they cover "
        f"the true subgroup values {percent(s.level)} of the time on average across subgroups, not for each one; DT "
        f"intervals ({'Wilson' if metric == 'correct' else 'Student-t'}) cover each subgroup {percent(s.level)} of "
        "the time.",
        {"estimates": table}, [fig],
        {"model": model, "groups": int(mine.shape[0]), "widest": str(widest["group"]), "widest_n": int(widest["n"]),
         "widest_low": float(widest["eb_low"]), "widest_high": float(widest["eb_high"]),
         "median_dt_width": float((mine["direct_high"] - mine["direct_low"]).median()),
         "median_eb_width": float(width.median())},
        notes)


def _labeled_groups(log, metric: str) -> int:
    """How many groups have a labeled row: read off the (model, group) cell moments, which empirical Bayes reads next
    (one query, kept with the log, instead of a query of its own)."""
    cells = reductions.cell_moments(log, ["model", "group"], metric)
    return int(cells.loc[cells["n"] > 0, "group"].nunique())


# ------------------------------------------------------------------------------------------------ calibration
def calibration_section(log, kind: str, s: Settings) -> Section | None:
    """ECE with its bootstrap interval and reliability diagrams per model (the log's bin sums,
    :func:`evalcore.calibration.estimators.calibration_by_model`), and selective prediction when the confidences fit
    in memory."""
    if kind != LOG or "confidence" not in log or "correct" not in log or not log.count("confidence"):
        return None
    from evalcore.calibration import estimators as calibration
    from evalcore.calibration import figures as calibration_figures

    ece, tables = calibration.calibration_and_reliability(log, s.n_bins, s.n_boot, s.level, s.seed)  # one pass
    if ece.empty:
        return None
    table = ece.rename(columns={"debiased": "ece_debiased", "p_value": "p_calibrated"})
    table = table.sort_values("ece", ascending=False, ignore_index=True)
    figs = [calibration_figures.reliability_diagram(tables[m], m, s.level,
                                                    ece=f"ECE {table.set_index('model').loc[m, 'ece']:.3f}")
            for m in table["model"].head(RELIABILITY_FIGURES)]
    notes = []
    shown = list(table["model"].tail(SELECTIVE_MODELS))
    try:
        rows = fetch(log.restrict(model=shown), "Selective prediction", ["model", "correct", "confidence"])
    except ExamplesTooLarge as exc:
        notes.append(f"Selective prediction is not in this report: {exc}")
    else:
        rows = rows[rows["correct"].notna() & rows["confidence"].notna()]
        curves = {str(m): calibration.selective_prediction_curve(p["confidence"].to_numpy(float),
                                                                 p["correct"].to_numpy(float), s.alpha)
                  for m, p in rows.groupby("model", observed=True, sort=True)}
        figs.append(calibration_figures.selective_curves({m: curves[m] for m in shown if m in curves}, s.level))
    worst = table.iloc[0]
    return Section(
        "calibration", "Calibration",
        f"Does each model's confidence mean what it says? Expected calibration error (ECE, {s.n_bins} equal-width "
        "bins) per model, reliability diagrams of the least calibrated models, and selective prediction (accuracy "
        "among the most confident examples).",
        f"ECE intervals (paired bootstrap, {s.n_boot:,} replicates, seed {s.seed}): over repeated samples of this "
        f"size the interval contains the model's ECE for these bins {percent(s.level)} of the time; it excludes 0 "
        "only when the calibration test (p_calibrated) rejects. Reliability and selective bands are Wilson "
        "intervals.",
        {"ece by model": table}, figs,
        {"worst": str(worst["model"]), "ece": float(worst["ece"]), "ci_low": float(worst["ci_low"]),
         "ci_high": float(worst["ci_high"]), "p": float(worst["p_calibrated"]),
         "overconfident": bool(worst["mean_confidence"] > worst["accuracy"]),
         "miscalibrated": int((table["ci_low"] > 0).sum()), "n_models": len(table)},
        notes)


# ------------------------------------------------------------------------------------------------ labeling budget
def labeling(log, kind: str, s: Settings, top: str | None = None) -> Section | None:
    """How many labels a target interval needs, and how to spread them (:func:`evalcore.sampling.plan.labeling_plan`,
    the Labeling budget page's plan with its defaults), from the top model's proxy values (fetched: one number per
    example)."""
    if kind != LOG:
        return None
    source = next((c for c in plan.SOURCES if c in log and log.count(c) == log.n_rows), None)
    if source is None:
        return None
    models = models_of(log, kind)
    model = top if top in models else models[0]
    labeled = "correct" in log and log.count("correct") > 0
    rows = fetch(log.restrict(model=(model,)), "The labeling plan", [source] + ["correct"] * labeled)
    proxy = rows[source].to_numpy(float)
    if len(proxy) < 4 * s.n_strata or not ((proxy >= 0) & (proxy <= 1)).all():
        return None
    planned = plan.labeling_plan(proxy, rows["correct"].to_numpy(float) if labeled else None, s.target_width,
                                 s.alpha, s.n_strata, s.seed)  # the Labeling budget page's plan, its defaults
    from evalcore.sampling import designs as sampling

    needed, strata = planned.needed, planned.strata
    basis = {"labels": "calibrated on this model's labels in the log (the least favourable fit within its 90% "
                       "region)",
             "worst case": "planned for the worst miscalibration the planner considers (too few labels at hand to "
                           "calibrate the proxy)"}.get(needed.attrs["basis"], "assuming the proxy is calibrated")
    srs, stratified = float(planned.srs["labels_needed"]), float(planned.stratified["labels_needed"])
    budget = int(stratified)
    n_h = np.bincount(strata)
    allocation = pd.DataFrame({
        "stratum": np.arange(1, len(n_h) + 1), "examples": n_h,
        "mean_proxy": np.bincount(strata, weights=proxy) / n_h,
        "labels (proportional)": sampling.allocate_budget(strata, budget, "proportional"),
        "labels (neyman)": sampling.allocate_budget(strata, budget, "neyman", proxy=proxy)})
    return Section(
        "labeling", "Labeling budget",
        f"How many labels would estimate {model}'s accuracy to within an interval {s.target_width:.2f} wide "
        f"({percent(s.level)}), using the {'proxy column' if source == 'proxy' else 'model confidence'} as a "
        f"stand-in for correctness: {s.n_strata} strata by 1-D k-means on it, then a budget per stratum.",
        f"Predicted, not measured: labels_needed gives an interval no wider than the target on average, {basis}; "
        f"meets_target is the chance that one sample meets it, labels_for_probability the labels for a "
        f"{percent(needed.attrs['probability'])} chance; "
        "labels_needed_worst holds under the worst miscalibration the planner considers.",
        {"labels needed": needed, "plan": allocation}, [],
        {"model": model, "srs": srs, "stratified": stratified, "design": f"{planned.design} + ht",
         "width": s.target_width, "n": int(len(proxy)),
         "proxy": "the model's own confidence" if source == "confidence" else "the proxy column"})


# ------------------------------------------------------------------------------------------------ PPI
def prediction_powered(log, kind: str, s: Settings) -> Section | None:
    """Classical and PPI++ means per model (:func:`evalcore.ppi.autoeval.moment_table`, from the log's moments) when
    part of the log is labeled and an annotator scores every example."""
    metric = metric_of(log) if kind == LOG else None
    if metric is None or log.count(metric) == log.n_rows:
        return None
    annotator = next((a for a in ("proxy", "confidence") if a in log and log.count(a) == log.n_rows
                      and (a == "proxy" or metric == "correct")), None)
    if annotator is None:
        return None
    from evalcore.ppi import autoeval

    table = autoeval.moment_table(log, annotator, metric, s.alpha)
    tuned = table[table["method"] == autoeval.METHOD_NAMES["ppi++"]]
    shown = table.assign(label=lambda t: t["model"].astype(str) + " · " + t["method"])
    n, N = int(tuned["n"].sum()), int(tuned["N"].sum())
    fig = figures.interval_dots(shown, "label", f"Mean {metric}: classical vs PPI++", metric,
                                f"{percent(s.level)} intervals; {n:,} labeled, {N:,} annotator-only", by="method")
    best = tuned.sort_values("estimate", ascending=False, ignore_index=True).iloc[0]
    return Section(
        "ppi", "AI-assisted evaluation (prediction-powered inference)",
        f"{n:,} examples carry a human label and {N:,} only the annotator's ({annotator}) estimate. PPI++ combines "
        "both: the annotator's estimate on every example, corrected by its measured error on the labeled ones.",
        f"PPI++ intervals (Angelopoulos et al. 2023) contain each model's true mean {percent(s.level)} of the time "
        "whatever the annotator's quality; ESS is the number of labeled examples a classical estimate would need for "
        "the same precision (here from the log's moments, with λ treated as known: a few percent optimistic at "
        "small n; the AI-assisted evaluation page's ESS counts λ's estimation, with its interval).",
        {"estimates": table}, [fig],
        {"annotator": annotator, "n": n, "N": N, "top": str(best["model"]),
         "estimate": float(best["estimate"]), "ci_low": float(best["ci_low"]), "ci_high": float(best["ci_high"]),
         "ess_ratio": float(tuned["ess_ratio"].median())})


# ------------------------------------------------------------------------------------------------ battles
def battles(log, kind: str, s: Settings) -> Section | None:
    """Bradley-Terry coefficients of pairwise battles from per-pair statistics, prediction-powered with a judge
    (:func:`evalcore.ppi.bradley_terry.bradley_terry_of_log`); battles with an AI judge's verdicts and no human vote
    give the AI judge's own ranking, labelled so."""
    human = "outcome" in log and log.count("outcome") > 0
    if kind != BATTLES or not (human or ("judge" in log and log.count("judge") > 0)):
        return None
    from evalcore.ppi.bradley_terry import bradley_terry_of_log

    table = bradley_terry_of_log(log, alpha=s.alpha).sort_values("coefficient", ascending=False, ignore_index=True)
    by_judge = table.attrs.get("labels") == "judge"
    method = ("the AI judge's verdicts only, no human votes" if by_judge else
              "PPI++" if table["lam"].iloc[0] > 0 else "classical")
    fig = figures.interval_dots(table.rename(columns={"coefficient": "estimate"}).assign(
        label=lambda t: t["model"].astype(str)), "label", "Bradley-Terry strength",
        "coefficient (reference model = 0)", f"{percent(s.level)} intervals")
    best = table.iloc[0]
    if by_judge:
        title = "Pairwise battles: the AI judge's ranking (Bradley-Terry)"
        lead = (f"Strength of each model by the AI judge's verdicts on {table.attrs.get('N', 0):,} battles; no battle "
                "has a human vote, so nothing corrects the judge's bias.")
        how = (f"{percent(s.level)} intervals for each coefficient against the reference model "
               f"({table.attrs.get('reference')}), valid for the judge's preferences, not for people's.")
    else:
        title = "Pairwise battles (Bradley-Terry)"
        lead = (f"Strength of each model from {table.attrs.get('n', 0):,} battles with a human vote"
                + (f" and {table.attrs['N']:,} judged by the AI judge only" if table.attrs.get("N") else "") + ".")
        how = (f"{percent(s.level)} intervals for each coefficient against the reference model "
               f"({table.attrs.get('reference')}); {method} intervals stay valid whatever the judge's quality.")
    return Section(
        "battles", title, lead, how,
        {"coefficients": table}, [fig],
        {"top": str(best["model"]), "method": method, "estimate": float(best["coefficient"]),
         "ci_low": float(best["ci_low"]), "ci_high": float(best["ci_high"])},
        list(table.attrs.get("notes", [])))
