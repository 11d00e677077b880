"""Prediction-powered inference benchmarks (``ppi-mean-10``, ``bt-20``, ``ess-curve``).

Method: Boyeau et al., "AutoEval Done Right" (``../shared/papers/autoeval-ppi.txt``); the code under test is
:mod:`evalcore.ppi.means` (PPI++ means), :mod:`evalcore.ppi.bradley_terry` (PPI++ Bradley-Terry) and
:mod:`evalcore.ppi.curves` (effective-sample-size curves from random splits).

* :func:`simulated_accuracy`: ``T`` examples x ``M`` models, annotator = the model's confidence ``p ~ Beta(a, 1)``
  (``a`` from 2 to 6 across models), correctness ``y ~ Bernoulli(p)`` -- a calibrated annotator, seeded.
* ``ppi-mean-10``: ``ppi_mean`` with tuned λ for n = 1,000 labeled and N = 1,000,000 unlabeled examples of M = 10
  models at once; its target is the median of the reference package ``ppi_py`` called once per model
  (``ppi_mean_ci(lam=None)``), measured in the same run (row ``ppi-mean-10-ppi_py``); the note gives the largest
  difference of the point estimates.
* ``bt-20``: ``ppi_bradley_terry(lam=None)`` for 20 models, n = 1,000 human votes and N = 100,000 judge-only
  battles (a judge that reads each battle's own latent margin with noise, as the battle demo).
* ``ess-curve``: ``ess_curves`` on 20 labeled sizes x 250 splits for 4 models and T = 50,000 examples, all cores.
* ``bt-ess-curve``: ``bt_ess_curves`` on 12 sizes x 250 splits for 20 models and 16,000 voted battles (no target).
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd

from benchmarks.core import Result, time_calls


def simulated_accuracy(total: int, models: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``(y, p)``: 0/1 correctness and confidences, ``total`` x ``models`` (module doc)."""
    rng = np.random.default_rng(seed)
    shape = np.linspace(2.0, 6.0, models)
    p = rng.beta(shape, 1.0, size=(total, models))
    return (rng.random((total, models)) < p).astype(float), p


def bench_ppi_mean(repeats: int) -> list[Result]:
    from evalcore.ppi.means import ppi_mean

    n, N, M = 1_000, 1_000_000, 10
    y, p = simulated_accuracy(n + N, M)
    Y, Yh, Yu = y[:n], p[:n], p[n:]
    ours = time_calls(partial(ppi_mean, Y, Yh, Yu, 0.1), repeats)
    what = f"`ppi_mean(lam=None)`, n = {n:,}, N = {N:,}, M = {M} models at once"
    try:
        import ppi_py
    except ImportError:
        return [Result("ppi-mean-10", what, ours, note="ppi_py not installed (requirements-test.txt)")]
    columns = [(np.ascontiguousarray(Y[:, m]), np.ascontiguousarray(Yh[:, m]), np.ascontiguousarray(Yu[:, m]))
               for m in range(M)]

    def reference():
        return [ppi_py.ppi_mean_ci(*c, alpha=0.1) for c in columns]

    reference()  # numba compiles on the first call: not timed
    theirs = time_calls(reference, repeats)
    ref_est = np.array([np.ravel(ppi_py.ppi_mean_pointestimate(*c))[0] for c in columns])
    diff = float(np.max(np.abs(ppi_mean(Y, Yh, Yu, 0.1).estimate - ref_est)))
    median = float(np.median(theirs))
    return [Result("ppi-mean-10", what, ours, median,
                   note=f"target = ppi_py's median in this run; largest absolute difference of the estimates {diff:.1e}"),
            Result("ppi-mean-10-ppi_py", "`ppi_py.ppi_mean_ci(lam=None)` called once per model, same data",
                   theirs)]


def simulated_battles(models: int, total: int, seed: int = 0) -> tuple[pd.DataFrame, pd.Series]:
    """Battles between ``models`` models with known strengths: b wins when ``beta_b - beta_a + Logistic`` > 0;
    ``judge`` = a noisy, slightly biased probability of that battle's own margin (informative beyond the pair)."""
    rng = np.random.default_rng(seed)
    names = np.array([f"model-{i:02d}" for i in range(models)])
    beta = np.concatenate([[0.0], rng.normal(0.0, 1.0, models - 1)])
    a = rng.integers(0, models, total)
    b = (a + rng.integers(1, models, total)) % models
    margin = beta[b] - beta[a] + rng.logistic(0.0, 1.0, total)  # as evalcore.demo.synthetic.pairwise_battles
    outcome = (margin > 0).astype(float)
    judge = 1 / (1 + np.exp(-(margin + 0.2 + rng.normal(0, 1.5, total))))
    frame = pd.DataFrame({"model_a": names[a], "model_b": names[b], "outcome": outcome, "judge": judge})
    return frame, pd.Series(beta, index=names)


def bench_bt(repeats: int) -> list[Result]:
    from evalcore.ppi.bradley_terry import ppi_bradley_terry

    n, N, M = 1_000, 100_000, 20
    frame, _ = simulated_battles(M, n + N)
    labeled, unlabeled = frame.iloc[:n], frame.iloc[n:].assign(outcome=np.nan)
    samples = time_calls(partial(ppi_bradley_terry, labeled, unlabeled, 0.1), repeats)
    lam = float(ppi_bradley_terry(labeled, unlabeled, 0.1)["lam"].iloc[0])
    what = f"`ppi_bradley_terry(lam=None)`, {M} models, n = {n:,} votes, N = {N:,} judge-only battles"
    return [Result("bt-20", what, samples, 0.5, note=f"tuned λ = {lam:.3f}")]


def bench_ess_curve(repeats: int) -> list[Result]:
    from evalcore.ppi.curves import default_grid, ess_curves

    total, M = 50_000, 4
    y, p = simulated_accuracy(total, M)
    grid = default_grid(total, 20)
    samples = time_calls(partial(ess_curves, y, p, grid, splits=250, alpha=0.1, seed=0), repeats)
    what = f"`ess_curves`, {len(grid)} sizes n ({grid[0]}–{grid[-1]}) x 250 splits, {M} models, T = {total:,}"
    return [Result("ess-curve", what, samples, 10.0)]


def bench_bt_ess_curve(repeats: int) -> list[Result]:
    from evalcore.ppi.curves import bt_ess_curves, default_grid

    models, total = 20, 16_000
    frame, _ = simulated_battles(models, total)
    grid = default_grid(total, 12, 200, 4000)
    samples = time_calls(partial(bt_ess_curves, frame, grid, splits=250, alpha=0.1, seed=0), min(repeats, 3))
    what = (f"`bt_ess_curves`, {len(grid)} sizes n ({grid[0]}–{grid[-1]}) x 250 splits x 3 methods, {models} models, "
            f"{total:,} voted battles (the paper's LLM experiment size)")
    return [Result("bt-ess-curve", what, samples)]


BENCHMARKS = {"ppi-mean-10": bench_ppi_mean, "bt-20": bench_bt, "ess-curve": bench_ess_curve,
              "bt-ess-curve": bench_bt_ess_curve}
