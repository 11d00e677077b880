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
    "input",       # text: the prompt or question as the model saw it
    "target",      # text: the reference answer(s)
    "output",      # text: the model's answer
    "explanation", # text: a scorer's or judge's reasoning
    "options",     # text: a multiple-choice example's options (a list, or option columns A, B, C ...)
    "image",       # text: the example's image file (under EVALCORE_MEDIA_DIR or in the dataset's zip of images)
)
LOG_VALUE_ROLES = ("correct", "score", "confidence", "proxy")
LOG_LABEL_ROLES = ("model", "example_id", "task", "category", "group")
#: Optional text of an example: shown to people (literally), never needed by a method; each value is cut at
#: ``ReadLimits.max_text_value_bytes`` and all of them together bounded by ``ReadLimits.max_text_bytes``. The options
#: are read by :mod:`evalcore.data.options`, the image's path by :mod:`evalcore.data.media` (the Label page).
EXAMPLE_TEXT_ROLES = ("input", "target", "output", "explanation", "options", "image")

#: Leaderboard summary roles: counts per (model, task); ``accuracy`` may replace ``n_correct``; ``se`` is the
#: tool's own standard error of the accuracy (e.g. AlpacaEval's length-controlled win rate's), used when given.
SUMMARY_ROLES = ("model", "task", "category", "n", "n_correct", "accuracy", "se")

#: Pairwise battles: ``outcome`` is 1 if model_b wins, 0 if model_a wins, 0.5 a tie (missing when no human vote),
#: ``judge`` an AI judge's probability (or verdict) that model_b wins; ``input`` the prompt, ``explanation`` the
#: judge's reasoning (text).
BATTLE_ROLES = ("model_a", "model_b", "outcome", "judge", "input", "explanation")

ROLES = {LOG: LOG_ROLES, SUMMARY: SUMMARY_ROLES, BATTLES: BATTLE_ROLES}

#: Defaults filled in when a log has no such column (reported to the user).
LOG_DEFAULT_LABELS = {"task": "all", "category": "all", "group": "all"}
