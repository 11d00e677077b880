"""Cached calibration computations for the calibration page, keyed by data digest + selection + parameters."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from evalcore.calibration import estimators as cal
from evalcore.stats.summaries import mean_table

from .store import cached, compute_with_progress


@dataclass(frozen=True)
class Params:
    n_bins: int
    binning: str
    n_boot: int
    seed: int
    level: float

    @property
    def alpha(self) -> float:
        return 1.0 - self.level


@dataclass(frozen=True)
class ModelCalibration:
    """Everything the page shows for one model."""

    table: pd.DataFrame
    curve: pd.DataFrame
    ece: cal.ECEResult
    area: cal.AreaResult
    accuracy: pd.Series      # mean_table row for `correct`
    confidence: pd.Series    # mean_table row for `confidence`
    conf: pd.Series          # the model's confidences (for accuracy at coverage)
    correct: pd.Series


@cached("Computing reliability tables...")
def _tables(key: tuple, n_bins: int, binning: str, level: float, model: str, _rows: pd.DataFrame):
    conf, corr = _rows["confidence"].to_numpy(), _rows["correct"].to_numpy()
    alpha = 1 - level
    return (cal.reliability_table(conf, corr, n_bins, binning, alpha),
            cal.selective_prediction_curve(conf, corr, alpha),
            mean_table(_rows, ["model"], "correct", alpha).iloc[0],
            mean_table(_rows, ["model"], "confidence", alpha, bounds=(0.0, 1.0)).iloc[0])


def per_model(key: tuple, p: Params, models: list[str], usable: pd.DataFrame) -> dict[str, ModelCalibration]:
    """Reliability table, selective curve, ECE and area intervals for each model (bootstraps under a bar)."""
    parts = {m: usable[usable["model"] == m] for m in models}

    def ece_job(rows):
        return lambda progress: cal.ece_interval(rows["confidence"].to_numpy(), rows["correct"].to_numpy(),
                                                 p.n_bins, p.binning, p.n_boot, p.level, p.seed, progress)

    def area_job(rows):
        return lambda progress: cal.area_interval(rows["confidence"].to_numpy(), rows["correct"].to_numpy(),
                                                  p.n_boot, p.level, p.seed, progress)

    jobs = [((m, "ece"), ece_job(r)) for m, r in parts.items()] + [((m, "area"), area_job(r))
                                                                   for m, r in parts.items()]
    results = compute_with_progress((key, p), "Bootstrapping calibration error...", jobs)
    eces, areas = results[:len(models)], results[len(models):]
    out = {}
    for m, ece, area in zip(models, eces, areas):
        table, curve, acc, conf = _tables(key, p.n_bins, p.binning, p.level, m, parts[m])
        out[m] = ModelCalibration(table, curve, ece, area, acc, conf, parts[m]["confidence"], parts[m]["correct"])
    return out


def summary_table(per: dict[str, ModelCalibration], target: float) -> pd.DataFrame:
    """One row per model: accuracy, mean confidence, ECE, area and accuracy at coverage, each with an interval."""
    rows = []
    for model, r in per.items():
        sel = cal.accuracy_at_coverage(r.conf.to_numpy(), r.correct.to_numpy(), target,
                                       alpha=1 - r.ece.level)
        rows.append({
            "model": model, "n": int(r.accuracy["n"]),
            "accuracy": r.accuracy["estimate"], "accuracy_low": r.accuracy["ci_low"],
            "accuracy_high": r.accuracy["ci_high"],
            "mean_confidence": r.confidence["estimate"], "mean_confidence_low": r.confidence["ci_low"],
            "mean_confidence_high": r.confidence["ci_high"],
            "ece": r.ece.ece, "ece_low": r.ece.ci_low, "ece_high": r.ece.ci_high, "ece_debiased": r.ece.debiased,
            "p_calibrated": r.ece.p_value,
            "area": r.area.area, "area_low": r.area.ci_low, "area_high": r.area.ci_high,
            "coverage": sel.coverage, "threshold": sel.threshold, "accuracy_at_coverage": sel.accuracy,
            "accuracy_at_coverage_low": sel.ci_low, "accuracy_at_coverage_high": sel.ci_high,
        })
    return pd.DataFrame(rows)


def breakdown(key: tuple, p: Params, by: str, usable: pd.DataFrame) -> pd.DataFrame:
    """ECE with bootstrap interval per (model, ``by``) cell."""
    cells = list(usable.groupby(["model", by], observed=True, sort=True))

    def job(rows):
        return lambda progress: cal.ece_interval(rows["confidence"].to_numpy(), rows["correct"].to_numpy(),
                                                 p.n_bins, p.binning, p.n_boot, p.level, p.seed, progress)

    results = compute_with_progress((key, p, by), f"Bootstrapping ECE by {by}...",
                                    [(cell, job(rows)) for cell, rows in cells])
    return pd.DataFrame([
        {"model": model, by: value, "n": r.n, "ece": r.ece, "debiased": r.debiased, "ci_low": r.ci_low,
         "ci_high": r.ci_high}
        for ((model, value), _), r in zip(cells, results)
    ])


@cached("Computing calibration in the engine...")
def in_engine(key: tuple, n_bins: int, n_boot: int, seed: int, level: float, _log) -> tuple[pd.DataFrame, dict]:
    """ECE with intervals per model and the reliability tables of a log in the engine (uniform bins)."""
    return (cal.calibration_by_model(_log, n_bins, n_boot, level, seed),
            cal.reliability_by_model(_log, n_bins, 1 - level))
