"""Efficient evaluation by stratified sampling: strata, budget allocation, estimators, predicted and simulated MSE.

Method: "A Framework for Efficient Model Evaluation through Stratification, Sampling, and Estimation"
(Fogliato et al., ``../shared/papers/stratified-sampling-evaluation.txt``), Sections 3-4 and Appendix A.

Setup (Section 3.1). A pool ``D`` of ``N`` unlabeled examples; the per-example metric ``Z_i`` (1 if the model
is correct for accuracy, or any other per-example score) is known only after labeling; a proxy ``Zhat_i``
(e.g. the model's calibrated confidence, an estimate of ``E[Z_i | X_i]``) is known for every example. The target
is ``theta_D = N^-1 sum_i Z_i``. The pool is partitioned into strata ``D_h`` (h = 0..H-1) of sizes ``N_h``,
weights ``W_h = N_h / N``; a budget of ``n`` labels is split into ``n_h`` per stratum (``sum n_h = n``),
sampling fractions ``f_h = n_h / N_h``, and each stratum is sampled by simple random sampling (SRS) without
replacement. SRS of the whole pool is the one-stratum case. All accuracies are fractions in [0, 1].

Estimators (Section 3.2), written with the achieved per-stratum counts:

* Horvitz-Thompson, eq. (1): ``theta_HT = N^-1 sum_{i in S} Z_i / pi_i = sum_h W_h zbar_h`` (``pi_i = f_h``),
  ``Var_hat = sum_h W_h^2 (1 - f_h) s_h^2 / n_h``, ``s_h^2`` the within-stratum sample variance (ddof=1).
* Difference (DF), eq. (2): ``theta_DF = N^-1 sum_{i in D} Zhat_i + sum_h W_h mean_{S_h}(Z - Zhat)``; its variance
  is that of HT applied to the residuals ``Z - Zhat`` (Section 4.1: replace ``Z`` by ``Z - Zhat``).
* Tuned difference (``df_tuned``, PPI++-style power tuning): residual ``Z - c Zhat`` with
  ``c = sum_h a_h cov_h(Z, Zhat) / sum_h a_h var_h(Zhat)``, ``a_h = W_h^2 (1 - f_h) / n_h`` (sample moments,
  ddof=1), which minimises the estimated variance ``sum_h a_h var_h(Z - c Zhat)``;
  ``theta = c mean_D(Zhat) + sum_h W_h mean_{S_h}(Z - c Zhat)``. ``c = 1`` is DF, ``c = 0`` is HT. Estimating
  ``c`` from the same labels adds an ``O(1/n)`` bias, negligible next to the ``O(1/sqrt(n))`` standard error.

Intervals: ``theta_hat +/- Phi^-1(1 - alpha/2) se`` (normal approximation, Section 4.1). For 0/1 labels the
estimate and interval are clipped to [0, 1] (DF can leave it); when the sample shows no variation (``se = 0``
short of a census, e.g. every label 1) the interval is the Wilson score interval of ``theta_hat`` with the
effective sample size ``n_eff = 1 / sum_h W_h^2 (1 - f_h) / n_h`` (``= n / (1 - f)`` under proportional
allocation: the stratified proportion's variance when all strata share one accuracy), so no interval has zero
width unless every example of the pool is labeled. Error messages number strata from 1, as the page's tables do.

Miscalibration range (:func:`efficiency_range`). The plug-in spreads assume a calibrated proxy; a raw confidence
rarely is, and Neyman allocation or DF chosen by an overconfident proxy can be worse than SRS. The designs the
proxy chooses are therefore also evaluated when the true ``E[Z | X]`` is any recalibration
``sigmoid(a + b logit(proxy))`` (a in -2..2, b in 0..2), and the smallest and largest relative efficiency shown.
:func:`labels_needed` plans under the worst member, or under a Platt fit to labels at hand (a pilot).

Design variances (Section 4.1). For any allocation, ``Var = sum_h W_h^2 (1 - f_h) S_h^2 / n_h`` with ``S_h^2``
the finite-population variance (``N_h - 1`` divisor) of ``Z`` (HT) or ``Z - Zhat`` (DF) in stratum h. Special
cases: SRS eq. (3) ``(1 - f) S_Z^2 / n``; proportional allocation ``n_h ∝ N_h`` eq. (4)
``(1 - f)/n sum_h W_h S_h^2``; Neyman allocation ``n_h ∝ N_h S_h`` eq. (5)
``n^-1 (sum_h W_h S_h)^2 - N^-1 sum_h W_h S_h^2``; Proposition 1, eq. (6): Neyman <= proportional <= SRS when
``S_h`` is exact. Before labeling ``S_h`` is unknown and is replaced by plug-ins from the proxy
(:func:`stratum_spread`): for accuracy ``S_h^2 ≈ Zbar_h (1 - Zbar_h)`` with ``Zbar_h`` the stratum mean of the
proxy (HT), and ``S_h^2 ≈ mean_h Zhat (1 - Zhat)`` for DF (the residual variance of a calibrated binary proxy,
the first term of (8) at ``Zhat = E[Z | X]``, Proposition 4).

Strata (Section 4.2). Proposition 2 / Corollary 3: the strata minimising the MSE (4)/(7) of HT under proportional
allocation are the k-means clusters of ``E[Z | X]``; :func:`kmeans_strata` clusters the proxy with the exact 1-D
k-means of :mod:`evalcore.sampling.kmeans1d`. :func:`feature_strata` clusters feature vectors (the paper's weaker
alternative) and :func:`group_strata` uses existing groups.

Public API
----------
``kmeans_strata(proxy, n_strata, seed) -> int array`` strata 0..H-1 ordered by proxy (Corollary 3);
``feature_strata(features, n_strata, seed, proxy) -> int array`` k-means on feature vectors;
``group_strata(groups) -> int array`` existing groups as strata;
``stratum_spread(strata, proxy, estimator, metric, proxy_sq) -> float array`` plug-in ``S_h``;
``stratum_variance(strata, values) -> float array`` the exact ``S_h^2`` of known values (ideal spreads);
``allocate_budget(strata, budget, method, proxy, estimator, metric, proxy_sq, spread) -> int array`` ``n_h``;
``draw_sample(strata, allocation, seed) -> int array`` sorted indices of a stratified SRS;
``estimate(z, sample_index, strata, proxy, estimator, alpha) -> Estimate`` HT / DF / tuned DF with interval;
``predicted_mse(proxy, strata, allocation, estimator, metric, proxy_sq, spread) -> float`` design variance;
``design_efficiency(proxy, budget, n_strata, seed, strata, metric, proxy_sq) -> DataFrame`` predicted MSEs;
``labels_needed(proxy, target_width, alpha, ..., labels, probability) -> DataFrame`` labels for an interval no
wider than a target on average (from a pilot's Platt fit, or the worst miscalibration), and the chance one sample
meets it;
``monte_carlo(z, proxy, budgets, n_strata, reps, seed, alpha, ...) -> DataFrame`` simulated MSE and coverage;
``simulate_design(z, strata, allocation, proxy, reps, seed, alpha) -> DataFrame`` realised estimates and widths;
``recalibrated(proxy, shift, slope) -> float array`` one Platt-style distortion of the proxy;
``efficiency_range(proxy, budget, n_strata, seed, strata, shifts, slopes) -> DataFrame`` predicted relative
efficiency with its range over plausible miscalibrations of the proxy (the prediction must not overpromise).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd
from scipy.special import expit
from scipy.stats import norm

from evalcore.engine import is_lazy, reductions
from evalcore.sampling.kmeans1d import kmeans_1d, kmeans_1d_binned
from evalcore.stats.parallel import random_subsets, seeded_map
from evalcore.sampling.proxy import check_proxy, platt_fit
from evalcore.data.reading import EvalDataError, listed

__all__ = [
    "Estimate",
    "DESIGNS",
    "ESTIMATORS",
    "kmeans_strata",
    "feature_strata",
    "group_strata",
    "stratum_spread",
    "stratum_variance",
    "allocate_budget",
    "draw_sample",
    "estimate",
    "predicted_mse",
    "design_efficiency",
    "labels_needed",
    "monte_carlo",
    "simulate_design",
    "recalibrated",
    "efficiency_range",
]

#: the (design, estimator) pairs compared by design_efficiency / labels_needed / monte_carlo, in row order
DESIGNS = ("srs", "proportional", "neyman")
ESTIMATORS = ("ht", "df")
_PAIRS = tuple((d, e) for d in DESIGNS for e in ESTIMATORS)
_MIN_PER_STRATUM = 2
_CHUNK = 125  # replicates per Monte Carlo work unit (fixed, so results do not depend on n_jobs)


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its standard error and normal interval.

    ``estimator`` is "ht", "df" or "df_tuned"; ``coefficient`` the weight ``c`` on the proxy (0 for HT, 1 for DF,
    the fitted value for the tuned DF); ``n`` the number of labels used; ``counts`` the achieved labels per
    stratum (index = stratum label).
    """

    estimate: float
    se: float
    ci_low: float
    ci_high: float
    n: int
    estimator: str
    coefficient: float
    counts: np.ndarray


