"""Per-cell means of a per-example metric with intervals (the "direct" estimates of every view).

For a binary metric (``correct``) the interval is Wilson's score interval (never of width 0, also at 0 or n
successes); for a real-valued metric (``score``) the Student-t interval mean +/- t_{n-1, 1-alpha/2} * sd / sqrt(n),
refused (NaN bounds, with a note in ``attrs["interval_note"]``) where it would say nothing or be a point: a cell
with a single value (n = 1, no spread to measure) or with all values equal (sd = 0: the sample shows no spread,
which does not prove that the mean is known exactly).

With repeated samples (a ``repeat`` column, :mod:`evalcore.data.repeats`) the example is the unit: the mean is over the
per-example means, a real-valued metric gets the Student-t interval of those means (the cluster-robust interval),
and the binary metric Wilson's interval on Kish's effective number of trials (:func:`~evalcore.data.repeats.kish_effective_n`),
which equals the plain Wilson interval on the examples when every example's repeats agree.

A log in an engine (:class:`evalcore.engine.LazyLog`) gives the same table from its moments n, Σy and Σy² per cell;
the engine (Ibis, DuckDB) is imported only for such a log, so a frame's table costs no engine import (``evalcore
validate`` of a small file).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np
import pandas as pd

from evalcore.stats.intervals import binomial_variance, wilson_interval
from evalcore.data.repeats import N_REPEATS, kish_effective_n, per_example

if TYPE_CHECKING:
    from evalcore.engine import LazyLog

BINARY_METRICS = ("correct",)


def _in_engine(log) -> bool:
    """Whether ``log`` is a log in an engine (any log that is not a frame in memory is one)."""
    return not isinstance(log, pd.DataFrame)


def mean_table(
    frame: pd.DataFrame,
    by: Sequence[str],
    metric: str = "correct",
    alpha: float = 0.05,
    bounds: tuple[float, float] | None = None,
) -> pd.DataFrame:
    """Mean ``metric`` per ``by`` cell over the labeled rows, with a (1 - alpha) interval.

    ``bounds`` clips the Student-t interval of a real-valued metric to its range (e.g. (0, 1) for a
    probability such as ``confidence``); the mean itself always lies inside.

    Columns: ``*by``, n (labeled rows), n_unlabeled, estimate, se, ci_low, ci_high. ``se`` is
    sqrt(p (1 - p) / n) for binary metrics (with p at 0 or 1 replaced by the Jeffreys mean (k + 1/2) / (n + 1),
    :func:`evalcore.stats.intervals.binomial_variance`, so never 0) and sd / sqrt(n) otherwise; cells with n < 2 get NaN
    se. Real-valued cells with n < 2 or sd = 0 get NaN se and bounds, and ``attrs["interval_note"]`` says why
    ("" when every cell has its interval).
    """
    by = list(by)
    if _in_engine(frame):
        out, repeats = _lazy_cells(frame, by, metric), "n_repeats" in frame
    else:
        frame = per_example(frame)
        values = frame[metric]
        grouped = values.groupby([frame[c] for c in by], sort=True, observed=True)
        out = pd.DataFrame({
            "n": grouped.count(),
            "n_unlabeled": grouped.size() - grouped.count(),
            "estimate": grouped.mean(),
            "sd": grouped.std(ddof=1),
            "var0": grouped.var(ddof=0),
            "trials": (frame[N_REPEATS].where(values.notna()) if N_REPEATS in frame else values.notna()).groupby(
                [frame[c] for c in by], sort=True, observed=True).sum(),
        }).reset_index()
        repeats = N_REPEATS in frame
    n = out["n"].to_numpy(dtype=float)
    est = out["estimate"].to_numpy(dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        note = ""
        if metric in BINARY_METRICS:
            n_eff = n
            if repeats:  # per-example means: Wilson on the effective number of trials
                n_eff = np.where(n > 0, kish_effective_n(est, out["var0"], n, out["trials"]), 0.0)
            successes = np.where(n > 0, np.clip(np.nan_to_num(est) * n_eff, 0, n_eff), 0.0)  # no labels: NaN bounds
            if not repeats:
                successes = np.round(successes)
            out["se"] = np.sqrt(binomial_variance(successes, n_eff))
            out["ci_low"], out["ci_high"] = wilson_interval(successes, n_eff, alpha)
        else:
            sd = out["sd"].to_numpy(dtype=float)
            refused = (n > 0) & ((n < 2) | (sd == 0))
            se = np.where(refused, np.nan, sd / np.sqrt(n))
            from scipy.special import stdtrit  # here: a log of 0/1 labels is read without scipy (issue 49)

            half = stdtrit(np.maximum(n - 1, 1), 1 - alpha / 2) * se  # Student-t quantile
            low, high = est - half, est + half
            if bounds is not None:
                low, high = np.clip(low, *bounds), np.clip(high, *bounds)
            out["se"], out["ci_low"], out["ci_high"] = se, low, high
            if refused.any():
                note = (f"No interval for {int(refused.sum())} cell(s) of '{metric}': a single labeled value (n = 1) "
                        "or identical values (standard deviation 0) show no spread, so the Student-t interval "
                        "would be a point; label more rows.")
    out.loc[out["n"] < 2, "se"] = np.nan
    out.attrs["interval_note"] = note
    out["n"] = out["n"].astype("int64")
    out["n_unlabeled"] = out["n_unlabeled"].astype("int64")
    return out.drop(columns=["sd", "var0", "trials"])[[*by, "n", "n_unlabeled", "estimate", "se", "ci_low", "ci_high"]]


def _lazy_cells(log: LazyLog, by: list[str], metric: str) -> pd.DataFrame:
    """The cells of a log in an engine from its moments n, Σy, Σy² (:func:`evalcore.engine.reductions.cell_moments`):
    mean Σy/n, population variance Σy²/n - mean², sample sd from it (n - 1 in the denominator)."""
    from evalcore.engine import reductions

    log.require(metric, *by, method="The table of means")
    cells = reductions.cell_moments(log, by, metric)
    n = cells["n"].to_numpy(dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n > 0, cells["total"] / n, np.nan)
        var0 = np.where(n > 0, np.maximum(cells["total_sq"] / n - mean**2, 0.0), np.nan)
        sd = np.where(n > 1, np.sqrt(var0 * n / (n - 1)), np.nan)
    return cells[by].assign(n=cells["n"], n_unlabeled=cells["n_unlabeled"], estimate=mean, sd=sd, var0=var0,
                            trials=cells["trials"] if "trials" in cells else n)


def summary_from_log(log: pd.DataFrame, metric: str = "correct") -> pd.DataFrame:
    """Leaderboard summary (model, task, category, n, n_correct, accuracy) of a per-example log's labeled rows.

    ``metric`` must be binary (0/1): counts of correct examples per (model, task). Unlabeled rows are not counted.
    A log in an engine gives the same table from its cell moments.
    """
    if _in_engine(log):
        from evalcore.engine import reductions

        log.require(metric, method="The leaderboard summary")
        cells = reductions.cell_moments(log, ["model", "task", "category"], metric)
        out = cells[cells["n"] > 0].assign(n_correct=lambda c: c["total"].round().astype("int64"))
        out = out[["model", "task", "category", "n", "n_correct"]].reset_index(drop=True)
        out["n"] = out["n"].astype("int64")
        out["accuracy"] = out["n_correct"] / out["n"]
        return out
    labeled = log[log[metric].notna()]
    grouped = labeled.groupby(["model", "task", "category"], sort=True, observed=True)[metric]
    out = pd.DataFrame({"n": grouped.size(), "n_correct": grouped.sum()}).reset_index()
    out["n"] = out["n"].astype("int64")
    out["n_correct"] = out["n_correct"].round().astype("int64")
    out["accuracy"] = out["n_correct"] / out["n"]
    return out
