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
  and on the other compute :math:`\varepsilon_g = Z_g - \hat f(X_g)`,
  :math:`\hat A = \max\{\overline{\varepsilon^2 - s^2},\ 2\,\overline{s^4} / (G\,\overline{s^2})\}`,
  :math:`\hat\mu_g = \hat f(X_g) + w_g (Z_g - \hat f(X_g))` with :math:`w_g = \hat A / (\hat A + s_g^2)`; swap.
* Robust EB interval: :math:`\hat\mu_g \pm \mathrm{cva}_\alpha(s_g^2 / \hat A, \hat\kappa)\, w_g\, s_g`, with
  :math:`\hat\kappa = \max\{\overline{\varepsilon^4 - 6 s^2 \varepsilon^2 + 3 s^4} / \hat A^2,\
  1 + 32\,\overline{s^8} / (G\,\overline{s^4}\,\hat A^2)\}` (the finite-sample truncations of Armstrong et al.).
  These intervals have *average* coverage :math:`1 - \alpha` across units, not per unit.

Variance of :math:`Z_g` (never 0, so no interval has zero width): for a binary metric
:math:`s_g^2 = \tilde p_g (1 - \tilde p_g) / n_g` with the Jeffreys posterior mean
:math:`\tilde p_g = (k_g + 1/2) / (n_g + 1)`, so that a subgroup whose examples are all right (or all wrong) keeps
the variance a Binomial(n_g, p) with p near the edge really has; for a continuous metric the sample variance over
:math:`n_g`, with the model's pooled within-group variance where :math:`n_g < 2` or the sample variance is 0.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .ebci import robust_critical_value
from .reading import EvalDataError
from .summaries import mean_table

REGRESSORS = ("xgboost", "linear", "mean")
RESULT_COLUMNS = ["model", "group", "n", "direct", "direct_low", "direct_high", "synthetic", "eb", "eb_low",
                  "eb_high", "shrinkage", "A", "kappa"]
#: Hyper-parameter grid of the XGBoost synthetic regression, tuned by 2-fold cross-validation.
XGB_GRID = tuple((trees, depth) for trees in (25, 100, 300) for depth in (1, 2, 4))
MIN_UNITS = 4


def direct_estimates(log: pd.DataFrame, metric: str = "correct", alpha: float = 0.05) -> pd.DataFrame:
    """Per (model, group) mean of ``metric`` over labeled rows: model, group, n, estimate, se, ci_low, ci_high."""
    _require_metric(log, metric)
    table = mean_table(log, ["model", "group"], metric, alpha)
    table = table[table["n"] > 0]
    return table.drop(columns="n_unlabeled").reset_index(drop=True)


def unit_variances(units: pd.DataFrame, metric: str) -> np.ndarray:
    """:math:`s_g^2` for each unit (columns n, estimate, and sd for continuous metrics); see the module doc."""
    n = units["n"].to_numpy(dtype=float)
    if metric == "correct":
        p = (units["estimate"].to_numpy() * n + 0.5) / (n + 1.0)
        return p * (1 - p) / n
    sd2 = units["sd"].to_numpy(dtype=float) ** 2
    pooled = units.assign(ss=np.nan_to_num(sd2) * (n - 1)).groupby("model")[["ss", "n"]].transform("sum")
    pooled_var = pooled["ss"].to_numpy() / np.maximum(pooled["n"].to_numpy() - units.groupby("model")["n"]
                                                       .transform("size").to_numpy(), 1)
    use_pooled = (n < 2) | ~(sd2 > 0)
    return np.where(use_pooled, pooled_var, sd2) / n


def unit_features(log: pd.DataFrame, units: pd.DataFrame, metric: str, features: list[str] | None) -> pd.DataFrame:
    """Features :math:`X_g` of each unit, aligned with ``units``.

    Means over the unit's rows (labeled or not) of ``confidence``, ``proxy`` and the numeric feature columns
    (``features`` None = all of them); one-hot model and task indicators; and, when several models share the
    group, the group's difficulty learned from the other models: the mean of their :math:`Z` on it (leave-this-
    model-out), NaN when no other model has labels there (XGBoost handles missing values; the linear fit imputes).
    """
    numeric = [c for c in ("confidence", "proxy") if c in log] + _feature_columns(log, features)
    keys = ["model", "group"]
    means = log.groupby(keys, sort=True)[numeric].mean() if numeric else pd.DataFrame(index=_index(units))
    task = log.groupby(keys, sort=True)["task"].agg(lambda s: s.mode().iloc[0])
    frame = means.reindex(_index(units)).add_prefix("mean_")
    frame = frame.join(pd.get_dummies(units["model"], prefix="model", dtype=float).set_index(_index(units)))
    frame = frame.join(pd.get_dummies(task.reindex(_index(units)), prefix="task", dtype=float))
    if units["model"].nunique() > 1:
        total = units.groupby("group")["estimate"].transform("sum")
        count = units.groupby("group")["estimate"].transform("count")
        others = (total - units["estimate"]) / (count - 1).replace(0, np.nan)
        frame["group_difficulty"] = others.to_numpy()
    return frame.reset_index(drop=True)


