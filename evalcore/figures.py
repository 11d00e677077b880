"""Pure plotly figure builders: data in, ``go.Figure`` out (no streamlit, no I/O).

Every builder draws the uncertainty next to the estimate (error bars or bands) and states in the figure's
caption-like subtitle what the interval means. Names from the data (models, tasks, groups, categories) and every
title given by the caller are escaped (:mod:`evalcore.display`): plotly reads HTML in all its text. Categories on
an axis or in a legend are shortened to :data:`~evalcore.display.LABEL_WIDTH` characters; the hover shows the
full name.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .display import chart_labels, plotly_literal

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
    """A layout title with an optional subtitle, both escaped (they may hold names from the data)."""
    title = {"text": plotly_literal(text)}
    return {**title, "subtitle": {"text": plotly_literal(subtitle)}} if subtitle else title


def _columns(*columns) -> np.ndarray:
    """Columns side by side as an object array: hover data mixing names and numbers (numbers stay numbers)."""
    return np.column_stack([np.asarray(c, dtype=object) for c in columns])


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

    With ``by``, one coloured series per value of that column (e.g. models across tasks). Row labels and series
    names are shortened and escaped (:func:`evalcore.display.chart_labels`); the hover shows the full names.
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
            hovertemplate="%{customdata[2]}%{customdata[3]}: %{x:.4f} (%{customdata[0]:.4f}, %{customdata[1]:.4f})"
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


def selective_curves(curves: Mapping[str, pd.DataFrame], level: float = 0.95) -> go.Figure:
    """Selective accuracy vs coverage for several models with pointwise Wilson bands.

    ``curves`` maps model name to :func:`evalcore.calibration.selective_prediction_curve` output.
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


# --- Subgroup estimates (direct, synthetic regression, empirical Bayes) and the holdout study ---------------------

#: One colour per estimator, shared by the subgroup and holdout charts.
METHOD_COLORS = {"DT": PALETTE[0], "EB": PALETTE[1], "SR": PALETTE[2]}
METHOD_NAMES = {"DT": "direct (DT)", "EB": "empirical Bayes (EB)", "SR": "synthetic regression (SR)"}
#: Vertical offsets of the DT, EB and SR markers within a forest-plot row (rows are one unit apart, top to bottom).
FOREST_OFFSETS = {"DT": -0.22, "EB": 0.0, "SR": 0.22}
#: Forest-plot pixels per subgroup row (60 rows per page stay legible).
FOREST_ROW_PX = 22


def forest_plot(
    table: pd.DataFrame,
    level: float = 0.95,
    overall: float | None = None,
    truth: pd.Series | None = None,
    title: str = "",
    direct_interval: str = "Wilson/t",
) -> go.Figure:
    """Forest plot of one model's subgroups: DT and EB estimates with their intervals, and the SR point.

    ``table`` holds :func:`evalcore.subgroups.empirical_bayes` rows of one model, already filtered, sorted and
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

    ``table`` is :func:`evalcore.subgroups.empirical_bayes` output (any number of models). Per model, the segments
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

    ``summary_by_model`` is :func:`evalcore.holdout.summarize` output with ``by_model=True``. One dot per
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


def holdout_coverage_width(summary_by_model: pd.DataFrame, level: float = 0.95) -> go.Figure:
    """Average interval coverage against average width per (model, method) for DT and EB, like the paper's Figure 4.

    ``summary_by_model`` is :func:`evalcore.holdout.summarize` output with ``by_model=True``; the dashed
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
    """Ternary task-weighting map (paper, Section 3.3) from :func:`evalcore.weighting.ternary_winner_map` output.

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

    ``probabilities``: :func:`evalcore.bayes.posterior_rank_probabilities` output (model, rank, probability);
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
