"""Numbers told plainly: one formatting rule per kind of number and the one-sentence answers pages open with.

Kinds: a count is an integer with thousands separators ("3,480"); an estimate, a bound, a difference or a
probability has 3 significant digits ("0.716", "0.0312", "12.3"); an interval is "low–high" after its estimate
("0.716 (0.709–0.725)"). Pages, the report and the CLI format through these functions, so a number reads the same
everywhere.
"""

from __future__ import annotations

import math

import pandas as pd

from evalcore.stats.figures import percent

DASH = "\u2013"  # en dash between an interval's bounds


def count(value) -> str:
    """A count as an integer with thousands separators: 3480.0 -> '3,480'."""
    return f"{int(round(float(value))):,}"


def number(value, digits: int = 3) -> str:
    """An estimate to ``digits`` significant digits, zeros kept ('0.700', '0.0312', '12.3', '1,230'); 'n/a' when
    missing."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or pd.isna(value):
        return "n/a"
    x = float(value)
    if abs(x) >= 10 ** digits:
        return count(x)
    return f"{x:#.{digits}g}".rstrip(".")


def interval(estimate, low, high) -> str:
    """'0.716 (0.709–0.725)'."""
    return f"{number(estimate)} ({number(low)}{DASH}{number(high)})"


def lead_sentence(table: pd.DataFrame, level: float, what: str = "accuracy", name: str = "model",
                  higher_is_better: bool = True) -> str:
    """The answer a ranking opens with: who leads, at what estimate and interval, and how many others are within
    the leader's interval (their estimate lies inside it, so the data do not separate them from the leader).

    ``table`` has columns ``name``, estimate, ci_low, ci_high (any order). Example:
    "gemini leads on accuracy at 0.716 (95% interval 0.709–0.725); 2 other models are within its interval."
    Names are returned as they are: the caller escapes them for its renderer."""
    rows = table.dropna(subset=["estimate"])
    if rows.empty:
        return f"No {what} can be estimated from the selection."
    rows = rows.sort_values("estimate", ascending=not higher_is_better, kind="stable")
    top = rows.iloc[0]
    span = f"{number(top['estimate'])} ({percent(level)} interval {number(top['ci_low'])}{DASH}{number(top['ci_high'])})"
    if len(rows) == 1:
        return f"{top[name]}: {what} {span}."
    others = rows.iloc[1:]
    close = int(((others["estimate"] >= top["ci_low"]) & (others["estimate"] <= top["ci_high"])).sum())
    verb = "leads" if higher_is_better else "is lowest"
    tail = ("no other is within its interval" if close == 0 else
            f"{close} other {_plural(close, name)} {'is' if close == 1 else 'are'} within its interval")
    return f"{top[name]} {verb} on {what} at {span}; {tail}."


def _plural(k: int, noun: str) -> str:
    return noun if k == 1 else noun + "s"


def beside_overall(model: str, pooled: str, overall: pd.DataFrame, level: float, what: str = "accuracy") -> str:
    """What a number pooled some other way is, said beside it, with ``model``'s overall number from ``overall``
    (:func:`evalcore.stats.overall.overall_table`, the mean over tasks) when that differs in kind: "This accuracy
    is pooled over the 4,000 examples; atlas-l's overall accuracy (Models, Leaderboard, report) is the mean over 3
    tasks, 0.788 (95% interval 0.771–0.804)." Empty when ``overall`` has no row for ``model`` or the model has one
    task (then the two are the same estimand)."""
    row = overall[overall["model"].astype(str) == str(model)]
    if row.empty or int(row["n_tasks"].iloc[0]) < 2:
        return ""
    r = row.iloc[0]
    return (f"This {what} is {pooled}; {model}'s overall {what} (Models, Leaderboard, report) is the mean over "
            f"{count(r['n_tasks'])} tasks, {interval(r['estimate'], r['ci_low'], r['ci_high'])} at "
            f"{percent(level)}.")
