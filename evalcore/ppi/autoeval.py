"""AutoEval on an evaluation log: the aligned matrices PPI needs and the tables the views show.

Method: "AutoEval Done Right" (Boyeau et al., ``../shared/papers/autoeval-ppi.txt``), Section 2 (metrics from a few
human labels and many annotator values) and Section 3 (Bradley-Terry from pairwise battles).

A canonical log has one row per (model, example). PPI compares M models on the *same* examples, so the log is
pivoted to examples x models: the labeled examples are those whose metric (``correct`` or ``score``) is present;
the annotator's value -- the model's ``confidence`` (its top-1 probability, i.e. the expected accuracy under its
own label distribution, eq. (3)), the ``proxy`` column, or another numeric column -- must be present on every
example, labeled or not. Every inconsistency is refused with the example ids to fix, never dropped silently.

Public API: ``PPIData``, ``log_matrices(rows, metric, annotators, use_weight) -> PPIData``,
``estimate_table(data, annotator, alpha, ...) -> DataFrame``,
``quality_table(data, alpha) -> DataFrame``, ``battle_sets(frame) -> (labeled, unlabeled)``,
``bradley_terry_table(frame, alpha, judge, reference) -> DataFrame`` (the AI judge's own ranking, labelled so, when
no battle has a human vote: ``attrs["labels"] == "judge"``).
``alpha`` defaults to :data:`evalcore.stats.intervals.DEFAULT_ALPHA` (0.05: the package's 95% level).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalcore.ppi.bradley_terry import judge_bradley_terry, ppi_bradley_terry
from evalcore.ppi.means import (
    MeanEstimate, classical_mean, ess_bootstrap, ppi_mean, ppi_mean_by_model, simultaneous_intervals, stratified_ppi_mean,
)
from evalcore.leaderboard.ranks import rank_with_ties
from evalcore.data.reading import EvalDataError, listed
from evalcore.data.repeats import per_example
from evalcore.stats.summaries import mean_table
from evalcore.stats.intervals import DEFAULT_ALPHA

#: Annotator values must lie in the metric's range for these metrics.
METRIC_BOUNDS = {"correct": (0.0, 1.0)}
METHOD_NAMES = {"classical": "classical (labels only)", "ppi": "PPI (λ = 1)", "ppi++": "PPI++ (tuned λ)",
                "stratified ppi++": "stratified PPI++", "judge": "AI judge only (no human votes)"}


@dataclass(frozen=True)
class PPIData:
    """Examples x models: ``y`` (NaN where unlabeled), annotator values, optional weights, groups."""

    models: tuple[str, ...]
    example_ids: np.ndarray
    labeled: np.ndarray
    y: np.ndarray
    annotators: dict
    weights: np.ndarray | None
    groups: np.ndarray
    metric: str

    @property
    def n(self) -> int:
        return int(self.labeled.sum())

    @property
    def N(self) -> int:
        return int((~self.labeled).sum())

    @property
    def fully_labeled(self) -> bool:
        return bool(self.labeled.all())

    def parts(self, annotator: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(y on labeled, annotator on labeled, annotator on unlabeled), each examples x models."""
        values = self.annotators[annotator]
        return self.y[self.labeled], values[self.labeled], values[~self.labeled]


def _pivot(rows: pd.DataFrame, column: str) -> pd.DataFrame:
    return rows.pivot(index="example_id", columns="model", values=column)


