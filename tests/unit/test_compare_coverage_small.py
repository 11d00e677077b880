"""Small seeded versions of issue 28's measurements of :func:`evalcore.compare.compare_runs` (the full ones:
``python -m benchmarks.coverage.compare`` and ``python -m benchmarks.compare_fdr`` on MMLU-Pro).

* Coverage: a synthetic finite population of 4,000 questions answered by two correlated models (shared question
  difficulty; model accuracies about 0.63 and 0.67, 16% of questions answered differently); the truth is the
  population's difference of accuracies. ``REPS`` draws of ``N`` questions (all compared in one call, each draw a
  task: a call costs about a second); the 95% interval must hold in 0.95 +/- 0.045 of them, about 4 Monte Carlo
  SEs at 300 draws (measured, seeded: 0.940 for 0/1 with Newcombe's interval, 0.947 for continuous scores with the
  paired t). An interval that ignores the pairing (here about 1.7 times wider: coverage near 1) or one made with
  twice the n (coverage about 0.83) fails.
* FDP and power: :func:`benchmarks.compare_fdr.simulate` (new = a null run redrawn at each category's rate, which
  of the two answers is base's a coin per question, a drop planted) on 60 categories of 80 questions (accuracy
  0.55 to 0.90 by category), a 35-point drop planted in 12 categories per call, 6 calls (60 slices searched each).
  Mean FDP must be at most ``fdr`` plus 2 Monte Carlo SEs (Benjamini-Hochberg: about 0.1 x 48 / 60 = 0.08;
  measured, seeded: 0.048 +/- 0.030) and the planted drops found in at least 80% (measured: 0.99). Without
  Benjamini-Hochberg (raw p < 0.1 on 60 slices) the FDP is about 4.8 / 16.8 = 0.29; a search that flags nothing
  has power 0.
* Agreement with the independent formulas of :mod:`benchmarks.coverage.compare` (Newcombe method 10, exact McNemar,
  paired t) on random tables.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from benchmarks import compare_fdr
from benchmarks.coverage.compare import independent, newcombe10
from evalcore.compare import compare_runs
from evalcore.data.validation import validate

REPS, N, POP = 300, 60, 4000
LEVEL = 0.95


def population(seed: int = 0, metric: str = "correct"):
    """Two correlated models' answers on ``POP`` questions (module docstring); ``metric`` "score": the same latent
    model, continuous scores (the logistic of the latent value) instead of its sign."""
    rng = np.random.default_rng([seed, 28])
    difficulty = rng.normal(0, 1.5, POP)
    base = 0.5 - difficulty + rng.logistic(0, 0.35, POP)
    new = 0.7 - difficulty + rng.logistic(0, 0.35, POP)
    if metric == "score":
        return 1 / (1 + np.exp(-base)), 1 / (1 + np.exp(-new))
    return (base > 0).astype(float), (new > 0).astype(float)


def log_of(ids, base, new, metric="correct", task="t"):
    n = len(ids)
    raw = pd.DataFrame({"model": np.repeat(["base", "new"], n), "task": np.tile(np.asarray(task, dtype=object), 2)
                        if np.ndim(task) else task, "example_id": np.tile(ids, 2),
                        metric: np.concatenate([base, new])})
    return validate(raw)


@pytest.mark.parametrize("metric", ["correct", "score"])
def test_the_paired_interval_covers_the_population_difference(metric):
    base, new = population(metric=metric)
    truth = new.mean() - base.mean()
    if metric == "correct":  # the population the module docstring describes
        assert truth == pytest.approx(0.0395) and np.mean(base != new) == pytest.approx(0.1565)
    rng = np.random.default_rng([1, 28])
    picks = np.stack([rng.choice(POP, N, replace=False) for _ in range(REPS)])
    # the REPS draws in one call (a call costs about a second): draw r is task r, its interval the slice "task=r",
    # computed by the same function as the overall row (checked on draw 0 below)
    task = np.repeat([f"r{r:03d}" for r in range(REPS)], N)
    keys = np.repeat(np.arange(REPS) * 10_000, N) + picks.ravel()
    result = compare_runs(log_of(keys, base[picks.ravel()], new[picks.ravel()], metric, task), "base", "new",
                          level=LEVEL, min_slice=N)
    assert result.n_searched == REPS
    rows = result.slices.set_index("value").loc[[f"r{r:03d}" for r in range(REPS)]]
    assert (rows["n"] == N).all()
    assert rows["difference"].to_numpy() == pytest.approx(new[picks].mean(axis=1) - base[picks].mean(axis=1))
    alone = compare_runs(log_of(picks[0], base[picks[0]], new[picks[0]], metric), "base", "new",
                         level=LEVEL).overall.iloc[0]
    for key in ("difference", "ci_low", "ci_high", "p_value"):
        assert alone[key] == pytest.approx(rows.iloc[0][key], abs=1e-12), key
    assert alone["method"] == ("exact McNemar (Newcombe score interval)" if metric == "correct"
                               else "paired t (cluster-robust by example)")
    hits = (rows["ci_low"] <= truth) & (truth <= rows["ci_high"])
    coverage = float(hits.mean())
    assert abs(coverage - LEVEL) <= 0.045, coverage


def test_planted_regressions_keep_the_false_discovery_rate_and_are_found():
    # 60 categories of 80 questions, accuracy 0.55 to 0.90; per call, 12 categories get a 35-point drop
    rng = np.random.default_rng([2, 28])
    cats = np.repeat([f"c{j:02d}" for j in range(60)], 80)
    rate = np.repeat(np.linspace(0.55, 0.90, 60), 80)
    pop = compare_fdr.Population(("m",), np.arange(cats.size), cats, (rng.random(cats.size) < rate)[None, :] * 1.0)
    sims = compare_fdr.simulate(pop, effects=(0.35,), sizes=(80,), reps=6, null_reps=0, fdr=0.1, seed=0,
                                planted_count=12)
    assert len(sims) == 6 and set(sims["searched"]) == {60} and sims["flipped"].eq(12 * 28).all()
    fdp, se = compare_fdr.mean_se(sims["fdp"])
    assert fdp <= 0.1 + 2 * se, (fdp, se)
    assert sims["found"].mean() >= 0.8, sims["found"].mean()
    assert "| 35% | " in compare_fdr.tables(sims)


def test_agreement_with_independent_formulas():
    rng = np.random.default_rng([3, 28])
    for n, metric in ((15, "correct"), (500, "correct"), (200, "score")):
        base = (rng.random(n) < 0.6).astype(float)
        new = np.where(rng.random(n) < 0.8, base, 1 - base)
        if metric == "score":  # continuous scores: the paired t
            base, new = base * 0.5 + rng.random(n) * 0.5, new * 0.5 + rng.random(n) * 0.5
        row = compare_runs(log_of(np.arange(n), base, new, metric), "base", "new").overall.iloc[0]
        ref = independent(base, new, metric)
        for key, value in ref.items():
            assert row[key] == pytest.approx(value, abs=1e-9), (n, metric, key)


def test_the_independent_newcombe_interval_by_hand():
    # a = 20 both right, b = 4 only base right, c = 10 only new right, d = 6 both wrong; n = 40
    theta, low, high = newcombe10(20, 4, 10, 6)
    z = stats.norm.ppf(0.975)
    p1, p2 = 30 / 40, 24 / 40  # new, base
    w = lambda p: ((p + z * z / 80) / (1 + z * z / 40),  # noqa: E731 - Wilson centre and half width, n = 40
                   z * np.sqrt(p * (1 - p) / 40 + z * z / 6400) / (1 + z * z / 40))
    (c1, h1), (c2, h2) = w(p1), w(p2)
    l1, u1, l2, u2 = c1 - h1, c1 + h1, c2 - h2, c2 + h2
    phi = (20 * 6 - 4 * 10 - 40 / 2) / np.sqrt(24 * 16 * 30 * 10)  # a d - b c = 80 > n / 2: corrected by n / 2
    assert theta == pytest.approx(0.15)
    assert low == pytest.approx(0.15 - np.sqrt((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    assert high == pytest.approx(0.15 + np.sqrt((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    assert (low, high) == pytest.approx((-0.0354426, 0.3218476), abs=1e-6)


def test_a_published_paired_table():
    # Cavo et al. (2012) as printed in Fagerland, Lydersen and Laake (2017), "Statistical Analysis of Contingency
    # Tables", ch. 8 (and the tests of their R package contingencytables): complete response before (rows) and after
    # (columns) consolidation therapy, [[59, 6], [16, 80]]; Newcombe square-and-add, before - after: -0.0621 (95% CI
    # -0.1186 to -0.0046); exact conditional McNemar P = 0.0525 (two-sided binomial of 6 of 22 at 1/2).
    theta, low, high = newcombe10(59, 6, 16, 80)
    assert (theta, low, high) == pytest.approx((0.0621, 0.0046, 0.1186), abs=5e-5)
    cells = [(1, 1)] * 59 + [(1, 0)] * 6 + [(0, 1)] * 16 + [(0, 0)] * 80
    before, after = (np.array(x, dtype=float) for x in zip(*cells))
    row = compare_runs(log_of(np.arange(161), before, after), "base", "new").overall.iloc[0]
    assert row["n"] == 161 and row["difference"] == pytest.approx(10 / 161)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((0.0046, 0.1186), abs=5e-5)
    assert row["p_value"] == pytest.approx(0.0524788, abs=1e-6)
