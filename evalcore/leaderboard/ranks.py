"""Rankings with ties from simultaneous confidence intervals.

Method: "AutoEval Done Right" (Boyeau et al., ``../shared/papers/autoeval-ppi.txt``), Section 2.3 and Supplement
C.2 (*Model ranking*): intervals are Bonferroni-corrected over the ``M`` models, "models with overlapping
confidence intervals were assigned the same rank".

The rule used here makes that precise and transitive-safe: model ``m``'s rank is ``1 +`` the number of models whose
whole interval lies above ``m``'s (``low_k > high_m``), i.e. the number of models that are significantly better.
Models whose intervals overlap the leader's all share rank 1; a model is ranked below another only when their
intervals are disjoint. Larger values are better.

Public API: ``bonferroni_z(alpha, m)``, ``rank_with_ties(low, high) -> int array``.
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
