"""The report's sections, one per method: a validated log in, its tables, figures and key facts out.

Each section function takes the canonical frame (one row per model and example, or per model and task, or per
battle; repeated samples averaged per example by the methods themselves) and the report's :class:`Settings`, and
returns a :class:`Section`, or None when the log does not support the method (e.g. no ``confidence`` column for
calibration). The numbers are the API's own: each section calls the same functions as the dashboard's pages, with
the report's level and seed, so a table in the report equals that function's output.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from evalcore.leaderboard import bootstrap as aggregate
from evalcore.ppi import autoeval
from evalcore.calibration import estimators as calibration
from evalcore.stats import figures
from evalcore.calibration import figures as calibration_figures
from evalcore.subgroups import figures as subgroups_figures
from evalcore.sampling import designs as sampling
from evalcore.stats.figures import percent
from evalcore.stats.intervals import wilson_interval
from evalcore.engine import LazyLog, is_lazy
from evalcore.data.repeats import per_example
from evalcore.data.schema import BATTLES, LOG, SUMMARY
from evalcore.subgroups.estimates import empirical_bayes
from evalcore.stats.summaries import mean_table

#: subgroups drawn in the forest plot (the largest ones); the table keeps every subgroup
FOREST_GROUPS = 30
#: reliability diagrams drawn (the worst-calibrated models); the table keeps every model
RELIABILITY_FIGURES = 4
#: models drawn in the selective-prediction figure
SELECTIVE_MODELS = 8


@dataclass(frozen=True)
class Settings:
    """What the report computes with. ``level`` is the confidence level of every interval; ``seed`` seeds every
    bootstrap and fold; ``target_width`` is the full width of the interval the labeling plan aims at."""

    level: float = 0.95
    seed: int = 0
    n_boot: int = 1000
    n_bins: int = 10
    n_strata: int = 10
    target_width: float = 0.05
    regressor: str = "xgboost"

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


def metric_of(log: pd.DataFrame | LazyLog) -> str | None:
    """The labeled metric of a per-example log: ``correct`` when present, else ``score``."""
    for metric in ("correct", "score"):
        if metric in log and (log.count(metric) if is_lazy(log) else log[metric].notna().any()):
            return metric
    return None


def models_of(log: pd.DataFrame | LazyLog, kind: str) -> list[str]:
    if is_lazy(log):
        return log.models()
    if kind == BATTLES:
        return sorted(set(log["model_a"].astype(str)) | set(log["model_b"].astype(str)))
    return sorted(log["model"].astype(str).unique())


def _quietly(fn, *args, **kwargs):
    """``fn(...)`` with its warnings collected as notes: (result, notes)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn(*args, **kwargs)
    return result, list(dict.fromkeys(str(w.message) for w in caught))


# ------------------------------------------------------------------------------------------------ accuracy
def accuracy(log: pd.DataFrame, kind: str, s: Settings) -> Section | None:
    """Mean metric per model (:func:`evalcore.stats.summaries.mean_table`; a summary's pooled counts with Wilson)."""
    if kind == BATTLES:
        return None
    if kind == SUMMARY:
        pooled = log.groupby("model", as_index=False, observed=True)[["n", "n_correct"]].sum()
        low, high = wilson_interval(pooled["n_correct"], pooled["n"], s.alpha)
        table = pooled.assign(estimate=pooled["n_correct"] / pooled["n"], ci_low=low, ci_high=high)
        metric, interval = "accuracy", "Wilson score interval"
    else:
        metric = metric_of(log)
        if metric is None:
            return None
        table = mean_table(log, ["model"], metric, s.alpha)
        interval = ("Wilson score interval" if metric == "correct" else "Student-t interval") + (
            " on the per-example means (repeated samples: Kish's effective n for 0/1)" if "repeat" in log else "")
    table = table.sort_values("estimate", ascending=False, ignore_index=True)
    what = "accuracy" if metric in ("correct", "accuracy") else f"mean {metric}"
    fig = figures.interval_dots(table.assign(label=table["model"].astype(str)), "label",
                                f"{what.capitalize()} by model",
                                what, f"{percent(s.level)} intervals")
    best = table.iloc[0]
    return Section(
        "accuracy", f"{what.capitalize()} by model",
        f"{what.capitalize()} of each model over all its labeled examples.",
        f"{interval}: over repeated samples of this size it contains the model's true {what} {percent(s.level)} "
        "of the time.",
        {"by model": table}, [fig],
        {"metric": what, "top": str(best["model"]), "estimate": float(best["estimate"]),
         "ci_low": float(best["ci_low"]), "ci_high": float(best["ci_high"]), "n_models": len(table)},
        [table.attrs["interval_note"]] if table.attrs.get("interval_note") else [])


