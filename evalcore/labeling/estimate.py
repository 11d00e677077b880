"""A campaign's estimate from the labels it holds, by its design's estimator, and the rule that says when to stop.

Each drawn example's value ``z_i`` is its settled label (agreeing labels, or the adjudicated one); values are read
on the metric's scale rescaled to [0, 1] (``t = (z - low) / spread``). N is the pool, S the drawn examples, n = |S|:

* ``srs``, ``proportional``, ``neyman`` (Horvitz-Thompson over strata, ``π_i = n_h / N_h``):
  ``θ = Σ_h W_h z̄_h``, ``v = Σ_h W_h² (1 - n_h/N_h) s_h² / n_h`` (:func:`evalcore.sampling.designs._combine`;
  ``W_h = N_h / N``).
* ``active`` (inverse-probability weighting with the proxy ``p`` as control variate, Zrnic & Candès 2024, eq. 3,
  with the priority-sampling inclusion probabilities ``π_i = min(1, u_i / τ)`` of :mod:`.queue`):
  ``θ = (1/N) [N a + λ Σ_{i ∈ N} p_i + Σ_{i ∈ S} r_i / π_i]``, ``r_i = z_i - a - λ p_i``,
  ``v = (1/N²) Σ_{i ∈ S} c_i (r_i / (1 - h_i))²``, ``c_i = (1 - π_i) / π_i²``, with (a, λ) minimising
  ``Σ c r²`` (weighted least squares: the generalised regression estimator, so a reversed or shuffled proxy costs no
  more than none) and ``h_i`` each example's leverage in that fit (HC3: the residual as if left out of the fit).
* ``ppi`` (PPI++, Angelopoulos, Duchi & Zrnic 2023, power-tuned, for the pool's accuracy: the judge's verdict
  ``yhat`` is known on every example of the pool, so only the rectifier is sampled):
  ``θ = λ mean_N(yhat) + mean_S(r)``, ``r = z - λ yhat``, ``v = (1 - n/N) s_r² / n``, with
  ``λ = Cov_S(z, yhat) / Var_S(yhat)`` clipped to [0, 1].

**No variance is taken as nil.** A run of equal labels is an accident of the sample, not knowledge: each sample
variance (a stratum's ``s_h²``, the PPI++ rectifier's ``s_r²``) is at least half a pseudo-event of unit squared
deviation, ``1 / (2 (n + 1))`` (:func:`floored_variance`; for 0/1 labels all alike about the Jeffreys posterior's
Bernoulli variance), and the active design's variance at least half an unseen unit residual at the largest weight,
``max c_i / 2N²``: residuals that vanish on a confident proxy do not make it nil.

**The interval** is the Wilson score interval at the design's effective sample size (Kish's ``n / deff``;
Korn & Graubard 1998 use Clopper-Pearson likewise for survey proportions): ``n* = θ (1 - θ) / v`` (at θ = 0 or 1,
where that is 0, the Jeffreys-smoothed ``θ̃ = (nθ + 1/2) / (n + 1)`` is used), and
``[c ± h]`` with ``c = (θ + k²/(2n*)) / (1 + k²/n*)``, ``h = k / (1 + k²/n*) · sqrt(θ(1 - θ)/n* + k²/(4n*²))``.
Where the variance is well estimated ``n*`` is large and this is ``θ ± k sqrt(v)``; near 0 or 1 it stays inside
the scale and does not collapse onto the estimate (an easy pool whose first labels are all right). The critical
value ``k`` is Student's t with the degrees of freedom the variance rests on (Satterthwaite 1946): for the
stratified designs ``(Σ a_h s_h²)² / Σ (a_h s_h²)² / (n_h - 1)`` (Cochran 1977, 5A.42), for the active design
``(Σ c_i r_i²)² / Σ (c_i r_i²)²`` (a few heavily weighted residuals make a variance as uncertain as a few degrees
of freedom), for PPI++ the disagreement between judge and humans seen so far, ``Σ |z_i - yhat_i|`` (a variance
made of d disagreements rests on about d of them). Under a stop rule read after every label these are what keep
the interval honest while the events that make its variance are still rare: a judge that agreed so far, a proxy
that called examples certain.

**Skipped and disputed examples stay in the design.** An example drawn but skipped, or whose labels disagree and
await adjudication, has an unknown value in ``[low_i, high_i]`` (a skip: the whole scale; a dispute: its labels'
range). The estimate is the design's estimator over the settled examples; the interval runs from the lower end of
the interval with every unknown value at its lowest to the upper end with every one at its highest (Manski's
worst-case bounds, widened by sampling error), so examples annotators skip because they are hard cannot bias the
interval, however unlike the others they are.

**Stopping.** People look after every label and stop once the interval is narrow enough: :attr:`LiveEstimate.stop`
is true when ``n ≥`` :data:`MIN_LABELS`, every stratum holds 2 labels, and the half-width is at most the target.
This is the fixed-width sequential interval of Chow & Robbins (1965): for a width rule (not a rule on the estimate
crossing a value) the fixed-n interval keeps its coverage asymptotically as the width shrinks. The floors and the
Wilson form keep it where that asymptotics is weakest (easy pools, a judge that agreed so far, an overconfident
proxy); ``benchmarks/labeling.py`` measures the coverage at the stop for every design on real and adversarial pools
(tests: ``tests/unit/test_labeling_honest.py``).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import norm
from scipy.stats import t as student_t

from evalcore.sampling.designs import _combine

#: no stop before this many labels (and 2 per stratum): early variances are too noisy to trust a width rule
MIN_LABELS = 30
ESTIMATORS = {"srs": "Horvitz-Thompson (sample mean)", "proportional": "stratified Horvitz-Thompson",
              "neyman": "stratified Horvitz-Thompson", "active": "inverse-probability weighting with the proxy as "
              "control variate", "ppi": "PPI++ with the AI judge"}
MEANING = ("A Wilson interval at the design's effective sample size, read after every label with a stop rule on its "
           "width (Chow & Robbins); skipped and disputed examples count at their worst and best values: if the "
           "campaign were run many times, about {level:.0%} of the intervals shown when it says stop would contain "
           "the value over the whole pool (measured by simulation for every design).")


@dataclass(frozen=True)
class LiveEstimate:
    """The estimate now: ``estimate`` with ``ci_low``–``ci_high`` at ``level`` (NaN before there are enough
    labels), its standard error ``se`` (the interval's half-width over ``z``: what a normal interval of the same
    width would use), ``labels`` (examples with a settled label), ``planned`` labels, ``needed`` (more labels for
    the target at the current variance; 0 once reached), ``stop`` (the target is reached), ``estimator`` (its name),
    ``meaning`` (one line on what the interval means), ``skipped`` and ``pending`` (drawn examples skipped without a
    label, or disputed and awaiting adjudication: both bound the interval)."""

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
    pending: int = 0

    @property
    def half_width(self) -> float:
        return (self.ci_high - self.ci_low) / 2

    def as_dict(self) -> dict:
        return {"estimate": self.estimate, "ci_low": self.ci_low, "ci_high": self.ci_high, "se": self.se,
                "labels": self.labels, "planned": self.planned, "needed": self.needed, "stop": self.stop,
                "target": self.target, "level": self.level, "design": self.design, "estimator": self.estimator,
                "meaning": self.meaning, "skipped": self.skipped, "pending": self.pending}


@functools.lru_cache(maxsize=16)
def critical_value(level: float) -> float:
    """``z_{1-α/2}`` of the normal interval at ``level`` (cached: the stop rule asks after every label)."""
    return float(norm.ppf(0.5 + level / 2))


def _critical(level: float, df: float) -> float:
    """``z_{1-α/2}``, or Student's ``t_{1-α/2, df}`` where the variance rests on ``df`` events."""
    return critical_value(level) if not math.isfinite(df) else float(student_t.ppf(0.5 + level / 2, df))


