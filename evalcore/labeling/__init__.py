"""Labeling campaigns: the queue a design draws (:mod:`.queue`), the live estimate and its stop rule
(:mod:`.estimate`), agreement between annotators and with an AI judge (:mod:`.agreement`), and the campaign itself,
stored in a workspace's catalog (:mod:`.campaign`)."""

from evalcore.labeling.estimate import LiveEstimate, live_estimate
from evalcore.labeling.queue import DESIGNS, QueuePlan, plan_queue

__all__ = ["DESIGNS", "LiveEstimate", "QueuePlan", "live_estimate", "plan_queue"]
