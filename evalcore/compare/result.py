"""Compare two runs of one log: :func:`compare_runs` and its answer, :class:`Comparison`.

The contract (issue 28, /work/notes/compare28.md): ``compare_runs(log, base, new, by, level, margin, fdr, seed,
pairs_of_slices, min_slice, metric)`` pairs the examples both runs scored, keyed (task, example_id), with repeats
averaged per example first, and returns the overall paired difference (:mod:`evalcore.compare.paired`), the slices
searched with Benjamini-Hochberg q-values and empirical Bayes shrinkage (:mod:`evalcore.compare.slices`), the
2x2 table (or, for scores, new higher / base higher / equal), a verdict against the non-inferiority margin, and one
sentence. A validated frame goes through the same path as a log in an engine (:func:`evalcore.engine.frames.as_log`):
the sums are reductions of the join of the two runs' rows; only :meth:`Comparison.examples` brings rows into memory,
within the bound of :func:`evalcore.engine.examples.fetch`.

Verdict: "regression" if ci_high < -margin or a flagged slice is worse; else "improvement" if ci_low > 0; else
"no difference" if -margin <= ci_low and ci_high <= margin (only possible with margin > 0); else "inconclusive".
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field, replace

import ibis
import numpy as np
import pandas as pd
import pyarrow as pa

from evalcore.compare.paired import (BINARY_METHOD, CELLS, SCORE_CELLS, T_METHOD, paired_estimates,
                                     paired_table, pairs_table, pick_metric)
from evalcore.compare.power import POWER, detectable
from evalcore.compare.slices import cell_counts, cell_sums, flag, profile, search_columns, slice_table
from evalcore.data.schema import EXAMPLE_TEXT_ROLES
from evalcore.engine.examples import fetch
from evalcore.engine.frames import as_log
from evalcore.engine.connection import duckdb_connection
from evalcore.engine.scan import TEXT_ROLES, VALUE_ROLES, LazyLog, missing_nan
from evalcore.errors import EvalDataError
from evalcore.stats.figures import percent
from evalcore.stats.headline import count, number
from evalcore.stats.intervals import DEFAULT_LEVEL

OVERALL_COLUMNS = ("base", "new", "n", "difference", "ci_low", "ci_high", "p_value", "method",
                   "minimum_detectable_difference")
EXAMPLE_COLUMNS = ("task", "example_id", "category", "group", "base_value", "new_value")
#: text columns of :meth:`Comparison.examples`, in order, where the log has the role
TEXT_COLUMNS = ("input", "target", "base_output", "new_output", "base_explanation", "new_explanation")
_names = itertools.count()
#: the most example ids looked up as a list of literals (more: a semi-join with a table of them)
MAX_IN_LIST = 5000


@dataclass(frozen=True, eq=False)
class Comparison:
    """The answer of :func:`compare_runs` (module docstring; columns as in the issue 28 contract). Beyond the
    contract: ``cells`` (the cell names of ``pairs``), ``by``, ``pairs_of_slices`` and ``notes``."""

    base: str
    new: str
    metric: str
    level: float
    margin: float
    fdr: float
    seed: int
    min_slice: int
    overall: pd.DataFrame
    slices: pd.DataFrame
    n_searched: int
    n_skipped_small: int
    verdict: str
    sentence: str
    pairs: pd.DataFrame
    cells: tuple[str, ...] = CELLS
    by: tuple[str, ...] = ()
    pairs_of_slices: bool = False
    notes: tuple[str, ...] = ()
    #: the slice columns not searched for holding more than :data:`evalcore.compare.slices.MAX_VALUES` values:
    #: (column, its approximate count of values)
    too_many_values: tuple[tuple[str, int], ...] = ()
    _log: LazyLog | None = field(default=None, repr=False)
    _paired: object = field(default=None, repr=False)
    _conditions: dict = field(default_factory=dict, repr=False)
    _text: pd.DataFrame | None = field(default=None, repr=False)
    _cell_counts: dict = field(default_factory=dict, repr=False)
    _cache: dict = field(default_factory=dict, repr=False)

    def flagged(self) -> pd.DataFrame:
        """The flagged slices by the size of their change, largest first (|difference| descending): what the page
        and the command line list (the forest plot keeps every slice, worst first)."""
        if self.slices is None or self.slices.empty:
            return self.slices
        rows = self.slices[self.slices["flagged"].astype(bool)]
        return rows.iloc[rows["difference"].abs().to_numpy().argsort(kind="stable")[::-1]].reset_index(drop=True)

    def examples(self, cell: str, slice: str | None = None) -> pd.DataFrame:
        """The shared examples in ``cell`` (one of :data:`CELLS` or :data:`SCORE_CELLS`) and, if given, the slice
        named as in ``slices['slice']`` (any slice of the search, also one below ``min_slice``), sorted by task and
        example_id: :data:`EXAMPLE_COLUMNS` and the :data:`TEXT_COLUMNS` the log has (missing where absent).
        Rows come through :func:`evalcore.engine.examples.fetch`, so a cell too large for memory is refused with
        :class:`~evalcore.engine.examples.ExamplesTooLarge`."""
        if cell not in (*CELLS, *SCORE_CELLS):
            raise EvalDataError(f"Unknown cell {cell!r}: choose one of {', '.join(map(repr, (*CELLS, *SCORE_CELLS)))}.")
        if slice is not None and slice not in self._conditions:
            raise EvalDataError(f"Unknown slice {slice!r}: choose one of the slices searched "
                                f"(Comparison.slices['slice']).")
        if (cell, slice) in self._cache:
            return self._cache[(cell, slice)].copy()
        j = self._paired
        bv, nv = j.base_value, j.new_value
        condition = {"both right": (bv == 1) & (nv == 1), "only base right": (bv == 1) & (nv == 0),
                     "only new right": (bv == 0) & (nv == 1), "both wrong": (bv == 0) & (nv == 0),
                     "new higher": j.d > 0, "base higher": j.d < 0, "equal": j.d == 0}[cell]
        parts, counts = self._conditions[slice] if slice is not None else ((), self._cell_counts)
        for spec, key in parts:
            condition = condition & spec.condition(j, key)
        rows = j.filter(condition).select(*EXAMPLE_COLUMNS)
        n = counts[cell]  # known from the sums: no pass to count them
        view = replace(self._log, table=rows, n_rows=n, frame=None, rows=None, _cache={})
        out = fetch(view, f"the examples of the comparison ({cell})", list(EXAMPLE_COLUMNS))
        out = out.sort_values(["task", "example_id"], ignore_index=True)
        out = _with_text(out, self._text_rows(out), self.text_roles(), self.base, self.new)
        self._cache[(cell, slice)] = out
        return out.copy()

    def text_roles(self) -> list[str]:
        """The example text roles (input, target, output, explanation) the log has."""
        if self._text is not None:
            return [r for r in EXAMPLE_TEXT_ROLES if r in self._text.columns]
        log = self._log
        source = log.rows if log.rows is not None else log.table
        return [r for r in EXAMPLE_TEXT_ROLES if r in source.columns]

    def _text_rows(self, out: pd.DataFrame) -> pd.DataFrame | None:
        """(model, task, example_id, text roles) of the two runs' rows of the examples in ``out``."""
        text = self.text_roles()
        if out.empty or not text:
            return None
        runs = [self.base, self.new]
        ids = out["example_id"].astype(str).unique().tolist()
        if self._text is not None:
            frame = self._text
            keep = frame["model"].astype(str).isin(runs) & frame["example_id"].astype(str).isin(ids)
            return frame.loc[keep, ["model", "task", "example_id", *text]]
        log = self._log
        source = log.rows if log.rows is not None else log.table
        chosen = source.filter(source.model.isin(runs))
        if len(ids) <= MAX_IN_LIST:
            chosen = chosen.filter(chosen.example_id.isin(ids))
        else:  # a long list of literals is slow to plan: a semi-join with the ids as a table instead
            chosen = chosen.semi_join(ibis.memtable({"example_id": ids}), "example_id")
        return log.run(chosen.select("model", "task", "example_id", *text))

    def with_q_values(self, q) -> "Comparison":
        """This comparison with its slices' q-values replaced by ``q`` (one Benjamini-Hochberg procedure over the
        slices of several comparisons together, :mod:`evalcore.history.gate`): the flags, directions, verdict and
        sentence follow them."""
        slices = flag(self.slices, q, self.fdr)
        row = self.overall.iloc[0]
        verdict = _verdict(row["ci_low"], row["ci_high"], self.margin, bool((slices["direction"] == "worse").any()))
        sentence = _sentence(self.base, self.new, self.metric == "correct", row, self.level, self.margin, self.fdr,
                             verdict, slices, self.n_searched, self.n_skipped_small, self.min_slice)
        return replace(self, slices=slices, verdict=verdict, sentence=sentence)

    def detectable_sentence(self) -> str:
        """What this comparison could see: "With 1,200 shared examples this comparison could see changes of 2.1
        points or more (80% power, 95% level)." (:mod:`evalcore.compare.power`)."""
        row = self.overall.iloc[0]
        mdd, n = float(row["minimum_detectable_difference"]), int(row["n"])
        if not np.isfinite(mdd):
            return f"With {count(n)} shared example{'' if n == 1 else 's'} this comparison cannot detect a change."
        size = f"{number(100 * mdd)} points" if self.metric == "correct" else number(mdd)
        return (f"With {count(n)} shared examples this comparison could see changes of {size} or more "
                f"({percent(POWER)} power, {percent(self.level)} level).")

    def to_dict(self) -> dict:
        """JSON-able: settings, overall (one record), slices and pairs (records), counts, verdict, sentence."""
        def records(frame):
            return json.loads(frame.to_json(orient="records", double_precision=15))

        return {"settings": {"base": self.base, "new": self.new, "metric": self.metric, "level": self.level,
                             "margin": self.margin, "fdr": self.fdr, "seed": self.seed, "min_slice": self.min_slice,
                             "by": list(self.by), "pairs_of_slices": self.pairs_of_slices},
                "overall": records(self.overall)[0], "slices": records(self.slices), "pairs": records(self.pairs),
                "n_searched": self.n_searched, "n_skipped_small": self.n_skipped_small, "verdict": self.verdict,
                "sentence": self.sentence, "detectable": self.detectable_sentence(), "notes": list(self.notes)}


