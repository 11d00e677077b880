"""Coverage of the weighted-aggregate intervals (:mod:`evalcore.leaderboard.weighting`): ``weighted_scores``,
``difference_se`` and the called (not gray) regions of ``ternary_winner_map``.

Populations (true accuracies ``p_ij`` fixed; every repetition draws ``n_correct_ij ~ Binomial(N_ij, p_ij)``
independently for every model and task, so the models are independent and ``rho = 0`` is the truth):

* simulated: 6 models, categories of 3, 2 and 4 tasks, ``N = 200`` per task, ``p_ij ~ Beta(6, 3)`` drawn once
  (``default_rng([seed, 1])``);
* VTAB-1k: the 16 models' published accuracies on the 19 tasks (``../shared/data/vtab_1k.csv``,
  ``n_correct_inferred / n_eval_inferred``) with the published test sizes ``n_eval_inferred`` (576-73,728), and the
  same with ``N = 200`` for every task (a small test set at the published accuracies, 3%-96%).

Truth: ``S_i(w) = sum_c w_c mean_{j in c} p_ij``. Rows:

* ``weighted_scores``: share of (repetition, model) intervals holding ``S_i(w)`` at levels 0.834 (the paper's comparison level) and
  0.95, weights (1/3, 1/3, 1/3) and (0.6, 0.2, 0.2) (the MC SE treats the models of one repetition as independent,
  which they are here);
* ``difference_se``: ``diff -/+ z se_independent`` (``rho = 0``) at 95% for every pair, equal weights, truth
  ``S_a - S_b``;
* ``ternary_winner_map`` (``z = 2``, binomial, ``step = 0.05``): a called (not gray) point is a one-sided z = 2 test
  that the winner beats the runner-up, so at every weight the probability of calling a winner that is not truly best
  is at most ``Phi(-2) = 0.023``. Row "not wrongly called": the share of grid points that are gray or called
  right, averaged per map (nominal ``Phi(2) = 0.977``; the MC SE ``sqrt(c (1 - c) / R)`` over maps overstates the
  noise of a mean of shares). Row "called points right": among the called points of all maps, the share whose
  winner is truly best (the rate a reader of the colored regions meets; no nominal, shown as nan: conditional on a
  call, errors are not bounded, and they concentrate where few points are called); its width column is the share
  of points called.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
from scipy.stats import norm

from benchmarks.coverage import SHARED_DATA, CoverageRow, coverage_row
from evalcore.leaderboard.weighting import difference_se, simplex_grid, ternary_winner_map, weighted_scores

VTAB = SHARED_DATA / "vtab_1k.csv"
WEIGHTS = ((1 / 3, 1 / 3, 1 / 3), (0.6, 0.2, 0.2))
STEP = 0.05


def simulated_population(seed: int) -> tuple[str, pd.DataFrame]:
    """6 models, 3 categories (3, 2, 4 tasks), N = 200, p ~ Beta(6, 3): a frame with the true accuracy ``p``."""
    rng = np.random.default_rng([seed, 1])
    cats = ["a"] * 3 + ["b"] * 2 + ["c"] * 4
    rows = [(f"m{i}", f"t{j}", c, 200, rng.beta(6, 3)) for i in range(6) for j, c in enumerate(cats)]
    return "simulated 6 models x 9 tasks, N=200", pd.DataFrame(rows, columns=["model", "task", "category", "n", "p"])


def vtab_populations() -> list[tuple[str, pd.DataFrame]]:
    """VTAB-1k at the published test sizes and at N = 200; [] when the shared data are absent."""
    if not VTAB.is_file():
        return []
    d = pd.read_csv(VTAB)
    base = pd.DataFrame({"model": d["model"], "task": d["task"], "category": d["category"],
                         "n": d["n_eval_inferred"].astype(int), "p": d["n_correct_inferred"] / d["n_eval_inferred"]})
    return [("VTAB-1k published N", base), ("VTAB-1k accuracies, N=200", base.assign(n=200))]


def draw(population: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """A summary frame with ``n_correct ~ Binomial(n, p)``."""
    return population.assign(n_correct=rng.binomial(population["n"].to_numpy(), population["p"].to_numpy()))


def true_scores(population: pd.DataFrame, weights) -> pd.Series:
    """``S_i(w)`` per model from the true ``p`` (categories in order of first appearance)."""
    cats = list(dict.fromkeys(population["category"]))
    means = population.pivot_table(index="model", columns="category", values="p", aggfunc="mean", sort=False)[cats]
    return means @ np.asarray(weights, dtype=float)


def _true_winners(population: pd.DataFrame, grid: np.ndarray) -> np.ndarray:
    cats = list(dict.fromkeys(population["category"]))
    means = population.pivot_table(index="model", columns="category", values="p", aggfunc="mean", sort=False)[cats]
    return np.asarray(means.index)[np.argmax(grid @ means.to_numpy().T, axis=1)]


def score_rows(name: str, population: pd.DataFrame, reps: int, seed: int, index: int) -> list[CoverageRow]:
    """``weighted_scores`` at both levels and both weightings."""
    rows = []
    samples = [draw(population, np.random.default_rng([seed, index, r])) for r in range(reps)]
    for level in (0.834, 0.95):
        for w in WEIGHTS:
            truth = true_scores(population, w)
            hits, widths = [], []
            for data in samples:
                table = weighted_scores(data, w, level=level).set_index("model")
                t = truth.loc[table.index]
                hits.extend((table["ci_low"] <= t) & (t <= table["ci_high"]))
                widths.extend(table["ci_high"] - table["ci_low"])
            label = "equal" if w[0] == w[1] else "0.6/0.2/0.2"
            rows.append(coverage_row("weighted_scores", f"{name}, weights {label}", level, hits, widths))
    return rows


def difference_rows(name: str, population: pd.DataFrame, reps: int, seed: int, index: int) -> list[CoverageRow]:
    """``difference_se`` (rho = 0) at 95%, equal weights, all pairs; and the ternary map's called points."""
    w = WEIGHTS[0]
    truth = true_scores(population, w)
    z = norm.ppf(0.975)
    models = list(truth.index)
    pairs = list(combinations(models, 2))[:30]  # at most 30 pairs per repetition (VTAB has 120)
    hits, widths = [], []
    called_right, not_wrong, called_share = [], [], []
    grid = simplex_grid(STEP)
    best = _true_winners(population, grid)
    for r in range(reps):
        data = draw(population, np.random.default_rng([seed, index, 10_000 + r]))
        for a, b in pairs:
            d = difference_se(data, a, b, w)
            hits.append(abs(d.diff - (truth[a] - truth[b])) <= z * d.se_independent)
            widths.append(2 * z * d.se_independent)
        board = ternary_winner_map(data, step=STEP, z=2.0)
        called = ~board["gray"].to_numpy()
        wrong = board["winner"].to_numpy() != best
        called_right.extend(~wrong[called])
        not_wrong.append(1 - np.mean(called & wrong))
        called_share.append(called.mean())
    setting = f"{name}, z=2, step {STEP}; width = share called"
    rows = [coverage_row("difference_se (rho=0)", f"{name}, equal weights, {len(pairs)} pairs", 0.95, hits, widths),
            coverage_row("ternary_winner_map: not wrongly called", setting, float(norm.cdf(2.0)), not_wrong,
                         called_share)]
    if called_right:  # no row when no map called any point
        rows.append(coverage_row("ternary_winner_map: called points right", setting, float("nan"), called_right,
                                 called_share))
    return rows


def run(reps: int | None, seed: int) -> list[CoverageRow]:
    """All rows; the VTAB rows only when ``../shared/data/vtab_1k.csv`` exists."""
    reps = 300 if reps is None else reps
    rows = []
    for index, (name, population) in enumerate([simulated_population(seed), *vtab_populations()]):
        rows += score_rows(name, population, reps, seed, index)
        rows += difference_rows(name, population, reps, seed, index)
    return rows
