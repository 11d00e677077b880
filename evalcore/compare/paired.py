r"""Paired differences between two runs on the examples both scored: the join, its sums, intervals and tests.

The unit is the example, keyed (task, example_id): a run's repeated samples of one example are averaged first
(:func:`evalcore.engine.frames.as_log` in memory, the engine's ``repeat`` role when scanned), so every interval
below is cluster-robust by example. The per-example differences are :math:`d_i = y^{new}_i - y^{base}_i` over the
:math:`n` examples both runs scored; everything a comparison needs of them is a handful of sums per slice
(:data:`SUMS`), computed where the log lives as one group-by of the join of the base and new rows
(:func:`paired_table`), so a log in an engine is compared without bringing its rows into memory.

Two methods, vectorised over slices (:func:`paired_estimates`):

* a 0/1 metric whose paired values are all 0 or 1 (also when repeats of an example agree): the 2x2 table of
  both right (:math:`a`), only base right (:math:`b`), only new right (:math:`c`), both wrong (:math:`d`);
  difference :math:`(c - b)/n`; interval: Newcombe (1998) method 10, the hybrid score ("square-and-add") interval
  for paired proportions (R. G. Newcombe, Improved confidence intervals for the difference between binomial
  proportions based on paired data, Stat Med 17:2635-2650; as in Fagerland, Lydersen & Laake 2017, Statistical
  Analysis of Contingency Tables, ch. 8): with :math:`p_1 = (a + c)/n` (new) and :math:`p_2 = (a + b)/n` (base),
  their Wilson limits :math:`(l_1, u_1)`, :math:`(l_2, u_2)` and the corrected correlation :math:`\phi` of
  :func:`newcombe_phi`,
  :math:`L = \hat\theta - \sqrt{(p_1 - l_1)^2 - 2\phi (p_1 - l_1)(u_2 - p_2) + (u_2 - p_2)^2}`,
  :math:`U = \hat\theta + \sqrt{(u_1 - p_1)^2 - 2\phi (u_1 - p_1)(p_2 - l_2) + (p_2 - l_2)^2}`;
  p-value: the exact McNemar (1947) test, two-sided binomial test of :math:`b` among :math:`b + c` discordant
  pairs at 1/2, :math:`\min(1, 2 P(\mathrm{Bin}(b + c, 1/2) \le \min(b, c)))` (mid-p not used);
* otherwise (scores, or repeats that disagree, so per-example means are fractions): the paired t:
  :math:`\bar d`, :math:`s_d / \sqrt n`, Student's t interval and two-sided p-value with :math:`n - 1` degrees of
  freedom; :math:`n < 2` gives NaN (no interval).
"""

from __future__ import annotations

import ibis
import numpy as np
import pandas as pd
from scipy import stats

from evalcore.engine.scan import LazyLog
from evalcore.errors import EvalDataError
from evalcore.stats.intervals import wilson_interval

#: cells of the 2x2 table of a 0/1 metric
CELLS = ("both right", "only base right", "only new right", "both wrong")
#: cells of a continuous metric (or of per-example means of repeats)
SCORE_CELLS = ("new higher", "base higher", "equal")
VERDICTS = ("regression", "improvement", "no difference", "inconclusive")

BINARY_METHOD = "exact McNemar (Newcombe score interval)"
T_METHOD = "paired t (cluster-robust by example)"

#: the sums per slice every statistic here is computed from (additive, so slices roll up from finer cells)
SUMS = ("n", "sum_base", "sum_new", "sum_d", "sum_dd", "both", "b", "c", "neither", "up", "down", "nonbinary",
        "repeated")
#: the join's key: one example
KEYS = ("task", "example_id")


