"""Subgroups' figures: the forest plot of direct, synthetic and empirical Bayes estimates with their intervals,
the shrinkage plot, and the holdout study's charts (plotly; data in, ``go.Figure`` out). Style and escaping as in
:mod:`evalcore.stats.figures`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from evalcore.data.display import chart_labels, plotly_literal
from evalcore.stats.intervals import DEFAULT_LEVEL
from evalcore.stats.figures import PALETTE, _TEMPLATE, _columns, _rgba, _title, color, percent


#: One colour per estimator, shared by the subgroup and holdout charts.
METHOD_COLORS = {"DT": PALETTE[0], "EB": PALETTE[1], "SR": PALETTE[2]}


METHOD_NAMES = {"DT": "direct (DT)", "EB": "empirical Bayes (EB)", "SR": "synthetic regression (SR)"}


#: Vertical offsets of the DT, EB and SR markers within a forest-plot row (rows are one unit apart, top to bottom).
FOREST_OFFSETS = {"DT": -0.22, "EB": 0.0, "SR": 0.22}


#: Forest-plot pixels per subgroup row (60 rows per page stay legible).
FOREST_ROW_PX = 22


def forest_plot(
    table: pd.DataFrame,
    level: float = DEFAULT_LEVEL,
    overall: float | None = None,
    truth: pd.Series | None = None,
    title: str = "",
    direct_interval: str = "Wilson/t",
) -> go.Figure:
    """Forest plot of one model's subgroups: DT and EB estimates with their intervals, and the SR point.

    ``table`` holds :func:`evalcore.subgroups.estimates.empirical_bayes` rows of one model, already filtered, sorted and
    paged by the caller; rows are drawn top to bottom in the table's order at y = 0, 1, 2, ... (axis reversed),
    labelled "group (n=..)". Within a row the DT estimate with its Wilson/t interval (``direct_low``,
    ``direct_high``) sits slightly above, the EB estimate with its robust interval (``eb_low``, ``eb_high``) in the
    middle and the SR prediction ``synthetic`` (no interval) slightly below (:data:`FOREST_OFFSETS`).
    ``overall`` (the model's overall metric) is drawn as a dotted vertical line; ``truth`` (a Series indexed by
    group, e.g. the full-data means of a holdout study) as hollow diamonds at the row centres. The height grows
    by :data:`FOREST_ROW_PX` per row. ``direct_interval`` names the DT intervals (e.g. "normal" for a summary's
    estimate ± z·se); a missing ``n`` (no column, or NaN) leaves the size out of the row's label.
    """
    rows = table.reset_index(drop=True)
    pos = np.arange(len(rows), dtype=float)
    names = rows["group"].astype(str)
    short = chart_labels(names)
    groups = names.map(plotly_literal).to_numpy()  # full names, for the hover
    sizes = [None if pd.isna(n) else int(n) for n in (rows["n"] if "n" in rows else [None] * len(rows))]
    labels = [short[g] if n is None else f"{short[g]} (n={n:,})" for g, n in zip(names, sizes)]
    heads = [g if n is None else f"{g} (n = {n})" for g, n in zip(groups, sizes)]  # hover titles
    fig = go.Figure()
    for method, est, low, high, symbol, interval in (
            ("DT", "direct", "direct_low", "direct_high", "square", direct_interval),
            ("EB", "eb", "eb_low", "eb_high", "circle", "robust EB")):
        c = METHOD_COLORS[method]
        fig.add_trace(go.Scatter(
            x=rows[est], y=pos + FOREST_OFFSETS[method], mode="markers", name=METHOD_NAMES[method],
            marker={"color": c, "size": 7, "symbol": symbol},
            error_x={"type": "data", "symmetric": False, "array": rows[high] - rows[est],
                     "arrayminus": rows[est] - rows[low], "color": c, "thickness": 1.5, "width": 0},
            customdata=_columns(heads, rows[low], rows[high]),
            hovertemplate=(f"%{{customdata[0]}}<br>{method} %{{x:.3f}} "
                           f"({percent(level)} {plotly_literal(interval)}: %{{customdata[1]:.3f}} to "
                           "%{customdata[2]:.3f})<extra></extra>")))
    fig.add_trace(go.Scatter(
        x=rows["synthetic"], y=pos + FOREST_OFFSETS["SR"], mode="markers", name=METHOD_NAMES["SR"],
        marker={"color": METHOD_COLORS["SR"], "size": 7, "symbol": "x-thin",
                "line": {"width": 2, "color": METHOD_COLORS["SR"]}},
        customdata=groups, hovertemplate="%{customdata}<br>SR %{x:.3f} (regression prediction, no interval)"
                                         "<extra></extra>"))
    if truth is not None:
        fig.add_trace(go.Scatter(
            x=pd.Series(truth).reindex(names).to_numpy(dtype=float), y=pos, mode="markers",
            name="ground truth (holdout)",
            marker={"symbol": "diamond-open", "size": 11, "color": "#1a202c", "line": {"width": 1.5}},
            customdata=groups, hovertemplate="%{customdata}<br>truth %{x:.3f}<extra></extra>"))
    if overall is not None:  # a trace rather than a shape, so that the legend says what the line is
        fig.add_trace(go.Scatter(
            x=[overall, overall], y=[-0.5, len(rows) - 0.5], mode="lines", name=f"overall {overall:.3f}",
            line={"color": "#718096", "dash": "dot", "width": 1.5},
            hovertemplate=f"model overall {overall:.3f}<extra></extra>"))
    subtitle = (f"DT: {percent(level)} {plotly_literal(direct_interval)} intervals per subgroup · EB: robust {percent(level)} intervals with "
                "average coverage across subgroups")
    tall = len(rows) > 25
    height = max(320, (190 if tall else 170) + FOREST_ROW_PX * len(rows))
    fig.update_layout(template=_TEMPLATE, title=_title(title, subtitle), height=height,
                      margin={"l": 10, "r": 20, "t": 130 if tall else 110, "b": 50}, xaxis_title="estimate",
                      legend={"orientation": "h", "x": 0, "xanchor": "left", "yref": "container",
                              "y": 1 - 70 / height, "yanchor": "top"})
    fig.update_layout(title_y=1 - 12 / height, title_yanchor="top", title_yref="container")
    fig.update_yaxes(tickmode="array", tickvals=pos, ticktext=labels, range=[len(rows) - 0.5, -0.5],
                     showgrid=False, zeroline=False)
    fig.update_xaxes(showline=True, mirror="ticks", ticks="outside")
    if tall:  # tall pages: repeat the x tick labels on top (an axis is drawn only with a trace on it)
        fig.add_trace(go.Scatter(x=rows["eb"], y=pos, xaxis="x2", mode="markers", marker={"opacity": 0},
                                 hoverinfo="skip", showlegend=False, name="top axis"))
        fig.update_layout(xaxis2={"matches": "x", "overlaying": "x", "side": "top", "showgrid": False,
                                  "ticks": "outside", "showline": False})
    return fig


def shrinkage_plot(table: pd.DataFrame) -> go.Figure:
    """How far empirical Bayes moves each unit: a segment from (n, DT) to (n, EB) per unit, against n (log axis).

    ``table`` is :func:`evalcore.subgroups.estimates.empirical_bayes` output (any number of models). Per model, the segments
    are one line trace (x = n, n, None, ...; y = direct, eb, None, ...) with a marker trace at the EB ends,
    which carries the legend entry and the hover (group, n, direct, eb, shrinkage).
    """
    fig = go.Figure()
    names = chart_labels(table["model"].unique())
    for i, (model, part) in enumerate(table.groupby("model", sort=False)):
        c, name, full = color(i), names[str(model)], plotly_literal(model)
        n = part["n"].to_numpy(dtype=float)
        gap = np.full(len(part), None, dtype=object)
        fig.add_trace(go.Scatter(
            x=np.column_stack([n, n, gap]).ravel(),
            y=np.column_stack([part["direct"].to_numpy(dtype=float), part["eb"].to_numpy(dtype=float), gap]).ravel(),
            mode="lines", line={"color": _rgba(c, 0.55), "width": 1.5}, hoverinfo="skip", legendgroup=name,
            showlegend=False, name=f"{name} DT → EB"))
        fig.add_trace(go.Scatter(
            x=n, y=part["eb"], mode="markers", name=name, legendgroup=name,
            marker={"color": c, "size": 6},
            customdata=_columns(part["group"].astype(str).map(plotly_literal), part["direct"], part["shrinkage"]),
            hovertemplate=(f"{full} · %{{customdata[0]}}<br>n = %{{x}}<br>direct %{{customdata[1]:.3f}} → "
                           "EB %{y:.3f}<br>shrinkage %{customdata[2]:.2f}<extra></extra>")))
    fig.update_layout(template=_TEMPLATE, height=460,
                      title=_title("Shrinkage", "each segment moves a subgroup's direct estimate to its EB estimate "
                                                "(dot); small subgroups move most"),
                      xaxis_title="labeled examples in the subgroup (n, log scale)", yaxis_title="estimate",
                      legend={"orientation": "h", "y": -0.2}, margin={"l": 50, "r": 20, "t": 70, "b": 40})
    fig.update_xaxes(type="log")
    return fig


def _summary_rows(summary: pd.DataFrame, methods: tuple[str, ...]) -> pd.DataFrame:
    """The summary's rows of ``methods``, with a ``model`` column (a per-model-free summary becomes 'all models')."""
    rows = summary if "model" in summary else summary.assign(model="all models")
    return rows[rows["method"].isin(methods)].assign(model=lambda r: r["model"].astype(str))


