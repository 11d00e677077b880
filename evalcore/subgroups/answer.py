"""The Subgroups page's answer, in one sentence: the range of one model's subgroup estimates, each end with its
subgroup and interval, and how much narrower empirical Bayes makes the intervals of the small subgroups.

Names are returned as they are: the caller escapes them for its renderer.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalcore.stats.figures import percent
from evalcore.stats.headline import count, number


def what_of(metric: str) -> str:
    """'accuracy' for the 0/1 metric, 'mean <metric>' for any other."""
    return "accuracy" if metric == "correct" else f"mean {metric}"


def narrowing(one: pd.DataFrame) -> tuple[float, int | None]:
    """(mean relative narrowing, the size bound of the small subgroups) of one model's EB intervals against its
    direct intervals, over its small subgroups: those with at most the median number of examples (all of them when
    the subgroups have the same size, bound None then). Narrowing of a subgroup: 1 - (EB width / direct width),
    negative when the EB interval is wider; subgroups whose direct interval has no width are left out (NaN when
    none is left). Without sizes (no ``n`` column, or none given) every subgroup counts."""
    n = one["n"].astype(float) if "n" in one else pd.Series(float("nan"), index=one.index)
    if n.isna().any():
        n = pd.Series(1.0, index=one.index)
    bound = float(n.median())
    small = one[n <= bound] if n.nunique() > 1 else one
    direct = (small["direct_high"] - small["direct_low"]).to_numpy(dtype=float)
    eb = (small["eb_high"] - small["eb_low"]).to_numpy(dtype=float)
    keep = direct > 0
    ratio = float(np.mean(1 - eb[keep] / direct[keep])) if keep.any() else float("nan")
    return ratio, (int(bound) if n.nunique() > 1 else None)


def _end(row: pd.Series, est: str, low: str, high: str, level: float) -> str:
    return f"{number(row[est])} ({row['group']}, {percent(level)} interval {number(row[low])}\u2013{number(row[high])})"


def range_sentence(table: pd.DataFrame, model: str | None, level: float, metric: str = "correct",
                   empirical_bayes: bool = True, what: str | None = None) -> str:
    """"For m, subgroup accuracy ranges from 0.612 (g05, 95% interval 0.48–0.73) to 0.950 (g02, …); empirical
    Bayes borrows strength across subgroups, so the intervals of its small subgroups (at most 37 examples) are
    27.1% narrower on average than their direct intervals."

    ``table``: :func:`evalcore.subgroups.estimates.empirical_bayes` rows (model, group, n, direct, direct_low,
    direct_high, eb, eb_low, eb_high), or with ``empirical_bayes=False`` direct estimates only (model, group,
    estimate, ci_low, ci_high, as :func:`evalcore.stats.summaries.mean_table` gives them). The range is over
    the EB estimates (the direct ones without EB); ties go to the first subgroup by name. ``model`` None: a table
    without models (an uploaded per-subgroup summary); ``what`` names the estimates (default from ``metric``).
    """
    est, low, high = ("eb", "eb_low", "eb_high") if empirical_bayes else ("estimate", "ci_low", "ci_high")
    one = table if model is None else table[table["model"] == model]
    one = one.dropna(subset=[est]).sort_values("group", kind="stable")
    what = what or what_of(metric)
    if one.empty:
        return f"No subgroup {what}" + (f" of {model}" if model is not None else "") + " can be estimated."
    if len(one) == 1:
        row = one.iloc[0]
        span = f"{number(row[est])} ({percent(level)} interval {number(row[low])}\u2013{number(row[high])})"
        if model is None:
            return f"The single subgroup, {row['group']}: {what} {span}."
        return f"{model}: {what} {span} in its single subgroup, {row['group']}."
    values = one[est].to_numpy(dtype=float)
    lowest, highest = one.iloc[int(np.argmin(values))], one.iloc[int(np.argmax(values))]
    subject = f"For {model}, subgroup {what}" if model is not None else f"Subgroup {what}"
    sentence = (f"{subject} ranges from {_end(lowest, est, low, high, level)} to "
                f"{_end(highest, est, low, high, level)}")
    if not empirical_bayes:
        return sentence + f" (direct estimates of {count(len(one))} subgroups)."
    ratio, bound = narrowing(one)
    if np.isnan(ratio):
        return sentence + "."
    small = ("its" if model is not None else "the") + (
        f" small subgroups (at most {count(bound)} examples)" if bound is not None else " subgroups")
    change = f"{number(100 * abs(ratio))}% {'narrower' if ratio >= 0 else 'wider'}"
    return (f"{sentence}; empirical Bayes borrows strength across subgroups, so the intervals of {small} are "
            f"{change} on average than their direct intervals.")
