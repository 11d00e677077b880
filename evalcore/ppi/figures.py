"""Pure plotly figures of prediction-powered inference (data in, ``go.Figure`` out; no streamlit).

Method: "AutoEval Done Right: Using Synthetic Data for Model Evaluation" (``../shared/papers/autoeval-ppi.txt``):
the classical average of the labels against PPI (λ = 1) and PPI++ (tuned λ) estimates that add an annotator's
synthetic labels on the unlabeled data. The effective sample size (ESS), the MSE of the point estimates and the
agreement of the Bonferroni ranking with the full-data ranking against the labeled size n (Figure 1, Sections
2.3, 2.4 and 3.3), the ESS of PPI++ against the annotator's quality (Figure 3) and the coverage and width of
the intervals (Figure 6). Model and annotator names are escaped (:mod:`evalcore.data.display`) and shortened in
legends; the hover shows them in full.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from evalcore.data.display import chart_labels, plotly_literal
from evalcore.stats.figures import PALETTE, _TEMPLATE, _rgba, _title, color, interval_dots, percent
from evalcore.stats.intervals import DEFAULT_LEVEL

#: method -> (colour, legend label), in drawing order
METHOD_STYLE = {
    "classical": (PALETTE[0], "classical (labels only)"),
    "ppi": (PALETTE[1], "PPI (λ = 1)"),
    "ppi++": (PALETTE[2], "PPI++ (tuned λ)"),
}
#: colour of the reference lines (ESS = n, nominal coverage, ESS of the classical estimate, targets)
REFERENCE_GRAY = "#a0aec0"
#: the ``model`` value of the rows averaged over models
ALL_MODELS = "all models"
#: marker symbols of the models in :func:`annotator_quality_figure` (cycled)
MODEL_SYMBOLS = ("circle", "square", "diamond", "triangle-up", "x", "star", "cross", "triangle-down", "pentagon",
                 "hexagon")

_METRICS = ("ess", "mse", "width", "coverage")
#: share of the data's span added on each side of an axis drawn from the data
MARGIN = 0.05


def data_range(values, include=(), margin: float = MARGIN) -> list[float]:
    """An axis range that starts where the data are: the smallest to the largest finite value of ``values`` (and
    of ``include``, e.g. a reference line that must be seen), widened by ``margin`` of the span on each side (when
    all values are equal, by the larger of ``margin`` times the value's size and 0.05). Never forced to include 0."""
    x = np.asarray(list(np.ravel(np.asarray(values, dtype=float))) + [float(v) for v in include], dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return [0.0, 1.0]
    lo, hi = float(x.min()), float(x.max())
    pad = margin * (hi - lo) if hi > lo else max(margin * abs(hi), 0.05)
    return [lo - pad, hi + pad]


def estimates_figure(table: pd.DataFrame, title: str, x_title: str, subtitle: str, label: str = "model",
                     by: str | None = "method", reference: float | None = None) -> go.Figure:
    """The estimates with their intervals (:func:`evalcore.stats.figures.interval_dots`, one colour per method), in
    the order of ``table``'s rows (sort it by the estimate first: best on top), with the x axis from the data.

    Grouped dots (``by``) make plotly's automatic range include 0, which squeezes accuracies of 0.55-0.85 into
    the right third of the chart (issue 26); the range here runs from the lowest interval bound to the highest
    (and ``reference`` when given), with a margin of :data:`MARGIN` of the span.
    """
    _require(table, [label, "estimate", "ci_low", "ci_high"], "table")
    fig = interval_dots(table, label, title, x_title, subtitle, by=by, reference=reference)
    fig.update_xaxes(range=data_range(table[["estimate", "ci_low", "ci_high"]].to_numpy(dtype=float),
                                      () if reference is None else (reference,)))
    return fig


def _require(frame: pd.DataFrame, columns: tuple[str, ...] | list[str], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{what} lacks the column(s) {', '.join(missing)} (it has: "
                         f"{', '.join(map(str, frame.columns)) or 'none'}).")


def _model_rows(curves: pd.DataFrame, model: str, what: str) -> pd.DataFrame:
    """The rows of ``model``, or a ValueError naming the model and the ones available."""
    rows = curves[curves["model"].astype(str) == str(model)]
    if rows.empty:
        available = list(dict.fromkeys(curves["model"].astype(str)))
        raise ValueError(f"{what} has no rows for model '{model}'; available: "
                         f"{', '.join(repr(m) for m in available) if available else 'none (the frame is empty)'}.")
    return rows


def _band(part: pd.DataFrame, x: str, low: str, high: str, fill: str, group: str) -> go.Scatter | None:
    """A filled area between ``low`` and ``high`` (rows with either missing are left out), or None."""
    rows = part[part[low].notna() & part[high].notna()]
    if rows.empty:
        return None
    return go.Scatter(
        x=np.concatenate([rows[x], rows[x][::-1]]), y=np.concatenate([rows[high], rows[low][::-1]]),
        fill="toself", fillcolor=_rgba(fill, 0.15), line={"width": 0}, mode="lines", hoverinfo="skip",
        legendgroup=group, showlegend=False, name=f"{group} band")


def _diagonal(n: np.ndarray, showlegend: bool = True) -> go.Scatter:
    """The reference y = n (the ESS of the classical estimate: every label counts once)."""
    x = np.unique(np.asarray(n, dtype=float))
    return go.Scatter(x=x, y=x, mode="lines", name="ESS = n (labels only)", legendgroup="ESS = n",
                      showlegend=showlegend, line={"color": REFERENCE_GRAY, "dash": "dash", "width": 1.5},
                      hovertemplate="ESS = n = %{x:,} labels (classical)<extra></extra>")


def ess_curves_figure(curves: pd.DataFrame, level: float = DEFAULT_LEVEL, model: str = ALL_MODELS,
                      title: str = "Effective sample size and interval diagnostics") -> go.Figure:
    """Four panels against the labeled size n, one colour per method (paper, Figures 1a-b and 6).

    ``curves`` is a long frame with columns ``n`` (labeled sample size), ``method`` (``classical``, ``ppi``,
    ``ppi++``; others are ignored), ``model`` (a model, or ``"all models"`` for the average over models), for
    each metric X in ess, mse, width, coverage the columns ``X``, ``X_low`` and ``X_high``, and ``ess_empirical``
    (n · MSE classical / MSE of the method) and ``lam`` (mean λ). Only the rows of ``model`` are drawn:

    * (a) ESS with its band and line per method, the empirical ESS as markers of the method's colour and the
      dashed diagonal ESS = n (what the labels alone give);
    * (b) MSE of the point estimate (log axis) with its band;
    * (c) mean interval width with its band;
    * (d) coverage of the ``level`` intervals with its band and a dotted line at the nominal ``level``.

    Bands are filled areas between ``X_low`` and ``X_high`` (rows with a missing bound are left out of the band).
    The labeled sizes n are roughly geometric, so every x axis is logarithmic (a linear one starts at 0 and piles
    the small n, where the methods differ most, against it); ESS, MSE and width are on log axes too (ranges from
    the data), coverage on a linear axis from just below the lowest value.
    Each method has one legend entry whose ``legendgroup`` hides it in all four panels. Raises ValueError when
    ``curves`` has no rows for ``model`` (naming the models it has) or lacks a column.
    """
    columns = ["n", "method", "model", "ess_empirical", "lam"]
    columns += [f"{m}{s}" for m in _METRICS for s in ("", "_low", "_high")]
    _require(curves, columns, "curves")
    rows = _model_rows(curves, model, "curves")
    fig = make_subplots(rows=2, cols=2, horizontal_spacing=0.1, vertical_spacing=0.14,
                        subplot_titles=("a. effective sample size", "b. MSE of the point estimate",
                                        "c. mean interval width", f"d. coverage of the {percent(level)} intervals"))
    fig.add_trace(_diagonal(rows["n"]), row=1, col=1)
    hover = {
        "ess": "ESS %{y:,.0f} labels (band %{customdata[0]:,.0f}–%{customdata[1]:,.0f})<br>"
               "mean λ %{customdata[2]:.2f}",
        "mse": "MSE %{y:.3g} (squared metric units; band %{customdata[0]:.3g}–%{customdata[1]:.3g})",
        "width": "mean width %{y:.4f} (metric units; band %{customdata[0]:.4f}–%{customdata[1]:.4f})",
        "coverage": "coverage %{y:.1%} (band %{customdata[0]:.1%}–%{customdata[1]:.1%})",
    }
    panels = {"ess": (1, 1), "mse": (1, 2), "width": (2, 1), "coverage": (2, 2)}
    empirical_shown = False
    for method, (c, label) in METHOD_STYLE.items():
        part = rows[rows["method"] == method].sort_values("n")
        if part.empty:
            continue
        for metric, (r, col) in panels.items():
            band = _band(part, "n", f"{metric}_low", f"{metric}_high", c, method)
            if band is not None:
                fig.add_trace(band.update(name=f"{label} {metric} band"), row=r, col=col)
            text = hover[metric].split("<br>mean λ")[0] if method == "classical" else hover[metric]
            fig.add_trace(go.Scatter(
                x=part["n"], y=part[metric], mode="lines+markers", name=label, legendgroup=method,
                showlegend=metric == "ess", line={"color": c, "width": 2}, marker={"color": c, "size": 5},
                customdata=np.stack([part[f"{metric}_low"], part[f"{metric}_high"], part["lam"]], axis=1),
                hovertemplate=f"{label}<br>n = %{{x:,}} labels: {text}<extra></extra>"), row=r, col=col)
    for method, (c, label) in METHOD_STYLE.items():  # on top of the lines, and last in the legend
        part = rows[rows["method"] == method].sort_values("n")
        if part.empty:
            continue
        fig.add_trace(go.Scatter(
            x=part["n"], y=part["ess_empirical"], mode="markers", name="empirical ESS (MSE ratio)",
            legendgroup="empirical ESS", showlegend=not empirical_shown,
            marker={"color": c, "size": 9, "symbol": "circle-open", "line": {"width": 2}},
            hovertemplate=(f"{label}<br>n = %{{x:,}} labels: empirical ESS %{{y:,.0f}} labels "
                           "(n · MSE classical / MSE)<extra></extra>")), row=1, col=1)
        empirical_shown = True
    fig.add_hline(y=level, line={"color": "#718096", "dash": "dot", "width": 1.5}, row=2, col=2,
                  annotation_text=f"nominal {percent(level)}", annotation_position="top left")
    subtitle = (f"{model} · bands: ESS and width 5–95% of splits · MSE and coverage 95% Monte Carlo intervals · "
                "open circles: empirical ESS")
    fig.update_layout(template=_TEMPLATE, height=640, title=_title(title, subtitle),
                      margin={"l": 60, "r": 20, "t": 115, "b": 40}, legend={"orientation": "h", "y": -0.12})
    fig.update_xaxes(type="log")
    fig.update_xaxes(title_text="labeled examples (n)", row=2, col=1)
    fig.update_xaxes(title_text="labeled examples (n)", row=2, col=2)
    fig.update_yaxes(title_text="effective sample size (labels)", type="log", row=1, col=1)
    fig.update_yaxes(title_text="mean squared error", type="log", exponentformat="power", row=1, col=2)
    fig.update_yaxes(title_text="interval width", type="log", row=2, col=1)
    cov = rows[rows["method"].isin(list(METHOD_STYLE))][["coverage", "coverage_low"]].to_numpy(dtype=float)
    low = float(np.nanmin(np.append(cov.ravel(), level)))
    fig.update_yaxes(title_text="coverage", range=[max(0.0, low - 0.05), 1.01], tickformat=".0%", row=2, col=2)
    return fig


def rank_correlation_figure(curves: pd.DataFrame, title: str = "Agreement with the full-data ranking") -> go.Figure:
    """Spearman correlation of the estimated ranking with the full-data ranking against n (paper, Figure 1c).

    Uses the rows of ``curves`` with ``model == "all models"`` and columns ``n``, ``method``, ``rank_corr``,
    ``rank_corr_low`` and ``rank_corr_high`` (rows with a missing ``rank_corr`` are dropped): per method a band
    between the bounds and a line. The ranking is the Bonferroni one where models with overlapping intervals
    tie. The y axis spans [-0.05, 1.05], wider if the data need it; the x axis (n, roughly geometric) is logarithmic.
    """
    _require(curves, ["n", "method", "model", "rank_corr", "rank_corr_low", "rank_corr_high"], "curves")
    rows = _model_rows(curves, ALL_MODELS, "curves")
    rows = rows[rows["rank_corr"].notna() & rows["method"].isin(list(METHOD_STYLE))]
    if rows.empty:
        raise ValueError("curves has no rank correlation (rank_corr) for 'all models' and the methods "
                         f"{', '.join(METHOD_STYLE)}.")
    fig = go.Figure()
    for method, (c, label) in METHOD_STYLE.items():
        part = rows[rows["method"] == method].sort_values("n")
        if part.empty:
            continue
        band = _band(part, "n", "rank_corr_low", "rank_corr_high", c, method)
        if band is not None:
            fig.add_trace(band.update(name=f"{label} band"))
        fig.add_trace(go.Scatter(
            x=part["n"], y=part["rank_corr"], mode="lines+markers", name=label, legendgroup=method,
            line={"color": c, "width": 2}, marker={"color": c, "size": 5},
            customdata=np.stack([part["rank_corr_low"], part["rank_corr_high"]], axis=1),
            hovertemplate=(f"{label}<br>n = %{{x:,}} labels: Spearman ρ %{{y:.3f}} "
                           "(band %{customdata[0]:.3f}–%{customdata[1]:.3f})<extra></extra>")))
    values = rows[["rank_corr", "rank_corr_low", "rank_corr_high"]].to_numpy(dtype=float)
    lo, hi = float(np.nanmin(values)), float(np.nanmax(values))
    fig.update_layout(template=_TEMPLATE, height=400,
                      title=_title(title, "Spearman correlation of the Bonferroni ranking (overlapping intervals "
                                          "tied) with the ranking on all data, averaged over splits · "
                                          "bands: 95% Monte Carlo intervals of the mean over splits"),
                      xaxis_title="labeled examples (n)", yaxis_title="Spearman correlation",
                      margin={"l": 50, "r": 20, "t": 70, "b": 40}, legend={"orientation": "h", "y": -0.25})
    fig.update_yaxes(range=[min(-0.05, lo - 0.05), max(1.05, hi + 0.05)])
    fig.update_xaxes(type="log")
    return fig


def annotator_quality_figure(table: pd.DataFrame,
                             title: str = "Effective sample size against annotator quality") -> go.Figure:
    """ESS / n of PPI++ against the annotator's quality, one colour per annotator (paper, Figures 3 and 5).

    ``table`` columns: ``model``, ``annotator``, ``quality`` (Pearson correlation of the annotator's labels with
    the human labels), ``ess_ratio`` (ESS / n of PPI++), ``ess_ratio_low``, ``ess_ratio_high`` (may be NaN: such
    points get no error bar) and ``n`` (the labeled size). Per annotator one marker trace with vertical error bars
    for the points with both bounds and one without for the others (same legend entry); the marker symbol tells
    the model (gray legend-only entries explain the symbols when there are several models). The dashed line at
    ESS / n = 1 is the classical estimate (labels only).
    """
    _require(table, ["model", "annotator", "quality", "ess_ratio", "ess_ratio_low", "ess_ratio_high", "n"], "table")
    if table.empty:
        raise ValueError("table has no rows (no annotator to draw).")
    models = list(dict.fromkeys(table["model"].astype(str)))
    symbol = {m: MODEL_SYMBOLS[i % len(MODEL_SYMBOLS)] for i, m in enumerate(models)}
    model_labels = chart_labels(models)
    annotator_labels = chart_labels(table["annotator"])
    fig = go.Figure()
    hover = ("%{customdata[0]} · annotator %{customdata[1]}<br>quality (Pearson r) %{x:.3f}<br>"
             "ESS / n %{y:.3f}{range}<br>n = %{customdata[4]:,} labels<extra></extra>")
    for i, (annotator, part) in enumerate(table.groupby("annotator", sort=False)):
        c, name = color(i), str(annotator)
        label = annotator_labels[name]
        with_bars = part["ess_ratio_low"].notna() & part["ess_ratio_high"].notna()
        shown = False
        for rows, bars in ((part[with_bars], True), (part[~with_bars], False)):
            if rows.empty:
                continue
            customdata = pd.DataFrame({"model": rows["model"].astype(str).map(plotly_literal),
                                       "annotator": plotly_literal(name),
                                       "low": rows["ess_ratio_low"], "high": rows["ess_ratio_high"],
                                       "n": rows["n"].astype(int)}).to_numpy(dtype=object)
            error = ({"type": "data", "symmetric": False, "array": rows["ess_ratio_high"] - rows["ess_ratio"],
                      "arrayminus": rows["ess_ratio"] - rows["ess_ratio_low"], "color": c, "thickness": 1.5}
                     if bars else None)
            rng = " (range %{customdata[2]:.3f}–%{customdata[3]:.3f})" if bars else " (no range)"
            fig.add_trace(go.Scatter(
                x=rows["quality"], y=rows["ess_ratio"], mode="markers", name=label, legendgroup=label,
                showlegend=not shown, error_y=error,
                marker={"color": c, "size": 10, "symbol": [symbol[m] for m in rows["model"].astype(str)],
                        "line": {"width": 1, "color": "white"}},
                customdata=customdata, hovertemplate=hover.replace("{range}", rng)))
            shown = True
    if len(models) > 1:
        for m in models:
            fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=f"model {model_labels[m]}",
                                     legendgroup=f"model {model_labels[m]}", hoverinfo="skip",
                                     marker={"color": "#718096", "size": 10, "symbol": symbol[m]}))
    fig.add_hline(y=1.0, line={"color": "#718096", "dash": "dash", "width": 1.5}, layer="below",
                  annotation_text="classical (labels only)", annotation_position="bottom right")
    sizes = sorted(set(table["n"].astype(int)))
    at = f"n = {sizes[0]:,} labels" if len(sizes) == 1 else f"n = {', '.join(f'{s:,}' for s in sizes)} labels"
    values = table[["ess_ratio", "ess_ratio_low", "ess_ratio_high"]].to_numpy(dtype=float)
    fig.update_layout(template=_TEMPLATE, height=440,
                      title=_title(title, f"PPI++ at {at} · error bars: range of ESS / n where available · "
                                          "dashed: classical estimate (ESS = n)"),
                      xaxis_title="annotator quality (Pearson correlation with the human labels)",
                      yaxis_title="effective sample size / n (PPI++)", margin={"l": 50, "r": 20, "t": 70, "b": 40},
                      legend={"orientation": "h", "y": -0.25})
    fig.update_yaxes(range=[min(0.95, float(np.nanmin(values)) - 0.05), float(np.nanmax(values)) + 0.05])
    return fig


def projection_figure(table: pd.DataFrame, actual_n: int | None = None, target_width: float | None = None,
                      level: float = DEFAULT_LEVEL,
                      title: str = "Projected precision as more labels arrive") -> go.Figure:
    """Projected ESS and interval width of each model as the labeled size n grows (two panels).

    ``table`` columns: ``model``, ``n``, ``ess`` (ESS of PPI++), ``width_classical`` and ``width_ppi`` (width of
    the ``level`` intervals, classical and PPI++). (a) ESS against n, one line per model (colour ``color(i)``),
    with the dashed diagonal ESS = n; (b) width against n, PPI++ solid and classical dotted in the model's
    colour. ``actual_n`` adds a dotted vertical line "labels so far" to both panels and ``target_width`` a
    dash-dot horizontal line "target width" to (b); neither is drawn when None. The legend has one entry per
    model (hiding it in both panels) and two gray entries explaining the line styles.

    The projection's n runs geometrically from 2 to the pool's size, so both axes of both panels are logarithmic:
    on linear axes they start at 0, the width at n = 2 (above 1) dwarfs the widths that matter and the curves of
    the models merge (issue 26). Log axes start where the data are.
    """
    _require(table, ["model", "n", "ess", "width_classical", "width_ppi"], "table")
    if table.empty:
        raise ValueError("table has no rows (no projection to draw).")
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.1,
                        subplot_titles=("a. effective sample size of PPI++",
                                        f"b. width of the {percent(level)} intervals"))
    fig.add_trace(_diagonal(table["n"]), row=1, col=1)
    labels = chart_labels(table["model"])
    for i, (model, part) in enumerate(table.groupby("model", sort=False)):
        c, name, full = color(i), str(model), plotly_literal(model)
        part = part.sort_values("n")
        fig.add_trace(go.Scatter(
            x=part["n"], y=part["ess"], mode="lines", name=labels[name], legendgroup=labels[name],
            line={"color": c, "width": 2}, customdata=part["ess"] / part["n"],
            hovertemplate=(f"{full}<br>n = %{{x:,}} labels: ESS %{{y:,.0f}} labels "
                           "(×%{customdata:.2f})<extra></extra>")), row=1, col=1)
        for column, dash, label in (("width_ppi", "solid", "PPI++"), ("width_classical", "dot", "classical")):
            fig.add_trace(go.Scatter(
                x=part["n"], y=part[column], mode="lines", name=f"{labels[name]} {label}", legendgroup=labels[name],
                showlegend=False, line={"color": c, "width": 2, "dash": dash},
                hovertemplate=(f"{full} · {label}<br>n = %{{x:,}} labels: width %{{y:.4f}} "
                               "(metric units)<extra></extra>")), row=1, col=2)
    for dash, label in (("solid", "solid: PPI++"), ("dot", "dotted: classical (labels only)")):
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name=label, legendgroup=label,
                                 hoverinfo="skip", line={"color": "#718096", "width": 2, "dash": dash}),
                      row=1, col=2)
    if actual_n is not None:
        for col in (1, 2):
            fig.add_vline(x=actual_n, line={"color": "#1a202c", "dash": "dot", "width": 1.5}, row=1, col=col,
                          annotation_text="labels so far", annotation_position="top right")
    if target_width is not None:
        fig.add_hline(y=target_width, line={"color": "#1a202c", "dash": "dashdot", "width": 1.5}, row=1, col=2,
                      annotation_text="target width", annotation_position="top right")
    subtitle = f"projected from the labels so far · {percent(level)} intervals · dashed: ESS = n (labels only)"
    if actual_n is not None:
        subtitle += f" · dotted vertical: {actual_n:,} labels so far"
    fig.update_layout(template=_TEMPLATE, height=420, title=_title(title, subtitle),
                      margin={"l": 60, "r": 20, "t": 115, "b": 40}, legend={"orientation": "h", "y": -0.25})
    fig.update_xaxes(title_text="labeled examples (n)", type="log")
    fig.update_yaxes(title_text="effective sample size (labels)", type="log", row=1, col=1)
    fig.update_yaxes(title_text="interval width", type="log", row=1, col=2)
    return fig
