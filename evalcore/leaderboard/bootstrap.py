"""Multi-task aggregation with uncertainty: bootstrap leaderboards, rank intervals, pairwise differences.

Method: "Statistical Uncertainty Quantification for Aggregate Performance Metrics in Machine Learning Benchmarks"
(``../shared/papers/aggregate-uncertainty-vtab.txt``), Section 2.1 (bootstrapping evaluation data), Section 2.4
(metric normalization), Section 3 and Appendix A.3 (Tables 6, 8, 9, 10 on VTAB-1k).

This module covers the bootstrap from leaderboard *summaries* (one row per model and task with counts ``n`` and
``n_correct``). Notation: model ``i``, task ``j``, ``N_ij`` examples, ``Y_ij`` correct, ``p_ij = Y_ij / N_ij``.

Bootstrap (Section 2.1). Resampling the ``N_ij`` test instances of a task with replacement and recording the
proportion correct is, in distribution, exactly ``Y*_ij ~ Binomial(N_ij, p_ij)``; replicate ``b`` has
``p*_bij = Y*_bij / N_ij``, drawn independently across models and tasks (summaries carry no pairing, so the
correlation between models on shared examples is not represented here).

Aggregates (VTAB's mechanism, Section 2.1): category score = plain mean of the category's task accuracies,
overall = plain mean of all tasks. Intervals are bootstrap percentile intervals: the ``(1-level)/2`` and
``(1+level)/2`` quantiles of the replicated aggregate. The default level is the one of every interval of the
package, :data:`evalcore.stats.intervals.DEFAULT_LEVEL` (95%); the paper's ``level=0.834`` (Goldstein & Healy
1995: two non-overlapping 83.4% intervals ~ a difference significant at 0.05; Section 3.1) is an option passed
explicitly (the dashboard's comparison intervals, the checks against Tables 6 and 9). Point estimates are the
values on the observed data.

Paired bootstrap from per-example logs. ``data`` may also be a per-example log: the canonical frame of
:mod:`evalcore.data.validation` (model, example_id, task, category, correct, ...) or a log in an engine
(:class:`evalcore.engine.LazyLog`, from :func:`evalcore.engine.scan`). Both take one path: a frame is read in place
by DuckDB (:func:`evalcore.engine.as_log`; repeated samples averaged per example first, so the bootstrap resamples
examples with all their samples), the engine returns the labeled counts per (model, task) and the per-(model, task,
bucket) sums of ``correct``, and the replicates are the paired Poisson bootstrap of :mod:`evalcore.engine.poisson`:
examples hashed into random buckets with Poisson(1) weights, the same weight for every model of an example, so the
correlation between models on shared examples is kept whether or not every model answered every example. Only
labeled rows (``correct`` not missing) count; ``values[b, i, j]`` is model i's weighted accuracy on task j in
replicate b. Results depend only on ``seed`` and the data, not on the engine, the threads or the file layout.

Cells with all answers correct (or all wrong). The plain bootstrap of a (model, task) whose ``Y_ij`` is 0 or
``N_ij`` is constant, so its interval (and, if every cell is so, the category and overall intervals, the pairwise
differences and the ranks) would have width 0 whatever ``N_ij`` — 1 of 1 would read "1.000 (1.000, 1.000)". The
replicates of such a cell are therefore drawn from the Jeffreys-smoothed bootstrap ``Y*_bij ~ Binomial(N_ij,
pi_bij)``, ``pi_bij ~ Beta(Y_ij + 1/2, N_ij - Y_ij + 1/2)`` (a beta-binomial; pseudo-count 1/2 on each side),
from a random stream of their own (``default_rng([seed, 1])``), so every other cell keeps exactly the replicates of
the plain bootstrap and the paper's numbers are unchanged. Such a cell has no variance to correlate, so the paired
bootstrap loses nothing by drawing it alone. Simulated coverage of the task interval at the 83.4% level
with known truth (``tests/unit/test_aggregate_small_n.py``): p = 0.9 and 0.99 at N = 1, 5 and 20 all at least
91%, where the plain bootstrap covers 0.99 at N = 20 only 18% of the time (its interval is the point 1 when all 20
are right). The point estimate stays the observed ``Y_ij / N_ij``.

The tool's own standard errors. A summary may carry ``se``, the standard error of a cell's accuracy as the tool
that wrote it reported it (e.g. AlpacaEval's length-controlled win rate, whose standard error is not the binomial
one of its ``n``; lighteval's ``<metric>_stderr``). Such a cell's replicates are drawn from
``Normal(p_ij, se_ij)`` (``default_rng([seed, 2])``, so every other cell keeps its binomial replicates) instead of
the binomial, so that the category and overall scores, the ranks and the differences carry the tool's uncertainty;
its task interval is ``p_ij +- z se_ij`` with ``z`` the standard normal's ``(1+level)/2`` quantile (clipped to
[0, 1]), and ``Replicates.note`` (``attrs["bootstrap_note"]`` of the tables) says how many cells use it.

All accuracies are fractions in [0, 1].

Public API
----------
``bootstrap_replicates(data, n_boot, seed) -> Replicates`` the replicates with the model / task order;
``bootstrap_summary(data, n_boot, seed) -> ndarray (n_boot, n_models, n_tasks)``;
``normalization_bounds(replicates, bounds) -> (low, high)`` per task (observed min/max by default, the paper's
bootstrap min/max with ``bounds="bootstrap"``, or the user's chance/ceiling);
``user_bounds(tasks, bounds) -> (low, high)`` the checked chance/ceiling values alone;
``with_aggregates(values, categories)``, ``long_board(models, tasks, categories, **columns)`` the task / category /
overall layout shared with :mod:`evalcore.leaderboard.bayes`;
``leaderboard(data, level, n_boot, seed, normalized, bounds) -> DataFrame`` model, scope, name, estimate, ci_low, ci_high;
``rank_intervals(data, method, level, n_boot, seed) -> DataFrame`` model, method, rank, ci_low, ci_high, mean_rank;
``pairwise_differences(data, models, level, n_boot, seed) -> DataFrame`` model_a, model_b, diff, ci_low, ci_high, se;
``simultaneous_intervals(estimate, replicates, level) -> (low, high, se)`` the studentized max-|t| intervals both use.
``data`` may also be :class:`Replicates` already drawn, so that several tables share one bootstrap.

Simultaneous intervals (pairwise differences and rank intervals). For ``K`` statistics with observed values
``theta_k`` and replicates ``theta*_bk``, ``se_k`` is the bootstrap standard deviation of ``theta*_bk`` and
``t*_b = max_k |theta*_bk - theta_k| / se_k`` (statistics with ``se_k = 0`` left out of the maximum); with ``c`` the
``level``-quantile of ``t*_b`` over replicates, the intervals ``theta_k +- c se_k`` all hold together with
probability ``level`` (the studentized maximum bootstrap: Romano & Wolf 2005, "Exact and approximate stepdown
methods for multiple hypothesis testing", JASA 100; Hothorn, Bretz & Westfall 2008, "Simultaneous inference in
general parametric models", Biometrical Journal 50, for the max-|t| critical value). Unlike Bonferroni it needs no
per-interval level near 1 (0.99988 for 406 pairs at 95%, which lives in the bootstrap's few most extreme replicates)
and it uses the correlation between the differences. Measured joint coverage: ``benchmarks/coverage/pairs.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.stats import norm, rankdata

from evalcore.engine import LazyLog, as_log, is_lazy, reductions
from evalcore.data.reading import EvalDataError, listed
from evalcore.leaderboard.ranks import rank_bounds
from evalcore.stats.intervals import DEFAULT_LEVEL

__all__ = [
    "Replicates",
    "RANK_METHODS",
    "bootstrap_replicates",
    "bootstrap_summary",
    "normalization_bounds",
    "user_bounds",
    "with_aggregates",
    "long_board",
    "leaderboard",
    "rank_intervals",
    "pairwise_differences",
    "simultaneous_intervals",
]

#: rank aggregation methods of the paper's Section 3.2 (Tables 4, 5, 8, 10)
RANK_METHODS = ("mean", "geometric", "avg_rank", "avg_rank_noise", "avg_rank_bins")

_REQUIRED = ("model", "task", "category", "n", "n_correct")
_MODELS_LISTED = 5  # models described one by one in a message
_FLAT = 1e-9  # a replicated statistic whose standard deviation is below this (relative) is constant


@dataclass(frozen=True)
class Replicates:
    """Bootstrap replicates of a summary leaderboard.

    ``models`` and ``tasks`` in order of first appearance in the data; ``categories[j]`` is the category of
    ``tasks[j]``; ``n`` and ``observed`` are (n_models, n_tasks) arrays of counts and observed accuracies;
    ``values`` is (n_boot, n_models, n_tasks), ``values[b, i, j] = Y*_bij / N_ij``.
    ``paired`` is True when the replicates come from the paired bootstrap of a per-example log (the same weight
    for every model of an example), False for the binomial bootstrap of summaries; ``note`` names the bootstrap.
    ``se`` is (n_models, n_tasks), the tool's own standard error of each summary cell's accuracy (column ``se`` of
    the summary; NaN where it gives none), or None when the summary has none (module docstring).
    """

    models: tuple[str, ...]
    tasks: tuple[str, ...]
    categories: tuple[str, ...]
    n: np.ndarray
    observed: np.ndarray
    values: np.ndarray
    paired: bool = False
    note: str = ""
    se: np.ndarray | None = None

    @property
    def category_names(self) -> tuple[str, ...]:
        """The distinct categories in order of first appearance."""
        return tuple(dict.fromkeys(self.categories))


# ---------------------------------------------------------------------------------------------- input checks


def _matrices(data: pd.DataFrame, fractional: bool = False
              ) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], np.ndarray, np.ndarray]:
    """models, tasks, categories per task, n and n_correct as (n_models, n_tasks) int64 arrays; or EvalDataError.
    ``fractional``: n_correct may be a sum of per-example means (repeated samples, :mod:`evalcore.data.repeats`)."""
    if not isinstance(data, pd.DataFrame):
        raise EvalDataError(f"Expected a summary table (pandas DataFrame), got {type(data).__name__}.")
    missing = [c for c in _REQUIRED if c not in data.columns]
    if missing:
        raise EvalDataError(
            f"The summary table lacks the column(s) {', '.join(repr(c) for c in missing)}: expected model, task, "
            "category, n (examples evaluated) and n_correct (examples answered correctly)."
        )
    if len(data) == 0:
        raise EvalDataError("The summary table has no rows.")
    frame = data.reset_index(drop=True)
    for col in ("model", "task", "category"):
        if frame[col].isna().any():
            rows = listed(np.flatnonzero(frame[col].isna().to_numpy()) + 1)
            raise EvalDataError(f"Column '{col}' is empty in row(s) {rows}.")
    n = pd.to_numeric(frame["n"], errors="coerce").to_numpy(dtype=float)
    k = pd.to_numeric(frame["n_correct"], errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(n) | ~np.isfinite(k) | (n < 1) | (k < 0) | (k > n) | (n != np.round(n))
    if not fractional:
        bad |= k != np.round(k)
    if bad.any():
        rows = listed(np.flatnonzero(bad) + 1)
        raise EvalDataError(
            f"Row(s) {rows}: n must be a whole number >= 1 and n_correct a whole number between 0 and n."
        )
    models = tuple(str(m) for m in pd.unique(frame["model"].astype(str)))
    tasks = tuple(str(t) for t in pd.unique(frame["task"].astype(str)))
    cats = frame.groupby(frame["task"].astype(str), sort=False)["category"].agg(lambda s: sorted(set(map(str, s))))
    split = {t: c for t, c in cats.items() if len(c) > 1}
    if split:
        t, c = next(iter(split.items()))
        raise EvalDataError(f"Task '{t}' is listed under several categories ({', '.join(c)}): expected one.")
    key = frame["model"].astype(str) + "\x00" + frame["task"].astype(str)
    dup = key.duplicated(keep=False).to_numpy()
    if dup.any():
        rows = listed(np.flatnonzero(dup) + 1)
        first = frame.loc[np.flatnonzero(dup)[0]]
        raise EvalDataError(
            f"Model '{first['model']}' has more than one row for task '{first['task']}' (rows {rows}): "
            "expected one row per model and task."
        )
    if len(models) < 2:
        raise EvalDataError(f"Only one model found ('{models[0]}'): aggregation compares at least two models.")
    mi = pd.Index(models).get_indexer(frame["model"].astype(str))
    ti = pd.Index(tasks).get_indexer(frame["task"].astype(str))
    present = np.zeros((len(models), len(tasks)), dtype=bool)
    present[mi, ti] = True
    if not present.all():
        lines = []
        for i in np.flatnonzero(~present.all(axis=1))[:_MODELS_LISTED]:
            gone = [tasks[j] for j in np.flatnonzero(~present[i])]
            shown = listed(gone, fmt=lambda t: f"'{t}'")
            lines.append(f"model '{models[i]}' lacks task(s) {shown}")
        raise EvalDataError(
            "Every model needs a result on every task (the aggregate is a mean over the same tasks): "
            + "; ".join(lines) + ". Add the missing rows or drop the task(s)."
        )
    n_mat = np.zeros((len(models), len(tasks)), dtype=np.int64)
    k_mat = np.zeros((len(models), len(tasks)), dtype=float if fractional else np.int64)
    n_mat[mi, ti] = n.astype(np.int64)
    k_mat[mi, ti] = k if fractional else k.astype(np.int64)
    categories = tuple(cats[t][0] for t in tasks)
    return models, tasks, categories, n_mat, k_mat


def _check_level(level: float) -> None:
    if not 0 < level < 1:
        raise ValueError(f"level must be strictly between 0 and 1, got {level}.")


def _check_n_boot(n_boot: int) -> None:
    if int(n_boot) != n_boot or n_boot < 2:
        raise ValueError(f"n_boot must be a whole number >= 2, got {n_boot}.")


def _check_bounds(normalized: bool, bounds: Mapping[str, tuple[float, float]] | str | None) -> None:
    if isinstance(bounds, str) and bounds != "bootstrap":
        raise ValueError(f"bounds must be None, 'bootstrap' or {{task: (chance, ceiling)}}, got {bounds!r}.")
    if bounds is not None and not normalized:
        raise ValueError("bounds (chance, ceiling per task) only apply to normalized accuracy: pass normalized=True.")


def _interval(samples: np.ndarray, level: float, axis: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval: the (1-level)/2 and (1+level)/2 quantiles (linear interpolation) along ``axis``."""
    lo, hi = np.quantile(samples, [(1 - level) / 2, (1 + level) / 2], axis=axis)
    return lo, hi