# ---------------------------------------------------------------------------------------------- input checks


def _strata(strata) -> tuple[np.ndarray, np.ndarray]:
    """Stratum labels as int64 and the stratum sizes N_h (index = label); EvalDataError for bad labels."""
    s = np.asarray(strata)
    if s.ndim != 1 or s.size == 0:
        raise EvalDataError("The strata must be a non-empty list with one stratum label per example.")
    if s.dtype.kind == "b" or s.dtype.kind not in "iuf":
        raise EvalDataError("Stratum labels must be whole numbers 0..H-1 (use group_strata for named groups).")
    if s.dtype.kind == "f":
        bad = ~np.isfinite(s) | (s != np.round(s))
        if bad.any():
            raise EvalDataError(f"Stratum labels must be whole numbers; bad labels at positions "
                                f"{listed(np.flatnonzero(bad))}.")
    s = s.astype(np.int64)
    if (s < 0).any():
        raise EvalDataError(f"Stratum labels must be >= 0; negative labels at positions "
                            f"{listed(np.flatnonzero(s < 0))}.")
    return s, np.bincount(s)


def _values(x, n: int, what: str) -> np.ndarray:
    v = np.asarray(x, dtype=float).ravel()
    if v.size != n:
        raise EvalDataError(f"The {what} has {v.size} values but there are {n} examples: give one per example.")
    bad = ~np.isfinite(v)
    if bad.any():
        raise EvalDataError(
            f"The {what} has {int(bad.sum())} missing or infinite value(s) (positions {listed(np.flatnonzero(bad))}): "
            "fill or drop them."
        )
    return v


def _check_estimator(estimator: str, allowed=ESTIMATORS) -> str:
    if estimator not in allowed:
        raise ValueError(f"estimator must be one of {allowed}, got {estimator!r}.")
    return estimator


def _budget(budget) -> int:
    if isinstance(budget, (bool, np.bool_)):
        raise EvalDataError(f"The budget must be a whole number of labels, got {budget!r}.")
    try:
        b = float(budget)
    except (TypeError, ValueError):
        raise EvalDataError(f"The budget must be a whole number of labels, got {budget!r}.") from None
    if not np.isfinite(b) or b != np.round(b) or b < 0:
        raise EvalDataError(f"The budget must be a non-negative whole number of labels, got {budget!r}.")
    return int(b)


# ---------------------------------------------------------------------------------------------- strata


def kmeans_strata(proxy, n_strata: int, seed: int = 0) -> np.ndarray:
    """Strata from k-means on the proxy (Corollary 3): labels 0..H-1, stratum 0 has the lowest proxy values.

    Uses the exact 1-D k-means of :func:`evalcore.sampling.kmeans1d.kmeans_1d`, which minimises the within-strata sum of
    squares ``sum_h (N_h/N) S_{Zhat,h}^2`` of Proposition 2. ``seed`` is accepted for API stability only: the
    dynamic programme is deterministic. With fewer distinct proxy values than ``n_strata`` there are fewer strata
    (one per distinct value).
    """
    x = np.asarray(proxy, dtype=float).ravel()
    result = kmeans_1d(x, int(n_strata))
    if result.centers.size == 1 and n_strata > 1:
        raise EvalDataError(
            f"The proxy takes a single value ({result.centers[0]:g}) on all {x.size} examples, so it cannot "
            "separate examples into strata: use simple random sampling (one stratum), or a proxy that varies."
        )
    return result.labels


def feature_strata(features, n_strata: int, seed: int = 0, proxy=None) -> np.ndarray:
    """Strata from k-means on feature vectors (e.g. embeddings), Section 3.2 "Features X".

    ``sklearn.cluster.KMeans(n_clusters=n_strata, n_init=10, random_state=seed)`` on the (N, d) matrix (a 1-D
    input is one feature). Labels are renumbered 0..H-1 so that stratum 0 has the lowest mean proxy (or, without
    a proxy, the lowest mean of the first feature). At most N clusters.
    """
    from sklearn.cluster import KMeans

    f = np.asarray(features, dtype=float)
    if f.ndim == 1:
        f = f[:, None]
    if f.ndim != 2 or f.shape[0] == 0:
        raise EvalDataError("The features must be a non-empty (examples x features) table.")
    bad = ~np.isfinite(f).all(axis=1)
    if bad.any():
        raise EvalDataError(
            f"{int(bad.sum())} feature row(s) have missing or infinite values (rows {listed(np.flatnonzero(bad))}): "
            "fill or drop them."
        )
    if int(n_strata) < 1:
        raise ValueError(f"n_strata must be >= 1, got {n_strata!r}.")
    k = int(min(n_strata, f.shape[0]))
    labels = KMeans(n_clusters=k, n_init=10, random_state=seed).fit_predict(f)
    key = f[:, 0] if proxy is None else _values(proxy, f.shape[0], "proxy")
    used = np.unique(labels)
    means = np.array([key[labels == c].mean() for c in used])
    order = used[np.argsort(means, kind="stable")]
    remap = np.empty(labels.max() + 1, dtype=np.int64)
    remap[order] = np.arange(order.size)
    return remap[labels]


def group_strata(groups) -> np.ndarray:
    """Existing groups (e.g. a ``group`` column) as strata: codes of ``pd.factorize(groups, sort=True)``."""
    codes, _ = pd.factorize(pd.Series(np.asarray(groups, dtype=object).ravel()), sort=True)
    if (codes < 0).any():
        raise EvalDataError(
            f"{int((codes < 0).sum())} example(s) have no group (positions {listed(np.flatnonzero(codes < 0))}): "
            "fill them or drop them before stratifying by group."
        )
    return codes.astype(np.int64)


# ---------------------------------------------------------------------------------------------- spreads


def _sums(strata: np.ndarray, size: int, *columns: np.ndarray) -> list[np.ndarray]:
    return [np.bincount(strata, weights=c, minlength=size) for c in columns]


def stratum_variance(strata, values) -> np.ndarray:
    """Finite-population variance ``S_h^2`` (divisor ``N_h - 1``; 0 for N_h <= 1) of ``values`` per stratum.

    Used for the *ideal* spreads: ``sqrt(stratum_variance(strata, z))`` for HT and of ``z - proxy`` for DF are
    the exact ``S_h`` of Section 4.1 (pass them as ``spread`` to :func:`allocate_budget` / :func:`predicted_mse`).
    """
    s, nh = _strata(strata)
    v = _values(values, s.size, "values")
    total, = _sums(s, nh.size, v)
    mean = np.divide(total, nh, out=np.zeros(nh.size), where=nh > 0)
    ss, = _sums(s, nh.size, (v - mean[s]) ** 2)
    return np.divide(ss, nh - 1, out=np.zeros(nh.size), where=nh > 1)


def _spread_from_sums(nh, sum_p, sum_p2, sum_q, sum_pq, estimator: str, metric: str) -> np.ndarray:
    """Plug-in ``S_h^2`` from per-stratum sums of proxy, proxy^2, proxy_sq and (proxy (1-proxy) or residual)."""
    mean_p = np.divide(sum_p, nh, out=np.zeros(nh.size), where=nh > 0)
    if estimator == "ht":
        if metric == "accuracy":
            var = mean_p * (1.0 - mean_p)
        elif sum_q is not None:
            var = np.divide(sum_q, nh, out=np.zeros(nh.size), where=nh > 0) - mean_p**2
        else:
            var = np.divide(sum_p2, nh, out=np.zeros(nh.size), where=nh > 0) - mean_p**2
    else:
        if sum_pq is None:
            raise EvalDataError(
                "The difference estimator's residual spread for a metric other than accuracy needs an estimate "
                "of E[Z^2 | X] per example (proxy_sq): supply it, or plan with the HT estimator."
            )
        var = np.divide(sum_pq, nh, out=np.zeros(nh.size), where=nh > 0)
    return np.maximum(var, 0.0)


