"""``evalcore compare --series NAME NEW``: a new log against a series' baseline run, for CI gates.

The baseline is the series' pinned run, else its latest run (:meth:`evalcore.workspace.Workspace.series_runs`,
oldest first); the model followed is the one most of its runs hold (:func:`evalcore.history.load.series_model`).
The two become one log of two runs, named after the baseline's dataset and the new file
(:func:`evalcore.compare.runs_from_logs`), compared as ``evalcore compare BASE NEW`` compares two files."""

from __future__ import annotations

import argparse
from pathlib import Path

from evalcore.errors import EvalDataError


def series_comparison(args: argparse.Namespace, new_log):
    """(log, base, new, info): the combined log of the baseline and ``new_log`` (the loaded NEW file), the run
    names, and what the outputs say of the series (name, baseline run and dataset, model)."""
    from evalcore.cli import workspace_folder
    from evalcore.compare.runs import run_name, runs_from_logs
    from evalcore.history.load import series_model
    from evalcore.workspace import Workspace

    if not hasattr(new_log, "attrs"):
        raise EvalDataError(f"{args.logs[0].name}: this log is read in the engine; comparing it with a series "
                            "needs it in memory: use --engine never.")
    workspace = Workspace(workspace_folder(args.workspace))
    entries = workspace.series_runs(args.series)
    if not entries:
        known = ", ".join(name for name, _, _ in workspace.series()[:10]) or "none yet"
        raise EvalDataError(f"No series named {args.series!r} in {workspace.root} (series: {known}). Add runs with "
                            "evalcore workspace add LOG --name NAME --series SERIES.")
    pinned = workspace.series_baseline(args.series)
    baseline = next((e for e in entries if e.dataset_id == pinned), entries[-1])
    model = series_model(entries)
    frame = workspace.dataset(baseline.dataset_id)
    rows = frame[frame["model"].astype(str) == model]
    rows.attrs = frame.attrs
    new_models = set(map(str, new_log["model"].unique()))
    if model in new_models:
        new_rows = new_log[new_log["model"].astype(str) == model]
        new_rows.attrs = new_log.attrs
    elif len(new_models) == 1:
        new_rows = new_log
    else:
        raise EvalDataError(f"{args.logs[0].name}: holds the models {', '.join(sorted(new_models)[:6])}, none of them "
                            f"{model!r}, the model of the series {args.series!r}: give a log of that model.")
    combined = runs_from_logs([(baseline.name, rows), (run_name(Path(args.logs[0]).name), new_rows)], named=True)
    base, new = list(dict.fromkeys(combined["model"].astype(str)))
    info = {"name": args.series, "baseline": base, "baseline_dataset": baseline.dataset_id,
            "baseline_time": baseline.run_time, "pinned": pinned is not None, "model": model}
    return combined, base, new, info
