"""Each model's overall number for the pages, cached by data digest + selection: the one computation
(:func:`evalcore.stats.overall.overall_table`, the mean over tasks with its normal/Wilson interval) behind the
Models page, the Leaderboard's overall scores, the Subgroups page's reference line and the model that every page
picking one model opens on (the selection's leader, the model the report's sections are about)."""

from __future__ import annotations

import pandas as pd

from evalcore.stats.overall import DEFAULT, overall_table

from .store import cached


@cached("Scoring each model overall...")
def overall(key: tuple, metric: str, level: float, _rows, over: str = DEFAULT, summary: bool = False) -> pd.DataFrame:
    """Each model's overall ``metric`` with its ``level`` interval, best first (``over``: "tasks" or "examples";
    ``summary``: the rows are a leaderboard summary)."""
    return overall_table(_rows, metric, 1 - level, over, summary=summary)


def leader(key: tuple, metric: str, level: float, rows, among, summary: bool = False):
    """The model of ``among`` with the best overall number (the mean over tasks); the first of ``among`` when none
    of them has one."""
    named = {str(m): m for m in among}
    scored = [str(m) for m in overall(key, metric, level, rows, summary=summary)["model"]]
    return named[next((m for m in scored if m in named), next(iter(named)))]