def _spread_parts(proxy, s, nh, metric, proxy_sq):
    """Per-stratum sums needed by the plug-in spreads (computed once, reused for many budgets)."""
    p = _values(proxy, s.size, "proxy")
    if metric == "accuracy":
        check_proxy(p, metric)
    q = None if proxy_sq is None else _values(proxy_sq, s.size, "proxy_sq")
    cols = [p, p * p]
    if q is not None:
        cols.append(q)
    if metric == "accuracy":
        cols.append(p * (1.0 - p))
    elif q is not None:
        cols.append(np.maximum(q - p * p, 0.0))
    sums = _sums(s, nh.size, *cols)
    sum_p, sum_p2 = sums[0], sums[1]
    sum_q = sums[2] if q is not None else None
    sum_pq = sums[-1] if (metric == "accuracy" or q is not None) else None
    return p, sum_p, sum_p2, sum_q, sum_pq


def stratum_spread(strata, proxy, estimator: str = "ht", metric: str = "accuracy", proxy_sq=None) -> np.ndarray:
    """Plug-in within-stratum standard deviation ``S_h`` (index = stratum label), from the proxy only.

    * HT, accuracy: ``sqrt(Zbar_h (1 - Zbar_h))``, ``Zbar_h`` the stratum mean of the proxy (the Bernoulli
      variance of a stratum with that accuracy; Section 5.2's ``S_hat_Zh``).
    * HT, other metric: ``sqrt(max(mean_h(proxy_sq) - Zbar_h^2, 0))`` with ``proxy_sq`` an estimate of
      ``E[Z^2 | X]``. Without ``proxy_sq`` the proxy's own within-stratum variance is used, which *understates*
      ``S_h`` (it ignores the noise of Z around its expectation).
    * DF, accuracy: ``sqrt(mean_h(proxy (1 - proxy)))``, the residual spread of a calibrated binary proxy
      (eq. (8) at ``Zhat = E[Z|X]``).
    * DF, other metric: ``sqrt(mean_h(max(proxy_sq - proxy^2, 0)))``; needs ``proxy_sq`` (EvalDataError otherwise).
    """
    _check_estimator(estimator)
    s, nh = _strata(strata)
    _, sum_p, sum_p2, sum_q, sum_pq = _spread_parts(proxy, s, nh, metric, proxy_sq)
    return np.sqrt(_spread_from_sums(nh, sum_p, sum_p2, sum_q, sum_pq, estimator, metric))


# ---------------------------------------------------------------------------------------------- allocation


def _check_capacity(nh: np.ndarray, budget: int) -> None:
    n_total = int(nh.sum())
    nonempty = int((nh > 0).sum())
    if budget > n_total:
        raise EvalDataError(
            f"The budget n = {budget} exceeds the pool of N = {n_total} examples: reduce the budget to at most "
            f"{n_total}."
        )
    single = np.flatnonzero(nh == 1)
    if single.size:
        raise EvalDataError(
            f"Stratum {listed(single + 1)} has only 1 example and cannot hold the 2 labels needed to "
            "estimate its variance: use fewer strata (or merge that stratum with a neighbour)."
        )
    if budget < _MIN_PER_STRATUM * nonempty:
        raise EvalDataError(
            f"A budget of {budget} labels cannot give the {nonempty} strata at least 2 labels each (needed to "
            f"estimate their variances): reduce the number of strata to at most budget // 2 = {budget // 2}, or "
            f"raise the budget to at least {2 * nonempty}."
        )


def _continuous(target: np.ndarray, nh: np.ndarray, budget: int) -> np.ndarray:
    """Continuous allocation ``x_h = clip(lam t_h, 2, N_h)`` with ``sum x_h = budget`` (empty strata get 0).

    This is the fixed point of "allocate ∝ t_h, clamp to [2, N_h], redistribute the remainder among the
    unclamped strata": ``sum_h clip(lam t_h, 2, N_h)`` is continuous and non-decreasing in ``lam``, so the
    breakpoints ``2/t_h`` and ``N_h/t_h`` are sorted and the exact ``lam`` interpolated between two of them.
    """
    ne = nh > 0
    lower = np.where(ne, float(_MIN_PER_STRATUM), 0.0)
    upper = nh.astype(float)
    t = np.where(ne, target, 0.0)
    pos = t > 0
    if not pos.any():
        return lower.copy()

    def total(lam: float) -> float:
        return float(np.clip(lam * t, lower, upper).sum())

    bps = np.unique(np.concatenate([lower[pos] / t[pos], upper[pos] / t[pos], [0.0]]))
    vals = np.array([total(b) for b in bps])
    j = int(np.searchsorted(vals, budget, side="left"))
    if j >= bps.size:  # every stratum with t_h > 0 is full: the rest of the budget goes ∝ N_h to the others
        full = np.where(pos, upper, 0.0)
        others = np.where(ne & ~pos, nh, 0)
        return full + _continuous(others.astype(float), others, budget - int(full.sum()))
    if j == 0 or vals[j] == budget:
        lam = bps[j]
    else:
        lam = bps[j - 1] + (budget - vals[j - 1]) * (bps[j] - bps[j - 1]) / (vals[j] - vals[j - 1])
    return np.clip(lam * t, lower, upper)


def _round(x: np.ndarray, nh: np.ndarray, budget: int) -> np.ndarray:
    """Largest-remainder rounding of ``x`` (within [2, N_h]) to integers summing to ``budget``, within [2, N_h]."""
    base = np.floor(x + 1e-9).astype(np.int64)
    lower = np.where(nh > 0, _MIN_PER_STRATUM, 0)
    base = np.clip(base, lower, nh)
    frac = x - base
    rest = budget - int(base.sum())
    while rest > 0:
        room = base < nh
        order = np.lexsort((np.arange(x.size), -frac))
        order = order[room[order]][:rest]
        base[order] += 1
        frac[order] -= 1.0
        rest = budget - int(base.sum())
    while rest < 0:
        room = base > lower
        order = np.lexsort((np.arange(x.size), frac))
        order = order[room[order]][:-rest]
        base[order] -= 1
        frac[order] += 1.0
        rest = budget - int(base.sum())
    return base


def _allocate(nh: np.ndarray, budget: int, weights: np.ndarray | None) -> np.ndarray:
    """Integer allocation ∝ N_h (weights None) or ∝ N_h S_h; falls back to proportional when all S_h are 0."""
    _check_capacity(nh, budget)
    target = nh.astype(float)
    if weights is not None:
        neyman = nh * np.asarray(weights, dtype=float)
        if np.any(neyman[nh > 0] > 0):
            target = neyman
    return _round(_continuous(target, nh, budget), nh, budget)


def allocate_budget(
    strata,
    budget: int,
    method: str = "proportional",
    proxy=None,
    estimator: str = "ht",
    metric: str = "accuracy",
    proxy_sq=None,
    spread=None,
) -> np.ndarray:
    """Labels per stratum ``n_h`` (index = stratum label) for a stratified SRS of ``budget`` labels.

    ``method="proportional"``: ``n_h ∝ N_h`` (the design of eq. (4)). ``method="neyman"``: ``n_h ∝ N_h S_h``
    (eq. (5)), with ``S_h`` from ``spread`` if given (e.g. the ideal ``S_Zh`` from true labels) or else the
    plug-in :func:`stratum_spread` of the proxy for ``estimator`` (HT: spread of Z; DF: of the residual). If every
    ``S_h`` is 0 Neyman falls back to proportional.

    Integer rule: the continuous target is clamped to ``[2, N_h]`` with the remainder redistributed among the
    unclamped strata, then rounded by largest remainders respecting the caps. The result sums exactly to the
    budget, gives every non-empty stratum at least 2 labels (so its variance can be estimated) and never more
    than ``N_h``. EvalDataError when the budget is not a whole number >= 0, exceeds N, is below 2 per non-empty
    stratum, or a stratum has a single example.
    """
    if method not in ("proportional", "neyman"):
        raise ValueError(f"method must be 'proportional' or 'neyman', got {method!r}.")
    _check_estimator(estimator)
    s, nh = _strata(strata)
    b = _budget(budget)
    weights = None
    if method == "neyman":
        if spread is not None:
            weights = np.asarray(spread, dtype=float).ravel()
            if weights.size != nh.size or not np.all(np.isfinite(weights)) or (weights < 0).any():
                raise EvalDataError(
                    f"spread must give one finite, non-negative standard deviation per stratum ({nh.size})."
                )
        elif proxy is None:
            raise EvalDataError(
                "Neyman allocation needs the within-stratum spread: pass the proxy (or an explicit spread), or "
                "use proportional allocation."
            )
        else:
            weights = stratum_spread(s, proxy, estimator, metric, proxy_sq)
    return _allocate(nh, b, weights)


