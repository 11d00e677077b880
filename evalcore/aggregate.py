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
``(1+level)/2`` quantiles of the replicated aggregate; the default ``level=0.834`` follows Goldstein & Healy (1995)
(two non-overlapping 83.4% intervals ~ a difference significant at 0.05; Section 3.1). Point estimates are the
values on the observed data.

All accuracies are fractions in [0, 1].

Public API
----------
``bootstrap_replicates(data, n_boot, seed) -> Replicates`` the replicates with the model / task order;
``bootstrap_summary(data, n_boot, seed) -> ndarray (n_boot, n_models, n_tasks)``;
``leaderboard(data, level, n_boot, seed, normalized) -> DataFrame`` model, scope, name, estimate, ci_low, ci_high;
``rank_intervals(data, method, level, n_boot, seed) -> DataFrame`` model, method, rank, ci_low, ci_high, mean_rank;
``pairwise_differences(data, models, level, n_boot, seed) -> DataFrame`` model_a, model_b, diff, ci_low, ci_high.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from .reading import EvalDataError

__all__ = [
    "Replicates",
    "RANK_METHODS",
    "bootstrap_replicates",
    "bootstrap_summary",
    "leaderboard",
    "rank_intervals",
    "pairwise_differences",
]

#: rank aggregation methods of the paper's Section 3.2 (Tables 4, 5, 8, 10)
RANK_METHODS = ("mean", "geometric", "avg_rank", "avg_rank_noise", "avg_rank_bins")

_REQUIRED = ("model", "task", "category", "n", "n_correct")
_SHOWN = 5


@dataclass(frozen=True)
class Replicates:
    """Bootstrap replicates of a summary leaderboard.

    ``models`` and ``tasks`` in order of first appearance in the data; ``categories[j]`` is the category of
    ``tasks[j]``; ``n`` and ``observed`` are (n_models, n_tasks) arrays of counts and observed accuracies;
    ``values`` is (n_boot, n_models, n_tasks), ``values[b, i, j] = Y*_bij / N_ij``.
    """

    models: tuple[str, ...]
    tasks: tuple[str, ...]
    categories: tuple[str, ...]
    n: np.ndarray
    observed: np.ndarray
    values: np.ndarray

    @property
    def category_names(self) -> tuple[str, ...]:
        """The distinct categories in order of first appearance."""
        return tuple(dict.fromkeys(self.categories))


# ---------------------------------------------------------------------------------------------- input checks


