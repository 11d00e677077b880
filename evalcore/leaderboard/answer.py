"""The Leaderboard's answer, in one sentence: who leads, by how much, and from how many models the data tell the
leader apart.

:func:`lead_answer` extends :func:`evalcore.stats.headline.lead_sentence` (the leader, its estimate and interval, the
models whose estimate lies inside that interval) with the count of models whose simultaneous interval of the
difference with the leader excludes 0 (:func:`evalcore.leaderboard.bootstrap.pairwise_differences`, all pairs at
once). Names are returned as they are: the caller escapes them for its renderer.
"""

from __future__ import annotations

import pandas as pd

from evalcore.stats.figures import percent
from evalcore.stats.headline import lead_sentence


def leader(overall: pd.DataFrame, name: str = "model") -> str | None:
    """The model with the highest estimate (the first in table order among ties), None when none has one."""
    rows = overall.dropna(subset=["estimate"])
    if rows.empty:
        return None
    return str(rows.sort_values("estimate", ascending=False, kind="stable").iloc[0][name])


def separated(differences: pd.DataFrame, model: str) -> tuple[int, int]:
    """(models told apart from ``model``, models compared with it): pairs of ``differences`` (model_a, model_b,
    ci_low, ci_high) holding ``model`` whose interval excludes 0."""
    mine = differences[(differences["model_a"] == model) | (differences["model_b"] == model)]
    apart = (mine["ci_low"] > 0) | (mine["ci_high"] < 0)
    return int(apart.sum()), len(mine)


def lead_answer(overall: pd.DataFrame, level: float, differences: pd.DataFrame | None = None,
                what: str = "overall accuracy") -> str:
    """One sentence: the leader of ``overall`` (model, estimate, ci_low, ci_high) with its ``level`` interval, the
    models within that interval and, given the all-pairs simultaneous ``differences`` at the same level, how many
    models they tell apart from the leader. E.g. "a leads on overall accuracy at 0.850 (95% interval 0.793–0.903);
    1 other model is within its interval; the simultaneous 95% intervals of all pairwise differences tell it apart
    from 1 of the 2 others."
    """
    sentence = lead_sentence(overall, level, what)
    top = leader(overall)
    if differences is None or top is None or overall["estimate"].notna().sum() < 2:
        return sentence
    apart, compared = separated(differences, top)
    if compared == 0:
        return sentence
    pct = percent(level)
    if compared == 1:
        tail = (f"the simultaneous {pct} interval of their difference "
                + ("excludes 0: the data tell the two apart" if apart else
                   "includes 0: the data do not tell the two apart"))
    else:
        told = (f"all {compared} others" if apart == compared else
                f"{'none' if apart == 0 else apart} of the {compared} others")
        tail = f"the simultaneous {pct} intervals of all pairwise differences tell it apart from {told}"
    return f"{sentence.rstrip('.')}; {tail}."