def _column(labeled, name: str, dtype=float) -> np.ndarray:
    """A column of ``labeled`` (a frame, or a mapping of arrays: the coverage simulation's fast path)."""
    return np.asarray(labeled[name], dtype=dtype)


def floored_variance(sum_sq_dev, n) -> np.ndarray:
    """A sample variance that is never nil: ``max(SS / (n - 1), 1 / (2 (n + 1)))`` for the sum of squared
    deviations ``SS`` of n values on the [0, 1] scale: at least half a pseudo-event of unit squared deviation (0/1
    labels all alike: about the Jeffreys posterior's Bernoulli variance ``p̃ (1 - p̃)``, ``p̃ = (n + 1/2) / (n + 1)``;
    it binds only while no value differs)."""
    ss = np.asarray(sum_sq_dev, dtype=float)
    n = np.asarray(n, dtype=float)
    return np.maximum(np.where(n > 1, ss / np.maximum(n - 1, 1), 0.0), 0.5 / (n + 1))


def _stratified(t: np.ndarray, h: np.ndarray, pool: dict) -> tuple[float, float, float] | None:
    sizes = np.asarray(pool["strata"], dtype=float)
    n_h = np.bincount(h, minlength=sizes.size).astype(float)
    if (n_h[sizes > 0] < 2).any():
        return None
    sum_h = np.bincount(h, t, sizes.size)
    mean_h = sum_h / np.maximum(n_h, 1)
    var_h = floored_variance(np.bincount(h, (t - mean_h[h]) ** 2, sizes.size), n_h)
    theta, var = _combine(sizes / sizes.sum(), sizes, n_h, mean_h, var_h)
    # Satterthwaite's degrees of freedom of a stratified variance (Cochran 1977, 5A.42)
    parts = np.where(n_h > 0, (sizes / sizes.sum()) ** 2 * (1 - n_h / sizes) * var_h / np.maximum(n_h, 1), 0.0)
    df = float(parts.sum()) ** 2 / float(np.sum(parts**2 / np.maximum(n_h - 1, 1))) if parts.any() else 1.0
    return float(theta), float(var), max(df, 1.0)


