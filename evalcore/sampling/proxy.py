"""Proxies of the per-example metric for efficient evaluation: expected metrics and cross-fitted calibration.

Method: "A Framework for Efficient Model Evaluation through Stratification, Sampling, and Estimation" (Fogliato et
al., ``../shared/papers/stratified-sampling-evaluation.txt``), Section 3.2 (step 1 of Algorithm 1, *Predict*: a
proxy ``Zhat_i ~ E[Z_i | X_i]`` that is independent of the observed labels), Section 5.1 (isotonic calibration of the
proxy on labeled data disjoint from the estimation data) and Appendix B.2 (MSE and cross-entropy metrics).

Notation: ``f(X) = (f_1, ..., f_K)`` the evaluated model's class probabilities, ``q = (q_1, ..., q_K)`` a class
distribution used as the proxy's belief about ``Y`` (the model's own ``f`` by default, or an auxiliary model's
``f*``), ``Yhat = argmax_k f_k``. Expected per-example metrics under ``Y ~ q`` (Appendix B.2), with the second
moments needed by Neyman allocation's plug-in ``S^2_h = mean_h(Zhat^(2)) - mean_h(Zhat)^2``:

* accuracy, ``Z = 1(Y = Yhat)``: ``Zhat = q_Yhat``, ``Zhat^(2) = Zhat`` (``Z`` is 0/1);
* Brier / the paper's MSE, ``Z = (1 - f_Y)^2``: ``Zhat = sum_k q_k (1 - f_k)^2``, ``Zhat^(2) = sum_k q_k (1 - f_k)^4``;
* cross-entropy, ``Z = -log f_Y``: ``Zhat = -sum_k q_k log f_k``, ``Zhat^(2) = sum_k q_k (log f_k)^2``, with ``f``
  clipped below at ``1e-12`` so the logarithm is finite.

Cross-fitted isotonic calibration (Section 5.1). The paper calibrates ``Zhat`` by isotonic regression of ``Z`` on
``Zhat`` on a random half of the data and estimates on the other half, noting that one may instead cross-fit; it
must never calibrate and estimate on the same labels (the calibrated proxy would then depend on the labels it is
used to estimate, and the difference estimator would lose its design-unbiasedness). :func:`calibrate_crossfit`
cross-fits: the labeled examples are split at random (seeded) into ``folds`` folds; fold ``k``'s model is fitted on
the labeled examples of the *other* folds and gives the calibrated values of fold ``k``'s examples; every unlabeled
example gets the average of the ``folds`` models' predictions. No example's calibrated value is a function of its
own label. Fits are ``sklearn.isotonic.IsotonicRegression(increasing=True, out_of_bounds="clip")`` with ``y_min``,
``y_max`` from ``bounds`` (``(0, 1)`` for accuracy and Brier; pass ``(0, inf)``-like bounds for cross-entropy).

Public API
----------
``METRICS``: the metric names ``("accuracy", "brier", "cross_entropy")``;
``expected_metric(model_probs, proxy_probs, metric, predicted) -> (zhat, zhat_sq)`` expected metric and its second
moment per example;
``metric_range(metric) -> (low, high)`` the range of the per-example metric;
``check_proxy(proxy, metric) -> ndarray`` the proxy as float array, or an EvalDataError when it is non-finite or
outside the metric's range;
``calibrate_crossfit(proxy, z, labeled, folds, seed, bounds) -> CalibratedProxy`` values, folds, n_labeled;
``platt_fit(proxy, z, labeled) -> PlattFit`` shift, slope and their covariance: the two-parameter recalibration of
a 0/1 metric's proxy.

Platt recalibration (Platt 1999; the family ``sigmoid(a + b logit(p))`` of
:func:`evalcore.sampling.designs.recalibrated`): :func:`platt_fit` is the maximum-likelihood logistic regression of
the observed 0/1 ``z`` on ``logit(clip(proxy, 0.01, 0.99))``, by Newton's method. Two parameters are estimated
stably from a few hundred labels, where an isotonic fit's extreme blocks at exactly 0 and 1 understate the
variance ``g (1 - g)`` a labeling plan rests on.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalcore.data.reading import EvalDataError, listed

__all__ = [
    "METRICS",
    "CalibratedProxy",
    "expected_metric",
    "metric_range",
    "check_proxy",
    "calibrate_crossfit",
    "PlattFit",
    "platt_fit",
]

METRICS = ("accuracy", "brier", "cross_entropy")

_ROW_SUM_TOL = 1e-6
_LOG_FLOOR = 1e-12


def _check_metric(metric: str) -> str:
    if metric not in METRICS:
        raise EvalDataError(f"Unknown metric '{metric}': use one of {', '.join(METRICS)}.")
    return metric


def _probabilities(probs, name: str) -> np.ndarray:
    """``probs`` as a float (N, K) array of probability vectors, or an EvalDataError naming the bad rows."""
    arr = np.asarray(probs, dtype=float)
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] < 2:
        raise EvalDataError(
            f"{name} must be a 2-D array (examples x classes) with at least one row and two classes; got shape "
            f"{arr.shape}.")
    bad = np.flatnonzero(~np.isfinite(arr).all(axis=1))
    if len(bad):
        raise EvalDataError(f"{name} has missing or infinite probabilities in rows {listed(bad)}: fill or drop them.")
    bad = np.flatnonzero(((arr < 0) | (arr > 1)).any(axis=1))
    if len(bad):
        raise EvalDataError(
            f"{name} has values outside [0, 1] in rows {listed(bad)}: pass probabilities (apply a softmax to "
            f"logits), not scores.")
    sums = arr.sum(axis=1)
    bad = np.flatnonzero(np.abs(sums - 1.0) > _ROW_SUM_TOL)
    if len(bad):
        detail = listed(bad, fmt=lambda i: f"row {int(i)} sums to {sums[i]:.6g}")
        raise EvalDataError(
            f"{name} rows must sum to 1 (tolerance {_ROW_SUM_TOL:g}); {len(bad)} do not ({detail}): pass the full "
            f"class distribution of each example.")
    return arr


def expected_metric(model_probs, proxy_probs=None, metric: str = "accuracy",
                    predicted=None) -> tuple[np.ndarray, np.ndarray]:
    """Expected per-example metric and its second moment when ``Y ~ proxy_probs`` (module doc, Appendix B.2).

    ``model_probs`` (N, K): the evaluated model's probabilities ``f(X)``; ``proxy_probs`` (N, K): the class
    distribution ``q`` (default ``q = f``); ``predicted`` (N,): the model's predicted labels for accuracy (default
    ``argmax f``). Returns ``(zhat, zhat_sq)``, two float arrays of length N.
    """
    _check_metric(metric)
    f = _probabilities(model_probs, "model_probs")
    q = f if proxy_probs is None else _probabilities(proxy_probs, "proxy_probs")
    if q.shape != f.shape:
        raise EvalDataError(
            f"proxy_probs has shape {q.shape} but model_probs has {f.shape}: both need one row per example and "
            f"one column per class, in the same order.")
    if metric == "accuracy":
        if predicted is None:
            yhat = f.argmax(axis=1)
        else:
            yhat = np.asarray(predicted)
            if yhat.shape != (f.shape[0],):
                raise EvalDataError(
                    f"predicted must hold one label per example ({f.shape[0]}); got shape {yhat.shape}.")
            if not np.issubdtype(yhat.dtype, np.integer):
                as_float = np.asarray(yhat, dtype=float)
                if not np.all(np.isfinite(as_float)) or np.any(as_float != np.round(as_float)):
                    raise EvalDataError("predicted must hold integer class indices 0..K-1.")
                yhat = as_float.astype(np.int64)
            bad = np.flatnonzero((yhat < 0) | (yhat >= f.shape[1]))
            if len(bad):
                raise EvalDataError(
                    f"predicted has labels outside 0..{f.shape[1] - 1} in rows {listed(bad)}: labels are column "
                    f"indices of model_probs.")
        zhat = q[np.arange(f.shape[0]), yhat]
        return zhat.copy(), zhat.copy()
    if metric == "brier":
        loss = (1.0 - f) ** 2
    else:
        loss = -np.log(np.clip(f, _LOG_FLOOR, 1.0))
    return (q * loss).sum(axis=1), (q * loss ** 2).sum(axis=1)


def metric_range(metric: str) -> tuple[float, float]:
    """``(low, high)`` of the per-example metric: (0, 1) for accuracy and Brier, (0, inf) for cross-entropy."""
    _check_metric(metric)
    return (0.0, np.inf) if metric == "cross_entropy" else (0.0, 1.0)


def check_proxy(proxy, metric: str = "accuracy") -> np.ndarray:
    """``proxy`` as a 1-D float array; EvalDataError when it is empty, non-finite or outside ``metric_range``."""
    low, high = metric_range(metric)
    arr = np.asarray(proxy, dtype=float)
    if arr.ndim != 1 or arr.size == 0:
        raise EvalDataError(f"The proxy must be a non-empty 1-D array (one value per example); got shape {arr.shape}.")
    bad = np.flatnonzero(~np.isfinite(arr))
    if len(bad):
        raise EvalDataError(
            f"The proxy is missing or infinite at positions {listed(bad)}: every example needs a finite "
            f"predicted {metric} (fill them, e.g. with the mean proxy, or drop those examples).")
    bad = np.flatnonzero((arr < low) | (arr > high))
    if len(bad):
        values = listed(bad, fmt=lambda i: f"{int(i)}: {arr[i]:.6g}")
        raise EvalDataError(
            f"The proxy lies outside the range [{low:g}, {high:g}] of {metric} at {len(bad)} positions "
            f"(position: value {values}): pass the predicted per-example {metric} (e.g. a probability of "
            f"being correct for accuracy), not a score on another scale.")
    return arr


@dataclass(frozen=True)
class CalibratedProxy:
    """Cross-fitted calibrated proxy: ``values`` (length N), the number of ``folds`` and of labeled examples."""

    values: np.ndarray
    folds: int
    n_labeled: int


def calibrate_crossfit(proxy, z, labeled, folds: int = 2, seed: int = 0,
                       bounds: tuple[float, float] = (0.0, 1.0)) -> CalibratedProxy:
    """Cross-fitted isotonic calibration of ``proxy`` against the observed metric ``z`` (module doc).

    ``proxy`` (N,): the raw proxy; ``z`` (N,): the observed per-example metric, read only where ``labeled``
    (boolean mask, N) is True (it may be NaN elsewhere); ``folds`` >= 2; ``bounds``: the range the calibrated
    values are clipped to (``y_min``, ``y_max`` of the isotonic fits).
    """
    from sklearn.isotonic import IsotonicRegression

    p = np.asarray(proxy, dtype=float)
    if p.ndim != 1 or p.size == 0:
        raise EvalDataError(f"The proxy must be a non-empty 1-D array; got shape {p.shape}.")
    bad = np.flatnonzero(~np.isfinite(p))
    if len(bad):
        raise EvalDataError(f"The proxy is missing or infinite at positions {listed(bad)}: every example needs one.")
    zz = np.asarray(z, dtype=float)
    mask = np.asarray(labeled)
    if zz.shape != p.shape or mask.shape != p.shape:
        raise EvalDataError(
            f"proxy, z and labeled must have one value per example; got shapes {p.shape}, {zz.shape}, "
            f"{mask.shape}.")
    if mask.dtype != bool:
        raise EvalDataError("labeled must be a boolean mask (True where the example's metric z was observed).")
    if isinstance(folds, bool) or not isinstance(folds, (int, np.integer)) or folds < 2:
        raise EvalDataError(
            f"folds must be an integer of at least 2 (got {folds!r}): cross-fitting needs a fold to predict and "
            f"another to fit on.")
    low, high = float(bounds[0]), float(bounds[1])
    if not low < high:
        raise EvalDataError(f"bounds must be (low, high) with low < high; got {bounds!r}.")
    idx = np.flatnonzero(mask)
    if len(idx) < 2 * folds:
        raise EvalDataError(
            f"Only {len(idx)} labeled examples: cross-fitted calibration with {folds} folds needs at least "
            f"{2 * folds} (two per fold); label more examples or use fewer folds.")
    bad = idx[~np.isfinite(zz[idx])]
    if len(bad):
        raise EvalDataError(
            f"z is missing or infinite at labeled positions {listed(bad)}: mark them unlabeled or fill the metric.")
    if np.ptp(zz[idx]) == 0:
        raise EvalDataError(
            f"Every labeled example has the same metric z = {zz[idx[0]]:g}: isotonic calibration is undefined "
            f"(it would map the proxy to that constant); label more examples, including some with a different "
            f"outcome, or use the raw proxy.")

    rng = np.random.default_rng(seed)
    fold_of = np.empty(len(idx), dtype=np.int64)
    fold_of[rng.permutation(len(idx))] = np.arange(len(idx)) % folds
    values = np.empty_like(p)
    unlabeled = np.flatnonzero(~mask)
    unlabeled_sum = np.zeros(len(unlabeled))
    for k in range(folds):
        train = idx[fold_of != k]
        iso = IsotonicRegression(y_min=low if np.isfinite(low) else None,
                                 y_max=high if np.isfinite(high) else None,
                                 increasing=True, out_of_bounds="clip")
        iso.fit(p[train], zz[train])
        held = idx[fold_of == k]
        values[held] = iso.predict(p[held])
        if len(unlabeled):
            unlabeled_sum += iso.predict(p[unlabeled])
    values[unlabeled] = unlabeled_sum / folds
    return CalibratedProxy(values=values, folds=int(folds), n_labeled=int(len(idx)))


_LOGIT_CLIP = 0.01
_NEWTON_STEPS = 50


@dataclass(frozen=True)
class PlattFit:
    """Platt recalibration ``sigmoid(shift + slope * logit(p))`` and ``cov``, the 2 x 2 covariance of (shift, slope)
    (inverse observed Fisher information of the logistic likelihood)."""

    shift: float
    slope: float
    cov: np.ndarray
    n_labeled: int


def platt_fit(proxy, z, labeled) -> PlattFit:
    """``(shift, slope)`` maximising ``sum_i [z_i log g_i + (1 - z_i) log(1 - g_i)]`` over the labeled examples,
    ``g = sigmoid(shift + slope * logit(clip(proxy, 0.01, 0.99)))`` (module doc), by Newton's method from (0, 1).

    ``z`` is 0/1 where ``labeled`` (boolean mask) is True. EvalDataError with fewer than 2 labels of each outcome
    (the fit would run to infinity) or a proxy that takes one value on the labeled examples (no slope).
    """
    p = check_proxy(proxy, "accuracy")
    zz = np.asarray(z, dtype=float)
    mask = np.asarray(labeled)
    if zz.shape != p.shape or mask.shape != p.shape or mask.dtype != bool:
        raise EvalDataError("proxy, z and labeled (a boolean mask) must have one value per example.")
    y = zz[mask]
    if not np.isin(y, (0.0, 1.0)).all():
        raise EvalDataError("The labels must be 0/1 (correct or not) where labeled.")
    if min(y.sum(), y.size - y.sum()) < 2:
        raise EvalDataError(f"{int(y.sum())} of {y.size} labels are correct: a calibration of the proxy needs at "
                            "least 2 correct and 2 wrong; label more examples.")
    q = np.clip(p[mask], _LOGIT_CLIP, 1.0 - _LOGIT_CLIP)
    x = np.log(q / (1.0 - q))
    if np.ptp(x) == 0:
        raise EvalDataError("The proxy takes a single value on the labeled examples: no calibration slope.")
    design = np.column_stack([np.ones_like(x), x])

    def loglik(b):  # log sigmoid(t) = -logaddexp(0, -t)
        t = design @ b
        return -float(np.sum(y * np.logaddexp(0.0, -t) + (1.0 - y) * np.logaddexp(0.0, t)))

    def information(b):
        g = 1.0 / (1.0 + np.exp(-np.clip(design @ b, -500, 500)))
        return g, design.T @ (design * (g * (1.0 - g))[:, None])

    beta = np.array([0.0, 1.0])
    try:
        for _ in range(_NEWTON_STEPS):  # Newton's method, the step halved until the likelihood does not fall
            g, info = information(beta)
            step = np.linalg.solve(info, design.T @ (y - g))
            current = loglik(beta)
            while loglik(beta + step) < current and np.abs(step).max() > 1e-12:
                step = step / 2
            beta = beta + step
            if np.abs(step).max() < 1e-10:
                break
        else:  # no convergence: under separation the estimate runs off to infinity
            raise np.linalg.LinAlgError
        cov = np.linalg.inv(information(beta)[1])
        np.linalg.cholesky(cov)
    except np.linalg.LinAlgError:
        cov = None
    if cov is None or not np.isfinite(beta).all():
        raise EvalDataError("The labels separate correct from wrong by the proxy alone (every wrong one below "
                            "every correct one, or nearly): a calibration curve is not determined; label more "
                            "examples.")
    return PlattFit(float(beta[0]), float(beta[1]), cov, int(y.size))
