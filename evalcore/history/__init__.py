"""Series of runs: what is kept of each run when it is saved (:mod:`.summary`), how the runs changed, each
against its baseline, with the false discovery rate controlled over runs and slices together (:mod:`.changes`), the
drift of the latest run from the series' reference (:func:`drift`), and the gate of a new run against an accepted
baseline and the reference (:mod:`.gate`, imported on its own: it reads a workspace)."""

from evalcore.history.answer import drift, history_sentence
from evalcore.history.changes import COLUMNS, Run, series_changes, trend
from evalcore.history.summary import run_summary, stored_trend

__all__ = ["COLUMNS", "Run", "drift", "history_sentence", "run_summary", "series_changes", "stored_trend", "trend"]
