"""The Label page's chart: the estimate with its interval against the target band, as labels come in."""

from __future__ import annotations

import math

import plotly.graph_objects as go

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
