"""Per-subgroup summaries (one estimate and standard error per subgroup) and their robust empirical Bayes estimates.

A summary has one row per subgroup, or per (model, subgroup): ``group``, ``estimate``, ``se``, optionally ``model``,
``n`` (examples behind the estimate, shown only) and numeric feature columns (covariates of the regression toward
which :func:`evalcore.subgroups.robust_intervals.ebci` shrinks). :func:`suggest_roles` matches column names to these roles (common
synonyms, any case); :func:`area_summary` checks a table under a chosen assignment; :func:`area_estimates` runs
``ebci`` per model and lays the result out as :func:`evalcore.subgroups.estimates.empirical_bayes` does, so that
:func:`evalcore.subgroups.figures.forest_plot` draws it (``direct`` = the given estimate with the normal interval
estimate ± z·se, ``synthetic`` = the regression fit, ``eb`` with the robust EB interval).

Rows are numbered as in the file (row 1 = the first data row after the header): the frame's index, and so the row
numbers in ``ebci``'s notes on rows left out for a missing value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import ndtri

from evalcore.subgroups.robust_intervals import ebci
from evalcore.errors import EvalDataError, listed
from evalcore.stats.intervals import DEFAULT_ALPHA

ROLES = ("group", "estimate", "se", "model", "n")
REQUIRED = ("group", "estimate", "se")
SYNONYMS = {
    "group": ("group", "subgroup", "group_name", "area", "unit", "region", "domain", "segment", "slice", "cluster",
              "stratum"),
    "estimate": ("estimate", "est", "mean", "accuracy", "score", "value", "theta", "effect", "direct", "metric"),
    "se": ("se", "std_error", "stderr", "std_err", "standard_error", "se_estimate", "sigma", "sem"),
    "model": ("model", "model_name", "system", "method"),
    "n": ("n", "count", "size", "n_examples", "num_examples", "examples", "n_obs", "support"),
}
WEIGHTS = ("precision", "equal")


def _normal(name: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", str(name).strip().lower()).strip("_")


def suggest_roles(columns) -> dict[str, str | None]:
    """``{role: column or None}``: the first column whose name (any case, punctuation as ``_``) is one of the
    role's synonyms (:data:`SYNONYMS`), each column used once."""
    normal = {column: _normal(column) for column in columns}
    roles: dict[str, str | None] = {}
    for role in ROLES:
        roles[role] = next((c for name in SYNONYMS[role] for c in columns
                            if normal[c] == name and c not in roles.values()), None)
    return roles


def _row_list(mask: pd.Series) -> str:
    """'rows 3, 8 and 12' for a boolean mask on the 1-based row index."""
    rows = list(mask.index[mask.to_numpy()])
    return f"row{'s' if len(rows) > 1 else ''} {listed(rows)}"


def _numbers(raw: pd.DataFrame, column: str, role: str) -> pd.Series:
    """The column as floats (empty cells NaN); text that is not a number, or an infinite value, is refused."""
    values = pd.to_numeric(raw[column], errors="coerce")
    bad = values.isna() & raw[column].notna() & (raw[column].astype(str).str.strip() != "")
    if bad.any():
        raise EvalDataError(f"Column '{column}' ({role}) must hold numbers; {_row_list(bad)} hold "
                            f"{listed(list(raw[column][bad]), fmt=repr)}.")
    if np.isinf(values).any():
        raise EvalDataError(f"Column '{column}' ({role}) has infinite values in {_row_list(np.isinf(values))}.")
    return values.astype(float)


@dataclass(frozen=True)
class AreaSummary:
    """A checked summary: ``frame`` with columns model ("" without a model column), group, estimate, se, n (only
    if given; whole numbers, missing allowed) and the features (index: 1-based rows of the file)."""

    frame: pd.DataFrame
    features: tuple[str, ...]
    has_model: bool
    has_n: bool


