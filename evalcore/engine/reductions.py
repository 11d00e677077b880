r"""The small sufficient statistics the methods need, computed in the engine and returned as pandas frames.

* :func:`cell_moments`: per cell (e.g. model, task, group) the labeled count :math:`n`, unlabeled rows, :math:`\sum y`
  and :math:`\sum y^2` — means, Wilson and Student-t intervals, empirical Bayes inputs;
* :func:`bucket_replicates`: the paired Poisson bootstrap of cell sums (:mod:`.poisson`);
* :func:`calibration_bins`: per model and uniform confidence bin the count, :math:`\sum r`, :math:`\sum r^2` and
  :math:`\sum c(1-c)` of the residual :math:`r = y - c`, with the bins computed exactly as in memory
  (:func:`evalcore.calibration.estimators.bin_index`), plus the bucket sums of :math:`r` for the bootstrap;
* :func:`ppi_moments`: per model, labeled :math:`n, \sum y, \sum \hat y, \sum y^2, \sum \hat y^2, \sum y \hat y`
  and unlabeled :math:`N, \sum \hat y, \sum \hat y^2` for prediction-powered inference.
"""

from __future__ import annotations

import ibis
import ibis.expr.types as ir
import numpy as np
import pandas as pd

from evalcore.engine.poisson import bucket_sums, bucket_weights, replicate_totals
from evalcore.engine.scan import LazyLog


def cell_moments(log: LazyLog, by: list[str], metric: str) -> pd.DataFrame:
    """Per ``by`` cell (sorted): n (labeled rows), n_unlabeled, total (Σ y), total_sq (Σ y²); with repeated samples
    averaged per example (an ``n_repeats`` column) also trials, the labeled rows' Σ n_repeats. Kept with the log
    (a copy is returned): a report and a page ask for the same moments several times (overall numbers, direct
    estimates, the leaderboard's cells), and the log's table never changes."""
    key = ("cell_moments", tuple(by), metric)
    if key not in log._cache:
        log._cache[key] = _cell_moments(log, by, metric)
    return log._cache[key].copy()


def _cell_moments(log: LazyLog, by: list[str], metric: str) -> pd.DataFrame:
    t = log.table
    y = t[metric]
    extra = {"trials": y.notnull().ifelse(t.n_repeats, 0.0).sum()} if "n_repeats" in t.columns else {}
    out = log.run(t.group_by(by).aggregate(n=y.count(), rows=t.count(), total=y.sum(), total_sq=(y * y).sum(),
                                           **extra))
    out["n_unlabeled"] = out.pop("rows") - out["n"]
    out[["total", "total_sq"]] = out[["total", "total_sq"]].fillna(0.0)
    return out.sort_values(by, ignore_index=True)


def bucket_replicates(log: LazyLog, by: list[str], cells: pd.Index | pd.MultiIndex, values: dict[str, ir.Value],
                      n_boot: int, seed: int, where: ir.BooleanValue | None = None) -> dict[str, np.ndarray]:
    """(n_boot, n_cells) replicated totals of ``rows`` (Σ w) and of each value (Σ w·v) over the rows ``where``
    holds, for the ``cells`` of ``by`` (:mod:`.poisson`)."""
    t = log.table if where is None else log.table.filter(where)
    keys = cells.to_frame(index=False)
    keys.columns = by
    sums = bucket_sums(t, keys, values, seed, log.run)
    return replicate_totals(sums, len(cells), ["rows", *values], bucket_weights(n_boot, seed))


def _uniform_bin(c: ir.FloatingValue, n_bins: int) -> ir.IntegerValue:
    """floor(c·M) capped at M - 1 and corrected by one where the float product rounds across an edge, as
    :func:`evalcore.calibration.estimators.bin_index` does (the edges k / M are the same correctly rounded floats)."""
    idx = ibis.least((c * n_bins).floor().cast("int64"), n_bins - 1)
    up = ((c >= (idx + 1).cast("float64") / n_bins) & (idx < n_bins - 1)).cast("int64")
    idx = idx + up
    return idx - (c < idx.cast("float64") / n_bins).cast("int64")


def calibration_bins(log: LazyLog, n_bins: int, n_boot: int, seed: int) -> tuple[pd.DataFrame, dict]:
    """Per (model, bin) over labeled rows with a confidence: n, residual (Σ r), residual_sq (Σ r²), spread
    (Σ c(1 - c)), sum_conf (Σ c); and the bootstrap's (n_boot, cells) replicated ``residual`` per (model, bin) and
    (n_boot, models) replicated rows per model (key ``model_rows``, models in the table's order)."""
    t = log.table
    usable = t.filter(t.correct.notnull() & t.confidence.notnull())
    binned = usable.mutate(bin=_uniform_bin(usable.confidence, n_bins), residual=usable.correct - usable.confidence)
    table = log.run(binned.group_by(["model", "bin"]).aggregate(
        n=binned.count(), residual=binned.residual.sum(), residual_sq=(binned.residual * binned.residual).sum(),
        spread=(binned.confidence * (1 - binned.confidence)).sum(), sum_conf=binned.confidence.sum(),
    )).sort_values(["model", "bin"], ignore_index=True)
    sums = bucket_sums(binned, table[["model", "bin"]], {"residual": binned.residual}, seed, log.run)
    model = pd.factorize(table["model"])[0]  # the bins' models, numbered in order (the table is sorted)
    reps = replicate_totals(sums, len(table), ["rows", "residual"], bucket_weights(n_boot, seed),
                            groups={"rows": model})
    reps["model_rows"] = reps.pop("rows")  # a model's rows over its bins: the replicate's number of rows
    return table, reps


