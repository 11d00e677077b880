"""Joint coverage of the leaderboard's pairwise differences over all pairs of models
(:func:`evalcore.leaderboard.bootstrap.pairwise_differences`, the report's default: every model).

A repetition draws a few questions per task from a population whose per-question correctness of every model is
known, builds the per-example log of the draw (every model answers the same questions: the bootstrap is paired) and
asks whether *all* ``M (M - 1) / 2`` intervals contain the population's difference of overall accuracies (the plain
mean over tasks of each task's accuracy). Three settings:

* ``summaries``: leaderboard summaries (counts per model and task) with known accuracies, the binomial bootstrap
  (:func:`summaries`; fast, the one the unit test runs);

* ``simulation``: :data:`SIM_MODELS` models with known abilities, :data:`SIM_TASKS` tasks of
  :data:`SIM_POPULATION` questions; model ``i`` answers question ``q`` correctly when ``a_i - b_q + e_iq > 0``
  (``b_q`` the question's difficulty, shared by every model, so correctness is correlated across models;
  ``e_iq`` logistic noise), abilities spaced so that neighbouring models differ by about 2 points; truth = the
  population's accuracies (exact, the draw is of :data:`SIM_QUESTIONS` questions per task);
* ``mmlu_pro``: held-out real data, ``../shared/data/mmlu_pro_per_question.csv.gz`` (29 models, 14 categories as
  tasks), the 10,326 questions every model answered (DeepSeek-Coder-V2 lacks most of some categories, so a draw
  could leave it without a task), :data:`MMLU_QUESTIONS` questions per category drawn per repetition, truth = the
  per-model accuracies on all 10,326. Skipped when the file is absent.

``before``: the joint coverage of the Bonferroni percentile intervals this replaced (per-pair level ``1 - (1 -
level) / K``), measured once on the same repetitions (seed 0) and recorded in :data:`BEFORE`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

from benchmarks.coverage import SHARED_DATA, CoverageRow, coverage_row
from evalcore.leaderboard.bootstrap import Replicates, bootstrap_replicates, pairwise_differences

LEVEL = 0.95
#: bootstrap replicates per interval: the report's default (Settings.n_boot)
N_BOOT = 1000
REPS = 200
SIM_MODELS, SIM_TASKS, SIM_POPULATION, SIM_QUESTIONS = 15, 4, 5000, 50
MMLU_QUESTIONS = 50
SUM_MODELS, SUM_TASKS, SUM_N = 10, 4, 100
METHOD = "pairwise_differences (max-|t|)"
MMLU_PRO = SHARED_DATA / "mmlu_pro_per_question.csv.gz"
#: joint coverage of the Bonferroni percentile intervals (seed 0, REPS repetitions, N_BOOT replicates)
BEFORE = {"summaries": 0.92, "simulation": 0.865, "mmlu_pro": 0.765}


@dataclass(frozen=True)
class Population:
    """Per-question correctness ``correct`` (n_models, n_questions; NaN = not answered), the task of each question
    and ``truth`` (n_models, n_tasks), each model's accuracy per task on the whole population."""

    name: str
    models: tuple[str, ...]
    tasks: tuple[str, ...]
    task_of: np.ndarray
    correct: np.ndarray
    truth: np.ndarray

    def draw(self, per_task: int, rng: np.random.Generator) -> pd.DataFrame:
        """The per-example log of ``per_task`` questions drawn without replacement from each task (the same for
        every model; unanswered questions have no row)."""
        picked = np.concatenate([rng.choice(np.flatnonzero(self.task_of == j), per_task, replace=False)
                                 for j in range(len(self.tasks))])
        values = self.correct[:, picked]
        model, col = np.nonzero(~np.isnan(values))
        task = np.asarray(self.tasks, dtype=object)[self.task_of[picked[col]]]
        return pd.DataFrame({"model": np.asarray(self.models, dtype=object)[model], "example_id": picked[col],
                             "task": task, "category": task, "correct": values[model, col]})


def _population(models: tuple[str, ...], tasks: tuple[str, ...], task_of: np.ndarray, correct: np.ndarray,
                name: str) -> Population:
    truth = np.column_stack([np.nanmean(correct[:, task_of == j], axis=1) for j in range(len(tasks))])
    return Population(name, models, tasks, task_of, correct, truth)


def simulation(models: int = SIM_MODELS, tasks: int = SIM_TASKS, population: int = SIM_POPULATION,
               seed: int = 0) -> Population:
    """The simulated population (module docstring): abilities ``a_i`` from 0.8 down by 0.1 per model (about 2
    points of accuracy), difficulties ``b_q ~ N(0, 1)`` plus a task offset ``N(0, 0.5)``."""
    rng = np.random.default_rng([seed, 25])
    a = 0.8 - 0.1 * np.arange(models)
    task_of = np.repeat(np.arange(tasks), population)
    b = rng.normal(0, 1, task_of.size) + rng.normal(0, 0.5, tasks)[task_of]
    correct = (a[:, None] - b[None, :] + rng.logistic(size=(models, task_of.size)) > 0).astype(float)
    return _population(tuple(f"m{i:02d}" for i in range(models)), tuple(f"t{j}" for j in range(tasks)), task_of,
                       correct, "simulation")


