r"""What a paired comparison can detect: the minimum detectable difference and the examples a planned one needs,
both computed for the test the comparison runs, exactly.

A 0/1 metric (the McNemar setting). With :math:`n` shared examples, the discordance :math:`\psi` (the share of
examples on which the two runs disagree) and a true difference :math:`\delta` (new minus base, :math:`|\delta| \le
\psi`), the number of discordant examples is :math:`M \sim \mathrm{Bin}(n, \psi)` and, given :math:`M = m`, the
examples only the new run gets right are :math:`C \sim \mathrm{Bin}(m, \pi)` with :math:`\pi = (1 + \delta/\psi)/2`
(the multinomial model of the 2x2 table, as in Connor 1987, "Sample size for testing differences in proportions for
the paired-sample design", Biometrics 43:207-211). The comparison's test is the exact McNemar test
(:func:`evalcore.compare.paired.mcnemar_exact_p`): at :math:`m` it rejects when :math:`\min(c, m - c) \le r(m)`,
:math:`r(m)` the largest :math:`r` with :math:`\min(1, 2 P(\mathrm{Bin}(m, 1/2) \le r)) < \alpha`. Its power is
computed exactly (:func:`mcnemar_power`), not from a normal approximation:

.. math:: \mathrm{power}(\delta) = \sum_m P(M = m)\,\big[P(C \le r(m)) + P(C \ge m - r(m))\big]

(the sum over the values of :math:`m` with probability above :math:`10^{-12}`; where they are more than
:data:`GRID` values, over every s-th of them, each weighted by its probability times s, a Riemann sum of a function
smooth in :math:`m` at that size). Connor's normal approximation,
:math:`n = (z_{1-\alpha/2}\sqrt\psi + z_{\text{power}}\sqrt{\psi - \delta^2})^2/\delta^2`, promises 80% where the
exact test, conservative at small :math:`n`, has 63-80% (an audit on MMLU-Pro pairs, issue 50); the exact power is
what the comparison has.

The minimum detectable difference (MDD) is stated for what the comparison's verdict reads: its interval
(Newcombe's method 10, :func:`evalcore.compare.paired.newcombe_interval`) excluding 0. That interval is not the exact
test: it excludes 0 more readily at small :math:`n` (where the exact test is conservative), so an MDD computed for
the exact test was detected 82-85% of the time, not 80%. Given :math:`M = m`, Newcombe's interval excludes 0 when
:math:`\min(c, m - c) \le r_N(m)` (it is symmetric in b and c and widens as they near each other), with the
:math:`n - m` concordant examples split at their observed share both right (:func:`newcombe_bound`, found by
bisection for every m at once); the power is the same sum as above with :math:`r_N` for :math:`r`
(:func:`interval_power`). The MDD of a comparison with :math:`n` shared examples, :math:`k` of them discordant and
:math:`a` right in both runs is the smallest :math:`\delta` whose power is ``power`` (80%), found by root search
(Brent's method) with :math:`\psi = \max(k/n, \delta)`: a difference needs at least as much disagreement as itself,
so where the runs disagree less than :math:`\delta` (e.g. never: :math:`k = 0`) the difference is taken as all
one-way disagreement. NaN where no difference at all reaches that power and for :math:`n = 0`.
:func:`examples_needed` (planning, before there is a 2x2 table) is the smallest :math:`n` whose exact McNemar power
reaches ``power`` (searched by bisection; the exact power, not strictly monotone in :math:`n`, is the one of that
:math:`n`).

A score (or per-example means of repeats): the paired t with :math:`n - 1` degrees of freedom, whose power at a
mean shift :math:`\delta` is that of the noncentral t with noncentrality :math:`\delta\sqrt n / s_d`
(:math:`s_d` the standard deviation of the per-example differences); the MDD is the :math:`\delta` where it is
``power``.

Measured (``python -m benchmarks.history_power --only mdd``): true differences of exactly the MDD, planted in pairs
drawn from MMLU-Pro models' answers, are detected by the comparison's interval within 2 points of 80% at n = 100,
200 and 1,000.
"""

from __future__ import annotations

import functools

import numpy as np
from scipy import optimize, stats

#: the power at which the minimum detectable difference is stated
POWER = 0.8
#: the probability left out of the sum over the number of discordant examples
_TAIL = 1e-12
#: the most values of the number of discordant examples summed over one by one (more: every s-th, module docstring)
GRID = 2001