def _smooth_degenerate(values: np.ndarray, n: np.ndarray, k: np.ndarray, seed: int) -> np.ndarray:
    """``values`` with the replicates of every cell with ``k`` 0 or ``n`` redrawn from the Jeffreys-smoothed
    bootstrap (module docstring): ``Binomial(n, Beta(k + 1/2, n - k + 1/2)) / n`` from ``default_rng([seed, 1])``."""
    flat = (k == 0) | (k == n)
    if not flat.any():
        return values
    rng = np.random.default_rng([seed, 1])
    i, j = np.nonzero(flat)
    size = (values.shape[0], len(i))
    pi = rng.beta(k[i, j] + 0.5, n[i, j] - k[i, j] + 0.5, size=size)
    values[:, i, j] = rng.binomial(n[i, j], pi) / n[i, j]
    return values


# ---------------------------------------------------------------------------------------------- per-example logs


def _is_log(data: object) -> bool:
    return isinstance(data, pd.DataFrame) and "example_id" in data.columns and "n_correct" not in data.columns


def _log_replicates(log: LazyLog, n_boot: int, seed: int) -> Replicates:
    """The paired Poisson bootstrap of a per-example log (:mod:`evalcore.engine.poisson`): the engine returns
    per-cell counts and per-(cell, bucket) sums; ``values[b, i, j]`` is model i's weighted accuracy on task j in
    replicate b (the observed accuracy in the rare replicate that gives a cell no weight)."""
    log.require("correct", method="The leaderboard (0/1 accuracy)")
    cells = reductions.cell_moments(log, ["model", "category", "task"], "correct")
    summary = cells[cells["n"] > 0].rename(columns={"total": "n_correct"})
    if summary.empty:
        raise EvalDataError(f"{log.source}: the per-example log has no labeled rows (column 'correct' is empty "
                            "everywhere).")
    models, tasks, categories, n, k = _matrices(summary, fractional="n_repeats" in log)
    observed = k / n
    index = pd.MultiIndex.from_product([models, tasks], names=["model", "task"])
    t = log.table
    reps = reductions.bucket_replicates(log, ["model", "task"], index, {"correct": t.correct}, n_boot, seed,
                                        where=t.correct.notnull())
    with np.errstate(invalid="ignore", divide="ignore"):
        values = (reps["correct"] / reps["rows"]).reshape(n_boot, len(models), len(tasks))
    values = np.where(np.isfinite(values), values, observed)
    note = ("Poisson bootstrap: examples hashed into random buckets with Poisson(1) weights, the same for every "
            "model of an example.")
    return Replicates(models, tasks, categories, n, observed, _smooth_degenerate(values, n, k, seed), paired=True,
                      note=note)


