r"""Holdout study: how much do empirical Bayes estimates help on *this* data?

The protocol of Fogliato et al. (2024), Section 4.2, on a fully labeled log:

1. draw an evaluation sample of examples, the same examples for every model, and hide the labels of all other
   examples (their confidence and features stay known, as when labels are scarce) -- proportionally to subgroup size,
   with the smallest subgroup that has at least 50 examples getting ``n_min`` (default 10) of them
   (``design="proportional"``), or a fixed ``n_g`` per subgroup, dropping subgroups with fewer than
   :math:`4 n_g` examples as in Appendix C.1.1 (``design=10``, ``20``, ``50``);
2. estimate every (model, group) unit with DT, SR and EB (:func:`evalcore.subgroups.estimates.empirical_bayes`);
3. repeat, and compare with the "truth" :math:`\mu_g`, the unit's mean over all its labeled examples. That truth
   is a finite pool of which the sample is a part -- for a small subgroup a large part -- so every method
   estimates it as such (:func:`evalcore.subgroups.estimates.finite_population`: the sampled examples are known, the rest
   predicted; DT with the finite-population correction). Judged as estimates of the subgroup's population mean,
   EB would be compared with a truth that shares its sample with DT and look worse than it is;
   :math:`\mathrm{MSE}_g = \frac{1}{R}\sum_r (\hat\mu_g^{(r)} - \mu_g)^2`, averaged over units (paper eq. 1),
   the ratios EB/DT and SR/DT, MSE for small (:math:`\le 15` sampled examples) and large subgroups (Figure 3), and
   the interval coverage and width averaged over units (Figure 4).

Repetitions run in parallel on all cores (joblib); repetition r uses the r-th child of
``np.random.SeedSequence(seed)``, so results do not depend on the number of workers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from evalcore.data.reading import EvalDataError, listed
from evalcore.data.repeats import per_example
from evalcore.stats.intervals import DEFAULT_ALPHA
from evalcore.subgroups.estimates import (
    REGRESSORS, _cross_fit, _feature_columns, _require_metric, _unit_covariates, _unit_stats, empirical_bayes, finite_population, unit_variances,
)

SMALL_SUBGROUP = 15
METHODS = {"DT": "direct", "SR": "synthetic", "EB": "eb"}


@dataclass(frozen=True, eq=False)
class HoldoutResult:
    """Per-unit errors (``units``) and their averages per method (``summary``)."""

    units: pd.DataFrame
    summary: pd.DataFrame
    n_repetitions: int
    design: str | int
    seed: int
    notes: tuple[str, ...] = ()


def sample_sizes(group_sizes: pd.Series, design: str | int = "proportional", n_min: int = 10) -> pd.Series:
    """Examples to draw per group (index: group) for one evaluation sample; groups left out are absent."""
    if design == "proportional":
        eligible = group_sizes[group_sizes >= 50]
        base = eligible.min() if len(eligible) else group_sizes.max()
        sizes = np.maximum(1, np.round(group_sizes * n_min / base)).astype(int)
        return np.minimum(sizes, group_sizes)
    n_g = int(design)
    kept = group_sizes[group_sizes >= 4 * n_g]
    return pd.Series(n_g, index=kept.index)


def holdout_study(
    log: pd.DataFrame,
    metric: str = "correct",
    regressor: str = "xgboost",
    n_repetitions: int = 200,
    design: str | int = "proportional",
    alpha: float = DEFAULT_ALPHA,
    seed: int = 0,
    n_jobs: int = -1,
    progress: Callable[[float], None] | None = None,
    features: list[str] | None = None,
) -> HoldoutResult:
    """Repeated subsample-and-estimate study of DT, SR and EB against the full-data truth (module doc).

    ``features``: the feature columns of the synthetic regression, as in
    :func:`evalcore.subgroups.estimates.empirical_bayes` (None = the log's default features)."""
    if design not in ("proportional", 10, 20, 50):
        raise EvalDataError(f"Unknown design {design!r}: choose 'proportional', 10, 20 or 50 examples per group.")
    log = per_example(log)  # repeated samples: the example is the unit
    rows = log[log[metric].notna()]  # the study draws from the labeled examples; their full mean is the truth
    if rows.empty:
        raise EvalDataError(f"The holdout study needs labeled examples: no row has a '{metric}' label.")
    rows, notes = _shared_examples(rows, metric)
    truth = rows.groupby(["model", "group"])[metric].agg(["mean", "size"]).rename(
        columns={"mean": "truth", "size": "n_full"})
    examples = rows.drop_duplicates("example_id")[["example_id", "group"]]
    sizes = sample_sizes(examples.groupby("group").size(), design)
    if len(sizes) < 2:
        raise EvalDataError(f"Design {design!r} keeps {len(sizes)} group(s): the study needs at least two.")
    if sizes.sum() > 0.8 * len(examples):
        raise EvalDataError(
            f"The evaluation sample would hold {sizes.sum():,} of the {len(examples):,} labeled examples: the "
            "subgroups are too small for a holdout study, which compares estimates from a small sample with the "
            "full data. It needs subgroups of well over 10 examples (50+ for the proportional design).")
    children = np.random.SeedSequence(seed).spawn(n_repetitions)
    # checked (or defaulted) on the whole log, as empirical_bayes(log, features=features) would
    data = _StudyData.build(rows, examples, sizes, metric, regressor, _feature_columns(log, features, metric))
    jobs = (delayed(_fast_repetition)(data, alpha, child) for child in children)
    runs = []
    for i, run in enumerate(Parallel(n_jobs=n_jobs, return_as="generator")(jobs)):
        runs.append(run)
        if progress is not None:
            progress((i + 1) / n_repetitions)
    units = _per_unit(pd.concat(runs, ignore_index=True), truth)
    return HoldoutResult(units, summarize(units), n_repetitions, design, seed, tuple(notes))


def _shared_examples(rows: pd.DataFrame, metric: str) -> tuple[pd.DataFrame, list[str]]:
    """The study draws one sample of examples and keeps its labels for every model, so it uses the examples
    labeled for every model: the rows of those (with a note when others are left out), or a refusal naming the
    models when fewer than half the labeled examples are shared (models labeled on different examples, e.g. human
    observers each shown other images, would each keep a fraction of the design's sample)."""
    n_models = rows["model"].nunique()
    per_ex = rows.groupby("example_id", sort=False)["model"].nunique()
    shared = per_ex.index[per_ex == n_models]
    if len(shared) == len(per_ex):
        return rows, []
    if len(shared) < 0.5 * len(per_ex):
        per_model = rows.groupby("model")["example_id"].nunique().sort_values()
        shown = listed(list(zip(per_model.index, per_model.to_numpy())), 4, lambda mc: f"'{mc[0]}' {mc[1]:,}")
        raise EvalDataError(
            f"The holdout study draws one sample of examples and keeps its '{metric}' labels for every model, so "
            f"it needs models labeled on the same examples; here only {len(shared):,} of {len(per_ex):,} "
            f"labeled examples have a label from every model (labeled examples per model: {shown}). Choose models "
            "labeled on the same examples on the Models page.")
    left_out = len(per_ex) - len(shared)
    note = (f"{left_out:,} of {len(per_ex):,} labeled examples lack some model's '{metric}' label and are left "
            "out: the study samples the examples labeled for every model.")
    return rows[rows["example_id"].isin(shared)], [note]


def _draw(rng: np.random.Generator, pools, counts) -> np.ndarray:
    """The evaluation sample: ``counts[i]`` examples without replacement from each ``pools[i]``, in that order."""
    return np.concatenate([rng.choice(pool, size=count, replace=False) for pool, count in zip(pools, counts)])


def _one_repetition(rows, examples, sizes, metric, regressor, features, alpha, seed_seq) -> pd.DataFrame:
    """One repetition in terms of the public API (the reference for :func:`_fast_repetition`, which the study
    runs and which returns the same frame)."""
    rng = np.random.default_rng(seed_seq)
    pools = examples[examples["group"].isin(sizes.index)].groupby("group")["example_id"]
    chosen = _draw(rng, [ids.to_numpy() for _, ids in pools], [sizes[g] for g, _ in pools])
    # labels kept on the sample only; confidence and features stay known on every example, as in practice
    sample = rows.assign(**{metric: rows[metric].where(rows["example_id"].isin(chosen))})
    fit_seed = int(rng.integers(2**31 - 1))
    table = empirical_bayes(sample, metric=metric, regressor=regressor, alpha=alpha, seed=fit_seed,
                            features=features)
    units = _unit_stats(sample[sample[metric].notna()], metric, alpha)
    s2 = unit_variances(units.assign(estimate=units["direct"]), metric, center=table["synthetic"].to_numpy())
    pool = rows.groupby(["model", "group"]).size().reindex(pd.MultiIndex.from_frame(table[["model", "group"]]))
    return finite_population(table, s2, pool.to_numpy(), metric, alpha)


@dataclass(frozen=True, eq=False)
class _StudyData:
    """What every repetition needs, computed once and compact to send to the workers (joblib memory-maps the
    large arrays): per labeled row its example, model and group codes and metric value; the unit covariates
    (means of confidence and features, task), which do not depend on which labels are kept; the sampling pools
    (example positions per group, in the order :func:`_one_repetition` draws from)."""

    metric: str
    regressor: str
    row_example: np.ndarray
    row_model: np.ndarray
    row_group: np.ndarray
    values: np.ndarray
    models: pd.Index
    groups: pd.Index
    n_examples: int
    pools: list
    counts: list
    covariates: tuple
    pool_sizes: np.ndarray  # labeled examples of each (model code, group code): the finite pool of the truth

    @classmethod
    def build(cls, rows, examples, sizes, metric, regressor, features) -> "_StudyData":
        if regressor not in REGRESSORS:  # checked once here rather than in every repetition
            raise EvalDataError(f"Unknown regressor '{regressor}': choose one of {', '.join(REGRESSORS)}.")
        _require_metric(rows, metric)
        numeric = [c for c in ("confidence", "proxy") if c in rows] + list(features)
        rows = rows[rows["model"].notna() & rows["group"].notna()]  # as groupby, which leaves such rows out
        row_model, models = pd.factorize(rows["model"], sort=True)
        row_group, groups = pd.factorize(rows["group"], sort=True)
        positions = examples.assign(position=np.arange(len(examples)))
        pools = positions[positions["group"].isin(sizes.index)].groupby("group")["position"]
        return cls(
            metric=metric, regressor=regressor,
            row_example=pd.Index(examples["example_id"]).get_indexer(rows["example_id"]).astype(np.int32),
            row_model=row_model.astype(np.int32), row_group=row_group.astype(np.int32),
            values=rows[metric].to_numpy(dtype=float), models=models, groups=groups, n_examples=len(examples),
            pools=[pos.to_numpy() for _, pos in pools], counts=[int(sizes[g]) for g, _ in pools],
            covariates=_unit_covariates(rows, numeric),
            pool_sizes=_pool_sizes(row_model, row_group, len(models), len(groups)))


def _pool_sizes(row_model: np.ndarray, row_group: np.ndarray, n_models: int, n_groups: int) -> np.ndarray:
    counts = np.zeros((n_models, n_groups))
    np.add.at(counts, (row_model, row_group), 1)
    return counts


def _fast_repetition(data: _StudyData, alpha: float, seed_seq) -> pd.DataFrame:
    """:func:`_one_repetition` on the precomputed :class:`_StudyData`: the same draws and the same estimates,
    from the sampled rows only (integer-coded; about 1/5 of the rows on MMLU-Pro) instead of the whole log."""
    rng = np.random.default_rng(seed_seq)
    chosen = np.zeros(data.n_examples, dtype=bool)
    chosen[_draw(rng, data.pools, data.counts)] = True
    fit_seed = int(rng.integers(2**31 - 1))
    keep = chosen[data.row_example]
    # integer codes sort like the names they stand for (factorize with sort=True)
    labeled = pd.DataFrame({"model": data.row_model[keep], "group": data.row_group[keep],
                            data.metric: data.values[keep]})
    units = _unit_stats(labeled, data.metric, alpha)
    pool = data.pool_sizes[units["model"].to_numpy(), units["group"].to_numpy()]
    units["model"] = data.models.take(units["model"].to_numpy())
    units["group"] = data.groups.take(units["group"].to_numpy())
    # every model keeps the labels of the same sampled examples, so no model has labels on examples another was
    # not scored on: the group-difficulty feature is off, as empirical_bayes's default would have it
    table = _cross_fit(units, data.covariates, data.metric, data.regressor, alpha, fit_seed)
    s2 = unit_variances(units.assign(estimate=units["direct"]), data.metric, center=table["synthetic"].to_numpy())
    return finite_population(table, s2, pool, data.metric, alpha)


def _per_unit(runs: pd.DataFrame, truth: pd.DataFrame) -> pd.DataFrame:
    runs = runs.join(truth, on=["model", "group"])
    out = {}
    for method, col in METHODS.items():
        out[f"mse_{method}"] = (runs[col] - runs["truth"]) ** 2
    for method, prefix in (("DT", "direct"), ("EB", "eb")):
        low, high = runs[f"{prefix}_low"], runs[f"{prefix}_high"]
        out[f"coverage_{method}"] = ((low <= runs["truth"]) & (runs["truth"] <= high)).astype(float)
        out[f"width_{method}"] = high - low
    per_rep = pd.concat([runs[["model", "group", "n", "truth", "n_full"]], pd.DataFrame(out)], axis=1)
    return per_rep.groupby(["model", "group"], as_index=False).mean()


def summarize(units: pd.DataFrame, by_model: bool = False) -> pd.DataFrame:
    """Average per-unit errors per method (and per model): method, mse, mse_ratio_vs_DT, mse_small (units with
    at most 15 sampled examples), mse_large, coverage and width (DT and EB intervals; NaN for SR)."""
    if by_model:
        parts = [summarize(part).assign(model=model) for model, part in units.groupby("model", sort=True)]
        return pd.concat(parts, ignore_index=True)[["model", *_SUMMARY_COLUMNS]]
    small = units["n"] <= SMALL_SUBGROUP
    dt = units["mse_DT"].mean()
    rows = []
    for method in METHODS:
        mse = units[f"mse_{method}"]
        rows.append({
            "method": method, "mse": mse.mean(), "mse_ratio_vs_DT": mse.mean() / dt,
            "mse_small": mse[small].mean(), "mse_large": mse[~small].mean(),
            "coverage": units[f"coverage_{method}"].mean() if f"coverage_{method}" in units else np.nan,
            "width": units[f"width_{method}"].mean() if f"width_{method}" in units else np.nan,
        })
    return pd.DataFrame(rows, columns=_SUMMARY_COLUMNS)


_SUMMARY_COLUMNS = ["method", "mse", "mse_ratio_vs_DT", "mse_small", "mse_large", "coverage", "width"]