def rejection_bound(m, level: float) -> np.ndarray:
    """The largest :math:`r` at which the exact McNemar test at ``level`` rejects ``min(b, c) = r`` among ``m``
    discordant examples, -1 where it rejects none (module docstring); vectorised over ``m``."""
    m = np.asarray(m, dtype=float)
    alpha = 1 - level
    guess = stats.binom.ppf(alpha / 2, m, 0.5)
    best = np.full(m.shape, -1.0)
    for r in (guess - 1, guess, guess + 1):  # the two-sided p-value 2 F(r) crosses alpha near the alpha/2 quantile
        ok = (r >= 0) & (r < m / 2) & (np.minimum(1.0, 2 * stats.binom.cdf(r, m, 0.5)) < alpha)
        best = np.where(ok, np.maximum(best, r), best)
    return best


def newcombe_bound(m, n: int, right_share: float, level: float) -> np.ndarray:
    """The largest r at which Newcombe's interval at ``level`` (:func:`evalcore.compare.paired.newcombe_interval`)
    excludes 0 with ``min(b, c) = r`` among ``m`` discordant of ``n`` examples, the concordant ones ``a =
    round(right_share (n - m))`` right in both runs and the rest in neither; -1 where it excludes 0 at none. By
    bisection on r for every m at once (the interval moves away from 0 as r falls)."""
    from evalcore.compare.paired import newcombe_interval

    m = np.asarray(m, dtype=float)
    a = np.clip(np.round(right_share * (n - m)), 0, n - m)
    d = n - m - a
    lo, hi = np.full(m.shape, -1.0), np.floor(m / 2) + 1  # excluded at lo (none drawn: -1), not at hi
    while np.any(active := hi - lo > 1):
        middle = np.where(active, np.floor((lo + hi) / 2), 0.0)  # the settled ones evaluated at a valid table
        low, _ = newcombe_interval(a, middle, m - middle, d, level)
        excluded = active & (low > 0)
        lo, hi = np.where(excluded, middle, lo), np.where(active & ~excluded, middle, hi)
    return lo