def _mark(frame: pd.DataFrame, rep: Replicates) -> pd.DataFrame:
    frame.attrs["paired"] = rep.paired
    frame.attrs["bootstrap_note"] = rep.note
    return frame


# ---------------------------------------------------------------------------------------------- bootstrap


def bootstrap_replicates(data: pd.DataFrame, n_boot: int = 2000, seed: int = 0) -> Replicates:
    """Binomial bootstrap of a summary leaderboard (paper, Section 2.1), paired bootstrap of a per-example log.

    A per-example log (a frame with ``example_id`` and no ``n_correct``, or a LazyLog) gets the paired Poisson
    bootstrap described in the module docstring (``paired=True``). For summaries:

    ``Y*_bij ~ Binomial(N_ij, Y_ij / N_ij)`` independently for every replicate ``b``, model ``i`` and task ``j``
    (exactly the distribution of the proportion correct after resampling the ``N_ij`` instances with
    replacement), drawn in one vectorised call from ``numpy.random.default_rng(seed)``; cells with accuracy 0 or 1
    are then redrawn from the Jeffreys-smoothed bootstrap (module docstring), so no cell is constant over
    replicates. ``N = 1`` is allowed; nothing produces NaN.
    Raises :class:`~evalcore.data.reading.EvalDataError` when a model lacks a task, a (model, task) is repeated, a
    task has several categories or a count is invalid.
    """
    _check_n_boot(n_boot)
    if is_lazy(data) or _is_log(data):
        return _log_replicates(as_log(data), int(n_boot), seed)
    models, tasks, categories, n, k = _matrices(data)
    observed = k / n
    rng = np.random.default_rng(seed)
    draws = rng.binomial(n, observed, size=(int(n_boot),) + n.shape)
    values = _smooth_degenerate(draws / n, n, k, seed)
    se = _tool_se(data, models, tasks)
    if se is None:
        return Replicates(models, tasks, categories, n, observed, values)
    i, j = np.nonzero(~np.isnan(se))
    noise = np.random.default_rng([seed, 2]).standard_normal((int(n_boot), len(i)))
    values[:, i, j] = observed[i, j] + se[i, j] * noise
    note = (f"for {len(i):,} of {se.size:,} (model, task) cells the tool's own standard error instead: the task "
            "interval is the estimate ± z·se, the replicates normal with that standard error")
    return Replicates(models, tasks, categories, n, observed, values, note=note, se=se)


