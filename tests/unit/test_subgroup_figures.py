"""Subgroup and holdout figure builders: the drawn numbers are the input's numbers, with their intervals."""

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from evalcore.demo import synthetic as demo
from evalcore.subgroups import figures as subgroups_figures
from evalcore.subgroups import estimates as subgroups


@pytest.fixture(scope="module")
def eb_table():
    return subgroups.empirical_bayes(demo.synthetic_benchmark(label_fraction=0.15).log, regressor="mean")


@pytest.fixture
def one_model():
    """Hand-made rows of one model, deliberately not sorted by group or size."""
    return pd.DataFrame({
        "model": "m", "group": ["zeta", "alpha", "mid"], "n": [12, 150, 3],
        "direct": [0.50, 0.80, 1.00], "direct_low": [0.25, 0.73, 0.44], "direct_high": [0.75, 0.86, 1.00],
        "synthetic": [0.70, 0.75, 0.72], "eb": [0.62, 0.79, 0.78], "eb_low": [0.45, 0.72, 0.55],
        "eb_high": [0.80, 0.85, 0.97], "shrinkage": [0.6, 0.1, 0.9], "A": 0.01, "kappa": 3.0,
    })


@pytest.fixture
def summary():
    rows = []
    for model, (sr, eb, cov_dt, cov_eb, w_dt, w_eb) in {"a": (0.9, 0.7, 0.96, 0.93, 0.30, 0.22),
                                                        "b": (1.3, 0.8, 0.94, 0.91, 0.40, 0.31)}.items():
        rows += [{"model": model, "method": "DT", "mse": 0.02, "mse_ratio_vs_DT": 1.0, "mse_small": 0.03,
                  "mse_large": 0.01, "coverage": cov_dt, "width": w_dt},
                 {"model": model, "method": "SR", "mse": 0.02 * sr, "mse_ratio_vs_DT": sr, "mse_small": 0.02,
                  "mse_large": 0.02, "coverage": np.nan, "width": np.nan},
                 {"model": model, "method": "EB", "mse": 0.02 * eb, "mse_ratio_vs_DT": eb, "mse_small": 0.02,
                  "mse_large": 0.01, "coverage": cov_eb, "width": w_eb}]
    return pd.DataFrame(rows)


def _trace(fig, name):
    matches = [t for t in fig.data if t.name == name]
    assert len(matches) == 1, [t.name for t in fig.data]
    return matches[0]


def test_forest_plot_draws_estimates_with_their_intervals_in_row_order(one_model):
    fig = subgroups_figures.forest_plot(one_model, level=0.9, title="m")
    assert isinstance(fig, go.Figure)
    dt, eb, sr = (_trace(fig, subgroups_figures.METHOD_NAMES[m]) for m in ("DT", "EB", "SR"))
    assert list(dt.x) == pytest.approx(one_model["direct"])
    assert list(dt.error_x.array) == pytest.approx(one_model["direct_high"] - one_model["direct"])
    assert list(dt.error_x.arrayminus) == pytest.approx(one_model["direct"] - one_model["direct_low"])
    assert list(eb.x) == pytest.approx(one_model["eb"])
    assert list(eb.error_x.array) == pytest.approx([0.18, 0.06, 0.19])
    assert list(eb.error_x.arrayminus) == pytest.approx([0.17, 0.07, 0.23])
    assert list(sr.x) == pytest.approx(one_model["synthetic"]) and sr.error_x.array is None  # SR: no interval
    # rows at y = 0, 1, 2 in the caller's order, DT above / EB on / SR below the row centre, axis reversed
    assert list(eb.y) == [0, 1, 2]
    assert list(dt.y) == pytest.approx([-0.22, 0.78, 1.78]) and list(sr.y) == pytest.approx([0.22, 1.22, 2.22])
    assert list(fig.layout.yaxis.ticktext) == ["zeta (n=12)", "alpha (n=150)", "mid (n=3)"]
    assert list(fig.layout.yaxis.tickvals) == [0, 1, 2]
    assert fig.layout.yaxis.range[0] > fig.layout.yaxis.range[1]  # first row on top
    assert len({dt.marker.color, eb.marker.color, sr.marker.color}) == 3
    assert len({dt.marker.symbol, eb.marker.symbol, sr.marker.symbol}) == 3
    subtitle = fig.layout.title.subtitle.text
    assert "DT: 90% Wilson/t intervals" in subtitle and "robust 90% intervals with average coverage" in subtitle