def pick_metric(log: LazyLog, metric: str | None) -> str:
    """``metric`` if given (it must be a column of the log), else "correct" if present, else "score"."""
    if metric is None:
        metric = "correct" if "correct" in log else "score"
    if metric not in log:
        raise EvalDataError(f"{log.source}: the comparison needs the metric column '{metric}'; the log has "
                            f"{', '.join(log.table.columns)}. Name it in the mapping (column=correct or score).")
    return metric


def paired_table(log: LazyLog, base: str, new: str, metric: str, columns=()):
    """The Ibis join of ``base``'s and ``new``'s scored rows on (task, example_id): one row per shared example with
    task, example_id, category and group (the base row's), the extra ``columns`` (base row's), ``base_value``,
    ``new_value``, ``d`` (new - base) and ``repeated`` (1 where either run averaged several samples)."""
    t = log.table
    y = t[metric]
    extra = [c for c in dict.fromkeys(("category", "group", *columns)) if c not in KEYS]
    reps = "n_repeats" in t.columns
    left = t.filter((t.model == base) & y.notnull())
    left = left.select(*KEYS, *extra, base_value=left[metric],
                       base_reps=left.n_repeats if reps else ibis.literal(1.0))
    right = t.filter((t.model == new) & y.notnull())
    right = right.select(*KEYS, new_value=right[metric],
                         new_reps=right.n_repeats if reps else ibis.literal(1.0))
    j = left.join(right, list(KEYS))
    return j.mutate(d=j.new_value - j.base_value,
                    repeated=((j.base_reps > 1) | (j.new_reps > 1)).cast("int64"))


def sum_expressions(j) -> dict:
    """The Ibis aggregates of :data:`SUMS` over a paired table ``j`` (:func:`paired_table`)."""
    bv, nv, d = j.base_value, j.new_value, j.d

    def count(cond):
        return cond.cast("int64").sum()

    return {"n": j.count(), "sum_base": bv.sum(), "sum_new": nv.sum(), "sum_d": d.sum(), "sum_dd": (d * d).sum(),
            "both": count((bv == 1) & (nv == 1)), "b": count((bv == 1) & (nv == 0)),
            "c": count((bv == 0) & (nv == 1)), "neither": count((bv == 0) & (nv == 0)),
            "up": count(d > 0), "down": count(d < 0),
            "nonbinary": count(((bv != 0) & (bv != 1)) | ((nv != 0) & (nv != 1))),
            "repeated": j.repeated.sum()}


def newcombe_phi(both, b, c, neither) -> np.ndarray:
    r"""Newcombe's (1998) corrected correlation of the paired proportions, vectorised: with
    :math:`A = a d - b c` and the product :math:`P` of the four margins, 0 if a margin is 0, else
    :math:`(A - n/2)/\sqrt P` if :math:`A > n/2`, 0 if :math:`0 \le A \le n/2`, :math:`A/\sqrt P` if :math:`A < 0`."""
    a, b, c, d = (np.asarray(x, dtype=float) for x in (both, b, c, neither))
    n = a + b + c + d
    product = (a + b) * (c + d) * (a + c) * (b + d)
    big = a * d - b * c
    with np.errstate(divide="ignore", invalid="ignore"):
        root = np.sqrt(product)
        phi = np.where(big > n / 2, (big - n / 2) / root, np.where(big < 0, big / root, 0.0))
    return np.where(product > 0, phi, 0.0)


