"""A campaign's estimate from the labels it holds, by its design's estimator, and the rule that says when to stop.

Each labeled example's value ``z_i`` is the mean of its current labels (one label, or k with overlap). N is the
pool, S the labeled examples, n = |S|, and the interval is ``θ ± z_{1-α/2} se`` (clipped to the metric's scale):

* ``srs``, ``proportional``, ``neyman`` (Horvitz-Thompson over strata, ``π_i = n_h / N_h``):
  ``θ = Σ_h W_h z̄_h``, ``se² = Σ_h W_h² (1 - n_h/N_h) s_h² / n_h`` (:func:`evalcore.sampling.designs._combine`;
  ``W_h = N_h / N``; a stratum whose 0/1 labels are all alike gets the variance floor of
  :func:`evalcore.ppi.means.binary_floor`, so 20 of 20 right never means a zero-width interval).
* ``active`` (inverse-probability weighting with the proxy ``p`` as control variate, Zrnic & Candès 2024, eq. 3,
  with the priority-sampling inclusion probabilities ``π_i = min(1, u_i / τ)`` of :mod:`.queue`):
  ``θ = (1/N) [λ Σ_{i ∈ N} p_i + Σ_{i ∈ S} (z_i - λ p_i) / π_i]``,
  ``se² = (1/N²) Σ_{i ∈ S} (1 - π_i) / π_i² (z_i - λ p_i)²``, with λ minimising that variance (clipped to [0, 1]).
* ``ppi`` (PPI++, Angelopoulos, Duchi & Zrnic 2023, power-tuned, for the pool's accuracy: the judge's verdict
  ``yhat`` is known on every example of the pool, so only the rectifier is sampled):
  ``θ = λ mean_N(yhat) + mean_S(z - λ yhat)``, ``se² = (1 - n/N) Var_S(z - λ yhat) / n``, with
  ``λ = Cov_S(z, yhat) / Var_S(yhat)`` clipped to [0, 1], the λ that minimises that variance (with λ = 0, the
  sample mean and its 0/1 floor).

**Stopping.** People look after every label and stop once the interval is narrow enough: :attr:`LiveEstimate.stop`
is true when ``n ≥`` :data:`MIN_LABELS`, every stratum holds 2 labels, and the half-width is at most the target.
This is the fixed-width sequential interval of Chow & Robbins (1965): for a width rule (not a rule on the estimate
crossing a value) the fixed-n interval keeps its coverage asymptotically as the width shrinks; the simulation in
``tests/unit/test_labeling_coverage.py`` measures it at the stopping time for every design, against the nominal
level (and the same interval at a fixed n without the rule).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import norm

from evalcore.ppi.means import binary_floor
from evalcore.sampling.designs import _combine

#: no stop before this many labels (and 2 per stratum): early variances are too noisy to trust a width rule
MIN_LABELS = 30
ESTIMATORS = {"srs": "Horvitz-Thompson (sample mean)", "proportional": "stratified Horvitz-Thompson",
              "neyman": "stratified Horvitz-Thompson", "active": "inverse-probability weighting with the proxy as "
              "control variate", "ppi": "PPI++ with the AI judge"}
MEANING = ("A fixed-n normal interval read after every label, with a stop rule on its width (Chow & Robbins): if "
           "the campaign were run many times, about {level:.0%} of the intervals shown when it says stop would "
           "contain the value over the whole pool (measured by simulation for every design).")


@dataclass(frozen=True)
class LiveEstimate:
    """The estimate now: ``estimate`` with ``ci_low``–``ci_high`` at ``level`` (NaN before there are enough
    labels), its standard error ``se``, ``labels`` (labeled examples), ``planned`` labels, ``needed`` (more labels
    for the target at the current variance; 0 once reached), ``stop`` (the target is reached), ``estimator`` (its
    name) and ``meaning`` (one line on what the interval means)."""

    estimate: float
    ci_low: float
    ci_high: float
    se: float
    labels: int
    planned: int
    needed: int
    stop: bool
    target: float | None
    level: float
    design: str
    estimator: str
    meaning: str
    skipped: int = 0

    @property
    def half_width(self) -> float:
        return (self.ci_high - self.ci_low) / 2

    def as_dict(self) -> dict:
        return {"estimate": self.estimate, "ci_low": self.ci_low, "ci_high": self.ci_high, "se": self.se,
                "labels": self.labels, "planned": self.planned, "needed": self.needed, "stop": self.stop,
                "target": self.target, "level": self.level, "design": self.design, "estimator": self.estimator,
                "meaning": self.meaning, "skipped": self.skipped}


@functools.lru_cache(maxsize=16)
def critical_value(level: float) -> float:
    """``z_{1-α/2}`` of the normal interval at ``level`` (cached: the stop rule asks after every label)."""
    return float(norm.ppf(0.5 + level / 2))


def _column(labeled, name: str, dtype=float) -> np.ndarray:
    """A column of ``labeled`` (a frame, or a mapping of arrays: the coverage simulation's fast path)."""
    return np.asarray(labeled[name], dtype=dtype)


def _stratified(labeled: pd.DataFrame, pool: dict) -> tuple[float, float, bool]:
    sizes = np.asarray(pool["strata"], dtype=float)
    h, z = _column(labeled, "stratum", np.int64), _column(labeled, "value")
    n_h = np.bincount(h, minlength=sizes.size).astype(float)
    if (n_h[sizes > 0] < 2).any():
        return math.nan, math.nan, False
    mean_h = np.bincount(h, z, sizes.size) / n_h
    var_h = np.bincount(h, (z - mean_h[h]) ** 2, sizes.size) / (n_h - 1)
    binary = bool(np.isin(z, (0.0, 1.0)).all())
    var_h = np.maximum(var_h, binary_floor(np.bincount(h, z, sizes.size), n_h, binary) / n_h)
    theta, var = _combine(sizes / sizes.sum(), sizes, n_h, mean_h, var_h)
    return float(theta), float(math.sqrt(max(float(var), 0.0))), True


def inclusion_probabilities(labeled: pd.DataFrame, design: str, pool: dict, tau: float) -> np.ndarray:
    """Each labeled example's inclusion probability under the design, from the labels held: ``n_h / N_h`` (one
    stratum: n / N), or the active design's ``min(1, u_i / τ)`` (τ = 0, the whole pool: 1)."""
    if design == "active":
        u = _column(labeled, "weight")
        return np.ones(u.size) if tau <= 0 else np.minimum(1.0, u / tau)
    sizes = np.asarray(pool["strata"], dtype=float)
    h = _column(labeled, "stratum", np.int64)
    return np.bincount(h, minlength=sizes.size)[h] / sizes[h]


def _active(labeled: pd.DataFrame, pool: dict, tau: float) -> tuple[float, float, bool]:
    pi = inclusion_probabilities(labeled, "active", pool, tau)
    z, p = _column(labeled, "value"), _column(labeled, "proxy")
    c = (1 - pi) / pi**2
    denominator = float(np.sum(c * p * p))
    lam = float(np.clip(np.sum(c * z * p) / denominator, 0.0, 1.0)) if denominator > 0 else 0.0
    n_pool = pool["N"]
    theta = (lam * pool["sum_proxy"] + float(np.sum((z - lam * p) / pi))) / n_pool
    var = float(np.sum(c * (z - lam * p) ** 2)) / n_pool**2
    return theta, math.sqrt(var), True


def _ppi(labeled, pool: dict) -> tuple[float, float, bool]:
    y, yhat = _column(labeled, "value"), _column(labeled, "judge")
    n, n_pool = y.size, pool["N"]
    var_l = float(np.var(yhat, ddof=1))
    lam = float(np.clip(np.cov(y, yhat, ddof=1)[0, 1] / var_l, 0.0, 1.0)) if var_l > 0 else 0.0
    residual = y - lam * yhat
    binary = bool(np.isin(y, (0.0, 1.0)).all())
    var_r = max(float(np.var(residual, ddof=1)), float(binary_floor(y.sum(), n, binary)) / n * (lam == 0))
    theta = lam * pool["sum_judge"] / n_pool + float(residual.mean())
    return theta, math.sqrt((1 - n / n_pool) * var_r / n), True


def live_estimate(labeled: pd.DataFrame, design: str, pool: dict, planned: int, target: float | None,
                  level: float, tau: float = 0.0, skipped: int = 0, scale: tuple[float, float] = (0.0, 1.0)
                  ) -> LiveEstimate:
    """The estimate of ``design`` from ``labeled`` (one row per labeled example: ``value``, ``stratum``,
    ``weight``, ``proxy``, ``judge``); ``pool`` and ``planned`` from :class:`.queue.QueuePlan`; ``tau`` the active
    design's threshold (the priority just past the labeled part of the queue)."""
    n = len(_column(labeled, "value"))
    theta = se = math.nan
    ready = False
    if n >= 2:
        if design == "active":
            theta, se, ready = _active(labeled, pool, tau)
        elif design == "ppi":
            theta, se, ready = _ppi(labeled, pool)
        else:
            theta, se, ready = _stratified(labeled, pool)
    z = critical_value(level)
    low, high = (max(theta - z * se, scale[0]), min(theta + z * se, scale[1])) if ready else (math.nan, math.nan)
    if ready:
        theta = min(max(theta, scale[0]), scale[1])
    half = z * se if ready else math.inf
    stop = bool(ready and (n >= planned if target is None else n >= MIN_LABELS and half <= target))
    if target is None:
        needed = max(planned - n, 0)
    elif stop:
        needed = 0
    elif ready and se > 0:
        needed = max(math.ceil(n * (half / target) ** 2) - n, MIN_LABELS - n, 1)
    else:
        needed = max(planned - n, MIN_LABELS - n, 1)
    return LiveEstimate(theta, low, high, se, n, planned, min(needed, pool["N"] - n), stop, target, level, design,
                        ESTIMATORS[design], MEANING.format(level=level), skipped)