def log_matrices(rows: pd.DataFrame, metric: str, annotators, use_weight: bool = False) -> PPIData:
    """Pivot a canonical log to the matrices of :class:`PPIData`, refusing what PPI cannot use.

    ``metric`` is ``correct`` or ``score``; ``annotators`` the columns holding the annotator's per-example values.
    """
    if metric not in rows or rows[metric].notna().sum() == 0:
        raise EvalDataError(f"The log has no '{metric}' values: PPI needs the human-labeled metric on at least 2 "
                            "examples.")
    annotators = [a for a in annotators]
    rows = per_example(rows)  # repeated samples: the example is the unit
    missing = [a for a in annotators if a not in rows]
    if not annotators or missing:
        raise EvalDataError(f"Annotator column(s) {missing or '(none)'} are not in the log: map a column to "
                            "'confidence' or 'proxy' on the Data page.")
    dup = rows.duplicated(["model", "example_id"])
    if dup.any():
        raise EvalDataError(f"Example ids appear twice for the same model: {listed(rows.loc[dup, 'example_id'])} "
                            "(give each example one row per model).")
    y = _pivot(rows, metric)
    absent = y.index[_pivot(rows.assign(_present=1.0), "_present").isna().any(axis=1)]
    if len(absent):
        raise EvalDataError(f"{len(absent)} example(s) have no row for some of the selected models, e.g. "
                            f"{listed(absent)}: PPI compares models on the same examples -- select models that "
                            "were evaluated on the same examples.")
    labeled_any, labeled_all = y.notna().any(axis=1), y.notna().all(axis=1)
    mixed = y.index[labeled_any & ~labeled_all]
    if len(mixed):
        raise EvalDataError(f"{len(mixed)} example(s) are labeled for some models but not others, e.g. "
                            f"{listed(mixed)}: a human label belongs to the example -- give '{metric}' for every "
                            "model or for none.")
    labeled = labeled_all.to_numpy()
    if labeled.sum() < 2:
        raise EvalDataError(f"Only {int(labeled.sum())} labeled example(s): PPI needs at least 2 human labels "
                            f"('{metric}' present) for an interval.")
    values = {}
    for name in annotators:
        table = _pivot(rows, name).reindex(index=y.index, columns=y.columns)
        lacking = table.index[table.isna().any(axis=1)]
        if len(lacking):
            where = "labeled" if labeled[table.isna().any(axis=1).to_numpy()].any() else "unlabeled"
            raise EvalDataError(f"Annotator '{name}' is missing on {len(lacking)} example(s) ({where} ones among "
                                f"them), e.g. {listed(lacking)}: the annotator must score every example.")
        arr = table.to_numpy(dtype=float)
        low, high = METRIC_BOUNDS.get(metric, (-np.inf, np.inf))
        outside = table.index[((arr < low) | (arr > high)).any(axis=1)]
        if len(outside):
            raise EvalDataError(f"Annotator '{name}' lies outside [{low:g}, {high:g}] on {len(outside)} "
                                f"example(s), e.g. {listed(outside)}: for accuracy it must be a probability of a "
                                "correct answer.")
        values[name] = arr
    weights = None
    if use_weight:
        if "weight" not in rows:
            raise EvalDataError("No 'weight' column: map the importance weights (dP/dQ of each example) to "
                                "'weight' on the Data page.")
        w = _pivot(rows, "weight").reindex(index=y.index, columns=y.columns)
        uneven = w.index[(w.nunique(axis=1, dropna=False) > 1).to_numpy()]
        if len(uneven):
            raise EvalDataError(f"The weight differs between models for example(s) {listed(uneven)}: an importance "
                                "weight belongs to the example.")
        weights = w.iloc[:, 0].to_numpy(dtype=float)
        bad = w.index[labeled & ~(weights > 0)]
        if len(bad):
            raise EvalDataError(f"Labeled example(s) {listed(bad)} have no positive weight.")
    groups = _pivot(rows, "group").reindex(index=y.index).iloc[:, 0].astype(str).to_numpy() \
        if "group" in rows else np.full(len(y), "all")
    return PPIData(tuple(str(c) for c in y.columns), y.index.to_numpy(), labeled, y.to_numpy(dtype=float), values,
                   weights, groups, metric)


def _rows(result: MeanEstimate, models, method: str,
          ess: tuple[np.ndarray, np.ndarray, np.ndarray]) -> pd.DataFrame:
    low, high = simultaneous_intervals(result, "bonferroni")
    chi_low, chi_high = simultaneous_intervals(result, "chi2")
    frame = pd.DataFrame({
        "model": list(models), "method": METHOD_NAMES[method],
        "estimate": np.atleast_1d(result.estimate), "ci_low": np.atleast_1d(result.ci_low),
        "ci_high": np.atleast_1d(result.ci_high), "se": np.atleast_1d(result.se), "lam": np.atleast_1d(result.lam),
        "ess": ess[0], "ess_low": ess[1], "ess_high": ess[2], "ess_ratio": ess[0] / result.n,
        "ess_plugin": np.atleast_1d(result.ess),
        "rank": rank_with_ties(low, high), "bonferroni_low": low, "bonferroni_high": high,
        "chi2_low": chi_low, "chi2_high": chi_high, "n": result.n, "N": result.N})
    frame.attrs["notes"] = list(result.notes)
    return frame