def _tool_se(data: pd.DataFrame, models: tuple[str, ...], tasks: tuple[str, ...]) -> np.ndarray | None:
    """The summary's column ``se`` (the tool's standard errors of the accuracies) as a (n_models, n_tasks) array,
    NaN where missing, negative or not a number; None when no cell has one."""
    if "se" not in data.columns:
        return None
    frame = data.reset_index(drop=True)
    se = pd.to_numeric(frame["se"], errors="coerce").to_numpy(dtype=float)
    se = np.where(np.isfinite(se) & (se >= 0), se, np.nan)
    if np.isnan(se).all():
        return None
    out = np.full((len(models), len(tasks)), np.nan)
    mi = pd.Index(models).get_indexer(frame["model"].astype(str))
    out[mi, pd.Index(tasks).get_indexer(frame["task"].astype(str))] = se
    return out


def _replicates(data: pd.DataFrame | Replicates, n_boot: int, seed: int) -> Replicates:
    """``data`` itself when it is already :class:`Replicates` (one bootstrap shared by several tables), else
    :func:`bootstrap_replicates` of it."""
    return data if isinstance(data, Replicates) else bootstrap_replicates(data, n_boot=n_boot, seed=seed)


def bootstrap_summary(data: pd.DataFrame, n_boot: int = 2000, seed: int = 0) -> np.ndarray:
    """The replicated accuracies ``p*_bij``, shape (n_boot, n_models, n_tasks); see :func:`bootstrap_replicates`.

    Models and tasks are in order of first appearance in ``data`` (``bootstrap_replicates`` returns the names).
    """
    return bootstrap_replicates(data, n_boot=n_boot, seed=seed).values


def normalization_bounds(
    rep: Replicates, bounds: Mapping[str, tuple[float, float]] | str | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``low_j`` and ``high_j`` of the normalized accuracy ``(p - low_j) / (high_j - low_j)`` (paper, Section 2.4).

    ``bounds=None`` (default): the minimum / maximum of task ``j``'s *observed* accuracies over the models — fixed
    by the data, so normalized point estimates do not depend on the bootstrap seed (the worst model of a task
    scores 0, the best 1; bootstrap replicates may fall outside [0, 1]).
    ``bounds="bootstrap"``: the minimum / maximum over all models and bootstrap replicates (the paper's choice),
    observed accuracies included so that every normalized value lies in [0, 1]. Caveat: these extremes are random,
    so the normalized point estimates move with the seed and the number of replicates (in a reported case
    by up to 0.48 points between seeds 0 and 1, as much as the 83.4% half-width).
    ``bounds={task: (chance, ceiling)}``: the user's values for every task, ``0 <= chance < ceiling <= 1`` (a model
    below chance then scores below 0). Raises :class:`~evalcore.data.reading.EvalDataError` naming the tasks without
    bounds or with invalid ones.
    """
    if bounds is None:
        return rep.observed.min(axis=0), rep.observed.max(axis=0)
    if isinstance(bounds, str):
        if bounds != "bootstrap":
            raise ValueError(f"bounds must be None, 'bootstrap' or {{task: (chance, ceiling)}}, got {bounds!r}.")
        low = np.minimum(rep.values.min(axis=(0, 1)), rep.observed.min(axis=0))
        high = np.maximum(rep.values.max(axis=(0, 1)), rep.observed.max(axis=0))
        return low, high
    return user_bounds(rep.tasks, bounds)


def user_bounds(tasks: Sequence[str], bounds: Mapping[str, tuple[float, float]]) -> tuple[np.ndarray, np.ndarray]:
    """The user's ``(chance, ceiling)`` per task as (low, high) arrays in ``tasks`` order, checked (see
    :func:`normalization_bounds`); no bootstrap is needed for them."""
    given = {str(t): v for t, v in bounds.items()}
    missing = [t for t in tasks if t not in given]
    if missing:
        raise EvalDataError(
            f"No chance/ceiling given for task(s) {listed(missing, fmt=repr)}: give (chance, ceiling) "
            "for every task."
        )
    pairs = np.array([tuple(given[t]) for t in tasks], dtype=float).reshape(len(tasks), 2)
    low, high = pairs[:, 0], pairs[:, 1]
    bad = ~np.isfinite(low) | ~np.isfinite(high) | (low < 0) | (high > 1) | (low >= high)
    if bad.any():
        shown = listed(np.flatnonzero(bad), fmt=lambda j: f"'{tasks[j]}' ({low[j]:g}, {high[j]:g})")
        raise EvalDataError(
            f"Invalid chance/ceiling for task(s) {shown}: expected 0 <= chance < ceiling <= 1 (fractions)."
        )
    return low, high


def _normalize(
    rep: Replicates, bounds: Mapping[str, tuple[float, float]] | str | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Normalized observed and replicated accuracies (paper, Section 2.4, BigBench's (raw - low) / (high - low)).

    ``low_j`` / ``high_j`` from :func:`normalization_bounds`. A task whose low equals its high (e.g. all models
    observed at the same accuracy) cannot separate models: its normalized value is set to 0 rather
    than 0/0.
    """
    low, high = normalization_bounds(rep, bounds)
    span = high - low
    safe = np.where(span > 0, span, 1.0)
    obs = np.where(span > 0, (rep.observed - low) / safe, 0.0)
    vals = np.where(span > 0, (rep.values - low) / safe, 0.0)
    return obs, vals