def newcombe_interval(both, b, c, neither, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Newcombe (1998) method 10 interval for (c - b)/n, new minus base (module docstring); NaN where n == 0."""
    a, b, c, d = (np.asarray(x, dtype=float) for x in (both, b, c, neither))
    n = a + b + c + d
    alpha = 1 - level
    l1, u1 = wilson_interval(a + c, n, alpha)  # new
    l2, u2 = wilson_interval(a + b, n, alpha)  # base
    with np.errstate(divide="ignore", invalid="ignore"):
        p1, p2 = (a + c) / n, (a + b) / n
    phi = newcombe_phi(a, b, c, d)
    theta = p1 - p2
    lo_sq = (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2
    hi_sq = (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2
    return theta - np.sqrt(np.maximum(lo_sq, 0.0)), theta + np.sqrt(np.maximum(hi_sq, 0.0))


def mcnemar_exact_p(b, c) -> np.ndarray:
    """Exact McNemar p-value, two-sided: min(1, 2 P(Bin(b + c, 1/2) <= min(b, c))); 1 where b + c == 0."""
    b, c = np.asarray(b, dtype=float), np.asarray(c, dtype=float)
    m = b + c
    p = np.minimum(1.0, 2 * stats.binom.cdf(np.minimum(b, c), m, 0.5))
    return np.where(m > 0, p, 1.0)


def t_statistics(n, sum_d, sum_dd, level: float) -> dict[str, np.ndarray]:
    """Paired t from sums: mean, se (sd / sqrt n), ci_low, ci_high, p_value; NaN where n < 2. A zero spread gives
    the interval [mean, mean] and p 1 (mean 0) or 0."""
    n, s1, s2 = (np.asarray(x, dtype=float) for x in (n, sum_d, sum_dd))
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = s1 / n
        ss = s2 - n * mean * mean
        ss = np.where(ss <= 1e-12 * np.maximum(s2, 1e-300), 0.0, ss)  # rounding of equal values: no spread
        var = ss / (n - 1)
        se = np.sqrt(var / n)
        df = np.maximum(n - 1, 1)
        crit = stats.t.ppf(1 - (1 - level) / 2, df)
        low, high = mean - crit * se, mean + crit * se
        p = np.where(se > 0, 2 * stats.t.sf(np.abs(mean) / se, df), np.where(mean == 0, 1.0, 0.0))
    few = n < 2
    nan = np.full(n.shape, np.nan)
    return {"mean": np.where(n > 0, mean, np.nan), "se": np.where(few, nan, se),
            "ci_low": np.where(few, nan, low), "ci_high": np.where(few, nan, high),
            "p_value": np.where(few, nan, p)}


def paired_estimates(sums: pd.DataFrame, binary: bool, level: float) -> pd.DataFrame:
    """Per row of ``sums`` (columns :data:`SUMS`): n, base, new (means on the shared examples), difference, ci_low,
    ci_high, p_value, se (of the mean difference, sd / sqrt n: the empirical Bayes input) by the method ``binary``
    picks (module docstring)."""
    n = sums["n"].to_numpy(dtype=float)
    t = t_statistics(n, sums["sum_d"], sums["sum_dd"], level)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = pd.DataFrame({"n": n.astype("int64"), "base": sums["sum_base"].to_numpy(dtype=float) / n,
                            "new": sums["sum_new"].to_numpy(dtype=float) / n, "difference": t["mean"]},
                           index=sums.index)
    if binary:
        low, high = newcombe_interval(sums["both"], sums["b"], sums["c"], sums["neither"], level)
        out["ci_low"], out["ci_high"] = low, high
        out["p_value"] = np.where(n > 0, mcnemar_exact_p(sums["b"], sums["c"]), np.nan)
    else:
        out["ci_low"], out["ci_high"], out["p_value"] = t["ci_low"], t["ci_high"], t["p_value"]
    out["se"] = t["se"]
    return out


def pairs_table(total: pd.Series, binary: bool) -> pd.DataFrame:
    """The cells with their counts and shares of the shared examples: :data:`CELLS` for a 0/1 metric, else
    :data:`SCORE_CELLS`."""
    n = float(total["n"])
    if binary:
        cells, counts = CELLS, [total["both"], total["b"], total["c"], total["neither"]]
    else:
        cells, counts = SCORE_CELLS, [total["up"], total["down"], total["n"] - total["up"] - total["down"]]
    counts = np.asarray(counts, dtype="int64")
    return pd.DataFrame({"cell": list(cells), "n": counts, "share": counts / n if n else np.nan})
