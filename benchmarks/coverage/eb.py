"""Coverage of the robust empirical Bayes intervals of :func:`evalcore.subgroups.estimates.empirical_bayes`.

The intervals claim *average* coverage: over the (model, group) units of one fit, the share of intervals holding
their unit's true value is ``1 - alpha`` on average. So each repetition draws a fresh sample, fits EB once, and
records the share of its units whose interval holds the truth; a row's coverage is the mean of those shares over
the repetitions, its ``mc_se`` their standard deviation over ``sqrt(R)`` (the binomial ``sqrt(c (1 - c) / R)`` of
:func:`coverage_row` would treat each share as one hit or miss, a bound several times too wide). Quintile rows: the
units whose truth lies in one fifth of the truths (cut over all units of the setting), their share per repetition.

* Simulation with known truth (:func:`simulation`): 8 models x 40 groups (5 tasks), each group a population of 400
  questions of its own difficulty, ``P(correct) = sigmoid(skill + task ease + group ease + model-by-group effect
  - question difficulty)``; the truth of a unit is its mean probability over the group's 400 questions; each
  repetition draws ``k`` questions per group, the same for every model, and their outcomes.
* MMLU-Pro held out (:func:`mmlu_pro`): 29 models; each repetition draws ``k`` questions per category (or per
  ``src``), the same for every model, and keeps their labels; the truth of a unit is its accuracy on all the
  group's questions (the population the sample comes from). Groups with fewer than ``4 k`` questions are left
  out, as in the holdout study (:func:`evalcore.subgroups.holdout.sample_sizes`), so the sample is at most a
  quarter of the pool; the intervals, made for the population value, are then slightly conservative for the
  pool's mean (the holdout study's finite-pool correction, :func:`evalcore.subgroups.estimates.finite_population`,
  is not applied: a user's interval is the uncorrected one).
* MMLU-Pro by category, questions drawn per model (issue 41): as above, but each repetition draws ``k`` questions
  per (model, category) independently for each model (a subsampled run, ``--limit``, failed samples left out), so
  the group-difficulty feature is on.
* model-vs-human (:func:`model_vs_human`): the 9 models, 75 ``dataset:condition`` groups, ``k = 10`` trials per
  (model, group) drawn independently for each model (examples are images, so a few are shared between models);
  truth: the unit's accuracy over all its trials. The group-difficulty feature is on here by default.

The setting text carries the EB/DT mean squared error ratio (over units and repetitions, against the same truth).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from benchmarks.coverage import SHARED_DATA, CoverageRow, coverage_row
from evalcore.subgroups.estimates import (_fit, _intervals, _unit_covariates, _unit_stats, group_difficulty_default,
                                          group_difficulty_feature)

METHOD = "empirical_bayes (robust EBCI)"
LEVELS = (0.90, 0.95)
QUESTIONS = (5, 10, 30)
SIM_QUESTIONS = (5, 10)
MVH_TRIALS = 10
DEFAULT_REPS = 40
SIM_MODELS, SIM_GROUPS, SIM_TASKS, SIM_POOL = 8, 40, 5, 400

# Measured with the code before issue 25 (commit 5f9ab1b: the unit's own Jeffreys variance, A-hat without the
# clustered standard error, the group-difficulty feature off whenever models share an example), by this module's
# design with 40 repetitions, seed 0; key (setting, questions, level) -> average coverage. EB/DT MSE then:
# category 0.48 / 0.61 / 0.79 (5 / 10 / 30 questions), src 0.47 / 0.62 / 0.88, model-vs-human 1.02, simulation
# 0.41 / 0.54 (5 / 10 questions).
BEFORE = {
    ("simulation", 5, 0.90): 0.890, ("simulation", 5, 0.95): 0.947,
    ("simulation", 10, 0.90): 0.875, ("simulation", 10, 0.95): 0.929,
    ("category", 5, 0.90): 0.854, ("category", 5, 0.95): 0.920,
    ("category", 10, 0.90): 0.828, ("category", 10, 0.95): 0.906,
    ("category", 30, 0.90): 0.877, ("category", 30, 0.95): 0.933,
    ("src", 5, 0.90): 0.884, ("src", 5, 0.95): 0.939,
    ("src", 10, 0.90): 0.876, ("src", 10, 0.95): 0.929,
    ("src", 30, 0.90): 0.898, ("src", 30, 0.95): 0.946,
    ("mvh", 10, 0.90): 0.936, ("mvh", 10, 0.95): 0.964,
    # before issue 41 (commit f4b836e: the synthetic regression fitted on the units' own leave-out difficulty;
    # EB/DT MSE 0.80 / 0.80 / 0.83, after 0.31 / 0.40 / 0.63 at 5 / 10 / 30 questions)
    ("category per model", 5, 0.90): 0.853, ("category per model", 5, 0.95): 0.910,
    ("category per model", 10, 0.90): 0.881, ("category per model", 10, 0.95): 0.933,
    ("category per model", 30, 0.90): 0.905, ("category per model", 30, 0.95): 0.953,
}
# The same, per truth quintile (lowest to highest accuracy) at 90 %.
BEFORE_QUINTILES = {
    ("category", 5): (0.909, 0.855, 0.867, 0.852, 0.784),
    ("category", 10): (0.809, 0.873, 0.880, 0.845, 0.735),
    ("category", 30): (0.861, 0.883, 0.921, 0.893, 0.827),
    ("src", 5): (0.947, 0.882, 0.872, 0.879, 0.840),
    ("src", 10): (0.867, 0.892, 0.897, 0.891, 0.832),
    ("src", 30): (0.892, 0.903, 0.914, 0.907, 0.875),
}


def simulation(seed: int = 0) -> pd.DataFrame:
    """The simulated population (module doc): one row per (model, question) with its group, task and the
    probability ``p`` of a correct answer."""
    rng = np.random.default_rng(seed)
    skill = np.linspace(-1.0, 1.5, SIM_MODELS)
    task_ease = rng.normal(0.0, 0.5, SIM_TASKS)
    group_ease = rng.normal(0.0, 0.7, SIM_GROUPS)
    interaction = rng.normal(0.0, 0.3, (SIM_MODELS, SIM_GROUPS))
    group = np.repeat(np.arange(SIM_GROUPS), SIM_POOL)
    difficulty = rng.normal(0.0, 1.0, group.size)
    task = group % SIM_TASKS
    frames = []
    for m in range(SIM_MODELS):
        logit = skill[m] + task_ease[task] + group_ease[group] + interaction[m, group] - difficulty
        frames.append(pd.DataFrame({"model": f"m{m}", "example_id": np.arange(group.size), "task": task.astype(str),
                                    "group": group.astype(str), "p": 1.0 / (1.0 + np.exp(-logit))}))
    return pd.concat(frames, ignore_index=True)


def measure(log: pd.DataFrame, truth: pd.Series, k: int, reps: int, seed: int, shared: bool,
            regressor: str = "xgboost", numeric: tuple[str, ...] = (), simulated: bool = False) -> dict:
    """Per level: per-repetition coverage shares (``"hits"``), mean widths (``"widths"``), and per unit and
    repetition (truth, held, width) for the quintiles (``"units"``); with ``"mse_ratio"`` EB/DT over all
    repetitions.

    ``log``: one row per (model, example) with model, example_id, task, group and ``correct`` (or ``p``, the
    probability to draw the outcome from, when ``simulated``); ``truth``: the unit's true accuracy, indexed by
    (model, group). ``shared``: the same ``k`` examples of a group for every model, else ``k`` per unit drawn
    independently. Groups with fewer than ``4 k`` examples are left out."""
    sizes = log.drop_duplicates(["group", "example_id"]).groupby("group").size()
    log = log[log["group"].isin(sizes.index[sizes >= 4 * k])].reset_index(drop=True)
    covariates = _unit_covariates(log, list(numeric))
    rng = np.random.default_rng(seed)
    out = {level: {"hits": [], "widths": [], "units": []} for level in LEVELS}
    err_eb = err_dt = 0.0
    for _ in range(reps):
        if shared:
            pool = log.drop_duplicates(["group", "example_id"])[["group", "example_id"]]
            chosen = pool.iloc[rng.permutation(len(pool))].groupby("group").head(k)
            labeled = log.merge(chosen, on=["group", "example_id"])
        else:
            labeled = log.iloc[rng.permutation(len(log))].groupby(["model", "group"]).head(k)
        if simulated:
            labeled = labeled.assign(correct=(rng.random(len(labeled)) < labeled["p"]).astype(float))
        units = _unit_stats(labeled, "correct", 0.05)
        difficulty = group_difficulty_feature(labeled)
        used, _ = group_difficulty_default(difficulty)
        fit = _fit(units, covariates, "correct", regressor, int(rng.integers(2**31 - 1)), difficulty if used else None,
                   shared)
        theta = truth.reindex(pd.MultiIndex.from_frame(fit[["model", "group"]])).to_numpy()
        for level in LEVELS:
            table = _intervals(fit, "correct", 1 - level)
            held = ((table["eb_low"] <= theta) & (theta <= table["eb_high"])).to_numpy()
            out[level]["hits"].append(held.mean())
            out[level]["widths"].append(float((table["eb_high"] - table["eb_low"]).mean()))
            out[level]["units"].append(pd.DataFrame({"truth": theta, "held": held,
                                                     "width": (table["eb_high"] - table["eb_low"]).to_numpy()}))
        err_eb += float(np.sum((table["eb"].to_numpy() - theta) ** 2))
        err_dt += float(np.sum((fit["direct"].to_numpy() - theta) ** 2))
    for level in LEVELS:
        out[level]["units"] = pd.concat(out[level]["units"], keys=range(reps), names=["rep", None])
    out["mse_ratio"] = err_eb / err_dt
    return out


def share_row(setting: str, nominal: float, shares, widths, before: float | None) -> CoverageRow:
    """:func:`coverage_row` of per-repetition coverage ``shares``, with the Monte Carlo standard error of their
    mean, ``std(shares) / sqrt(R)`` (module doc)."""
    shares = np.asarray(shares, dtype=float)
    row = coverage_row(METHOD, setting, nominal, shares, widths, before)
    return replace(row, mc_se=float(shares.std(ddof=1) / np.sqrt(shares.size)) if shares.size > 1 else np.nan)


def _rows(name: str, key: str, k: int, result: dict, quintiles: bool) -> list[CoverageRow]:
    """The rows of one ``measure`` result: one per level, then (``quintiles``) five at 90 %."""
    setting = f"{name}, {k} per unit; EB/DT MSE {result['mse_ratio']:.2f}"
    rows = [share_row(setting, level, result[level]["hits"], result[level]["widths"], BEFORE.get((key, k, level)))
            for level in LEVELS]
    if quintiles:
        units = result[LEVELS[0]]["units"]
        quintile = pd.qcut(units["truth"], 5, labels=False)
        shares = units.groupby([quintile, units.index.get_level_values("rep")])["held"].mean()
        before = BEFORE_QUINTILES.get((key, k), (None,) * 5)
        for q in range(5):
            part = units[quintile == q]
            rows.append(share_row(f"{name}, {k} per unit, accuracy quintile {q + 1} [{part['truth'].min():.2f}, "
                                  f"{part['truth'].max():.2f}]", LEVELS[0], shares.loc[q].to_numpy(), part["width"],
                                  before[q]))
    return rows


def mmlu_pro(by: str) -> tuple[pd.DataFrame, pd.Series] | None:
    """MMLU-Pro with ``group`` = ``by`` (``"category"`` or ``"src"``), task = category, and the truth per unit;
    None without the shared data."""
    path = SHARED_DATA / "mmlu_pro_per_question.csv.gz"
    if not path.exists():
        return None
    raw = pd.read_csv(path, usecols=["model", "question_id", "category", "src", "n_options", "correct"])
    log = pd.DataFrame({"model": raw["model"], "example_id": raw["question_id"], "task": raw["category"],
                        "group": raw[by], "n_options": raw["n_options"], "correct": raw["correct"].astype(float)})
    return log, log.groupby(["model", "group"])["correct"].mean()


def model_vs_human() -> tuple[pd.DataFrame, pd.Series] | None:
    """The model trials of model-vs-human (group ``dataset:condition``, task ``dataset``, example = image) and
    the truth per unit; None without the shared data."""
    path = SHARED_DATA / "model_vs_human_trials.csv.gz"
    if not path.exists():
        return None
    raw = pd.read_csv(path, usecols=["dataset", "subject", "is_human", "imagename", "condition", "correct"],
                      dtype={"condition": str})
    raw = raw[raw["is_human"] == 0]
    log = pd.DataFrame({"model": raw["subject"], "example_id": raw["imagename"], "task": raw["dataset"],
                        "group": raw["dataset"] + ":" + raw["condition"], "correct": raw["correct"].astype(float)})
    return log.reset_index(drop=True), log.groupby(["model", "group"])["correct"].mean()


def run(reps: int | None, seed: int) -> list[CoverageRow]:
    """Simulation (5 and 10 questions per unit), MMLU-Pro by category and by src at 5, 10 and 30 questions (with
    quintile rows), the same by category with questions drawn per model, and model-vs-human (module doc)."""
    reps = reps or DEFAULT_REPS
    population = simulation(seed)
    truth = population.groupby(["model", "group"])["p"].mean()
    rows = []
    for k in SIM_QUESTIONS:
        rows += _rows("simulation, known truth, 8 models x 40 groups, same questions for all models", "simulation", k,
                      measure(population, truth, k, reps, seed, shared=True, simulated=True), quintiles=False)
    for by in ("category", "src"):
        data = mmlu_pro(by)
        if data is None:
            continue
        for k in QUESTIONS:
            result = measure(*data, k, reps, seed, shared=True, numeric=("n_options",))
            rows += _rows(f"MMLU-Pro held out, 29 models, by {by}, same questions for all models", by, k, result,
                          quintiles=True)
    data = mmlu_pro("category")
    if data is not None:
        for k in QUESTIONS:
            result = measure(*data, k, reps, seed, shared=False, numeric=("n_options",))
            rows += _rows("MMLU-Pro held out, 29 models, by category, questions drawn per model", "category per model",
                          k, result, quintiles=True)
    data = model_vs_human()
    if data is not None:
        rows += _rows("model-vs-human held out, 9 models x 75 groups, trials drawn per model", "mvh", MVH_TRIALS,
                      measure(*data, MVH_TRIALS, reps, seed, shared=False), quintiles=False)
    return rows
