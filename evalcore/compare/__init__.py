"""Compare two runs example by example (issue 28): is the new model better, where, and on which examples.

``compare_runs(log, base, new)`` -> :class:`Comparison` (:mod:`.result`); paired differences, intervals and tests
(:mod:`.paired`); the slice search with Benjamini-Hochberg and empirical Bayes (:mod:`.slices`); two logs of one
model as runs named after their files (:mod:`.runs`). Never imports streamlit.
"""

from evalcore.compare.paired import BINARY_METHOD, CELLS, SCORE_CELLS, T_METHOD, VERDICTS
from evalcore.compare.result import Comparison, compare_runs
from evalcore.compare.runs import run_name, runs_from_logs, scan_runs

__all__ = ["BINARY_METHOD", "CELLS", "SCORE_CELLS", "T_METHOD", "VERDICTS", "Comparison", "compare_runs",
           "run_name", "runs_from_logs", "scan_runs"]
