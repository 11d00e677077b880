"""Compare's figure: the forest plot of the slices' paired differences (new − base), sorted by the difference, the
flagged slices marked, with a zero line and the margin's lines (plotly; data in, ``go.Figure`` out; no streamlit,
no I/O). Style and escaping as in :mod:`evalcore.stats.figures`: slice names come from the data and are drawn
literally (:func:`evalcore.data.display.plotly_literal`), shortened on the axis and whole in the hover.

Input: :attr:`evalcore.compare.Comparison.slices` (the contract of issue 28, /work/notes/compare28.md: columns
``slice, n, difference, ci_low, ci_high, q_value, flagged, direction``), sorted by ``difference`` ascending.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from evalcore.data.display import chart_labels, plotly_literal
from evalcore.stats.figures import _TEMPLATE, _columns, _title, percent

#: marker style per kind of slice: (legend name, colour, symbol)
KINDS = {"worse": ("flagged: new is worse", "#c53030", "diamond"),
         "better": ("flagged: new is better", "#2f855a", "diamond"),
         "same": ("not flagged", "#718096", "circle")}
#: pixels per slice row
ROW_PX = 24
#: at most this many slices are drawn: the flagged ones and the most extreme of the others, half from each end
MAX_ROWS = 60


def shown_slices(slices: pd.DataFrame, max_rows: int = MAX_ROWS) -> pd.DataFrame:
    """The slices the forest plot draws, in their order: all of them when at most ``max_rows``; otherwise every
    flagged slice and the others from both ends of the order (the lowest and highest differences) up to
    ``max_rows`` in all (flagged slices beyond ``max_rows`` are all kept)."""
    if len(slices) <= max_rows:
        return slices
    flagged = slices["flagged"].astype(bool).to_numpy()
    room = max(max_rows - int(flagged.sum()), 0)
    others = np.flatnonzero(~flagged)
    keep = set(np.flatnonzero(flagged)) | set(others[:(room + 1) // 2]) | set(others[len(others) - room // 2:]
                                                                              if room // 2 else [])
    return slices.iloc[sorted(keep)]


def slice_forest(slices: pd.DataFrame, level: float, fdr: float, margin: float = 0.0, scale: float = 1.0,
                 unit: str = "", title: str = "", overall: float | None = None,
                 max_rows: int = MAX_ROWS) -> go.Figure:
    """Forest plot of the slices' differences new − base with their ``level`` intervals, one row per slice in the
    frame's order (worst first, top to bottom), labelled "slice (n=..)".

    Flagged slices (``flagged``: q-value at most ``fdr``) are red diamonds when worse and green diamonds when better
    (``direction``), the others grey circles. A solid line marks 0 (no difference), dashed lines −``margin`` and
    +``margin`` when ``margin`` > 0, a dotted one the ``overall`` difference when given. Every number is multiplied
    by ``scale`` (100: fractions drawn as points) and ``unit`` names the unit on the axis ("points"). At most
    ``max_rows`` slices (:func:`shown_slices`); the subtitle says how many are left out.
    """
    rows = shown_slices(slices, max_rows).reset_index(drop=True)
    pos = np.arange(len(rows), dtype=float)
    names = rows["slice"].astype(str)
    short = chart_labels(names)
    sizes = [int(n) for n in rows["n"]]
    labels = [f"{short[s]} (n={n:,})" for s, n in zip(names, sizes)]
    heads = [f"{plotly_literal(s)} (n = {n:,})" for s, n in zip(names, sizes)]
    est, low, high = (rows[c].astype(float).to_numpy() * scale for c in ("difference", "ci_low", "ci_high"))
    q = rows["q_value"].astype(float).to_numpy()
    kind = np.where(rows["flagged"].astype(bool), rows["direction"].astype(str), "same")
    kind = np.where(np.isin(kind, list(KINDS)), kind, "same")
    suffix = f" {plotly_literal(unit)}" if unit else ""
    fig = go.Figure()
    for name, (legend, colour, symbol) in KINDS.items():
        part = kind == name
        if not part.any():
            continue
        fig.add_trace(go.Scatter(
            x=est[part], y=pos[part], mode="markers", name=legend,
            marker={"color": colour, "size": 10 if name != "same" else 8, "symbol": symbol},
            error_x={"type": "data", "symmetric": False, "array": (high - est)[part],
                     "arrayminus": (est - low)[part], "color": colour, "thickness": 1.5, "width": 0},
            customdata=_columns(np.asarray(heads, dtype=object)[part], low[part], high[part], q[part]),
            hovertemplate=(f"%{{customdata[0]}}<br>new − base %{{x:.3g}}{suffix} ({percent(level)} interval "
                           "%{customdata[1]:.3g} to %{customdata[2]:.3g})<br>q-value %{customdata[3]:.3g}"
                           "<extra></extra>")))
    span = [-0.5, max(len(rows), 1) - 0.5]
    lines = [(0.0, "no difference (0)", "#1a202c", "solid")]
    if margin > 0:
        lines += [(-margin * scale, f"margin −{margin * scale:.3g}{suffix}", "#b7791f", "dash"),
                  (margin * scale, f"margin +{margin * scale:.3g}{suffix}", "#b7791f", "dash")]
    if overall is not None and np.isfinite(overall):
        lines.append((overall * scale, f"overall {overall * scale:.3g}{suffix}", "#2b6cb0", "dot"))
    for x, legend, colour, dash in lines:  # traces, not shapes: the legend says what each line is
        fig.add_trace(go.Scatter(x=[x, x], y=span, mode="lines", name=legend,
                                 line={"color": colour, "dash": dash, "width": 1.2},
                                 hovertemplate=f"{legend}<extra></extra>"))
    left_out = len(slices) - len(rows)
    subtitle = (f"{percent(level)} intervals of each slice's paired difference · flagged: q-value ≤ "
                f"{percent(fdr)} false discovery rate (Benjamini-Hochberg over all {len(slices):,} slices)"
                + (f" · {left_out:,} slices between the extremes not drawn" if left_out else ""))
    height = max(340, 190 + ROW_PX * len(rows))
    fig.update_layout(template=_TEMPLATE, title=_title(title or "Difference new − base per slice, worst first",
                                                       subtitle),
                      height=height, margin={"l": 10, "r": 20, "t": 110, "b": 50},
                      xaxis_title=plotly_literal(f"new − base ({unit})" if unit else "new − base"),
                      legend={"orientation": "h", "x": 0, "xanchor": "left", "yref": "container",
                              "y": 1 - 70 / height, "yanchor": "top"})
    fig.update_layout(title_y=1 - 12 / height, title_yanchor="top", title_yref="container")
    fig.update_yaxes(tickmode="array", tickvals=pos, ticktext=labels, range=[span[1], span[0]], showgrid=False,
                     zeroline=False)
    fig.update_xaxes(showline=True, mirror="ticks", ticks="outside", zeroline=False)
    return fig
