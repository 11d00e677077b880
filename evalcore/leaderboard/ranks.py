"""Rankings with ties from simultaneous confidence intervals.

Two inputs, one reading: a model is ranked below another only when the intervals say so for sure.

* Intervals of each model's value (``rank_with_ties``). Method: "AutoEval Done Right" (Boyeau et al.,
  ``../shared/papers/autoeval-ppi.txt``), Section 2.3 and Supplement C.2 (*Model ranking*): intervals are
  Bonferroni-corrected over the ``M`` models, "models with overlapping confidence intervals were assigned the same
  rank". The rule used here makes that precise and transitive-safe: model ``m``'s rank is ``1 +`` the number of
  models whose whole interval lies above ``m``'s (``low_k > high_m``), i.e. the number of models that are
  significantly better. Models whose intervals overlap the leader's all share rank 1; a model is ranked below
  another only when their intervals are disjoint. Larger values are better.
* Simultaneous intervals of the pairwise differences (``rank_bounds``), as the leaderboard's
  :func:`evalcore.leaderboard.bootstrap.pairwise_differences` gives them: model ``m``'s rank lies in ``[1 + #{k:
  s_k - s_m > 0 for sure}, M - #{k: s_m - s_k > 0 for sure}]`` (Mogstad, Romano, Shaikh & Wilhelm 2024, "Inference
  for ranks", Review of Economic Studies 91, Section 3): when all difference intervals hold, every true rank lies in
  its interval, so the rank intervals hold together at the differences' level. A difference interval is tighter
  than two overlapping value intervals, so these rank intervals are the narrower of the two.

Public API: ``bonferroni_z(alpha, m)``, ``rank_with_ties(low, high) -> int array``, ``rank_bounds(m, ia, ib, low,
high) -> (best, worst)``.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm


def bonferroni_z(alpha: float, m: int) -> float:
    """Two-sided normal critical value with a Bonferroni correction over ``m`` intervals: ``z_{1 - alpha/(2m)}``."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}.")
    return float(norm.ppf(1 - alpha / (2 * max(int(m), 1))))


def rank_with_ties(low, high) -> np.ndarray:
    """Rank ``1 + #{k : low_k > high_m}`` of each model ``m`` (1 = best; overlapping intervals tie)."""
    low = np.asarray(low, dtype=float)
    high = np.asarray(high, dtype=float)
    if low.shape != high.shape or low.ndim != 1:
        raise ValueError("low and high must be 1-D arrays of the same length.")
    return 1 + (low[None, :] > high[:, None]).sum(axis=1)


def rank_bounds(m: int, ia, ib, low, high) -> tuple[np.ndarray, np.ndarray]:
    """Best and worst rank (1 = best) of each of ``m`` models from intervals ``[low_p, high_p]`` of the differences
    ``s_{ia_p} - s_{ib_p}`` (larger is better): model ``i`` is surely below ``k`` when the interval of ``s_k - s_i``
    lies above 0, surely above when it lies below 0; best = 1 + #surely below, worst = m - #surely above."""
    ia, ib = np.asarray(ia, dtype=int), np.asarray(ib, dtype=int)
    low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    if not ia.shape == ib.shape == low.shape == high.shape or low.ndim != 1:
        raise ValueError("ia, ib, low and high must be 1-D arrays of the same length.")
    a_ahead, b_ahead = low > 0, high < 0
    below = np.bincount(ib[a_ahead], minlength=m) + np.bincount(ia[b_ahead], minlength=m)
    above = np.bincount(ia[a_ahead], minlength=m) + np.bincount(ib[b_ahead], minlength=m)
    return 1 + below, m - above
