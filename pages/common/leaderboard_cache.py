"""Cached leaderboard computations, keyed by data digest + selection + parameters.

Normalization and priors travel as hashable tuples: ``norm`` is ``"raw"``, ``"observed"`` (observed min–max per
task, deterministic), ``"bootstrap"`` (the bootstrap min–max of Longjohn et al. 2024, moves with the seed) or
``"chance"`` and ``bounds`` a tuple of (task, chance, ceiling) rows (only for ``"chance"``); ``prior`` is ``()`` for
Longjohn et al.'s Exponential(1/10000) priors or a tuple of (model, alpha_mean, alpha_sd, beta_mean, beta_sd) rows
for truncated normal priors.
"""

from __future__ import annotations

import pandas as pd

from evalcore.leaderboard import bootstrap as aggregate
from evalcore.leaderboard import bayes
from evalcore.stats import overall
from evalcore.stats.summaries import mean_table, summary_from_log
from evalcore.leaderboard.weighting import ternary_winner_map, weighted_scores

from .store import cached

RANK_METHODS = {"mean": "mean accuracy", "geometric": "geometric mean", "avg_rank": "average per-task rank",
                "avg_rank_noise": "average rank, N(0,1)-point noise", "avg_rank_bins": "average rank, 1-point bins"}
NORMALIZATIONS = {"raw": "raw accuracy", "observed": "normalized: observed min–max of the models per task",
                  "bootstrap": "normalized: bootstrap min–max per task (Longjohn et al. 2024; moves with the seed)",
                  "chance": "normalized: your chance and ceiling per task"}


def _norm_args(norm: str, bounds: tuple) -> dict:
    """``normalized`` / ``bounds`` arguments of :func:`evalcore.leaderboard.bootstrap.leaderboard` for a ``norm`` choice."""
    chosen = {"chance": {t: (lo, hi) for t, lo, hi in bounds}, "bootstrap": "bootstrap"}
    return {"normalized": norm != "raw", "bounds": chosen.get(norm)}


def prior_spec(prior: tuple) -> dict | None:
    """The ``prior`` argument of :func:`evalcore.leaderboard.bayes.fit` for a tuple of per-model truncated-normal rows."""
    if not prior:
        return None
    return {"alpha": {m: (am, asd) for m, am, asd, _, _ in prior},
            "beta": {m: (bm, bsd) for m, _, _, bm, bsd in prior}}


@cached("Bootstrapping the leaderboard...")
def replicates(key: tuple, n_boot: int, seed: int, _data: pd.DataFrame) -> aggregate.Replicates:
    """The bootstrap replicates the board, the rank intervals and the pairwise differences share (one bootstrap,
    so a pair the differences separate is the pair the rank intervals separate)."""
    return aggregate.bootstrap_replicates(_data, n_boot=n_boot, seed=seed)


@cached("Scoring the model per task...")
def per_task(key: tuple, level: float, summary: bool, _rows) -> pd.DataFrame:
    """A one-model log's accuracy per task with its ``level`` Wilson interval (the bootstrap leaderboard compares
    at least two models): task, n, estimate, ci_low, ci_high, best first."""
    alpha = 1 - level
    if summary:  # a summary's tasks as the "models" of a one-task overall table: each gets its Wilson interval
        tasks = overall.overall_table(_rows.assign(model=_rows["task"].astype(str)), "correct", alpha, summary=True)
        tasks = tasks.rename(columns={"model": "task"})
    else:
        tasks = mean_table(_rows, ["model", "task"], "correct", alpha)
        tasks = tasks[tasks["n"] > 0]
    tasks = tasks[["task", "n", "estimate", "ci_low", "ci_high"]].assign(task=lambda t: t["task"].astype(str))
    return tasks.sort_values(["estimate", "task"], ascending=[False, True], ignore_index=True)


@cached("Summarising the bootstrap...")
def board(key: tuple, level: float, n_boot: int, seed: int, norm: str, bounds: tuple,
          _data: pd.DataFrame) -> pd.DataFrame:
    return aggregate.leaderboard(replicates(key, n_boot, seed, _data), level=level, **_norm_args(norm, bounds))


@cached("Ranking the bootstrap replicates...")
def ranks(key: tuple, method: str, level: float, n_boot: int, seed: int, _data: pd.DataFrame) -> pd.DataFrame:
    return aggregate.rank_intervals(replicates(key, n_boot, seed, _data), method=method, level=level, seed=seed)


@cached("Differencing the bootstrap replicates...")
def differences(key: tuple, level: float, n_boot: int, seed: int, _data: pd.DataFrame) -> pd.DataFrame:
    """All pairs of models with their simultaneous intervals at ``level`` (the page shows those among the top
    models)."""
    return aggregate.pairwise_differences(replicates(key, n_boot, seed, _data), level=level)


@cached("Summarising the log per (model, task)...")
def summary(key: tuple, _rows) -> pd.DataFrame:
    """Per-task counts of a per-example log (for weighted scores, the Bayesian model and the weighting map)."""
    return summary_from_log(_rows)


@cached("Weighting the categories...")
def weighted(key: tuple, weights: tuple[tuple[str, float], ...], level: float, n_boot: int, seed: int, norm: str,
             bounds: tuple, _summary: pd.DataFrame) -> pd.DataFrame:
    return weighted_scores(_summary, dict(weights), level=level, n_boot=n_boot, seed=seed, **_norm_args(norm, bounds))


@cached("Sampling the Bayesian hierarchical model (Gibbs, 4 chains)...")
def posterior(key: tuple, draws: int, seed: int, prior: tuple, _summary: pd.DataFrame) -> bayes.GibbsDraws:
    return bayes.fit(_summary, draws=draws, chains=4, seed=seed, prior=prior_spec(prior))


@cached("Summarising the posterior...")
def bayes_board(key: tuple, draws: int, seed: int, prior: tuple, level: float,
                _summary: pd.DataFrame) -> pd.DataFrame:
    """The Bayesian leaderboard (with R-hat and ESS)."""
    return bayes.bayes_leaderboard(posterior(key, draws, seed, prior, _summary), level=level)


@cached("Ranking the posterior draws...")
def rank_probabilities(key: tuple, draws: int, seed: int, prior: tuple, weights: tuple[tuple[str, float], ...],
                       _summary: pd.DataFrame) -> pd.DataFrame:
    return bayes.posterior_rank_probabilities(posterior(key, draws, seed, prior, _summary), weights=dict(weights))


@cached("Computing the task-weighting map...")
def weighting_map(key: tuple, categories: tuple[str, ...], z: float, se_source: str, n_boot: int, seed: int,
                  norm: str, bounds: tuple, draws: int, prior: tuple, _summary: pd.DataFrame) -> pd.DataFrame:
    fitted = posterior(key, draws, seed, prior, _summary) if se_source == "bayes" else None
    return ternary_winner_map(_summary, categories=list(categories), step=0.01, z=z, se_source=se_source,
                              n_boot=n_boot, seed=seed, posterior=fitted, **_norm_args(norm, bounds))


@cached("Drawing the publication version...")
def static_map(key: tuple, fmt: str, _map: pd.DataFrame) -> bytes:
    """``key`` must identify ``_map`` (the weighting map's own cache key). python-ternary and matplotlib are imported
    here, on request: they cost a cold Leaderboard open about a second."""
    from evalcore.leaderboard import publication

    return publication.figure_bytes(publication.ternary_static(_map), fmt)
