"""Coverage of the overall number's interval (:func:`evalcore.stats.overall.overall_table`, ``over="tasks"``).

The overall number of model ``i`` is the mean over its ``T`` tasks, ``(1 / T) sum_j p_ij``; its interval is the
normal one, ``estimate -/+ z se`` with ``se = sqrt(sum_j se_ij^2) / T`` and ``se_ij`` the binomial standard error of
task ``j`` (``sqrt(p (1 - p) / n)``, Jeffreys-floored at 0 of n and n of n), clipped to [0, 1]. Truth: the mean over
tasks of the true accuracies. Levels 0.95 (the package's) and 0.90.

* Simulation with known truth (:func:`simulated_rows`): each repetition draws ``MODELS`` independent models; model
  ``i`` has true accuracies ``p_ij ~ Uniform(low, high)`` on ``T`` tasks (drawn afresh per repetition) and
  ``n_correct_ij ~ Binomial(n, p_ij)``. Settings (:data:`SETTINGS`): small ``n`` (10, 20, 30 per task) at accuracies
  near 0.9 (0.85-0.95) and near 0.97 (0.95-0.99, many cells all right), few tasks (T = 2 and 3), spread
  accuracies (0.3-0.95), and a large-``n`` check. The intervals of one repetition are independent, so each
  (repetition, model) interval is one hit or miss and the MC SE is the binomial one of :func:`coverage_row`.
  The summary path (``summary=True``) is used for speed; it gives the same table as a per-example log
  (``tests/unit/test_coverage_overall.py`` checks it).
* MMLU-Pro held out (:func:`mmlu_pro_rows`): 29 models, task = category (14). Each repetition draws ``k`` questions
  per category (10, 30, 100), the same for every model, keeps their labels and computes ``overall_table`` of that
  per-example log; truth: the model's mean over categories of its accuracy on all the category's questions (the
  population). The 29 intervals of a repetition share their questions, so a row's coverage is the mean over
  repetitions of the share of models covered and its MC SE the standard deviation of those shares over
  ``sqrt(R)``. With ``k = 100`` the sample is up to a quarter of the smallest categories (history: 381
  questions): the interval, made for an infinite population, is then slightly conservative for the pool's mean.

Measured (seed 0, 100 repetitions; simulated rows 5,000 intervals each), 95% / 90%: 10 tasks x 10 examples at
p 0.85-0.95 0.955 / 0.910, x 20 0.938 / 0.891, x 30 0.944 / 0.892; 10 x 10 at p 0.95-0.99 0.998 / 0.990 (the
Jeffreys floor: many tasks all right); 3 x 10 at p 0.85-0.95 0.938 / 0.894; 2 x 20 at p 0.85-0.95 0.910 / 0.870
(short: few tasks near 1 inherit Wald's undercoverage); 10 x 10 at p 0.30-0.95
0.934 / 0.876; 14 x 30 at p 0.30-0.95 0.947 / 0.895; 5 x 200 0.946 / 0.892. MMLU-Pro, 10 / 30 / 100 questions per
category: 0.939 / 0.957 / 0.956 at 95%, 0.879 / 0.908 / 0.911 at 90% (before a task with one label got a
binomial se, a model with such a task had no interval: 0.928 at 10 questions).
Those were the normal interval alone. Joined with Wilson's interval at the effective n ``p (1 - p) / se^2`` (Wilson
alone: 0.916 at 3 x 10), 95%: 10 x 10 / 20 / 30 at p 0.85-0.95 0.989 / 0.969 / 0.965; 10 x 10 at p 0.95-0.99 0.998;
3 x 10 0.950; 2 x 20 0.969; 10 x 10 at p 0.30-0.95 0.944; 14 x 30 0.950; 5 x 200 0.949; MMLU-Pro 10 / 30 / 100
questions 0.945 / 0.959 / 0.957 (mean widths 1-13% above the normal interval's).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from benchmarks.coverage import SHARED_DATA, CoverageRow, coverage_row
from evalcore.stats.overall import overall_table

METHOD = "overall_table (mean over tasks, normal joined with Wilson at n_eff)"
LEVELS = (0.95, 0.90)
MODELS = 50  # independent models per simulated repetition
#: (tasks T, examples per task n, low, high): p_ij ~ Uniform(low, high)
SETTINGS = (
    (10, 10, 0.85, 0.95),
    (10, 20, 0.85, 0.95),
    (10, 30, 0.85, 0.95),
    (10, 10, 0.95, 0.99),
    (3, 10, 0.85, 0.95),
    (2, 20, 0.85, 0.95),
    (10, 10, 0.30, 0.95),
    (14, 30, 0.30, 0.95),
    (5, 200, 0.30, 0.90),
)
MMLU_QUESTIONS = (10, 30, 100)
MMLU = SHARED_DATA / "mmlu_pro_per_question.csv.gz"
DEFAULT_REPS = 100


def simulated_summary(tasks: int, n: int, low: float, high: float, models: int,
                      rng: np.random.Generator) -> tuple[pd.DataFrame, pd.Series]:
    """A leaderboard summary (model, task, n, n_correct) of ``models`` independent models and their true overall
    accuracy (mean over tasks of ``p_ij``), indexed by model."""
    names = [f"m{i:03d}" for i in range(models)]
    p = rng.uniform(low, high, size=(models, tasks))
    k = rng.binomial(n, p)
    summary = pd.DataFrame({"model": np.repeat(names, tasks), "task": np.tile([f"t{j:02d}" for j in range(tasks)],
                                                                              models),
                            "n": n, "n_correct": k.ravel()})
    return summary, pd.Series(p.mean(axis=1), index=names)


def held(table: pd.DataFrame, truth: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Per model of ``truth``: whether its interval in ``table`` holds the truth, and the interval's width."""
    t = table.set_index("model").reindex(truth.index)
    low, high = t["ci_low"].to_numpy(float), t["ci_high"].to_numpy(float)
    return (low <= truth.to_numpy()) & (truth.to_numpy() <= high), high - low