def empirical_bayes(
    log: pd.DataFrame,
    metric: str = "correct",
    regressor: str = "xgboost",
    alpha: float = 0.05,
    seed: int = 0,
    features: list[str] | None = None,
) -> pd.DataFrame:
    """DT, SR and cross-fitted EB estimates with robust EB intervals, one row per (model, group).

    Columns: model, group, n, direct, direct_low, direct_high, synthetic, eb, eb_low, eb_high, shrinkage
    (:math:`s_g^2 / (s_g^2 + \\hat A)`, the weight on the synthetic estimate), A, kappa (as fitted on the unit's
    fold). Identical output for identical ``seed``.
    """
    if regressor not in REGRESSORS:
        raise EvalDataError(f"Unknown regressor '{regressor}': choose one of {', '.join(REGRESSORS)}.")
    _require_metric(log, metric)
    rows = log[log[metric].notna()]
    units = mean_table(rows, ["model", "group"], metric, alpha).rename(
        columns={"estimate": "direct", "ci_low": "direct_low", "ci_high": "direct_high"})
    units = units[units["n"] > 0].reset_index(drop=True)
    if len(units) < MIN_UNITS:
        raise EvalDataError(
            f"Empirical Bayes needs at least {MIN_UNITS} (model, group) units with labels; this selection has "
            f"{len(units)}. Add groups or models, or use the direct estimates.")
    sd = rows.groupby(["model", "group"], sort=True)[metric].std(ddof=1).reindex(_index(units)).to_numpy()
    s2 = unit_variances(units.assign(estimate=units["direct"], sd=sd), metric)
    x = unit_features(log, units.assign(estimate=units["direct"]), metric, features)
    z = units["direct"].to_numpy()
    folds = _folds(units, seed)
    synthetic, eb, half, a_col, k_col = (np.empty(len(units)) for _ in range(5))
    for k in (0, 1):
        train, test = folds != k, folds == k
        f_test = _fit_predict(regressor, x[train], z[train], units["n"].to_numpy()[train], x[test],
                              units.loc[train, "model"].to_numpy(), units.loc[test, "model"].to_numpy(), seed)
        a_hat, kappa = _moments(z[test] - f_test, s2[test])
        w = a_hat / (a_hat + s2[test])
        synthetic[test] = f_test
        eb[test] = f_test + w * (z[test] - f_test)
        half[test] = robust_critical_value(s2[test] / a_hat, kappa, alpha) * w * np.sqrt(s2[test])
        a_col[test], k_col[test] = a_hat, kappa
    out = units[["model", "group", "n", "direct", "direct_low", "direct_high"]].copy()
    out["synthetic"], out["eb"] = synthetic, eb
    out["eb_low"], out["eb_high"] = eb - half, eb + half
    out["shrinkage"] = s2 / (s2 + a_col)
    out["A"], out["kappa"] = a_col, k_col
    return out[RESULT_COLUMNS]


# ----------------------------------------------------------------------------------------------------------------


def _require_metric(log: pd.DataFrame, metric: str) -> None:
    if metric not in log:
        raise EvalDataError(f"The data has no '{metric}' column: map a column to the role '{metric}'.")
    if metric == "correct" and not log[metric].dropna().isin((0.0, 1.0)).all():
        raise EvalDataError("The 'correct' metric must be 0/1; use 'score' for a continuous metric.")
    if log[metric].notna().sum() == 0:
        raise EvalDataError(f"No row has a '{metric}' label: subgroup estimates need labeled examples.")


def _index(units: pd.DataFrame) -> pd.MultiIndex:
    return pd.MultiIndex.from_frame(units[["model", "group"]])


def _feature_columns(log: pd.DataFrame, features: list[str] | None) -> list[str]:
    from .schema import LOG_ROLES

    available = [c for c in log.columns if c not in LOG_ROLES and pd.api.types.is_numeric_dtype(log[c])]
    if features is None:
        return available
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


def _moments(eps: np.ndarray, s2: np.ndarray) -> tuple[float, float]:
    """A and kappa with Armstrong et al.'s finite-sample truncations (see module doc)."""
    g = eps.size
    a_hat = max(float(np.mean(eps**2 - s2)), 2 * np.mean(s2**2) / (g * np.mean(s2)))
    mu4 = float(np.mean(eps**4 - 6 * s2 * eps**2 + 3 * s2**2))
    kappa = max(mu4 / a_hat**2, 1 + 32 * np.mean(s2**4) / (g * np.mean(s2**2) * a_hat**2))
    return a_hat, float(kappa)


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
    """XGBoost with (trees, depth) tuned by 2-fold cross-validation stratified by model (paper Appendix A.1)."""
    from xgboost import XGBRegressor

    def model(trees, depth):
        return XGBRegressor(n_estimators=trees, max_depth=depth, learning_rate=0.1, subsample=1.0,
                            tree_method="hist", n_jobs=2, random_state=seed)

    rng = np.random.default_rng(seed)
    cv_fold = np.empty(len(z_train), dtype=int)
    for m in np.unique(models_train):  # stratified by model: each model's units split evenly
        idx = np.flatnonzero(models_train == m)
        cv_fold[idx] = rng.permutation(np.arange(idx.size) % 2)
    best, best_loss = XGB_GRID[0], np.inf
    if np.unique(cv_fold).size == 2:
        for trees, depth in XGB_GRID:
            loss = 0.0
            for k in (0, 1):
                fit_on, eval_on = cv_fold != k, cv_fold == k
                pred = model(trees, depth).fit(x_train[fit_on], z_train[fit_on],
                                               sample_weight=n_train[fit_on]).predict(x_train[eval_on])
                loss += float(np.sum(n_train[eval_on] * (z_train[eval_on] - pred) ** 2))
            if loss < best_loss:
                best, best_loss = (trees, depth), loss
    return model(*best).fit(x_train, z_train, sample_weight=n_train).predict(x_test)
