"""What a series keeps of each run when it is saved, so that the History page draws the trend without reading the
runs again: per (model, task) the labeled examples ``n`` and right answers ``n_correct`` of a 0/1 metric, from which
:func:`evalcore.stats.overall.overall_table` gives the same overall number and interval as from the rows (Wilson
per task, the normal interval of the mean over tasks joined with Wilson's). A run whose numbers cannot be read off
such counts (a score metric, repeated samples weighted by Kish's effective n) keeps ``exact: false`` and its trend
point is computed from its rows."""

from __future__ import annotations

import pandas as pd

from evalcore.data.repeats import has_repeats
from evalcore.stats.overall import overall_table

TREND_COLUMNS = ["run", "time", "n_tasks", "n", "estimate", "ci_low", "ci_high"]


def run_summary(frame: pd.DataFrame) -> dict:
    """The JSON-able summary of a validated per-example log (module docstring)."""
    metric = "correct" if "correct" in frame and frame["correct"].notna().any() else "score"
    exact = metric == "correct" and not has_repeats(frame) and "correct" in frame
    cells = []
    if exact:
        labeled = frame[frame["correct"].notna()]
        grouped = labeled.groupby(["model", "task"], observed=True)["correct"].agg(["size", "sum"]).reset_index()
        cells = [{"model": str(r.model), "task": str(r.task), "n": int(r.size), "n_correct": int(r.sum)}
                 for r in grouped.itertuples()]
    return {"metric": metric, "exact": exact, "models": sorted(map(str, frame["model"].unique())), "cells": cells}


def trend_point(run: str, time: str, summary: dict, model: str, level: float) -> dict | None:
    """The run's overall number for ``model`` from its stored counts; None when they cannot give it (no counts of
    that model, or ``exact`` false: then compute it from the rows)."""
    cells = pd.DataFrame([c for c in summary.get("cells", []) if c["model"] == model])
    if not summary.get("exact") or cells.empty:
        return None
    table = overall_table(cells.assign(model=run), alpha=1 - level, summary=True)
    return {"run": run, "time": time, **table.iloc[0][TREND_COLUMNS[2:]].to_dict()}
