"""Building blocks every method shares: binomial intervals (:mod:`.intervals`), per-cell means with intervals
(:mod:`.summaries`), the seeded parallel map of Monte Carlo studies (:mod:`.parallel`) and the common figure style
and estimate-with-interval dot plots (:mod:`.figures`).
"""

from .intervals import (wilson_interval, binomial_variance)
from .summaries import (mean_table, summary_from_log)

__all__ = ['binomial_variance', 'mean_table', 'summary_from_log', 'wilson_interval']
