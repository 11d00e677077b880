"""Building blocks every method shares: binomial intervals and the default level (:mod:`.intervals`), per-cell
means with intervals (:mod:`.summaries`), each model's overall number, defined once (:mod:`.overall`), the seeded
parallel map of Monte Carlo studies (:mod:`.parallel`) and the common figure style and estimate-with-interval dot
plots (:mod:`.figures`).
"""

from .intervals import (DEFAULT_LEVEL, wilson_interval, binomial_variance)
from .summaries import (mean_table, summary_from_log)
from .overall import overall_table

__all__ = ['DEFAULT_LEVEL', 'binomial_variance', 'mean_table', 'overall_table', 'summary_from_log', 'wilson_interval']