def compare_runs(log, base: str, new: str, by: list[str] | None = None, level: float | None = None,
                 margin: float = 0.0, fdr: float = 0.1, seed: int = 0, pairs_of_slices: bool = False,
                 min_slice: int = 20, metric: str | None = None, text: pd.DataFrame | None = None) -> Comparison:
    """Compare run ``new`` with run ``base`` (two models of ``log``, a validated frame or a
    :class:`~evalcore.engine.scan.LazyLog`) on the examples both scored (module docstring). ``seed`` is recorded
    (no method here draws at random). ``text`` (an addition to the contract): a frame of rows (model, task,
    example_id and text roles, e.g. every loaded sample) whose text :meth:`Comparison.examples` shows; default the
    frame given, else the frame a LazyLog of a frame wraps, else the engine's rows. EvalDataError for unknown runs,
    no shared example or bad settings."""
    level = DEFAULT_LEVEL if level is None else float(level)
    _check_settings(level, margin, fdr, min_slice)
    base, new = str(base), str(new)
    by = tuple(str(c) for c in (by or ()))
    lg = _log_with(log, by)
    text_frame = text if text is not None else log if isinstance(log, pd.DataFrame) else lg.frame
    if lg.kind != "log":
        raise EvalDataError(f"{lg.source}: a {lg.kind} table cannot be compared example by example: comparing runs "
                            "needs a per-example log (model, example_id and a correct or score column).")
    metric = pick_metric(lg, metric)
    models = lg.models()
    unknown = [m for m in (base, new) if m not in models]
    if unknown:
        raise EvalDataError(f"{lg.source}: no run named {', '.join(map(repr, unknown))}; the log's models are "
                            f"{', '.join(map(repr, models[:20]))}{' ...' if len(models) > 20 else ''}.")
    if base == new:
        raise EvalDataError(f"{lg.source}: base and new are the same run ({base!r}): choose two different runs.")
    names, numeric = search_columns(lg.table, by, lg.mapping)
    j = paired_table(lg, base, new, metric, [c for c in names if c not in ("task", "category", "group")])
    t = lg.table
    specs, counts, notes, too_many = profile(lg, t.filter((t.model == base) & t[metric].notnull()), names, numeric)
    total, tables = cell_sums(lg, j, specs, counts, pairs_of_slices)
    n = int(total["n"])
    if n == 0:
        raise EvalDataError(f"{lg.source}: {base!r} and {new!r} share no example with a '{metric}' value (examples "
                            "are matched on task and example_id): check that both runs scored the same examples "
                            "under the same ids and task names.")
    binary = metric == "correct" and int(total["nonbinary"]) == 0
    overall = paired_estimates(total.to_frame().T, binary, level)
    overall["method"] = BINARY_METHOD if binary else T_METHOD
    overall["minimum_detectable_difference"] = detectable(total, binary, level)
    overall = overall[list(OVERALL_COLUMNS)].reset_index(drop=True)
    if int(total["repeated"]):
        notes.append(f"{int(total['repeated']):,} of {n:,} shared examples have several samples in a run: each "
                     "example's samples are averaged first (the example is the unit).")
    if n < 2 and not binary:
        notes.append("Fewer than 2 shared examples: no interval.")
    slices, n_searched, n_small, conditions = slice_table(tables, binary, level, fdr, min_slice)
    row = overall.iloc[0]
    verdict = _verdict(row["ci_low"], row["ci_high"], margin, bool((slices["direction"] == "worse").any()))
    sentence = _sentence(base, new, metric == "correct", row, level, margin, fdr, verdict, slices, n_searched,
                         n_small, min_slice)
    return Comparison(base=base, new=new, metric=metric, level=level, margin=float(margin), fdr=float(fdr),
                      seed=int(seed), min_slice=int(min_slice), overall=overall, slices=slices,
                      n_searched=n_searched, n_skipped_small=n_small, verdict=verdict, sentence=sentence,
                      pairs=pairs_table(total, binary), cells=CELLS if binary else SCORE_CELLS, by=by,
                      pairs_of_slices=bool(pairs_of_slices), notes=tuple(notes),
                      too_many_values=tuple(too_many.items()), _log=lg, _paired=j,
                      _conditions=conditions, _text=text_frame, _cell_counts=cell_counts(total))


