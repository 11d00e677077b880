"""The report's calibration, labeling-budget and AI-assisted sections for a log in an engine
(:class:`evalcore.engine.LazyLog`): the same tables from the engine's reductions, where the in-memory sections need
every example (selective prediction, the stratified plan's per-example strata, bootstraps of per-example ESS).

* calibration: :func:`evalcore.calibration.estimators.calibration_by_model` and reliability diagrams from the engine's bin sums;
  no selective-prediction curve (it needs every example sorted by confidence);
* labeling budget: :func:`evalcore.sampling.designs.design_efficiency_of_log` for the top model at a few budgets;
* AI-assisted evaluation: :func:`evalcore.ppi.means.ppi_mean_by_model` (PPI++ from moments) next to the classical means;
* battles: :func:`evalcore.ppi.bradley_terry.bradley_terry_of_log` from per-pair statistics.
"""

from __future__ import annotations

import pandas as pd

from evalcore.ppi import autoeval
from evalcore.calibration import estimators as calibration
from evalcore.stats import figures
from evalcore.calibration import figures as calibration_figures
from evalcore.sampling import designs as sampling
from evalcore.ppi.bradley_terry import bradley_terry_of_log
from evalcore.engine import LazyLog
from evalcore.stats.figures import percent
from evalcore.report.sections import RELIABILITY_FIGURES, Section, Settings, models_of

#: budgets of the labeling plan, as fractions of the pool
BUDGET_SHARES = (0.001, 0.005, 0.01, 0.05)


def calibration_section(log: LazyLog, s: Settings) -> Section | None:
    if "confidence" not in log or "correct" not in log or not log.count("confidence"):
        return None
    ece = calibration.calibration_by_model(log, s.n_bins, s.n_boot, s.level, s.seed)
    tables = calibration.reliability_by_model(log, s.n_bins, s.alpha)
    totals = pd.DataFrame({m: {"n": t["count"].sum(), "conf": (t["count"] * t["mean_confidence"]).sum(),
                               "correct": (t["count"] * t["accuracy"]).sum()} for m, t in tables.items()}).T
    table = ece.rename(columns={"debiased": "ece_debiased", "p_value": "p_calibrated"}).assign(
        mean_confidence=(totals["conf"] / totals["n"]).reindex(ece["model"]).to_numpy(),
        accuracy=(totals["correct"] / totals["n"]).reindex(ece["model"]).to_numpy())
    table = table.sort_values("ece", ascending=False, ignore_index=True)
    figs = [calibration_figures.reliability_diagram(tables[m], m, s.level, ece=f"ECE {table.set_index('model').loc[m, 'ece']:.3f}")
            for m in table["model"].head(RELIABILITY_FIGURES)]
    worst = table.iloc[0]
    return Section(
        "calibration", "Calibration",
        f"Does each model's confidence mean what it says? Expected calibration error (ECE, {s.n_bins} equal-width "
        "bins) per model and reliability diagrams of the least calibrated models, computed in the engine.",
        f"ECE intervals (paired Poisson bootstrap, {s.n_boot:,} replicates, seed {s.seed}): over repeated samples "
        f"of this size the interval contains the model's ECE for these bins {percent(s.level)} of the time; it "
        "excludes 0 only when the calibration test (p_calibrated) rejects. Reliability bands are Wilson intervals.",
        {"ece by model": table}, figs,
        {"worst": str(worst["model"]), "ece": float(worst["ece"]), "ci_low": float(worst["ci_low"]),
         "ci_high": float(worst["ci_high"]), "p": float(worst["p_calibrated"]),
         "overconfident": bool(worst["mean_confidence"] > worst["accuracy"]),
         "miscalibrated": int((table["ci_low"] > 0).sum()), "n_models": len(table)},
        ["Selective prediction is not in this report: it needs every example sorted by confidence, which the "
         "engine does not return."])