def _identity_normalized(rep: Replicates) -> np.ndarray:
    """Replicated accuracies normalized by the replicated accuracies of the models that attain the observed bounds.

    With ``lo_j`` / ``hi_j`` the models with the lowest / highest observed accuracy on task ``j`` (first in model
    order on ties), replicate ``b`` gives ``(p*_bij - p*_b,lo_j,j) / (p*_b,hi_j,j - p*_b,lo_j,j)``: the bounds move
    with the accuracies of the models that attain them, the bounds' identities stay fixed. A replicate whose span
    ``p*_b,hi_j,j - p*_b,lo_j,j`` is not positive (the two models swapped places) keeps the observed bounds for
    task ``j``; a task whose observed span is 0 normalizes to 0, as in :func:`_normalize`.
    """
    tasks = np.arange(len(rep.tasks))
    low = rep.values[:, rep.observed.argmin(axis=0), tasks][:, None, :]  # (n_boot, 1, n_tasks)
    high = rep.values[:, rep.observed.argmax(axis=0), tasks][:, None, :]
    span = high - low
    fixed_low, fixed_high = rep.observed.min(axis=0), rep.observed.max(axis=0)
    fixed_span = fixed_high - fixed_low
    moved = (span > 0) & (fixed_span > 0)
    low = np.where(moved, low, fixed_low)
    span = np.where(moved, span, np.where(fixed_span > 0, fixed_span, 1.0))
    return np.where(fixed_span > 0, (rep.values - low) / span, 0.0)


def with_aggregates(values: np.ndarray, categories: Sequence[str]) -> np.ndarray:
    """``values`` (..., n_tasks) followed along the last axis by each category's plain mean of its tasks (categories
    in order of first appearance) and by the overall plain mean of all tasks, as VTAB aggregates."""
    cats = np.asarray(categories)
    parts = [values] + [values[..., cats == c].mean(axis=-1, keepdims=True) for c in dict.fromkeys(categories)]
    return np.concatenate(parts + [values.mean(axis=-1, keepdims=True)], axis=-1)


def long_board(models: Sequence[str], tasks: Sequence[str], categories: Sequence[str],
               **columns: np.ndarray) -> pd.DataFrame:
    """One row per (model, scope, name) for (n_models, S) arrays laid out as :func:`with_aggregates`: columns
    model, scope ("task" / "category" / "overall"), name, then ``columns`` in the order given."""
    cat_names = list(dict.fromkeys(categories))
    names = list(tasks) + cat_names + ["overall"]
    scopes = ["task"] * len(tasks) + ["category"] * len(cat_names) + ["overall"]
    m = len(models)
    frame = {"model": np.repeat(np.asarray(models, dtype=object), len(names)),
             "scope": np.tile(np.asarray(scopes, dtype=object), m),
             "name": np.tile(np.asarray(names, dtype=object), m)}
    return pd.DataFrame({**frame, **{k: np.asarray(v).ravel() for k, v in columns.items()}})


# ---------------------------------------------------------------------------------------------- leaderboard