def inclusion_probabilities(labeled: pd.DataFrame, design: str, pool: dict, tau: float) -> np.ndarray:
    """Each drawn example's inclusion probability under the design, from the examples drawn: ``n_h / N_h`` (one
    stratum: n / N), or the active design's ``min(1, u_i / τ)`` (τ = 0, the whole pool: 1)."""
    if design == "active":
        u = _column(labeled, "weight")
        return np.ones(u.size) if tau <= 0 else np.minimum(1.0, u / tau)
    sizes = np.asarray(pool["strata"], dtype=float)
    h = _column(labeled, "stratum", np.int64)
    return np.bincount(h, minlength=sizes.size)[h] / sizes[h]


def _active(t: np.ndarray, p: np.ndarray, pi: np.ndarray, pool: dict) -> tuple[float, float, float]:
    c = (1 - pi) / pi**2
    a, lam = _control(t, p, c)
    n_pool, r = pool["N"], t - a - lam * p
    theta = (n_pool * a + lam * pool["sum_proxy"] + float(np.sum(r / pi))) / n_pool
    # each drawn example's share of the variance, its residual as if left out of the fit (r / (1 - h), h its
    # leverage in the weighted fit: the few heavily weighted examples pull the fit toward them, MacKinnon & White's
    # HC3); Satterthwaite's degrees of freedom; at least half a pseudo-event of unit residual at the largest weight
    # (as floored_variance): residuals that vanish on a confident proxy never make the variance nil
    parts = c * (r / (1 - _leverage(p, c))) ** 2
    df = float(parts.sum()) ** 2 / float(np.sum(parts * parts)) if parts.any() else 1.0
    return theta, max(float(parts.sum()), 0.5 * float(c.max())) / n_pool**2, max(df, 1.0)