# ------------------------------------------------------------------------------------------------ leaderboard
def leaderboard(log: pd.DataFrame, kind: str, s: Settings) -> Section | None:
    """Bootstrap leaderboard, rank intervals and Bonferroni pairwise differences (:mod:`evalcore.leaderboard.bootstrap`)."""
    if kind == BATTLES or len(models_of(log, kind)) < 2 or (kind == LOG and metric_of(log) != "correct"):
        return None
    board, notes = _quietly(aggregate.leaderboard, log, level=s.level, n_boot=s.n_boot, seed=s.seed)
    ranks, more = _quietly(aggregate.rank_intervals, log, method="mean", level=s.level, n_boot=s.n_boot, seed=s.seed)
    diffs, most = _quietly(aggregate.pairwise_differences, log, level=s.level, n_boot=s.n_boot, seed=s.seed)
    overall = board[board["scope"] == "overall"].sort_values("estimate", ascending=False, ignore_index=True)
    categories = board[board["scope"] == "category"]
    separated = (diffs["ci_low"] > 0) | (diffs["ci_high"] < 0)
    top = str(overall["model"].iloc[0])
    tied = diffs[((diffs["model_a"] == top) | (diffs["model_b"] == top)) & ~separated]
    tied_with = sorted(set(tied["model_a"].astype(str)) | set(tied["model_b"].astype(str)) - {top})
    fig = figures.interval_dots(overall.assign(label=overall["model"].astype(str)), "label", "Overall accuracy",
                                "accuracy (mean over tasks)", f"{percent(s.level)} bootstrap intervals")
    tables = {"overall": overall[["model", "estimate", "ci_low", "ci_high"]],
              "rank intervals": ranks.sort_values("rank", ignore_index=True),
              "pairwise differences": diffs}
    if categories["name"].nunique() > 1:
        tables["by category"] = (categories.rename(columns={"name": "category"})
                                 [["category", "model", "estimate", "ci_low", "ci_high"]]
                                 .sort_values(["category", "estimate"], ascending=[True, False], ignore_index=True))
    return Section(
        "leaderboard", "Leaderboard",
        "Overall accuracy (the mean over tasks) with bootstrap intervals, the rank of each model with its interval, "
        "and which pairs of models differ.",
        f"{percent(s.level)} bootstrap percentile intervals ({s.n_boot:,} replicates, seed {s.seed}; "
        + ("examples resampled jointly for all models" if kind == LOG else "binomial resampling of each task's "
           "counts") + "); pairwise differences are Bonferroni-corrected so that all of them hold together "
        f"{percent(s.level)} of the time; a rank interval is the {percent(s.level)} percentile interval of the "
        "model's rank over the same replicates.",
        tables, [fig],
        {"top": top, "estimate": float(overall["estimate"].iloc[0]), "ci_low": float(overall["ci_low"].iloc[0]),
         "ci_high": float(overall["ci_high"].iloc[0]), "pairs": len(diffs), "separated": int(separated.sum()),
         "tied_with": tied_with},
        list(dict.fromkeys(notes + more + most)))