def leaderboard(
    data: pd.DataFrame,
    level: float = DEFAULT_LEVEL,
    n_boot: int = 2000,
    seed: int = 0,
    normalized: bool = False,
    bounds: Mapping[str, tuple[float, float]] | str | None = None,
) -> pd.DataFrame:
    """Per-task, per-category and overall accuracy with bootstrap percentile intervals (paper, Tables 6 and 9).

    Columns: model, scope ("task" / "category" / "overall"), name (task, category or "overall"), estimate,
    ci_low, ci_high, all fractions in [0, 1]. For model ``i``:

    * task ``j``: ``p_ij``;
    * category ``c``: ``mean_{j in c} p_ij`` (plain mean of the category's tasks);
    * overall: ``mean_j p_ij`` (plain mean of all tasks, as VTAB does, *not* the mean of category means).

    ``estimate`` is the value on the observed data; ``[ci_low, ci_high]`` the ``(1-level)/2`` and
    ``(1+level)/2`` quantiles of the same statistic over the bootstrap replicates (Section 2.1); a summary cell
    with the tool's own standard error ``se`` has the task interval ``estimate +- z se`` instead (module
    docstring; normalized scores keep the percentile interval of its normal replicates). ``level``
    defaults to :data:`~evalcore.stats.intervals.DEFAULT_LEVEL` (95%); the paper's tables use ``level=0.834``
    (Goldstein & Healy, 1995; Section 3.1), passed explicitly. ``normalized=True`` replaces every accuracy by
    ``(p - low_j) / (high_j - low_j)`` before aggregating (Section 2.4), with ``low_j`` / ``high_j`` from
    :func:`normalization_bounds`: by default the observed min / max of task ``j`` over models (deterministic; the
    intervals may extend beyond [0, 1]; see below); ``bounds="bootstrap"`` the paper's min / max over models and
    replicates (point estimates then depend on the seed; values in [0, 1]); ``bounds={task: (chance, ceiling)}`` the
    user's values (scores below chance are then negative and are not clipped).

    Intervals with the observed min / max. The bounds are estimates too: holding them at their observed values
    leaves their noise out, and the truth (the same normalization of the true accuracies) was covered only 0.90-0.92
    of the time at 95% in 4-task simulations. Re-taking the min / max in every replicate does worse (0.74 on the
    summaries below; 0.22-0.31 for the best and worst models; the basic interval 0.83): the
    minimum and maximum of several accuracies are not differentiable where models are close, and the bootstrap of
    such a functional is inconsistent and adds the selection bias a second time (Fang & Santos 2019, "Inference on
    directionally differentiable functions", Review of Economic Studies 86). Where the extreme model of a task is
    clear, the max / min equals that model's accuracy, whose noise the directional derivative carries (ibid.): so a
    second percentile interval is taken from replicates normalized by the replicated accuracies of the observed
    argmin / argmax models (:func:`_identity_normalized`), and the interval shown is the union of the two,
    ``[min(lo_fixed, lo_identity), max(hi_fixed, hi_identity)]``. The union is needed for the extreme models
    themselves: under fixed identities the argmax model of a task scores 1 in every replicate (a point interval,
    wrong whenever another model is truly best there), while the fixed bounds leave it a spread. Measured
    (``benchmarks/coverage/ranks.py``, 95%, overall score, per model, 200 repetitions): summaries of 10 models with
    4 tasks of 100 questions 0.980 (fixed bounds 0.911), the 15-model 4-task simulation 0.968 (0.902), MMLU-Pro
    subsamples (29 models, 14 tasks of 50 questions) 0.958 (0.943); mean widths 0.65 (0.41), 0.53 (0.39) and 0.131
    (0.126): a third to a half wider with 4 tasks, where one noisy extreme moves a bound most, alike with 14.
    """
    _check_level(level)
    _check_bounds(normalized, bounds)
    rep = _replicates(data, n_boot, seed)
    obs, vals = _normalize(rep, bounds) if normalized else (rep.observed, rep.values)
    est = with_aggregates(obs, rep.categories)  # (M, S)
    lo, hi = _interval(with_aggregates(vals, rep.categories), level)  # (M, S)
    if normalized and bounds is None:  # observed min-max: also the bounds' own sampling noise (docstring)
        lo_id, hi_id = _interval(with_aggregates(_identity_normalized(rep), rep.categories), level)
        lo, hi = np.minimum(lo, lo_id), np.maximum(hi, hi_id)
    if rep.se is not None and not normalized:  # the tool's own standard errors (module docstring)
        tasks = len(rep.tasks)
        z = norm.ppf((1 + level) / 2)
        given = ~np.isnan(rep.se)
        lo[:, :tasks] = np.where(given, est[:, :tasks] - z * np.nan_to_num(rep.se), lo[:, :tasks])
        hi[:, :tasks] = np.where(given, est[:, :tasks] + z * np.nan_to_num(rep.se), hi[:, :tasks])
    if not normalized or bounds == "bootstrap":  # accuracies and bootstrap-normalized values live in [0, 1]
        lo, hi = np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)
    return _mark(long_board(rep.models, rep.tasks, rep.categories, estimate=est, ci_low=lo, ci_high=hi), rep)


# ---------------------------------------------------------------------------------------------- ranks


def _rank_desc(x: np.ndarray, axis: int, method: str = "average") -> np.ndarray:
    """Ranks along ``axis`` with 1 = the largest value; ties by scipy's ``method`` (average, min, max, ...)."""
    return rankdata(-x, axis=axis, method=method)


def _geometric_mean(acc: np.ndarray) -> np.ndarray:
    """``exp(mean_j log p_ij)`` over the last axis; 0 when any accuracy is 0 (no NaN, no warning)."""
    with np.errstate(divide="ignore"):
        logs = np.log(acc)
    return np.exp(logs.mean(axis=-1))


def _rank_statistic(acc: np.ndarray, method: str, noise: np.ndarray | None = None) -> np.ndarray:
    """The rank statistic of each model for accuracies ``acc`` of shape (..., n_models, n_tasks).

    * mean / geometric: the model's position (1 = best) by arithmetic / geometric mean over tasks;
    * avg_rank: ``mean_j r_ij``, ``r_ij`` the rank of model ``i`` on task ``j`` (1 = best, ties averaged);
    * avg_rank_noise: as avg_rank after adding ``noise`` (N(0, 1) in percentage points) to the accuracies;
    * avg_rank_bins: as avg_rank after binning accuracies into 1-point buckets ``floor(100 p)``; a shared bucket
      is a tie and tied models all get the worst (largest) rank of the tie, ``r_ij = #{i': bin_i'j >= bin_ij}``
      — this convention reproduces Table 8 (its AvR (bins) column sums to more than n(n+1)/2).
    """
    if method == "mean":
        return _rank_desc(acc.mean(axis=-1), axis=-1)
    if method == "geometric":
        return _rank_desc(_geometric_mean(acc), axis=-1)
    if method == "avg_rank":
        return _rank_desc(acc, axis=-2).mean(axis=-1)
    if method == "avg_rank_noise":
        assert noise is not None
        return _rank_desc(100.0 * acc + noise, axis=-2).mean(axis=-1)
    if method == "avg_rank_bins":
        bins = np.floor(100.0 * acc + 1e-9)
        return _rank_desc(bins, axis=-2, method="max").mean(axis=-1)
    raise ValueError(f"Unknown rank method '{method}': choose one of {', '.join(RANK_METHODS)}.")


