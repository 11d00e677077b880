r"""Where two runs differ: the slices searched, their paired differences, Benjamini-Hochberg q-values and empirical
Bayes shrinkage.

Slices searched: each value of ``task``, ``category`` and ``group`` when the shared examples hold more than one, and
of the columns in ``by`` (text metadata by value; numeric feature columns in :data:`N_BINS` quantile bins
"x in [a, b)", the last closed, or by value "x=1.0" when they hold at most :data:`N_BINS` values); with
``pairs_of_slices`` also each pair of values of two of those columns. A column with more than :data:`MAX_VALUES`
values is not searched (said in the notes).

All of it is one pass where the log lives: the paired table (:func:`evalcore.compare.paired.paired_table`) grouped
by every searched column at once gives the :data:`~evalcore.compare.paired.SUMS` of each finest cell, and each
slice's sums are sums of those cells (one group-by in pandas per column or pair); where the finest cells would be
too many (more than :data:`MAX_CELLS` by the product of the columns' counts), one engine group-by per column (and
pair) instead. A numeric column's quartile edges and every column's count of values come from one aggregate
before, over the base run's scored rows (a scan, no join).

Multiple testing: Benjamini & Hochberg (1995, J R Stat Soc B 57:289-300) over the :math:`m` slices searched (those
with at least ``min_slice`` shared examples): with the p-values sorted :math:`p_{(1)} \le \dots \le p_{(m)}`,
:math:`q_{(i)} = \min_{j \ge i} \min(1, m\,p_{(j)}/j)`; a slice is flagged when :math:`q \le` ``fdr``, which
controls the expected share of false discoveries among flagged slices at ``fdr`` (independent or positively
dependent tests). Shrinkage: each slice's difference shrunk toward the weighted mean of all slices' differences by
the robust empirical Bayes of Armstrong, Kolesar & Plagborg-Moller (2022)
(:func:`evalcore.subgroups.robust_intervals.ebci`, se = the slice's sd / sqrt n).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import ibis
import numpy as np
import pandas as pd

from evalcore.compare.paired import SUMS, paired_estimates, sum_expressions
from evalcore.errors import EvalDataError
from evalcore.stats.headline import number
from evalcore.subgroups.robust_intervals import ebci

SLICE_ROLES = ("task", "category", "group")
N_BINS = 4
#: a column with more distinct values than this is not searched (each value would be a slice of a few examples)
MAX_VALUES = 1000
#: the most finest cells (product of the columns' value counts) grouped in one pass
MAX_CELLS = 200_000
MISSING = "(missing)"
SLICE_COLUMNS = ("slice", "column", "value", "n", "base", "new", "difference", "ci_low", "ci_high", "p_value",
                 "q_value", "flagged", "shrunk", "direction")


@dataclass(frozen=True)
class SliceColumn:
    """A column searched: by value, or (``edges``: the base run's quartiles) in bins numbered 0.. with
    [e_k, e_k+1), the last closed."""

    name: str
    edges: tuple[float, ...] = ()

    @property
    def numeric(self) -> bool:
        return bool(self.edges)

    def key(self, j):
        """The Ibis expression whose value names the slice of a row of the paired table ``j``."""
        x = j[self.name]
        if not self.numeric:
            return x.cast("string")
        inner = self.edges[1:-1]
        cases = [(x < e, k) for k, e in enumerate(inner)]
        return ibis.cases((x.isnull(), ibis.null("int64")), *cases, else_=len(inner)).cast("int64")

    def label(self, key) -> str:
        """The value of the slice ``key`` (a text value, or the bin "[a, b)")."""
        if key is None or (not isinstance(key, str) and pd.isna(key)):
            return MISSING
        if not self.numeric:
            return str(key)
        k = int(key)
        last = k == len(self.edges) - 2
        return f"[{number(self.edges[k])}, {number(self.edges[k + 1])}{']' if last else ')'}"

    def text(self, key) -> str:
        value = self.label(key)
        return f"{self.name} in {value}" if self.numeric and value != MISSING else f"{self.name}={value}"

    def condition(self, j, key):
        """Ibis condition selecting the rows of ``j`` in the slice ``key``."""
        expr = self.key(j)
        if key is None or (not isinstance(key, str) and pd.isna(key)):
            return expr.isnull()
        return expr == (int(key) if self.numeric else str(key))


def search_columns(table, by, mapping=None) -> tuple[list[str], set[str]]:
    """The candidate columns of the Ibis ``table``: the slice roles and ``by`` (deduplicated), and the numeric ones
    among them (searched in quantile bins). A ``task`` that validation filled in from the category (``mapping``,
    {role: source column}, names no task) would repeat the category's slices and is left out. EvalDataError
    naming a ``by`` column the log lacks."""
    by = [str(c) for c in (by or [])]
    missing = [c for c in by if c not in table.columns]
    if missing:
        raise EvalDataError(f"the comparison's slices (by) name the column(s) {', '.join(map(repr, missing))}, "
                            f"which the log lacks; its columns are {', '.join(table.columns)}.")
    roles = [r for r in SLICE_ROLES if not (r == "task" and mapping is not None and "task" not in mapping
                                            and "task" not in by)]
    names = [c for c in dict.fromkeys((*roles, *by)) if c in table.columns]
    numeric = {c for c in names if c not in SLICE_ROLES and table[c].type().is_numeric()
               and not table[c].type().is_boolean()}
    return names, numeric


def profile(log, j, names: list[str], numeric: set[str]) -> tuple[list[SliceColumn], dict[str, int], list[str],
                                                                  dict[str, int]]:
    """One aggregate over ``j``, the base run's scored rows (a scan, cheaper than the join; the join keeps the
    base row's columns): each column's (approximate) count of values and, for numeric ones, the quartiles; the
    columns to search (more than one value, at most :data:`MAX_VALUES`), their counts, notes, and the columns left
    out for more than :data:`MAX_VALUES` values with their counts."""
    if not names:
        return [], {}, [], {}
    aggs = {}
    for i, name in enumerate(names):
        x = j[name]
        aggs[f"v{i}"] = x.approx_nunique()
        if name in numeric:
            aggs[f"min{i}"] = x.min()
            aggs[f"max{i}"] = x.max()
            for q in range(1, N_BINS):
                aggs[f"q{i}_{q}"] = x.quantile(q / N_BINS)
    row = log.run(j.aggregate(**aggs)).iloc[0]
    specs, counts, notes, too_many = [], {}, [], {}
    for i, name in enumerate(names):
        values = int(row[f"v{i}"] or 0)
        if name in numeric and values > N_BINS:  # few values (e.g. a 0/1 flag): searched by value below
            edges = [row[f"min{i}"], *(row[f"q{i}_{q}"] for q in range(1, N_BINS)), row[f"max{i}"]]
            edges = tuple(sorted({float(e) for e in edges if e is not None and np.isfinite(e)}))
            if len(edges) < 3:  # one bin would hold every example
                continue
            specs.append(SliceColumn(name, edges))
            counts[name] = len(edges)  # the bins and a missing value
            continue
        if values <= 1:
            continue
        if values > MAX_VALUES:
            notes.append(f"Column '{name}' holds about {values:,} values in the base run's rows, more than "
                         f"{MAX_VALUES:,}: not searched as slices (bin it, or choose a column with fewer values).")
            too_many[name] = values
            continue
        specs.append(SliceColumn(name))
        counts[name] = values + 1
    return specs, counts, notes, too_many


def cell_sums(log, j, specs: list[SliceColumn], counts: dict[str, int], pairs: bool) -> tuple[pd.Series, dict]:
    """The total :data:`SUMS` and, per searched column (a 1-tuple of its spec) and pair (a 2-tuple), a frame of
    the sums per value (index: the keys). One engine pass when the finest cells are few (module docstring)."""
    groups = [(s,) for s in specs] + (list(itertools.combinations(specs, 2)) if pairs else [])
    product = float(np.prod([counts[s.name] for s in specs])) if specs else 1.0
    if product <= MAX_CELLS:
        keyed = j.mutate(**{f"k{i}": s.key(j) for i, s in enumerate(specs)})
        keys = [f"k{i}" for i in range(len(specs))]
        sums = sum_expressions(keyed)
        finest = log.run(keyed.group_by(keys).aggregate(**sums) if keys else keyed.aggregate(**sums))
        total = finest[list(SUMS)].sum()
        tables = {}
        for group in groups:
            cols = [f"k{specs.index(s)}" for s in group]
            tables[group] = finest.groupby(cols, dropna=False, sort=False)[list(SUMS)].sum()
        return total, tables
    total = log.run(j.aggregate(**sum_expressions(j)))[list(SUMS)].iloc[0]
    tables = {}
    for group in groups:
        keyed = j.mutate(**{f"k{i}": s.key(j) for i, s in enumerate(group)})
        cols = [f"k{i}" for i in range(len(group))]
        tables[group] = log.run(keyed.group_by(cols).aggregate(**sum_expressions(keyed))).set_index(cols)[list(SUMS)]
    return total, tables


def cell_counts(sums: pd.Series) -> dict[str, int]:
    """The number of examples in each cell (:data:`~evalcore.compare.paired.CELLS` and ``SCORE_CELLS``) from
    :data:`~evalcore.compare.paired.SUMS`."""
    n, up, down = int(sums["n"]), int(sums["up"]), int(sums["down"])
    return {"both right": int(sums["both"]), "only base right": int(sums["b"]), "only new right": int(sums["c"]),
            "both wrong": int(sums["neither"]), "new higher": up, "base higher": down, "equal": n - up - down}


def bh_qvalues(p) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (q-values) of ``p`` (module docstring); NaN stays NaN and is not
    counted in m."""
    p = np.asarray(p, dtype=float)
    q = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    m = len(ok)
    if not m:
        return q
    order = ok[np.argsort(p[ok], kind="stable")]
    scaled = p[order] * m / np.arange(1, m + 1)
    q[order] = np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])
    return q


