"""A series as its runs (:class:`evalcore.history.Run`), read from a workspace: the edge between the workspace's
catalog and the history methods. Runs are named after their datasets (made unique as
:func:`evalcore.compare.runs.unique_names` does), oldest first; the model followed is the one given, else the one
most runs hold (ties: by name)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from evalcore.compare.runs import unique_names
from evalcore.errors import EvalDataError
from evalcore.history.changes import Run
from evalcore.workspace.workspace import SeriesRun, Workspace


@dataclass(frozen=True)
class Series:
    """A series read for a viewer: its ``runs`` (oldest first), their catalog entries, the model followed and the
    pinned baseline's run name (None: each run against the previous one)."""
    name: str
    model: str
    runs: list[Run]
    entries: list[SeriesRun]
    baseline: str | None


def series_model(entries: list[SeriesRun], model: str | None = None) -> str:
    """The model a series follows (module docstring)."""
    counts = Counter(m for e in entries for m in e.summary.get("models", []))
    if model is not None:
        if model not in counts:
            raise EvalDataError(f"No run of the series holds the model {model!r}; its models: "
                                f"{', '.join(sorted(counts)[:10])}.")
        return model
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]


def read_series(workspace: Workspace, name: str, viewer: str | None = None, model: str | None = None,
                columns: list[str] | None = None) -> Series:
    """The runs of series ``name`` that ``viewer`` may see, with the rows of the model followed (``columns`` of
    them, default all). EvalDataError when the series has no run ``viewer`` may see."""
    entries = workspace.series_runs(name, viewer)
    if not entries:
        known = ", ".join(s for s, _, _ in workspace.series(viewer)[:10]) or "none yet"
        raise EvalDataError(f"No series named {name!r} in {workspace.root} (series: {known}). Add runs with "
                            "evalcore workspace add LOG --name NAME --series SERIES.")
    model = series_model(entries, model)
    names = unique_names([e.name for e in entries])
    runs = []
    for entry, run in zip(entries, names):
        frame = workspace.dataset(entry.dataset_id, viewer)
        rows = frame[frame["model"].astype(str) == model]
        runs.append(Run(run, entry.run_time, rows[columns] if columns else rows))
    pinned = workspace.series_baseline(name)
    baseline = next((run for entry, run in zip(entries, names) if entry.dataset_id == pinned), None)
    return Series(name, model, runs, entries, baseline)
