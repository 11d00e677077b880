"""Cached computations of the History page, keyed by the series and the ids of its runs (a saved dataset never
changes, so the ids name the content): the runs read from the workspace, the trend (from the counts kept when each
run was saved, :func:`evalcore.history.stored_trend`), the changes against the baselines and one run's full
comparison (:func:`evalcore.compare.compare_runs`)."""

from __future__ import annotations

import pandas as pd

from evalcore.compare import Comparison, compare_runs
from evalcore.compare.runs import runs_from_logs
from evalcore.history import Run, series_changes, stored_trend, trend
from evalcore.history.load import Series, read_series

from .store import cached


@cached("Reading the series' runs...")
def series(name: str, runs: tuple[str, ...], viewer: str | None, _workspace) -> Series:
    """The series ``name`` whose runs are the datasets ``runs`` (read for ``viewer``)."""
    return read_series(_workspace, name, viewer)


@cached("Drawing the series' trend...")
def series_trend(name: str, runs: tuple[str, ...], level: float, task: str | None, _series: Series) -> pd.DataFrame:
    """Each run's overall number (or its number on ``task``) with its ``level`` interval, from the counts kept at
    save time; a run without usable counts (a score, repeated samples) from its rows."""
    stored, missing = stored_trend([(r.name, r.time, e.summary) for r, e in zip(_series.runs, _series.entries)],
                                   _series.model, level, task)
    if not missing:
        return stored
    metric = _series.metric
    chosen = [r for r in _series.runs if r.name in missing]
    if task is not None:
        chosen = [Run(r.name, r.time, r.rows[r.rows["task"].astype(str) == task]) for r in chosen]
    computed = trend(chosen, metric, level)
    order = {r.name: i for i, r in enumerate(_series.runs)}
    both = pd.concat([stored, computed], ignore_index=True)
    return both.iloc[both["run"].map(order).argsort(kind="stable")].reset_index(drop=True)


@cached("Comparing each run with its baseline...")
def changes(name: str, runs: tuple[str, ...], metric: str, baseline: str | tuple, level: float, fdr: float,
            slices: bool, _series: Series) -> pd.DataFrame:
    """:func:`evalcore.history.series_changes` of the series against ``baseline``: a pinned run, or each run's
    baseline (part of the key: accepting a run changes them)."""
    return series_changes(_series.runs, metric, baseline, level, fdr, slices=slices)


@cached("Comparing the run with its baseline example by example...")
def run_comparison(name: str, runs: tuple[str, ...], run: str, baseline: str, level: float, fdr: float,
                   _series: Series) -> Comparison:
    """The Compare page's comparison of ``run`` against ``baseline`` (two runs of the series)."""
    rows = {r.name: r.rows for r in _series.runs}
    log = runs_from_logs([(baseline, rows[baseline]), (run, rows[run])], named=True)
    base, new = list(dict.fromkeys(log["model"].astype(str)))
    return compare_runs(log, base, new, level=level, fdr=fdr)
