r"""How far labels can be trusted: agreement between annotators, the AI judge against the humans, and each annotator.

* :func:`annotator_agreement`: Krippendorff's alpha over the examples labeled more than once (the ``krippendorff``
  package: nominal for 0/1 and A/B/tie labels, interval for scores; any number of annotators, missing labels
  allowed), with Cohen's kappa where exactly two annotators labeled every such example (scikit-learn's
  ``cohen_kappa_score``).
* :func:`judge_agreement`: on every labeled example that has a judge verdict, the confusion table of the judge
  against the humans' label (the mean of the current labels, rounded for 0/1), Cohen's kappa with its interval,
  and what the judge is worth in labels: the PPI effective sample size ``n_eff = n Var(y) / Var(y - λ yhat)``
  (λ = ``Cov(y, yhat) / Var(yhat)`` clipped to [0, 1], as :mod:`.estimate` uses it): the simple random sample the
  n labels with the judge are as precise as.
* :func:`annotator_quality`: each annotator against the settled (adjudicated) labels and against the other
  annotators, with intervals.

**The statistics** (the point estimates are the libraries'; the sums below only serve the intervals). Cohen's kappa
of two annotators over n units with the K x K table of proportions :math:`p_{ck}` (Cohen 1960):

.. math:: \kappa = \frac{p_o - p_e}{1 - p_e}, \quad p_o = \sum_c p_{cc}, \quad p_e = \sum_c p_{c\cdot} p_{\cdot c}.

Krippendorff's alpha (Krippendorff 2011) over the units u with :math:`m_u \ge 2` values, :math:`n_{uc}` of them
equal to c, :math:`n_c = \sum_u n_{uc}`, :math:`N = \sum_u m_u` and a distance :math:`\delta` (nominal
:math:`1[c \ne k]`, interval :math:`(c - k)^2`):

.. math:: \alpha = 1 - (N - 1) \frac{\sum_u a_u}{\sum_{c,k} n_c n_k \delta_{ck}}, \quad
          a_u = \frac{\sum_{c,k} n_{uc} n_{uk} \delta_{ck}}{m_u - 1},

i.e. :math:`a_u = (m_u^2 - \sum_c n_{uc}^2) / (m_u - 1)` and denominator :math:`N^2 - \sum_c n_c^2` (nominal),
:math:`a_u = 2 (m_u S_{2u} - S_{1u}^2) / (m_u - 1)` and :math:`2 (N T_2 - T_1^2)` (interval; :math:`S_{1u}, S_{2u}`
the unit's sum of values and of squares, :math:`T_1, T_2` their totals). Kappa is a function of sums over units too:
per unit :math:`1[a = b]` and the one-hot vectors of a's and b's values give :math:`n p_o`, the margins and so
:math:`p_e`. A resample or a reweighting of the units is therefore one matrix product for all replicates at once
(units with the same values are grouped first: kappa's units are the at most K^2 cells of its table).

**The interval** at ``level`` is the hull of three: the estimate; the BCa bootstrap interval (Efron 1987; Efron &
Tibshirani 1993, ch. 14: :data:`BOOTSTRAP` resamples of the units, as Hayes & Krippendorff 2007 resample units; bias
correction :math:`z_0 = \Phi^{-1}(\#\{\theta^* < \hat\theta\} / B)`, acceleration :math:`a = \sum_u d_u^3 / (6
(\sum_u d_u^2)^{3/2})` from the leave-one-unit-out values, :math:`d_u = \bar\theta_{(\cdot)} - \theta_{(u)}`; the
bounds are the replicates' quantiles at :math:`\Phi(z_0 + (z_0 + z_q) / (1 - a (z_0 + z_q)))`; replicates where
the statistic is undefined are dropped, and the BCa part is left out when fewer than half remain or :math:`z_0` is
infinite); and the equal-tailed interval of the statistic's posterior under the Jeffreys prior: the units are
reweighted with Dirichlet(1, ..., 1) weights (the Bayesian bootstrap, Rubin 1981) joined by pseudo-units of weight
:data:`PRIOR` = 1/2, one for every ordered pair of values (c, k). For Cohen's kappa this is exactly the posterior
Dirichlet(counts + 1/2) of the K x K cell probabilities (the Bayesian analysis of kappa of Basu, Banerjee & Sen
2000, with Jeffreys' prior); for alpha a pseudo-unit holds as many labels as the mean unit, half c and half k (with
two annotators and no label missing: kappa's prior again; with pairs of two labels against units of four, the prior
weighed too little and a rare class's alpha covered 0.88). Above :data:`MAX_VALUES` distinct values (scores compared
as categories) the pseudo-units are left out. Why the hull: in the simulations behind the table the posterior alone
misses above the truth when agreement is high (it shrinks towards chance: 0.81 at kappa 0.83 with three categories,
n = 30), the BCa bootstrap alone when one value is rare (0.66 at prevalence 0.95, n = 50: resamples without a
disagreement pile up at 1); each holds where the other fails.

**Measured coverage** at 95% (``python -m benchmarks.coverage --only agreement``, 1,000 samples per setting, truth
from the generating model; the table and its models in :mod:`benchmarks.coverage.agreement`), now (before: the
percentile bootstrap over 1,000 library calls). Cohen's kappa, 0/1, n = 30: 0.975 at kappa 0.6, 0.987 at 0.9
(0.929, 0.791); prevalence 0.95, n = 50: 0.960 at kappa 0.6, 0.951 at 0.9 (0.665, 0.361); A/B/tie, n = 30: 0.957
and 0.988 (0.923, 0.938); n = 10: 0.972 (0.861); n = 100 and 1,000: 0.963 and 0.957 (0.942, 0.947). Krippendorff's
alpha, 4 annotators with 40% of the labels missing, 30 units: 0.973 (0/1) and 0.972 (A/B/tie) (0.943, 0.931); a
class of prevalence 0.1 among 4 annotators, 50 units: 0.954, and 0.964 with 40% missing (0.879, 0.842); 10 units:
0.948 (0.877); 1,000 units: 0.953 (0.950); scores 1-5 (interval): 0.976 at 30 and at 100 units (0.924, 0.946). The
intervals are conservative at small n (up to 0.99): the price of holding in every setting. Where the statistic is
undefined (every label the same value) the value and the interval are NaN; coverage is over the samples where it
is defined (3-6% of them undefined at prevalence 0.95, n = 50). Speed (median of 5 calls): kappa 4 ms at 30 units,
10 ms at 1,000; alpha of 5 annotators at 1,000 units 9 ms (nominal), 70 ms (interval); 10-25 s before.

Sources: J. Cohen (1960), "A coefficient of agreement for nominal scales", Educ. Psychol. Meas. 20; K. Krippendorff
(2011), "Computing Krippendorff's alpha-reliability"; B. Efron (1987), "Better bootstrap confidence intervals",
JASA 82; B. Efron & R. J. Tibshirani (1993), "An Introduction to the Bootstrap", ch. 14; D. B. Rubin (1981), "The
Bayesian bootstrap", Ann. Statist. 9; S. Basu, M. Banerjee & A. Sen (2000), "Bayesian inference for kappa from
single and multiple studies", Biometrics 56; A. F. Hayes & K. Krippendorff (2007), "Answering the call for a standard
reliability measure for coding data", Commun. Methods Meas. 1 (resampling units).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import ndtr, ndtri

from evalcore.stats.intervals import wilson_interval

#: bootstrap resamples and posterior draws of each interval
BOOTSTRAP = 2000
#: the Jeffreys prior's weight of each pseudo-unit (one per ordered pair of values)
PRIOR = 0.5
#: above this many distinct values (scores taken as categories) the prior's pseudo-units are left out: their
#: number grows as the square of it, and their weight would outweigh the units'
MAX_VALUES = 20


@dataclass(frozen=True)
class Agreement:
    """An agreement statistic with its interval at ``level`` (module docstring), over ``n`` examples
    (``statistic`` names it, ``meaning`` says in one line what it is); NaN where it is undefined."""

    statistic: str
    value: float
    ci_low: float
    ci_high: float
    n: int
    level: float
    meaning: str


def _cohen_kappa(a: np.ndarray, b: np.ndarray) -> float:
    from sklearn.metrics import cohen_kappa_score

    if np.unique(np.concatenate([a, b])).size < 2:
        return math.nan
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(cohen_kappa_score(a.astype(str), b.astype(str)))


def _krippendorff_alpha(matrix: np.ndarray, nominal: bool) -> float:
    import krippendorff

    if np.unique(matrix[~np.isnan(matrix)]).size < 2:
        return math.nan  # no variation at all: alpha is undefined
    return float(krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal" if nominal
                                    else "interval"))


def _kappa_units(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per unit ``[1[a = b], one-hot of a's value, one-hot of b's value]`` over the K values either annotator
    gives, and the same for the prior's pseudo-units, one per ordered pair of values (none above
    :data:`MAX_VALUES`)."""
    values, codes = np.unique(np.concatenate([a, b]), return_inverse=True)
    one_hot = np.eye(values.size)
    first, second = codes[:a.size], codes[a.size:]
    pairs = np.arange(values.size ** 2 if values.size <= MAX_VALUES else 0)
    c, d = pairs // values.size, pairs % values.size
    return (np.column_stack([first == second, one_hot[first], one_hot[second]]),
            np.column_stack([c == d, one_hot[c], one_hot[d]]))


