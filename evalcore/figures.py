"""Pure plotly figure builders: data in, ``go.Figure`` out (no streamlit, no I/O).

Every builder draws the uncertainty next to the estimate (error bars or bands) and states in the figure's
caption-like subtitle what the interval means.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

PALETTE = ("#2b6cb0", "#dd6b20", "#2f855a", "#c53030", "#6b46c1", "#b7791f", "#2c7a7b", "#97266d", "#4a5568")
_TEMPLATE = "plotly_white"
_MAX_CURVE_POINTS = 400
#: Selective curves start once this many examples are answered (fewer give a meaningless spike).
MIN_ANSWERED = 20


def color(i: int) -> str:
    """The i-th colour of the dashboard palette (cycled)."""
    return PALETTE[i % len(PALETTE)]


def percent(level: float) -> str:
    """0.95 -> '95%', 0.834 -> '83.4%'."""
    return f"{100 * level:.1f}".rstrip("0").rstrip(".") + "%"


def _rgba(hex_color: str, alpha: float) -> str:
    r, g, b = (int(hex_color[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def _title(text: str, subtitle: str | None) -> dict:
    return {"text": text, "subtitle": {"text": subtitle}} if subtitle else {"text": text}


def reliability_diagram(table: pd.DataFrame, model: str, level: float = 0.95, ece: str | None = None) -> go.Figure:
    """Accuracy vs mean confidence per bin with Wilson bands, the diagonal, and bin counts underneath.

    ``table`` is :func:`evalcore.calibration.reliability_table` output. Empty bins (count 0) are not drawn.
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


def interval_dots(
    frame: pd.DataFrame,
    label: str,
    title: str,
    x_title: str,
    subtitle: str,
    by: str | None = None,
    reference: float | None = None,
) -> go.Figure:
    """Horizontal dot-and-whisker chart of ``estimate`` with ``ci_low``/``ci_high`` per ``label`` row.

    With ``by``, one coloured series per value of that column (e.g. models across tasks).
    """
    fig = go.Figure()
    series = [(None, frame)] if by is None else list(frame.groupby(by, sort=False))
    for i, (name, part) in enumerate(series):
        fig.add_trace(go.Scatter(
            x=part["estimate"], y=part[label], mode="markers", orientation="h",
            name=str(name) if name is not None else x_title,
            showlegend=by is not None, marker={"color": color(i), "size": 9},
            error_x={"type": "data", "symmetric": False, "array": part["ci_high"] - part["estimate"],
                     "arrayminus": part["estimate"] - part["ci_low"], "color": color(i), "thickness": 1.5},
            customdata=np.stack([part["ci_low"], part["ci_high"]], axis=1),
            hovertemplate="%{y}: %{x:.4f} (%{customdata[0]:.4f}, %{customdata[1]:.4f})<extra></extra>"))
    if reference is not None:
        fig.add_vline(x=reference, line={"color": "#a0aec0", "dash": "dot"})
    row_height = 28 if by is None else 12 + 9 * len(series)
    fig.update_layout(template=_TEMPLATE, title=_title(title, subtitle),
                      height=max(260, 110 + row_height * frame[label].nunique()),
                      margin={"l": 10, "r": 20, "t": 70, "b": 40}, xaxis_title=x_title,
                      legend={"orientation": "h", "y": -0.2}, scattermode="group" if by else None)
    fig.update_yaxes(autorange="reversed", type="category")
    return fig


def _thin(curve: pd.DataFrame, max_points: int = _MAX_CURVE_POINTS) -> pd.DataFrame:
    """At most ``max_points`` rows, evenly spaced in coverage, always keeping the last row."""
    if len(curve) <= max_points:
        return curve
    grid = np.linspace(curve["coverage"].iloc[0], curve["coverage"].iloc[-1], max_points)
    idx = np.unique(np.searchsorted(curve["coverage"].to_numpy(), grid).clip(0, len(curve) - 1))
    return curve.iloc[idx]


def selective_curves(curves: Mapping[str, pd.DataFrame], level: float = 0.95) -> go.Figure:
    """Selective accuracy vs coverage for several models with pointwise Wilson bands.

    ``curves`` maps model name to :func:`evalcore.calibration.selective_prediction_curve` output.
    """
    fig = go.Figure()
    for i, (model, curve) in enumerate(curves.items()):
        c = _thin(curve[curve["n_covered"] >= MIN_ANSWERED])
        fig.add_trace(go.Scatter(
            x=np.concatenate([c["coverage"], c["coverage"][::-1]]),
            y=np.concatenate([c["ci_high"], c["ci_low"][::-1]]), fill="toself",
            fillcolor=_rgba(color(i), 0.15), line={"width": 0}, mode="lines", hoverinfo="skip", legendgroup=model,
            showlegend=False))
        fig.add_trace(go.Scatter(
            x=c["coverage"], y=c["selective_accuracy"], mode="lines", name=model, legendgroup=model,
            line={"color": color(i), "width": 2}, customdata=np.stack([c["threshold"], c["n_covered"]], axis=1),
            hovertemplate=(f"{model}<br>coverage %{{x:.3f}} (n = %{{customdata[1]:,}})<br>"
                           "threshold %{customdata[0]:.3f}<br>selective accuracy %{y:.3f}<extra></extra>")))
    fig.update_layout(template=_TEMPLATE, height=440,
                      title=_title("Selective prediction", f"bands: pointwise {percent(level)} Wilson intervals · curves start at "
                                                       f"{MIN_ANSWERED} answered examples"),
                      xaxis_title="coverage (fraction answered, most confident first)",
                      yaxis_title="selective accuracy", legend={"orientation": "h", "y": -0.2},
                      margin={"l": 50, "r": 20, "t": 70, "b": 40})
    fig.update_xaxes(range=[0, 1.0])
    return fig