# ---------------------------------------------------------------------------------------------- sampling


def _allocation(allocation, nh: np.ndarray) -> np.ndarray:
    a = np.asarray(allocation, dtype=float).ravel()
    if a.size < nh.size or (a.size > nh.size and np.any(a[nh.size :] != 0)):
        raise EvalDataError(f"The allocation has {a.size} counts but there are {nh.size} strata: give one per stratum.")
    a = a[: nh.size]
    if not np.all(np.isfinite(a)) or np.any(a != np.round(a)) or np.any(a < 0):
        raise EvalDataError("The allocation must hold non-negative whole numbers of labels per stratum.")
    a = a.astype(np.int64)
    over = np.flatnonzero(a > nh)
    if over.size:
        h = int(over[0])
        raise EvalDataError(f"Stratum {h + 1} is allocated {a[h]} labels but has only {nh[h]} examples.")
    return a


def _members(s: np.ndarray, nh: np.ndarray) -> list[np.ndarray]:
    order = np.argsort(s, kind="stable")
    return np.split(order, np.cumsum(nh)[:-1])


def draw_sample(strata, allocation, seed: int = 0) -> np.ndarray:
    """Sorted indices of a stratified SRS without replacement: ``allocation[h]`` examples from stratum h.

    ``numpy.random.default_rng(seed)``; SRS of n from N is ``draw_sample(np.zeros(N, int), [n], seed)``.
    """
    s, nh = _strata(strata)
    a = _allocation(allocation, nh)
    rng = np.random.default_rng(seed)
    picks = [rng.choice(m, size=int(k), replace=False) for m, k in zip(_members(s, nh), a) if k > 0]
    return np.sort(np.concatenate(picks)) if picks else np.zeros(0, dtype=np.int64)


# ---------------------------------------------------------------------------------------------- estimation


def _combine(wh, nh, n_h, mean_h, var_h):
    """Stratified point estimate and variance, eq. (1): ``sum W_h m_h``, ``sum W_h^2 (1 - f_h) v_h / n_h``.

    ``mean_h``/``var_h`` are (..., H); strata with ``n_h = 0`` (empty strata) contribute nothing.
    """
    used = n_h > 0
    a = np.where(used, wh**2 * (1.0 - n_h / np.maximum(nh, 1)) / np.maximum(n_h, 1), 0.0)
    theta = np.sum(np.where(used, wh * mean_h, 0.0), axis=-1)
    var = np.sum(np.where(used, a * var_h, 0.0), axis=-1)
    return theta, var


def estimate(z, sample_index, strata, proxy=None, estimator: str = "ht", alpha: float = 0.05) -> Estimate:
    """Estimate ``theta_D`` from the labeled sample of a stratified (or simple) random sample.

    ``z`` has length N (values outside the sample are ignored and may be NaN; this reading wins when the sample
    is the whole pool) or is aligned with ``sample_index``. ``estimator``: "ht" eq. (1), "df" eq. (2) or
    "df_tuned" (variance-minimising proxy coefficient); see the module docstring for the formulas. Works from the
    achieved counts ``n_h``. Interval: ``theta +/- Phi^-1(1 - alpha/2) se``.
    """
    _check_estimator(estimator, ("ht", "df", "df_tuned"))
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}.")
    s, nh = _strata(strata)
    n_pool = s.size
    idx = np.asarray(sample_index)
    if idx.ndim != 1 or idx.size == 0 or idx.dtype.kind not in "iu":
        raise EvalDataError("sample_index must be a non-empty list of whole-number example positions.")
    idx = idx.astype(np.int64)
    out = (idx < 0) | (idx >= n_pool)
    if out.any():
        raise EvalDataError(
            f"Sample positions {listed(idx[out])} are outside the pool of {n_pool} examples (0..{n_pool - 1})."
        )
    uniq, cnt = np.unique(idx, return_counts=True)
    if (cnt > 1).any():
        raise EvalDataError(
            f"Sample positions {listed(uniq[cnt > 1])} are repeated: a sample without replacement "
            "labels each example once."
        )
    zz = np.asarray(z, dtype=float).ravel()
    if zz.size == n_pool:
        zs = zz[idx]
    elif zz.size == idx.size:
        zs = zz
    else:
        raise EvalDataError(
            f"z has {zz.size} values: give one per pool example ({n_pool}) or one per sampled example ({idx.size})."
        )
    bad = ~np.isfinite(zs)
    if bad.any():
        raise EvalDataError(
            f"{int(bad.sum())} sampled example(s) have no label value (sample positions {listed(idx[bad])}): "
            "label them or drop them from the sample."
        )
    sh = s[idx]
    n_h = np.bincount(sh, minlength=nh.size)
    short = np.flatnonzero((nh > 0) & (n_h < _MIN_PER_STRATUM))
    if short.size:
        h = int(short[0])
        raise EvalDataError(
            f"Stratum {h + 1} has {int(n_h[h])} label(s) in the sample; every stratum needs at least 2 to estimate its "
            "variance: label more examples there or merge strata."
        )
    wh = nh / n_pool
    coef = 0.0
    resid = zs
    offset = 0.0
    if estimator != "ht":
        if proxy is None:
            raise EvalDataError("The difference estimator needs the proxy for every pool example.")
        p = _values(proxy, n_pool, "proxy")
        ps = p[idx]
        coef = 1.0
        if estimator == "df_tuned":
            m_h = np.maximum(n_h, 1)
            mz = np.bincount(sh, zs, nh.size) / m_h
            mp = np.bincount(sh, ps, nh.size) / m_h
            dz, dp = zs - mz[sh], ps - mp[sh]
            d = np.maximum(n_h - 1, 1)
            cov = np.bincount(sh, dz * dp, nh.size) / d
            vp = np.bincount(sh, dp * dp, nh.size) / d
            a = np.where(n_h > 0, wh**2 * (1 - n_h / np.maximum(nh, 1)) / m_h, 0.0)
            den = float(np.dot(a, vp))
            coef = float(np.dot(a, cov)) / den if den > 0 else 0.0
        resid = zs - coef * ps
        offset = coef * float(p.mean())
    m_h = np.maximum(n_h, 1)
    mean_h = np.bincount(sh, resid, nh.size) / m_h
    var_h = np.bincount(sh, (resid - mean_h[sh]) ** 2, nh.size) / np.maximum(n_h - 1, 1)
    theta, var = _combine(wh, nh, n_h, mean_h, var_h)
    theta = float(theta) + offset
    se = float(np.sqrt(max(float(var), 0.0)))
    q = float(norm.ppf(1 - alpha / 2))
    low, high = theta - q * se, theta + q * se
    if np.all((zs == 0) | (zs == 1)):  # a proportion: bounded interval, never zero-width short of a census
        census = bool(np.all(n_h == nh))
        if se == 0 and not census:
            low, high = _wilson(min(max(theta, 0.0), 1.0), _effective_size(wh, nh, n_h), q)
        theta, low, high = min(max(theta, 0.0), 1.0), max(low, 0.0), min(high, 1.0)
    return Estimate(
        estimate=theta,
        se=se,
        ci_low=low,
        ci_high=high,
        n=int(idx.size),
        estimator=estimator,
        coefficient=coef,
        counts=n_h,
    )


def _effective_size(wh: np.ndarray, nh: np.ndarray, n_h: np.ndarray) -> float:
    """``1 / sum_h W_h^2 (1 - f_h) / n_h`` over sampled, not fully enumerated strata (module doc, Intervals)."""
    used = (n_h > 0) & (n_h < nh)
    return float(1.0 / np.sum(wh[used] ** 2 * (1.0 - n_h[used] / nh[used]) / n_h[used]))