def flag(frame: pd.DataFrame, q, fdr: float) -> pd.DataFrame:
    """``frame`` (slices with a difference) with its q-values ``q``, ``flagged`` (q <= fdr) and ``direction``
    ("worse", "better" or "same")."""
    frame = frame.assign(q_value=np.asarray(q, dtype=float))
    frame["flagged"] = (frame["q_value"] <= fdr).fillna(False).astype(bool)
    sign = np.sign(frame["difference"].to_numpy(dtype=float))
    frame["direction"] = np.where(frame["flagged"] & (sign < 0), "worse",
                                  np.where(frame["flagged"] & (sign > 0), "better", "same"))
    return frame


def shrunk_differences(estimate, se, level: float) -> np.ndarray:
    """Empirical Bayes estimates of the slices' differences (robust EBCI shrinkage toward their mean); NaN for a
    slice without a positive se, and for all when there are too few slices to estimate the spread."""
    estimate = np.asarray(estimate, dtype=float)
    se = np.asarray(se, dtype=float)
    out = np.full(estimate.shape, np.nan)
    ok = np.isfinite(estimate) & np.isfinite(se) & (se > 0)
    if ok.sum() < 3:
        return out
    try:
        fit = ebci(pd.Series(estimate[ok]), pd.Series(se[ok]), alpha=1 - level)
    except EvalDataError:
        return out
    out[ok] = fit.table["eb"].to_numpy(dtype=float)
    return out


