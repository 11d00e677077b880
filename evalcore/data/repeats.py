"""Repeated samples of one example (Inspect epochs, re-judged answers, attempts): the example is the unit.

A log with a ``repeat`` column may hold several rows per (model, example). Every method of evalcore assumes
independent examples, so the repeats of one example are not independent evidence: :func:`per_example` turns the log
into one row per (model, example) holding the mean of each value over its repeats (a missing label is left out of
its example's mean; an example none of whose repeats is labeled stays unlabeled), and ``n_repeats``, the number of
rows averaged. Then

* a mean over examples of the per-example means has the cluster-robust standard error ``s / sqrt(n)`` (``s`` the
  standard deviation of the per-example means over the ``n`` examples; Cameron & Miller 2015, the CR variance with
  equal cluster weights), see :func:`kish_effective_n` for the binary metric;
* a bootstrap that resamples per-example means resamples examples with all their repeats;
* methods that need one value per example (calibration, subgroups, PPI, labeling budget) use the per-example mean.

Five identical repeats of every example therefore give exactly the frame, and the intervals, of one.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalcore.data.schema import LOG_LABEL_ROLES

REPEAT = "repeat"
#: the number of rows averaged into a per-example row (not a feature)
N_REPEATS = "n_repeats"


def has_repeats(frame: pd.DataFrame) -> bool:
    """Whether ``frame`` holds several rows of one (model, example)."""
    return REPEAT in frame.columns and bool(frame.duplicated(["model", "example_id"]).any())


def per_example(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, example): each numeric column averaged over the example's repeats (NaN-skipping),
    ``n_repeats`` the number of rows averaged. A frame without a ``repeat`` column is returned as it is."""
    if REPEAT not in frame.columns:
        return frame
    keys = ["model", "example_id"]
    labels = [c for c in LOG_LABEL_ROLES if c in frame.columns and c not in keys]
    numeric = [c for c in frame.columns if c not in (*LOG_LABEL_ROLES, REPEAT, N_REPEATS)
               and pd.api.types.is_numeric_dtype(frame[c])]
    grouped = frame.groupby(keys, sort=False, observed=True)
    out = grouped[labels].first() if labels else pd.DataFrame(index=grouped.size().index)
    if numeric:
        out = out.join(grouped[numeric].mean())
    out[N_REPEATS] = grouped.size().astype("float64")
    out = out.reset_index()
    out.attrs = dict(frame.attrs)
    return out[[*[c for c in LOG_LABEL_ROLES if c in out.columns], *numeric, N_REPEATS]]


def kish_effective_n(p, s2, n, n_rows) -> np.ndarray:
    r"""The effective number of independent 0/1 trials behind a mean ``p`` of ``n`` per-example means in [0, 1]
    whose variance (divisor n) is ``s2``: :math:`n_{eff} = p (1 - p) / (s^2 / n)`, so that the binomial variance
    :math:`p (1 - p) / n_{eff}` equals the cluster-robust variance :math:`s^2 / n` (Kish's design effect). It is
    ``n`` when every value is 0 or 1 (repeats that agree), larger when repeats disagree, and at most ``n_rows``
    (the rows averaged), which keeps it finite when every example has the same fraction right. Vectorised."""
    p, s2, n, n_rows = (np.asarray(a, dtype=float) for a in (p, s2, n, n_rows))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(s2 > 0, n * p * (1 - p) / s2, np.inf)
    inside = (p > 0) & (p < 1)
    return np.where(inside, np.minimum(ratio, n_rows), n)
