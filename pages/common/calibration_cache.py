"""Cached calibration computations for the calibration page, keyed by data digest + selection + parameters.

ECE and reliability come from the log's reductions (:func:`evalcore.calibration.estimators.calibration_by_model`),
wherever the log lives; selective prediction and the breakdown need the per-example confidences
(:func:`pages.common.selection.examples`).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from evalcore.calibration import estimators as cal
from evalcore.engine import LazyLog

from .store import cached, compute_with_progress


@dataclass(frozen=True)
class Params:
    n_bins: int
    n_boot: int
    seed: int
    level: float

    @property
    def alpha(self) -> float:
        return 1.0 - self.level


@dataclass(frozen=True)
class Selective:
    """What the page shows of one model's selective prediction."""

    curve: pd.DataFrame
    area: cal.AreaResult
    conf: pd.Series          # the model's confidences (for accuracy at coverage)
    correct: pd.Series


#: selective prediction and the breakdown bootstrap every labeled example ``n_boot`` times: up to this many
#: (example, replicate) draws (e.g. the 43,500-row demo at 500 replicates) they are computed with the first screen,
#: above it (ImageNet-X's 200,000 rows: seconds each) when the user opens them
AT_ONCE = 25_000_000


def at_once(n_examples: int, p: Params) -> bool:
    """Whether the per-example bootstraps of ``n_examples`` are cheap enough for the first screen."""
    return n_examples * p.n_boot <= AT_ONCE


@cached("Computing calibration...")
def by_model(key: tuple, p: Params, _log: LazyLog) -> tuple[pd.DataFrame, dict]:
    """ECE with intervals per model and the reliability tables (uniform bins), from one pass of the log's
    reductions (:func:`evalcore.calibration.estimators.calibration_and_reliability`)."""
    return cal.calibration_and_reliability(_log, p.n_bins, p.n_boot, p.level, p.seed)


def selective(key: tuple, p: Params, models: list[str], usable: pd.DataFrame) -> dict[str, Selective]:
    """Selective curve and area interval for each model (bootstraps under a progress bar)."""
    parts = {m: usable[usable["model"] == m] for m in models}

    def area_job(rows):
        return lambda progress: cal.area_interval(rows["confidence"].to_numpy(), rows["correct"].to_numpy(),
                                                  p.n_boot, p.level, p.seed, progress)

    areas = compute_with_progress((key, p), "Bootstrapping the selective curves...",
                                  [((m, "area"), area_job(r)) for m, r in parts.items()])
    return {m: Selective(_curve(key, p.level, m, parts[m]), area, parts[m]["confidence"], parts[m]["correct"])
            for m, area in zip(models, areas)}


@cached("Computing selective curves...")
def _curve(key: tuple, level: float, model: str, _rows: pd.DataFrame) -> pd.DataFrame:
    return cal.selective_prediction_curve(_rows["confidence"].to_numpy(), _rows["correct"].to_numpy(), 1 - level)


def selective_table(per: dict[str, Selective], target: float) -> pd.DataFrame:
    """One row per model: the area under the selective curve and the accuracy at coverage ``target``, each with
    its interval."""
    rows = []
    for model, r in per.items():
        at = cal.accuracy_at_coverage(r.conf.to_numpy(), r.correct.to_numpy(), target, alpha=1 - r.area.level)
        rows.append({"model": model, "n": len(r.conf), "area": r.area.area, "area_low": r.area.ci_low,
                     "area_high": r.area.ci_high, "coverage": at.coverage, "threshold": at.threshold,
                     "accuracy_at_coverage": at.accuracy, "accuracy_at_coverage_low": at.ci_low,
                     "accuracy_at_coverage_high": at.ci_high})
    return pd.DataFrame(rows)


def breakdown(key: tuple, p: Params, by: str, usable: pd.DataFrame) -> pd.DataFrame:
    """ECE with bootstrap interval per (model, ``by``) cell."""
    cells = list(usable.groupby(["model", by], observed=True, sort=True))

    def job(rows):
        return lambda progress: cal.ece_interval(rows["confidence"].to_numpy(), rows["correct"].to_numpy(),
                                                 p.n_bins, "uniform", p.n_boot, p.level, p.seed, progress)

    results = compute_with_progress((key, p, by), f"Bootstrapping ECE by {by}...",
                                    [(cell, job(rows)) for cell, rows in cells])
    return pd.DataFrame([
        {"model": model, by: value, "n": r.n, "ece": r.ece, "debiased": r.debiased, "ci_low": r.ci_low,
         "ci_high": r.ci_high}
        for ((model, value), _), r in zip(cells, results)
    ])
