"""The report's Comparison section (issue #28, point 4): NEW against BASE, two models of the log, when the report is
built with ``Settings(base=..., new=...)`` (``evalcore report LOG --base A --new B``).

The numbers are :func:`evalcore.compare.compare_runs`'s (issue #28's contract): the verdict
sentence, the overall paired difference, the 2x2 table of the examples both runs scored, the flagged slices, every
slice searched, and the forest plot of the slices (:func:`evalcore.compare.figures.slice_forest`).
"""

from __future__ import annotations

import pandas as pd

from evalcore.data.schema import LOG
from evalcore.report.sections import Section, Settings
from evalcore.stats.figures import percent

#: columns of the slice tables, in order (those the comparison has)
SLICE_COLUMNS = ("slice", "n", "base", "new", "difference", "ci_low", "ci_high", "p_value", "q_value", "shrunk",
                 "direction", "flagged")


def two_by_two(pairs: pd.DataFrame) -> pd.DataFrame:
    """The 2x2 table of a 0/1 metric from ``Comparison.pairs`` (cells both right, only base right, only new right,
    both wrong): rows base right / base wrong, columns new right / new wrong, and the totals."""
    n = {str(cell): int(k) for cell, k in zip(pairs["cell"], pairs["n"])}
    both, only_base, only_new, neither = (n.get(c, 0) for c in ("both right", "only base right", "only new right",
                                                                "both wrong"))
    return pd.DataFrame({"base": ["right", "wrong", "total"],
                         "new right": [both, only_new, both + only_new],
                         "new wrong": [only_base, neither, only_base + neither],
                         "total": [both + only_base, only_new + neither, both + only_base + only_new + neither]})


def comparison(log, kind: str, s: Settings) -> Section | None:
    """NEW (``s.new``) against BASE (``s.base``) on a per-example log; None when the report was not asked for a
    comparison or the log is not per-example (a summary or battles). Unknown models or no shared examples:
    :func:`~evalcore.compare.compare_runs` raises :class:`~evalcore.errors.EvalDataError` and the report says why."""
    if kind != LOG or not s.base or not s.new:
        return None
    from evalcore.compare import compare_runs

    c = compare_runs(log, s.base, s.new, by=list(s.by) or None, level=s.level, margin=s.margin, fdr=s.fdr,
                     seed=s.seed)
    points = c.metric == "correct"
    overall = c.overall.iloc[0]
    slices = c.slices if c.slices is not None else pd.DataFrame(columns=list(SLICE_COLUMNS))
    columns = [col for col in SLICE_COLUMNS if col in slices.columns]
    shrunk = "shrunk" in columns and bool(slices["shrunk"].notna().any())
    if not shrunk:  # too few slices to estimate their spread: no empirical Bayes estimate to show
        columns = [col for col in columns if col != "shrunk"]
    flagged = slices[slices["flagged"].astype(bool)] if "flagged" in slices else slices.iloc[:0]
    tables = {"overall": c.overall,
              ("2x2 table (examples both runs scored)" if points else "pairs (examples both runs scored)"):
                  two_by_two(c.pairs) if points else c.pairs}
    notes = []
    if len(flagged):
        tables["flagged slices"] = flagged[[col for col in columns if col != "flagged"]].reset_index(drop=True)
    else:
        notes.append(f"No slice is flagged: none of the {c.n_searched:,} slices searched has a q-value at most "
                     f"{c.fdr:g}.")
    if len(slices):
        tables["slices searched"] = slices[columns].reset_index(drop=True)
    if c.n_skipped_small:
        notes.append(f"{c.n_skipped_small:,} slices with fewer than {c.min_slice:,} shared examples were not "
                     "searched.")
    figures = []
    if len(slices):
        try:
            from evalcore.compare.figures import slice_forest
        except ImportError:  # the figure builder is not part of this installation: the tables say it all
            pass
        else:
            figures.append(slice_forest(slices, c.level, c.fdr, c.margin, scale=100 if points else 1.0,
                                        unit="points" if points else "", overall=float(overall["difference"]),
                                        title=f"{c.new} − {c.base} per slice, worst first"))
    worse = flagged[flagged["direction"].astype(str) == "worse"] if len(flagged) else flagged
    what = "accuracy" if points else f"mean {c.metric}"
    return Section(
        "comparison", "Comparison",
        (f"{s.series} " if s.series else "") + f"{c.sentence} The comparison pairs the examples both {c.base} (base) and {c.new} (new) scored: the "
        f"difference new − base in {what}, overall and per slice (each value of the task, category and group "
        "columns that have two or more" + (f", and of {', '.join(s.by)}" if s.by else "") + f"); verdict: "
        f"{c.verdict}. {c.detectable_sentence()}",
        f"{str(overall['method'])[:1].upper()}{str(overall['method'])[1:]}: over repeated samples of examples the interval contains the true difference "
        f"{percent(c.level)} of the time. A slice is flagged when its q-value (Benjamini-Hochberg over all "
        f"{c.n_searched:,} slices searched) is at most {c.fdr:g}: on average at most {percent(c.fdr)} of the flagged "
        "slices are false alarms."
        + (" 'shrunk' is the empirical Bayes estimate of a slice's difference (pulled toward the mean of the "
           "slices; robust intervals of Armstrong, Kolesár & Plagborg-Møller 2022)." if shrunk else "")
        + (f" Non-inferiority margin {c.margin:g}: a regression is a difference below −{c.margin:g}."
           if c.margin else ""),
        tables, figures,
        {"base": c.base, "new": c.new, "metric": c.metric, "verdict": c.verdict, "sentence": c.sentence,
         "n": int(overall["n"]), "difference": float(overall["difference"]), "ci_low": float(overall["ci_low"]),
         "ci_high": float(overall["ci_high"]), "p_value": float(overall["p_value"]),
         "n_searched": int(c.n_searched), "flagged": int(len(flagged)), "worse": int(len(worse)),
         "minimum_detectable_difference": float(overall["minimum_detectable_difference"]), "series": s.series},
        notes)
