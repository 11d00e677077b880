"""A model's *overall* number, defined once for every page, the report, the CLI and the API.

Default (``over="tasks"``): the mean over tasks. With model ``i`` evaluated on ``T`` tasks and ``p_ij`` its mean
metric on task ``j`` (over the task's labeled examples),

    overall_i = (1 / T) * sum_j p_ij,

each task weighing the same whatever its number of examples (the Leaderboard's "plain mean of tasks",
:mod:`evalcore.leaderboard.bootstrap`). Its interval is the normal interval overall_i +/- z_{1-alpha/2} * se_i, for a 0/1 metric joined with Wilson's
interval at the effective number of examples n_eff = overall_i (1 - overall_i) / se_i^2 (Korn & Graubard 1998), with
se_i = sqrt(sum_j se_ij^2) / T (examples of different tasks are independent; se_ij from
:func:`evalcore.stats.summaries.mean_table`; a 0/1 task with a single label gets the binomial se of
:func:`~evalcore.stats.intervals.binomial_variance`, 0.433 for 1 of 1, rather than none, so one such task does not
take the model's whole interval away), clipped to [0, 1] for a 0/1 metric. Coverage (``benchmarks/coverage/overall.py``, 95%): 0.944-0.998 in every
simulated setting (2-14 tasks of 10-200 examples, accuracies 0.3-0.99) and 0.945-0.959 on MMLU-Pro subsamples of
10-100 questions per category; the normal interval alone gave 0.91 with 2 tasks of 20 examples near 0.9. A model with one task (a log
without tasks has the single task "all") gets that task's own interval (Wilson or Student-t), so there the overall
number is the pooled one.

``over="examples"``: pooled over examples, the mean over all the model's labeled examples, sum_j Y_ij / sum_j N_ij,
with the interval of :func:`~evalcore.stats.summaries.mean_table`. Where it is shown beside the default it is named
"pooled over examples" (:data:`NAMES`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalcore.stats.intervals import DEFAULT_ALPHA, binomial_variance, wilson_interval, z_value
from evalcore.stats.summaries import BINARY_METRICS, mean_table

#: the estimands and their names in captions, tables and the report
NAMES = {"tasks": "mean over tasks", "examples": "pooled over examples"}
DEFAULT = "tasks"
COLUMNS = ["model", "n_tasks", "n", "n_unlabeled", "estimate", "se", "ci_low", "ci_high"]


def interval_name(metric: str, design: str = "") -> str:
    """What a (model, task) cell's interval is called, as the pages, the report and the command line say it before
    the word "interval": "Wilson" (the score interval) for a 0/1 metric or a summary's accuracy, "Student-t" for a
    score; for a labeling campaign's estimate (a summary whose validation report says its ``design``,
    :meth:`evalcore.labeling.campaign.Campaign.summary`) the design's estimator, e.g. "stratified Horvitz-Thompson,
    design's": the campaign's own interval at its level (:func:`_summary_cells`)."""
    if design:
        from evalcore.labeling.estimate import ESTIMATORS

        said = design.partition(", in the labeling campaign")[0]  # "...labels, <design> (<estimator>)"
        estimator = next((e for e in ESTIMATORS.values() if said.endswith(f"({e})")), "the design's estimator")
        return f"{estimator}, design's"
    return "Wilson" if metric in (*BINARY_METRICS, "accuracy") else "Student-t"


def overall_table(data, metric: str = "correct", alpha: float = DEFAULT_ALPHA, over: str = DEFAULT,
                  summary: bool = False) -> pd.DataFrame:
    """Each model's overall ``metric`` with a (1 - alpha) interval, sorted by the estimate (best first).

    ``data`` is a per-example log (a frame or a log in an engine, with ``model`` and ``task`` columns) or, with
    ``summary=True``, a leaderboard summary (model, task, n, n_correct: accuracy only). ``over`` is "tasks" (the
    default: mean over tasks) or "examples" (pooled); see the module's docstring for the formulas.
    Columns: model, n_tasks, n (labeled examples), n_unlabeled, estimate, se, ci_low, ci_high;
    ``attrs["interval_note"]`` as :func:`~evalcore.stats.summaries.mean_table` gives it for the tasks.
    """
    if over not in NAMES:
        raise ValueError(f"over must be one of {', '.join(NAMES)}, got {over!r}.")
    cells = _summary_cells(data, alpha) if summary else mean_table(data, ["model", "task"], metric, alpha)
    note = cells.attrs.get("interval_note", "")
    cells = cells[cells["n"] > 0]
    binary = summary or metric in BINARY_METRICS
    if binary:  # a task with one label has no sample se in mean_table; its binomial (Jeffreys-floored) se counts
        single = (cells["n"] == 1) & cells["se"].isna()
        cells = cells.assign(se=cells["se"].where(~single, np.sqrt(binomial_variance(cells["estimate"].clip(0, 1), 1))))
    if over == "examples":
        if summary:
            pooled = data.groupby("model", as_index=False, observed=True)[["n", "n_correct"]].sum()
            table = _binomial(pooled["model"], pooled["n_correct"], pooled["n"], alpha)
        else:
            table = mean_table(data, ["model"], metric, alpha)
        table = table[table["n"] > 0].merge(cells.groupby("model", observed=True).size().rename("n_tasks"),
                                            on="model")
    else:
        table = cells.groupby("model", as_index=False, observed=True).agg(
            n_tasks=("task", "size"), n=("n", "sum"), n_unlabeled=("n_unlabeled", "sum"),
            estimate=("estimate", "mean"),
            se=("se", lambda s: np.sqrt((s**2).sum(min_count=len(s))) / len(s)),
            low1=("ci_low", "first"), high1=("ci_high", "first"))
        low, high = _mean_interval(table["estimate"].to_numpy(), table["se"].to_numpy(), alpha, binary)
        one = table["n_tasks"] == 1
        table["ci_low"] = np.where(one, table["low1"], low)
        table["ci_high"] = np.where(one, table["high1"], high)
    table = table.assign(**{c: table[c].astype("int64") for c in ("n_tasks", "n", "n_unlabeled")})
    out = table[COLUMNS].sort_values(["estimate", "model"], ascending=[False, True], ignore_index=True)
    out.attrs["interval_note"] = note
    return out


def with_overall(board: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """A bootstrap leaderboard (:func:`evalcore.leaderboard.bootstrap.leaderboard` on raw accuracies) whose
    ``scope == "overall"`` rows carry the overall number of ``table`` (:func:`overall_table` at the same level): the
    same estimate (the mean over tasks) with the one interval every page, the report, the CLI and the API show.
    The tasks and categories keep their bootstrap intervals; the pairwise differences and ranks are read from the
    replicates, not from these rows. ``attrs`` are kept."""
    bounds = table.set_index(table["model"].astype(str))[["estimate", "ci_low", "ci_high"]]
    rows = board["scope"] == "overall"
    models = board.loc[rows, "model"].astype(str)
    if not models.isin(bounds.index).all():
        raise ValueError(f"the overall table lacks models of the board: {sorted(set(models) - set(bounds.index))}")
    out = board.copy()
    out.loc[rows, ["estimate", "ci_low", "ci_high"]] = bounds.loc[models].to_numpy()
    out.attrs = dict(board.attrs)
    return out


def _mean_interval(estimate: np.ndarray, se: np.ndarray, alpha: float, binary: bool) -> tuple[np.ndarray, np.ndarray]:
    """The mean over tasks' interval: the normal p +/- z se; for a 0/1 metric (clipped to [0, 1]) joined with
    Wilson's interval at the effective number of examples n_eff = p (1 - p) / se^2 (Korn & Graubard 1998) where
    0 < p < 1. Each alone falls short somewhere (benchmarks/coverage/overall.py, 95%: normal 0.91 with 2 tasks of 20
    examples near 0.9, Wilson 0.916 with 3 tasks of 10); their union holds in every setting measured."""
    z = z_value(alpha)
    low, high = estimate - z * se, estimate + z * se
    if not binary:
        return low, high
    low, high = np.clip(low, 0, 1), np.clip(high, 0, 1)
    inside = (estimate > 0) & (estimate < 1) & (se > 0)
    n_eff = np.where(inside, estimate * (1 - estimate) / np.where(inside, se, 1.0) ** 2, 1.0)
    wlow, whigh = wilson_interval(estimate * n_eff, n_eff, alpha)
    return np.where(inside, np.minimum(wlow, low), low), np.where(inside, np.maximum(whigh, high), high)


def _binomial(model, k, n, alpha: float) -> pd.DataFrame:
    """Accuracy k / n with se sqrt(binomial_variance) and Wilson's interval, per row (a summary has no unlabeled
    rows)."""
    k, n = np.asarray(k, float), np.asarray(n, float)
    low, high = wilson_interval(k, n, alpha)
    return pd.DataFrame({"model": np.asarray(model), "n": n, "n_unlabeled": 0, "estimate": k / n,
                         "se": np.sqrt(binomial_variance(k, n)), "ci_low": low, "ci_high": high})


def _summary_cells(summary: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """A leaderboard summary's (model, task) cells as :func:`mean_table` gives them for a log; a cell with the
    tool's own standard error (``se``, e.g. AlpacaEval's length-controlled win rate) keeps the tool's accuracy and
    gets the normal interval accuracy ± z·se, clipped to [0, 1]; a labeling campaign's estimate
    (:meth:`evalcore.labeling.campaign.Campaign.summary`) keeps the campaign's own interval at the campaign's level
    (its Wilson interval at the design's effective sample size, skipped examples bounded), and at another level the
    normal interval of its standard error, said in the note."""
    cells = _binomial(summary["model"], summary["n_correct"], summary["n"], alpha).assign(
        task=summary["task"].to_numpy())
    if "se" in summary:
        own = summary["se"].notna().to_numpy()
        z = z_value(alpha)
        estimate, se = summary["accuracy"].to_numpy(float), summary["se"].to_numpy(float)
        cells.loc[own, "estimate"] = estimate[own]
        cells.loc[own, "se"] = se[own]
        cells.loc[own, "ci_low"] = np.clip(estimate - z * se, 0, 1)[own]
        cells.loc[own, "ci_high"] = np.clip(estimate + z * se, 0, 1)[own]
        design = summary.attrs.get("report", {}).get("design_interval") or ()
        if len(design) == 3 and len(cells) == 1:
            level, low, high = design
            if abs(level - (1 - alpha)) < 1e-9:
                cells.loc[:, ["ci_low", "ci_high"]] = [[low, high]]
                cells.attrs["interval_note"] = "The labeling campaign's own interval (its design's)."
            else:
                cells.attrs["interval_note"] = (f"The labeling campaign's own interval is at {level:.0%}; at "
                                                f"{1 - alpha:.0%} the normal interval of its standard error.")
        elif own.any():
            cells.attrs["interval_note"] = (f"{int(own.sum()):,} of {len(cells):,} cells use the tool's own standard "
                                            "error (accuracy ± z·se).")
    return cells
