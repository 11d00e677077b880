"""Pure plotly figures of the labeling-budget designs (data in, ``go.Figure`` out; no streamlit).

Method: "A Framework for Efficient Model Evaluation through Stratification, Sampling, and Estimation"
(``../shared/papers/stratified-sampling-evaluation.txt``): strata on the proxy (Section 4.2), the budget per
stratum under proportional and Neyman allocation (Figure 3, right), relative efficiency against HT under simple
random sampling (Figure 2, Table 1) and Monte Carlo MSE curves (Figure 1).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.colors import sample_colorscale

from evalcore.data.display import plotly_literal
from evalcore.stats.figures import _TEMPLATE, _rgba, _title, color, percent
from evalcore.stats.intervals import DEFAULT_LEVEL

#: (design, estimator) -> legend label in plain words, in drawing order ("plain average": the weighted mean of the
#: labels, Horvitz-Thompson; "proxy-assisted": the difference estimator, which subtracts the proxy's error)
DESIGN_LABELS = {
    ("srs", "ht"): "simple random sample, plain average (baseline)",
    ("srs", "df"): "simple random sample, proxy-assisted",
    ("proportional", "ht"): "stratified, proportional, plain average",
    ("proportional", "df"): "stratified, proportional, proxy-assisted",
    ("neyman", "ht"): "stratified, Neyman, plain average",
    ("neyman", "df"): "stratified, Neyman, proxy-assisted",
}


def strata_histogram(proxy: np.ndarray, strata: np.ndarray, bins: int = 50, title: str = "Strata on the proxy",
                     basis: str = "exact 1-D k-means on the proxy") -> go.Figure:
    """Histogram of the proxy with each stratum in its own colour (stacked bars of shared bins).

    The data are binned here (``numpy.histogram`` on ``bins`` equal-width bins over the proxy's range), so the
    figure stays small for pools of millions of examples.
    """
    proxy = np.asarray(proxy, dtype=float)
    strata = np.asarray(strata)
    edges = np.histogram_bin_edges(proxy, bins=bins)
    mids, width = (edges[:-1] + edges[1:]) / 2, np.diff(edges)
    fig = go.Figure()
    labels = np.unique(strata)
    # strata are ordered by the proxy: a sequential scale (its light yellow end left out) gives each its own colour
    colors = sample_colorscale("Viridis", list(np.linspace(0.0, 0.85, len(labels))))
    for h, c in zip(labels, colors):
        part = proxy[strata == h]
        counts, _ = np.histogram(part, bins=edges)
        fig.add_trace(go.Bar(
            x=mids, y=counts, width=width, name=f"stratum {h + 1}", marker_color=c,
            customdata=np.full((len(mids), 3), [len(part), part.min(), part.max()]),
            hovertemplate=(f"stratum {h + 1}: " + "%{customdata[0]:,} examples, proxy "
                           "%{customdata[1]:.3f}–%{customdata[2]:.3f}<br>bin %{x:.3f}: %{y:,}<extra></extra>")))
    fig.update_layout(template=_TEMPLATE, barmode="stack", bargap=0, height=340,
                      title=_title(title, f"{len(labels)} strata by {basis}"),
                      xaxis_title="proxy (predicted probability of a correct answer)", yaxis_title="examples",
                      margin={"l": 50, "r": 20, "t": 70, "b": 40}, legend={"orientation": "h", "y": -0.25})
    return fig


def allocation_bars(table: pd.DataFrame, title: str = "Budget per stratum") -> go.Figure:
    """Grouped bars of labels per stratum: one series per allocation column (the paper's Figure 3, right).

    ``table`` has a ``stratum`` column (1-based labels) and one integer column per allocation, e.g.
    ``proportional``, ``neyman (actual)`` and ``neyman (ideal)``; every other column is ignored except
    ``N_h`` (pool size, shown on hover).
    """
    series = [c for c in table.columns if c not in ("stratum", "N_h", "proxy_mean")]
    fig = go.Figure()
    for i, column in enumerate(series):
        name = plotly_literal(column)
        fig.add_trace(go.Bar(
            x=table["stratum"].astype(str), y=table[column], name=name, marker_color=color(i),
            customdata=table[["N_h"]].to_numpy() if "N_h" in table else None,
            hovertemplate=f"{name}<br>stratum %{{x}}: %{{y:,}} labels" +
                          (" of %{customdata[0]:,}" if "N_h" in table else "") + "<extra></extra>"))
    fig.update_layout(template=_TEMPLATE, barmode="group", height=340, xaxis_title="stratum (low to high proxy)",
                      yaxis_title="labels",
                      title=_title(title, "whole labels: at least 2 per stratum, never more than the stratum holds"),
                      margin={"l": 50, "r": 20, "t": 70, "b": 40}, legend={"orientation": "h", "y": -0.25})
    return fig


def efficiency_curves(frame: pd.DataFrame, title: str = "Predicted relative efficiency") -> go.Figure:
    """Relative efficiency (MSE / MSE of the plain average of a simple random sample) against the budget, one line
    per (design, estimator).

    ``frame``: :func:`evalcore.sampling.designs.design_efficiency` output over several budgets. Below 1 = more precise
    than the plain average of a simple random sample; 0.5 = the same precision with half the labels.
    """
    fig = go.Figure()
    for i, ((design, estimator), name) in enumerate(DESIGN_LABELS.items()):
        part = frame[(frame["design"] == design) & (frame["estimator"] == estimator)].sort_values("budget")
        if part.empty:
            continue
        fig.add_trace(go.Scatter(
            x=part["budget"], y=part["relative_efficiency"], mode="lines", name=name,
            line={"color": color(i), "dash": "solid" if estimator == "ht" else "dash"},
            hovertemplate=f"{name}<br>n = %{{x:,}}: %{{y:.3f}}<extra></extra>"))
    fig.add_hline(y=1.0, line={"color": "#a0aec0", "dash": "dot"})
    fig.update_layout(template=_TEMPLATE, height=380, xaxis={"title": "labels (budget n)", "type": "log"},
                      yaxis_title="error relative to a simple random sample", margin={"l": 50, "r": 20, "t": 70,
                                                                                     "b": 40},
                      title=_title(title, "squared error predicted with the proxy in place of the labels · "
                                          "below 1: more precise than a simple random sample of the same size"),
                      legend={"orientation": "h", "y": -0.25})
    return fig


def monte_carlo_curves(frame: pd.DataFrame, level: float = DEFAULT_LEVEL,
                       title: str = "Monte Carlo MSE by design") -> go.Figure:
    """Empirical MSE against the budget with ±2 SE bands, and the predicted MSE as dotted lines (Figure 1).

    ``frame``: :func:`evalcore.sampling.designs.monte_carlo` output (budget, design, estimator, mse, mse_se,
    predicted_mse, coverage).
    """
    fig = go.Figure()
    for i, ((design, estimator), name) in enumerate(DESIGN_LABELS.items()):
        part = frame[(frame["design"] == design) & (frame["estimator"] == estimator)].sort_values("budget")
        if part.empty:
            continue
        lo = np.maximum(part["mse"] - 2 * part["mse_se"], part["mse"] * 1e-3)
        hi = part["mse"] + 2 * part["mse_se"]
        fig.add_trace(go.Scatter(
            x=np.concatenate([part["budget"], part["budget"][::-1]]), y=np.concatenate([hi, lo[::-1]]),
            fill="toself", fillcolor=_rgba(color(i), 0.15), line={"width": 0}, mode="lines", hoverinfo="skip",
            legendgroup=name, showlegend=False))
        fig.add_trace(go.Scatter(
            x=part["budget"], y=part["mse"], mode="lines+markers", name=name, legendgroup=name,
            line={"color": color(i)}, customdata=np.stack([part["mse_se"], part["coverage"]], axis=1),
            hovertemplate=(f"{name}<br>n = %{{x:,}}: MSE %{{y:.3g}} ± %{{customdata[0]:.2g}}<br>"
                           f"{percent(level)} interval coverage %{{customdata[1]:.3f}}<extra></extra>")))
        fig.add_trace(go.Scatter(
            x=part["budget"], y=part["predicted_mse"], mode="lines", legendgroup=name, showlegend=False,
            line={"color": color(i), "dash": "dot", "width": 1}, hovertemplate="predicted %{y:.3g}<extra></extra>"))
    fig.update_layout(template=_TEMPLATE, height=420, xaxis={"title": "labels (budget n)", "type": "log"},
                      yaxis={"title": "mean squared error", "type": "log"},
                      title=_title(title, "bands: ±2 Monte Carlo standard errors · dotted: predicted"),
                      margin={"l": 50, "r": 20, "t": 70, "b": 40}, legend={"orientation": "h", "y": -0.25})
    return fig


def labels_needed_figure(needed: pd.DataFrame, level: float, width: float, probability: float,
                         title: str = "Labels needed by sampling plan") -> go.Figure:
    """Horizontal bars of the labels each plan needs for a ``level`` interval no wider than ``width`` on average,
    fewest first, with a whisker to the labels that give a ``probability`` chance that one sample meets it.

    ``needed``: :func:`evalcore.sampling.designs.labels_needed` output (design, estimator, labels_needed,
    labels_for_probability); rows without a count are left out. The count axis starts at 0: a bar's length is the
    number of labels.
    """
    rows = needed.dropna(subset=["labels_needed"]).copy()
    rows["plan"] = [DESIGN_LABELS.get((d, e), f"{d}, {e}") for d, e in zip(rows["design"], rows["estimator"])]
    rows = rows.sort_values("labels_needed", kind="stable")
    high = rows["labels_for_probability"].where(rows["labels_for_probability"].notna(), rows["labels_needed"])
    colours = [color(0) if d == "srs" else color(2) for d in rows["design"]]
    fig = go.Figure(go.Bar(
        x=rows["labels_needed"], y=rows["plan"].map(plotly_literal), orientation="h", marker_color=colours,
        error_x={"type": "data", "symmetric": False, "array": high - rows["labels_needed"],
                 "arrayminus": np.zeros(len(rows)), "color": "#4a5568", "thickness": 1.5},
        customdata=np.stack([high], axis=1),
        hovertemplate=("%{y}<br>%{x:,} labels on average; %{customdata[0]:,} for a "
                       f"{percent(probability)} chance<extra></extra>")))
    top = float(np.nanmax(high)) if len(rows) else 1.0
    fig.update_layout(template=_TEMPLATE, height=max(260, 110 + 34 * len(rows)),
                      title=_title(title, f"{percent(level)} interval no wider than {width:.3g} (±{width / 2:.3g}) "
                                          f"on average · whisker: a {percent(probability)} chance that one sample "
                                          "meets it · blue: no strata"),
                      xaxis={"title": "labels", "range": [0, top * 1.05]},
                      margin={"l": 10, "r": 20, "t": 70, "b": 40}, showlegend=False)
    fig.update_yaxes(autorange="reversed", type="category")
    return fig
