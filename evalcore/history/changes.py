r"""A series of runs: each run compared with its baseline, overall and per slice, the changes flagged together.

A run is one saved log of the series (:class:`Run`: its name, when it ran, and its rows of one model). Each run
after the first is compared with its baseline: one pinned run, the gate's baseline of each run (the latest accepted
run before it, :meth:`evalcore.history.load.Series.gate_baselines`), or the previous run. Where the two share
examples, keyed (task, example_id), the comparison is the paired one of :mod:`evalcore.compare.paired` (exact
McNemar with Newcombe's paired score interval for a 0/1 metric, the paired t otherwise), on the shared examples;
where they share none, it is unpaired (said so in ``method``): the difference of the two means with Newcombe's
(1998) hybrid score interval for independent proportions (method 10 of "Interval estimation for the difference
between independent proportions", Stat Med 17:873-890: square-and-add of the two Wilson intervals) and the
two-proportion z-test for a 0/1 metric, Welch's t otherwise.

Slices are the values of ``task``, ``category`` and ``group`` (those with two or more values in the series), each
with at least ``min_slice`` examples in both runs. Every (run, slice) comparison, the overall ones included, enters
one Benjamini-Hochberg procedure at ``fdr``, so the expected share of false discoveries among all the changes
flagged in the history is at most ``fdr`` (measured: ``benchmarks/history_power.py``). Each row carries the
comparison's minimum detectable difference (:mod:`evalcore.compare.power`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from evalcore.compare.paired import SUMS, paired_estimates
from evalcore.compare.power import detectable
from evalcore.compare.slices import bh_qvalues
from evalcore.stats.intervals import wilson_interval

SLICE_COLUMNS = ("task", "category", "group")
KEYS = ["task", "example_id"]
COLUMNS = ["run", "time", "baseline", "slice", "n", "base", "new", "difference", "ci_low", "ci_high", "p_value",
           "q_value", "flagged", "direction", "method", "minimum_detectable_difference"]


@dataclass(frozen=True)
class Run:
    """One run of a series: ``name``, ``time`` (ISO 8601) and ``rows``, its per-example rows of the model followed
    (task, example_id, the metric, and the slice columns it has)."""
    name: str
    time: str
    rows: pd.DataFrame


def _examples(rows: pd.DataFrame, metric: str) -> pd.DataFrame:
    """One row per example (repeated samples averaged: the example is the unit), labeled rows only (none where the
    run has no ``metric`` column)."""
    rows = rows[rows[metric].notna()] if metric in rows else rows.iloc[:0].assign(**{metric: pd.Series(dtype=float)})
    slices = [c for c in SLICE_COLUMNS if c in rows and c != "task"]
    if rows.duplicated(KEYS).any():  # several samples of an example: their mean
        agg = {metric: "mean", **{c: "first" for c in slices}}
        rows = rows.groupby(KEYS, observed=True, sort=False, as_index=False).agg(agg)
    return rows[[*KEYS, metric, *slices]].reset_index(drop=True)


def _same_examples(base: pd.DataFrame, new: pd.DataFrame) -> bool:
    """Whether two runs hold the same examples in the same order (the common case of a series: no join needed)."""
    return len(base) == len(new) and all(bool((base[k].to_numpy() == new[k].to_numpy()).all()) for k in KEYS)


def _paired_sums(base: pd.DataFrame, new: pd.DataFrame, metric: str, columns: list[str]) -> pd.DataFrame:
    """The sums of :data:`evalcore.compare.paired.SUMS` over the shared examples, overall and per slice value
    (numpy: one pass per slice column with ``bincount``, the series' many comparisons stay fast)."""
    if _same_examples(base, new):
        j, bv, nv = base, base[metric].to_numpy(float), new[metric].to_numpy(float)
    else:
        j = base.merge(new[[*KEYS, metric]], on=KEYS, suffixes=("_base", "_new"))
        bv, nv = j[f"{metric}_base"].to_numpy(float), j[f"{metric}_new"].to_numpy(float)
    d = nv - bv
    values = {"n": np.ones(len(d)), "sum_base": bv, "sum_new": nv, "sum_d": d, "sum_dd": d * d,
              "both": (bv == 1) & (nv == 1), "b": (bv == 1) & (nv == 0), "c": (bv == 0) & (nv == 1),
              "neither": (bv == 0) & (nv == 0), "up": d > 0, "down": d < 0,
              "nonbinary": ((bv != 0) & (bv != 1)) | ((nv != 0) & (nv != 1)), "repeated": np.zeros(len(d))}
    cells = np.column_stack([np.asarray(values[k], dtype=float) for k in SUMS])
    parts, names = [cells.sum(axis=0, keepdims=True)], ["overall"]
    for column in columns:
        codes, uniques = pd.factorize(j[column].astype(str), sort=True)
        ok = codes >= 0
        parts.append(np.column_stack([np.bincount(codes[ok], weights=cells[ok, k], minlength=len(uniques))
                                      for k in range(len(SUMS))]))
        names += [f"{column}={v}" for v in uniques]
    return pd.DataFrame(np.vstack(parts), index=names, columns=list(SUMS))


def _unpaired(base: pd.DataFrame, new: pd.DataFrame, metric: str, columns: list[str], binary: bool,
              level: float) -> pd.DataFrame:
    """Difference of means of two runs without shared examples, overall and per slice value (module docstring)."""
    def stats_of(frame):
        y = frame[metric].astype(float)
        parts = [pd.DataFrame({"n": [len(y)], "s": [y.sum()], "ss": [(y * y).sum()]}, index=["overall"])]
        for column in columns:
            g = pd.DataFrame({"y": y.to_numpy(), "key": frame[column].astype(str).to_numpy()}).groupby("key")["y"]
            part = pd.DataFrame({"n": g.size(), "s": g.sum(), "ss": g.apply(lambda v: (v * v).sum())})
            part.index = [f"{column}={v}" for v in part.index]
            parts.append(part)
        return pd.concat(parts)

    a, b = stats_of(base), stats_of(new)
    both = a.add_suffix("_a").join(b.add_suffix("_b"), how="inner")
    na, nb = both["n_a"].to_numpy(float), both["n_b"].to_numpy(float)
    pa, pb = both["s_a"].to_numpy(float) / na, both["s_b"].to_numpy(float) / nb
    diff = pb - pa
    alpha = 1 - level
    if binary:
        la, ua = wilson_interval(both["s_a"].to_numpy(float), na, alpha)
        lb, ub = wilson_interval(both["s_b"].to_numpy(float), nb, alpha)
        low = diff - np.sqrt((pb - lb) ** 2 + (ua - pa) ** 2)
        high = diff + np.sqrt((ub - pb) ** 2 + (pa - la) ** 2)
        pooled = (both["s_a"].to_numpy(float) + both["s_b"].to_numpy(float)) / (na + nb)
        with np.errstate(divide="ignore", invalid="ignore"):
            z = diff / np.sqrt(pooled * (1 - pooled) * (1 / na + 1 / nb))
        p = np.where(np.isfinite(z), 2 * stats.norm.sf(np.abs(z)), np.where(diff == 0, 1.0, 0.0))
        se = np.sqrt(pa * (1 - pa) / na + pb * (1 - pb) / nb)
    else:
        va = np.maximum(both["ss_a"].to_numpy(float) - na * pa * pa, 0) / np.maximum(na - 1, 1)
        vb = np.maximum(both["ss_b"].to_numpy(float) - nb * pb * pb, 0) / np.maximum(nb - 1, 1)
        se = np.sqrt(va / na + vb / nb)
        with np.errstate(divide="ignore", invalid="ignore"):
            df = se**4 / ((va / na) ** 2 / np.maximum(na - 1, 1) + (vb / nb) ** 2 / np.maximum(nb - 1, 1))
            crit = stats.t.ppf(1 - alpha / 2, np.where(np.isfinite(df), df, 1))
            p = np.where(se > 0, 2 * stats.t.sf(np.abs(diff / se), np.where(np.isfinite(df), df, 1)),
                         np.where(diff == 0, 1.0, 0.0))
        low, high = diff - crit * se, diff + crit * se
    za, zb = stats.norm.ppf(1 - alpha / 2), stats.norm.ppf(0.8)
    return pd.DataFrame({"n": np.minimum(na, nb).astype("int64"), "base": pa, "new": pb, "difference": diff,
                         "ci_low": low, "ci_high": high, "p_value": p, "minimum_detectable_difference":
                         (za + zb) * se}, index=both.index)


def series_changes(runs: list[Run], metric: str = "correct", baseline: str | tuple | list | None = None,
                   level: float = 0.95, fdr: float = 0.1, min_slice: int = 20, slices: bool = True) -> pd.DataFrame:
    """Every run after the first compared with its baseline (``baseline``: a run's name, pinned for every run; one
    name per run, None where a run has none, as :meth:`evalcore.history.load.Series.gate_baselines` gives them;
    None: the previous run), overall and (``slices``) per slice value, all flagged by one Benjamini-Hochberg
    procedure at ``fdr`` (module docstring). Columns :data:`COLUMNS`; ``direction`` is "worse", "better" or ""
    (not flagged). A run without the ``metric`` column or a labeled example (another metric, another model) has no
    row, nor does the run compared with it (:meth:`evalcore.history.load.Series.comparable` says which)."""
    names = [r.name for r in runs]
    if baseline is None or isinstance(baseline, str):
        bases = [baseline if baseline is not None else (names[i - 1] if i else None) for i in range(len(names))]
    else:
        bases = list(baseline)
    unknown = [b for b in bases if b is not None and b not in names]
    if unknown or len(bases) != len(names):
        raise ValueError(f"the baselines {unknown or bases!r} are not runs of the series ({', '.join(names[:10])}), "
                         "one per run")
    examples = {r.name: _examples(r.rows, metric) for r in runs}
    columns = [c for c in SLICE_COLUMNS if slices and any(c in e and e[c].nunique() > 1 for e in examples.values())]
    binary = metric == "correct" and all(e[metric].isin([0.0, 1.0]).all() for e in examples.values())
    found = []
    for run, base_name in zip(runs, bases):
        if base_name is None or base_name == run.name:
            continue
        base, new = examples[base_name], examples[run.name]
        if base.empty or new.empty:  # a run without a labeled example of the model: nothing to compare, no row
            continue
        usable = [c for c in columns if c in base and c in new]
        sums = _paired_sums(base, new, metric, usable)
        if int(sums.loc["overall", "n"]) > 0:
            table = paired_estimates(sums, binary, level)
            table["minimum_detectable_difference"] = detectable(sums, binary, level)
            method = "paired"
        else:
            table = _unpaired(base, new, metric, usable, binary, level)
            method = "unpaired (no shared example)"
        table = table[(table.index == "overall") | (table["n"] >= min_slice)]
        found.append(table.assign(run=run.name, time=run.time, baseline=base_name, method=method)
                     .rename_axis("slice").reset_index())
    if not found:
        return pd.DataFrame(columns=COLUMNS)
    out = pd.concat(found, ignore_index=True)
    out["q_value"] = bh_qvalues(out["p_value"].to_numpy(float))
    out["flagged"] = out["q_value"] <= fdr
    out["direction"] = np.where(out["flagged"], np.where(out["difference"] < 0, "worse", "better"), "")
    return out[COLUMNS]


def trend(runs: list[Run], metric: str, level: float) -> pd.DataFrame:
    """Each run's overall number (:func:`evalcore.stats.overall.overall_table`, the mean over tasks, with its
    interval): run, time, n_tasks, n, estimate, ci_low, ci_high, in the order of the runs."""
    from evalcore.stats.overall import overall_table

    rows = []
    for run in runs:
        table = overall_table(run.rows.assign(model=run.name), metric, 1 - level)
        if len(table):
            rows.append({"run": run.name, "time": run.time,
                         **table.iloc[0][["n_tasks", "n", "estimate", "ci_low", "ci_high"]].to_dict()})
    return pd.DataFrame(rows, columns=["run", "time", "n_tasks", "n", "estimate", "ci_low", "ci_high"])


__all__ = ["COLUMNS", "Run", "series_changes", "trend"]