def _check_settings(level, margin, fdr, min_slice) -> None:
    if not 0 < level < 1:
        raise EvalDataError(f"The level must lie between 0 and 1 (e.g. 0.95); got {level!r}.")
    if not 0 < fdr < 1:
        raise EvalDataError(f"The false discovery rate must lie between 0 and 1 (e.g. 0.1); got {fdr!r}.")
    if not margin >= 0:
        raise EvalDataError(f"The margin must be 0 or more (in the metric's units, e.g. 0.01 for 1 point); "
                            f"got {margin!r}.")
    if int(min_slice) < 1:
        raise EvalDataError(f"The minimum slice size must be at least 1; got {min_slice!r}.")


def _log_with(data, by: tuple[str, ...]) -> LazyLog:
    """``data`` as a LazyLog (:func:`as_log`) that also carries the ``by`` columns of a frame in memory (the
    frame's LazyLog registers only the roles: the other columns are added here the same way, numbers as float64
    with NaN missing, others as text)."""
    lg = as_log(data)
    frame = lg.frame
    extra = [c for c in by if c not in lg.table.columns and frame is not None and c in frame.columns]
    if not extra:
        return lg
    roles = [c for c in (*TEXT_ROLES, *VALUE_ROLES, "n_repeats") if c in lg.table.columns and c in frame.columns]
    arrow = pa.Table.from_pandas(frame[roles + extra], preserve_index=False)
    con = duckdb_connection()
    name = f"evalcore_compare_{next(_names)}"
    con.con.register(name, arrow)
    raw = con.table(name)
    columns = {c: raw[c].cast("string") for c in roles if c in TEXT_ROLES}
    columns |= {c: missing_nan(raw[c].cast("float64")) for c in roles if c not in TEXT_ROLES}
    for c in extra:
        numeric = pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c])
        columns[c] = missing_nan(raw[c].cast("float64")) if numeric else raw[c].cast("string")
    return replace(lg, table=raw.select(**columns), _cache={})


