r"""Subgroup performance: direct, synthetic-regression and empirical Bayes estimates with intervals.

Method: Fogliato, Patil, Akpinar & Monfort (2024), "Precise Model Benchmarking with Only a Few Observations"
(EMNLP), Sections 3 and 4.2 and Appendix A; robust intervals from Armstrong, Kolesar & Plagborg-Moller (2022),
"Robust Empirical Bayes Confidence Intervals", Econometrica.

A *unit* g is one (model, group) pair with mean metric :math:`Z_g` over its :math:`n_g` labeled examples.

* Direct (DT): :math:`Z_g`, Wilson interval (binary metric) or Student-t interval (continuous metric).
* Synthetic regression (SR): :math:`\hat f(X_g)`, a regression of :math:`Z_g` on unit features (see
  :func:`unit_features`): XGBoost tuned by cross-validation, a linear (Fay-Herriot) fit, or each model's grand
  mean (James-Stein).
* Empirical Bayes (EB), 2-fold cross-fitted over groups (paper Section 4.2): fit :math:`\hat f` on one fold,
  and on the other compute :math:`\varepsilon_g = Z_g - \hat f(X_g)`, :math:`\hat A` (below),
  :math:`\hat\mu_g = \hat f(X_g) + w_g (Z_g - \hat f(X_g))` with :math:`w_g = \hat A / (\hat A + s_g^2)`; swap.
* Robust EB interval: :math:`\hat\mu_g \pm \mathrm{cva}_\alpha(s_g^2 / \hat A, \hat\kappa)\, w_g\, s_g`, with
  the moment estimates of Armstrong et al. and their finite-sample truncations,
  :math:`\bar A = \max\{\overline{\varepsilon^2 - s^2},\ 2\,\overline{s^4} / (G\,\overline{s^2})\}`,
  :math:`\hat\kappa = \max\{\overline{\varepsilon^4 - 6 s^2 \varepsilon^2 + 3 s^4} / \bar A^2,\
  1 + 32\,\overline{s^8} / (G\,\overline{s^4}\,\bar A^2)\}`, and
  :math:`\hat A = \max\{\bar A,\ \overline{\varepsilon^2 - s^2} + \mathrm{SE}_{cl}\}`, the moment estimate plus one
  standard error clustered by group (:func:`_moments`). These intervals have *average* coverage
  :math:`1 - \alpha` across units, not per unit.

Why the clustered standard error: when every model answers the same few examples of a group, the units of a group
share one draw of examples, so the fold's :math:`\overline{\varepsilon^2 - s^2}` averages as many independent
draws as the fold has groups (7 for MMLU-Pro's 14 categories), not units (203). Measured (MMLU-Pro, 29 models, 5
questions per (model, category), 15 repetitions, the unit's own variance) its 10th and 90th percentiles were 0.30
and 2.3 times the fold's true :math:`A`; an underestimated :math:`A` loses more coverage than an overestimated one
gains, so even the true variance gave 0.85 at 90 %, and only the true variance with the true :math:`A` and
:math:`\kappa` gave 0.90. With the variance below and :math:`\hat A` plus one clustered standard error: 0.91
(``benchmarks/coverage/eb.py``, 40 repetitions).

Variance of :math:`Z_g` (never 0, so no interval has zero width): for a binary metric the mean of two binomial
variances, :math:`s_g^2 = \tfrac12 [\tilde p_g (1 - \tilde p_g) + \bar p_g (1 - \bar p_g)] / n_g`, at the Jeffreys
posterior mean :math:`\tilde p_g = (k_g + 1/2) / (n_g + 1)` of the unit's own labels and at the cross-fitted
synthetic estimate :math:`\bar p_g = \hat f(X_g)` kept inside :math:`[\tilde p(0), \tilde p(n_g)]` (the Jeffreys
means of all-wrong and all-right). The normal EB model :math:`Z_g \mid \theta_g \sim N(\theta_g, s_g^2)` takes
:math:`s_g` as known; the own variance alone is smallest exactly when the noise pushed :math:`Z_g` to 0 or 1, which
narrows those intervals and weighs that noise most, while :math:`\hat f` (free of the unit's labels) alone is far
off where the regression is. Measured (``benchmarks/coverage/eb.py``, with the clustered :math:`\hat A`): with
the synthetic variance only, EB/DT MSE 0.88 on model-vs-human (4 repetitions; 0.77 with the own variance only);
with the own variance only, MMLU-Pro coverage at 90 % fell to 0.86 even with the true :math:`A` and
:math:`\kappa` (0.90 with the synthetic one); with their mean, MMLU-Pro coverage 0.90-0.92 at 90 % (5 to 30
questions per (model, category) or (model, src), 40 repetitions) and model-vs-human MSE 0.69. For a continuous metric the
sample variance over :math:`n_g`, with the model's pooled within-group variance where :math:`n_g < 2` or the sample
variance is 0 (all models' pooled variance when the model itself has no within-group variation; an
:class:`EvalDataError` when no unit has any).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
from scipy import stats

from evalcore.subgroups.robust_intervals import robust_critical_value
from evalcore.engine import LazyLog, is_lazy, reductions
from evalcore.data.features import default_features, numeric_columns
from evalcore.stats.intervals import DEFAULT_ALPHA, wilson_interval
from evalcore.data.reading import EvalDataError
from evalcore.data.repeats import N_REPEATS, per_example
from evalcore.stats.summaries import mean_table

REGRESSORS = ("xgboost", "linear", "mean")
RESULT_COLUMNS = ["model", "group", "n", "direct", "direct_low", "direct_high", "synthetic", "eb", "eb_low",
                  "eb_high", "shrinkage", "A", "kappa"]
#: Hyper-parameter grid of the XGBoost synthetic regression, tuned by 2-fold cross-validation.
XGB_GRID = tuple((trees, depth) for trees in (25, 100, 300) for depth in (1, 2, 4))
MIN_UNITS = 4
LAZY_SHARED = ("off: models share labeled examples within groups, and for a log in an engine the feature is computed "
               "only when each model's labeled examples are its own (load the log into memory to use it)")
_XGB_THREADS = 1  # threads per XGBoost fit (see _xgboost_fit_predict)
#: the two cross-fitting folds' regressions are fitted on this many threads by :func:`empirical_bayes` (see
#: :func:`_fit`)
FOLD_THREADS = 2


def direct_estimates(log: pd.DataFrame, metric: str = "correct", alpha: float = DEFAULT_ALPHA) -> pd.DataFrame:
    """Per (model, group) mean of ``metric`` over labeled rows: model, group, n, estimate, se, ci_low, ci_high."""
    _require_metric(log, metric)
    log = per_example(log)  # repeated samples: the example is the unit
    # labeled rows only: a (model, group) cell without labels would reach the Wilson interval as 0 of 0 and raise
    table = mean_table(log[log[metric].notna()], ["model", "group"], metric, alpha)
    table = table[table["n"] > 0]
    return table.drop(columns="n_unlabeled").reset_index(drop=True)


def unit_variances(units: pd.DataFrame, metric: str, center=None) -> np.ndarray:
    r""":math:`s_g^2` for each unit (columns n, estimate, and sd for continuous metrics); see the module doc.

    Binary metric: :math:`\tilde p (1 - \tilde p) / n_g` at the Jeffreys posterior mean
    :math:`\tilde p = (k_g + 1/2) / (n_g + 1)`; with ``center`` (the cross-fitted synthetic estimates, aligned with
    ``units``) the mean of that and :math:`\bar p (1 - \bar p) / n_g`, :math:`\bar p` = ``center`` kept inside
    :math:`[\tfrac{1/2}{n_g + 1}, \tfrac{n_g + 1/2}{n_g + 1}]`. ``center`` is ignored for a continuous metric."""
    n = units["n"].to_numpy(dtype=float)
    if metric == "correct":
        p = (units["estimate"].to_numpy() * n + 0.5) / (n + 1.0)
        if center is None:
            return p * (1 - p) / n
        edge = 0.5 / (n + 1.0)
        q = np.clip(np.asarray(center, dtype=float), edge, 1.0 - edge)
        return 0.5 * (p * (1 - p) + q * (1 - q)) / n
    sd2 = units["sd"].to_numpy(dtype=float) ** 2
    dof = np.maximum(n - 1, 0.0)
    ss = np.where(dof > 0, np.nan_to_num(sd2) * dof, 0.0)
    sums = pd.DataFrame({"ss": ss, "dof": dof}).groupby(units["model"].to_numpy())[["ss", "dof"]].transform("sum")
    with np.errstate(invalid="ignore", divide="ignore"):
        pooled_var = sums["ss"].to_numpy() / sums["dof"].to_numpy()
    use_pooled = (n < 2) | ~(sd2 > 0)
    # a model with no within-group variation (only one-example groups, or constant values) borrows the
    # pooled variance of all models, rather than getting s^2 = 0 (zero-width intervals, no shrinkage)
    no_spread = use_pooled & ~(pooled_var > 0)
    if no_spread.any():
        overall = ss.sum() / dof.sum() if dof.sum() > 0 else 0.0
        if not overall > 0:
            raise EvalDataError(
                f"Cannot estimate the variance of '{metric}': no subgroup has two or more examples with "
                "different values. Label more examples per subgroup.")
        pooled_var = np.where(pooled_var > 0, pooled_var, overall)
    return np.where(use_pooled, pooled_var, sd2) / n


def unit_features(log: pd.DataFrame, units: pd.DataFrame, metric: str, features: list[str] | None,
                  group_difficulty: bool = False) -> pd.DataFrame:
    r"""Features :math:`X_g` of each unit, aligned with ``units``.

    Means over the unit's rows (labeled or not) of ``confidence``, ``proxy`` and the numeric feature columns
    (``features`` None = :func:`evalcore.data.features.default_features`; a unit's mean skips missing values, and a unit
    with none is filled by the regression: the training mean for the linear fit, XGBoost's own missing-value
    branches); one-hot model and task indicators; and, with ``group_difficulty``, the group's difficulty learned
    from the other models on examples the unit's model was not scored on (:func:`group_difficulty_feature`).
    """
    numeric = [c for c in ("confidence", "proxy") if c in log] + _feature_columns(log, features, metric)
    rows = per_example(log)
    difficulty = group_difficulty_feature(rows[rows[metric].notna()], metric) if group_difficulty else None
    return _assemble_features(units, *_unit_covariates(log, numeric), difficulty=difficulty)


def group_difficulty_feature(labeled_rows: pd.DataFrame, metric: str = "correct") -> pd.Series:
    r"""Per (model, group) unit, the mean ``metric`` of the other models' labeled rows in the group on examples the
    unit's model was not scored on (index: model, group; NaN where there are none).

    With :math:`S_{h,e}` and :math:`C_{h,e}` the sum and count of the labels of example :math:`e` of group :math:`h`
    over all models, :math:`S_h = \sum_e S_{h,e}`, :math:`C_h = \sum_e C_{h,e}`, and :math:`E_g` the examples of
    unit g = (model, h):

    .. math:: D_g = \frac{S_h - \sum_{e \in E_g} S_{h,e}}{C_h - \sum_{e \in E_g} C_{h,e}}

    Its labels are on other examples than the unit's own, so (examples drawn independently) its noise is
    independent of the unit's sampling noise, as the EB model needs of every feature; the mean of the other models'
    :math:`Z` on the same examples (the feature before) carried that noise when models share examples (MMLU-Pro, the
    same questions for all models: EB coverage 0.76 with it), and was switched off then, also where models
    share only a few examples. Model-vs-human (9 models, 75 groups, 10 trials per unit drawn for each model, 40
    repetitions, ``benchmarks/coverage/eb.py``): EB/DT MSE 1.02 with the feature off, 0.69 with this one, EB
    coverage 0.97 at 95 %.
    """
    rows = labeled_rows[["model", "group", "example_id", metric]]
    per_ex = rows.groupby(["group", "example_id"], sort=False)[metric].agg(["sum", "count"])
    per_group = per_ex.groupby(level="group").sum()
    own = rows.drop_duplicates(["model", "group", "example_id"]).join(per_ex, on=["group", "example_id"])
    own = own.groupby(["model", "group"], sort=True)[["sum", "count"]].sum()
    total = per_group.reindex(own.index.get_level_values("group"))
    count = total["count"].to_numpy() - own["count"].to_numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        values = np.where(count > 0, (total["sum"].to_numpy() - own["sum"].to_numpy()) / count, np.nan)
    return pd.Series(values, index=own.index, name="group_difficulty")


def _unit_covariates(log: pd.DataFrame, numeric: list[str]) -> tuple[pd.DataFrame | None, pd.Series]:
    """Per (model, group) of ``log`` (all rows, labeled or not): the means of the ``numeric`` columns (None if
    there are none) and the most frequent task (the first in sort order among ties, as ``Series.mode``)."""
    keys = ["model", "group"]
    means = log.groupby(keys, sort=True)[numeric].mean() if numeric else None
    counts = log.groupby([*keys, "task"], sort=True).size().rename("count").reset_index()
    first_max = counts.groupby(keys, sort=True)["count"].idxmax()  # first = smallest task among the tied ones
    task = counts.loc[first_max.to_numpy()].set_index(keys)["task"]
    return means, task


def _assemble_features(units: pd.DataFrame, means: pd.DataFrame | None, task: pd.Series,
                       difficulty: pd.Series | None = None) -> pd.DataFrame:
    """:func:`unit_features` from the per-unit covariates of :func:`_unit_covariates` and the
    :func:`group_difficulty_feature` (None: not used)."""
    index = _index(units)
    frame = means.reindex(index).add_prefix("mean_") if means is not None else pd.DataFrame(index=index)
    frame = frame.join(pd.get_dummies(units["model"], prefix="model", dtype=float).set_index(index))
    frame = frame.join(pd.get_dummies(task.reindex(index), prefix="task", dtype=float))
    if difficulty is not None:
        frame["group_difficulty"] = difficulty.reindex(index).to_numpy()
    return frame.reset_index(drop=True)


def empirical_bayes(
    log: pd.DataFrame,
    metric: str = "correct",
    regressor: str = "xgboost",
    alpha: float = DEFAULT_ALPHA,
    seed: int = 0,
    features: list[str] | None = None,
    group_difficulty: bool | None = None,
) -> pd.DataFrame:
    r"""DT, SR and cross-fitted EB estimates with robust EB intervals, one row per (model, group).

    Columns: model, group, n, direct, direct_low, direct_high, synthetic, eb, eb_low, eb_high, shrinkage
    (:math:`s_g^2 / (s_g^2 + \hat A)`, the weight on the synthetic estimate), A, kappa (as fitted on the unit's
    fold). Identical output for identical ``seed``. For the binary metric the EB interval and estimate are
    intersected with [0, 1], which keeps the interval's coverage and the estimate inside its interval.

    ``group_difficulty``: the group's difficulty learned from the other models (:func:`group_difficulty_feature`).
    None (the default) uses it exactly when some unit has other models' labels on examples its model was not
    scored on (:func:`group_difficulty_default`); the choice and its reason are in
    ``table.attrs["group_difficulty"]`` as ``(used, reason)``. Units whose cross-fitting fold cannot estimate the
    signal variance honestly (a single group whose examples the models share, :func:`_fit`) keep the direct
    estimate and interval as their EB columns (shrinkage 0); ``table.attrs["direct_fallback"]`` is ``(count,
    sentence)`` saying how many and why (``(0, "")`` when none).

    ``log`` may be a log in an engine (:class:`evalcore.engine.LazyLog`): the units and covariates then come from
    aggregate queries and the fit is the same; its features are the means of ``confidence`` and ``proxy`` with the
    model and task indicators (a lazy log carries no other feature columns), so on a log with extra numeric
    feature columns pass ``features=[]`` to the in-memory call to compare like with like.
    """
    if regressor not in REGRESSORS:
        raise EvalDataError(f"Unknown regressor '{regressor}': choose one of {', '.join(REGRESSORS)}.")
    if is_lazy(log):
        return _lazy_empirical_bayes(log, metric, regressor, alpha, seed, group_difficulty)
    _require_metric(log, metric)
    log = per_example(log)  # repeated samples: the example is the unit
    numeric = [c for c in ("confidence", "proxy") if c in log] + _feature_columns(log, features, metric)
    log, decoded = _coded(log)
    labeled_rows = log[log[metric].notna()]
    units = decoded(_unit_stats(labeled_rows, metric, alpha))
    difficulty = (decoded(group_difficulty_feature(labeled_rows, metric)) if group_difficulty is not False
                  else None)
    if group_difficulty is None:
        used, reason = group_difficulty_default(difficulty)
    else:
        used, reason = bool(group_difficulty), "as chosen"
    shared = bool(labeled_rows.drop_duplicates(["model", "group", "example_id"])
                  .duplicated(["group", "example_id"]).any())
    means, task = _unit_covariates(log, numeric)
    table = _cross_fit(units, (None if means is None else decoded(means), decoded(task)), metric, regressor, alpha,
                       seed, difficulty if used else None, shared, threads=FOLD_THREADS)
    table.attrs["group_difficulty"] = (used, reason)
    return table


#: the identities :func:`empirical_bayes` groups a log in memory by
_IDENTITIES = ("model", "group", "example_id", "task")


def _coded(log: pd.DataFrame):
    """``log`` with its text identities (:data:`_IDENTITIES`, pandas' strings) as categoricals, and the function that
    gives a unit-level result (a frame's columns and index, a series' values and index) its text back.

    Why: :func:`empirical_bayes` groups the rows by these columns in four passes (direct estimates, the group's
    difficulty, shared examples, covariates), and every grouping by text hashes each string again; coded once, the
    passes group integer codes (MMLU-Pro: 0.20 s -> 0.14 s CPU of a subgroups page's first answer). The categories are
    sorted, so every sorted grouping keeps the order of the names, missing values stay missing (left out of a
    grouping as before), and the numbers are the same."""
    text = {c: log[c].dtype for c in _IDENTITIES if c in log and isinstance(log[c].dtype, pd.StringDtype)}
    coded = log.assign(**{c: log[c].astype("category") for c in text})

    def index(idx: pd.Index) -> pd.Index:
        if isinstance(idx, pd.MultiIndex):
            return idx.set_levels([level.astype(text[name]) if name in text else level
                                   for level, name in zip(idx.levels, idx.names)])
        return idx.astype(text[idx.name]) if idx.name in text else idx

    def decoded(result):
        result = result.copy(deep=False)
        result.index = index(result.index)
        if isinstance(result, pd.Series):
            return result.astype(text[result.name]) if result.name in text else result
        return result.astype({c: text[c] for c in result.columns if c in text})

    return coded, decoded


def _lazy_empirical_bayes(log: LazyLog, metric: str, regressor: str, alpha: float, seed: int,
                          group_difficulty: bool | None) -> pd.DataFrame:
    """:func:`empirical_bayes` of a log in an engine: the units from the engine's cell moments, the covariates
    (means of ``confidence`` and ``proxy``, the most frequent task) from two aggregate queries; then the same fit."""
    if not log.has(metric):
        raise EvalDataError(f"{log.source}: no '{metric}' column: empirical Bayes needs a labeled metric.")
    units = mean_table(log, ["model", "group"], metric, alpha).rename(
        columns={"estimate": "direct", "ci_low": "direct_low", "ci_high": "direct_high"})
    units = units[units["n"] > 0].drop(columns="n_unlabeled").reset_index(drop=True)
    if len(units) < MIN_UNITS:
        raise EvalDataError(
            f"Empirical Bayes needs at least {MIN_UNITS} (model, group) units with labels; this selection has "
            f"{len(units)}. Add groups or models, or use the direct estimates.")
    units["sd"] = np.nan if metric == "correct" else units["se"] * np.sqrt(units["n"])
    # the feature needs per-example sums, which the engine is not asked for: it is computed here only when each
    # model's labeled examples are its own, where it reduces to the other models' totals in the group
    shared = units["model"].nunique() > 1 and reductions.models_share_labeled_examples(log, metric)
    difficulty = None
    if group_difficulty is not False and not shared:
        total = units.groupby("group")["n"].transform("sum") - units["n"]
        sums = units["direct"] * units["n"]
        sums = sums.groupby(units["group"]).transform("sum") - sums
        difficulty = pd.Series((sums / total.where(total > 0)).to_numpy(), index=_index(units))
    if group_difficulty is None:
        used, reason = group_difficulty_default(difficulty) if not shared else (False, LAZY_SHARED)
    else:
        used, reason = bool(group_difficulty), "as chosen"
    if used and difficulty is None:
        raise EvalDataError("The group-difficulty feature of a log in an engine needs each model's labeled examples "
                            "to be its own; load the log into memory to use it with shared examples.")
    covariates = reductions.unit_covariates(log, [c for c in ("confidence", "proxy") if log.has(c)])
    table = _cross_fit(units.drop(columns="se"), covariates, metric, regressor, alpha, seed,
                       difficulty if used else None, shared, threads=FOLD_THREADS)
    table.attrs["group_difficulty"] = (used, reason)
    return table


def group_difficulty_default(difficulty: pd.Series | None) -> tuple[bool, str]:
    """Whether to use the :func:`group_difficulty_feature` ``difficulty`` by default, and why: exactly when some
    unit has a value (other models' labels on examples its model was not scored on)."""
    if difficulty is None or difficulty.index.get_level_values("model").nunique() < 2:
        return False, "off: a single model, no other model to learn the group's difficulty from"
    known = int(difficulty.notna().sum())
    if known == 0:
        return False, ("off: every model is scored on the same examples in each group, so no other model's labels "
                       "are free of a unit's own sampling noise")
    return True, (f"on: learned for {known:,} of {difficulty.size:,} (model, group) units from the other models' "
                  "labels on examples that model was not scored on, so it is independent of the unit's own noise")


def _unit_stats(rows: pd.DataFrame, metric: str, alpha: float) -> pd.DataFrame:
    """Direct estimates of the units with labels in ``rows`` (labeled rows only): model, group, n, direct,
    direct_low, direct_high, and sd (the sample standard deviation, for continuous metrics only)."""
    units = mean_table(rows, ["model", "group"], metric, alpha).rename(
        columns={"estimate": "direct", "ci_low": "direct_low", "ci_high": "direct_high"})
    units = units[units["n"] > 0].reset_index(drop=True)
    if len(units) < MIN_UNITS:
        raise EvalDataError(
            f"Empirical Bayes needs at least {MIN_UNITS} (model, group) units with labels; this selection has "
            f"{len(units)}. Add groups or models, or use the direct estimates.")
    if metric == "correct":  # s_g^2 of a binary metric depends on n and the mean only
        units["sd"] = np.nan
    else:
        units["sd"] = rows.groupby(["model", "group"], sort=True)[metric].std(ddof=1).reindex(
            _index(units)).to_numpy()
    return units


def _cross_fit(units: pd.DataFrame, covariates: tuple, metric: str, regressor: str, alpha: float,
               seed: int, difficulty: pd.Series | None = None, shared: bool = True, threads: int = 1) -> pd.DataFrame:
    """The EB fit of :func:`empirical_bayes` from :func:`_unit_stats` and :func:`_unit_covariates` (and the
    :func:`group_difficulty_feature`, or None); ``shared``: whether models share labeled examples in a group;
    ``threads``: as :func:`_fit`."""
    return _intervals(_fit(units, covariates, metric, regressor, seed, difficulty, shared, threads), metric, alpha)


def _fit(units: pd.DataFrame, covariates: tuple, metric: str, regressor: str, seed: int,
         difficulty: pd.Series | None = None, shared: bool = True, threads: int = 1) -> pd.DataFrame:
    r"""Everything of the EB fit that does not depend on the level: the units' columns with synthetic, s2, A and
    kappa (those of the unit's fold), and ``direct_only`` (:func:`_intervals`).

    ``threads`` > 1 fits the two folds' regressions at once: they share nothing, and XGBoost trains outside the
    interpreter's lock, so a second core fits one fold while the first fits the other (the same fits, the same
    numbers; the Subgroups page's first answer on MMLU-Pro 1.51 -> 1.31 s median on a loaded 2-core machine). The
    holdout study keeps one thread: its repetitions already fill the cores.

    ``direct_only`` marks the units of a fold whose :math:`\hat A` has no honest standard error: the fold holds a
    single group while models share its labeled examples (``shared``), so all its units rest on one draw of examples
    (one cluster; the module doc's clustered standard error needs two). Those units keep their direct estimate and
    interval. Where models do not share examples the units are independent and a single-group fold is clustered by
    unit."""
    x = _assemble_features(units, *covariates, difficulty=difficulty)
    z, n = units["direct"].to_numpy(), units["n"].to_numpy()
    folds = _folds(units, seed)
    x_train = x
    if difficulty is not None:  # the regression learns from the group's pooled mean (see _training_difficulty)
        x_train = x.assign(group_difficulty=_training_difficulty(units))
    models = units["model"].to_numpy()

    def fold(k: int) -> np.ndarray:
        """The synthetic estimates of fold ``k``'s units, from the regression fitted on the other fold."""
        train, test = folds != k, folds == k
        return _fit_predict(regressor, x_train[train], z[train], n[train], x[test], models[train], models[test], seed)

    synthetic = np.empty(len(units))
    if threads > 1:
        with ThreadPoolExecutor(max_workers=min(threads, 2), thread_name_prefix="evalcore-eb-fold") as pool:
            fitted = list(pool.map(fold, (0, 1)))
    else:
        fitted = [fold(0), fold(1)]
    for k in (0, 1):
        synthetic[folds == k] = fitted[k]
    s2 = unit_variances(units.assign(estimate=z), metric, center=synthetic)
    out = units[["model", "group", "n", "direct", "direct_low", "direct_high"]].copy()
    out["synthetic"], out["s2"] = synthetic, s2
    a_col, k_col = np.empty(len(units)), np.empty(len(units))
    direct_only = np.zeros(len(units), dtype=bool)
    groups = units["group"].to_numpy()
    for k in (0, 1):
        test = folds == k
        one_group = np.unique(groups[test]).size < 2
        direct_only[test] = one_group and shared
        clusters = np.arange(test.sum()) if one_group else groups[test]
        a_col[test], k_col[test] = _moments(z[test] - synthetic[test], s2[test], clusters)
    out["A"], out["kappa"], out["direct_only"] = a_col, k_col, direct_only
    return out


def _training_difficulty(units: pd.DataFrame) -> np.ndarray:
    r"""The group-difficulty feature of the units the synthetic regression is fitted on: the group's pooled mean
    over all its labeled examples, :math:`\bar Z_h = \sum_{g \in h} n_g Z_g / \sum_{g \in h} n_g` (the same for
    every unit of group h; :math:`S_h / C_h` of :func:`group_difficulty_feature`).

    Why not the units' own :math:`D_g` there: :math:`D_g` leaves out the labels on the unit's examples, so within a
    group it is :math:`(S_h - n_g Z_g - \dots) / (C_h - n_g - \dots)`, a decreasing function of the unit's own
    :math:`Z_g`. A regression that also tells the groups apart (task indicators when tasks are the groups, or any
    group-level covariate) reads :math:`Z_g` back from it (leave-one-out target encoding's leak): on MMLU-Pro by
    category, questions drawn per model, 5 per unit, the linear fit's slope on it was about :math:`-(C_h - n_g) /
    n_g \approx -28`, and applied to the held-out fold (whose :math:`D_g` is free of its units' noise, as the EB
    model needs) the synthetic estimates missed by 0.4 root mean square with XGBoost (2.9 linear), where 0.17 without
    the feature; EB coverage 0.85 at 90 %. The pooled mean is constant within a group, so it carries no unit's label
    apart from its group's; it contains the unit's own labels with weight :math:`n_g / C_h` only in the fit, never in
    a held-out unit's feature."""
    total = units["n"].to_numpy(dtype=float)
    sums = pd.Series(units["direct"].to_numpy() * total).groupby(units["group"].to_numpy()).transform("sum")
    counts = pd.Series(total).groupby(units["group"].to_numpy()).transform("sum")
    return (sums / counts).to_numpy()


def _intervals(fit: pd.DataFrame, metric: str, alpha: float) -> pd.DataFrame:
    """EB estimates and robust intervals at level ``1 - alpha`` from :func:`_fit` (module doc)."""
    z, f, s2 = fit["direct"].to_numpy(), fit["synthetic"].to_numpy(), fit["s2"].to_numpy()
    a_col, k_col = fit["A"].to_numpy(), fit["kappa"].to_numpy()
    w = a_col / (a_col + s2)
    eb = f + w * (z - f)
    cva = np.empty(len(fit))
    for kappa in np.unique(k_col):  # one (A, kappa) per fold; units of equal n (and k) share s^2
        at = k_col == kappa
        m2, where = np.unique(s2[at] / a_col[at], return_inverse=True)
        cva[at] = robust_critical_value(m2, float(kappa), alpha)[where]
    half = cva * w * np.sqrt(s2)
    out = fit.drop(columns=["s2", "direct_only"])
    low, high = eb - half, eb + half
    if metric == "correct":  # the accuracy lies in [0, 1]: intersecting keeps the coverage
        low, high = np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)
        eb = np.clip(eb, 0.0, 1.0)  # never further from the truth, and inside its own interval
    direct = fit["direct_only"].to_numpy()  # no honest A-hat (see _fit): the direct estimate and interval
    out["eb"] = np.where(direct, z, eb)
    out["eb_low"] = np.where(direct, fit["direct_low"].to_numpy(), low)
    out["eb_high"] = np.where(direct, fit["direct_high"].to_numpy(), high)
    out["shrinkage"] = np.where(direct, 0.0, s2 / (s2 + a_col))
    out = out[RESULT_COLUMNS]
    count = int(direct.sum())
    out.attrs["direct_fallback"] = (count, (
        f"{count:,} (model, group) unit{'s' if count != 1 else ''} keep{'' if count != 1 else 's'} the direct "
        "estimate and interval: their cross-fitting fold holds a single group whose examples the models share, so "
        "the signal variance A has no honest standard error there (add groups for empirical Bayes)") if count else "")
    return out


def finite_population(table: pd.DataFrame, s2: np.ndarray, pool: np.ndarray, metric: str,
                      alpha: float = DEFAULT_ALPHA) -> pd.DataFrame:
    r"""DT and EB estimates of each unit's mean over its whole pool of :math:`N_g` examples, from
    :func:`empirical_bayes` output ``table`` (aligned with ``s2``, the units' :math:`s_g^2`, and ``pool``).

    :func:`empirical_bayes` estimates :math:`\theta_g`, the unit's mean in the population its examples come from.
    When the target is instead the mean :math:`\mu_g` over a finite pool of which the :math:`n_g` labeled examples
    are a part (the holdout study's "truth"), the labeled part is known exactly: with :math:`f = n_g / N_g`,
    :math:`\mu_g = f Z_g + (1 - f) R_g` where :math:`R_g` is the mean of the :math:`N_g - n_g` unlabeled examples,
    :math:`R_g \mid \theta_g` with variance :math:`\sigma_g^2 / (N_g - n_g)` and :math:`\sigma_g^2 = n_g s_g^2`.

    * DT: :math:`Z_g` with the finite-population variance :math:`(1 - f) s_g^2` (a Wilson interval on
      :math:`n_g / (1 - f)` effective examples for the binary metric, Student-t otherwise).
    * EB: :math:`f Z_g + (1 - f)\hat\theta_g`. Its error is :math:`(1 - f)` times the EB error of
      :math:`\hat\theta_g` for :math:`R_g`: normal noise of variance
      :math:`\tau^2 = w_g^2 s_g^2 + \sigma_g^2 / (N_g - n_g)` plus the bias :math:`(1 - w_g)(\hat f_g - \theta_g)`
      of second moment :math:`(1 - w_g)^2 \hat A`, so the robust half-length is
      :math:`(1 - f)\,\mathrm{cva}_\alpha((1 - w_g)^2 \hat A / \tau^2, \hat\kappa)\,\tau`. As
      :math:`N_g \to \infty` both reduce to :func:`empirical_bayes`'s; at :math:`n_g = N_g` both are :math:`Z_g`
      exactly.

    Without this, a unit whose sample is a large part of a small pool is judged against a truth that shares the
    sample with DT, and EB, which estimates :math:`\theta_g`, looks worse than it is (it shrinks the part of the
    unit it has seen).
    """
    n = table["n"].to_numpy(dtype=float)
    pool = np.maximum(np.asarray(pool, dtype=float), n)
    f = n / pool
    z = table["direct"].to_numpy()
    out = table.copy()
    rest = pool - n
    if metric == "correct":
        n_eff = np.where(f < 1, n / np.maximum(1 - f, 1e-12), np.inf)
        low, high = wilson_interval(z * np.minimum(n_eff, 1e15), np.minimum(n_eff, 1e15), alpha)
    else:
        t = stats.t.ppf(1 - alpha / 2, np.maximum(n - 1, 1))
        half_dt = t * np.sqrt((1 - f) * s2)
        low, high = z - half_dt, z + half_dt
    out["direct_low"], out["direct_high"] = np.where(f < 1, low, z), np.where(f < 1, high, z)
    w = 1 - table["shrinkage"].to_numpy()
    a_hat, kappa = table["A"].to_numpy(), table["kappa"].to_numpy()
    sigma2 = n * s2
    tau2 = w**2 * s2 + np.divide(sigma2, rest, out=np.zeros_like(sigma2), where=rest > 0)
    m2 = (1 - w) ** 2 * a_hat / tau2
    cva = np.empty_like(m2)
    for k in np.unique(kappa):  # one kappa per cross-fitting fold; equal m2 share a critical value
        at = kappa == k
        values, where = np.unique(m2[at], return_inverse=True)
        cva[at] = robust_critical_value(values, float(k), alpha)[where]
    half = (1 - f) * cva * np.sqrt(tau2)
    eb = f * z + (1 - f) * table["eb"].to_numpy()
    low, high = eb - half, eb + half
    if metric == "correct":
        low, high, eb = np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0), np.clip(eb, 0.0, 1.0)
    out["eb"], out["eb_low"], out["eb_high"] = eb, low, high
    out["synthetic"] = f * z + (1 - f) * table["synthetic"].to_numpy()
    return out


def fit_summary(table: pd.DataFrame) -> pd.DataFrame:
    r"""Per model, how the EB fit went, from :func:`empirical_bayes` output.

    Columns: model, units, median_n, sr_r2, mean_shrinkage, A_min, A_max, kappa_min, kappa_max (A and kappa over
    the two cross-fitting folds). ``sr_r2`` is the n-weighted out-of-fold :math:`R^2` of the synthetic regression
    against the direct estimates, :math:`1 - \sum_g n_g (Z_g - \hat f_g)^2 / \sum_g n_g (Z_g - \bar Z)^2` with
    :math:`\bar Z` the n-weighted mean; sampling noise in :math:`Z_g` keeps it below 1, and it is negative when the
    regression predicts the model's subgroups worse than their mean does. It is left empty (NaN) where it means
    nothing: a model with fewer than 3 subgroups, or whose direct estimates spread no more than their own sampling
    noise (:math:`\sum_g n_g (Z_g - \bar Z)^2 \le \sum_g n_g s_g^2`: no real difference between its subgroups for a
    regression to explain, and the ratio would be noise over noise). :math:`s_g^2` is read back from the direct
    interval's half-width (exact for Student-t, close for Wilson).
    """
    fit = table.groupby("model", as_index=False, sort=True).agg(
        units=("group", "size"), median_n=("n", "median"), mean_shrinkage=("shrinkage", "mean"),
        A_min=("A", "min"), A_max=("A", "max"), kappa_min=("kappa", "min"), kappa_max=("kappa", "max"))
    r2 = []
    for _, g in table.groupby("model", sort=True):
        mean = np.average(g["direct"], weights=g["n"])
        spread = float((g["n"] * (g["direct"] - mean) ** 2).sum())
        noise = float((g["n"] * ((g["direct_high"] - g["direct_low"]) / (2 * 1.96)) ** 2).sum())
        if len(g) < 3 or not spread > noise:
            r2.append(np.nan)
        else:
            r2.append(1 - float((g["n"] * (g["direct"] - g["synthetic"]) ** 2).sum()) / spread)
    fit.insert(3, "sr_r2", r2)
    return fit


# ----------------------------------------------------------------------------------------------------------------


def _require_metric(log: pd.DataFrame, metric: str) -> None:
    if metric not in log:
        raise EvalDataError(f"The data has no '{metric}' column: map a column to the role '{metric}'.")
    values = log[metric].dropna()
    binary = values.isin((0.0, 1.0)).all() if N_REPEATS not in log else values.between(0.0, 1.0).all()
    if metric == "correct" and not binary:  # per-example means of repeated samples lie in [0, 1]
        raise EvalDataError("The 'correct' metric must be 0/1; use 'score' for a continuous metric.")
    if log[metric].notna().sum() == 0:
        raise EvalDataError(f"No row has a '{metric}' label: subgroup estimates need labeled examples.")


def _index(units: pd.DataFrame) -> pd.MultiIndex:
    return pd.MultiIndex.from_frame(units[["model", "group"]])


def _feature_columns(log: pd.DataFrame, features: list[str] | None, metric: str) -> list[str]:
    """``features`` checked against the log's numeric columns; None = the default features for ``metric``."""
    if features is None:
        return default_features(log, metric)
    available = numeric_columns(log)
    missing = [f for f in features if f not in available]
    if missing:
        raise EvalDataError(f"Feature columns not found (or not numeric): {', '.join(missing)}. "
                            f"Numeric feature columns in the data: {', '.join(available) or 'none'}.")
    return list(features)


def _folds(units: pd.DataFrame, seed: int) -> np.ndarray:
    """Two folds over groups (all models of a group together); over units when there is a single group."""
    rng = np.random.default_rng(seed)
    groups = np.sort(units["group"].unique())
    if len(groups) >= 2:
        fold_of = dict(zip(groups, rng.permutation(np.arange(len(groups)) % 2)))
        return units["group"].map(fold_of).to_numpy()
    return rng.permutation(np.arange(len(units)) % 2)


def _moments(eps: np.ndarray, s2: np.ndarray, clusters: np.ndarray) -> tuple[float, float]:
    r""":math:`\hat A` and :math:`\hat\kappa` of a fold (module doc): Armstrong et al.'s truncated moment estimates,
    with :math:`\hat A` raised to the mean of :math:`d_g = \varepsilon_g^2 - s_g^2` plus its standard error
    clustered by ``clusters`` (the units' groups), :math:`\mathrm{SE}_{cl}^2 = \frac{C}{C - 1} \sum_c
    \big(\sum_{g \in c} (d_g - \bar d)\big)^2 / G^2` over the :math:`C` clusters (Liang & Zeger 1986);
    :math:`\hat\kappa` from the truncated point estimate :math:`\bar A`."""
    g = eps.size
    d = eps**2 - s2
    a_bar = max(float(np.mean(d)), 2 * np.mean(s2**2) / (g * np.mean(s2)))
    mu4 = float(np.mean(eps**4 - 6 * s2 * eps**2 + 3 * s2**2))
    kappa = max(mu4 / a_bar**2, 1 + 32 * np.mean(s2**4) / (g * np.mean(s2**2) * a_bar**2))
    _, codes = np.unique(clusters, return_inverse=True)
    c = codes.max() + 1
    se = np.sqrt(c / (c - 1) * np.sum(np.bincount(codes, d - d.mean()) ** 2)) / g if c > 1 else 0.0
    return max(a_bar, float(np.mean(d)) + se), float(kappa)


def _fit_predict(regressor, x_train, z_train, n_train, x_test, models_train, models_test, seed) -> np.ndarray:
    if regressor == "mean":
        means = pd.Series(z_train * n_train).groupby(models_train).sum() / pd.Series(n_train).groupby(
            models_train).sum()
        overall = float(np.average(z_train, weights=n_train))
        return pd.Series(models_test).map(means).fillna(overall).to_numpy()
    if regressor == "linear":
        from sklearn.linear_model import Ridge

        fill = x_train.mean().fillna(0.0)
        fit = Ridge(alpha=1e-3).fit(x_train.fillna(fill), z_train, sample_weight=n_train)
        return fit.predict(x_test.fillna(fill))
    return _xgboost_fit_predict(x_train, z_train, n_train, x_test, models_train, seed)


def _xgboost_fit_predict(x_train, z_train, n_train, x_test, models_train, seed) -> np.ndarray:
    """XGBoost with (trees, depth) tuned by 2-fold cross-validation stratified by model (paper Appendix A.1).

    Speed (same fits as training every grid point separately): one booster of the largest number of trees per
    depth and CV fold, scored at every number of trees of the grid from its first trees (``iteration_range``:
    the first k trees of a boosted model are the k-tree model when nothing else differs), one DMatrix per
    training set, and one thread (``_XGB_THREADS``): a unit-level fit has one row per unit, too little work per
    tree for OpenMP threads to pay off, and with 2 threads on 2 busy cores each tree waited for the other
    thread (20 times slower); callers that parallelise (the holdout study) keep one thread per process.
    """
    import xgboost as xgb

    # plain arrays: XGBoost refuses feature names with '[', ']' or '<', which model or task names may contain
    x_train, x_test = x_train.to_numpy(dtype=float), x_test.to_numpy(dtype=float)

    def data(rows):
        return xgb.DMatrix(x_train[rows], z_train[rows], weight=n_train[rows], nthread=_XGB_THREADS)

    def train(dtrain, trees, depth):  # xgb.train's loop without its callbacks and final cache release (~20 %)
        params = {"objective": "reg:squarederror", "max_depth": depth, "learning_rate": 0.1, "subsample": 1.0,
                  "tree_method": "hist", "nthread": _XGB_THREADS, "seed": seed, "verbosity": 0}
        booster = xgb.Booster(params, [dtrain])
        for i in range(trees):
            booster.update(dtrain, i)
        return booster

    rng = np.random.default_rng(seed)
    cv_fold = np.empty(len(z_train), dtype=int)
    for m in np.unique(models_train):  # stratified by model: each model's units split evenly
        idx = np.flatnonzero(models_train == m)
        cv_fold[idx] = rng.permutation(np.arange(idx.size) % 2)
    best, best_loss = XGB_GRID[0], np.inf
    if np.unique(cv_fold).size == 2:
        most_trees = max(trees for trees, _ in XGB_GRID)
        loss = dict.fromkeys(XGB_GRID, 0.0)
        for k in (0, 1):
            fit_on, eval_on = cv_fold != k, cv_fold == k
            dtrain = data(fit_on)
            for depth in dict.fromkeys(depth for _, depth in XGB_GRID):
                booster = train(dtrain, most_trees, depth)
                for trees, d in XGB_GRID:
                    if d == depth:
                        pred = booster.inplace_predict(x_train[eval_on], iteration_range=(0, trees))
                        loss[trees, depth] += float(np.sum(n_train[eval_on] * (z_train[eval_on] - pred) ** 2))
        for point in XGB_GRID:  # grid order and strict improvement: the first of tied points wins
            if loss[point] < best_loss:
                best, best_loss = point, loss[point]
    return train(data(slice(None)), *best).inplace_predict(x_test)