def estimate_table(data: PPIData, annotator: str, alpha: float = DEFAULT_ALPHA, weighted: bool = False,
                   self_normalize: bool = True, strata: np.ndarray | None = None, n_boot: int = 200,
                   seed: int = 0) -> pd.DataFrame:
    """Classical, PPI and PPI++ side by side (plus stratified PPI++ when ``strata`` label every example).

    One row per (model, method): estimate, marginal interval, se, λ, ESS with λ's estimation accounted for and
    its bootstrap interval (:func:`evalcore.ppi.means.ess_bootstrap`, ``n_boot`` replicates at the interval level,
    ``seed``; classical ESS is n exactly; stratified rows have the plug-in ESS only), ESS/n, the plug-in ESS
    (``ess_plugin``, λ treated as known: it overstates PPI++), rank with ties from the Bonferroni intervals, and
    the intervals that hold for all models at once (Bonferroni, chi-square ellipsoid projections).
    ``attrs["notes"]`` collects the fallbacks taken.
    """
    y, yhat, yhat_u = data.parts(annotator)
    bounds = METRIC_BOUNDS.get(data.metric)
    w = data.weights[data.labeled] if weighted else None
    classical = classical_mean(y, alpha, weights=w, self_normalize=self_normalize)
    plain = ppi_mean(y, yhat, yhat_u, alpha, lam=1.0, weights=w, self_normalize=self_normalize, bounds=bounds)
    tuned = ppi_mean(y, yhat, yhat_u, alpha, weights=w, self_normalize=self_normalize, bounds=bounds,
                     names=data.models)
    scale = 1.0 if w is None else (w / w.mean() if self_normalize else w)[:, None]  # as ppi_mean weights them
    exact = (np.full(len(data.models), float(data.n)),) * 3
    rows = [(classical, "classical", exact),
            (plain, "ppi", ess_bootstrap(scale * y, scale * yhat, yhat_u, 1.0, n_boot, 1 - alpha, seed)),
            (tuned, "ppi++", ess_bootstrap(scale * y, scale * yhat, yhat_u, None, n_boot, 1 - alpha, seed))]
    if strata is not None:
        stratified = stratified_ppi_mean(y, yhat, yhat_u, strata[data.labeled], strata[~data.labeled], alpha,
                                         bounds=bounds)
        nothing = np.full(len(data.models), np.nan)
        rows.append((stratified, "stratified ppi++", (np.atleast_1d(stratified.ess), nothing, nothing)))
    frames = [_rows(r, data.models, m, ess) for r, m, ess in rows]
    table = pd.concat(frames, ignore_index=True)
    table.attrs["notes"] = list(dict.fromkeys(note for f in frames for note in f.attrs["notes"]))
    return table


def quality_table(data: PPIData, alpha: float = DEFAULT_ALPHA, n_boot: int = 200, seed: int = 0) -> pd.DataFrame:
    """Each annotator's quality (Pearson correlation with the labels, on the labeled examples) and the ESS/n of
    PPI++ at the actual n, λ's estimation accounted for, with its bootstrap interval
    (:func:`evalcore.ppi.means.ess_bootstrap`): the partly labeled version of the paper's Figure 3."""
    rows = []
    for name in data.annotators:
        y, yhat, yhat_u = data.parts(name)
        ppi_mean(y, yhat, yhat_u, alpha, bounds=METRIC_BOUNDS.get(data.metric))  # refuses values out of range
        ess, low, high = ess_bootstrap(y, yhat, yhat_u, None, n_boot, 1 - alpha, seed)
        for j, model in enumerate(data.models):
            ok = y[:, j].std() > 0 and yhat[:, j].std() > 0
            rows.append({"model": model, "annotator": name,
                         "quality": float(np.corrcoef(y[:, j], yhat[:, j])[0, 1]) if ok else 0.0,
                         "ess_ratio": float(ess[j] / data.n),
                         "ess_ratio_low": low[j] / data.n, "ess_ratio_high": high[j] / data.n, "n": data.n})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- pairwise battles


