r"""Effective-sample-size curves: how many labels the annotator is worth, measured on a fully labeled log.

Method: "AutoEval Done Right" (Boyeau et al., ``../shared/papers/autoeval-ppi.txt``), Sections 2.3–2.4 (Figures 1
and 2: MSE, ESS and rank correlation against the number of labels ``n``), Figure 6 (coverage and width of the
intervals), Figure 3 (ESS against annotator quality) and Supplement C.2 (250 random labeled/unlabeled splits;
rankings from Bonferroni intervals with ties).

For each ``n`` of a grid, ``splits`` random subsets of ``n`` examples play the labeled set and the other
``T - n`` the unlabeled set (their labels hidden). Each split gives, per model and method (classical, PPI with
λ = 1, PPI++ with tuned λ), the estimate and standard error of :func:`evalcore.ppi.means.ppi_mean` -- computed here from
per-split sums (sum of y, yhat, y^2, yhat^2, y*yhat over the labeled subset; the unlabeled sums are the totals
minus those), so a split costs O(n M) whatever T is. The truth is the full-data mean.

Summaries per (n, method, model), and over the average of the models (``model = "all models"``):

* ``mse`` = mean over splits of ``(estimate - truth)^2`` with a 95 % Monte Carlo interval (mean +- 1.96 SE);
* ``coverage`` = share of splits whose ``1 - alpha`` interval holds the truth, 95 % Monte Carlo interval;
* ``width`` = mean full interval width, band = 5 % and 95 % quantiles over splits;
* ``ess`` = mean plug-in ESS ``n Var(classical) / Var(method)`` (as in :func:`evalcore.ppi.means.ppi_mean`), band = 5–95 %
  quantiles; ``ess_empirical = n MSE(classical) / MSE(method)``, the paper's Figure 1b quantity;
* ``lam`` = mean λ; ``rank_corr`` (``all models`` rows) = mean Spearman correlation between the ranking from
  Bonferroni intervals with ties (:func:`evalcore.leaderboard.ranks.rank_with_ties`) and the full-data ranking (both as
  average ranks); a split whose ranking is all tied carries no ordering and counts as 0. 95 % Monte Carlo
  interval.

Units of work (one ``n``, up to 125 splits) have their own seeded streams (:func:`evalcore.stats.parallel.seeded_map`):
results depend on ``seed`` only, never on the number of cores.

Public API: ``METHODS``, ``ALL_MODELS``, ``ess_curves(y, yhat, n_grid, splits, alpha, seed, models, n_jobs,
progress) -> DataFrame``, ``default_grid(total, points) -> list[int]``, ``annotator_quality(y, annotators, n,
...) -> DataFrame``, ``bt_ess_curves(battles, n_grid, splits, alpha, seed, judge, reference) -> DataFrame`` (the same
study for Bradley-Terry coefficients on fully voted battles, Figure 4). ``alpha`` defaults to
:data:`evalcore.stats.intervals.DEFAULT_ALPHA` (0.05, the package's 95% level); the paper's figures use 0.1.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd
from scipy.stats import norm, rankdata

from evalcore.ppi.bradley_terry import pair_estimates as bt_pair_estimates
from evalcore.stats.parallel import random_subsets, seeded_map
from evalcore.ppi.means import as_matrix, binary_floor, ppi_variance, tuned_lambda
from evalcore.leaderboard.ranks import bonferroni_z
from evalcore.data.reading import EvalDataError
from evalcore.stats.intervals import DEFAULT_ALPHA

METHODS = ("classical", "ppi", "ppi++")
ALL_MODELS = "all models"
_CHUNK = 125
_STATS = ("ess", "mse", "width", "coverage")


def default_grid(total: int, points: int = 20, low: int = 20, high: int = 2000) -> list[int]:
    """``points`` roughly geometric labeled sizes from ``low`` to ``min(high, total // 2)``."""
    top = max(min(high, total // 2), low + 1)
    if total < 2 * low:
        raise EvalDataError(f"A split study needs at least {2 * low} fully labeled examples; got {total}.")
    return sorted({int(round(v)) for v in np.geomspace(low, top, points)})


def _split_estimates(y: np.ndarray, yhat: np.ndarray, totals: dict, idx: np.ndarray, alpha: float) -> dict:
    """Estimates, standard errors and λ of the three methods for labeled subsets ``idx`` (S x n), per model.

    A subset whose 0/1 labels are all equal gets the Jeffreys variance floor of :func:`evalcore.ppi.means.binary_floor`
    (as :func:`evalcore.ppi.means.classical_mean`), not a width of 0."""
    n = idx.shape[1]
    N = y.shape[0] - n
    yl, hl = y[idx], yhat[idx]  # S x n x M
    sy, sh = yl.sum(1), hl.sum(1)
    syy, shh, syh = (yl * yl).sum(1), (hl * hl).sum(1), (yl * hl).sum(1)
    mean_u = (totals["h"] - sh) / N
    var_u = ((totals["hh"] - shh) - (totals["h"] - sh) ** 2 / N) / (N - 1)
    var_y = np.maximum((syy - sy**2 / n) / (n - 1), binary_floor(sy, n, np.isin(y, (0.0, 1.0)).all(axis=0)))
    var_l = (shh - sh**2 / n) / (n - 1)
    products = syh - sy * sh / n
    out = {}
    for method, lam in (("classical", np.zeros_like(sy)), ("ppi", np.ones_like(sy)),
                        ("ppi++", tuned_lambda(products / n, totals["pooled"], n, N))):
        var = ppi_variance(var_y, products / (n - 1), var_l, var_u, lam, n, N)
        out[method] = (lam * mean_u + (sy - lam * sh) / n, np.sqrt(var), lam)
    out["var_classical"] = np.maximum(var_y, 0.0) / n
    return out


def _pearson_rows(ranks: np.ndarray, truth_ranks: np.ndarray) -> np.ndarray:
    """Row-wise Pearson correlation of rank rows with ``truth_ranks`` (Spearman's rho); 0 for constant rows."""
    a = ranks - ranks.mean(axis=1, keepdims=True)
    b = truth_ranks - truth_ranks.mean()
    denom = np.sqrt((a * a).sum(axis=1) * (b * b).sum())
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denom > 0, (a * b).sum(axis=1) / denom, 0.0)


def _unit(y, yhat, totals, truth, truth_ranks, n, size, alpha, rng) -> dict:
    idx = random_subsets(rng, y.shape[0], n, size)
    est = _split_estimates(y, yhat, totals, idx, alpha)
    z = float(norm.ppf(1 - alpha / 2))
    zb = bonferroni_z(alpha, y.shape[1])
    out = {}
    for method in METHODS:
        mu, se, lam = est[method]
        with np.errstate(divide="ignore", invalid="ignore"):
            ess = np.where(se > 0, n * est["var_classical"] / se**2, float(n))
        low, high = mu - zb * se, mu + zb * se
        ranks = rankdata(1 + (low[:, None, :] > high[:, :, None]).sum(axis=2), method="average", axis=1)
        out[method] = {"sq": (mu - truth) ** 2, "cover": np.abs(mu - truth) <= z * se, "width": 2 * z * se,
                       "ess": ess, "lam": lam, "rank_corr": _pearson_rows(ranks, truth_ranks)}
    return out


def _mc_interval(values: np.ndarray) -> tuple[float, float, float]:
    mean = float(values.mean())
    half = 1.96 * float(values.std(ddof=1)) / np.sqrt(values.size) if values.size > 1 else 0.0
    return mean, mean - half, mean + half


def _summary(n: int, method: str, model: str, parts: dict, base_mse: float) -> dict:
    mse, mse_low, mse_high = _mc_interval(parts["sq"])
    cov, cov_low, cov_high = _mc_interval(parts["cover"].astype(float))
    q = lambda a: np.quantile(a, [0.05, 0.95])  # noqa: E731
    w_low, w_high = q(parts["width"])
    e_low, e_high = q(parts["ess"])
    row = {"n": n, "method": method, "model": model,
           "ess": float(parts["ess"].mean()), "ess_low": e_low, "ess_high": e_high,
           "ess_empirical": n * base_mse / mse if mse > 0 else np.nan,
           "mse": mse, "mse_low": max(mse_low, 0.0), "mse_high": mse_high,
           "width": float(parts["width"].mean()), "width_low": w_low, "width_high": w_high,
           "coverage": cov, "coverage_low": max(cov_low, 0.0), "coverage_high": min(cov_high, 1.0),
           "lam": float(parts["lam"].mean())}
    if "rank_corr" in parts:
        row["rank_corr"], row["rank_corr_low"], row["rank_corr_high"] = _mc_interval(parts["rank_corr"])
    return row


def ess_curves(y, yhat, n_grid, splits: int = 250, alpha: float = DEFAULT_ALPHA, seed: int = 0, models=None,
               n_jobs: int = -1, progress: Callable[[float], None] | None = None) -> pd.DataFrame:
    """Split study on a fully labeled log: one row per (n, method, model) and per (n, method) for all models.

    ``y`` (T x M or T): the metric of every example for each model (all labeled); ``yhat``: the annotator's value.
    See the module docstring for the columns. ``progress(fraction)`` is called as units of splits finish.
    """
    ya = as_matrix(y, "The labels y (every example must be labeled for a split study)")
    ha = as_matrix(yhat, "The annotator's values yhat", ya.shape[1])
    if ha.shape[0] != ya.shape[0]:
        raise EvalDataError(f"y has {ya.shape[0]} rows but yhat has {ha.shape[0]}: give both for every example.")
    T, M = ya.shape
    grid = sorted({int(v) for v in n_grid})
    if not grid or grid[0] < 2 or grid[-1] > T - 2:
        raise EvalDataError(f"Every labeled size n must lie in [2, {T - 2}] (T = {T} examples); got {grid}.")
    if int(splits) < 2:
        raise ValueError(f"splits must be >= 2, got {splits!r}.")
    names = [str(m) for m in (models if models is not None else range(M))]
    totals = {"h": ha.sum(0), "hh": (ha * ha).sum(0), "pooled": ha.var(axis=0, ddof=1)}
    truth = ya.mean(0)
    truth_ranks = rankdata(-truth, method="average")
    units = [(n, c0, min(_CHUNK, int(splits) - c0)) for n in grid for c0 in range(0, int(splits), _CHUNK)]
    results = seeded_map(lambda i, rng: _unit(ya, ha, totals, truth, truth_ranks, units[i][0], units[i][2], alpha,
                                              rng), len(units), seed, n_jobs=n_jobs, progress=progress)
    rows = []
    for n in grid:
        parts = [r for (un, _, _), r in zip(units, results) if un == n]
        joined = {m: {k: np.concatenate([p[m][k] for p in parts]) for k in parts[0][m]} for m in METHODS}
        base = {j: float(joined["classical"]["sq"][:, j].mean()) for j in range(M)}
        for method in METHODS:
            stats = joined[method]
            for j, name in enumerate(names):
                per = {k: v[:, j] for k, v in stats.items() if k != "rank_corr"}
                rows.append(_summary(n, method, name, per, base[j]))
            avg = {k: (v.mean(axis=1) if v.ndim == 2 else v) for k, v in stats.items()}
            rows.append(_summary(n, method, ALL_MODELS, avg, float(np.mean(list(base.values())))))
    frame = pd.DataFrame(rows)
    frame.attrs.update({"alpha": alpha, "splits": int(splits), "seed": int(seed), "total": T})
    return frame


def annotator_quality(y, annotators: dict, n: int, splits: int = 250, alpha: float = DEFAULT_ALPHA, seed: int = 0,
                      models=None, n_jobs: int = -1, progress: Callable[[float], None] | None = None) -> pd.DataFrame:
    """ESS/n of PPI++ at ``n`` labels for each annotator, against its quality (Figure 3), on a fully labeled log.

    ``annotators`` maps a name to a T x M array (or T) of that annotator's values. Quality = Pearson correlation of
    the annotator with the labels over all T examples, per model. ESS/n: mean plug-in ESS over ``splits`` random
    splits divided by n, band = 5–95 % quantiles. Columns: model, annotator, quality, ess_ratio, ess_ratio_low,
    ess_ratio_high, n.
    """
    ya = as_matrix(y, "The labels y")
    names = [str(m) for m in (models if models is not None else range(ya.shape[1]))]
    rows = []
    for k, (label, values) in enumerate(annotators.items()):
        ha = as_matrix(values, f"Annotator '{label}'", ya.shape[1])

        def step(fraction, k=k):
            if progress is not None:
                progress((k + fraction) / len(annotators))

        curve = ess_curves(ya, ha, [n], splits=splits, alpha=alpha, seed=seed, models=names, n_jobs=n_jobs,
                           progress=step)
        curve = curve[(curve["method"] == "ppi++") & (curve["model"] != ALL_MODELS)].set_index("model")
        for j, name in enumerate(names):
            quality = np.corrcoef(ya[:, j], ha[:, j])[0, 1] if ha[:, j].std() > 0 else 0.0
            rows.append({"model": name, "annotator": label, "quality": float(quality),
                         "ess_ratio": curve.at[name, "ess"] / n, "ess_ratio_low": curve.at[name, "ess_low"] / n,
                         "ess_ratio_high": curve.at[name, "ess_high"] / n, "n": int(n)})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- Bradley-Terry split study


def _bt_unit(codes_a, codes_b, y, yhat, m, reference, truth, truth_ranks, n, size, alpha, rng) -> dict:
    """Classical / PPI / PPI++ Bradley-Terry fits on ``size`` random splits with ``n`` voted battles each."""
    T = y.shape[0]
    idx = random_subsets(rng, T, n, size)
    z = float(norm.ppf(1 - alpha / 2))
    zb = bonferroni_z(alpha, m)
    free = np.arange(m) != reference
    out = {method: {k: np.full((size, m - 1), np.nan) for k in ("sq", "cover", "width", "ess", "lam")}
           for method in METHODS}
    for method in METHODS:
        out[method]["rank_corr"] = np.full(size, np.nan)
    for s in range(size):
        mask = np.zeros(T, dtype=bool)
        mask[idx[s]] = True
        args = (codes_a[mask], codes_b[mask], y[mask], yhat[mask], codes_a[~mask], codes_b[~mask], yhat[~mask])
        try:
            fits = bt_pair_estimates(m, reference, *args, (0.0, 1.0, None))  # METHODS' λ
        except EvalDataError:  # e.g. a model that won every labeled battle: no finite estimate on this split
            continue
        se_classical = fits[0][1]
        for method, (coef, se, used) in zip(METHODS, fits):
            part = out[method]
            part["sq"][s] = (coef - truth)[free] ** 2
            part["cover"][s] = (np.abs(coef - truth) <= z * se)[free]
            part["width"][s] = 2 * z * se[free]
            part["lam"][s] = used
            with np.errstate(divide="ignore", invalid="ignore"):
                part["ess"][s] = n * (se_classical[free] / se[free]) ** 2
            ranks = rankdata(1 + ((coef - zb * se)[None, :] > (coef + zb * se)[:, None]).sum(axis=1),
                             method="average")
            part["rank_corr"][s] = _pearson_rows(ranks[None, :], truth_ranks)[0]
    return out


def bt_ess_curves(battles: pd.DataFrame, n_grid, splits: int = 250, alpha: float = DEFAULT_ALPHA, seed: int = 0,
                  judge: str = "probability", reference: str | None = None, n_jobs: int = -1,
                  progress: Callable[[float], None] | None = None) -> pd.DataFrame:
    """Split study for Bradley-Terry coefficients on battles that all carry a human ``outcome`` and a ``judge``.

    The truth is the classical MLE on every battle; each split keeps the votes of ``n`` random battles and the
    judge's value on the rest, and fits classical, PPI and PPI++ (:func:`evalcore.ppi.bradley_terry.pair_estimates`,
    the estimator of :func:`~evalcore.ppi.bradley_terry.ppi_bradley_terry`). Rows per (n, method, model) for the
    non-reference models and for "all models", with the columns of :func:`ess_curves` (ESS per coefficient =
    ``n se_classical^2 / se^2``) plus ``failed``: the share of splits where some method had no finite estimate
    (e.g. a model that won every labeled battle); those splits are left out of every method's averages, so the
    methods are compared on the same splits. The paper's Figure 4.
    """
    from evalcore.ppi.bradley_terry import JUDGE_MODES, ppi_bradley_terry

    if judge not in JUDGE_MODES:
        raise EvalDataError(f"judge must be one of {JUDGE_MODES}, got {judge!r}.")
    if battles["outcome"].isna().any() or battles["judge"].isna().any():
        raise EvalDataError("A split study needs a human outcome and a judge value on every battle.")
    full = ppi_bradley_terry(battles, battles.iloc[0:0], alpha=alpha, lam=0.0, reference=reference)
    models = list(full["model"])
    reference = full.attrs["reference"]
    codes = {model: k for k, model in enumerate(models)}
    codes_a = battles["model_a"].map(codes).to_numpy(np.int64)
    codes_b = battles["model_b"].map(codes).to_numpy(np.int64)
    y = battles["outcome"].to_numpy(float)
    yhat = battles["judge"].to_numpy(float)
    if judge == "hard":
        yhat = np.where(yhat > 0.5, 1.0, np.where(yhat < 0.5, 0.0, 0.5))
    T, m, ref = len(battles), len(models), codes[reference]
    grid = sorted({int(v) for v in n_grid})
    if not grid or grid[0] < 2 or grid[-1] > T - 2:
        raise EvalDataError(f"Every labeled size n must lie in [2, {T - 2}] ({T} battles); got {grid}.")
    truth = full["coefficient"].to_numpy()
    truth_ranks = rankdata(-truth, method="average")
    chunk = 25  # fits are sequential per split: smaller units keep the progress bar moving
    units = [(n, c0, min(chunk, int(splits) - c0)) for n in grid for c0 in range(0, int(splits), chunk)]
    results = seeded_map(lambda i, rng: _bt_unit(codes_a, codes_b, y, yhat, m, ref, truth, truth_ranks,
                                                 units[i][0], units[i][2], alpha, rng),
                         len(units), seed, n_jobs=n_jobs, progress=progress)
    names = [model for model in models if model != reference]
    rows = []
    for n in grid:
        parts = [r for (un, _, _), r in zip(units, results) if un == n]
        joined = {k: {s: np.concatenate([p[k][s] for p in parts]) for s in parts[0][k]} for k in METHODS}
        # splits where every method has a finite estimate: the methods are compared on the same splits
        ok = np.logical_and.reduce([np.isfinite(joined[k]["sq"]).all(axis=1) for k in METHODS])
        if not ok.any():
            continue
        base = {j: float(joined["classical"]["sq"][ok, j].mean()) for j in range(m - 1)}
        for method in METHODS:
            stats = joined[method]
            for j, name in enumerate(names):
                per = {k: v[ok, j] for k, v in stats.items() if k != "rank_corr"}
                rows.append({**_summary(n, method, name, per, base[j]), "failed": 1 - ok.mean()})
            avg = {k: (v[ok].mean(axis=1) if v.ndim == 2 else v[ok]) for k, v in stats.items()}
            rows.append({**_summary(n, method, ALL_MODELS, avg, float(np.mean(list(base.values())))),
                         "failed": 1 - ok.mean()})
    frame = pd.DataFrame(rows)
    frame.attrs.update({"alpha": alpha, "splits": int(splits), "seed": int(seed), "total": T,
                        "reference": reference})
    return frame
