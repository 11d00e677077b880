"""The History page's figure: a model's number per run over time with its interval, the runs with a flagged change
marked, the runs the gate rejected crossed, the series' reference ringed, and the drift from the reference to the
latest run drawn as one arrow labelled with its paired difference and interval (plotly; data in, ``go.Figure`` out).
Runs are drawn in time order (a history reads left to right), one point per run at its run time; run names come
from the data and are drawn literally."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from evalcore.data.display import plotly_literal
from evalcore.stats.figures import _TEMPLATE, _title

#: marker per kind of run: (legend name, colour, symbol)
KINDS = {"worse": ("a change flagged: worse", "#c53030", "diamond"),
         "better": ("a change flagged: better", "#2f855a", "diamond"),
         "same": ("no change flagged", "#2b6cb0", "circle")}


def run_kinds(trend: pd.DataFrame, changes: pd.DataFrame) -> list[str]:
    """Per run of ``trend``: "worse" when a flagged change of it is worse (overall or in a slice), else "better"
    when one is better, else "same"."""
    flagged = changes[changes["flagged"].astype(bool)] if len(changes) else changes
    worse = set(flagged.loc[flagged["difference"] < 0, "run"]) if len(flagged) else set()
    better = set(flagged.loc[flagged["difference"] > 0, "run"]) if len(flagged) else set()
    return ["worse" if r in worse else "better" if r in better else "same" for r in trend["run"]]


def history_figure(trend: pd.DataFrame, changes: pd.DataFrame, level_text: str, what: str = "accuracy",
                   title: str = "", rejected: tuple[str, ...] = (), reference: str | None = None,
                   drift: str | None = None) -> go.Figure:
    """The trend (columns run, time, estimate, ci_low, ci_high) as dots with interval bars over the run times,
    joined by a thin line; each point's ``customdata`` is its run's name (the page opens its comparison on a
    click). The ``rejected`` runs (the gate failed them, none accepted them since) are crossed, the ``reference``
    run ringed, and ``drift`` (a label: the latest run against the reference, its difference and interval) is an
    arrow from the reference's point to the latest run's."""
    fig = go.Figure()
    time = pd.to_datetime(trend["time"], utc=True, errors="coerce")
    fig.add_trace(go.Scatter(x=time, y=trend["estimate"], mode="lines", line={"color": "#a0aec0", "width": 1},
                             hoverinfo="skip", showlegend=False))
    kinds = np.asarray(run_kinds(trend, changes))
    for kind, (name, colour, symbol) in KINDS.items():
        rows = trend[kinds == kind]
        if rows.empty:
            continue
        fig.add_trace(go.Scatter(
            x=time[kinds == kind], y=rows["estimate"], mode="markers", name=name,
            marker={"color": colour, "symbol": symbol, "size": 10},
            error_y={"type": "data", "symmetric": False, "array": rows["ci_high"] - rows["estimate"],
                     "arrayminus": rows["estimate"] - rows["ci_low"], "color": colour},
            customdata=rows["run"].astype(str).to_numpy(),
            text=[plotly_literal(r) for r in rows["run"]],
            hovertemplate="%{text}<br>%{y:.3f}<extra></extra>"))
    marks = {"rejected by the gate": (trend["run"].isin(rejected), "x-thin-open", "#742a2a", 18),
             "reference": (trend["run"] == reference, "circle-open", "#1a202c", 20)}
    for name, (chosen, symbol, colour, size) in marks.items():
        if chosen.any():
            fig.add_trace(go.Scatter(x=time[chosen.to_numpy()], y=trend.loc[chosen, "estimate"], mode="markers",
                                     name=name, hoverinfo="skip",
                                     marker={"symbol": symbol, "size": size, "color": colour,
                                             "line": {"width": 2, "color": colour}}))
    if drift and reference in set(trend["run"]) and len(trend) > 1:
        start = trend["run"].eq(reference).to_numpy().argmax()
        fig.add_annotation(x=time.iloc[-1], y=trend["estimate"].iloc[-1], ax=time.iloc[start],
                           ay=trend["estimate"].iloc[start], xref="x", yref="y", axref="x", ayref="y",
                           showarrow=True, arrowhead=3, arrowwidth=2, arrowcolor="#805ad5", opacity=0.8,
                           text=plotly_literal(drift), font={"color": "#553c9a"}, yshift=12)
    fig.update_layout(template=_TEMPLATE, title=_title(title or f"{what.capitalize()} per run", level_text),
                      xaxis_title="run time", yaxis_title=what, legend={"orientation": "h", "y": -0.2},
                      clickmode="event+select", margin={"l": 60, "r": 20, "t": 70, "b": 60})
    return fig