def _wilson(p: float, n: float, q: float) -> tuple[float, float]:
    """Wilson score interval of a proportion ``p`` observed on ``n`` (effective) trials, critical value ``q``."""
    centre = (p + q * q / (2 * n)) / (1 + q * q / n)
    half = q / (1 + q * q / n) * np.sqrt(p * (1 - p) / n + q * q / (4 * n * n))
    return (0.0 if p == 0 else float(centre - half)), (1.0 if p == 1 else float(centre + half))


# ---------------------------------------------------------------------------------------------- design variance


def _design_variance(nh: np.ndarray, n_h: np.ndarray, s2: np.ndarray) -> float:
    """``sum_h W_h^2 (1 - n_h/N_h) S_h^2 / n_h`` (eqs. (3)-(5) for the respective allocations)."""
    ne = nh > 0
    if np.any(ne & (n_h <= 0)):
        h = int(np.flatnonzero(ne & (n_h <= 0))[0])
        raise EvalDataError(f"Stratum {h + 1} gets no labels, so its mean cannot be estimated: allocate at least 2.")
    wh = nh / nh.sum()
    terms = np.where(ne, wh**2 * (1.0 - n_h / np.maximum(nh, 1)) * s2 / np.maximum(n_h, 1), 0.0)
    return float(terms.sum())


def predicted_mse(
    proxy, strata, allocation, estimator: str = "ht", metric: str = "accuracy", proxy_sq=None, spread=None
) -> float:
    """Design variance (= MSE, the estimators being design-unbiased) of a stratified SRS with ``allocation``.

    ``sum_h W_h^2 (1 - n_h/N_h) S_h^2 / n_h`` with the plug-in ``S_h`` of :func:`stratum_spread` (``Zhat`` in place
    of ``Z``), which reduces to eq. (3) for one stratum (SRS; for HT/accuracy ``S^2 = Zbar (1 - Zbar)``), eq. (4)
    under proportional and eq. (5) under Neyman allocation; for DF the residual spread, eq. (8). ``spread``
    (optional, one ``S_h`` per stratum) replaces the plug-in, e.g. the ideal ``S_Zh`` computed from true labels.
    """
    _check_estimator(estimator)
    s, nh = _strata(strata)
    n_h = _allocation(allocation, nh)
    if spread is not None:
        s2 = np.asarray(spread, dtype=float).ravel() ** 2
        if s2.size != nh.size:
            raise EvalDataError(f"spread must give one standard deviation per stratum ({nh.size}).")
    else:
        s2 = stratum_spread(s, proxy, estimator, metric, proxy_sq) ** 2
    return _design_variance(nh, n_h, s2)


class _Planner:
    """Per-stratum sums computed once; predicted MSE of the six (design, estimator) pairs for any budget."""

    def __init__(self, proxy, strata, n_strata, seed, metric, proxy_sq):
        if strata is None:
            strata = kmeans_strata(proxy, n_strata, seed)
        s, nh = _strata(strata)
        self.strata, self.nh = s, nh
        self.n = int(s.size)
        p, sum_p, sum_p2, sum_q, sum_pq = _spread_parts(proxy, s, nh, metric, proxy_sq)
        self.proxy = p
        one = np.array([self.n])
        tot = lambda a: None if a is None else np.array([a.sum()])  # noqa: E731
        self.s2 = {}
        self.note = ""
        for est in ESTIMATORS:
            try:
                self.s2[("strat", est)] = _spread_from_sums(nh, sum_p, sum_p2, sum_q, sum_pq, est, metric)
                self.s2[("srs", est)] = _spread_from_sums(
                    one, tot(sum_p), tot(sum_p2), tot(sum_q), tot(sum_pq), est, metric
                )
            except EvalDataError as exc:
                self.s2[("strat", est)] = self.s2[("srs", est)] = None
                self.note = str(exc)

    @classmethod
    def from_sums(cls, nh: np.ndarray, sum_p: np.ndarray, sum_p2: np.ndarray, sum_pq: np.ndarray) -> "_Planner":
        """A planner for accuracy from per-stratum N_h, Σp, Σp², Σp(1 - p) alone (no per-example proxy)."""
        planner = cls.__new__(cls)
        planner.strata, planner.nh, planner.n, planner.proxy, planner.note = None, nh, int(nh.sum()), None, ""
        one = np.array([planner.n])
        planner.s2 = {}
        for est in ESTIMATORS:
            planner.s2[("strat", est)] = _spread_from_sums(nh, sum_p, sum_p2, None, sum_pq, est, "accuracy")
            planner.s2[("srs", est)] = _spread_from_sums(one, np.array([sum_p.sum()]), np.array([sum_p2.sum()]),
                                                         None, np.array([sum_pq.sum()]), est, "accuracy")
        return planner

    def allocation(self, design: str, est: str, budget: int) -> tuple[np.ndarray, np.ndarray]:
        """(N_h, n_h) of the design at this budget; SRS is one stratum. Neyman uses the estimator's own S_h."""
        if design == "srs":
            b = _budget(budget)
            if b > self.n:
                _check_capacity(np.array([self.n]), b)
            if b < _MIN_PER_STRATUM:
                raise EvalDataError(f"A budget of {b} labels is too small: at least 2 are needed.")
            return np.array([self.n]), np.array([b])
        s2 = self.s2[("strat", est)]
        if design == "neyman" and s2 is None:
            s2 = self.s2[("strat", "ht")]
        weights = None if design == "proportional" else np.sqrt(s2)
        return self.nh, _allocate(self.nh, _budget(budget), weights)

    def mse(self, design: str, est: str, budget: int) -> float:
        key = ("srs" if design == "srs" else "strat", est)
        if self.s2[key] is None:
            return float("nan")
        nh, n_h = self.allocation(design, est, budget)
        return _design_variance(nh, n_h, self.s2[key])


def _budgets(budget) -> list[int]:
    if np.ndim(budget) == 0:
        return [_budget(budget)]
    out = [_budget(b) for b in budget]
    if not out:
        raise EvalDataError("Give at least one budget.")
    return out


def _efficiency_frame(planner: _Planner, budgets: list[int]) -> pd.DataFrame:
    rows = []
    for b in budgets:
        base = planner.mse("srs", "ht", b)
        for design, est in _PAIRS:
            m = planner.mse(design, est, b)
            rows.append((b, design, est, m, m / base if base > 0 else np.nan))
    frame = pd.DataFrame(rows, columns=["budget", "design", "estimator", "predicted_mse", "relative_efficiency"])
    frame.attrs["note"] = planner.note
    return frame


def design_efficiency_of_log(log, model: str, budget, proxy: str = "confidence", n_strata: int = 10,
                             resolution: int = 4096) -> pd.DataFrame:
    """:func:`design_efficiency` for one model of a log, with the model's ``proxy`` column (its confidence, or a
    judge's ``proxy``) on every example as the stand-in for correctness (metric accuracy).

    ``log`` is a canonical frame (the proxy values themselves) or a log in an engine
    (:class:`evalcore.engine.LazyLog`), for which the engine returns a histogram of the proxy in ``resolution``
    equal-width bins with per-bin n, Σp, Σp², Σp(1 - p); the strata are the optimal 1-D k-means among boundaries
    between bins (:func:`evalcore.sampling.kmeans1d.kmeans_1d_binned`, exact segment costs), and the plug-in spreads come
    from the strata's sums. With at most one distinct proxy value per bin (e.g. proxies with two decimals) the
    strata, and so every prediction, equal the in-memory ones."""
    if not is_lazy(log):
        rows = log[(log["model"] == model) & log[proxy].notna()]
        if rows.empty:
            raise EvalDataError(f"Model '{model}' has no row with a '{proxy}' value.")
        return design_efficiency(rows[proxy].to_numpy(float), budget, n_strata)
    log.require(proxy, method="The labeling design")
    hist = reductions.proxy_histogram(log, model, proxy, resolution)
    if hist.empty:
        raise EvalDataError(f"{log.source}: model '{model}' has no row with a '{proxy}' value.")
    bounds = kmeans_1d_binned(hist["n"], hist["sum_p"], hist["sum_p2"], n_strata)
    if len(bounds) == 2 and n_strata > 1:
        raise EvalDataError(f"The proxy takes a single value on all examples of '{model}', so it cannot separate "
                            "examples into strata: use simple random sampling (one stratum), or a proxy that varies.")
    sums = {c: np.add.reduceat(hist[c].to_numpy(float), bounds[:-1]) for c in ("n", "sum_p", "sum_p2", "sum_pq")}
    planner = _Planner.from_sums(sums["n"].astype(np.int64), sums["sum_p"], sums["sum_p2"], sums["sum_pq"])
    return _efficiency_frame(planner, _budgets(budget))


