r"""What a paired comparison can detect: the minimum detectable difference and the examples a planned one needs.

A 0/1 metric (the McNemar setting). With :math:`n` shared examples and the discordance
:math:`\psi = (b + c)/n` (the share of examples on which the two runs disagree), the power of the two-sided test at
level :math:`\alpha = 1 - \text{level}` against a true difference :math:`\delta` is, in Connor's (1987) normal
approximation ("Sample size for testing differences in proportions for the paired-sample design", Biometrics 43:
207-211),

.. math:: n = \frac{\left(z_{1-\alpha/2} \sqrt{\psi} + z_{\text{power}} \sqrt{\psi - \delta^2}\right)^2}{\delta^2},

so the minimum detectable difference (MDD) is the :math:`\delta` solving it for the given :math:`n` (squared, a
quadratic in :math:`\delta`: its larger root) and :func:`examples_needed` is the formula itself. A
comparison with no discordant example has :math:`\psi = 0` and would claim to see any change: there
:math:`\psi` is taken as :math:`(1/2)/(n + 1)` (half an example of disagreement, the Jeffreys-style floor used for
proportions elsewhere in evalcore). When even a difference as large as :math:`\sqrt{\psi}` is not detectable the
normal approximation without the :math:`\delta^2` term, :math:`(z_{1-\alpha/2} + z_{\text{power}})\sqrt{\psi/n}`, is
returned (larger than any difference the discordance allows: nothing is detectable).

A score (or per-example means of repeats): the paired t with :math:`n - 1` degrees of freedom,
:math:`\text{MDD} = (t_{1-\alpha/2} + t_{\text{power}})\, s_d / \sqrt n` with :math:`s_d` the standard deviation
of the per-example differences.

Measured (``benchmarks/history_power.py``): planted differences of exactly the MDD are detected by the exact
McNemar test about 80% of the time.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

#: the power at which the minimum detectable difference is stated
POWER = 0.8


def minimum_detectable_difference(n, discordant, level: float, power: float = POWER):
    """The smallest difference of two 0/1 runs (a fraction: 0.021 = 2.1 points) that ``n`` shared examples with
    ``discordant`` disagreements detect at ``level`` with probability ``power`` (module docstring); NaN for n = 0.
    Vectorised: arrays of ``n`` and ``discordant`` give an array."""
    n, k = np.asarray(n, dtype=float), np.asarray(discordant, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        psi = np.where(k > 0, k / n, 0.5 / (n + 1))
        za, zb = stats.norm.ppf(1 - (1 - level) / 2), stats.norm.ppf(power)
        # delta sqrt(n) - a = zb sqrt(psi - delta^2), a = za sqrt(psi): squared, (n + zb^2) delta^2 - 2 a sqrt(n)
        # delta + a^2 - zb^2 psi = 0, whose larger root is the one with delta sqrt(n) >= a (the unsquared one's)
        a, m = za * np.sqrt(psi), n + zb * zb
        delta = (a * np.sqrt(n) + np.sqrt(np.maximum(a * a * n - m * (a * a - zb * zb * psi), 0.0))) / m
        # even a change as large as the disagreement allows is not detectable: the approximation without delta^2
        out = np.where(delta > np.sqrt(psi), (za + zb) * np.sqrt(psi / n), delta)
    out = np.where(n > 0, out, np.nan)
    return float(out) if out.ndim == 0 else out


def minimum_detectable_shift(n: int, sd: float, level: float, power: float = POWER) -> float:
    """The smallest mean difference of a score the paired t on ``n`` examples detects with probability ``power``:
    (t_{1-alpha/2} + t_power) sd / sqrt(n) with n - 1 degrees of freedom; NaN for n < 2."""
    if n < 2 or not np.isfinite(sd):
        return float("nan")
    df = n - 1
    return float((stats.t.ppf(1 - (1 - level) / 2, df) + stats.t.ppf(power, df)) * sd / np.sqrt(n))


def examples_needed(difference: float, discordance: float, level: float, power: float = POWER) -> int:
    """Shared examples a planned comparison of two 0/1 runs needs to detect ``difference`` with probability
    ``power`` when they disagree on a share ``discordance`` of examples (Connor 1987, module docstring), rounded
    up. ValueError when the difference exceeds the discordance (impossible: |c - b| <= b + c)."""
    delta, psi = abs(float(difference)), float(discordance)
    if not 0 < delta <= psi <= 1:
        raise ValueError(f"the difference must be in (0, discordance]; got {difference} with discordance {psi}")
    za, zb = stats.norm.ppf(1 - (1 - level) / 2), stats.norm.ppf(power)
    return int(np.ceil((za * np.sqrt(psi) + zb * np.sqrt(psi - delta * delta)) ** 2 / delta**2))


def detectable(sums, binary: bool, level: float, power: float = POWER):
    """The minimum detectable difference of comparisons from their sums (:data:`evalcore.compare.paired.SUMS`; a
    row, or a frame of rows for an array): Connor's for a 0/1 metric, the paired t's for a score."""
    n = np.asarray(sums["n"], dtype=float)
    if binary:
        return minimum_detectable_difference(n, np.asarray(sums["b"], float) + np.asarray(sums["c"], float), level,
                                             power)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.asarray(sums["sum_d"], dtype=float) / n
        sd = np.sqrt(np.maximum(np.asarray(sums["sum_dd"], dtype=float) - n * mean * mean, 0.0) / (n - 1))
        df = np.maximum(n - 1, 1)
        out = np.where(n >= 2, (stats.t.ppf(1 - (1 - level) / 2, df) + stats.t.ppf(power, df)) * sd / np.sqrt(n),
                       np.nan)
    return float(out) if out.ndim == 0 else out


def planning_sentence(difference: float, discordance: float, level: float, power: float = POWER) -> str:
    """"To see a change of 2 points with 80% power at 95%, when the two runs disagree on 12% of the examples as here,
    a comparison needs about 2,353 shared examples." (:func:`examples_needed`); a difference larger than the
    disagreement allows says so."""
    points = f"{100 * difference:g} points"
    if difference > discordance:
        return (f"A change of {points} cannot happen when the runs disagree on only {discordance:.1%} of the "
                "examples: a change is at most the share of examples they disagree on.")
    n = examples_needed(difference, discordance, level, power)
    return (f"To see a change of {points} with {power:.0%} power at {level:.0%}, when the two runs disagree on "
            f"{discordance:.1%} of the examples as here, a comparison needs about {n:,} shared examples.")