def battle_sets(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(labeled, unlabeled) battles: rows with a human ``outcome`` and rows with the judge only."""
    if "outcome" not in frame:
        raise EvalDataError("The battles have no 'outcome' column: human votes are needed to correct the judge.")
    has = frame["outcome"].notna()
    unlabeled = frame[~has]
    if "judge" in frame:
        unlabeled = unlabeled[unlabeled["judge"].notna()]
        dropped = int((~has).sum() - len(unlabeled))
        if dropped:
            raise EvalDataError(f"{dropped} battle(s) have neither a human outcome nor a judge probability: fill "
                                "or remove them.")
    else:
        unlabeled = unlabeled.iloc[0:0]
    return frame[has], unlabeled


def has_human_votes(frame: pd.DataFrame) -> bool:
    """Whether some battle carries a human ``outcome`` (else only an AI judge's verdicts, if any)."""
    return "outcome" in frame and bool(frame["outcome"].notna().any())


def bradley_terry_table(frame: pd.DataFrame, alpha: float = DEFAULT_ALPHA, judge: str = "probability",
                        reference: str | None = None) -> pd.DataFrame:
    """Bradley-Terry coefficients by the classical MLE, PPI and PPI++ (rows per model and method, with ranks).

    Without any human vote but with an AI judge's verdicts, the judge's own ranking
    (:func:`evalcore.ppi.bradley_terry.judge_bradley_terry`, method "AI judge only (no human votes)",
    ``attrs["labels"] == "judge"``): not corrected by people, its intervals hold for the judge's preferences only.
    When some voted battle lacks the judge's verdict, PPI cannot pair them: the classical fit alone, with a note."""
    if not has_human_votes(frame) and "judge" in frame and frame["judge"].notna().any():
        judged = frame[frame["judge"].notna()]
        table = judge_bradley_terry(judged, alpha=alpha, reference=reference, judge=judge).assign(
            method=METHOD_NAMES["judge"])
        dropped = len(frame) - len(judged)
        notes = list(table.attrs["notes"]) + ([f"{dropped:,} battles have neither a human vote nor a verdict of the "
                                                "AI judge: left out."] if dropped else [])
        table.attrs.update({"notes": notes, "n": 0, "N": len(judged), "labels": "judge"})
        return table
    if "judge" in frame and has_human_votes(frame):
        unjudged = int((frame["outcome"].notna() & frame["judge"].isna()).sum())
        if unjudged:
            labeled = frame[frame["outcome"].notna()].drop(columns="judge")
            table = ppi_bradley_terry(labeled, labeled.iloc[0:0], alpha=alpha, lam=0.0, reference=reference,
                                      judge=judge).assign(method=METHOD_NAMES["classical"])
            table.attrs.update({"notes": [f"{unjudged:,} of {len(labeled):,} battles with a human vote have no "
                                          "verdict of the AI judge: PPI needs the judge on the voted battles too; "
                                          "the classical estimate from the human votes alone is shown, the judge's "
                                          "verdicts are not used."],
                                "n": len(labeled), "N": int(frame["outcome"].isna().sum()), "labels": "human"})
            return table
    labeled, unlabeled = battle_sets(frame)
    parts = [ppi_bradley_terry(labeled, unlabeled, alpha=alpha, lam=0.0, reference=reference, judge=judge)
             .assign(method=METHOD_NAMES["classical"])]
    notes = list(parts[0].attrs.get("notes", []))
    if "judge" in frame and len(unlabeled):
        for lam, method in ((1.0, "ppi"), (None, "ppi++")):
            part = ppi_bradley_terry(labeled, unlabeled, alpha=alpha, lam=lam, reference=reference, judge=judge)
            notes += part.attrs.get("notes", [])
            parts.append(part.assign(method=METHOD_NAMES[method]))
    else:
        notes.append("No judge-only battles: PPI needs AI-judge probabilities on battles without a human vote; "
                     "only the classical estimate is shown.")
    table = pd.concat(parts, ignore_index=True)
    table.attrs.update({"notes": list(dict.fromkeys(notes)), "n": len(labeled), "N": len(unlabeled),
                        "reference": parts[0].attrs.get("reference"), "labels": "human"})
    return table


def moment_table(log, annotator: str, metric: str, alpha: float = DEFAULT_ALPHA) -> pd.DataFrame:
    """Classical (labels only) and PPI++ (tuned λ) means per model, from moments: the table of a log in an engine
    (:func:`evalcore.ppi.means.ppi_mean_by_model`; a frame works too). Columns model, method, estimate, ci_low, ci_high,
    se, lam, ess, ess_ratio (ESS over the labeled n), n, N."""
    tuned = ppi_mean_by_model(log, annotator, metric, alpha).assign(method=METHOD_NAMES["ppi++"])
    classical = mean_table(log, ["model"], metric, alpha)[["model", "n", "estimate", "ci_low", "ci_high", "se"]]
    classical = classical[classical["model"].isin(tuned["model"])].assign(method=METHOD_NAMES["classical"], lam=0.0,
                                                                          ess=lambda t: t["n"].astype(float))
    table = pd.concat([classical, tuned], ignore_index=True)
    table["ess_ratio"] = table["ess"] / table["n"]
    return table[["model", "method", "estimate", "ci_low", "ci_high", "se", "lam", "ess", "ess_ratio", "n", "N"]]
