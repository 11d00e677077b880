"""Coverage of the leaderboard's rank intervals (:func:`evalcore.leaderboard.bootstrap.rank_intervals`, all of
:data:`~evalcore.leaderboard.bootstrap.RANK_METHODS`) and of the normalized leaderboard's overall scores
(:func:`evalcore.leaderboard.bootstrap.leaderboard` with ``normalized=True``).

The repetitions are those of :mod:`benchmarks.coverage.pairs` (simulated summaries, the simulated population with
known truth and held-out MMLU-Pro; a draw of a few questions per task, its paired bootstrap). Truths, from the population's per-task
accuracies: each method's statistic computed on them (:func:`truth_ranks`: positions by the mean and the geometric
mean, the average per-task rank, its mean over N(0, 1)-point noise draws, the average rank on 1-point bins), and the
normalized overall score ``mean_j (p_ij - min_k p_kj) / (max_k p_kj - min_k p_kj)``.

Rank intervals claim to hold for all models together: a repetition counts when every model's true rank lies in its
interval (joint). The leaderboard's intervals claim to hold one model at a time: the row's coverage is the share
of (repetition, model) intervals that hold (per model). ``before``: the per-model bootstrap percentile intervals
of the replicated rank that the rank intervals were before (the paper's Table 8), their joint coverage measured
once on the same repetitions (seed 0) and recorded in :data:`BEFORE`; for the normalized leaderboard, the percentile
interval with the bounds held at their observed values (before the union with the fixed-identity bounds, see
:func:`~evalcore.leaderboard.bootstrap.leaderboard`), measured alike.
"""

from __future__ import annotations

import numpy as np

from benchmarks.coverage import CoverageRow, coverage_row
from benchmarks.coverage.pairs import (MMLU_QUESTIONS, N_BOOT, SIM_QUESTIONS, SUM_MODELS, SUM_N, SUM_TASKS, Population,
                                       mmlu_pro, repetitions, simulation, summaries)
from evalcore.leaderboard.bootstrap import RANK_METHODS, Replicates, leaderboard, rank_intervals

LEVEL = 0.95
REPS = 200
NORMALIZED = "leaderboard (normalized, observed min-max)"
#: noise draws that average the truth of ``avg_rank_noise``
TRUTH_DRAWS = 4000
#: joint coverage of the percentile rank intervals (seed 0, N_BOOT replicates; summaries 200 repetitions, the
#: populations 100), per setting and method; "normalized": per-model coverage of the normalized leaderboard's
#: fixed-bound percentile intervals (seed 0, N_BOOT replicates, 200 repetitions)
BEFORE: dict[str, dict[str, float]] = {
    "summaries": {"mean": 0.92, "geometric": 0.94, "avg_rank": 0.005, "avg_rank_noise": 0.01, "avg_rank_bins": 0.005,
                  "normalized": 0.911},
    "simulation": {"mean": 0.82, "geometric": 0.75, "avg_rank": 0.0, "avg_rank_noise": 0.0, "avg_rank_bins": 0.0,
                   "normalized": 0.902},
    "mmlu_pro": {"mean": 0.74, "geometric": 0.71, "avg_rank": 0.0, "avg_rank_noise": 0.0, "avg_rank_bins": 0.0,
                 "normalized": 0.943},
}


def truth_ranks(rep: Replicates, truth: np.ndarray, method: str) -> np.ndarray:
    """Each model's true rank statistic: :func:`rank_intervals`' ``rank`` on data whose observed accuracies are
    the truth (for ``avg_rank_noise``, the mean over :data:`TRUTH_DRAWS` noise draws)."""
    exact = Replicates(rep.models, rep.tasks, rep.categories, rep.n, truth,
                       np.broadcast_to(truth, (TRUTH_DRAWS if method == "avg_rank_noise" else 2,) + truth.shape))
    return rank_intervals(exact, method=method)["rank"].to_numpy()