def _dispersion_matched(rep: Replicates) -> np.ndarray:
    """The observed accuracies shrunk per task toward the task's mean over models so that their spread matches the
    estimated spread of the true accuracies (Louis 1984's constrained Bayes, "Estimating a population of parameter
    values using Bayes and empirical Bayes methods", JASA 79): ``m_j + lambda_j (p_ij - m_j)`` with ``m_j = mean_i
    p_ij``, ``lambda_j = sqrt(max(0, 1 - sigma2_j / s2_j))``, ``s2_j`` the variance of ``p_ij`` over models (ddof 1)
    and ``sigma2_j`` the mean over models of the bootstrap variance of ``p*_bij`` (the noise in ``s2_j``);
    ``lambda_j = 0`` (all tied) when the task's accuracies do not vary."""
    mean = rep.observed.mean(axis=0)
    spread = rep.observed.var(axis=0, ddof=1)
    noise = rep.values.var(axis=0, ddof=1).mean(axis=0)
    lam = np.sqrt(np.clip(1.0 - noise / np.where(spread > 0, spread, 1.0), 0.0, 1.0))
    return mean + np.where(spread > 0, lam, 0.0) * (rep.observed - mean)


def _scores(acc: np.ndarray, method: str) -> np.ndarray:
    """The score models are ordered by for the position methods: ``mean_j p_ij`` or ``exp(mean_j log p_ij)``."""
    return acc.mean(axis=-1) if method == "mean" else _geometric_mean(acc)


def rank_intervals(
    data: pd.DataFrame | Replicates, method: str = "mean", level: float = 0.95, n_boot: int = 2000, seed: int = 0
) -> pd.DataFrame:
    """Rank aggregation with simultaneous intervals (paper, Section 3.2, Tables 4, 5, 8): all intervals of the table
    hold together with probability ``level``.

    Columns: model, method, rank, ci_low, ci_high, mean_rank. Methods (1 = best everywhere):

    * ``"mean"``: position of model ``i`` when models are sorted by ``mean_j p_ij``;
    * ``"geometric"``: position by the geometric mean ``exp(mean_j log p_ij)``;
    * ``"avg_rank"``: average over tasks of the per-task rank ``r_ij`` (ties averaged);
    * ``"avg_rank_noise"``: ``avg_rank`` after adding ``eps_bij ~ N(0, 1)`` percentage points to every accuracy;
    * ``"avg_rank_bins"``: ``avg_rank`` on 1-point buckets of accuracy (same bucket = tie, worst rank of the tie).

    ``rank`` is the statistic on the observed data (for ``avg_rank_noise`` the mean over ``n_boot`` noise draws
    on the observed data); ``mean_rank`` its mean over replicates, the point value the paper's tables print (e.g.
    Table 8, Semi-Exemplar-10% "By avg" 4.1 while its observed rank is 4). Intervals:

    * positions (``mean``, ``geometric``): from the simultaneous intervals of all ``M (M - 1) / 2`` score
      differences ``s_i - s_k`` (:func:`simultaneous_intervals`, as :func:`pairwise_differences`): ``ci_low = 1 +
      #{k: s_k - s_i > 0 for sure}`` and ``ci_high = M - #{k: s_i - s_k > 0 for sure}``
      (:func:`evalcore.leaderboard.ranks.rank_bounds`), so whenever all difference intervals hold, every true
      position lies in its interval (Mogstad, Romano, Shaikh & Wilhelm 2024, "Inference for ranks with applications
      to mobility across neighbourhoods and academic achievement across countries", Review of Economic Studies 91).
      The geometric mean is 0 whenever one task's accuracy is: a model with few right answers on a task drops to 0
      in the replicates that miss them, its differences are far from normal and the common critical value grows
      (on MMLU-Pro with 50 questions a category, rank intervals 17 positions wide on average against 7.6 by mean);
    * average ranks: simultaneous intervals over the ``M`` models, ``rank_i +- c se_i`` (as
      :func:`simultaneous_intervals`), the truth being the statistic of the true accuracies. ``se_i`` and ``c`` come
      from replicates recentred on dispersion-matched accuracies (:func:`_dispersion_matched`): the replicate's
      deviations ``p*_bij - p_ij`` added to the observed accuracies shrunk toward each task's mean until their spread
      matches the estimated true spread. Noise spreads observed accuracies out, so around the observed values the
      models look better separated than they are, and the plain bootstrap's ranks move too little (its standard
      deviation down to about 0.75x the rank's sampling one for middle models in the 15-model simulation); a rank
      is a sum of indicators, not differentiable at ties, where the plain bootstrap fails (Fang & Santos 2019,
      "Inference on directionally differentiable functions", Review of Economic Studies 86). Bias correction makes
      it worse (0.74-0.84: it moves the middle models, whose rank is nearly unbiased). Measured joint coverage at
      95% (``benchmarks/coverage/ranks.py``, seed 0; plain bootstrap in brackets): the 15-model simulation, 100
      repetitions, avg_rank 0.98 (0.89), with noise 0.98 (0.91), bins 0.96 (0.88), intervals 1.25-1.28x as wide; the
      10-model summaries, 200 repetitions, 0.985-0.99 (0.925-0.95), 1.20-1.24x; MMLU-Pro subsamples (29 models,
      50 repetitions) 1.00 (1.00), 1.15-1.18x.

    The paper's Table 8 prints per-model percentile intervals of the replicated rank instead; those hold one model
    at a time and, for positions, badly even so (measured in ``benchmarks/coverage/ranks.py``). The noise comes from
    a random stream independent of the bootstrap's, both derived from ``seed``.
    """
    _check_level(level)
    if method not in RANK_METHODS:
        raise ValueError(f"Unknown rank method '{method}': choose one of {', '.join(RANK_METHODS)}.")
    rep = _replicates(data, n_boot, seed)
    if method == "avg_rank_noise":
        noise_rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
        noise_obs = noise_rng.standard_normal(rep.values.shape)
        noise_boot = noise_rng.standard_normal(rep.values.shape)
        point = _rank_statistic(rep.observed[None], method, noise_obs).mean(axis=0)
        stats = _rank_statistic(rep.values, method, noise_boot)
    else:
        point = _rank_statistic(rep.observed, method)
        stats = _rank_statistic(rep.values, method)
    if method in ("mean", "geometric"):
        ia, ib = np.triu_indices(len(rep.models), k=1)
        score_obs, score_rep = _scores(rep.observed, method), _scores(rep.values, method)
        lo_d, hi_d, _ = simultaneous_intervals(score_obs[ia] - score_obs[ib], score_rep[:, ia] - score_rep[:, ib],
                                               level)
        lo, hi = rank_bounds(len(rep.models), ia, ib, lo_d, hi_d)
    else:  # the critical value and se of the replicates around the dispersion-matched accuracies (docstring)
        center = _dispersion_matched(rep)
        shifted = center + (rep.values - rep.observed)
        if method == "avg_rank_noise":
            center_point = _rank_statistic(center[None], method, noise_obs).mean(axis=0)
            center_stats = _rank_statistic(shifted, method, noise_boot)
        else:
            center_point, center_stats = _rank_statistic(center, method), _rank_statistic(shifted, method)
        lo_c, hi_c, _ = simultaneous_intervals(center_point, center_stats, level)
        lo, hi = point - (center_point - lo_c), point + (hi_c - center_point)
    return _mark(pd.DataFrame({
        "model": list(rep.models),
        "method": method,
        "rank": np.asarray(point, dtype=float),
        "ci_low": np.asarray(lo, dtype=float),
        "ci_high": np.asarray(hi, dtype=float),
        "mean_rank": stats.mean(axis=0),
    }), rep)