@lru_cache(maxsize=1)
def mmlu_pro() -> Population | None:
    """The MMLU-Pro population (module docstring), or None when ``../shared/data`` lacks the file."""
    if not MMLU_PRO.exists():
        return None
    raw = pd.read_csv(MMLU_PRO, usecols=["model", "question_id", "category", "correct"])
    wide = raw.pivot(index="question_id", columns="model", values="correct").dropna()
    category = raw.drop_duplicates("question_id").set_index("question_id")["category"].reindex(wide.index)
    tasks = tuple(sorted(category.unique()))
    task_of = pd.Index(tasks).get_indexer(category)
    return _population(tuple(wide.columns), tasks, task_of, wide.to_numpy(dtype=float).T, "mmlu_pro")


def repetitions(pop: Population, per_task: int, reps: int, seed: int, n_boot: int = N_BOOT):
    """``(replicates, truth)`` for each of ``reps`` draws: the paired bootstrap of the drawn log (``n_boot``
    replicates, seeded per repetition) and the population's per-task accuracies in the replicates' model / task
    order."""
    rng = np.random.default_rng([seed, 7])
    for r in range(reps):
        rep = bootstrap_replicates(pop.draw(per_task, rng), n_boot=n_boot, seed=seed * 100_003 + r)
        rows = pd.Index(pop.models).get_indexer(rep.models)
        cols = pd.Index(pop.tasks).get_indexer(rep.tasks)
        yield rep, pop.truth[np.ix_(rows, cols)]


def all_pairs_hold(rep: Replicates, truth: np.ndarray, level: float = LEVEL) -> tuple[bool, float]:
    """Whether every interval of :func:`pairwise_differences` (all models) contains the true difference of overall
    accuracies, and the intervals' mean width."""
    table = pairwise_differences(rep, level=level)
    overall = dict(zip(rep.models, truth.mean(axis=1)))
    true = table["model_a"].map(overall).to_numpy() - table["model_b"].map(overall).to_numpy()
    held = (table["ci_low"].to_numpy() <= true) & (true <= table["ci_high"].to_numpy())
    return bool(held.all()), float((table["ci_high"] - table["ci_low"]).mean())


def summaries(models: int = SUM_MODELS, tasks: int = SUM_TASKS, n: int = SUM_N, reps: int = REPS, seed: int = 0,
              n_boot: int = N_BOOT):
    """``(replicates, truth)`` for ``reps`` leaderboard summaries with known accuracies ``p_ij = 0.75 - 0.02 i +
    o_j`` (``o_j`` from -0.1 to 0.1 over the tasks) and ``n_correct ~ Binomial(n, p_ij)`` independently (each model
    scored on its own questions: the binomial bootstrap of summaries is the right one)."""
    p = 0.75 - 0.02 * np.arange(models)[:, None] + np.linspace(-0.1, 0.1, tasks)[None, :]
    names, task_names = [f"m{i:02d}" for i in range(models)], [f"t{j}" for j in range(tasks)]
    rng = np.random.default_rng([seed, 11])
    for r in range(reps):
        data = pd.DataFrame({"model": np.repeat(names, tasks), "task": np.tile(task_names, models), "category": "c",
                             "n": n, "n_correct": rng.binomial(n, p).ravel()})
        yield bootstrap_replicates(data, n_boot=n_boot, seed=seed * 100_003 + r), p


def coverage(draws) -> tuple[list[bool], list[float]]:
    """Hits and widths of :func:`all_pairs_hold` over ``(replicates, truth)`` draws."""
    hits, widths = zip(*(all_pairs_hold(rep, truth) for rep, truth in draws))
    return list(hits), list(widths)


def setting(pop: Population, per_task: int, reps: int, seed: int, n_boot: int = N_BOOT) -> CoverageRow:
    """The row of one population."""
    hits, widths = coverage(repetitions(pop, per_task, reps, seed, n_boot))
    m = len(pop.models)
    text = (f"{pop.name}: {m} models, all {m * (m - 1) // 2} pairs jointly, {per_task} questions per task x "
            f"{len(pop.tasks)} tasks, paired bootstrap, {n_boot} replicates")
    return coverage_row(METHOD, text, LEVEL, hits, widths, before=BEFORE[pop.name])


def summary_setting(reps: int, seed: int, models: int = SUM_MODELS, tasks: int = SUM_TASKS, n: int = SUM_N,
                    n_boot: int = N_BOOT, before: float | None = None) -> CoverageRow:
    """The row of the simulated summaries (:func:`summaries`); ``before`` as measured for these settings."""
    hits, widths = coverage(summaries(models, tasks, n, reps, seed, n_boot))
    text = (f"summaries: {models} models 2 points apart, all {models * (models - 1) // 2} pairs jointly, {n} "
            f"questions per task x {tasks} tasks, binomial bootstrap, {n_boot} replicates")
    return coverage_row(METHOD, text, LEVEL, hits, widths, before=before)


def run(reps: int | None, seed: int) -> list[CoverageRow]:
    reps = REPS if reps is None else reps
    rows = [summary_setting(reps, seed, before=BEFORE["summaries"]), setting(simulation(), SIM_QUESTIONS, reps, seed)]
    real = mmlu_pro()
    if real is not None:
        rows.append(setting(real, MMLU_QUESTIONS, reps, seed))
    return rows