def normalized_truth(truth: np.ndarray) -> np.ndarray:
    """The true normalized overall score of each model (observed min-max bounds applied to the truth)."""
    low, high = truth.min(axis=0), truth.max(axis=0)
    return ((truth - low) / np.where(high > low, high - low, 1.0)).mean(axis=1)


def held(low, high, truth) -> np.ndarray:
    return (np.asarray(low) <= truth + 1e-9) & (truth - 1e-9 <= np.asarray(high))


def normalized_held(rep: Replicates, truth: np.ndarray) -> tuple[np.ndarray, float]:
    """Whether each model's overall normalized interval (:func:`leaderboard`, ``normalized=True``, observed min-max)
    contains its :func:`normalized_truth`, and the intervals' mean width."""
    board = leaderboard(rep, level=LEVEL, normalized=True)
    overall = board[board["scope"] == "overall"]
    return (held(overall["ci_low"], overall["ci_high"], normalized_truth(truth)),
            float((overall["ci_high"] - overall["ci_low"]).mean()))


def normalized_row(hits, widths, where: str, before: float | None = None) -> CoverageRow:
    """The normalized leaderboard's row (per model) of the :func:`normalized_held` results over repetitions."""
    return coverage_row(NORMALIZED, f"{where}; overall score, per model", LEVEL, np.concatenate(hits), widths,
                        before=before)


def settings(draws, where: str, before: dict | None = None) -> list[CoverageRow]:
    """The rows of ``(replicates, truth)`` draws described by ``where``: one per rank method (joint) and the
    normalized leaderboard (per model)."""
    hits = {m: [] for m in RANK_METHODS}
    widths = {m: [] for m in RANK_METHODS}
    norm_hits, norm_widths = [], []
    truths = None
    for rep, truth in draws:
        if truths is None:  # the truth depends on the population only
            truths = {m: truth_ranks(rep, truth, m) for m in RANK_METHODS}
        for m in RANK_METHODS:
            table = rank_intervals(rep, method=m, level=LEVEL)
            hits[m].append(held(table["ci_low"], table["ci_high"], truths[m]).all())
            widths[m].append((table["ci_high"] - table["ci_low"]).mean())
        hit, width = normalized_held(rep, truth)
        norm_hits.append(hit)
        norm_widths.append(width)
    before = before or {}
    rows = [coverage_row(f"rank_intervals ({m})", f"{where}; all models jointly", LEVEL, hits[m], widths[m],
                         before=before.get(m)) for m in RANK_METHODS]
    rows.append(normalized_row(norm_hits, norm_widths, where, before.get("normalized")))
    return rows


def population_rows(pop: Population, per_task: int, reps: int, seed: int, n_boot: int = N_BOOT) -> list[CoverageRow]:
    where = (f"{pop.name}: {len(pop.models)} models, {per_task} questions per task x {len(pop.tasks)} tasks, paired "
             f"bootstrap, {n_boot} replicates")
    return settings(repetitions(pop, per_task, reps, seed, n_boot), where, BEFORE.get(pop.name))


def summary_rows(reps: int, seed: int, models: int = SUM_MODELS, tasks: int = SUM_TASKS, n: int = SUM_N,
                 n_boot: int = N_BOOT, before: dict | None = None) -> list[CoverageRow]:
    where = (f"summaries: {models} models 2 points apart, {n} questions per task x {tasks} tasks, binomial "
             f"bootstrap, {n_boot} replicates")
    return settings(summaries(models, tasks, n, reps, seed, n_boot), where, before)


def run(reps: int | None, seed: int) -> list[CoverageRow]:
    reps = REPS if reps is None else reps
    rows = summary_rows(reps, seed, before=BEFORE["summaries"]) + population_rows(simulation(), SIM_QUESTIONS, reps, seed)
    real = mmlu_pro()
    if real is not None:
        rows.extend(population_rows(real, MMLU_QUESTIONS, reps, seed))
    return rows