# ---------------------------------------------------------------------------------------------- differences


def simultaneous_intervals(estimate: np.ndarray, replicates: np.ndarray, level: float
                           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Studentized max-|t| bootstrap intervals ``estimate_k +- c se_k`` that all hold together with probability
    ``level`` (module docstring; Romano & Wolf 2005, Hothorn, Bretz & Westfall 2008).

    ``estimate`` (K,) observed statistics, ``replicates`` (n_boot, K) their bootstrap replicates. ``se_k`` is the
    standard deviation of replicate column ``k`` (ddof 1); ``c`` the ``level``-quantile (linear interpolation) of
    ``t*_b = max_k |replicates_bk - estimate_k| / se_k`` over the statistics with ``se_k > 0``. A statistic the
    bootstrap never moves (``se_k = 0``, e.g. two models that answer every example alike; an ``se_k`` within
    :data:`_FLAT` of the statistic's size is float rounding and counts as 0) gets the point interval;
    if none moves, ``c = 0``. Returns (low, high, se).
    """
    estimate = np.asarray(estimate, dtype=float)
    replicates = np.asarray(replicates, dtype=float)
    se = replicates.std(axis=0, ddof=1)
    se[se <= _FLAT * np.maximum(1.0, np.abs(estimate))] = 0.0  # rounding noise of a constant statistic
    live = se > 0
    if live.any():
        t = np.abs(replicates[:, live] - estimate[live]) / se[live]
        c = float(np.quantile(t.max(axis=1), level))
    else:
        c = 0.0
    return estimate - c * se, estimate + c * se, se


def pairwise_differences(
    data: pd.DataFrame | Replicates,
    models: Sequence[str] | None = None,
    level: float = 0.95,
    n_boot: int = 2000,
    seed: int = 0,
) -> pd.DataFrame:
    """Differences of overall means with simultaneous bootstrap intervals: all intervals hold together with
    probability ``level`` (paper, Section 2.1, Table 3, with the max-|t| critical value in place of Bonferroni).

    For each pair (a, b) of ``models`` (a before b in the given order; ``None`` = all models sorted by observed
    overall mean, best first) ``diff = mean_j p_aj - mean_j p_bj`` on the observed data; ``se`` the bootstrap
    standard deviation of ``d*_b = mean_j p*_baj - mean_j p*_bbj``; the interval ``diff +- c se`` with ``c`` the
    ``level``-quantile over replicates of ``max over the K pairs shown |d*_b - diff| / se``
    (:func:`simultaneous_intervals`). With ``K = 1`` it is the studentized interval of one difference. A pair
    whose interval excludes 0 is distinguishable; the rank intervals of :func:`rank_intervals` (``mean``) follow
    from the same intervals over all pairs. Columns: model_a, model_b, diff, ci_low, ci_high, se.
    """
    _check_level(level)
    rep = _replicates(data, n_boot, seed)
    overall_obs = rep.observed.mean(axis=1)
    overall_rep = rep.values.mean(axis=2)
    if models is None:
        order = list(np.argsort(-overall_obs, kind="stable"))
    else:
        models = [str(m) for m in models]
        unknown = [m for m in models if m not in rep.models]
        if unknown:
            raise EvalDataError(
                f"Unknown model(s) {', '.join(repr(m) for m in unknown)}: the data has "
                f"{listed(rep.models, fmt=repr)}."
            )
        if len(set(models)) != len(models) or len(models) < 2:
            raise ValueError("models must name at least two distinct models.")
        order = [rep.models.index(m) for m in models]
    pairs = [(a, b) for x, a in enumerate(order) for b in order[x + 1:]]
    ia = np.array([a for a, _ in pairs])
    ib = np.array([b for _, b in pairs])
    diff = overall_obs[ia] - overall_obs[ib]
    lo, hi, se = simultaneous_intervals(diff, overall_rep[:, ia] - overall_rep[:, ib], level)
    return _mark(pd.DataFrame({
        "model_a": [rep.models[a] for a in ia],
        "model_b": [rep.models[b] for b in ib],
        "diff": diff,
        "ci_low": lo,
        "ci_high": hi,
        "se": se,
    }), rep)