# ------------------------------------------------------------------------------------------------ subgroups
def subgroups(log: pd.DataFrame, kind: str, s: Settings, top: str | None = None) -> Section | None:
    """Empirical Bayes and direct estimates per (model, group) (:func:`evalcore.subgroups.estimates.empirical_bayes`)."""
    metric = metric_of(log) if kind == LOG else None
    if metric is None or "group" not in log or len(_labeled_groups(log, metric)) < 2:
        return None
    table, notes = _quietly(empirical_bayes, log, metric=metric, regressor=s.regressor, alpha=s.alpha, seed=s.seed)
    model = top if top in set(table["model"].astype(str)) else str(table["model"].iloc[0])
    mine = table[table["model"].astype(str) == model].sort_values("n", ascending=False, ignore_index=True)
    means = mean_table(log, ["model"], metric, s.alpha)
    overall = float(means.loc[means["model"].astype(str) == model, "estimate"].iloc[0])
    fig = subgroups_figures.forest_plot(mine.head(FOREST_GROUPS), level=s.level, overall=overall,
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


def _labeled_groups(log: pd.DataFrame | LazyLog, metric: str) -> list[str]:
    if is_lazy(log):
        return log.distinct("group", where=log.table[metric].notnull())
    return sorted(log.loc[log[metric].notna(), "group"].astype(str).unique())


# ------------------------------------------------------------------------------------------------ calibration
def calibration_section(log: pd.DataFrame, kind: str, s: Settings) -> Section | None:
    """ECE with its bootstrap interval, reliability diagrams and selective prediction per model."""
    if kind != LOG or "confidence" not in log or "correct" not in log:
        return None
    rows = per_example(log)
    rows = rows[rows["correct"].notna() & rows["confidence"].notna()]
    if rows.empty:
        return None
    results, tables, curves = [], {}, {}
    for model, part in rows.groupby("model", observed=True, sort=True):
        conf, corr = part["confidence"].to_numpy(float), part["correct"].to_numpy(float)
        ece = calibration.ece_interval(conf, corr, s.n_bins, "uniform", s.n_boot, s.level, s.seed)
        tables[str(model)] = calibration.reliability_table(conf, corr, s.n_bins, "uniform", s.alpha)
        curves[str(model)] = calibration.selective_prediction_curve(conf, corr, s.alpha)
        results.append({"model": str(model), "n": ece.n, "ece": ece.ece, "ci_low": ece.ci_low,
                        "ci_high": ece.ci_high, "ece_debiased": ece.debiased, "p_calibrated": ece.p_value,
                        "mean_confidence": float(conf.mean()), "accuracy": float(corr.mean())})
    table = pd.DataFrame(results).sort_values("ece", ascending=False, ignore_index=True)
    worst = table.iloc[0]
    shown = list(table["model"].head(RELIABILITY_FIGURES))
    figs = [calibration_figures.reliability_diagram(tables[m], m, s.level,
                                        ece=f"ECE {table.set_index('model').loc[m, 'ece']:.3f}") for m in shown]
    figs.append(calibration_figures.selective_curves({m: curves[m] for m in table["model"].tail(SELECTIVE_MODELS)}, s.level))
    return Section(
        "calibration", "Calibration",
        f"Does each model's confidence mean what it says? Expected calibration error (ECE, {s.n_bins} equal-width "
        "bins) per model, reliability diagrams of the least calibrated models, and selective prediction (accuracy "
        "among the most confident examples).",
        f"ECE intervals ({s.n_boot:,} bootstrap replicates, seed {s.seed}): over repeated samples of this size the "
        f"interval contains the model's ECE for these bins {percent(s.level)} of the time; it excludes 0 only when "
        "the calibration test (p_calibrated) rejects. Reliability and selective bands are Wilson intervals.",
        {"ece by model": table}, figs,
        {"worst": str(worst["model"]), "ece": float(worst["ece"]), "ci_low": float(worst["ci_low"]),
         "ci_high": float(worst["ci_high"]), "p": float(worst["p_calibrated"]),
         "overconfident": bool(worst["mean_confidence"] > worst["accuracy"]),
         "miscalibrated": int((table["ci_low"] > 0).sum()), "n_models": len(table)})


# ------------------------------------------------------------------------------------------------ labeling budget
def labeling(log: pd.DataFrame, kind: str, s: Settings, top: str | None = None) -> Section | None:
    """How many labels a target interval needs, and how to spread them (:mod:`evalcore.sampling.designs`)."""
    if kind != LOG:
        return None
    source = next((c for c in ("proxy", "confidence") if c in log and log[c].notna().all()), None)
    if source is None:
        return None
    rows = per_example(log)
    model = top if top in set(rows["model"].astype(str)) else str(rows["model"].iloc[0])
    proxy = rows.loc[rows["model"].astype(str) == model, source].to_numpy(float)
    if len(proxy) < 4 * s.n_strata or not ((proxy >= 0) & (proxy <= 1)).all():
        return None
    strata = sampling.kmeans_strata(proxy, s.n_strata, seed=s.seed)
    needed = sampling.labels_needed(proxy, s.target_width, alpha=s.alpha, n_strata=s.n_strata, seed=s.seed,
                                    strata=strata)
    srs = float(needed.loc[needed["design"] == "srs", "labels_needed"].min())
    stratified = needed[needed["design"] != "srs"].sort_values("labels_needed").iloc[0]
    budget = int(stratified["labels_needed"])
    n_h = np.bincount(strata)
    plan = pd.DataFrame({
        "stratum": np.arange(1, len(n_h) + 1), "examples": n_h,
        "mean_proxy": np.bincount(strata, weights=proxy) / n_h,
        "labels (proportional)": sampling.allocate_budget(strata, budget, "proportional"),
        "labels (neyman)": sampling.allocate_budget(strata, budget, "neyman", proxy=proxy)})
    return Section(
        "labeling", "Labeling budget",
        f"How many labels would estimate {model}'s accuracy to within an interval {s.target_width:.2f} wide "
        f"({percent(s.level)}), using the {'proxy column' if source == 'proxy' else 'model confidence'} as a "
        f"stand-in for correctness: {s.n_strata} strata by 1-D k-means on it, then a budget per stratum.",
        "Predicted, not measured: the counts assume the proxy is calibrated (labels_needed); labels_needed_worst "
        "holds under the worst miscalibration the planner considers.",
        {"labels needed": needed, "plan": plan}, [],
        {"model": model, "srs": srs, "stratified": float(stratified["labels_needed"]),
         "design": f"{stratified['design']} + {stratified['estimator']}", "width": s.target_width,
         "n": int(len(proxy))})


# ------------------------------------------------------------------------------------------------ PPI
def prediction_powered(log: pd.DataFrame, kind: str, s: Settings) -> Section | None:
    """Classical, PPI and PPI++ means when part of the log is labeled and an annotator scores every example."""
    metric = metric_of(log) if kind == LOG else None
    if metric is None or log[metric].notna().all():
        return None
    annotator = next((a for a in ("proxy", "confidence") if a in log and log[a].notna().all()
                      and (a == "proxy" or metric == "correct")), None)
    if annotator is None:
        return None
    data = autoeval.log_matrices(per_example(log), metric, [annotator])
    table = autoeval.estimate_table(data, annotator, alpha=s.alpha, n_boot=200, seed=s.seed)
    names = autoeval.METHOD_NAMES
    tuned = table[table["method"] == names["ppi++"]].sort_values("estimate", ascending=False, ignore_index=True)
    shown = table[table["method"].isin([names["classical"], names["ppi++"]])].assign(
        label=lambda t: t["model"].astype(str) + " · " + t["method"])
    fig = figures.interval_dots(shown, "label", f"Mean {metric}: classical vs PPI++", metric,
                                f"{percent(s.level)} intervals; {data.n:,} labeled, {data.N:,} annotator-only",
                                by="method")
    best = tuned.iloc[0]
    return Section(
        "ppi", "AI-assisted evaluation (prediction-powered inference)",
        f"{data.n:,} examples carry a human label and {data.N:,} only the annotator's ({annotator}) estimate. "
        "PPI++ combines both: the annotator's estimate on every example, corrected by its measured error on the "
        "labeled ones.",
        f"PPI++ intervals (Angelopoulos et al. 2023) contain each model's true mean {percent(s.level)} of the time "
        "whatever the annotator's quality; ESS is the number of labeled examples a classical estimate would need for "
        "the same precision.",
        {"estimates": table}, [fig],
        {"annotator": annotator, "n": data.n, "N": data.N, "top": str(best["model"]),
         "estimate": float(best["estimate"]), "ci_low": float(best["ci_low"]), "ci_high": float(best["ci_high"]),
         "ess_ratio": float(tuned["ess_ratio"].median())},
        list(table.attrs.get("notes", [])))


# ------------------------------------------------------------------------------------------------ battles
def battles(log: pd.DataFrame, kind: str, s: Settings) -> Section | None:
    """Bradley-Terry coefficients of pairwise battles, classical and prediction-powered."""
    if kind != BATTLES or "outcome" not in log or log["outcome"].notna().sum() == 0:
        return None
    table = autoeval.bradley_terry_table(log, alpha=s.alpha, judge="probability")
    chosen = table[table["method"] == table["method"].iloc[-1]].sort_values(  # PPI++ when there is a judge
        "coefficient", ascending=False, ignore_index=True)
    shown = table.rename(columns={"coefficient": "estimate"}).assign(
        label=lambda t: t["model"].astype(str) + " · " + t["method"])
    fig = figures.interval_dots(shown, "label", "Bradley-Terry strength", "coefficient (reference model = 0)",
                                f"{percent(s.level)} intervals", by="method")
    best = chosen.iloc[0]
    return Section(
        "battles", "Pairwise battles (Bradley-Terry)",
        f"Strength of each model from {table.attrs['n']:,} human-judged battles"
        + (f" and {table.attrs['N']:,} judged by the AI judge only" if table.attrs["N"] else "") + ".",
        f"{percent(s.level)} intervals for each coefficient against the reference model "
        f"({table.attrs.get('reference')}); the prediction-powered rows stay valid whatever the judge's quality.",
        {"coefficients": table}, [fig],
        {"top": str(best["model"]), "method": str(best["method"]), "estimate": float(best["coefficient"]),
         "ci_low": float(best["ci_low"]), "ci_high": float(best["ci_high"])},
        list(table.attrs.get("notes", [])))