def _verdict(low, high, margin: float, worse_slice: bool) -> str:
    low, high = float(low), float(high)
    if high < -margin or worse_slice:
        return "regression"
    if low > 0:
        return "improvement"
    if margin > 0 and low >= -margin and high <= margin:
        return "no difference"
    return "inconclusive"


def _sentence(base, new, points: bool, row, level, margin, fdr, verdict, slices, n_searched, n_small,
              min_slice) -> str:
    """One sentence with the numbers (differences in points, i.e. x 100, for a 0/1 metric)."""
    unit = " points" if points else ""

    def fmt(v):
        return number(100 * v if points else v)

    d, n = float(row["difference"]), int(row["n"])
    if d < 0:
        head = f"{new} is worse than {base} by {fmt(-d)}{unit}"
    elif d > 0:
        head = f"{new} is better than {base} by {fmt(d)}{unit}"
    else:
        head = f"{new} scores the same as {base}"
    examples = f"{count(n)} shared example{'' if n == 1 else 's'}"
    if np.isfinite(row["ci_low"]) and np.isfinite(row["ci_high"]):
        head += f" ({percent(level)} interval {fmt(row['ci_low'])} to {fmt(row['ci_high'])}{unit}, {examples})"
    else:
        head += f" (no interval from {examples})"
    flagged = slices[slices["flagged"]]
    worse_overall = float(row["ci_high"]) < -margin
    what = {"regression": "a regression" if worse_overall or flagged.empty else "a regression (in a flagged slice)",
            "improvement": "an improvement",
            "no difference": f"no difference beyond the margin of {fmt(margin)}{unit}",
            "inconclusive": "inconclusive"}[verdict]
    rate = f"at a {percent(fdr)} false discovery rate"
    if n_searched == 0 and n_small == 0:
        tail = "no slice was searched (the shared examples hold one task, category and group)."
    elif n_searched == 0:
        tail = f"no slice has the {count(min_slice)} shared examples needed to be searched."
    elif flagged.empty:
        tail = f"none of the {count(n_searched)} slices searched is flagged {rate}."
    else:
        k = len(flagged)
        worse = flagged.iloc[0]["difference"] < 0  # slices are sorted worst first
        named, label = (flagged.iloc[0], "worst") if worse else (flagged.iloc[-1], "largest gain")
        tail = (f"{k} of {count(n_searched)} slices searched {'is' if k == 1 else 'are'} flagged {rate} "
                f"({label}: {named['slice']}, {fmt(named['difference'])}{unit}).")
    return f"{head}: {what}; {tail}"


