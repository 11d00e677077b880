"""Binomial confidence intervals shared by every view (accuracies, subgroups, calibration bins).

Pure numpy/scipy; no streamlit.
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np

from evalcore.stats.level import DEFAULT_ALPHA, DEFAULT_LEVEL  # noqa: F401 - defined there, used through here

_NORMAL = NormalDist()


def z_value(alpha):
    """The standard normal quantile ``Φ⁻¹(1 - α/2)`` of a two-sided interval at level ``1 - α`` (an array for an
    array of α). The standard library's (:class:`statistics.NormalDist`, Wichura's algorithm AS 241), equal to
    scipy's ``ndtri`` at the levels people choose and within a unit in the last digit elsewhere: reading a log and
    its readout (``evalcore validate``) need no scipy, whose import costs a fifth of pandas' (issue 49)."""
    quantile = np.vectorize(lambda a: _NORMAL.inv_cdf(1 - a / 2), otypes=[float])(np.asarray(alpha, dtype=float))
    return float(quantile) if quantile.ndim == 0 else quantile


def wilson_interval(successes, n, alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    r"""Wilson score interval for a binomial proportion, vectorised over arrays.

    With :math:`\hat p = k/n` and :math:`z = \Phi^{-1}(1 - \alpha/2)` the interval at level
    :math:`1 - \alpha` is

    .. math::

        \frac{\hat p + \frac{z^2}{2n}}{1 + \frac{z^2}{n}}
        \pm \frac{z}{1 + \frac{z^2}{n}} \sqrt{\frac{\hat p (1 - \hat p)}{n} + \frac{z^2}{4n^2}}

    (computed in the equivalent count form
    :math:`\frac{k + z^2/2}{n + z^2} \pm \frac{z}{n + z^2}\sqrt{\frac{k(n - k)}{n} + \frac{z^2}{4}}`).
    Unlike the Wald interval it stays inside [0, 1] and is not degenerate at k = 0 or k = n
    (e.g. 0 of 10 at 95 % gives [0, z^2 / (10 + z^2)] = [0, 0.2775...]).

    Parameters
    ----------
    successes, n
        Numbers of successes k and of trials n; array-likes broadcast against each other.
        Need 0 <= k <= n. Non-integer k (e.g. weighted counts) is accepted.
    alpha
        One minus the confidence level, in (0, 1).

    Returns
    -------
    (low, high)
        Arrays of the broadcast shape (0-d for scalar input), clipped to [0, 1];
        NaN for both bounds where n == 0; the lower bound is exactly 0 at k = 0 and the upper
        bound exactly 1 at k = n.
    """
    k = np.asarray(successes, dtype=float)
    n = np.asarray(n, dtype=float)
    _check(k, n, alpha)
    z = z_value(alpha)
    z2 = z * z
    with np.errstate(divide="ignore", invalid="ignore"):
        center = (k + z2 / 2) / (n + z2)
        half = z / (n + z2) * np.sqrt(k * (n - k) / n + z2 / 4)
    # Exact endpoints where rounding would leave e.g. 5e-17 instead of 0 at k = 0.
    low = np.clip(np.where(k == 0, 0.0, center - half), 0.0, 1.0)
    high = np.clip(np.where(k == n, 1.0, center + half), 0.0, 1.0)
    empty = n == 0
    return np.where(empty, np.nan, low), np.where(empty, np.nan, high)


def _check(k: np.ndarray, n: np.ndarray, alpha: float) -> None:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if np.isnan(k).any() or np.isnan(n).any():
        raise ValueError("successes and n must not contain NaN")
    if (n < 0).any():
        raise ValueError("n must be >= 0")
    if ((k < 0) | (k > n)).any():
        raise ValueError("successes must satisfy 0 <= successes <= n")


def binomial_variance(successes, n) -> np.ndarray:
    r"""Variance of a proportion ``k / n`` that is never 0 for ``n >= 1``: :math:`\tilde p (1 - \tilde p) / n`.

    For ``0 < k < n`` this is the plug-in :math:`\hat p (1 - \hat p) / n`. At ``k = 0`` or ``k = n`` the plug-in
    value is 0, which would give a standard error of 0 and a zero-width normal interval after any number of
    trials; there :math:`\hat p` is replaced by the Jeffreys posterior mean :math:`\tilde p = (k + 1/2) / (n + 1)`
    (the same Beta(k + 1/2, n - k + 1/2) that :mod:`evalcore.leaderboard.bootstrap` resamples such cells from), e.g.
    10 of 10 gives :math:`\tilde p = 10.5 / 11` and a standard error of 0.066 instead of 0. NaN where n == 0.
    """
    k = np.asarray(successes, dtype=float)
    n = np.asarray(n, dtype=float)
    _check(k, n, 0.05)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where((k > 0) & (k < n), k / n, (k + 0.5) / (n + 1))
        return np.where(n > 0, p * (1 - p) / n, np.nan)
