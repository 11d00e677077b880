"""The Label page's charts: the estimate with its interval against the target band, as labels come in; for a
comparison campaign, every model's difference from the leader with its interval (and, beside it, the table of its
labels per agreement pattern)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from evalcore.data.display import chart_labels
from evalcore.labeling.difference import ALL_AGREE, ComparisonEstimate
from evalcore.labeling.estimate import LiveEstimate


def estimate_figure(estimate: LiveEstimate, model: str, what: str = "accuracy") -> go.Figure:
    """One row: the estimate (dot) with its interval (bar) and, shaded, ±target around the estimate, i.e. the
    width at which the campaign may stop. Data in, figure out."""
    fig = go.Figure()
    if not math.isnan(estimate.estimate):
        if estimate.target is not None:
            fig.add_vrect(x0=estimate.estimate - estimate.target, x1=estimate.estimate + estimate.target,
                          fillcolor="#9ecae1", opacity=0.35, line_width=0,
                          annotation_text=f"±{estimate.target:g}: stop when the interval fits here",
                          annotation_position="top left")
        fig.add_trace(go.Scatter(
            x=[estimate.estimate], y=[model], mode="markers", marker={"size": 12, "color": "#08519c"},
            error_x={"type": "data", "symmetric": False, "array": [estimate.ci_high - estimate.estimate],
                     "arrayminus": [estimate.estimate - estimate.ci_low], "thickness": 3, "width": 8},
            name=f"{estimate.level:.0%} interval",
            hovertemplate=f"{what} %{{x:.3f}} ({estimate.ci_low:.3f}–{estimate.ci_high:.3f})<extra></extra>"))
    fig.update_layout(height=180, margin={"l": 10, "r": 10, "t": 30, "b": 40}, showlegend=False,
                      xaxis_title=f"{what} ({estimate.labels:,} labels, {estimate.estimator})",
                      yaxis={"type": "category", "automargin": True})
    return fig


def against_leader(estimate: ComparisonEstimate) -> pd.DataFrame:
    """Every pair of a comparison with its leader, as "leader − other" (``model``: the other, ``difference``,
    ``low``, ``high``: the confidence sequence for a "decided" campaign, else the fixed-n interval), sorted by the
    difference (the closest model first); empty before the first estimate."""
    rows = []
    if estimate.leader is not None:
        low, high = ("cs_low", "cs_high") if estimate.interval == "confidence sequence" else ("ci_low", "ci_high")
        for pair in estimate.pairs.itertuples(index=False):
            if estimate.leader == pair.model_a:
                rows.append((pair.model_b, pair.difference, getattr(pair, low), getattr(pair, high)))
            elif estimate.leader == pair.model_b:
                rows.append((pair.model_a, -pair.difference, -getattr(pair, high), -getattr(pair, low)))
    frame = pd.DataFrame(rows, columns=["model", "difference", "low", "high"])
    return frame.sort_values("difference", kind="stable", ignore_index=True)


def comparison_figure(estimate: ComparisonEstimate) -> go.Figure:
    """One row per other model: the leader's accuracy minus its (dot, in points) with the interval the campaign
    shows (bar: the confidence sequence where it stops when decided), the closest model on top; a line at 0 and,
    with a margin, at -margin (the "not worse by more than" line). Data in, figure out."""
    rows = against_leader(estimate)
    labels = chart_labels([f"{estimate.leader} − {m}" for m in rows["model"]])
    names = list(labels.values())
    fig = go.Figure()
    fig.add_vline(x=0, line_color="#636363", line_width=1)
    if estimate.margin > 0:
        fig.add_vline(x=-100 * estimate.margin, line_dash="dash", line_color="#e6550d",
                      annotation_text=f"-{100 * estimate.margin:g} points (the margin)",
                      annotation_position="top left")
    points = 100 * rows[["difference", "low", "high"]]
    fig.add_trace(go.Scatter(
        x=points["difference"], y=names, mode="markers", marker={"size": 12, "color": "#08519c"},
        error_x={"type": "data", "symmetric": False, "array": points["high"] - points["difference"],
                 "arrayminus": points["difference"] - points["low"], "thickness": 3, "width": 8},
        customdata=np.column_stack([points["low"], points["high"]]),
        hovertemplate="%{y}: %{x:+.1f} points (%{customdata[0]:.1f} to %{customdata[1]:.1f})<extra></extra>"))
    fig.update_layout(height=120 + 40 * len(rows), margin={"l": 10, "r": 10, "t": 30, "b": 40}, showlegend=False,
                      xaxis_title=f"difference in accuracy, points ({estimate.labels:,} labels, {estimate.level:.0%} "
                                  f"{estimate.interval})",
                      yaxis={"type": "category", "automargin": True, "autorange": "reversed"})
    return fig


def labels_per_pattern(pool: dict, estimate: ComparisonEstimate) -> pd.DataFrame:
    """One row per agreement pattern of a comparison's pool (``pool``: the plan's constants, its ``patterns`` and
    ``pattern_sizes``): its examples, the labels and skips given on them, and whether the design draws from it
    (the disagreement design never labels "all agree", where every difference is 0)."""
    drawn = [estimate.design == "srs" or name != ALL_AGREE for name in pool["patterns"]]
    return pd.DataFrame({"agreement pattern": pool["patterns"], "examples": pool["pattern_sizes"],
                         "labeled": [estimate.per_pattern.get(name, 0) for name in pool["patterns"]],
                         "drawn by the design": ["yes" if d else "no: the difference is 0 there" for d in drawn]})
