"""Leaderboard figures: the ternary task-weighting map with its "too close to call" gray zone and posterior
rank probabilities (plotly; data in, ``go.Figure`` out). Style and escaping as in :mod:`evalcore.stats.figures`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from evalcore.data.display import chart_labels, plotly_literal
from evalcore.stats.figures import _TEMPLATE, _columns, _title, color


#: colour of the ternary map's "too close to call" zone
TERNARY_GRAY = "#a0aec0"


def _ternary_hover(part: pd.DataFrame) -> np.ndarray:
    """customdata of the ternary map: winner and runner-up (escaped), difference and its standard error."""
    return _columns(part["winner"].astype(str).map(plotly_literal), part["runner_up"].astype(str).map(plotly_literal),
                    part["diff"], part["se"])


def ternary_figure(
    map_frame: pd.DataFrame,
    categories: tuple[str, str, str] | None = None,
    title: str = "Which model wins under which category weighting",
    marker_size: float | None = None,
) -> go.Figure:
    """Ternary task-weighting map (paper, Section 3.3) from :func:`evalcore.leaderboard.weighting.ternary_winner_map` output.

    One ``go.Scatterternary`` trace (and legend entry) per winning model, coloured by winner, plus one gray trace
    for the points where the top two are within ``z`` standard errors ("too close to call"). Axes ``a, b, c`` are
    the weights ``w1, w2, w3`` of ``categories`` (default ``map_frame.attrs["categories"]``). Hover shows the
    weights, winner, runner-up, the difference and its standard error.
    """
    frame = map_frame
    cats = tuple(plotly_literal(c) for c in categories or frame.attrs.get("categories") or ("w1", "w2", "w3"))
    z = frame.attrs.get("z")
    if marker_size is None:
        n = max(len(frame), 1)
        marker_size = float(np.clip(11.0 / np.sqrt(n) * 30, 3, 18))  # ~4.6 at 1% steps (5,151 points)
    hover = (f"{cats[0]} %{{a:.2f}} · {cats[1]} %{{b:.2f}} · {cats[2]} %{{c:.2f}}<br>"
             "winner %{customdata[0]}<br>runner-up %{customdata[1]}<br>"
             "difference %{customdata[2]:.4f} (SE %{customdata[3]:.4f})<extra>%{fullData.name}</extra>")
    fig = go.Figure()
    clear = frame[~frame["gray"].astype(bool)]
    counts = clear["winner"].value_counts()
    names = chart_labels(counts.index)
    for i, model in enumerate(counts.index):
        part = clear[clear["winner"] == model]
        fig.add_trace(go.Scatterternary(
            a=part["w1"], b=part["w2"], c=part["w3"], mode="markers", name=names[str(model)],
            marker={"color": color(i), "size": marker_size, "symbol": "square", "line": {"width": 0}},
            customdata=_ternary_hover(part),
            hovertemplate=hover))
    gray = frame[frame["gray"].astype(bool)]
    if len(gray):
        fig.add_trace(go.Scatterternary(
            a=gray["w1"], b=gray["w2"], c=gray["w3"], mode="markers",
            name="too close to call" + (f" (within {z:g} SE)" if z is not None else ""),
            marker={"color": TERNARY_GRAY, "size": marker_size, "symbol": "square", "line": {"width": 0}},
            customdata=_ternary_hover(gray),
            hovertemplate=hover))
    subtitle = ("colour: best weighted score; gray: top two within "
                + (f"z = {z:g}" if z is not None else "z") + " standard errors of their difference")
    fig.update_layout(
        template=_TEMPLATE, title=_title(title, subtitle), height=560,
        margin={"l": 40, "r": 40, "t": 120, "b": 40}, legend={"title": {"text": "winner"}, "itemsizing": "constant"},
        ternary={"sum": 1,
                 "aaxis": {"title": {"text": f"w {cats[0]}"}, "min": 0, "linewidth": 1, "ticks": "outside"},
                 "baxis": {"title": {"text": f"w {cats[1]}"}, "min": 0, "linewidth": 1, "ticks": "outside"},
                 "caxis": {"title": {"text": f"w {cats[2]}"}, "min": 0, "linewidth": 1, "ticks": "outside"}})
    return fig


def rank_probability_bars(probabilities: pd.DataFrame, subtitle: str = "") -> go.Figure:
    """Stacked bars of the posterior probability of each rank per model (paper, Figure 5).

    ``probabilities``: :func:`evalcore.leaderboard.bayes.posterior_rank_probabilities` output (model, rank, probability);
    models are listed by their probability of rank 1, most likely winner on top.
    """
    wide = probabilities.pivot(index="model", columns="rank", values="probability").fillna(0.0)
    wide = wide.sort_values(by=list(wide.columns), ascending=False)
    labels = chart_labels(wide.index)
    full = [plotly_literal(m) for m in wide.index]
    fig = go.Figure()
    for i, rank in enumerate(wide.columns):
        fig.add_trace(go.Bar(
            y=[labels[str(m)] for m in wide.index], x=wide[rank], orientation="h", name=f"rank {rank}",
            marker_color=color(i), customdata=full,
            hovertemplate=f"%{{customdata}}: P(rank {rank}) = %{{x:.3f}}<extra></extra>"))
    fig.update_layout(template=_TEMPLATE, barmode="stack", height=max(260, 110 + 30 * len(wide)),
                      title=_title("Posterior rank probabilities", subtitle), xaxis_title="probability",
                      legend={"orientation": "h", "y": -0.2}, margin={"l": 10, "r": 20, "t": 70, "b": 40})
    fig.update_xaxes(range=[0, 1])
    fig.update_yaxes(autorange="reversed", type="category")
    return fig