def simulated_rows(setting: tuple[int, int, float, float], reps: int, seed: int,
                   models: int = MODELS) -> list[CoverageRow]:
    """One row per level of :data:`LEVELS` for ``setting`` = (T, n, low, high); ``reps x models`` intervals."""
    tasks, n, low, high = setting
    rng = np.random.default_rng([seed, tasks, n, int(1000 * low), int(1000 * high)])
    hits = {level: [] for level in LEVELS}
    widths = {level: [] for level in LEVELS}
    for _ in range(reps):
        summary, truth = simulated_summary(tasks, n, low, high, models, rng)
        for level in LEVELS:
            h, w = held(overall_table(summary, alpha=1 - level, summary=True), truth)
            hits[level].extend(h)
            widths[level].extend(w)
    name = f"simulation, known truth, T={tasks} tasks x n={n}, p ~ U({low:.2f}, {high:.2f})"
    return [coverage_row(METHOD, name, level, hits[level], widths[level]) for level in LEVELS]


def mmlu_pro() -> tuple[pd.DataFrame, pd.Series] | None:
    """MMLU-Pro as a per-example log (task = category) and each model's true overall accuracy (mean over categories
    of its accuracy on all the category's questions); None without the shared data."""
    if not MMLU.is_file():
        return None
    raw = pd.read_csv(MMLU, usecols=["model", "question_id", "category", "correct"])
    log = pd.DataFrame({"model": raw["model"], "example_id": raw["question_id"], "task": raw["category"],
                        "correct": raw["correct"].astype(float)})
    truth = log.groupby(["model", "task"])["correct"].mean().groupby(level="model").mean()
    return log, truth


def share_row(setting: str, nominal: float, shares, widths) -> CoverageRow:
    """A row whose coverage is the mean of per-repetition shares, MC SE their sd / sqrt(R) (module doc)."""
    shares = np.asarray(shares, dtype=float)
    mc_se = float(shares.std(ddof=1) / np.sqrt(shares.size)) if shares.size > 1 else float("nan")
    return CoverageRow(METHOD, setting, nominal, float(shares.mean()), mc_se, float(np.mean(widths)),
                       int(shares.size))


def mmlu_pro_rows(log: pd.DataFrame, truth: pd.Series, k: int, reps: int, seed: int) -> list[CoverageRow]:
    """Rows at each level of :data:`LEVELS` for ``k`` questions per category, ``reps`` repetitions."""
    rng = np.random.default_rng([seed, k])
    pool = log.drop_duplicates(["task", "example_id"])[["task", "example_id"]]
    shares = {level: [] for level in LEVELS}
    widths = {level: [] for level in LEVELS}
    for _ in range(reps):
        chosen = pool.iloc[rng.permutation(len(pool))].groupby("task").head(k)
        sample = log.merge(chosen, on=["task", "example_id"])
        for level in LEVELS:
            h, w = held(overall_table(sample, alpha=1 - level), truth)
            shares[level].append(h.mean())
            widths[level].append(w.mean())
    name = f"MMLU-Pro held out, 29 models, {k} questions per category (14), same for all models"
    return [share_row(name, level, shares[level], widths[level]) for level in LEVELS]


def run(reps: int | None, seed: int) -> list[CoverageRow]:
    """The simulated settings, then MMLU-Pro at 10, 30 and 100 questions per category (when the data exist)."""
    reps = reps or DEFAULT_REPS
    rows = []
    for setting in SETTINGS:
        rows += simulated_rows(setting, reps, seed)
    data = mmlu_pro()
    if data is not None:
        for k in MMLU_QUESTIONS:
            rows += mmlu_pro_rows(*data, k, reps, seed)
    return rows
