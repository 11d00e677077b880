"""Column roles of the three data shapes evalcore understands.

A *log* has one row per (model, example); a *summary* one row per (model, task) with counts;
*battles* one row per pairwise comparison between two models.
"""

from __future__ import annotations

LOG = "log"
SUMMARY = "summary"
BATTLES = "battles"
KINDS = (LOG, SUMMARY, BATTLES)

#: Per-example log roles. ``model`` is required, plus at least one of the value roles.
LOG_ROLES = (
    "model",       # model name (required)
    "example_id",  # identifies the example across models
    "task",        # benchmark task
    "category",    # task category, e.g. natural / specialized / structured
    "group",       # subgroup or topic
    "repeat",      # which of several samples of one (model, example): epoch, attempt, trial (evalcore.data.repeats)
    "correct",     # 0/1 human-labeled correctness; missing = unlabeled
    "score",       # any real-valued per-example metric; missing = unlabeled
    "confidence",  # the model's probability for its own prediction, in [0, 1]
    "proxy",       # an annotator's / surrogate's estimate of the metric
    "weight",      # optional importance weight (> 0)
)
LOG_VALUE_ROLES = ("correct", "score", "confidence", "proxy")
LOG_LABEL_ROLES = ("model", "example_id", "task", "category", "group")

#: Leaderboard summary roles: counts per (model, task); ``accuracy`` may replace ``n_correct``.
SUMMARY_ROLES = ("model", "task", "category", "n", "n_correct", "accuracy")

#: Pairwise battles: ``outcome`` is 1 if model_b wins, 0 if model_a wins, 0.5 a tie (missing when no human vote),
#: ``judge`` an AI judge's probability that model_b wins.
BATTLE_ROLES = ("model_a", "model_b", "outcome", "judge")

ROLES = {LOG: LOG_ROLES, SUMMARY: SUMMARY_ROLES, BATTLES: BATTLE_ROLES}

#: Defaults filled in when a log has no such column (reported to the user).
LOG_DEFAULT_LABELS = {"task": "all", "category": "all", "group": "all"}
