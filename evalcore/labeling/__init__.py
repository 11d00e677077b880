"""Labeling campaigns: the designs (:mod:`.designs`) and the queue a design draws (:mod:`.queue`), the live estimate
and its stop rule (:mod:`.estimate`), agreement between annotators and with an AI judge (:mod:`.agreement`), and the
campaign itself, stored in a workspace's catalog (:mod:`.campaign`; over several models, :mod:`.comparison`).

The names below are imported on first use (PEP 562), so that the command line's help, which needs only
:data:`.designs.DESIGNS`, does not import the estimators' libraries.
"""

from evalcore.lazy import exports

#: name -> the submodule that defines it
_EXPORTS = {"Campaign": "campaign", "ComparisonCampaign": "comparison", "DESIGNS": "designs",
            "LiveEstimate": "estimate", "live_estimate": "estimate", "QueuePlan": "queue", "plan_queue": "queue"}

__all__ = sorted(_EXPORTS)

__getattr__ = exports(__name__, _EXPORTS)