def slice_table(tables: dict, binary: bool, level: float, fdr: float, min_slice: int) -> tuple[pd.DataFrame, int,
                                                                                                  int, dict]:
    """The slices frame (:data:`SLICE_COLUMNS`, worst first), the number searched and skipped as small, and
    {slice text: (((SliceColumn, key), ...), {cell: examples})} for every slice (searched or not)."""
    rows, conditions = [], {}
    for group, sums in tables.items():
        if sums.empty or (len(group) == 1 and len(sums) < 2):  # one value on the shared examples: the whole
            continue
        est = paired_estimates(sums, binary, level)
        for (key, r), (_, cell) in zip(est.iterrows(), sums.iterrows()):  # one row per slice, not per example
            keys = key if isinstance(key, tuple) else (key,)
            parts = tuple(zip(group, keys))
            text = " & ".join(s.text(k) for s, k in parts)
            conditions[text] = (parts, cell_counts(cell))
            rows.append({"slice": text, "column": " & ".join(s.name for s in group),
                         "value": " & ".join(s.label(k) for s, k in parts), **r.to_dict()})
    frame = pd.DataFrame(rows, columns=["slice", "column", "value", "n", "base", "new", "difference", "ci_low",
                                        "ci_high", "p_value", "se"])
    small = frame["n"] < min_slice
    frame = frame[~small].reset_index(drop=True)
    frame["n"] = frame["n"].astype("int64")
    frame["q_value"] = bh_qvalues(frame["p_value"])
    frame = flag(frame, frame["q_value"], fdr)
    frame["shrunk"] = shrunk_differences(frame["difference"], frame["se"], level)
    frame = frame.sort_values(["difference", "slice"], kind="stable", ignore_index=True)
    return frame[list(SLICE_COLUMNS)], len(frame), int(small.sum()), conditions