def design_efficiency(
    proxy, budget, n_strata: int = 10, seed: int = 0, strata=None, metric: str = "accuracy", proxy_sq=None
) -> pd.DataFrame:
    """Predicted MSE of SRS / proportional / Neyman x HT / DF at each budget (plug-in ``S_h`` from the proxy).

    Columns budget, design, estimator, predicted_mse, relative_efficiency (``predicted_mse`` over that of SRS+HT at
    the same budget; below 1 is better, as in the paper's Figure 2). Six rows per budget. Strata from
    :func:`kmeans_strata` unless given. Neyman uses each estimator's own optimal allocation (``S_h`` of Z for HT,
    of the residual for DF). For a non-accuracy metric without ``proxy_sq`` the DF rows are NaN (``attrs["note"]``
    says why).
    """
    planner = _Planner(proxy, strata, n_strata, seed, metric, proxy_sq)
    return _efficiency_frame(planner, _budgets(budget))


#: labels at hand below which :func:`labels_needed` plans for the worst miscalibration instead of a Platt fit
MIN_PILOT = 50


def labels_needed(
    proxy,
    target_width: float,
    alpha: float = 0.05,
    n_strata: int = 10,
    seed: int = 0,
    strata=None,
    metric: str = "accuracy",
    proxy_sq=None,
    labels=None,
    probability: float = 0.9,
    confidence: float = 0.9,
) -> pd.DataFrame:
    """Labels each (design, estimator) needs for an interval no wider than ``target_width``, on average.

    The designs are those the proxy chooses (strata, Neyman allocation by its plug-in spreads, DF subtracting
    it). Their design variance ``V(n)`` is evaluated under a model ``g`` of the true ``E[Z | X]``, with
    ``Z_i ~ Bernoulli(g_i)`` (:func:`_moments_under`): HT's ``S_h^2 = gbar_h (1 - gbar_h)``, DF's
    ``mean_h g (1 - g) + var_h(g - proxy)`` (the residual of a miscalibrated proxy has a bias part). The realised
    width ``2 Phi^-1(1-alpha/2) sqrt(V_hat)`` is random; since ``E sqrt(V_hat) <= sqrt(E V_hat) = sqrt(V)``
    (Jensen), ``V(n) <= (target / (2 Phi^-1(1-alpha/2)))^2`` makes the *mean* width at most the target.

    ``g``, in order of preference:

    * ``labels`` given (length N, the 0/1 label where known, NaN elsewhere: a pilot, or the labels at hand), at
      least :data:`MIN_PILOT` of them and not all alike (else the worst case below, ``attrs["basis"]`` says so):
      ``g = sigmoid(a + b logit(proxy))`` with (a, b) the Platt fit on them
      (:func:`evalcore.sampling.proxy.platt_fit`), and ``V(n)`` the largest over the fit's one-sided
      ``confidence`` region (:func:`_confidence_ring`: the estimate and 16 points of the ellipse of radius
      ``Phi^-1(confidence)``), so the pilot's own sampling error does not make the plan optimistic. An isotonic
      fit (:func:`evalcore.sampling.proxy.calibrate_crossfit`) is not used: with a few hundred labels its end
      blocks at exactly 0 and 1 understate ``g (1 - g)`` (mean width up to 1.24 x the target on ImageNet-X from
      200 labels). Measured in ``benchmarks/coverage/labels.py``.
    * no labels: the worst member of the recalibration family of :func:`efficiency_range` (the largest ``V(n)``
      over ``sigmoid(a + b logit(proxy))``, a in -2..2, b in 0..2, and the proxy itself): honest whatever the
      proxy's calibration within that family, at the price of more labels (the accuracy level itself is then
      unknown, and the worst member sits near 50%).

    Columns: design, estimator; ``labels_needed`` (the number to show first; N when even a census is needed,
    NaN when undefined); ``meets_target``, the probability that one sample of that size gives a width at most
    the target, ``Phi((limit - V) / sd(V_hat))`` under ``g`` with ``Var(V_hat)`` of
    :meth:`_Miscalibration.variance` (about one half at ``labels_needed``); ``labels_for_probability``, the
    smallest n with ``meets_target >= probability``; ``labels_needed_calibrated``, the plug-in count that
    assumes the proxy is calibrated (``g`` = proxy; too few labels when it is not: 1.27 x the target width for
    Neyman + DF on ImageNet-X with the raw confidence); ``labels_needed_worst``, the worst-case count above.
    ``attrs["basis"]`` says which ``g`` gave ``labels_needed``; ``confidence`` is the one-sided level of the Platt
    fit's region (0.9: from 200 pilot labels the mean width was 0.85-0.99 x the target on ImageNet-X). For metrics other than accuracy only
    ``labels_needed_calibrated`` is defined and ``labels_needed`` is that count (``attrs["note"]``).
    Binary search over n in [2H, N] ([2, N] for SRS).
    """
    try:
        width = float(target_width)
    except (TypeError, ValueError):
        raise EvalDataError(f"The target interval width must be a number, got {target_width!r}.") from None
    if not np.isfinite(width) or width <= 0:
        raise EvalDataError(f"The target interval width must be positive, got {target_width!r}.")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}.")
    if not 0 < probability < 1:
        raise ValueError(f"probability must be in (0, 1), got {probability!r}.")
    planner = _Planner(proxy, strata, n_strata, seed, metric, proxy_sq)
    limit = (width / (2 * float(norm.ppf(1 - alpha / 2)))) ** 2
    worst = calibrated = None
    if metric == "accuracy":
        worst = _Miscalibration(planner, RECALIBRATION_SHIFTS, RECALIBRATION_SLOPES)
        if labels is not None:
            known = np.asarray(labels, dtype=float).ravel()
            if known.size != planner.n:
                raise EvalDataError(f"labels has {known.size} values but there are {planner.n} examples: give one "
                                    "per example (NaN where unlabeled).")
            if np.isfinite(known).sum() >= MIN_PILOT:
                try:
                    fit = platt_fit(planner.proxy, np.nan_to_num(known), np.isfinite(known))
                except EvalDataError:  # e.g. every label the same: nothing to calibrate on
                    fit = None
                if fit is not None:
                    calibrated = _Miscalibration(planner, truths=[recalibrated(planner.proxy, a, b)
                                                                  for a, b in _confidence_ring(fit, confidence)])
    model = calibrated if calibrated is not None else worst

    def meets(design, est, n):
        var, spread = model.variance(design, est, n)
        k = int(np.argmax(var))  # the member the count is planned for: the largest variance
        sd = np.sqrt(spread[k])
        return float(norm.cdf((limit - var[k]) / sd)) if sd > 0 else float(var[k] <= limit)

    rows = []
    for design, est in _PAIRS:
        lo = 2 if design == "srs" else max(_MIN_PER_STRATUM * int((planner.nh > 0).sum()), 2)
        if lo > planner.n or np.isnan(planner.mse(design, est, planner.n)):
            rows.append((design, est, np.nan, np.nan, np.nan, np.nan, np.nan))
            continue
        plug_in = _smallest(lo, planner.n, lambda n: planner.mse(design, est, n) <= limit)
        if worst is None:
            rows.append((design, est, plug_in, np.nan, np.nan, plug_in, np.nan))
            continue
        worst_n = _smallest(lo, planner.n, lambda n: worst.variance(design, est, n)[0].max() <= limit)
        shown = worst_n if calibrated is None else _smallest(
            lo, planner.n, lambda n: calibrated.variance(design, est, n)[0].max() <= limit)
        sure = _smallest(lo, planner.n, lambda n: n == planner.n or meets(design, est, n) >= probability)
        rows.append((design, est, shown, meets(design, est, shown), sure, plug_in, worst_n))
    frame = pd.DataFrame(rows, columns=["design", "estimator", "labels_needed", "meets_target",
                                        "labels_for_probability", "labels_needed_calibrated", "labels_needed_worst"])
    frame.attrs["note"] = planner.note or ("" if worst is not None else
                                           "labels_needed assumes the proxy is calibrated (metric other than "
                                           "accuracy: no miscalibration model).")
    frame.attrs["basis"] = ("labels" if calibrated is not None else "worst case" if worst is not None
                            else "calibrated proxy")
    frame.attrs["probability"] = float(probability)
    return frame


