"""Building blocks every method shares: binomial intervals and the default level (:mod:`.intervals`, the level
itself in :mod:`.level`), per-cell means with intervals (:mod:`.summaries`), each model's overall number, defined
once (:mod:`.overall`), the seeded parallel map of Monte Carlo studies (:mod:`.parallel`) and the common figure
style and estimate-with-interval dot plots (:mod:`.figures`).

The names below are imported on first use (PEP 562), so that importing one submodule (e.g. :mod:`.level` for the
command line's help) does not import scipy.stats through the others.
"""

from evalcore.lazy import exports

#: name -> the submodule that defines it
_EXPORTS = {"DEFAULT_LEVEL": "level", "wilson_interval": "intervals", "binomial_variance": "intervals",
            "mean_table": "summaries", "summary_from_log": "summaries", "overall_table": "overall"}

__all__ = sorted(_EXPORTS)

__getattr__ = exports(__name__, _EXPORTS)
