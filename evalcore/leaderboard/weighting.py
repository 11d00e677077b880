"""Weighted category aggregates, standard errors of their differences, and the ternary task-weighting map.

Method: "Statistical Uncertainty Quantification for Aggregate Performance Metrics in Machine Learning Benchmarks"
(``../shared/papers/aggregate-uncertainty-vtab.txt``), Section 2.3 (weighting task performances, Eq. 1-3),
Section 3.3 (visualizing task weightings with uncertainty, Figures 3 and 4) and the Appendix (standard errors for
the VTAB task-weighting plots; correlation between models).

Notation (summary data: one row per model and task with ``n`` and ``n_correct``): model ``i``, task ``j`` with
``N_j`` examples and accuracy ``p_ij = Y_ij / N_j``; category ``c`` holds ``K_c`` tasks. Then

* category mean ``pbar_ic = (1/K_c) sum_{j in c} p_ij``;
* weighted aggregate ``S_i(w) = sum_c w_c pbar_ic`` (``w_c >= 0``, ``sum_c w_c = 1``);
* under independence across tasks and a binomial variance per task (Appendix),
  ``Var[pbar_ic] = (1/K_c^2) sum_{j in c} p_ij (1 - p_ij) / N_j`` and ``Var[S_i] = sum_c w_c^2 Var[pbar_ic]``;
* difference of two models (Eq. 3): ``Var[S_A - S_B] = Var[S_A] + Var[S_B] - 2 rho sqrt(Var[S_A] Var[S_B])``.
  With ``rho = 0`` (independent models, the paper's plots) this is ``Var[S_A] + Var[S_B]``. The Appendix writes
  ``Var[S_A] = sigma^2`` (the *smaller* of the two variances) and ``Var[S_B] = k sigma^2`` with ``k >= 1``; the
  standard deviation of the difference allowing for correlation is the independent one times
  ``sqrt(((k + 1) - 2 rho sqrt(k)) / (k + 1))``. ``rho`` is the correlation between the two models' *aggregated*
  scores ``S_A`` and ``S_B`` (not a per-example or per-task correlation). With equal variances (``k = 1``) and
  ``rho = 0.5`` the factor is ``sqrt(1/2) ~ 0.71``, which is why the paper also draws its maps with
  ``z = 2 sqrt(1/2) ~ 1.4`` instead of ``z = 2``.

Ternary map (Section 3.3): over the simplex of weights ``(w1, w2, w3)`` of three categories on a grid of step
``step``, the winner is ``argmax_i S_i(w)``, the runner-up the second best, ``margin = S_winner - S_runner_up``
and the point is gray ("too close to call") when ``margin < z * SE[S_winner - S_runner_up]``. The map is
computed for all grid points at once (``scores = W @ category_means.T``).

All accuracies are fractions in [0, 1].

Public API
----------
``category_table(data, normalized, se_source, n_boot, seed, bounds, posterior) -> CategoryStats`` category means,
variances, covariances (binomial, bootstrap or Bayesian);
``weighted_scores(data, weights, normalized, level, bounds, n_boot, seed) -> DataFrame`` model, score, se, ci_low, ci_high;
``difference_se(data, model_a, model_b, weights, rho) -> DifferenceSE``;
``correlation_factor(k, rho) -> float`` the paper's reduction factor;
``ternary_winner_map(data, categories, step=0.01, z=2.0, se_source, normalized, rho, n_boot, seed, bounds,
posterior) -> DataFrame`` w1, w2, w3,
winner, runner_up, diff, se, gray (names of the three categories in ``frame.attrs["categories"]``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.stats import norm

from evalcore.leaderboard.bootstrap import (
    _check_bounds, _check_level, _matrices, bootstrap_replicates, normalization_bounds, user_bounds,
)
from evalcore.leaderboard.bayes import GibbsDraws, fit
from evalcore.stats.intervals import DEFAULT_LEVEL, binomial_variance
from evalcore.data.reading import EvalDataError

__all__ = [
    "SE_SOURCES",
    "CategoryStats",
    "DifferenceSE",
    "category_table",
    "weighted_scores",
    "difference_se",
    "correlation_factor",
    "ternary_winner_map",
]

#: where the standard errors of the ternary map come from
SE_SOURCES = ("binomial", "bootstrap", "bayes")

_WEIGHT_TOL = 1e-6


@dataclass(frozen=True)
class CategoryStats:
    """Per-model category means and their sampling (co)variances.

    ``means[i, c]`` = ``pbar_ic``; ``cov`` has shape (M, C, M, C): ``cov[i, c, i', c']`` =
    ``Cov[pbar_ic, pbar_i'c']``. For ``source="binomial"`` only the diagonal ``cov[i, c, i, c] = Var[pbar_ic]``
    is non-zero (independence across tasks and models); for ``source="bootstrap"`` it is the empirical covariance
    over the summary bootstrap replicates of :mod:`evalcore.leaderboard.bootstrap`.
    """

    models: tuple[str, ...]
    categories: tuple[str, ...]
    task_counts: tuple[int, ...]
    means: np.ndarray
    cov: np.ndarray
    source: str

    @property
    def var(self) -> np.ndarray:
        """``Var[pbar_ic]``, shape (M, C)."""
        m, c = self.means.shape
        idx_m, idx_c = np.arange(m), np.arange(c)
        return self.cov[idx_m[:, None], idx_c[None, :], idx_m[:, None], idx_c[None, :]]


@dataclass(frozen=True)
class DifferenceSE:
    """Standard error of ``S_a - S_b`` for one weight vector (paper, Eq. 3 and Appendix).

    ``var_a``, ``var_b``: ``Var[S_a]``, ``Var[S_b]`` (binomial, independence across tasks);
    ``se_independent = sqrt(var_a + var_b)``; ``k = max(var_a, var_b) / min(var_a, var_b)`` (>= 1, the paper's
    ratio of the larger to the smaller variance); ``rho`` the assumed correlation of ``S_a`` and ``S_b``;
    ``factor = sqrt(((k + 1) - 2 rho sqrt(k)) / (k + 1))``; ``se_adjusted = factor * se_independent``
    (= ``sqrt(var_a + var_b - 2 rho sqrt(var_a var_b))``).
    """

    model_a: str
    model_b: str
    diff: float
    var_a: float
    var_b: float
    se_independent: float
    k: float
    rho: float
    factor: float
    se_adjusted: float


# ---------------------------------------------------------------------------------------------- helpers


def correlation_factor(k: float | np.ndarray, rho: float) -> float | np.ndarray:
    """The paper's reduction factor ``sqrt(((k + 1) - 2 rho sqrt(k)) / (k + 1))`` (Appendix).

    ``k >= 1`` is ``Var[S_B] / Var[S_A]`` with ``Var[S_B] >= Var[S_A]``; ``rho`` in [-1, 1] the correlation of
    the aggregated scores. Multiplies the standard error computed under independence of the two models.
    """
    _check_rho(rho)
    k = np.asarray(k, dtype=float)
    if np.any(~np.isfinite(k)) or np.any(k < 1):
        raise ValueError("k is the ratio of the larger to the smaller variance: it must be finite and >= 1.")
    out = np.sqrt(np.maximum((k + 1) - 2 * rho * np.sqrt(k), 0.0) / (k + 1))
    return float(out) if out.ndim == 0 else out


def _check_rho(rho: float) -> None:
    if not np.isfinite(rho) or not -1 <= rho <= 1:
        raise ValueError(f"rho is a correlation and must lie in [-1, 1], got {rho}.")


def category_table(
    data: pd.DataFrame,
    normalized: bool = False,
    se_source: str = "binomial",
    n_boot: int = 2000,
    seed: int = 0,
    bounds: Mapping[str, tuple[float, float]] | str | None = None,
    posterior: GibbsDraws | None = None,
) -> CategoryStats:
    """Category means ``pbar_ic`` and their (co)variances from a summary table (model, task, category, n, n_correct).

    ``se_source="binomial"``: ``Var[pbar_ic] = (1/K_c^2) sum_{j in c} p_ij (1 - p_ij) / N_j`` (Appendix),
    independent across categories and models, with ``p_ij`` of a cell at 0 or 1 replaced by the Jeffreys mean
    ``(Y_ij + 1/2) / (N_ij + 1)`` (:func:`evalcore.stats.intervals.binomial_variance`: never a standard error of 0). ``se_source="bootstrap"``: the empirical covariance of the category
    means over ``n_boot`` binomial bootstrap replicates (:func:`evalcore.leaderboard.bootstrap.bootstrap_replicates`).
    ``se_source="bayes"``: the posterior covariance of the category means of ``theta_ij`` under the hierarchical
    beta-binomial model (Section 2.2; ``posterior`` = the draws of :func:`evalcore.leaderboard.bayes.fit`, fitted here with
    2,000 draws x 4 chains and ``seed`` when omitted). The means are the observed ones for every source, so the
    winner regions of the map do not move with the standard-error source, only the gray zone does.
    ``normalized=True`` uses the paper's normalized accuracy ``(p - low_j) / (high_j - low_j)`` (low / high as in
    :func:`evalcore.leaderboard.bootstrap.normalization_bounds`: the observed minimum / maximum over models by default,
    ``bounds="bootstrap"`` the paper's bootstrap extremes, or the user's ``{task: (chance, ceiling)}``); the
    normalization is linear per task, so variances are divided
    by ``(high_j - low_j)^2``.
    """
    if se_source not in SE_SOURCES:
        raise ValueError(f"Unknown se_source '{se_source}': choose one of {', '.join(SE_SOURCES)}.")
    _check_bounds(normalized, bounds)
    models, tasks, task_cats, n, k = _matrices(data)
    cats = tuple(dict.fromkeys(task_cats))
    raw = k / n
    low, span = np.zeros(len(tasks)), np.ones(len(tasks))
    rep = None  # the bootstrap runs only when its replicates or its min/max are needed
    if (normalized and bounds == "bootstrap") or se_source == "bootstrap":
        rep = bootstrap_replicates(data, n_boot=n_boot, seed=seed)
    if normalized:
        if bounds is None:
            low, hi = raw.min(axis=0), raw.max(axis=0)
        elif bounds == "bootstrap":
            low, hi = normalization_bounds(rep, "bootstrap")
        else:
            low, hi = user_bounds(tasks, bounds)
        span = np.where(hi - low > 0, hi - low, np.inf)  # constant task: normalized value 0, variance 0
    # membership matrix A (T, C) with A[j, c] = 1/K_c for j in c: category means = p @ A
    member = (np.asarray(task_cats)[:, None] == np.asarray(cats)[None, :]).astype(float)
    counts = member.sum(axis=0)
    avg = member / counts
    means = ((raw - low) / span) @ avg
    m, c = means.shape
    if se_source == "binomial":
        task_var = binomial_variance(k, n) / span[None, :] ** 2  # (M, T)
        var = task_var @ (avg ** 2)  # (1/K_c^2) sum_j Var[p_ij]
        cov = np.zeros((m, c, m, c))
        ii, cc = np.meshgrid(np.arange(m), np.arange(c), indexing="ij")
        cov[ii, cc, ii, cc] = var
    else:
        if se_source == "bootstrap":
            values = rep.values
        else:
            g = posterior if posterior is not None else fit(data, draws=2000, chains=4, seed=seed)
            if g.models != models or g.tasks != tasks:
                raise ValueError("posterior was fitted on other models or tasks than data.")
            values = g.theta.reshape(-1, m, len(tasks))
        reps = (((values - low) / span) @ avg).reshape(values.shape[0], m * c)  # (B, M*C)
        cov = np.cov(reps, rowvar=False).reshape(m, c, m, c)
    return CategoryStats(models, cats, tuple(int(x) for x in counts), means, cov, se_source)


def _weight_vector(weights: Mapping[str, float] | Sequence[float], categories: tuple[str, ...]) -> np.ndarray:
    """Weights in category order; a mapping may omit categories (weight 0). Non-negative, summing to 1."""
    if isinstance(weights, Mapping):
        unknown = [str(c) for c in weights if str(c) not in categories]
        if unknown:
            raise EvalDataError(
                f"Unknown categor{'y' if len(unknown) == 1 else 'ies'} {', '.join(repr(c) for c in unknown)} in the "
                f"weights: the data has {', '.join(repr(c) for c in categories)}."
            )
        w = np.array([float(weights.get(c, 0.0)) for c in categories])
    else:
        w = np.asarray(list(weights), dtype=float)
        if w.shape != (len(categories),):
            raise ValueError(
                f"Expected {len(categories)} weights (one per category, in the order "
                f"{', '.join(repr(c) for c in categories)}), got {w.size}."
            )
    if np.any(~np.isfinite(w)) or np.any(w < 0):
        raise ValueError("Weights must be finite and non-negative.")
    if abs(w.sum() - 1) > _WEIGHT_TOL:
        raise ValueError(f"Weights must sum to 1 (the paper's convention), got {w.sum():.6g}.")
    return w


# ---------------------------------------------------------------------------------------------- scores


def weighted_scores(
    data: pd.DataFrame,
    weights: Mapping[str, float] | Sequence[float],
    normalized: bool = False,
    level: float = DEFAULT_LEVEL,
    bounds: Mapping[str, tuple[float, float]] | str | None = None,
    n_boot: int = 2000,
    seed: int = 0,
) -> pd.DataFrame:
    """Weighted aggregate ``S_i(w) = sum_c w_c pbar_ic`` with its binomial standard error, one row per model.

    ``weights``: ``{category: weight}`` (omitted categories weigh 0) or a sequence in the order of first
    appearance of the categories in ``data``; non-negative and summing to 1.
    ``se = sqrt(sum_c w_c^2 Var[pbar_ic])`` with ``Var[pbar_ic] = (1/K_c^2) sum_{j in c} p_ij (1 - p_ij) / N_j``
    (independence across tasks, binomial per task; at ``p_ij`` 0 or 1 the Jeffreys-floored variance of
    :func:`evalcore.stats.intervals.binomial_variance`, so the se is never 0); the interval is the normal one ``score -/+ z se`` with
    ``z = Phi^-1((1 + level) / 2)`` (``level`` :data:`~evalcore.stats.intervals.DEFAULT_LEVEL`, 95%, by default,
    as every interval of the package; 0.834 gives the paper's comparison intervals).
    Columns: model, score, se, ci_low, ci_high (data order of models). ``n_boot`` / ``seed``: the bootstrap that
    gives the normalization bounds when ``normalized`` with ``bounds="bootstrap"``.

    Measured coverage of the true weighted accuracy (``benchmarks/coverage/weighting.py``, counts drawn binomially
    and independently per task): 0.82-0.84 at 83.4 % and 0.94-0.95 at 95 %, on simulated data and on VTAB-1k's
    published accuracies at the published test sizes and at N = 200.
    """
    _check_level(level)
    st = category_table(data, normalized=normalized, bounds=bounds, n_boot=n_boot, seed=seed)
    w = _weight_vector(weights, st.categories)
    score = st.means @ w
    se = np.sqrt(st.var @ w ** 2)
    z = float(norm.ppf((1 + level) / 2))
    return pd.DataFrame({"model": list(st.models), "score": score, "se": se,
                         "ci_low": score - z * se, "ci_high": score + z * se})


def difference_se(
    data: pd.DataFrame,
    model_a: str,
    model_b: str,
    weights: Mapping[str, float] | Sequence[float],
    rho: float = 0.0,
    normalized: bool = False,
) -> DifferenceSE:
    """Standard error of ``S_a - S_b`` under independence and with the paper's correlation adjustment.

    ``se_independent = sqrt(Var[S_a] + Var[S_b])`` (Appendix); ``se_adjusted = se_independent *
    sqrt(((k + 1) - 2 rho sqrt(k)) / (k + 1))`` with ``k = Var[larger] / Var[smaller] >= 1`` and ``rho`` the
    correlation of the two aggregated scores (Eq. 3). When both variances are 0, ``k = 1`` and both SEs are 0.
    With independent models ``diff -/+ 1.96 se_independent`` held the true difference 0.95 of the time
    (``benchmarks/coverage/weighting.py``: simulated, VTAB-1k).
    """
    _check_rho(rho)
    scores = weighted_scores(data, weights, normalized=normalized).set_index("model")
    for name in (model_a, model_b):
        if name not in scores.index:
            shown = ", ".join(repr(m) for m in list(scores.index)[:5])
            raise EvalDataError(f"Unknown model '{name}': the data has {shown}{' ...' if len(scores) > 5 else ''}.")
    if model_a == model_b:
        raise ValueError("model_a and model_b must be different models.")
    va = float(scores.at[model_a, "se"] ** 2)
    vb = float(scores.at[model_b, "se"] ** 2)
    small, large = min(va, vb), max(va, vb)
    k = large / small if small > 0 else (1.0 if large == 0 else np.inf)
    se_ind = float(np.sqrt(va + vb))
    if np.isfinite(k):
        factor = float(correlation_factor(k, rho))
    else:  # one variance 0: no correlation is possible, the difference's variance is the other one
        factor = 1.0
    return DifferenceSE(
        model_a=model_a,
        model_b=model_b,
        diff=float(scores.at[model_a, "score"] - scores.at[model_b, "score"]),
        var_a=va,
        var_b=vb,
        se_independent=se_ind,
        k=float(k),
        rho=float(rho),
        factor=factor,
        se_adjusted=factor * se_ind,
    )


# ---------------------------------------------------------------------------------------------- ternary map


def simplex_grid(step: float = 0.01) -> np.ndarray:
    """All ``(w1, w2, w3)`` with ``w_c`` multiples of ``step`` summing to 1, shape (G, 3); ``1/step`` whole."""
    if not 0 < step <= 1:
        raise ValueError(f"step must lie in (0, 1], got {step}.")
    n = int(round(1 / step))
    if abs(n * step - 1) > 1e-9:
        raise ValueError(f"1/step must be a whole number (e.g. 0.01, 0.02, 0.05, 0.1), got step={step}.")
    i, j = np.triu_indices(n + 1)  # 0 <= i <= j <= n
    a = i
    b = j - i
    c = n - j
    return np.stack([a, b, c], axis=1) / n


def _pick_categories(st: CategoryStats, categories: Sequence[str] | None) -> list[int]:
    have = st.categories
    if categories is None:
        if len(have) == 3:
            return [0, 1, 2]
        if len(have) < 3:
            raise EvalDataError(
                f"The ternary map weighs three task categories against each other, but the data has "
                f"{len(have)} ({', '.join(repr(c) for c in have)}). "
                + ("With one category there is nothing to weigh: every weighting gives the same ranking."
                   if len(have) == 1 else
                   "With two categories use weighted_scores over a line of weights (w, 1 - w) instead.")
            )
        raise EvalDataError(
            f"The data has {len(have)} categories ({', '.join(repr(c) for c in have)}): pick three with "
            "categories=[...] (or group them into three categories first)."
        )
    cats = [str(c) for c in categories]
    if len(cats) != 3 or len(set(cats)) != 3:
        raise EvalDataError(f"categories must name exactly three distinct categories, got {cats}.")
    unknown = [c for c in cats if c not in have]
    if unknown:
        raise EvalDataError(
            f"Unknown categor{'y' if len(unknown) == 1 else 'ies'} {', '.join(repr(c) for c in unknown)}: the data "
            f"has {', '.join(repr(c) for c in have)}."
        )
    return [have.index(c) for c in cats]


def ternary_winner_map(
    data: pd.DataFrame,
    categories: Sequence[str] | None = None,
    step: float = 0.01,
    z: float = 2.0,
    se_source: str = "binomial",
    normalized: bool = False,
    rho: float = 0.0,
    n_boot: int = 2000,
    seed: int = 0,
    bounds: Mapping[str, tuple[float, float]] | str | None = None,
    posterior: GibbsDraws | None = None,
) -> pd.DataFrame:
    """Winner of the weighted aggregate at every point of the weight simplex over three categories (Section 3.3).

    Grid: all ``(w1, w2, w3)`` in multiples of ``step`` summing to 1 (``(n+1)(n+2)/2`` points, ``n = 1/step``);
    ``w1, w2, w3`` weigh ``categories`` in the order given (default: the data's three categories in order of first
    appearance; stored in ``frame.attrs["categories"]``). Per point: ``winner`` = argmax of ``S_i(w)`` (ties go
    to the model listed first in the data), ``runner_up`` the second, ``diff = S_winner - S_runner_up >= 0``,
    ``se`` the standard error of that difference, ``gray = diff < z * se`` (the paper's "too close to call" zone; an
    exact tie is always gray; z = 2 under independence by default). ``se``: ``"binomial"`` = ``sqrt(Var[S_a] + Var[S_b] - 2 rho sqrt(Var[S_a]
    Var[S_b]))`` with the Appendix's binomial variances (``rho = 0``: the paper's plots; the paper's alternative
    is ``z = 2 sqrt(1/2)`` at ``rho = 0``); ``"bootstrap"`` = ``sqrt(w' Cov[pbar_a - pbar_b] w)`` from the summary
    bootstrap, ``"bayes"`` = the same from the posterior draws of the hierarchical model (``posterior``, see
    :func:`category_table`; ``rho`` ignored for both). ``normalized`` uses the paper's normalized accuracies
    (``bounds``: the user's chance/ceiling per task). Raises
    :class:`~evalcore.data.reading.EvalDataError` unless exactly three categories are in play.

    What a called (not gray) point means: a one-sided z-test that the winner beats the runner-up, so at each weight
    the chance of naming a winner that is not truly best is at most ``Phi(-z)`` (2.3 % at z = 2; measured 0.1-0.6 %
    in ``benchmarks/coverage/weighting.py``). It holds per point, not for the map: where few points are called, a
    large share of the called ones can be wrong (VTAB-1k's accuracies with 200 examples per task: 2 % of the
    points called, 21 % of those with a wrong winner).
    """
    if not np.isfinite(z) or z < 0:
        raise ValueError(f"z must be a non-negative number of standard errors, got {z}.")
    _check_rho(rho)
    st = category_table(data, normalized=normalized, se_source=se_source, n_boot=n_boot, seed=seed, bounds=bounds,
                        posterior=posterior)
    pick = _pick_categories(st, categories)
    grid = simplex_grid(step)  # (G, 3)
    means = st.means[:, pick]  # (M, 3)
    cov = st.cov[:, pick][:, :, :, pick]  # (M, 3, M, 3)
    scores = grid @ means.T  # (G, M)
    order = np.argsort(-scores, axis=1, kind="stable")
    a, b = order[:, 0], order[:, 1]
    rows = np.arange(len(grid))
    margin = scores[rows, a] - scores[rows, b]
    if se_source == "binomial":
        var = cov[np.arange(len(st.models))[:, None], np.arange(3), np.arange(len(st.models))[:, None],
                  np.arange(3)]  # (M, 3)
        var_s = (grid ** 2) @ var.T  # (G, M): Var[S_i(w)]
        va, vb = var_s[rows, a], var_s[rows, b]
        var_d = va + vb - 2 * rho * np.sqrt(va * vb)
    else:
        d = cov[a, :, a, :] + cov[b, :, b, :] - cov[a, :, b, :] - cov[b, :, a, :]  # (G, 3, 3)
        var_d = np.einsum("gi,gij,gj->g", grid, d, grid)
    se = np.sqrt(np.maximum(var_d, 0.0))
    gray = (margin < z * se) | (margin <= 0)
    names = np.asarray(st.models, dtype=object)
    frame = pd.DataFrame({
        "w1": grid[:, 0],
        "w2": grid[:, 1],
        "w3": grid[:, 2],
        "winner": names[a],
        "runner_up": names[b],
        "diff": margin,
        "se": se,
        "gray": gray,
    })
    frame.attrs.update({
        "categories": tuple(st.categories[i] for i in pick),
        "z": float(z),
        "se_source": se_source,
        "normalized": bool(normalized),
        "rho": float(rho),
    })
    return frame
