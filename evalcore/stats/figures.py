"""The figures' common style and the estimate-with-interval dot plot every method uses (plotly; data in,
``go.Figure`` out; no streamlit, no I/O). Each method's own figures live in its subpackage.

Every builder draws the uncertainty next to the estimate (error bars or bands) and states in the figure's
caption-like subtitle what the interval means. Names from the data (models, tasks, groups, categories) and every
title given by the caller are escaped (:mod:`evalcore.data.display`): plotly reads HTML in all its text. Categories on
an axis or in a legend are shortened to :data:`~evalcore.data.display.LABEL_WIDTH` characters; the hover shows the
full name.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from evalcore.data.display import chart_labels, plotly_literal
from evalcore.stats.level import percent  # noqa: F401 - defined there (no plotly import), used through here

PALETTE = ("#2b6cb0", "#dd6b20", "#2f855a", "#c53030", "#6b46c1", "#b7791f", "#2c7a7b", "#97266d", "#4a5568")
_TEMPLATE = "plotly_white"
_MAX_CURVE_POINTS = 400


def color(i: int) -> str:
    """The i-th colour of the dashboard palette (cycled)."""
    return PALETTE[i % len(PALETTE)]


def _rgba(hex_color: str, alpha: float) -> str:
    r, g, b = (int(hex_color[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def _title(text: str, subtitle: str | None) -> dict:
    """A layout title with an optional subtitle, both escaped (they may hold names from the data)."""
    title = {"text": plotly_literal(text)}
    return {**title, "subtitle": {"text": plotly_literal(subtitle)}} if subtitle else title


def _columns(*columns) -> np.ndarray:
    """Columns side by side as an object array: hover data mixing names and numbers (numbers stay numbers)."""
    return np.column_stack([np.asarray(c, dtype=object) for c in columns])


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

    With ``by``, one coloured series per value of that column (e.g. models across tasks). Row labels and series
    names are shortened and escaped (:func:`evalcore.data.display.chart_labels`); the hover shows the full names.
    """
    fig = go.Figure()
    series = [(None, frame)] if by is None else list(frame.groupby(by, sort=False))
    rows = chart_labels(frame[label])
    names = chart_labels(name for name, _ in series if name is not None)
    for i, (name, part) in enumerate(series):
        full = part[label].astype(str)
        fig.add_trace(go.Scatter(
            x=part["estimate"], y=full.map(rows), mode="markers", orientation="h",
            name=names[str(name)] if name is not None else plotly_literal(x_title),
            showlegend=by is not None, marker={"color": color(i), "size": 9},
            error_x={"type": "data", "symmetric": False, "array": part["ci_high"] - part["estimate"],
                     "arrayminus": part["estimate"] - part["ci_low"], "color": color(i), "thickness": 1.5},
            customdata=_columns(part["ci_low"], part["ci_high"], full.map(plotly_literal),
                                [""] * len(part) if name is None else [f" · {plotly_literal(name)}"] * len(part)),
            hovertemplate="%{customdata[2]}%{customdata[3]}: %{x:.3g} (%{customdata[0]:.3g}–%{customdata[1]:.3g})"
                          "<extra></extra>"))
    if reference is not None:
        fig.add_vline(x=reference, line={"color": "#a0aec0", "dash": "dot"})
    row_height = 28 if by is None else 12 + 9 * len(series)
    fig.update_layout(template=_TEMPLATE, title=_title(title, subtitle),
                      height=max(260, 110 + row_height * frame[label].nunique()),
                      margin={"l": 10, "r": 20, "t": 70, "b": 40}, xaxis_title=plotly_literal(x_title),
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


# --- Subgroup estimates (direct, synthetic regression, empirical Bayes) and the holdout study ---------------------


