"""Series of runs: what is kept of each run when it is saved (:mod:`.summary`) and how the runs changed, each
against its baseline, with the false discovery rate controlled over runs and slices together (:mod:`.changes`)."""

from evalcore.history.answer import history_sentence
from evalcore.history.changes import COLUMNS, Run, series_changes, trend
from evalcore.history.summary import run_summary, stored_trend

__all__ = ["COLUMNS", "Run", "history_sentence", "run_summary", "series_changes", "stored_trend", "trend"]
