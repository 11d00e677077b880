"""The calibration page's answer: one plain sentence naming the best- and the least-calibrated model with their
expected calibration error and its interval (numbers as :mod:`evalcore.stats.headline` formats them)."""

from __future__ import annotations

import pandas as pd

from evalcore.stats.figures import percent
from evalcore.stats.headline import DASH, number

#: the estimate the sentence and the chart show: the median-unbiased ECE, which the interval brackets
ESTIMATE = "debiased"


def ranked(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`evalcore.calibration.estimators.calibration_by_model`'s rows, best calibrated first (smallest debiased
    ECE; ties by model name), models without an estimate left out."""
    return (table.dropna(subset=[ESTIMATE]).sort_values([ESTIMATE, "model"], kind="stable", ignore_index=True))


def _span(row: pd.Series, level: float) -> str:
    return f"{number(row[ESTIMATE])} ({percent(level)} interval {number(row['ci_low'])}{DASH}{number(row['ci_high'])})"


def sentence(table: pd.DataFrame, level: float) -> str:
    """E.g. "ViT is best calibrated: expected calibration error 0.0131 (95% interval 0.0105–0.0157); SimCLR is the
    least, its confidence off by 0.0492 (95% interval 0.0455–0.0530) on average."

    An interval reaching 0 is said in words (no measurable miscalibration). Names are returned as they are: the
    caller escapes them for its renderer."""
    rows = ranked(table)
    if rows.empty:
        return "No model's calibration error can be estimated from the selection."
    best = rows.iloc[0]
    calibrated = "; its interval reaches 0: no measurable miscalibration" if best["ci_low"] <= 0 else ""
    if len(rows) == 1:
        return f"{best['model']}: expected calibration error {_span(best, level)}{calibrated}."
    worst = rows.iloc[-1]
    return (f"{best['model']} is best calibrated: expected calibration error {_span(best, level)}{calibrated}; "
            f"{worst['model']} is the least, its confidence off by {_span(worst, level)} on average.")