def _leverage(p: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Each example's leverage in the weighted fit of :func:`_control`,
    ``h_i = c_i (1/Σc + (p_i - p̄)² / Σ c (p - p̄)²)`` (p̄ the weighted mean), capped at 0.9."""
    w = float(c.sum())
    if w <= 0:
        return np.zeros(c.size)
    mean_p = float(np.sum(c * p)) / w
    spread = float(np.sum(c * (p - mean_p) ** 2))
    h = c * (1 / w + ((p - mean_p) ** 2 / spread if spread > 0 else 0.0))
    return np.minimum(h, 0.9)


def _control(t: np.ndarray, p: np.ndarray, c: np.ndarray) -> tuple[float, float]:
    """The control variate ``a + λ p`` that minimises the variance ``Σ c (t - a - λ p)²``: weighted least squares
    (the generalised regression estimator, Särndal, Swensson & Wretman 1992, 6.5); with an intercept a misleading
    proxy (reversed, shuffled) costs no more than none. (0, 0) where the weights leave nothing to fit."""
    w = float(c.sum())
    if w <= 0:
        return 0.0, 0.0
    mean_t, mean_p = float(np.sum(c * t)) / w, float(np.sum(c * p)) / w
    spread = float(np.sum(c * (p - mean_p) ** 2))
    lam = float(np.sum(c * (p - mean_p) * (t - mean_t))) / spread if spread > 0 else 0.0
    return mean_t - lam * mean_p, lam


def _ppi(t: np.ndarray, yhat: np.ndarray, pool: dict, sum_judge: float) -> tuple[float, float, float]:
    n, n_pool = t.size, pool["N"]
    var_l = float(np.var(yhat, ddof=1))
    lam = float(np.clip(np.cov(t, yhat, ddof=1)[0, 1] / var_l, 0.0, 1.0)) if var_l > 0 else 0.0
    r = t - lam * yhat
    var_r = float(floored_variance(float(np.sum((r - r.mean()) ** 2)), n))
    theta = lam * sum_judge / n_pool + float(r.mean())
    return theta, (1 - n / n_pool) * var_r / n, max(float(np.sum(np.abs(t - yhat))), 1.0)


def wilson_at_effective_n(theta: float, var: float, n: int, z: float) -> tuple[float, float]:
    """The Wilson score interval of a proportion estimated as ``theta`` with design variance ``var`` from ``n``
    drawn examples: Wilson at ``n* = θ(1 - θ) / var`` (Jeffreys-smoothed θ at 0 or 1); see the module docstring."""
    t = min(max(theta, 0.0), 1.0)
    if var <= 0:
        return t, t  # a census: the pool's value itself
    spread = t * (1 - t) if 0 < t < 1 else (lambda s: s * (1 - s))((t * n + 0.5) / (n + 1))
    n_eff = spread / var
    z2 = z * z / n_eff
    center = (t + z2 / 2) / (1 + z2)
    half = z / (1 + z2) * math.sqrt(t * (1 - t) / n_eff + z * z / (4 * n_eff * n_eff))
    return (0.0 if t <= 0 else max(center - half, 0.0)), (1.0 if t >= 1 else min(center + half, 1.0))


def design_moments(design: str, t: np.ndarray, labeled, pool: dict, tau: float = 0.0, scale=(0.0, 1.0)
                   ) -> tuple[float, float, float] | None:
    """(θ, v, df): the design's estimate and variance on the [0, 1] scale of values ``t`` (one per drawn example of
    ``labeled``) and the degrees of freedom of v (the module docstring), or None before the design can estimate."""
    if t.size < 2:
        return None
    spread = scale[1] - scale[0]
    if design == "active":
        pi = inclusion_probabilities(labeled, "active", pool, tau)
        return _active(t, _column(labeled, "proxy"), pi, pool)
    if design == "ppi":
        yhat = (_column(labeled, "judge") - scale[0]) / spread
        return _ppi(t, yhat, pool, (pool["sum_judge"] - scale[0] * pool["N"]) / spread)
    return _stratified(t, _column(labeled, "stratum", np.int64), pool)


def _subset(labeled, keep: np.ndarray):
    """The rows ``keep`` of ``labeled`` (a frame or a mapping of arrays)."""
    if isinstance(labeled, pd.DataFrame):
        return labeled[keep]
    return {k: np.asarray(v)[keep] for k, v in labeled.items()}


def live_estimate(labeled, design: str, pool: dict, planned: int, target: float | None,
                  level: float, tau: float = 0.0, skipped: int = 0, scale: tuple[float, float] = (0.0, 1.0),
                  pending: int = 0) -> LiveEstimate:
    """The estimate of ``design`` from ``labeled`` (one row per drawn example: ``value`` (NaN where unknown),
    ``low`` and ``high`` (the range of an unknown value; absent: every value known), ``stratum``, ``weight``,
    ``proxy``, ``judge``); ``pool`` and ``planned`` from :class:`.queue.QueuePlan`; ``tau`` the active design's
    threshold (the priority just past the drawn part of the queue); ``skipped`` and ``pending`` the counts of
    unknown values by cause (for the sentence)."""
    value = _column(labeled, "value")
    known = np.isfinite(value)
    spread = scale[1] - scale[0]
    n_known = int(known.sum())
    low = high = theta = se = math.nan
    settled = _subset(labeled, known) if not known.all() else labeled
    point = design_moments(design, (value[known] - scale[0]) / spread, settled, pool, tau, scale) if n_known else None
    ready = point is not None
    if ready:
        z = _critical(level, point[2])
        if known.all():
            low, high = wilson_at_effective_n(point[0], point[1], value.size, z)
        else:  # Manski: every unknown value at its lowest, then at its highest (the design counts every draw)
            bounds = []
            for end, fill in ((0, "low"), (1, "high")):
                t = np.where(known, value, _column(labeled, fill))
                found = design_moments(design, (t - scale[0]) / spread, labeled, pool, tau, scale)
                ready = ready and found is not None
                if found is not None:
                    bounds.append(wilson_at_effective_n(found[0], found[1], value.size,
                                                        _critical(level, found[2]))[end])
            if ready:
                low, high = bounds
    if ready:
        theta = scale[0] + spread * min(max(point[0], 0.0), 1.0)
        low, high = scale[0] + spread * low, scale[0] + spread * high
        theta = min(max(theta, low), high)
        se = (high - low) / (2 * critical_value(level))
    n = value.size
    half = (high - low) / 2 if ready else math.inf
    stop = bool(ready and (n >= planned if target is None else n >= MIN_LABELS and half <= target))
    if target is None:
        needed = max(planned - n, 0)
    elif stop:
        needed = 0
    elif ready and half > 0 and math.isfinite(half):
        needed = max(math.ceil(n * (half / target) ** 2) - n, MIN_LABELS - n, 1)
    else:
        needed = max(planned - n, MIN_LABELS - n, 1)
    return LiveEstimate(theta, low, high, se, n_known, planned, min(needed, pool["N"] - n), stop, target, level,
                        design, ESTIMATORS[design], MEANING.format(level=level), skipped, pending)