def _matrices(data: pd.DataFrame) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], np.ndarray, np.ndarray]:
    """models, tasks, categories per task, n and n_correct as (n_models, n_tasks) int64 arrays; or EvalDataError."""
    if not isinstance(data, pd.DataFrame):
        raise EvalDataError(f"Expected a summary table (pandas DataFrame), got {type(data).__name__}.")
    if "example_id" in data.columns and "n_correct" not in data.columns:
        raise EvalDataError(
            "This is a per-example log; the bootstrap here needs a summary table (model, task, category, n, "
            "n_correct). The paired per-example bootstrap is not available yet."
        )
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
            rows = (np.flatnonzero(frame[col].isna().to_numpy()) + 1)[:_SHOWN].tolist()
            raise EvalDataError(f"Column '{col}' is empty in row(s) {rows}.")
    n = pd.to_numeric(frame["n"], errors="coerce").to_numpy(dtype=float)
    k = pd.to_numeric(frame["n_correct"], errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(n) | ~np.isfinite(k) | (n < 1) | (k < 0) | (k > n) | (n != np.round(n)) | (k != np.round(k))
    if bad.any():
        rows = (np.flatnonzero(bad) + 1)[:_SHOWN].tolist()
        raise EvalDataError(
            f"Row(s) {rows}: n must be a whole number >= 1 and n_correct a whole number between 0 and n."
        )
    models = tuple(str(m) for m in pd.unique(frame["model"].astype(str)))
    tasks = tuple(str(t) for t in pd.unique(frame["task"].astype(str)))
    key = frame["model"].astype(str) + "\x00" + frame["task"].astype(str)
    dup = key.duplicated(keep=False).to_numpy()
    if dup.any():
        rows = (np.flatnonzero(dup) + 1)[:_SHOWN].tolist()
        first = frame.loc[np.flatnonzero(dup)[0]]
        raise EvalDataError(
            f"Model '{first['model']}' has more than one row for task '{first['task']}' (rows {rows}): "
            "expected one row per model and task."
        )
    cats = frame.groupby(frame["task"].astype(str), sort=False)["category"].agg(lambda s: sorted(set(map(str, s))))
    split = {t: c for t, c in cats.items() if len(c) > 1}
    if split:
        t, c = next(iter(split.items()))
        raise EvalDataError(f"Task '{t}' is listed under several categories ({', '.join(c)}): expected one.")
    if len(models) < 2:
        raise EvalDataError(f"Only one model found ('{models[0]}'): aggregation compares at least two models.")
    mi = pd.Index(models).get_indexer(frame["model"].astype(str))
    ti = pd.Index(tasks).get_indexer(frame["task"].astype(str))
    present = np.zeros((len(models), len(tasks)), dtype=bool)
    present[mi, ti] = True
    if not present.all():
        lines = []
        for i in np.flatnonzero(~present.all(axis=1))[:_SHOWN]:
            gone = [tasks[j] for j in np.flatnonzero(~present[i])]
            shown = ", ".join(f"'{t}'" for t in gone[:_SHOWN]) + (" ..." if len(gone) > _SHOWN else "")
            lines.append(f"model '{models[i]}' lacks task(s) {shown}")
        raise EvalDataError(
            "Every model needs a result on every task (the aggregate is a mean over the same tasks): "
            + "; ".join(lines) + ". Add the missing rows or drop the task(s)."
        )
    n_mat = np.zeros((len(models), len(tasks)), dtype=np.int64)
    k_mat = np.zeros_like(n_mat)
    n_mat[mi, ti] = n.astype(np.int64)
    k_mat[mi, ti] = k.astype(np.int64)
    categories = tuple(cats[t][0] for t in tasks)
    return models, tasks, categories, n_mat, k_mat


def _check_level(level: float) -> None:
    if not 0 < level < 1:
        raise ValueError(f"level must be strictly between 0 and 1, got {level}.")


def _check_n_boot(n_boot: int) -> None:
    if int(n_boot) != n_boot or n_boot < 2:
        raise ValueError(f"n_boot must be a whole number >= 2, got {n_boot}.")


def _interval(samples: np.ndarray, level: float, axis: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval: the (1-level)/2 and (1+level)/2 quantiles (linear interpolation) along ``axis``."""
    lo, hi = np.quantile(samples, [(1 - level) / 2, (1 + level) / 2], axis=axis)
    return lo, hi


# ---------------------------------------------------------------------------------------------- bootstrap


def bootstrap_replicates(data: pd.DataFrame, n_boot: int = 2000, seed: int = 0) -> Replicates:
    """Binomial bootstrap of a summary leaderboard (paper, Section 2.1).

    ``Y*_bij ~ Binomial(N_ij, Y_ij / N_ij)`` independently for every replicate ``b``, model ``i`` and task ``j``
    (exactly the distribution of the proportion correct after resampling the ``N_ij`` instances with
    replacement), drawn in one vectorised call from ``numpy.random.default_rng(seed)``. Accuracies of 0 or 1 give
    degenerate (constant) replicates and ``N = 1`` is allowed; neither produces NaN.
    Raises :class:`~evalcore.reading.EvalDataError` when a model lacks a task, a (model, task) is repeated, a
    task has several categories or a count is invalid.
    """
    _check_n_boot(n_boot)
    models, tasks, categories, n, k = _matrices(data)
    observed = k / n
    rng = np.random.default_rng(seed)
    draws = rng.binomial(n, observed, size=(int(n_boot),) + n.shape)
    values = draws / n
    return Replicates(models, tasks, categories, n, observed, values)


def bootstrap_summary(data: pd.DataFrame, n_boot: int = 2000, seed: int = 0) -> np.ndarray:
    """The replicated accuracies ``p*_bij``, shape (n_boot, n_models, n_tasks); see :func:`bootstrap_replicates`.

    Models and tasks are in order of first appearance in ``data`` (``bootstrap_replicates`` returns the names).
    """
    return bootstrap_replicates(data, n_boot=n_boot, seed=seed).values


def _normalize(rep: Replicates) -> tuple[np.ndarray, np.ndarray]:
    """Normalized observed and replicated accuracies (paper, Section 2.4, BigBench's (raw - low) / (high - low)).

    ``low_j`` / ``high_j`` = minimum / maximum of task ``j``'s accuracy over all models and bootstrap replicates
    (the paper's choice), with the observed accuracies included so that every value lies in [0, 1]. A task whose
    low equals its high (all models and replicates identical, e.g. all 0) cannot separate models: its
    normalized value is set to 0 rather than 0/0.
    """
    low = np.minimum(rep.values.min(axis=(0, 1)), rep.observed.min(axis=0))
    high = np.maximum(rep.values.max(axis=(0, 1)), rep.observed.max(axis=0))
    span = high - low
    safe = np.where(span > 0, span, 1.0)
    obs = np.where(span > 0, (rep.observed - low) / safe, 0.0)
    vals = np.where(span > 0, (rep.values - low) / safe, 0.0)
    return obs, vals


# ---------------------------------------------------------------------------------------------- leaderboard


def leaderboard(
    data: pd.DataFrame, level: float = 0.834, n_boot: int = 2000, seed: int = 0, normalized: bool = False
) -> pd.DataFrame:
    """Per-task, per-category and overall accuracy with bootstrap percentile intervals (paper, Tables 6 and 9).

    Columns: model, scope ("task" / "category" / "overall"), name (task, category or "overall"), estimate,
    ci_low, ci_high, all fractions in [0, 1]. For model ``i``:

    * task ``j``: ``p_ij``;
    * category ``c``: ``mean_{j in c} p_ij`` (plain mean of the category's tasks);
    * overall: ``mean_j p_ij`` (plain mean of all tasks, as VTAB does, *not* the mean of category means).

    ``estimate`` is the value on the observed data; ``[ci_low, ci_high]`` the ``(1-level)/2`` and
    ``(1+level)/2`` quantiles of the same statistic over the bootstrap replicates (Section 2.1). ``level``
    defaults to 83.4% (Goldstein & Healy, 1995; Section 3.1). ``normalized=True`` replaces every accuracy by
    ``(p - low_j) / (high_j - low_j)`` with ``low_j`` / ``high_j`` the bootstrap min / max of task ``j`` over
    models and replicates (Section 2.4), before aggregating.
    """
    _check_level(level)
    rep = bootstrap_replicates(data, n_boot=n_boot, seed=seed)
    obs, vals = _normalize(rep) if normalized else (rep.observed, rep.values)
    cats = np.asarray(rep.categories)
    names: list[str] = list(rep.tasks)
    scopes: list[str] = ["task"] * len(rep.tasks)
    est_cols = [obs]
    rep_cols = [vals]
    for c in rep.category_names:
        mask = cats == c
        est_cols.append(obs[:, mask].mean(axis=1, keepdims=True))
        rep_cols.append(vals[:, :, mask].mean(axis=2, keepdims=True))
        names.append(c)
        scopes.append("category")
    est_cols.append(obs.mean(axis=1, keepdims=True))
    rep_cols.append(vals.mean(axis=2, keepdims=True))
    names.append("overall")
    scopes.append("overall")
    est = np.concatenate(est_cols, axis=1)  # (M, S)
    lo, hi = _interval(np.concatenate(rep_cols, axis=2), level)  # (M, S)
    m, s = est.shape
    return pd.DataFrame({
        "model": np.repeat(np.asarray(rep.models, dtype=object), s),
        "scope": np.tile(np.asarray(scopes, dtype=object), m),
        "name": np.tile(np.asarray(names, dtype=object), m),
        "estimate": est.ravel(),
        "ci_low": np.clip(lo.ravel(), 0.0, 1.0),
        "ci_high": np.clip(hi.ravel(), 0.0, 1.0),
    })


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


def rank_intervals(
    data: pd.DataFrame, method: str = "mean", level: float = 0.95, n_boot: int = 2000, seed: int = 0
) -> pd.DataFrame:
    """Rank aggregation with bootstrap percentile intervals (paper, Section 3.2, Tables 4, 5, 8).

    Columns: model, method, rank, ci_low, ci_high, mean_rank. Methods (1 = best everywhere):

    * ``"mean"``: position of model ``i`` when models are sorted by ``mean_j p_ij``;
    * ``"geometric"``: position by the geometric mean ``exp(mean_j log p_ij)``;
    * ``"avg_rank"``: average over tasks of the per-task rank ``r_ij`` (ties averaged);
    * ``"avg_rank_noise"``: ``avg_rank`` after adding ``eps_bij ~ N(0, 1)`` percentage points to every accuracy;
    * ``"avg_rank_bins"``: ``avg_rank`` on 1-point buckets of accuracy (same bucket = tie, worst rank of the tie).

    ``rank`` is the statistic on the observed data (for ``avg_rank_noise`` the mean over ``n_boot`` noise draws
    on the observed data); ``[ci_low, ci_high]`` the percentile interval of the statistic over the bootstrap
    replicates; ``mean_rank`` its mean over replicates, the point value the paper's tables print (e.g. Table 8,
    Semi-Exemplar-10% "By avg" 4.1 while its observed rank is 4). The noise comes from a random stream independent
    of the bootstrap's, both derived from ``seed``.
    """
    _check_level(level)
    if method not in RANK_METHODS:
        raise ValueError(f"Unknown rank method '{method}': choose one of {', '.join(RANK_METHODS)}.")
    rep = bootstrap_replicates(data, n_boot=n_boot, seed=seed)
    if method == "avg_rank_noise":
        noise_rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
        noise_obs = noise_rng.standard_normal(rep.values.shape)
        noise_boot = noise_rng.standard_normal(rep.values.shape)
        point = _rank_statistic(rep.observed[None], method, noise_obs).mean(axis=0)
        stats = _rank_statistic(rep.values, method, noise_boot)
    else:
        point = _rank_statistic(rep.observed, method)
        stats = _rank_statistic(rep.values, method)
    lo, hi = _interval(stats, level)
    return pd.DataFrame({
        "model": list(rep.models),
        "method": method,
        "rank": np.asarray(point, dtype=float),
        "ci_low": lo,
        "ci_high": hi,
        "mean_rank": stats.mean(axis=0),
    })


# ---------------------------------------------------------------------------------------------- differences


def pairwise_differences(
    data: pd.DataFrame,
    models: Sequence[str] | None = None,
    level: float = 0.95,
    n_boot: int = 2000,
    seed: int = 0,
) -> pd.DataFrame:
    """Differences of overall means with Bonferroni-corrected bootstrap intervals (paper, Section 2.1, Table 3).

    For each pair (a, b) of ``models`` (a before b in the given order; ``None`` = all models sorted by observed
    overall mean, best first) ``diff = mean_j p_aj - mean_j p_bj`` on the observed data and the interval is the
    percentile interval of ``mean_j p*_baj - mean_j p*_bbj`` over replicates at the per-pair level
    ``1 - (1 - level) / K``, ``K`` = number of pairs shown (Bonferroni), so that all ``K`` intervals hold jointly
    with probability >= ``level``. Columns: model_a, model_b, diff, ci_low, ci_high.
    """
    _check_level(level)
    rep = bootstrap_replicates(data, n_boot=n_boot, seed=seed)
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
                f"{', '.join(repr(m) for m in rep.models[:_SHOWN])}{' ...' if len(rep.models) > _SHOWN else ''}."
            )
        if len(set(models)) != len(models) or len(models) < 2:
            raise ValueError("models must name at least two distinct models.")
        order = [rep.models.index(m) for m in models]
    pairs = [(a, b) for x, a in enumerate(order) for b in order[x + 1:]]
    per_pair = 1 - (1 - level) / len(pairs)
    ia = np.array([a for a, _ in pairs])
    ib = np.array([b for _, b in pairs])
    diffs = overall_rep[:, ia] - overall_rep[:, ib]
    lo, hi = _interval(diffs, per_pair)
    return pd.DataFrame({
        "model_a": [rep.models[a] for a in ia],
        "model_b": [rep.models[b] for b in ib],
        "diff": overall_obs[ia] - overall_obs[ib],
        "ci_low": lo,
        "ci_high": hi,
    })