def _kappa_of_sums(sums: np.ndarray) -> np.ndarray:
    """Cohen's kappa of the (..., 2K + 1) weighted sums of :func:`_kappa_units`."""
    k = (sums.shape[-1] - 1) // 2
    first, second = sums[..., 1:k + 1], sums[..., k + 1:]
    n = first.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        p_e = (first * second).sum(axis=-1) / n ** 2
        return (sums[..., 0] / n - p_e) / (1 - p_e)


def _alpha_features(counts: np.ndarray, values: np.ndarray, nominal: bool) -> np.ndarray:
    """Per unit (rows of ``counts``: how many of its labels take each of ``values``): the sums alpha is made of,
    ``[a_u, m_u, n_u1, ..., n_uV]`` (nominal) or ``[a_u, m_u, S_1u, S_2u]`` (interval) (module docstring)."""
    m = counts.sum(axis=1)
    if nominal:
        return np.column_stack([(m ** 2 - (counts ** 2).sum(axis=1)) / (m - 1), m, counts])
    s1, s2 = counts @ values, counts @ values ** 2
    return np.column_stack([2 * (m * s2 - s1 ** 2) / (m - 1), m, s1, s2])


def _alpha_of_sums(sums: np.ndarray, nominal: bool) -> np.ndarray:
    """Krippendorff's alpha of the (..., p) weighted sums of :func:`_alpha_features`."""
    a, n = sums[..., 0], sums[..., 1]
    expected = n ** 2 - (sums[..., 2:] ** 2).sum(axis=-1) if nominal else 2 * (n * sums[..., 3] - sums[..., 2] ** 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        return 1 - (n - 1) * a / expected


def _bca(draws: np.ndarray, estimate: float, jackknife: np.ndarray, sizes: np.ndarray,
         level: float) -> tuple[float, float]:
    """BCa interval from bootstrap ``draws`` and the leave-one-unit-out values ``jackknife`` of the distinct units
    (``sizes`` of each); NaN where it does not exist (module docstring)."""
    draws = draws[np.isfinite(draws)]
    if draws.size < BOOTSTRAP // 2 or not np.isfinite(jackknife).all():
        return math.nan, math.nan
    z0 = ndtri((np.sum(draws < estimate) + 0.5 * np.sum(draws == estimate)) / draws.size)
    spread = np.sum(sizes * jackknife) / sizes.sum() - jackknife
    second = np.sum(sizes * spread ** 2)
    acceleration = np.sum(sizes * spread ** 3) / (6 * second ** 1.5) if second > 0 else 0.0
    z = ndtri(np.array([(1 - level) / 2, (1 + level) / 2]))
    shifted = z0 + z
    if not np.isfinite(z0) or np.any(1 - acceleration * shifted <= 0):
        return math.nan, math.nan
    low, high = np.quantile(draws, ndtr(z0 + shifted / (1 - acceleration * shifted)))
    return float(low), float(high)


def _interval(statistic, features: np.ndarray, pseudo: np.ndarray, estimate: float, level: float,
              seed: int) -> tuple[float, float]:
    """The hull of ``estimate``, the BCa bootstrap interval and the Jeffreys posterior interval (module docstring)
    of ``statistic`` (a function of the (..., p) sums of the units' ``features``, one row per unit); ``pseudo``: the
    prior's pseudo-units, one row each."""
    units, sizes = np.unique(features, axis=0, return_counts=True)
    n = int(sizes.sum())
    rng = np.random.default_rng(seed)
    resampled = rng.multinomial(n, sizes / n, size=BOOTSTRAP) @ units
    bca = _bca(statistic(resampled), estimate, statistic(sizes @ units - units), sizes, level)
    # Bayesian bootstrap: a sum of `size` Exp(1) weights is Gamma(size); weights scaled to n + the prior's weight
    shape = np.concatenate([sizes, np.full(len(pseudo), PRIOR)])
    weights = rng.standard_gamma(shape, size=(BOOTSTRAP, shape.size))
    weights *= shape.sum() / weights.sum(axis=1, keepdims=True)
    posterior = statistic(weights @ np.vstack([units, pseudo]))
    posterior = posterior[np.isfinite(posterior)]
    tails = [(1 - level) / 2, (1 + level) / 2]
    post = np.quantile(posterior, tails) if posterior.size else (math.nan, math.nan)
    return (float(np.nanmin([estimate, bca[0], post[0]])), float(np.nanmax([estimate, bca[1], post[1]])))


def _alpha_units(matrix: np.ndarray, nominal: bool) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_alpha_features` of the units with two labels or more of ``matrix`` (annotators x units), and of the
    prior's pseudo-units: one per ordered pair of values (c, k), half its labels c and half k, each with as many
    labels as the mean unit (none above :data:`MAX_VALUES` values)."""
    values = np.unique(matrix[~np.isnan(matrix)])
    counts = (matrix.T[:, :, None] == values).sum(axis=1).astype(float)
    counts = counts[counts.sum(axis=1) >= 2]  # a unit with one label pairs with nothing
    one_hot = np.eye(values.size)
    pairs = np.arange(values.size ** 2 if values.size <= MAX_VALUES else 0)
    pseudo = (one_hot[pairs // values.size] + one_hot[pairs % values.size]) * counts.sum(axis=1).mean() / 2
    return _alpha_features(counts, values, nominal), _alpha_features(pseudo, values, nominal)


def kappa_interval(a, b, level: float = 0.95, seed: int = 0) -> tuple[float, float, float]:
    """Cohen's kappa of the paired labels ``a`` and ``b`` (scikit-learn's value) with its interval at ``level``
    (module docstring): ``(value, low, high)``; all NaN when every label is the same value."""
    a, b = np.asarray(a), np.asarray(b)
    value = _cohen_kappa(a, b)
    if math.isnan(value):
        return value, math.nan, math.nan
    low, high = _interval(_kappa_of_sums, *_kappa_units(a, b), value, level, seed)
    return value, low, high


def alpha_interval(matrix, nominal: bool = True, level: float = 0.95, seed: int = 0) -> tuple[float, float, float]:
    """Krippendorff's alpha of ``matrix`` (annotators x units, NaN where missing; the ``krippendorff`` package's
    value; nominal or interval) with its interval at ``level`` (module docstring): ``(value, low, high)``; all NaN
    when every label is the same value."""
    matrix = np.asarray(matrix, dtype=float)
    value = _krippendorff_alpha(matrix, nominal)
    if math.isnan(value):
        return value, math.nan, math.nan
    low, high = _interval(lambda sums: _alpha_of_sums(sums, nominal), *_alpha_units(matrix, nominal), value, level,
                          seed)
    return value, low, high


def annotator_agreement(labels: pd.DataFrame, metric: str = "correct", level: float = 0.95,
                        seed: int = 0) -> Agreement | None:
    """Agreement of the annotators on the examples two or more of them labeled (``labels``: one row per current
    label with ``example_id``, ``annotator``, ``value``); None when fewer than two examples have two labels."""
    wide = labels.pivot_table(index="example_id", columns="annotator", values="value", aggfunc="mean")
    wide = wide[wide.notna().sum(axis=1) >= 2]
    if len(wide) < 2:
        return None
    nominal = metric != "score"
    if nominal and wide.shape[1] == 2 and wide.notna().all(axis=1).all():
        value, low, high = kappa_interval(wide.iloc[:, 0].to_numpy(), wide.iloc[:, 1].to_numpy(), level, seed)
        return Agreement("Cohen's kappa", value, low, high, len(wide), level,
                         "Agreement of the two annotators beyond chance: 1 always agree, 0 no better than chance.")
    value, low, high = alpha_interval(wide.to_numpy(float).T, nominal, level, seed)
    return Agreement("Krippendorff's alpha", value, low, high, len(wide), level,
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
    value, low, high = kappa_interval(human, judge, level, seed)
    kappa = Agreement("Cohen's kappa (judge vs humans)", value, low, high, len(y), level,
                      "Agreement of the AI judge with the humans beyond chance: 1 always agree, 0 chance.")
    var_l = float(np.var(yhat, ddof=1))
    lam = float(np.clip(np.cov(y, yhat, ddof=1)[0, 1] / var_l, 0.0, 1.0)) if var_l > 0 else 0.0
    var_r, var_y = float(np.var(y - lam * yhat, ddof=1)), float(np.var(y, ddof=1))
    effective = len(y) * var_y / var_r if var_r > 0 else math.inf if var_y > 0 else float(len(y))
    return JudgeAgreement(len(y), confusion, kappa, float(effective))


def annotator_quality(labels: pd.DataFrame, settled: pd.Series, metric: str = "correct", level: float = 0.95,
                      scale: tuple[float, float] | None = None) -> pd.DataFrame:
    r"""Each annotator against the settled labels and against the other annotators, worst first.

    ``labels``: one row per current label (``example_id``, ``annotator``, ``value``; NaN values, skips, left
    out); ``settled``: example id -> its settled (adjudicated) value, NaN or absent where none. Two values agree when
    equal (0/1 and A/B/tie labels) or, for scores, when they differ by at most the campaign's rule,
    :data:`evalcore.labeling.campaign.SCORE_AGREEMENT` of ``scale``'s range (default: the range of the values
    given), as :func:`evalcore.labeling.campaign.settle` decides agreement.

    One row per annotator with ``annotator``; ``labels`` (how many); ``agree_settled``: the share of their
    ``n_settled`` labels on settled examples that agree with the settled value, with its Wilson interval
    ``settled_low``, ``settled_high`` (:func:`evalcore.stats.intervals.wilson_interval`; one label per example, so
    binomial); ``agree_others``: over the ``n_others`` examples they share with another annotator, the mean of
    :math:`s_e`, the share of the others on example e who agree with them, with ``others_low``, ``others_high``: the
    agreements on one example are not independent (one odd label disagrees with every other), so the interval is
    Wilson's at the effective sample size of the clustered mean (Kish's design effect; Dean & Pagano 2015 for the
    Wilson interval of clustered proportions):

    .. math:: \bar s = \frac{1}{n}\sum_e s_e, \quad \hat v = \frac{\sum_e (s_e - \bar s)^2}{n (n - 1)}, \quad
              n_{eff} = \frac{\bar s (1 - \bar s)}{\hat v},

    capped at the number of pairs compared, and :math:`n` where :math:`\bar s (1 - \bar s) = 0` or :math:`n = 1`
    (no variance to estimate). Sorted by ``agree_settled`` ascending (NaN last), then ``agree_others``. An example
    settled because its labels agreed agrees with each of them by construction (alike for every annotator): the
    adjudicated examples are the ones that tell annotators apart.

    Source: P. Dean & M. Pagano (2015), "Evaluating confidence interval methods for binomial proportions in
    clustered surveys", J. Surv. Stat. Methodol. 3.
    """
    from evalcore.labeling.campaign import SCORE_AGREEMENT  # campaign imports this module: read on use

    given = labels.dropna(subset=["value"])
    wide = given.pivot_table(index="example_id", columns="annotator", values="value", aggfunc="last")
    x = wide.to_numpy(float)  # examples x annotators
    truth = settled.reindex(wide.index).to_numpy(float)
    if metric == "score":
        low, high = scale if scale is not None else (np.nanmin(x), np.nanmax(x))
        tolerance = SCORE_AGREEMENT * (high - low)
    else:
        tolerance = 0.0
    has = ~np.isnan(x)
    checked = has & ~np.isnan(truth)[:, None]
    n_settled = checked.sum(axis=0)
    agree_settled = (checked & (np.abs(x - truth[:, None]) <= tolerance)).sum(axis=0)
    settled_low, settled_high = wilson_interval(agree_settled, n_settled, 1 - level)
    pairs = has[:, :, None] & has[:, None, :] & ~np.eye(x.shape[1], dtype=bool)  # example x annotator x other
    with np.errstate(invalid="ignore"):
        agreeing = (pairs & (np.abs(x[:, :, None] - x[:, None, :]) <= tolerance)).sum(axis=2)
    others = pairs.sum(axis=2)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(others > 0, agreeing / others, np.nan)
        n = (others > 0).sum(axis=0)
        mean = np.nansum(share, axis=0) / n
        var = np.nansum((share - mean) ** 2, axis=0) / (n * (n - 1))
        spread = mean * (1 - mean)
        effective = np.where((spread > 0) & (n > 1), np.minimum(spread / var, others.sum(axis=0)), n)
    others_low, others_high = wilson_interval(np.where(n > 0, mean * effective, 0.0), np.where(n > 0, effective, 0),
                                              1 - level)
    table = pd.DataFrame({"annotator": wide.columns, "labels": has.sum(axis=0),
                          "agree_settled": np.where(n_settled > 0, agree_settled / np.maximum(n_settled, 1), np.nan),
                          "settled_low": settled_low, "settled_high": settled_high, "n_settled": n_settled,
                          "agree_others": mean, "others_low": others_low, "others_high": others_high,
                          "n_others": n})
    return table.sort_values(["agree_settled", "agree_others", "annotator"], na_position="last",
                             kind="stable").reset_index(drop=True)