def ppi_moments(log: LazyLog, annotator: str, metric: str) -> pd.DataFrame:
    """Per model (sorted): n, sum_y, sum_f, sum_yy, sum_ff, sum_yf over rows with a label and the annotator's
    value; N, sum_fu, sum_ffu over rows with the annotator's value and no label."""
    t = log.table
    y, f = t[metric], t[annotator]
    lab = y.notnull() & f.notnull()
    unl = y.isnull() & f.notnull()

    def total(expr, mask):
        return mask.ifelse(expr, 0.0).sum()

    out = log.run(t.group_by("model").aggregate(
        n=lab.cast("int64").sum(), sum_y=total(y, lab), sum_f=total(f, lab), sum_yy=total(y * y, lab),
        sum_ff=total(f * f, lab), sum_yf=total(y * f, lab),
        N=unl.cast("int64").sum(), sum_fu=total(f, unl), sum_ffu=total(f * f, unl)))
    return out.sort_values("model", ignore_index=True)


def unit_covariates(log: LazyLog, numeric: list[str]) -> tuple[pd.DataFrame | None, pd.Series]:
    """Per (model, group), over all rows: the means of the ``numeric`` roles (None if there are none) and the most
    frequent task (the first in sort order among ties), as :func:`evalcore.subgroups.estimates.unit_features` uses them."""
    t = log.table
    keys = ["model", "group"]
    means = None
    if numeric:
        means = log.run(t.group_by(keys).aggregate(**{c: t[c].mean() for c in numeric}))
        means = means.sort_values(keys).set_index(keys)[numeric]
    counts = log.run(t.group_by([*keys, "task"]).aggregate(count=t.count()))
    counts = counts.sort_values([*keys, "count", "task"], ascending=[True, True, False, True])
    task = counts.drop_duplicates(keys).set_index(keys)["task"].sort_index()
    return means, task


def models_share_labeled_examples(log: LazyLog, metric: str) -> bool:
    """Whether some (group, example) has labeled rows of two or more models: its smallest and largest model differ
    (a minimum and a maximum per example cost the engine less than counting the distinct models: MMLU-Pro, 0.08 s ->
    0.03 s)."""
    t = log.table.filter(log.table[metric].notnull())
    per = t.group_by(["group", "example_id"]).aggregate(first=t.model.min(), last=t.model.max())
    return bool(log.run(per.aggregate(shared=(per["first"] != per["last"]).cast("int64").sum()))["shared"].iloc[0])


def proxy_histogram(log: LazyLog, model: str, column: str, resolution: int) -> pd.DataFrame:
    """The ``column`` values of ``model``'s rows in ``resolution`` equal-width bins of [0, 1] (non-empty bins, in
    order): bin, n, sum_p, sum_p2, sum_pq (Σ p(1 - p))."""
    t = log.table
    rows = t.filter((t.model == model) & t[column].notnull())
    p = rows[column]
    binned = rows.mutate(bin=ibis.least((p * resolution).floor().cast("int64"), resolution - 1))
    q = binned[column]
    out = log.run(binned.group_by("bin").aggregate(n=binned.count(), sum_p=q.sum(), sum_p2=(q * q).sum(),
                                                   sum_pq=(q * (1 - q)).sum()))
    return out.sort_values("bin", ignore_index=True)


def pair_statistics(log: LazyLog, judge: bool) -> pd.DataFrame:
    """Per ordered pair (model_a, model_b) of battles: labeled (with a human outcome y) n_ab, sy, syy and, with the
    judge's value h, sh, shh, syh; judge-only nu_ab, su, suu — the statistics of Bradley-Terry (PPI++)."""
    t = log.table
    y = t.outcome if "outcome" in log else ibis.null("float64")
    h = t.judge if judge else ibis.literal(0.0)
    lab, unl = y.notnull(), y.isnull() & (h.notnull() if judge else ibis.literal(False))

    def total(expr, mask):
        return mask.ifelse(expr, 0.0).sum()

    out = log.run(t.group_by(["model_a", "model_b"]).aggregate(
        n_ab=lab.cast("int64").sum(), sy=total(y, lab), syy=total(y * y, lab), sh=total(h, lab),
        shh=total(h * h, lab), syh=total(y * h, lab), nu_ab=unl.cast("int64").sum(), su=total(h, unl),
        suu=total(h * h, unl)))
    return out.sort_values(["model_a", "model_b"], ignore_index=True)