def _with_text(out: pd.DataFrame, rows: pd.DataFrame | None, text: list[str], base: str, new: str) -> pd.DataFrame:
    """``out`` with the :data:`TEXT_COLUMNS` of the log's ``text`` roles (present, missing where absent, also
    when ``out`` is empty): input and target from the base run's row (the new run's where the base's is missing),
    output and explanation of each run; the first sample's value with one (repeats)."""
    out = out.copy()
    keys = pd.MultiIndex.from_arrays([out["task"].astype(str), out["example_id"].astype(str)])
    empty = pd.DataFrame(index=keys, columns=text, dtype=object)
    if rows is None or rows.empty:
        b = n = empty
    else:
        rows = rows.astype({"model": str, "task": str, "example_id": str})
        first = rows.groupby(["model", "task", "example_id"], sort=False)[text].first()
        models = set(first.index.get_level_values("model"))

        def side(model):
            return first.xs(model, level="model").reindex(keys) if model in models else empty

        b, n = side(base), side(new)
    for role in ("input", "target"):
        if role in text:
            out[role] = b[role].where(b[role].notna(), n[role]).to_numpy()
    for role in ("output", "explanation"):
        if role in text:
            out[f"base_{role}"] = b[role].to_numpy()
            out[f"new_{role}"] = n[role].to_numpy()
    return out[[*EXAMPLE_COLUMNS, *[c for c in TEXT_COLUMNS if c in out.columns]]]
