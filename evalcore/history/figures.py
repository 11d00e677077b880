"""The History page's figure: a model's number per run over time with its interval, the runs with a flagged change
marked (plotly; data in, ``go.Figure`` out). Runs are drawn in time order (a history reads left to right), one
point per run at its run time; run names come from the data and are drawn literally."""

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
                   title: str = "") -> go.Figure:
    """The trend (columns run, time, estimate, ci_low, ci_high) as dots with interval bars over the run times,
    joined by a thin line; each point's ``customdata`` is its run's name (the page opens its comparison on a
    click)."""
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
    fig.update_layout(template=_TEMPLATE, title=_title(title or f"{what.capitalize()} per run", level_text),
                      xaxis_title="run time", yaxis_title=what, legend={"orientation": "h", "y": -0.2},
                      clickmode="event+select", margin={"l": 60, "r": 20, "t": 70, "b": 60})
    return fig
