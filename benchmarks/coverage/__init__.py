"""Measured coverage of every interval evalcore shows: ``python -m benchmarks.coverage``.

Each module of this package measures one family of intervals and exposes ``run(reps: int | None, seed: int) ->
list[CoverageRow]`` (``reps=None``: the module's default number of repetitions). A row says how often intervals built
from repeated samples contained a known truth: a simulation's parameter, or the value on the full real data when the
samples are drawn from it (held-out real data: the full data play the population, the subsample the user's few
labels). :func:`coverage_row` turns the hits of the repetitions into the row (coverage with its Monte Carlo standard
error ``sqrt(c (1 - c) / R)``, mean width).

``python -m benchmarks.coverage [--only MODULE ...] [--reps R] [--seed S]`` prints one Markdown table, also written to
``benchmarks/results/coverage.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"

# The modules in the order of the table (each holds ``run``).
MODULES = ("pairs", "ranks", "eb", "labels", "ppi", "bayes", "weighting", "calibration", "overall", "compare",
           "agreement")


@dataclass(frozen=True)
class CoverageRow:
    """One line of the table: ``measured`` is the share of ``reps`` intervals that held (``mc_se`` its Monte Carlo
    standard error); ``width`` the mean width (for a family of intervals, the mean over its members); ``before`` the
    coverage measured the same way before the current method, when it changed (``None`` otherwise)."""

    method: str
    setting: str
    nominal: float
    measured: float
    mc_se: float
    width: float
    reps: int
    before: float | None = None

    def markdown(self) -> str:
        before = "" if self.before is None else f"{self.before:.3f}"
        return (f"| {self.method} | {self.setting} | {self.nominal:.2f} | {self.measured:.3f} ± {self.mc_se:.3f} | "
                f"{self.width:.4g} | {self.reps} | {before} |")


HEADER = ("| method | setting | nominal | measured ± MC SE | mean width | reps | before |\n"
          "|---|---|---|---|---|---|---|")


def coverage_row(method: str, setting: str, nominal: float, hits, widths, before: float | None = None) -> CoverageRow:
    """The row of ``hits`` (one bool per repetition: the interval, or the whole family, held) and ``widths``."""
    hits = np.asarray(hits, dtype=float)
    if hits.size == 0:
        raise ValueError(f"{method} / {setting}: no repetitions")
    c = float(hits.mean())
    return CoverageRow(method, setting, float(nominal), c, float(np.sqrt(c * (1 - c) / hits.size)),
                       float(np.nanmean(np.asarray(widths, dtype=float))), int(hits.size), before)


def markdown(rows: list[CoverageRow]) -> str:
    """The table of ``rows`` in Markdown."""
    return "\n".join([HEADER, *(r.markdown() for r in rows)])