_RING_POINTS = 16


def _confidence_ring(fit, confidence: float) -> list[tuple[float, float]]:
    """The Platt estimate and ``_RING_POINTS`` points of its ellipse ``beta_hat + z_confidence L u`` (``L L^T`` the
    covariance, ``|u| = 1``): the maximum of a smooth function of (shift, slope) over them is its one-sided
    ``confidence`` upper bound by the delta method (the maximum of ``c^T beta`` over the ellipse is
    ``c^T beta_hat + z sqrt(c^T cov c)``)."""
    centre = np.array([fit.shift, fit.slope])
    chol = np.linalg.cholesky(fit.cov)
    angles = np.linspace(0.0, 2 * np.pi, _RING_POINTS, endpoint=False)
    ring = centre + float(norm.ppf(confidence)) * (chol @ np.vstack([np.cos(angles), np.sin(angles)])).T
    return [tuple(centre)] + [tuple(point) for point in ring]


def _smallest(lo: int, hi: int, enough: Callable[[int], bool]) -> int:
    """Smallest n in [lo, hi] with ``enough(n)`` (assumed monotone, and true at ``hi``), by binary search."""
    if enough(lo):
        return lo
    while hi - lo > 1:  # invariant: not enough(lo), enough(hi)
        mid = (lo + hi) // 2
        if enough(mid):
            hi = mid
        else:
            lo = mid
    return hi


# ---------------------------------------------------------------------------------------------- Monte Carlo


def _mc_unit(members, zr, pr, offset, nh, n_h, reps, rng, q):
    """One work unit: ``reps`` stratified samples with allocation ``n_h``; HT and DF estimates and half-widths."""
    hcount = nh.size
    means = {e: np.zeros((reps, hcount)) for e in ESTIMATORS}
    vars_ = {e: np.zeros((reps, hcount)) for e in ESTIMATORS}
    for h in range(hcount):
        if n_h[h] == 0:
            continue
        pos = random_subsets(rng, int(nh[h]), int(n_h[h]), reps)
        idx = members[h][pos]
        zs = zr[idx]
        rs = zs - pr[idx]
        for e, vals in (("ht", zs), ("df", rs)):
            means[e][:, h] = vals.mean(axis=1)
            vars_[e][:, h] = vals.var(axis=1, ddof=1) if n_h[h] > 1 else 0.0
    wh = nh / nh.sum()
    out = {}
    for e in ESTIMATORS:
        theta, var = _combine(wh, nh, n_h, means[e], vars_[e])
        if e == "df":
            theta = theta + offset  # eq. (2): mean of the proxy over the pool plus the estimated mean residual
        out[e] = (theta, q * np.sqrt(np.maximum(var, 0.0)))
    return out


def simulate_design(z, strata, allocation, proxy=None, reps: int = 1000, seed: int = 0,
                    alpha: float = 0.05) -> pd.DataFrame:
    """Repeated samples of one stratified design on a fully labeled pool: the estimates and full interval widths.

    ``reps`` stratified samples with ``allocation[h]`` labels from stratum h (SRS: one stratum) are drawn and
    estimated by HT (eq. (1)) and, with a ``proxy``, DF (eq. (2)), each with the normal interval of
    :func:`estimate` (``2 Phi^-1(1 - alpha/2) se``; unclipped). Columns estimator, estimate, width, covered (the
    interval holds ``mean(z)``); ``reps`` rows per estimator. Chunks of 125 replicates with their own seeded
    streams, as :func:`monte_carlo`: the realised widths of a planned budget (does the plan deliver its width?).
    """
    s, nh = _strata(strata)
    zr = _values(z, s.size, "metric z (labels for every example)")
    pr = np.zeros(s.size) if proxy is None else _values(proxy, s.size, "proxy")
    n_h = _allocation(allocation, nh)
    if int(reps) < 2:
        raise ValueError(f"reps must be >= 2, got {reps!r}.")
    q = float(norm.ppf(1 - alpha / 2))
    members = _members(s, nh)
    chunks = [min(_CHUNK, int(reps) - c0) for c0 in range(0, int(reps), _CHUNK)]
    results = seeded_map(lambda i, rng: _mc_unit(members, zr, pr, float(pr.mean()), nh, n_h, chunks[i], rng, q),
                         len(chunks), seed, n_jobs=1)
    truth = float(zr.mean())
    frames = []
    for e in ESTIMATORS if proxy is not None else ("ht",):
        theta = np.concatenate([r[e][0] for r in results])
        half = np.concatenate([r[e][1] for r in results])
        frames.append(pd.DataFrame({"estimator": e, "estimate": theta, "width": 2 * half,
                                    "covered": np.abs(theta - truth) <= half}))
    return pd.concat(frames, ignore_index=True)


def monte_carlo(
    z,
    proxy,
    budgets,
    n_strata: int = 10,
    reps: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
    strata=None,
    metric: str = "accuracy",
    proxy_sq=None,
    n_jobs: int = -1,
    progress: Callable[[float], None] | None = None,
) -> pd.DataFrame:
    """Simulate the designs on a fully labeled pool: MSE, coverage and relative efficiency, next to the predictions.

    For each budget and each (design, estimator) of :func:`design_efficiency`, ``reps`` stratified samples are
    drawn and estimated (HT eq. (1), DF eq. (2); HT and DF share the samples of SRS and proportional designs;
    Neyman uses each estimator's own allocation). Columns: budget, design, estimator, mse (mean of
    ``(theta_hat - mean(z))^2``), mse_se (its standard error), relative_efficiency (mse over that of SRS+HT at the
    budget), coverage (share of ``1 - alpha`` normal intervals containing ``mean(z)``), predicted_mse (plug-in
    design variance from the proxy), predicted_relative_efficiency.

    Replicates are split in fixed chunks of 125, each with its own stream from ``SeedSequence(seed).spawn``, and
    run in parallel with joblib threads (``n_jobs=-1``: all cores); results do not depend on ``n_jobs``.
    ``progress(fraction)`` is called as chunks finish.
    """
    planner = _Planner(proxy, strata, n_strata, seed, metric, proxy_sq)
    zr = _values(z, planner.n, "metric z (labels for every example)")
    pr = planner.proxy
    bl = _budgets(budgets)
    if int(reps) < 2:
        raise ValueError(f"reps must be >= 2, got {reps!r}.")
    reps = int(reps)
    q = float(norm.ppf(1 - alpha / 2))
    members_strat = _members(planner.strata, planner.nh)
    members_srs = [np.arange(planner.n)]
    offset = float(pr.mean())

    # sampling designs: srs and proportional serve both estimators; neyman has one allocation per estimator
    designs = []
    for b in bl:
        designs.append((b, "srs", ESTIMATORS) + planner.allocation("srs", "ht", b))
        designs.append((b, "proportional", ESTIMATORS) + planner.allocation("proportional", "ht", b))
        for e in ESTIMATORS:
            designs.append((b, "neyman", (e,)) + planner.allocation("neyman", e, b))
    chunks = [(d, c0, min(_CHUNK, reps - c0)) for d in range(len(designs)) for c0 in range(0, reps, _CHUNK)]

    def run(i, rng):
        d, _, size = chunks[i]
        _, design, _, nh, n_h = designs[d]
        members = members_srs if design == "srs" else members_strat
        return _mc_unit(members, zr, pr, offset, nh, n_h, size, rng, q)

    results = seeded_map(run, len(chunks), seed, n_jobs=n_jobs, progress=progress)

    truth = float(zr.mean())
    collected: dict[tuple[int, str, str], list] = {}
    for (d, _, _), res in zip(chunks, results):
        b, design, ests, _, _ = designs[d]
        for e in ests:
            collected.setdefault((b, design, e), []).append(res[e])
    rows = []
    for b in bl:
        block = []
        for design, e in _PAIRS:
            parts = collected[(b, design, e)]
            theta = np.concatenate([p[0] for p in parts])
            half = np.concatenate([p[1] for p in parts])
            sq = (theta - truth) ** 2
            cover = float(np.mean(np.abs(theta - truth) <= half))
            block.append([b, design, e, float(sq.mean()), float(sq.std(ddof=1) / np.sqrt(sq.size)), cover,
                          planner.mse(design, e, b)])
        base, pbase = block[0][3], block[0][6]
        for r in block:
            rows.append((r[0], r[1], r[2], r[3], r[4], r[3] / base if base > 0 else np.nan, r[5], r[6],
                         r[6] / pbase if pbase > 0 else np.nan))
    frame = pd.DataFrame(
        rows,
        columns=["budget", "design", "estimator", "mse", "mse_se", "relative_efficiency", "coverage",
                 "predicted_mse", "predicted_relative_efficiency"],
    )
    frame.attrs["note"] = planner.note
    return frame