def test_forest_plot_overall_line_and_truth_only_when_given(one_model):
    plain = subgroups_figures.forest_plot(one_model)
    assert not any("overall" in (t.name or "") for t in plain.data) and not plain.layout.shapes
    assert not any("truth" in (t.name or "") for t in plain.data)
    truth = pd.Series({"alpha": 0.81, "zeta": 0.55, "other": 0.1})  # any order; "mid" has no truth
    fig = subgroups_figures.forest_plot(one_model, overall=0.77, truth=truth)
    line = next(t for t in fig.data if (t.name or "").startswith("overall"))
    assert list(line.x) == [0.77, 0.77] and line.line.dash == "dot"
    assert min(line.y) <= -0.5 and max(line.y) >= 2.5  # spans every row
    diamonds = _trace(fig, "ground truth (holdout)")
    assert diamonds.x[0] == 0.55 and diamonds.x[1] == 0.81 and np.isnan(diamonds.x[2])
    assert "open" in diamonds.marker.symbol


def test_forest_plot_grows_with_rows_and_keeps_page_order(eb_table):
    page = eb_table[eb_table["model"] == eb_table["model"].iloc[0]].sort_values("n", ascending=False)
    small, big = subgroups_figures.forest_plot(page.head(10)), subgroups_figures.forest_plot(page)
    assert big.layout.height - small.layout.height >= subgroups_figures.FOREST_ROW_PX * (len(page) - 10)
    assert big.layout.height >= 18 * len(page)
    labels = list(big.layout.yaxis.ticktext)
    assert labels == [f"{g} (n={n})" for g, n in zip(page["group"], page["n"])]
    eb = _trace(big, subgroups_figures.METHOD_NAMES["EB"])
    assert list(eb.x) == pytest.approx(page["eb"])
    assert list(eb.error_x.array) == pytest.approx(page["eb_high"] - page["eb"])
    assert list(eb.error_x.arrayminus) == pytest.approx(page["eb"] - page["eb_low"])
    assert subgroups_figures.forest_plot(page.head(0)).data  # an empty page draws empty traces, no error


def test_shrinkage_plot_segments_go_from_direct_to_eb(eb_table):
    fig = subgroups_figures.shrinkage_plot(eb_table)
    models = list(eb_table["model"].unique())
    legend = [t.name for t in fig.data if t.showlegend is not False]
    assert legend == models  # one legend entry per model
    assert fig.layout.xaxis.type == "log"
    for model in models:
        part = eb_table[eb_table["model"] == model]
        segments = next(t for t in fig.data if t.legendgroup == model and t.mode == "lines")
        x, y = list(segments.x), list(segments.y)
        assert len(x) == 3 * len(part)
        assert x[2::3] == [None] * len(part) and y[2::3] == [None] * len(part)
        assert x[0::3] == pytest.approx(part["n"]) and x[1::3] == pytest.approx(part["n"])
        assert y[0::3] == pytest.approx(part["direct"]) and y[1::3] == pytest.approx(part["eb"])
        ends = next(t for t in fig.data if t.legendgroup == model and t.mode == "markers")
        assert list(ends.y) == pytest.approx(part["eb"])
        assert list(ends.customdata[:, 0]) == list(part["group"])
        assert all(k in ends.hovertemplate for k in ("direct", "EB", "shrinkage", "n ="))
    assert "small subgroups move most" in fig.layout.title.subtitle.text


def test_holdout_mse_chart_plots_the_ratios(summary):
    fig = subgroups_figures.holdout_mse_chart(summary)
    assert [t.name for t in fig.data] == [subgroups_figures.METHOD_NAMES["SR"], subgroups_figures.METHOD_NAMES["EB"]]
    sr, eb = fig.data
    assert list(sr.x) == [0.9, 1.3] and list(eb.x) == [0.7, 0.8]
    assert list(sr.y) == ["a", "b"] and list(eb.y) == ["a", "b"]
    assert sr.marker.color != eb.marker.color
    (line,) = fig.layout.shapes
    assert line.x0 == line.x1 == 1.0
    assert "relative to the direct estimator" in fig.layout.xaxis.title.text


def test_holdout_coverage_width_points_and_nominal_line(summary):
    fig = subgroups_figures.holdout_coverage_width(summary, level=0.9)
    assert [t.name for t in fig.data] == [subgroups_figures.METHOD_NAMES["DT"], subgroups_figures.METHOD_NAMES["EB"]]
    dt, eb = fig.data
    assert list(dt.x) == [0.30, 0.40] and list(dt.y) == [0.96, 0.94]
    assert list(eb.x) == [0.22, 0.31] and list(eb.y) == [0.93, 0.91]
    assert list(eb.customdata) == ["a", "b"]  # hover names the model
    (line,) = fig.layout.shapes
    assert line.y0 == line.y1 == 0.9
    assert "nominal 90%" in fig.layout.title.subtitle.text


def test_holdout_charts_accept_a_pooled_summary(summary):
    pooled = summary[summary["model"] == "a"].drop(columns="model")
    assert list(subgroups_figures.holdout_mse_chart(pooled).data[1].y) == ["all models"]
    assert list(subgroups_figures.holdout_coverage_width(pooled).data[0].y) == [0.96]
