"""The one exception evalcore raises for a problem with the user's data, and how its messages list things."""

from __future__ import annotations


class EvalDataError(ValueError):
    """A problem with the user's data, phrased so that a person can fix it."""


def listed(items, limit: int = 5, fmt=str) -> str:
    """``'a, b, c and 7 more'``: the first ``limit`` of ``items`` (a sized, sliceable sequence), each shown by
    ``fmt``, for an error message."""
    shown = ", ".join(fmt(item) for item in list(items[:limit]))
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")