def holdout_mse_chart(summary_by_model: pd.DataFrame) -> go.Figure:
    """Average MSE of SR and EB relative to DT per model, like Figure 2 of Fogliato et al. (2024).

    ``summary_by_model`` is :func:`evalcore.subgroups.holdout.summarize` output with ``by_model=True``. One dot per
    (model, method) at ``mse_ratio_vs_DT`` (log axis) with a reference line at 1 (the direct estimator).
    """
    rows = _summary_rows(summary_by_model, ("SR", "EB"))
    labels = chart_labels(rows["model"])
    models = list(labels.values())
    fig = go.Figure()
    for method in ("SR", "EB"):
        part = rows[rows["method"] == method]
        fig.add_trace(go.Scatter(
            x=part["mse_ratio_vs_DT"], y=part["model"].map(labels), mode="markers", name=METHOD_NAMES[method],
            marker={"color": METHOD_COLORS[method], "size": 10, "symbol": "circle" if method == "EB" else "x-thin",
                    "line": {"width": 2, "color": METHOD_COLORS[method]}},
            customdata=_columns(part["mse"], part["mse_small"], part["mse_large"], part["model"].map(plotly_literal)),
            hovertemplate=(f"%{{customdata[3]}} · {method}<br>MSE / MSE(DT) = %{{x:.3f}}<br>MSE %{{customdata[0]:.5f}} "
                           "(≤15 examples %{customdata[1]:.5f}, larger %{customdata[2]:.5f})<extra></extra>")))
    fig.add_vline(x=1.0, line={"color": "#718096", "dash": "dash"}, layer="below")
    fig.update_layout(template=_TEMPLATE, height=max(300, 150 + 26 * len(models)),
                      title=_title("Holdout study: accuracy of the estimates",
                                   "each dot: a model's MSE over subgroups and holdout repetitions divided by the "
                                   "direct estimator's; left of the dashed line = more accurate than DT"),
                      xaxis_title="average MSE relative to the direct estimator (log scale)",
                      legend={"orientation": "h", "yref": "container", "y": 0.0, "yanchor": "bottom"},
                      margin={"l": 10, "r": 20, "t": 70, "b": 85})
    fig.update_xaxes(type="log")
    fig.update_yaxes(type="category", categoryorder="array", categoryarray=models, autorange="reversed")
    return fig


