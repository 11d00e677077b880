"""A series as its runs (:class:`evalcore.history.Run`), read from a workspace: the edge between the workspace's
catalog and the history methods. Runs are named after their datasets (made unique as
:func:`evalcore.compare.runs.unique_names` does), oldest first; the model followed is the one given, else the one
most runs hold (ties: by name); the metric followed is the latest such run's. Runs that cannot be compared with the
others (no rows of the model, or another metric) are left out of the comparisons with a sentence each
(:meth:`Series.comparable`)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace

from evalcore.compare.runs import unique_names
from evalcore.errors import EvalDataError
from evalcore.history.changes import Run
from evalcore.history.gate import baseline_and_reference, holding
from evalcore.workspace.workspace import SeriesRun, Workspace


@dataclass(frozen=True)
class Series:
    """A series read for a viewer: its ``runs`` (oldest first), their catalog entries, the model followed and the
    pinned baseline's run name (None: each run against its gate baseline, :meth:`gate_baselines`), the ``metric``
    followed ("correct" or "score") and, once :meth:`comparable`, why each run it dropped was ``left_out``."""
    name: str
    model: str
    runs: list[Run]
    entries: list[SeriesRun]
    baseline: str | None
    metric: str = "correct"
    left_out: tuple[str, ...] = ()

    def comparable(self) -> "Series":
        """The series with only the runs that can be compared with each other: those with rows of the model
        followed that hold the metric followed (one sentence per run left out in ``left_out``, e.g. "nightly-2
        holds no result of bot (its models: other)"); the pinned baseline stays only if it is one of them."""
        kept, why = [], []
        for run, entry in zip(self.runs, self.entries):
            if run.rows.empty:
                models = ", ".join(entry.summary.get("models", [])[:5]) or "none"
                why.append(f"{run.name} holds no result of {self.model} (its models: {models})")
            elif self.metric not in run.rows or not run.rows[self.metric].notna().any():
                why.append(f"{run.name} records {METRICS.get(entry.summary.get('metric'), 'another metric')}, not "
                           f"{METRICS[self.metric]}")
            else:
                kept.append((run, entry))
        names = [r.name for r, _ in kept]
        return replace(self, runs=[r for r, _ in kept], entries=[e for _, e in kept],
                       baseline=self.baseline if self.baseline in names else None, left_out=tuple(why))


    def gate_baselines(self) -> tuple[str | None, ...]:
        """Each run's baseline as the gate chooses it (:func:`evalcore.history.gate.baseline_and_reference` among the
        runs before it, the pin aside): the latest accepted run before it, never a rejected one or one stamped
        ahead; None where no accepted run comes before (the first run). The History page's changes compare each
        run with it, so that a run the gate failed is not the next run's baseline there either."""
        by_id = {e.dataset_id: r.name for r, e in zip(self.runs, self.entries)}
        out = []
        for i, entry in enumerate(self.entries):
            try:
                base, _ = baseline_and_reference(self.entries[:i], None, entry.digest)
            except EvalDataError:  # no accepted run before this one
                out.append(None)
            else:
                out.append(by_id.get(base.dataset_id))
        return tuple(out)


#: the metrics a run records, as sentences name them
METRICS = {"correct": "0/1 correctness", "score": "a score"}


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
    latest = (holding(entries, model) or entries)[-1]
    return Series(name, model, runs, entries, baseline, latest.summary.get("metric", "correct"))
