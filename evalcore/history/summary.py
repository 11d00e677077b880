"""What a series keeps of each run when it is saved, so that the History page draws the trend without reading the
runs again: per (model, task) the labeled examples ``n`` and right answers ``n_correct`` of a 0/1 metric, from which
:func:`evalcore.stats.overall.overall_table` gives the same overall number and interval as from the rows (Wilson
per task, the normal interval of the mean over tasks joined with Wilson's). A run whose numbers cannot be read off
such counts (a score metric, repeated samples weighted by Kish's effective n) keeps ``exact: false`` and its trend
point is computed from its rows."""

from __future__ import annotations

import pandas as pd

from evalcore.stats.overall import overall_table

TREND_COLUMNS = ["run", "time", "n_tasks", "n", "estimate", "ci_low", "ci_high"]


def run_summary(log) -> dict:
    """The JSON-able summary of a per-example log (module docstring): a validated frame or a log in the engine
    (:func:`evalcore.engine.as_log`), its counts reduced where it lives, so a run too large for memory is summarised
    without being loaded."""
    from evalcore.engine import as_log
    from evalcore.engine.reductions import cell_moments

    log = as_log(log)
    metric = "correct" if "correct" in log and log.count("correct") else "score"
    exact = metric == "correct" and "n_repeats" not in log.table.columns
    cells = []
    if exact:
        moments = cell_moments(log, ["model", "task"], "correct")
        cells = [{"model": str(r.model), "task": str(r.task), "n": int(r.n), "n_correct": int(round(r.total))}
                 for r in moments[moments["n"] > 0].itertuples()]
    return {"metric": metric, "exact": exact, "models": sorted(map(str, log.models())), "cells": cells}


def stored_trend(runs: list[tuple[str, str, dict]], model: str, level: float,
                 task: str | None = None) -> tuple[pd.DataFrame, list[str]]:
    """The overall number of ``model`` in each (run name, time, summary) of ``runs`` from the stored counts, in one
    :func:`~evalcore.stats.overall.overall_table` over all of them (:data:`TREND_COLUMNS`, in the order of
    ``runs``), and the names of the runs whose counts cannot give it (compute those from their rows). ``task``: its
    accuracy on that task alone (Wilson's interval), the trend of a slice."""
    cells, missing, times = [], [], {}
    for name, time, summary in runs:
        mine = [c for c in summary.get("cells", []) if c["model"] == model and (task is None or c["task"] == task)]
        if summary.get("exact") and mine:
            cells.extend({**c, "model": name} for c in mine)
            times[name] = time
        else:
            missing.append(name)
    if not cells:
        return pd.DataFrame(columns=TREND_COLUMNS), missing
    table = overall_table(pd.DataFrame(cells), alpha=1 - level, summary=True).set_index("model")
    order = [name for name, _, _ in runs if name in table.index]
    out = table.loc[order, TREND_COLUMNS[2:]].rename_axis("run").reset_index()
    out.insert(1, "time", [times[name] for name in order])
    return out[TREND_COLUMNS], missing