def _support(n: int, psi: float, level: float, right_share: float | None = None
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The values m of the number of discordant examples summed over (module docstring), their weights (probability
    times the step) and the rejection bounds r(m): the exact McNemar test's, or Newcombe's interval's
    (:func:`newcombe_bound`) where ``right_share`` is given."""
    lo, hi = stats.binom.ppf(_TAIL, n, psi), stats.binom.isf(_TAIL, n, psi)
    step = max(1, int(np.ceil((hi - max(lo, 1) + 1) / GRID)))
    m = np.arange(max(lo, 1), hi + 1, step)
    bound = rejection_bound(m, level) if right_share is None else newcombe_bound(m, n, right_share, level)
    return m, stats.binom.pmf(m, n, psi) * step, bound


def _power_on(support, psi: float, delta: float) -> float:
    """The power summed over ``support`` (:func:`_support` of the discordance ``psi``) at the difference ``delta``."""
    m, weights, r = support
    pi = min(1.0, (1 + delta / psi) / 2)
    reject = np.where(r >= 0, stats.binom.cdf(r, m, pi) + stats.binom.sf(m - r - 1, m, pi), 0.0)
    return float(np.sum(weights * reject))


def mcnemar_power(n: int, discordance: float, difference: float, level: float) -> float:
    """The exact power of the exact McNemar test at ``level`` with ``n`` shared examples, a share ``discordance`` of
    them discordant and a true ``difference`` (module docstring); its sign does not matter."""
    n, psi = int(n), float(discordance)
    if n <= 0 or psi <= 0:
        return 0.0
    return _power_on(_support(n, psi, level), psi, abs(float(difference)))


def interval_power(n: int, discordance: float, right_share: float, difference: float, level: float) -> float:
    """The power of the comparison's interval (Newcombe's) at ``level`` to exclude 0 with ``n`` shared examples, a
    share ``discordance`` of them discordant, a share ``right_share`` of the concordant ones right in both runs and a
    true ``difference`` (module docstring); its sign does not matter."""
    n, psi = int(n), float(discordance)
    if n <= 0 or psi <= 0:
        return 0.0
    return _power_on(_support(n, psi, level, right_share), psi, abs(float(difference)))


@functools.lru_cache(maxsize=65536)
def _mdd(n: int, discordant: int, both: int, level: float, power: float) -> float:
    """One comparison's minimum detectable difference (module docstring); the sum's support at the observed
    discordance computed once for the search (it changes only where the difference exceeds the discordance)."""
    if n <= 0:
        return float("nan")
    observed = discordant / n
    share = min(max(both / (n - discordant), 0.0), 1.0) if n > discordant else 0.5  # counts of repeats' means: clip
    at_observed = _support(n, observed, level, share) if observed > 0 else None

    def gap(delta):
        if delta <= observed:
            return _power_on(at_observed, observed, delta) - power
        return _power_on(_support(n, delta, level, share), delta, delta) - power

    if observed > 0 and gap(observed) >= 0:  # the root within the observed discordance: one support throughout
        return float(optimize.brentq(gap, 1e-9, observed, xtol=1e-7))
    if gap(1.0) < 0:
        return float("nan")
    return float(optimize.brentq(gap, max(observed, 1e-9), 1.0, xtol=1e-7))


def minimum_detectable_difference(n, discordant, both, level: float, power: float = POWER):
    """The smallest difference of two 0/1 runs (a fraction: 0.021 = 2.1 points) that ``n`` shared examples with
    ``discordant`` disagreements and ``both`` right in both runs detect at ``level`` with probability ``power`` by
    the comparison's interval excluding 0 (module docstring); NaN for n = 0 and where no difference is detectable.
    Arrays give an array (the same tables computed once)."""
    n, k, a = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (n, discordant, both)))
    found: dict[tuple[int, int, int], float] = {}
    out = np.empty(n.shape)
    for index, (size, disagree, right) in enumerate(zip(n.ravel(), k.ravel(), a.ravel())):
        key = (int(size), int(disagree), int(right))
        if key not in found:
            found[key] = _mdd(*key, level, power)
        out.flat[index] = found[key]
    return float(out) if out.ndim == 0 else out


def t_power(n, shift, sd, level: float):
    """The power of the two-sided paired t test at ``level`` on ``n`` examples against a mean shift ``shift`` of
    differences with standard deviation ``sd`` (noncentral t, module docstring); vectorised."""
    n, nc = np.asarray(n, dtype=float), np.abs(np.asarray(shift, dtype=float)) * np.sqrt(n) / np.asarray(sd, float)
    df = np.maximum(n - 1, 1)
    crit = stats.t.ppf(1 - (1 - level) / 2, df)
    # the wrong-side tail: scipy gives NaN far out in it, where it is 0
    return stats.nct.sf(crit, df, nc) + np.nan_to_num(stats.nct.cdf(-crit, df, nc), nan=0.0)


def minimum_detectable_shift(n: int, sd: float, level: float, power: float = POWER) -> float:
    """The smallest mean difference of a score the paired t on ``n`` examples detects with probability ``power``
    (noncentral t, module docstring); NaN for n < 2 or a spread that is not positive and finite."""
    if n < 2 or not np.isfinite(sd) or sd <= 0:
        return float("nan")
    # in units of sd / sqrt(n) the noncentrality is the shift itself
    top = stats.t.ppf(1 - (1 - level) / 2, n - 1) + stats.t.ppf(power, n - 1) + 4  # power there above 99%
    units = optimize.brentq(lambda nc: t_power(n, nc, np.sqrt(n), level) - power, 0.0, top, xtol=1e-9)
    return float(units * sd / np.sqrt(n))


def examples_needed(difference: float, discordance: float, level: float, power: float = POWER) -> int:
    """Shared examples a planned comparison of two 0/1 runs needs to detect ``difference`` with probability
    ``power`` by the exact McNemar test when they disagree on a share ``discordance`` of examples (module
    docstring). ValueError when the difference exceeds the discordance (impossible: |c - b| <= b + c)."""
    delta, psi = abs(float(difference)), float(discordance)
    if not 0 < delta <= psi <= 1:
        raise ValueError(f"the difference must be in (0, discordance]; got {difference} with discordance {psi}")
    za, zb = stats.norm.ppf(1 - (1 - level) / 2), stats.norm.ppf(power)
    connor = (za * np.sqrt(psi) + zb * np.sqrt(psi - delta * delta)) ** 2 / delta**2
    low, high = 1, int(np.ceil(2 * connor)) + 50  # the exact test needs more than Connor's, never twice as many
    while mcnemar_power(high, psi, delta, level) < power:
        high *= 2
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if mcnemar_power(middle, psi, delta, level) >= power else (middle, high)
    return high


def detectable(sums, binary: bool, level: float, power: float = POWER):
    """The minimum detectable difference of comparisons from their sums (:data:`evalcore.compare.paired.SUMS`; a
    row, or a frame of rows for an array): the interval's (Newcombe's) for a 0/1 metric, the paired t's for a
    score."""
    n = np.asarray(sums["n"], dtype=float)
    if binary:
        return minimum_detectable_difference(n, np.asarray(sums["b"], float) + np.asarray(sums["c"], float),
                                             np.asarray(sums["both"], float), level, power)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.asarray(sums["sum_d"], dtype=float) / n
        sd = np.sqrt(np.maximum(np.asarray(sums["sum_dd"], dtype=float) - n * mean * mean, 0.0) / (n - 1))
    out = np.array([minimum_detectable_shift(int(size), float(spread), level, power)
                    for size, spread in zip(np.atleast_1d(n), np.atleast_1d(sd))])
    return float(out[0]) if n.ndim == 0 else out
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