# ---------------------------------------------------------------------------------------------- miscalibration range

#: the recalibration family of :func:`efficiency_range`: ``sigmoid(shift + slope * logit(proxy))``
RECALIBRATION_SHIFTS = (-2.0, -1.0, 0.0, 1.0, 2.0)
RECALIBRATION_SLOPES = (0.0, 0.5, 1.0, 2.0)
_LOGIT_CLIP = 0.01


def recalibrated(proxy, shift: float, slope: float) -> np.ndarray:
    """``sigmoid(shift + slope * logit(clip(proxy, 0.01, 0.99)))``: one Platt-style distortion of the proxy.

    ``shift = 0, slope = 1`` is the proxy itself (clipped to [0.01, 0.99], so that a proxy of exactly 0 or 1 can
    still be wrong); ``slope < 1`` means the proxy is overconfident, ``shift`` moves the accuracy it implies.
    """
    p = np.clip(np.asarray(proxy, dtype=float), _LOGIT_CLIP, 1.0 - _LOGIT_CLIP)
    return expit(shift + slope * np.log(p / (1.0 - p)))  # expit: no overflow warning at extreme slopes


def _moments_under(g: np.ndarray, p: np.ndarray, s: np.ndarray, nh: np.ndarray) -> dict[tuple[str, str], tuple]:
    """Expected ``S_h^2`` and fourth central moment ``mu4_h`` of Z (HT) and of ``Z - p`` (DF) when
    ``Z_i ~ Bernoulli(g_i)``, per stratum (key "strat") and for the whole pool (key "srs").

    A stratum's value is ``a_i`` when ``Z_i = 1`` and ``b_i`` when ``Z_i = 0`` (HT: 1 and 0; DF: ``1 - p_i`` and
    ``-p_i``), the example drawn at random: ``m_h = mean_h(g a + (1 - g) b)``,
    ``S_h^2 = mean_h(g (a - m)^2 + (1 - g) (b - m)^2)`` (HT: ``gbar_h (1 - gbar_h)``; DF:
    ``mean_h g (1 - g) + var_h(g - p)``), ``mu4_h`` the same with fourth powers (population moments).
    """
    out = {}
    for key, labels, sizes in (("strat", s, nh), ("srs", np.zeros_like(s), np.array([s.size]))):
        m = lambda v: np.bincount(labels, weights=v, minlength=sizes.size) / np.maximum(sizes, 1)  # noqa: E731
        for est, a, b in (("ht", np.ones_like(p), np.zeros_like(p)), ("df", 1.0 - p, -p)):
            centre = m(g * a + (1.0 - g) * b)[labels]
            da, db = a - centre, b - centre
            da *= da
            db *= db
            out[(key, est)] = (np.maximum(m(g * da + (1.0 - g) * db), 0.0), m(g * da * da + (1.0 - g) * db * db))
    return out


class _Miscalibration:
    """The designs the proxy chooses, evaluated when the true ``E[Z | X]`` is each member ``g`` of the
    recalibration family (plus the proxy itself), or one given ``g`` (``truths``): design variances and the
    spread of their estimates per member (:func:`efficiency_range`, :func:`labels_needed`)."""

    def __init__(self, planner: _Planner, shifts=(), slopes=(), truths=None):
        p, s, nh = planner.proxy, planner.strata, planner.nh
        self.planner = planner
        if truths is None:
            truths = [recalibrated(p, a, b) for a in shifts for b in slopes] + [p]
        self.members = [_moments_under(g, p, s, nh) for g in truths]

    def _design(self, design: str, est: str, budget: int):
        nh_d, n_d = self.planner.allocation(design, est, budget)
        return nh_d, n_d, ("srs" if design == "srs" else "strat", est)

    def variance(self, design: str, est: str, budget: int) -> tuple[np.ndarray, np.ndarray]:
        """(design variance ``V``, variance of its estimate ``V_hat``) per member at this budget.

        ``V_hat = sum_h a_h s_h^2`` with ``a_h = W_h^2 (1 - f_h) / n_h``; ``Var(s_h^2) = mu4_h / n_h -
        S_h^4 (n_h - 3) / (n_h (n_h - 1))`` (the sample variance of n_h independent draws, sampling fractions
        being small), strata independent."""
        nh_d, n_d, key = self._design(design, est, budget)
        used = n_d > 0
        wh = nh_d / nh_d.sum()
        m = np.maximum(n_d, 2).astype(float)
        a = np.where(used, wh**2 * (1.0 - n_d / np.maximum(nh_d, 1)) / m, 0.0)
        var, spread = [], []
        for member in self.members:
            s2, mu4 = member[key]
            var.append(float(np.sum(a * s2)))
            spread.append(float(np.sum(a**2 * np.maximum(mu4 / m - s2**2 * (m - 3) / (m * (m - 1)), 0.0))))
        return np.array(var), np.array(spread)

    def relative(self, design: str, est: str, budget: int) -> np.ndarray:
        """MSE of the design over that of SRS + HT, one value per member (NaN where SRS + HT has MSE 0)."""
        var = self.variance(design, est, budget)[0]
        base = self.variance("srs", "ht", budget)[0]
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(base > 0, var / base, np.nan)


def efficiency_range(
    proxy, budget, n_strata: int = 10, seed: int = 0, strata=None,
    shifts=RECALIBRATION_SHIFTS, slopes=RECALIBRATION_SLOPES,
) -> pd.DataFrame:
    """Predicted relative efficiency of each (design, estimator) and its range under proxy miscalibration.

    The designs are those the proxy chooses (Neyman allocates by the proxy's own plug-in spreads, DF subtracts the
    proxy). ``predicted`` assumes the proxy is calibrated (``E[Z | X] = proxy``, as :func:`design_efficiency`);
    ``low`` / ``high`` are the smallest and largest relative efficiency (MSE / MSE of SRS + HT) of those same designs
    when the true ``E[Z | X]`` is any member ``g`` of the recalibration family :func:`recalibrated` over
    ``shifts`` x ``slopes`` (Platt fits of the ImageNet-X and scikit-learn demo models fall inside the default grid:
    shift -0.7..2.1, slope 0.6..1.5), with ``Z_i ~ Bernoulli(g_i)``: HT's ``S_h^2 = gbar_h (1 - gbar_h)``, DF's
    ``mean_h g (1 - g) + var_h(g - proxy)`` (the residual of a miscalibrated proxy has a bias part). The range
    always contains ``predicted`` (the proxy itself, shift 0 and slope 1 unclipped, is added to the family).

    Accuracy (0/1 correctness) only. Columns budget, design, estimator, predicted, low, high; six rows per budget.
    """
    planner = _Planner(proxy, strata, n_strata, seed, "accuracy", None)
    family = _Miscalibration(planner, shifts, slopes)
    rows = []
    for b in _budgets(budget):
        point = planner.mse("srs", "ht", b)
        for design, est in _PAIRS:
            rel = family.relative(design, est, b)
            pred = planner.mse(design, est, b) / point if point > 0 else np.nan
            finite = rel[np.isfinite(rel)]  # every member of the family can be undefined (a zero SRS variance)
            low, high = (float(finite.min()), float(finite.max())) if finite.size else (np.nan, np.nan)
            rows.append((b, design, est, pred, low, high))
    return pd.DataFrame(rows, columns=["budget", "design", "estimator", "predicted", "low", "high"])
