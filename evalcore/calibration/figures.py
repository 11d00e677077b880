"""Calibration's figures: reliability diagrams with per-bin Wilson intervals and selective-prediction curves
with their bands (plotly; data in, ``go.Figure`` out). Style and escaping as in :mod:`evalcore.stats.figures`.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from evalcore.data.display import chart_labels, plotly_literal
from evalcore.stats.figures import PALETTE, _TEMPLATE, _rgba, _thin, _title, color, percent


#: Selective curves start once this many examples are answered (fewer give a meaningless spike).
MIN_ANSWERED = 20


def reliability_diagram(table: pd.DataFrame, model: str, level: float = 0.95, ece: str | None = None) -> go.Figure:
    """Accuracy vs mean confidence per bin with Wilson bands, the diagonal, and bin counts underneath.

    ``table`` is :func:`evalcore.calibration.estimators.reliability_table` output. Empty bins (count 0) are not drawn.
    """
    rows = table[table["count"] > 0]
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.72, 0.28], vertical_spacing=0.04)
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="perfect calibration",
                             line={"color": "#a0aec0", "dash": "dash"}), row=1, col=1)
    fig.add_trace(go.Scatter(
        x=np.concatenate([rows["mean_confidence"], rows["mean_confidence"][::-1]]),
        y=np.concatenate([rows["ci_high"], rows["ci_low"][::-1]]),
        fill="toself", fillcolor=_rgba(PALETTE[0], 0.18), line={"width": 0}, mode="lines", hoverinfo="skip",
        name=f"{percent(level)} Wilson band"), row=1, col=1)
    fig.add_trace(go.Scatter(
        x=rows["mean_confidence"], y=rows["accuracy"], mode="lines+markers", name="accuracy",
        marker={"color": PALETTE[0], "size": 8}, line={"color": PALETTE[0]},
        customdata=np.stack([rows["count"], rows["lower"], rows["upper"], rows["ci_low"], rows["ci_high"]], axis=1),
        hovertemplate=("bin [%{customdata[1]:.2f}, %{customdata[2]:.2f}]<br>n = %{customdata[0]:,}<br>"
                       "mean confidence %{x:.3f}<br>accuracy %{y:.3f} "
                       "(%{customdata[3]:.3f}, %{customdata[4]:.3f})<extra></extra>")), row=1, col=1)
    fig.add_trace(go.Bar(
        x=(rows["lower"] + rows["upper"]) / 2, y=rows["count"], width=(rows["upper"] - rows["lower"]) * 0.95,
        marker_color="#a0aec0", name="examples per bin", showlegend=False,
        hovertemplate="n = %{y:,}<extra></extra>"), row=2, col=1)
    subtitle = f"bands: {percent(level)} Wilson intervals per bin" + (f" · ECE {ece}" if ece else "")
    fig.update_layout(template=_TEMPLATE, title=_title(model, subtitle), height=460,
                      margin={"l": 50, "r": 20, "t": 70, "b": 40}, legend={"orientation": "h", "y": -0.15})
    fig.update_yaxes(title_text="accuracy", range=[0, 1.02], row=1, col=1)
    fig.update_yaxes(title_text="count", row=2, col=1)
    fig.update_xaxes(title_text="confidence", range=[0, 1.0], row=2, col=1)
    return fig


def selective_curves(curves: Mapping[str, pd.DataFrame], level: float = 0.95) -> go.Figure:
    """Selective accuracy vs coverage for several models with pointwise Wilson bands.

    ``curves`` maps model name to :func:`evalcore.calibration.estimators.selective_prediction_curve` output.
    """
    fig = go.Figure()
    names = chart_labels(curves)
    for i, (model, curve) in enumerate(curves.items()):
        c, name = _thin(curve[curve["n_covered"] >= MIN_ANSWERED]), names[str(model)]
        fig.add_trace(go.Scatter(
            x=np.concatenate([c["coverage"], c["coverage"][::-1]]),
            y=np.concatenate([c["ci_high"], c["ci_low"][::-1]]), fill="toself",
            fillcolor=_rgba(color(i), 0.15), line={"width": 0}, mode="lines", hoverinfo="skip", legendgroup=name,
            showlegend=False))
        fig.add_trace(go.Scatter(
            x=c["coverage"], y=c["selective_accuracy"], mode="lines", name=name, legendgroup=name,
            line={"color": color(i), "width": 2}, customdata=np.stack([c["threshold"], c["n_covered"]], axis=1),
            hovertemplate=(f"{plotly_literal(model)}<br>coverage %{{x:.3f}} (n = %{{customdata[1]:,}})<br>"
                           "threshold %{customdata[0]:.3f}<br>selective accuracy %{y:.3f}<extra></extra>")))
    fig.update_layout(template=_TEMPLATE, height=440,
                      title=_title("Selective prediction", f"bands: pointwise {percent(level)} Wilson intervals · curves start at "
                                                       f"{MIN_ANSWERED} answered examples"),
                      xaxis_title="coverage (fraction answered, most confident first)",
                      yaxis_title="selective accuracy", legend={"orientation": "h", "y": -0.2},
                      margin={"l": 50, "r": 20, "t": 70, "b": 40})
    fig.update_xaxes(range=[0, 1.0])
    return fig