def holdout_coverage_width(summary_by_model: pd.DataFrame, level: float = DEFAULT_LEVEL) -> go.Figure:
    """Average interval coverage against average width per (model, method) for DT and EB, like the paper's Figure 4.

    ``summary_by_model`` is :func:`evalcore.subgroups.holdout.summarize` output with ``by_model=True``; the dashed
    horizontal line marks the nominal ``level``.
    """
    rows = _summary_rows(summary_by_model, ("DT", "EB"))
    fig = go.Figure()
    for method in ("DT", "EB"):
        part = rows[rows["method"] == method]
        fig.add_trace(go.Scatter(
            x=part["width"], y=part["coverage"], mode="markers", name=METHOD_NAMES[method],
            marker={"color": METHOD_COLORS[method], "size": 9, "symbol": "square" if method == "DT" else "circle"},
            customdata=part["model"].map(plotly_literal),
            hovertemplate=(f"%{{customdata}} · {method}<br>coverage %{{y:.3f}}<br>width %{{x:.3f}}"
                           "<extra></extra>")))
    fig.add_hline(y=level, line={"color": "#718096", "dash": "dash"}, layer="below")
    kind = {"DT": "Wilson/t", "EB": "robust EB"}
    fig.update_layout(template=_TEMPLATE, height=440,
                      title=_title("Holdout study: interval coverage and width",
                                   f"each point: one model's {percent(level)} intervals ({kind['DT']} for DT, "
                                   f"{kind['EB']} for EB) averaged over subgroups and repetitions · dashed line: "
                                   f"nominal {percent(level)}"),
                      xaxis_title="average interval width", yaxis_title="average coverage",
                      legend={"orientation": "h", "yref": "container", "y": 0.0, "yanchor": "bottom"},
                      margin={"l": 50, "r": 20, "t": 70, "b": 85})
    low = float(np.nanmin(np.append(rows["coverage"].to_numpy(dtype=float), level)))
    fig.update_yaxes(range=[max(0.0, low - 0.05), 1.01])
    return fig
