"""How far labels can be trusted: agreement between annotators, and the AI judge against the humans.

* :func:`annotator_agreement`: Krippendorff's alpha over the examples labeled more than once (the ``krippendorff``
  package: nominal for 0/1 and A/B/tie labels, interval for scores; any number of annotators, missing labels
  allowed), with Cohen's kappa where exactly two annotators labeled (scikit-learn's ``cohen_kappa_score``). The
  interval is a percentile bootstrap over the examples (Hayes & Krippendorff 2007 resample units likewise), seeded.
* :func:`judge_agreement`: on every labeled example that has a judge verdict, the confusion table of the judge
  against the humans' label (the mean of the current labels, rounded for 0/1), Cohen's kappa with its bootstrap
  interval, and what the judge is worth in labels: the PPI effective sample size
  ``n_eff = n Var(y) / Var(y - λ yhat)`` (λ = ``Cov(y, yhat) / Var(yhat)`` clipped to [0, 1], as
  :mod:`.estimate` uses it): the simple random sample the n labels with the judge are as precise as.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

BOOTSTRAP = 1000


@dataclass(frozen=True)
class Agreement:
    """An agreement statistic with its bootstrap interval at ``level``, over ``n`` examples (``statistic`` names
    it, ``meaning`` says in one line what it is)."""

    statistic: str
    value: float
    ci_low: float
    ci_high: float
    n: int
    level: float
    meaning: str


def _bootstrap(stat, n: int, level: float, seed: int) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    draws = [stat(rng.integers(0, n, n)) for _ in range(BOOTSTRAP)]
    draws = np.asarray([d for d in draws if np.isfinite(d)])
    if draws.size < BOOTSTRAP // 2:
        return math.nan, math.nan
    return float(np.quantile(draws, 0.5 - level / 2)), float(np.quantile(draws, 0.5 + level / 2))


def _alpha(matrix: np.ndarray, nominal: bool) -> float:
    import krippendorff

    values = matrix[~np.isnan(matrix)]
    if np.unique(values).size < 2:
        return math.nan  # no variation at all: alpha is undefined
    return float(krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal" if nominal
                                    else "interval"))


def _kappa(a: np.ndarray, b: np.ndarray) -> float:
    from sklearn.metrics import cohen_kappa_score

    if np.unique(np.concatenate([a, b])).size < 2:
        return math.nan
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(cohen_kappa_score(a.astype(str), b.astype(str)))


def annotator_agreement(labels: pd.DataFrame, metric: str = "correct", level: float = 0.95,
                        seed: int = 0) -> Agreement | None:
    """Agreement of the annotators on the examples two or more of them labeled (``labels``: one row per current
    label with ``example_id``, ``annotator``, ``value``); None when no example has two labels."""
    wide = labels.pivot_table(index="example_id", columns="annotator", values="value", aggfunc="mean")
    wide = wide[wide.notna().sum(axis=1) >= 2]
    if len(wide) < 2:
        return None
    nominal = metric != "score"
    if wide.shape[1] == 2 and wide.notna().all(axis=1).all():
        a, b = wide.iloc[:, 0].to_numpy(), wide.iloc[:, 1].to_numpy()
        if nominal:
            low, high = _bootstrap(lambda i: _kappa(a[i], b[i]), len(a), level, seed)
            return Agreement("Cohen's kappa", _kappa(a, b), low, high, len(a), level,
                             "Agreement of the two annotators beyond chance: 1 always agree, 0 no better than chance.")
    matrix = wide.to_numpy(float).T  # annotators x examples
    low, high = _bootstrap(lambda i: _alpha(matrix[:, i], nominal), matrix.shape[1], level, seed)
    return Agreement("Krippendorff's alpha", _alpha(matrix, nominal), low, high, matrix.shape[1], level,
                     "Agreement of the annotators beyond chance (any number of them, labels may be missing): 1 "
                     "perfect, 0 no better than chance.")


@dataclass(frozen=True)
class JudgeAgreement:
    """The AI judge against the humans on ``n`` labeled examples: ``confusion`` (rows the humans' label, columns
    the judge's), ``kappa`` with its interval, and ``effective_labels``: the simple random sample the n labels
    with the judge are worth (PPI)."""

    n: int
    confusion: pd.DataFrame
    kappa: Agreement
    effective_labels: float


def judge_agreement(labeled: pd.DataFrame, metric: str = "correct", level: float = 0.95,
                    seed: int = 0) -> JudgeAgreement | None:
    """The judge against the humans (``labeled``: one row per labeled example with ``value``, the mean of its
    current labels, and ``judge``); None when fewer than 2 labeled examples have a judge verdict."""
    rows = labeled[labeled["judge"].notna()]
    if len(rows) < 2:
        return None
    y, yhat = rows["value"].to_numpy(float), rows["judge"].to_numpy(float)
    human = np.round(y * 2) / 2 if metric == "pairwise" else np.round(y) if metric == "correct" else y
    judge = np.round(yhat * 2) / 2 if metric == "pairwise" else np.round(yhat) if metric == "correct" else yhat
    names = {"correct": {0.0: "incorrect", 1.0: "correct"}, "pairwise": {0.0: "A", 0.5: "tie", 1.0: "B"}}.get(metric)
    shown = (lambda v: pd.Series(v).map(names).fillna(pd.Series(v).astype(str))) if names else pd.Series
    confusion = pd.crosstab(shown(human).rename("humans"), shown(judge).rename("AI judge"))
    low, high = _bootstrap(lambda i: _kappa(human[i], judge[i]), len(y), level, seed)
    kappa = Agreement("Cohen's kappa (judge vs humans)", _kappa(human, judge), low, high, len(y), level,
                      "Agreement of the AI judge with the humans beyond chance: 1 always agree, 0 chance.")
    var_l = float(np.var(yhat, ddof=1))
    lam = float(np.clip(np.cov(y, yhat, ddof=1)[0, 1] / var_l, 0.0, 1.0)) if var_l > 0 else 0.0
    var_r, var_y = float(np.var(y - lam * yhat, ddof=1)), float(np.var(y, ddof=1))
    effective = len(y) * var_y / var_r if var_r > 0 else math.inf if var_y > 0 else float(len(y))
    return JudgeAgreement(len(y), confusion, kappa, float(effective))