def labeling(log: LazyLog, s: Settings, top: str | None) -> Section | None:
    source = next((c for c in ("proxy", "confidence") if c in log and log.count(c) == log.n_rows), None)
    if source is None:
        return None
    models = models_of(log, "log")
    model = top if top in models else models[0]
    pool = log.n_rows // max(len(models), 1)
    budgets = sorted({max(2 * s.n_strata, int(pool * share)) for share in BUDGET_SHARES if pool * share >= 1})
    if not budgets:
        return None
    table = sampling.design_efficiency_of_log(log, model, budgets, source, s.n_strata)
    best = table[table["design"] != "srs"].groupby(["design", "estimator"])["relative_efficiency"].mean().idxmin()
    ratio = float(table.set_index(["design", "estimator"]).loc[best, "relative_efficiency"].mean())
    return Section(
        "labeling", "Labeling budget",
        f"How much precision each sampling design would give {model}'s accuracy at {len(budgets)} budgets, using "
        f"the {'proxy column' if source == 'proxy' else 'model confidence'} as a stand-in for correctness: "
        f"{s.n_strata} strata by 1-D k-means on a fine histogram of it (computed in the engine).",
        "Predicted, not measured: relative_efficiency is the design's predicted MSE over that of simple random "
        "sampling at the same budget, assuming the proxy is calibrated (below 1 is better).",
        {"design efficiency": table}, [],
        {"model": model, "design": " + ".join(best), "efficiency": ratio, "n": pool})


def prediction_powered(log: LazyLog, metric: str | None, s: Settings) -> Section | None:
    if metric is None or log.count(metric) == log.n_rows:
        return None
    annotator = next((a for a in ("proxy", "confidence") if a in log and log.count(a) == log.n_rows
                      and (a == "proxy" or metric == "correct")), None)
    if annotator is None:
        return None
    table = autoeval.moment_table(log, annotator, metric, s.alpha)
    tuned = table[table["method"] == autoeval.METHOD_NAMES["ppi++"]]
    shown = table.assign(label=lambda t: t["model"].astype(str) + " · " + t["method"])
    fig = figures.interval_dots(shown, "label", f"Mean {metric}: classical vs PPI++", metric,
                                f"{percent(s.level)} intervals", by="method")
    ranked = tuned.sort_values("estimate", ascending=False, ignore_index=True)
    best = ranked.iloc[0]
    return Section(
        "ppi", "AI-assisted evaluation (prediction-powered inference)",
        f"Per model, {int(tuned['n'].median()):,} examples carry a human label and {int(tuned['N'].median()):,} only "
        f"the annotator's ({annotator}) estimate (medians over models). PPI++ combines both, from moments computed in "
        "the engine.",
        f"PPI++ intervals (Angelopoulos et al. 2023) contain each model's true mean {percent(s.level)} of the time "
        "whatever the annotator's quality; ESS is the number of labeled examples a classical estimate would need for "
        "the same precision.",
        {"estimates": table}, [fig],
        {"annotator": annotator, "n": int(tuned["n"].median()), "N": int(tuned["N"].median()),
         "top": str(best["model"]),
         "estimate": float(best["estimate"]), "ci_low": float(best["ci_low"]), "ci_high": float(best["ci_high"]),
         "ess_ratio": float((tuned["ess"] / tuned["n"]).median())})


def battles(log: LazyLog, s: Settings) -> Section | None:
    if log.kind != "battles" or "outcome" not in log or not log.count("outcome"):
        return None
    table = bradley_terry_of_log(log, alpha=s.alpha).sort_values("coefficient", ascending=False, ignore_index=True)
    method = "PPI++" if table["lam"].iloc[0] > 0 else "classical"
    fig = figures.interval_dots(table.rename(columns={"coefficient": "estimate"}).assign(
        label=lambda t: t["model"].astype(str)), "label", "Bradley-Terry strength",
        "coefficient (reference model = 0)", f"{percent(s.level)} intervals")
    best = table.iloc[0]
    return Section(
        "battles", "Pairwise battles (Bradley-Terry)",
        f"Strength of each model from {table.attrs.get('n', 0):,} human-judged battles"
        + (f" and {table.attrs['N']:,} judged by the AI judge only" if table.attrs.get("N") else "")
        + ", from per-pair statistics computed in the engine.",
        f"{percent(s.level)} intervals for each coefficient against the reference model "
        f"({table.attrs.get('reference')}); {method} intervals stay valid whatever the judge's quality.",
        {"coefficients": table}, [fig],
        {"top": str(best["model"]), "method": method, "estimate": float(best["coefficient"]),
         "ci_low": float(best["ci_low"]), "ci_high": float(best["ci_high"])},
        list(table.attrs.get("notes", [])))