def area_summary(raw: pd.DataFrame, roles: dict[str, str | None] | None = None,
                 features: list[str] | tuple[str, ...] = ()) -> AreaSummary:
    """Check a per-subgroup summary under ``roles`` (``{role: column or None}``; None: :func:`suggest_roles`).

    Required: group, estimate, se. Names of groups and models are kept as text; empty estimates, standard errors and
    features are allowed (``ebci`` leaves those rows out and says so). Raises EvalDataError naming the column and
    rows for: a missing required column, a column chosen twice, an empty group or model, a (model, group) pair
    repeated, numbers that are not numbers or infinite, a standard error that is not positive, an ``n`` that is
    not a non-negative whole number, a feature that is also a role or named after one.
    """
    roles = suggest_roles(list(raw.columns)) if roles is None else {r: roles.get(r) for r in ROLES}
    missing = [r for r in REQUIRED if roles[r] is None]
    if missing:
        raise EvalDataError(
            f"The summary needs a column for {', '.join(missing)} (one row per subgroup: group, estimate, se). "
            f"Columns in the file: {listed(list(raw.columns), limit=20, fmt=repr)}. Choose them, or name them "
            + "; ".join(f"{r}: {', '.join(SYNONYMS[r][:6])}" for r in missing) + ".")
    chosen = [c for c in roles.values() if c is not None]
    twice = sorted({str(c) for c in chosen if chosen.count(c) > 1} | {str(c) for c in features if c in chosen})
    if twice:
        raise EvalDataError(f"Column(s) {listed(twice, fmt=repr)} chosen for more than one role or as a feature: "
                            "each column can have one use.")
    clash = [str(c) for c in features if str(c) in ROLES]
    if clash:
        raise EvalDataError(f"Feature column(s) {listed(clash, fmt=repr)} carry a role's name: choose them for that "
                            "role, or rename them.")
    absent = [str(c) for c in [*chosen, *features] if c not in raw.columns]
    if absent:
        raise EvalDataError(f"Column(s) {listed(absent, fmt=repr)} are not in the file.")
    if raw.empty:
        raise EvalDataError("The summary has no rows: expected one row per subgroup.")
    raw = raw.set_axis(pd.RangeIndex(1, len(raw) + 1))
    frame = pd.DataFrame(index=raw.index)
    for role in ("model", "group"):
        column = roles[role]
        if column is None:
            frame[role] = ""
            continue
        empty = raw[column].isna() | (raw[column].astype(str).str.strip() == "")
        if empty.any():
            raise EvalDataError(f"Column '{column}' ({role}) is empty in {_row_list(empty)}: every row needs a {role}.")
        frame[role] = raw[column].astype(str)
    dup = frame.duplicated(["model", "group"], keep=False)
    if dup.any():
        first = frame[dup].iloc[0]
        which = f"model '{first['model']}', group '{first['group']}'" if roles["model"] else f"group '{first['group']}'"
        raise EvalDataError(f"Each subgroup must appear once{' per model' if roles['model'] else ''}, but "
                            f"{_row_list(dup)} repeat one (e.g. {which}): keep one row each, or choose a column "
                            "with unique names as the group.")
    frame["estimate"] = _numbers(raw, roles["estimate"], "estimate")
    frame["se"] = se = _numbers(raw, roles["se"], "se")
    if (se <= 0).any():
        raise EvalDataError(f"Column '{roles['se']}' (se) must be positive: a standard error of 0 or less in "
                            f"{_row_list(se <= 0)} ({listed(list(se[se <= 0]))}).")
    if roles["n"] is not None:
        n = _numbers(raw, roles["n"], "n")
        bad = n.notna() & ((n < 0) | (n != np.round(n)))
        if bad.any():
            raise EvalDataError(f"Column '{roles['n']}' (n) must be a whole number of examples, 0 or more; see "
                                f"{_row_list(bad)} ({listed(list(n[bad]))}).")
        frame["n"] = n.astype("Int64")
    for column in features:
        frame[str(column)] = _numbers(raw, column, "feature")
    return AreaSummary(frame, tuple(str(c) for c in features), roles["model"] is not None, roles["n"] is not None)


@dataclass(frozen=True)
class AreaEstimates:
    """Per-row estimates (``table``) and per-model fits (``fits``: model, rows used, mu2, kappa, their uncorrected
    values, the regression coefficients) of :func:`area_estimates`; ``notes`` name the rows left out."""

    table: pd.DataFrame
    fits: pd.DataFrame
    notes: tuple[str, ...]


def area_estimates(summary: AreaSummary, alpha: float = DEFAULT_ALPHA, weights: str = "precision",
                   kappa: float | None = None) -> AreaEstimates:
    """Robust EB estimates per model (:func:`evalcore.subgroups.robust_intervals.ebci` on that model's rows, the summary's features as
    covariates, PMT correction).

    ``weights``: ``"precision"`` (1/se², the R package's vignette) or ``"equal"`` for the regression and the moment
    estimates. ``table`` columns: model (if the summary has models), group, n (if given), estimate, se, direct
    (= estimate), direct_low and direct_high (estimate - z·se, estimate + z·se), synthetic (the regression fit),
    w_eb, eb, eb_low, eb_high, half_length, cva, len_pa, ncov_pa, shrinkage (1 - w_eb, the weight on the fit) and
    row (in the file). ``kappa``: a kurtosis bound used instead of the estimate (None: estimated).
    """
    if weights not in WEIGHTS:
        raise EvalDataError(f"weights must be one of {', '.join(WEIGHTS)}; got {weights!r}.")
    z = ndtri(1 - alpha / 2)
    tables, fits, notes = [], [], []
    frame = summary.frame
    for model, rows in frame.groupby("model", sort=True):
        what = f"model '{model}'" if summary.has_model else "the summary"
        try:
            fit = ebci(rows["estimate"], rows["se"], rows[list(summary.features)],
                       weights=1 / rows["se"] ** 2 if weights == "precision" else None, alpha=alpha, kappa=kappa)
        except EvalDataError as exc:
            raise EvalDataError(f"{what}: {exc}") from None
        t = fit.table
        sizes = {"n": rows.loc[t.index, "n"]} if summary.has_n else {}
        tables.append(pd.DataFrame({
            "model": model, "group": rows.loc[t.index, "group"], **sizes, "estimate": t["estimate"], "se": t["se"],
            "direct": t["estimate"], "direct_low": t["estimate"] - z * t["se"],
            "direct_high": t["estimate"] + z * t["se"], "synthetic": t["fit"], "w_eb": t["w_eb"], "eb": t["eb"],
            "eb_low": t["ci_low"], "eb_high": t["ci_high"], "half_length": t["half_length"], "cva": t["cva"],
            "len_pa": t["len_pa"], "ncov_pa": t["ncov_pa"], "shrinkage": 1 - t["w_eb"], "row": t.index}))
        fits.append({"model": model, "groups": len(t), "mu2": fit.mu2, "kappa": fit.kappa,
                     "mu2_uncorrected": fit.mu2_uncorrected, "kappa_uncorrected": fit.kappa_uncorrected,
                     **{f"delta_{name}": value for name, value in fit.delta.items()}})
        notes.extend(f"{what}: {note}" for note in fit.notes)
    table, fits = pd.concat(tables, ignore_index=True), pd.DataFrame(fits)
    if not summary.has_model:
        table, fits = table.drop(columns="model"), fits.drop(columns="model")
    return AreaEstimates(table, fits, tuple(notes))
