"""Coverage of ``bayes_leaderboard``'s intervals (:mod:`evalcore.leaderboard.bayes`, the beta-binomial hierarchy).

The sampler treats models independently (each has its own ``a_i, b_i``), so the repetitions of a setting are
stacked as models of one fit (model ``m`` of repetition ``r`` is named ``m#r``): one Gibbs run gives every
repetition's intervals. Fits use 2,000 draws x 4 chains (half burn-in), seed = the module's seed; levels 0.834 (the
default) and 0.95, both interval kinds:

* ``interval="posterior"``: the equal-tailed credible interval of ``theta_ij`` and of its category and overall
  means; the truth is the ``theta`` the counts were drawn from;
* ``interval="predictive"`` (the default): the interval of the accuracy a re-run on a test set of the same size would
  show; the truth is one fresh re-run, ``Y'_ij ~ Binomial(N_ij, theta_ij)``, aggregated as the board aggregates.

Settings:

* hierarchy: data from the model itself, ``theta_ij ~ Beta(a, b)`` drawn anew in every repetition, ``Y_ij ~
  Binomial(N, theta_ij)``, with ``(a, b) = (8, 3)`` (mean 0.73) and ``(2, 2)`` (spread over [0, 1]), 19 tasks in 3
  categories (7, 4, 8 as VTAB), ``N = 100`` per task;
* VTAB-1k: ``theta`` fixed at the 16 models' published accuracies (``../shared/data/vtab_1k.csv``,
  ``n_correct_inferred / n_eval_inferred``) and ``Y_ij ~ Binomial(N_ij, theta_ij)`` with the published test sizes,
  and with ``N = 200`` per task (shrinkage then matters: the truth is fixed, not drawn from the hierarchy).

Each row pools (repetition, model, task / category / overall) intervals of one scope; the MC SE treats them as
independent (the tasks of one model share its ``a_i, b_i``, so it is somewhat optimistic for the task rows).
With seed 0 the VTAB-1k rows at the published test sizes dip to 0.78 (predictive, overall, 83.4 %) and 0.93
(posterior, category and overall, 95 %); a plain normal interval ``mean -/+ z sqrt(sum p(1 - p) / N) / 19`` on the
same samples covers 0.78 and 0.93 too, so these are the samples' noise, not the hierarchy's shrinkage.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from benchmarks.coverage import SHARED_DATA, CoverageRow, coverage_row
from evalcore.leaderboard.bayes import bayes_leaderboard, fit

VTAB = SHARED_DATA / "vtab_1k.csv"
CATEGORIES = ["natural"] * 7 + ["specialized"] * 4 + ["structured"] * 8
DRAWS, CHAINS = 2000, 4
LEVELS = (0.834, 0.95)


def hierarchy_population(a: float, b: float, n: int, reps: int, rng: np.random.Generator) -> pd.DataFrame:
    """``reps`` models (one per repetition) with ``theta ~ Beta(a, b)`` on 19 tasks of ``n`` examples: a frame with
    the true ``theta`` per (model, task)."""
    rows = [(f"sim#{r}", f"t{j:02d}", c, n, rng.beta(a, b)) for r in range(reps) for j, c in enumerate(CATEGORIES)]
    return pd.DataFrame(rows, columns=["model", "task", "category", "n", "theta"])


def vtab_population(reps: int, n: int | None = None) -> pd.DataFrame | None:
    """The 16 VTAB-1k models repeated ``reps`` times (``theta`` = published accuracy; ``n`` = published test sizes
    or ``n`` for every task); None when the shared data are absent."""
    if not VTAB.is_file():
        return None
    d = pd.read_csv(VTAB)
    base = pd.DataFrame({"model": d["model"], "task": d["task"], "category": d["category"],
                         "n": d["n_eval_inferred"].astype(int) if n is None else n,
                         "theta": d["n_correct_inferred"] / d["n_eval_inferred"]})
    return pd.concat([base.assign(model=base["model"] + f"#{r}") for r in range(reps)], ignore_index=True)


def _aggregate(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """The truth per board row (model, scope, name): task values, category means and the overall mean."""
    task = frame.assign(scope="task", name=frame["task"])[["model", "scope", "name", column]]
    cat = frame.groupby(["model", "category"], sort=False)[column].mean().reset_index()
    cat = cat.assign(scope="category").rename(columns={"category": "name"})
    overall = frame.groupby("model", sort=False)[column].mean().reset_index().assign(scope="overall", name="overall")
    return pd.concat([task, cat, overall], ignore_index=True)


def setting_rows(name: str, population: pd.DataFrame, seed: int, draws: int = DRAWS,
                 chains: int = CHAINS) -> list[CoverageRow]:
    """Rows for one stacked population: both interval kinds, both levels, the three scopes."""
    rng = np.random.default_rng([seed, 7])
    data = population.assign(n_correct=rng.binomial(population["n"].to_numpy(), population["theta"].to_numpy()))
    rerun = population.assign(rerun=rng.binomial(population["n"].to_numpy(), population["theta"].to_numpy())
                              / population["n"].to_numpy())
    truth = _aggregate(population, "theta").merge(_aggregate(rerun, "rerun"), on=["model", "scope", "name"])
    posterior = fit(data[["model", "task", "category", "n", "n_correct"]], draws=draws, chains=chains, seed=seed)
    reps = population["model"].nunique()
    rows = []
    for kind, target in (("posterior", "theta"), ("predictive", "rerun")):
        for level in LEVELS:
            board = bayes_leaderboard(posterior, level=level, interval=kind).merge(truth, on=["model", "scope", "name"])
            for scope in ("task", "category", "overall"):
                part = board[board["scope"] == scope]
                hits = (part["ci_low"] <= part[target]) & (part[target] <= part["ci_high"])
                rows.append(coverage_row(f"bayes_leaderboard {kind} ({scope})",
                                         f"{name}, {reps} model fits, truth {target}", level, hits,
                                         part["ci_high"] - part["ci_low"]))
    return rows


def run(reps: int | None, seed: int) -> list[CoverageRow]:
    """All rows; the VTAB rows only when ``../shared/data/vtab_1k.csv`` exists. ``reps``: models per hierarchy
    setting (default 300) and repetitions of the 16 VTAB models (default 20)."""
    reps_sim = 300 if reps is None else reps
    reps_vtab = 20 if reps is None else max(1, reps // 16)
    rng = np.random.default_rng([seed, 1])
    rows = []
    for a, b in ((8.0, 3.0), (2.0, 2.0)):
        population = hierarchy_population(a, b, 100, reps_sim, rng)
        rows += setting_rows(f"hierarchy Beta({a:g}, {b:g}), 19 tasks, N=100", population, seed)
    for n, label in ((None, "published N"), (200, "N=200")):
        population = vtab_population(reps_vtab, n)
        if population is not None:
            rows += setting_rows(f"VTAB-1k accuracies, {label}", population, seed)
    return rows
