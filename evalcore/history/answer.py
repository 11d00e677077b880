"""The History page's answer in one sentence: the latest run's number with its interval, and what changed last and
since when (the most recent run with a flagged change, its largest flagged change against its baseline)."""

from __future__ import annotations

import pandas as pd

from evalcore.stats.figures import percent
from evalcore.stats.headline import count, interval, number


def _day(time: str) -> str:
    return str(time)[:10]


def _change(row, points: bool) -> str:
    size = number(abs(row["difference"]) * (100 if points else 1)) + (" points" if points else "")
    where = "overall" if row["slice"] == "overall" else f"on {row['slice']}"
    return (f"{'worse' if row['difference'] < 0 else 'better'} by {size} {where} against {row['baseline']} "
            f"({row['method']})")


def history_sentence(model: str, trend: pd.DataFrame, changes: pd.DataFrame, level: float, fdr: float,
                     what: str = "accuracy") -> str:
    """E.g. "bot's accuracy in the latest of 6 runs, run5 (2026-11-15), is 0.666 (95% interval 0.645–0.686); the
    last change flagged came with it: worse by 18.0 points on group=g1 against run4 (paired)." Names stay plain
    text (the caller escapes them)."""
    if trend.empty:
        return f"No run of the series holds a labeled {what} for {model}."
    last = trend.iloc[-1]
    head = (f"{model}'s {what} in the latest of {count(len(trend))} runs, {last['run']} ({_day(last['time'])}), is "
            f"{interval(last['estimate'], last['ci_low'], last['ci_high'])} at {percent(level)}")
    flagged = changes[changes["flagged"].astype(bool)] if len(changes) else changes
    if flagged.empty:
        compared = changes["run"].nunique() if len(changes) else 0
        return (f"{head}; no change is flagged over the {count(compared)} comparisons and {count(len(changes))} "
                f"run-and-slice tests, at a {percent(fdr)} false discovery rate.")
    order = list(trend["run"])
    latest_run = max(flagged["run"], key=lambda r: order.index(r) if r in order else -1)
    rows = flagged[flagged["run"] == latest_run]
    biggest = rows.iloc[rows["difference"].abs().to_numpy().argmax()]
    points = what == "accuracy"
    since = len(order) - 1 - order.index(latest_run) if latest_run in order else 0
    when = ("came with it" if since == 0 else
            f"came {count(since)} run{'s' if since > 1 else ''} ago, with {latest_run} ({_day(biggest['time'])})")
    more = f" and {count(len(rows) - 1)} more change{'s' if len(rows) > 2 else ''}" if len(rows) > 1 else ""
    return (f"{head}; the last change flagged {when}: {_change(biggest, points)}{more} "
            f"({percent(fdr)} false discovery rate over all runs and slices).")


def drift(comparison, reference_time: str) -> tuple[str, str]:
    """The drift of a series: its latest run against its reference (``comparison``, of the reference as base and the
    latest run as new, :func:`evalcore.compare.compare_runs`), as a sentence and as the chart's short label, e.g.
    ("Since its reference run0 (2026-11-10), run9 moved by -4.5 points (95% interval -5.6 to -3.4 points, 12,000
    shared examples): a regression. With 12,000 shared examples ...", "run9 − run0: -4.5 points (-5.6 to -3.4)").
    Names stay plain text (the caller escapes them)."""
    row = comparison.overall.iloc[0]
    points = comparison.metric == "correct"
    scale, unit = (100, " points") if points else (1, "")

    def fmt(value):
        return f"{scale * float(value):+.1f}" if points else f"{float(value):+.3g}"

    interval = f"{fmt(row['ci_low'])} to {fmt(row['ci_high'])}{unit}"
    sentence = (f"Since its reference {comparison.base} ({_day(reference_time)}), {comparison.new} moved by "
                f"{fmt(row['difference'])}{unit} ({percent(comparison.level)} interval {interval}, "
                f"{count(int(row['n']))} shared examples): {comparison.verdict}. {comparison.detectable_sentence()}")
    label = f"{comparison.new} − {comparison.base}: {fmt(row['difference'])}{unit} ({interval})"
    return sentence, label
